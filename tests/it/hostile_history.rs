//! Hostile boxes, round 4, points 5 and 11 (SPEC §8.10): history, trees and blobs a
//! box makes cheaply and the host would read whole. Planted from inside a real docker
//! container as the agent, checked from the host: 1.2 M empty commits on the box's
//! branch (`git fast-import`), a tree of 4 M files made of 22 identical subtrees (`git
//! mktree`), a 4 GiB blob of zeros (4 MB on the box's disk: a loose object written
//! deflated). `list`, `git sandbox ls` and `watch --once --json` answer quickly and
//! lean with the hostile box's fields unknown, another box as before; `git sandbox
//! fetch` and `bundle` refuse with `too-large` (exit 5), naming the blob's path, and
//! write nothing.
//!
//! `diff` and `land` of the same boxes: `diff --json` says what is too large
//! (`tooLarge`) and lists nothing, `land` refuses (exit 5, `unreviewable`) with the
//! user's refs, index and work tree as they were, each quick and lean.
//!
//! Docker only, as `sandboxed_hostile.rs`: every read proven here is the host's, after
//! the engine made the box.

use std::time::Duration;

use crate::container::{on_docker, Boxed};
use crate::env::{TestEnv, SANDBOX, TREEBOX};
use crate::hostile_sizes::{measured, Measured};
use crate::land_bounds::{user_state, BOMB};

/// How long a command that reads every box may take with the hostile box there (a
/// few boxes take well under a second; before the caps, 18 to 33 s).
const QUICK: Duration = Duration::from_secs(10);

/// Memory a command may take beyond twice its baseline, KiB.
const SLACK_KIB: u64 = 256 << 10;

/// The blob id of 4 GiB of zeros (`truncate -s 4G f; git hash-object f`).
const ZEROS_4G: &str = "451971a31ea5a207a10b391df2d5949910133565";

/// Writes the loose object [`ZEROS_4G`] into the object store `$1`: zlib of the
/// header and 4 GiB of zeros, each MiB deflated once and repeated (after a full
/// flush a deflate stream is independent of what came before), the Adler-32 computed.
const ZEROS_PERL: &str = r#"
use Compress::Raw::Zlib;
my ($dir, $oid) = @ARGV;
my $n = 4 << 30;
my $hdr = "blob $n\0";
my ($d) = Compress::Raw::Zlib::Deflate->new(-Level => 9, -WindowBits => -15, -AppendOutput => 1);
my $o = '';
$d->deflate($hdr, $o); $d->flush($o, Z_FULL_FLUSH);
my $mib = "\0" x (1 << 20);
my $b = '';
$d->deflate($mib, $b); $d->flush($b, Z_FULL_FLUSH);
my $b2 = '';
$d->deflate($mib, $b2); $d->flush($b2, Z_FULL_FLUSH);
die "not repeatable" unless $b eq $b2;
my ($a1, $s) = (1, 0);
for my $c (unpack('C*', $hdr)) { $a1 = ($a1 + $c) % 65521; $s = ($s + $a1) % 65521; }
$s = ($s + ($n % 65521) * $a1) % 65521;
mkdir "$dir/" . substr($oid, 0, 2);
open(my $f, '>', "$dir/" . substr($oid, 0, 2) . "/" . substr($oid, 2)) or die;
binmode $f;
print $f "\x78\x01", $o;
print $f $b for 1 .. ($n >> 20);
print $f "\x03\x00", pack('N', ($s << 16) | $a1);
close $f;
"#;

fn create(b: &Boxed, leaf: &str) {
    b.create_here(leaf);
}

/// Run `script` in box `leaf` as its agent (it commits there).
fn inside(b: &Boxed, leaf: &str, script: &str) {
    b.exec(&[leaf, "--", "sh", "-c", script]).ok();
}

/// The commands that read every box: `list`, `watch --once --json`, and with
/// `status` `git sandbox ls` (which reads each box's status too).
fn readers(status: bool) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut v = vec![
        (TREEBOX, vec!["list", "--json"]),
        (TREEBOX, vec!["watch", "--once", "--json"]),
    ];
    if status {
        v.push((SANDBOX, vec!["ls", "--json"]));
    }
    v
}

