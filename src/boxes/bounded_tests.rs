//! Each guard of [`super`] on a temporary repository: the payloads of issue 38 planted
//! by hand (the container tests plant them as the agent: `tests/it/hostile_reads.rs`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{changes, judge_big, Big, Want, MAX_HASHED, MAX_RULES_FILE};
use crate::testing::git;

fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r");
    std::fs::create_dir_all(r.join("src")).unwrap();
    git(dir.path(), &["init", "-q", "-b", "main", "r"]);
    std::fs::write(r.join("a.txt"), "a\n").unwrap();
    std::fs::write(r.join("src/b.txt"), "b\n").unwrap();
    std::fs::write(r.join(".gitignore"), "target/\n*.log\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-qm", "one"]);
    (dir, r)
}

use crate::testing::mkfifo;

/// What [`changes`] says of the repository at `r`, read on a thread given 20 s (a
/// regression fails here instead of hanging the test run), and how long it took.
fn read(r: &Path, want: Want) -> (Option<Vec<String>>, Duration) {
    let r = r.to_path_buf();
    let t = Instant::now();
    let got = crate::boxes::deadline::within(Duration::from_secs(20), move || {
        let repo = git2::Repository::open(&r).unwrap();
        changes(&repo, want, None).map(|c| {
            let mut v: Vec<String> = c
                .into_iter()
                .map(|(p, _)| String::from_utf8(p).unwrap())
                .collect();
            v.sort();
            v
        })
    })
    .expect("the read ended within 20 s");
    (got, t.elapsed())
}

#[test]
fn a_normal_box_reads_as_libgit2_reads_it() {
    let (_d, r) = repo();
    assert_eq!(read(&r, Want::Changes).0, Some(vec![]));
    std::fs::write(r.join("a.txt"), "changed\n").unwrap();
    std::fs::write(r.join("x.log"), "ignored\n").unwrap();
    std::fs::create_dir_all(r.join("new/deeper")).unwrap();
    std::fs::write(r.join("new/deeper/f"), "f").unwrap();
    // Ignored directories are never walked: what is planted there is not read.
    std::fs::create_dir_all(r.join("target/x")).unwrap();
    mkfifo(&r.join("target/x/.gitignore"));
    assert_eq!(
        read(&r, Want::Changes).0,
        Some(vec!["a.txt".to_string(), "new/".to_string()])
    );
    assert!(read(&r, Want::Dirty).0.is_some_and(|c| !c.is_empty()));
}

#[test]
fn a_fifo_or_a_link_as_an_ignore_or_attribute_file_is_unreadable_not_a_hang() {
    for planted in [
        ".gitignore",
        "src/.gitignore",
        ".gitattributes",
        "src/.gitattributes",
        "junk/.gitignore",
        "junk/deeper/.gitignore",
        ".git/info/exclude",
        ".git/info/attributes",
    ] {
        let (_d, r) = repo();
        let p = r.join(planted);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&p);
        mkfifo(&p);
        let (got, took) = read(&r, Want::Changes);
        assert_eq!(got, None, "{planted}");
        assert!(took < Duration::from_secs(2), "{planted}: {took:?}");
        // A link is followed by libgit2 (into a FIFO, a device): refused alike.
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        assert_eq!(read(&r, Want::Dirty).0, None, "{planted} as a link");
    }
}

#[test]
fn a_box_config_naming_a_fifo_is_overridden_and_the_users_own_file_is_kept() {
    let (d, r) = repo();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    for key in ["core.excludesFile", "core.attributesFile"] {
        git(&r, &["config", key, fifo.to_str().unwrap()]);
    }
    std::fs::write(r.join("new.txt"), "n").unwrap();
    let (got, took) = read(&r, Want::Changes);
    assert_eq!(got, Some(vec!["new.txt".to_string()]));
    assert!(took < Duration::from_secs(2), "{took:?}");
    // The user's own config (the repository's, for a worktree box) is what counts.
    let user = d.path().join("user.config");
    let ignore = d.path().join("user.ignore");
    std::fs::write(&ignore, "new.txt\n").unwrap();
    std::fs::write(
        &user,
        format!("[core]\n\texcludesFile = {}\n", ignore.display()),
    )
    .unwrap();
    let repo = git2::Repository::open(&r).unwrap();
    assert_eq!(changes(&repo, Want::Changes, Some(&user)), Some(vec![]));
}

