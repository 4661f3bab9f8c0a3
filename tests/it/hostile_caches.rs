//! Hostile boxes, round 3, point 1: the host's package caches are never writable from a
//! box (SPEC §7, Mounts). For each engine, boxes of a project with all six caches (cargo
//! registry and git, uv, pnpm, npm, go) are made against host caches planted by hand in
//! the test's HOME (the test image has none of the tools); from inside, every file
//! reachable under the cache mount points is written, appended, truncated, chmodded,
//! hard-linked then written, and removed, and every directory gets a planted file. The
//! host's caches and a second box's view of them stay byte-identical (content, mode,
//! link count), and teardown leaves nothing of the box's own caches.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::container::{each_engine, Boxed};
use crate::env::TestEnv;

/// sha512 of "a": a pnpm package's tarball integrity, and the one file it lists.
const A_B64: &str =
    "H0D8ktokFpR1CXnubPWC8tXX0o4YM13gWrxU0FYOD1MChgxlK/CNVgJSql50IQVG82n7u86MEs/HlXsmUv6adQ==";
const A_HEX: &str = "1f40fc92da241694750979ee6cf582f2d5d7d28e18335de05abc54d0560e0f5302860c652bf08d560252aa5e74210546f369fbbbce8c12cfc7957b2652fe9a75";

/// Where the caches appear inside a box (the box's own and the shared, read-only ones).
const INSIDE: &str = "/var/cache/treebox";

/// Every file of the host's caches: path, kind, mode, link count, content.
type Digest = Vec<(PathBuf, u32, u64, Vec<u8>)>;

fn digest(dir: &Path, out: &mut Digest) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let m = std::fs::symlink_metadata(&p).unwrap();
        let data = if m.is_file() {
            std::fs::read(&p).unwrap()
        } else if m.file_type().is_symlink() {
            std::fs::read_link(&p)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else {
            Vec::new()
        };
        out.push((p.clone(), m.mode(), m.nlink(), data));
        if m.is_dir() {
            digest(&p, out);
        }
    }
}