fn box_of<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {doc}"))
}

/// Each reader, measured before and after `plant`: after, quick and lean, the
/// hostile boxes' landed and size unknown, `normal` as before.
fn quick_and_lean(
    env: &TestEnv,
    status: bool,
    plant: impl FnOnce(),
    hostile: &[&str],
    normal: &str,
) {
    let run = |(bin, args): &(&str, Vec<&str>)| measured(env, bin, args);
    let before: Vec<Measured> = readers(status).iter().map(run).collect();
    for m in &before {
        m.run.ok();
    }
    plant();
    for ((bin, args), was) in readers(status).iter().zip(&before) {
        // Twice: once with the answers to make, once from the caches.
        for round in 0..2 {
            let m = run(&(bin, args.clone()));
            let what = format!(
                "{} {args:?} (round {round})",
                bin.rsplit('/').next().unwrap_or(bin)
            );
            quick_beside(&what, &m, was);
            let doc = m.run.ok().json();
            for name in hostile {
                let b = box_of(&doc, name);
                assert!(b["landed"].is_null(), "{name}: {what}\n{b}");
                if args[0] == "watch" {
                    assert!(b["commits"].is_null(), "{name}: {what}\n{b}");
                    assert!(b["additions"].is_null(), "{name}: {what}\n{b}");
                }
            }
            let was_doc = was.run.json();
            let (now, then) = (box_of(&doc, normal), box_of(&was_doc, normal));
            for field in [
                "state",
                "landed",
                "commits",
                "additions",
                "deletions",
                "branch",
            ] {
                assert_eq!(now[field], then[field], "{normal}.{field}: {what}");
            }
        }
    }
}

/// `git sandbox fetch`/`bundle` of `leaf`: refused quickly with `too-large`, exit 5,
/// the message naming `names`; no incoming ref, no bundle written.
fn refused(b: &Boxed, leaf: &str, names: &str) {
    let env = &b.env;
    let bundle = env.root().join(format!("{leaf}.bundle"));
    let bundle_arg = bundle.to_string_lossy().into_owned();
    for args in [
        vec!["fetch", leaf],
        vec!["bundle", leaf, "-o", bundle_arg.as_str()],
    ] {
        let m = measured(env, SANDBOX, &args);
        let what = format!("sandbox {args:?}: {:?} and {} KiB", m.took, m.peak_kib);
        eprintln!("{what}");
        assert!(m.took < QUICK, "too slow: {what}\n{:?}", m.run);
        assert!(m.peak_kib < 2 * SLACK_KIB, "too hungry: {what}");
        assert_eq!(m.run.code, 5, "{what}\n{:?}", m.run);
        assert!(m.run.stderr.contains("\nhint: "), "{:?}", m.run);
        assert!(m.run.stderr.contains(names), "{names}: {:?}", m.run);
    }
    // The kind, for scripts.
    let r = env.sandbox(&["fetch", leaf, "--json"]);
    assert_eq!(r.code, 5, "{r:?}");
    assert!(
        r.stderr.contains("too-large") || r.stdout.contains("too-large"),
        "{r:?}"
    );
    assert!(!bundle.exists(), "a bundle was written");
    let incoming = format!("refs/hort/{leaf}/incoming");
    let r = env.git(&env.repo, &["for-each-ref", &incoming]);
    assert!(r.trim().is_empty(), "{incoming} was written: {r}");
}

/// `m` quick and lean beside `base` (the same command on a normal box): within
/// [`QUICK`] and twice the baseline + [`SLACK_KIB`].
#[track_caller]
fn quick_beside(what: &str, m: &Measured, base: &Measured) {
    crate::hostile_sizes::bounded_beside(what, m, base, QUICK, SLACK_KIB);
}