#[test]
fn ignore_files_over_their_budget_are_unreadable() {
    let (_d, r) = repo();
    let f = std::fs::File::create(r.join("src/.gitignore")).unwrap();
    f.set_len(MAX_RULES_FILE + 1).unwrap();
    assert_eq!(read(&r, Want::Dirty).0, None);
    // Many under the per-file cap, sparse (no disk), past the total: amplification.
    std::fs::remove_file(r.join("src/.gitignore")).unwrap();
    for i in 0..20 {
        let dir = r.join(format!("d{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t"), "t").unwrap();
        let f = std::fs::File::create(dir.join(".gitignore")).unwrap();
        f.set_len(MAX_RULES_FILE).unwrap();
    }
    git(&r, &["add", "-f", "."]);
    let (got, took) = read(&r, Want::Changes);
    assert_eq!(got, None);
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// A zeroed index entry over a 4 GiB sparse file (and, with a `text` attribute,
/// libgit2 would load it whole to filter it): changed, not read, at once.
#[test]
fn a_huge_tracked_file_with_a_zeroed_index_entry_is_changed_not_read() {
    for attributes in [None, Some("* text\n")] {
        let (_d, r) = repo();
        if let Some(a) = attributes {
            std::fs::write(r.join(".gitattributes"), a).unwrap();
        }
        std::fs::write(r.join("big"), "small\n").unwrap();
        git(&r, &["add", "."]);
        git(&r, &["commit", "-qm", "big"]);
        std::fs::File::options()
            .write(true)
            .open(r.join("big"))
            .unwrap()
            .set_len(4 << 30)
            .unwrap();
        let repo = git2::Repository::open(&r).unwrap();
        let mut index = repo.index().unwrap();
        let mut e = index.get_path(Path::new("big"), 0).unwrap();
        e.ctime = git2::IndexTime::new(0, 0);
        e.mtime = git2::IndexTime::new(0, 0);
        e.file_size = 0;
        e.ino = 0;
        e.dev = 0;
        e.uid = 0;
        e.gid = 0;
        index.add(&e).unwrap();
        index.write().unwrap();
        let (got, took) = read(&r, Want::Changes);
        assert_eq!(got, Some(vec!["big".to_string()]), "{attributes:?}");
        assert!(took < Duration::from_secs(2), "{attributes:?}: {took:?}");
        let (got, took) = read(&r, Want::Dirty);
        assert_eq!(got, Some(vec!["big".to_string()]));
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}

#[test]
fn a_huge_file_is_judged_from_its_stat_data_alone() {
    let (_d, r) = repo();
    let f = std::fs::File::create(r.join("big")).unwrap();
    f.set_len(MAX_HASHED + 1).unwrap();
    drop(f);
    // Written before the index, in an earlier second: not racy.
    let old = std::time::SystemTime::now() - Duration::from_secs(10);
    std::fs::File::options()
        .write(true)
        .open(r.join("big"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    git(&r, &["add", "big"]);
    git(&r, &["commit", "-qm", "big"]);
    let repo = git2::Repository::open(&r).unwrap();
    let index = repo.index().unwrap();
    let entry = index.get_path(Path::new("big"), 0).unwrap();
    let meta = std::fs::symlink_metadata(r.join("big")).unwrap();
    let i = std::fs::metadata(r.join(".git/index")).unwrap();
    let stamp = (i.mtime(), i.mtime_nsec());
    assert_eq!(judge_big(&entry, &meta, stamp), Big::Same);
    let mut other_owner = index.get_path(Path::new("big"), 0).unwrap();
    other_owner.uid += 1;
    assert_eq!(judge_big(&other_owner, &meta, stamp), Big::Same);
    let mut other_size = index.get_path(Path::new("big"), 0).unwrap();
    other_size.file_size = 0;
    assert_eq!(judge_big(&other_size, &meta, stamp), Big::Changed);
    let mut other_mtime = entry;
    other_mtime.mtime = git2::IndexTime::new(1, 0);
    assert_eq!(judge_big(&other_mtime, &meta, stamp), Big::Changed);
    // And the status reads it clean, without hashing it.
    assert_eq!(changes(&repo, Want::Changes, None), Some(vec![]));
}

/// A submodule is read with the same bounds (libgit2 would open it and run a status
/// there with none): clean, changed, and a FIFO planted in it.
#[test]
fn a_submodule_is_read_under_the_same_bounds() {
    let (d, r) = repo();
    let sub = d.path().join("sub");
    git(d.path(), &["init", "-q", "-b", "main", "sub"]);
    std::fs::write(sub.join("s.txt"), "s\n").unwrap();
    git(&sub, &["add", "."]);
    git(&sub, &["commit", "-qm", "s"]);
    git(
        &r,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            "sub",
        ],
    );
    git(&r, &["commit", "-qm", "sub"]);
    assert_eq!(read(&r, Want::Changes).0, Some(vec![]));
    std::fs::write(r.join("sub/s.txt"), "changed\n").unwrap();
    assert_eq!(read(&r, Want::Changes).0, Some(vec!["sub".to_string()]));
    git(&r.join("sub"), &["checkout", "-q", "--", "s.txt"]);
    assert_eq!(read(&r, Want::Dirty).0, Some(vec![]));
    mkfifo(&r.join("sub/.gitignore"));
    let (got, took) = read(&r, Want::Changes);
    assert_eq!(got, None);
    assert!(took < Duration::from_secs(2), "{took:?}");
    // Its config's excludesFile is overridden as the box's own is.
    std::fs::remove_file(r.join("sub/.gitignore")).unwrap();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    git(
        &r.join("sub"),
        &["config", "core.excludesFile", fifo.to_str().unwrap()],
    );
    std::fs::write(r.join("sub/new.txt"), "n").unwrap();
    assert_eq!(read(&r, Want::Changes).0, Some(vec!["sub".to_string()]));
}

/// What libgit2's own status says of the repository at `r` (the bounds aside).
fn plain_status(r: &Path) -> Vec<(String, u32)> {
    let repo = git2::Repository::open(r).unwrap();
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .include_ignored(false)
        .recurse_untracked_dirs(false)
        .exclude_submodules(true);
    let mut v: Vec<(String, u32)> = repo
        .statuses(Some(&mut opts))
        .unwrap()
        .iter()
        .map(|e| (e.path().unwrap().to_string(), e.status().bits()))
        .collect();
    v.sort();
    v
}

fn bounded_status(r: &Path) -> Vec<(String, u32)> {
    let repo = git2::Repository::open(r).unwrap();
    let mut v: Vec<(String, u32)> = changes(&repo, Want::Changes, None)
        .unwrap()
        .into_iter()
        .map(|(p, b)| (String::from_utf8(p).unwrap(), b))
        .collect();
    v.sort();
    v
}

/// Asking libgit2 only about the paths whose stat data moved answers as its whole
/// status does, state by state.
#[test]
fn the_bounded_status_is_libgit2s_status() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, r) = repo();
    let same = |what: &str| assert_eq!(bounded_status(&r), plain_status(&r), "{what}");
    same("clean");
    // Racily clean: rewritten at once, same size.
    std::fs::write(r.join("a.txt"), "b\n").unwrap();
    same("same size, rewritten");
    std::fs::write(r.join("src/b.txt"), "longer\n").unwrap();
    same("modified");
    git(&r, &["add", "src/b.txt"]);
    same("staged");
    std::fs::write(r.join("src/b.txt"), "again\n").unwrap();
    same("staged and modified");
    std::fs::write(r.join("src/new.txt"), "n").unwrap();
    std::fs::write(r.join("x.log"), "ignored").unwrap();
    std::fs::create_dir_all(r.join("fresh/deeper")).unwrap();
    std::fs::write(r.join("fresh/deeper/f"), "f").unwrap();
    same("untracked");
    git(&r, &["add", "src/new.txt"]);
    std::fs::remove_file(r.join("a.txt")).unwrap();
    same("added, deleted");
    git(&r, &["rm", "-q", "--cached", ".gitignore"]);
    same("staged deletion");
    git(&r, &["add", "-A"]);
    git(&r, &["commit", "-qm", "two"]);
    same("committed");
    let p = r.join("src/b.txt");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    same("mode");
    std::fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink("new.txt", &p).unwrap();
    same("typechange");
    git(&r, &["add", "-A"]);
    git(&r, &["commit", "-qm", "three"]);
    same("a symlink committed");
    std::fs::remove_dir_all(r.join("fresh")).unwrap();
    std::fs::write(r.join("fresh"), "now a file").unwrap();
    same("a tracked directory now a file");
}
