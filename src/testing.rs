//! What the crate's unit tests share: real git, run hermetically (no user or system
//! config, a fixed identity), and the FIFOs hostile input plants.

use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir`; its trimmed stdout. Fails the test when git does.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A FIFO at `path` (mode 0600), as a box or a repository plants one where a file is
/// read. Fails the test when it cannot be made.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo touches no Rust memory.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// A container's script (`launch::ANCHOR`, the launcher, the ender) with its `/run/`
/// under `root` and its idling `exec sleep infinity` an exit, run by `sh` with `args`:
/// (status, stderr).
pub fn run_moved(script: &str, root: &Path, args: &[&str]) -> (i32, String) {
    let moved = script
        .replace("/run/", &format!("{}/", root.display()))
        .replace("exec sleep infinity", "exit 0");
    let out = Command::new("sh")
        .arg("-c")
        .arg(moved)
        .arg("sh")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