/// `diff --json` and `land` of `leaf`, each [`quick_beside`] the same command on
/// `normal`: the diff too large in `what` with nothing listed, the land refused
/// (exit 5, `unreviewable`) with nothing of the user's changed.
fn diff_and_land(env: &TestEnv, leaf: &str, normal: &str, what: &str) {
    let base_diff = measured(env, TREEBOX, &["diff", normal, "--json"]);
    base_diff.run.ok();
    let m = measured(env, TREEBOX, &["diff", leaf, "--json"]);
    quick_beside(&format!("diff {leaf}"), &m, &base_diff);
    let doc = m.run.ok().json();
    crate::schema::assert_valid("diff", &doc, "diff of a box past a bound");
    assert_eq!(doc["tooLarge"]["what"], what, "{doc}");
    assert_eq!(doc["files"], serde_json::json!([]), "{doc}");
    let before = user_state(env);
    let mut refusals = Vec::new();
    for args in [vec!["land", leaf], vec!["land", leaf, "--json"]] {
        let m = measured(env, TREEBOX, &args);
        assert_eq!(m.run.code, 5, "{args:?}: {:?}", m.run);
        assert!(m.run.stderr.contains("too large"), "{:?}", m.run);
        if args.len() == 3 {
            assert!(m.run.stderr.contains("\"unreviewable\""), "{:?}", m.run);
        }
        assert_eq!(user_state(env), before, "{args:?} changed something");
        refusals.push((args, m));
    }
    // Land's baseline, last: `normal` landed for real.
    let base_land = measured(env, TREEBOX, &["land", normal]);
    base_land.run.ok();
    for (args, m) in refusals {
        quick_beside(&format!("{args:?}"), &m, &base_land);
    }
}

#[test]
fn a_long_history_is_too_large_not_slow() {
    on_docker(|b| {
        create(&b, "normal");
        create(&b, "long");
        inside(
            &b,
            "normal",
            "echo work > work.txt && git add work.txt && git commit -qm work",
        );
        quick_and_lean(
            &b.env,
            true,
            || {
                // 1.2 M empty commits on the box's branch, dated a second apart.
                inside(
                    &b,
                    "long",
                    r#"b=$(git symbolic-ref HEAD) && awk -v b="$b" -v from="$(git rev-parse HEAD)" 'BEGIN{for(i=0;i<1200000;i++){printf "commit %s\ncommitter a <a@b> %d +0000\ndata 0\n", b, 1700000000+i; if(i==0) printf "from %s\n", from; printf "\n"}}' | git fast-import --quiet --force"#,
                );
            },
            &["long"],
            "normal",
        );
        refused(&b, "long", "commits");
        diff_and_land(&b.env, "long", "normal", "commits");
    });
}

#[test]
fn a_tree_bomb_and_a_zero_blob_are_too_large() {
    on_docker(|b| {
        create(&b, "normal");
        create(&b, "bomb");
        create(&b, "zeros");
        inside(
            &b,
            "normal",
            "echo work > work.txt && git add work.txt && git commit -qm work",
        );
        // `ls` too: a box's status counts HEAD's tree before it compares the index
        // with it (before that count, 7 s and 1.3 GB here).
        quick_and_lean(
            &b.env,
            true,
            || {
                // 4 M files: 22 levels of two identical subtrees over one file.
                inside(&b, "bomb", BOMB);
                // 4 GiB of zeros, 4 MB of disk, at dir/zeros.bin.
                let script = format!(
                    "perl -e '{}' \"$(git rev-parse --git-path objects)\" {ZEROS_4G} && \
                     git update-index --add --cacheinfo 100644,{ZEROS_4G},dir/zeros.bin && \
                     git commit -qm zeros && du -sk \"$(git rev-parse --git-path objects)\"",
                    ZEROS_PERL.replace('\'', "'\\''")
                );
                inside(&b, "zeros", &script);
            },
            &["bomb"],
            "normal",
        );
        refused(&b, "zeros", "dir/zeros.bin");
        diff_and_land(&b.env, "bomb", "normal", "tree entries");
    });
}