fn host_digest(env: &TestEnv) -> Digest {
    let mut out = Vec::new();
    for d in [".cargo", ".cache/uv", ".local/share/pnpm", ".npm", "go"] {
        digest(&env.home.join(d), &mut out);
    }
    out
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Host caches as the tools leave them, with the files each one trusts as they are
/// (extracted sources, unpacked archives, store files) beside the checked downloads.
fn plant_host_caches(env: &TestEnv) {
    let h = &env.home;
    let idx = "index.crates.io-1949cf8c6b5b557f";
    write(
        &h.join(format!(".cargo/registry/cache/{idx}/itoa-1.0.0.crate")),
        "crate",
    );
    write(
        &h.join(format!(".cargo/registry/index/{idx}/config.json")),
        "{}",
    );
    write(
        &h.join(format!(".cargo/registry/index/{idx}/.cache/it/oa/itoa")),
        "ix",
    );
    write(
        &h.join(format!(".cargo/registry/src/{idx}/itoa-1.0.0/build.rs")),
        "fn main() {}",
    );
    let db = h.join(".cargo/git/db/dep-0123456789abcdef");
    let repo = git2::Repository::init_bare(&db).unwrap();
    repo.blob(b"fn main() {}").unwrap();
    write(
        &h.join(".cargo/git/checkouts/dep-0123456789abcdef/abc1234/build.rs"),
        "fn main() {}",
    );
    write(&h.join(".cache/uv/archive-v0/a1/pkg/__init__.py"), "ok = 1");
    write(
        &h.join(".cache/uv/wheels-v5/pypi/pkg/1.0-py3-none-any.http"),
        "p",
    );
    // uv reaches an unpacked wheel through a relative symlink.
    std::os::unix::fs::symlink(
        "../../../archive-v0/a1",
        h.join(".cache/uv/wheels-v5/pypi/pkg/1.0-py3-none-any"),
    )
    .unwrap();
    let store = h.join(".local/share/pnpm/store/v3/files").join(&A_HEX[..2]);
    write(
        &store.join(format!("{}-index.json", &A_HEX[2..])),
        &format!(r#"{{"files":{{"index.js":{{"integrity":"sha512-{A_B64}","mode":420}}}}}}"#),
    );
    write(&store.join(&A_HEX[2..]), "a");
    write(
        &h.join(".local/share/pnpm/store/v3/files/ab/cdef"),
        "module.exports=1",
    );
    write(
        &h.join(".local/share/pnpm/store/v3/files/ab/cdef-index.json"),
        "{}",
    );
    write(&h.join(".npm/_cacache/content-v2/sha512/ab/cd/ef01"), "tgz");
    write(&h.join(".npm/_cacache/index-v5/12/34/5678"), "entry");
    let dl = h.join("go/pkg/mod/cache/download/example.com/m/@v");
    for f in ["v1.0.0.zip", "v1.0.0.mod", "v1.0.0.info", "list"] {
        write(&dl.join(f), f);
    }
    write(
        &h.join("go/pkg/mod/example.com/m@v1.0.0/main.go"),
        "package m",
    );
}

/// Try to change every file and directory under the cache mount points from inside
/// box `leaf`: each attempt is allowed to fail, none may reach the host or another box.
fn attack(b: &Boxed, leaf: &str) {
    let script = format!(
        r#"cd /tmp
find {INSIDE} -depth 2>/dev/null > /tmp/all
while IFS= read -r f; do
  if [ -d "$f" ] && [ ! -L "$f" ]; then
    echo planted 2>/dev/null > "$f/planted"
    chmod 0777 "$f" 2>/dev/null
    continue
  fi
  t=$(readlink -f "$f" 2>/dev/null || echo "$f")
  for p in "$f" "$t"; do
    printf evil 2>/dev/null >> "$p"
    ln -f "$p" /tmp/hl 2>/dev/null && printf evil >> /tmp/hl
    ln -f "$p" "$p.hl" 2>/dev/null && printf evil >> "$p.hl"
    ln -f "$p" "{INSIDE}/hl" 2>/dev/null && printf evil >> "{INSIDE}/hl"
    chmod 0777 "$p" 2>/dev/null
    touch -d 2000-01-01 "$p" 2>/dev/null
    truncate -s 0 "$p" 2>/dev/null
  done
  rm -f "$f" "$t" 2>/dev/null
done < /tmp/all
test -s /tmp/all"#
    );
    b.exec(&[leaf, "--", "sh", "-c", &script]).ok();
}

/// What box `leaf` sees under the cache mount points: each path with its content hash,
/// mode and link count (symlinks followed), and the cache variables.
fn inside_view(b: &Boxed, leaf: &str) -> String {
    let script = format!(
        r#"find {INSIDE} | sort | while IFS= read -r f; do
  printf '%s %s ' "$f" "$(stat -L -c '%a %h %s' "$f")"
  if [ -f "$f" ]; then sha256sum < "$f"; else echo; fi
done
env | grep -E '^(CARGO_HOME|UV_|npm_config_|GO)' | sort"#
    );
    b.exec(&[leaf, "--", "sh", "-c", &script])
        .ok()
        .stdout
        .clone()
}

#[test]
fn a_box_cannot_write_the_host_caches_nor_another_boxs() {
    each_engine(|b| {
        let env = &b.env;
        // No tool runs: the image has none; the caches are mounted for the lockfiles.
        env.write_config(&format!(
            r#"{{"template": "test", "isolation": "{}", "setup": []}}"#,
            b.engine
        ));
        for (f, text) in [
            (
                "Cargo.toml",
                "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
            ),
            ("Cargo.lock", "version = 4\n"),
            (
                "pyproject.toml",
                "[project]\nname = \"p\"\nversion = \"0.1.0\"\n",
            ),
            ("uv.lock", "version = 1\n[[package]]\nname = \"pkg\"\n"),
            ("go.mod", "module example.com/p\n"),
            ("go.sum", ""),
            (
                "pnpm-lock.yaml",
                &format!("lockfileVersion: '9.0'\npackages:\n  a@1.0.0:\n    resolution: {{integrity: sha512-{A_B64}}}\n"),
            ),
        ] {
            env.commit_file(&env.repo, f, text, f);
        }
        env.git(&env.repo, &["push", "-q", "origin", "main"]);
        // npm on a branch of its own (pnpm wins over npm in one checkout).
        env.git(&env.repo, &["checkout", "-q", "-b", "npm"]);
        env.git(&env.repo, &["rm", "-q", "pnpm-lock.yaml"]);
        env.commit_file(
            &env.repo,
            "package-lock.json",
            "{\"lockfileVersion\": 3}\n",
            "npm",
        );
        env.git(&env.repo, &["push", "-q", "origin", "npm"]);
        env.git(&env.repo, &["checkout", "-q", "main"]);
        plant_host_caches(env);
        let host_before = host_digest(env);

        env.treebox(&["create", "victim", "--no-launch"]).ok();
        env.treebox(&["create", "pn", "--no-launch"]).ok();
        env.treebox(&["create", "np", "--base", "npm", "--no-launch"])
            .ok();
        let victim_before = inside_view(&b, "victim");
        attack(&b, "pn");
        attack(&b, "np");

        let host_after = host_digest(env);
        let changed: Vec<&PathBuf> = host_after
            .iter()
            .filter(|e| !host_before.contains(e))
            .chain(host_before.iter().filter(|e| !host_after.contains(e)))
            .map(|e| &e.0)
            .collect();
        assert!(
            changed.is_empty(),
            "{}: a box changed the host's caches: {changed:#?}",
            b.engine
        );
        let victim_after = inside_view(&b, "victim");
        assert_eq!(
            victim_before, victim_after,
            "{}: a box changed another box's caches",
            b.engine
        );
        // The box reads the host's downloads, and installs copy out of its caches.
        for want in [
            "CARGO_HOME=",
            "UV_LINK_MODE=copy",
            "npm_config_package_import_method=copy",
            "GOFLAGS=-modcacherw",
            "/itoa-1.0.0.crate",
            "/uv/archive-v0/a1/pkg/__init__.py",
            "/pnpm/v3/files/1f/40fc92",
            "/v1.0.0.zip",
        ] {
            assert!(victim_after.contains(want), "{want}: {victim_after}");
        }
        let np_view = inside_view(&b, "np");
        assert!(np_view.contains("npm_config_cache="), "{np_view}");
        assert!(np_view.contains("/ef01"), "{np_view}");

        // The attacker's own layer was its to write (so the attack did run).
        let own = env.box_state("pn").join("caches");
        assert!(own.join("cargo/planted").is_file(), "{}", own.display());

        for leaf in ["victim", "pn", "np"] {
            env.treebox(&["teardown", "--force", leaf]).ok();
            assert!(!env.box_state(leaf).exists(), "{leaf}: state left");
        }
        assert!(host_digest(env) == host_before);
    });
}
