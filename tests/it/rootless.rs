//! A real user of this machine whose podman runs without root (rootless podman: its
//! containers' root is that user, the rest of their uids its subordinate range), made
//! for one test and gone after it. The test suite runs as root; a user who is not root
//! has podman of their own, and treebox's rootless paths run only for such a user.
//!
//! What the user needs, set up by [`RootlessUser::new`] and put back when it drops:
//! - an account with a group and a home of its own (`groupadd`, `useradd -m`),
//!   removed with `userdel -r`;
//! - a subordinate uid and gid range (`/etc/subuid`, `/etc/subgid`): `useradd` gives
//!   one where `login.defs` says so, else `usermod --add-subuids`; those files, and the
//!   backups the shadow tools write beside `/etc/passwd` and the rest, as they were;
//! - `/dev/net/tun` open to the user ([`RootlessUser::open_tun`]): slirp4netns
//!   (rootless podman's network) needs it, and some machines keep it root's alone
//!   (mode 0600); its mode is restored;
//! - a runtime dir (`XDG_RUNTIME_DIR`) and storage in its home, named by a
//!   `storage.conf` of its own (`CONTAINERS_STORAGE_CONF`), the same whatever HOME a
//!   test gives treebox: the kernel's overlay, where podman would otherwise pick `vfs`
//!   (a full copy of a ~1 GB image per layer and per container) on a machine whose
//!   `/dev/fuse` is root's;
//! - images copied from root's storage ([`RootlessUser::load`]).
//!
//! At the end `podman system reset -f` as the user removes its containers, images and
//! the process that holds its user namespace, then any process of the user or its
//! range still running is killed.
//!
//! Not root, or no podman, `newuidmap` or slirp4netns: `None`, with a note; under
//! `TREEBOX_REQUIRE_ENGINE=1` (CI) a machine with podman but without the rest fails.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env::run_ok;

/// The shadow tools' files a user's creation and removal touch beyond the accounts
/// themselves: the subordinate ranges, and the backups (`-`) of every file they write.
const SHADOW_FILES: &[&str] = &[
    "/etc/subuid",
    "/etc/subgid",
    "/etc/passwd-",
    "/etc/group-",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/subuid-",
    "/etc/subgid-",
];

/// The device slirp4netns opens.
const TUN: &str = "/dev/net/tun";

/// A user made for a test, with rootless podman; removed, with everything it made,
/// when dropped.
pub(crate) struct RootlessUser {
    pub(crate) name: String,
    /// Its uid, and its group's gid.
    pub(crate) uid: u32,
    pub(crate) home: PathBuf,
    /// What [`SHADOW_FILES`] held before (`None`: there was no such file).
    shadow_before: Vec<(&'static str, Option<Vec<u8>>)>,
    /// `/dev/net/tun`'s mode, where the test opened it to everyone.
    tun_mode_before: Option<u32>,
}

fn program_on_path(name: &str) -> bool {
    [
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
    ]
    .iter()
    .any(|d| Path::new(d).join(name).is_file())
}

/// A uid and gid that no account or group holds.
fn free_id() -> u32 {
    let taken = |db: &str, id: u32| {
        Command::new("getent")
            .args([db, &id.to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    (2100..3000)
        .find(|&id| !taken("passwd", id) && !taken("group", id))
        .expect("a free uid between 2100 and 3000")
}

impl RootlessUser {
    /// A new user with rootless podman that works, or `None` (with a note) where this
    /// machine cannot have one.
    pub(crate) fn new() -> Option<RootlessUser> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("note: not root: cannot make a user; the rootless podman case is not tried");
            return None;
        }
        if !program_on_path("podman") {
            eprintln!("note: no podman; the rootless podman case is not tried");
            return None;
        }
        let required = std::env::var("TREEBOX_REQUIRE_ENGINE").as_deref() == Ok("1");
        let mut missing: Vec<&str> = ["newuidmap", "newgidmap", "slirp4netns", "useradd"]
            .into_iter()
            .filter(|p| !program_on_path(p))
            .collect();
        if !Path::new(TUN).exists() {
            missing.push(TUN);
        }
        if !missing.is_empty() {
            let what = format!(
                "a user's rootless podman needs {} here (packages uidmap, slirp4netns)",
                missing.join(", ")
            );
            assert!(!required, "{what} (TREEBOX_REQUIRE_ENGINE=1)");
            eprintln!("note: {what}; the rootless podman case is not tried");
            return None;
        }
        let shadow_before = SHADOW_FILES
            .iter()
            .map(|f| (*f, std::fs::read(f).ok()))
            .collect();
        let uid = free_id();
        let name = format!("tbrootless{uid}");
        run_ok(Command::new("groupadd").args(["-g", &uid.to_string(), &name]));
        let made = Command::new("useradd")
            .args(["-m", "-u", &uid.to_string(), "-g", &uid.to_string()])
            .args(["-s", "/bin/sh", &name])
            .output()
            .unwrap();
        let mut user = RootlessUser {
            home: PathBuf::from("/home").join(&name),
            name,
            uid,
            shadow_before,
            tun_mode_before: None,
        };
        assert!(made.status.success(), "useradd: {made:?}");
        // From here on, dropping `user` puts everything back.
        user.home = PathBuf::from(
            run_ok(Command::new("getent").args(["passwd", &user.name]))
                .trim()
                .split(':')
                .nth(5)
                .expect("a home in the passwd entry"),
        );
        user.subordinate_range();
        let run = user.runtime_dir();
        std::fs::create_dir_all(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        // A file named by CONTAINERS_STORAGE_CONF is read as the system's: a rootless
        // podman takes its store from `rootless_storage_path` there (not `graphroot`),
        // and its run root from XDG_RUNTIME_DIR.
        std::fs::write(
            user.storage_conf(),
            format!(
                "[storage]\ndriver = \"overlay\"\nrootless_storage_path = \"{}\"\n",
                user.home.join("storage").display(),
            ),
        )
        .unwrap();
        run_ok(
            Command::new("chown")
                .args(["-R", &format!("{uid}:{uid}")])
                .arg(&run),
        );
        let info = user
            .podman(&[
                "info",
                "--format",
                "{{.Host.Security.Rootless}} {{.Store.GraphDriverName}}",
            ])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&info.stdout).trim().to_string();
        if said != "true overlay" {
            let what = format!(
                "rootless podman does not work for a new user here ({said:?}): {}",
                String::from_utf8_lossy(&info.stderr)
            );
            assert!(!required, "{what} (TREEBOX_REQUIRE_ENGINE=1)");
            eprintln!("note: {what}; the rootless podman case is not tried");
            return None;
        }
        Some(user)
    }

    /// Give the user a subordinate uid and gid range where `useradd` gave none: 65536
    /// ids past every range already given.
    fn subordinate_range(&self) {
        let has = |file: &str| {
            std::fs::read_to_string(file)
                .unwrap_or_default()
                .lines()
                .any(|l| l.starts_with(&format!("{}:", self.name)))
        };
        if has("/etc/subuid") && has("/etc/subgid") {
            return;
        }
        let end_of = |file: &str| {
            std::fs::read_to_string(file)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| {
                    let mut f = l.split(':').skip(1);
                    let start: u64 = f.next()?.parse().ok()?;
                    let count: u64 = f.next()?.parse().ok()?;
                    Some(start + count)
                })
                .max()
                .unwrap_or(0)
        };
        let start = end_of("/etc/subuid")
            .max(end_of("/etc/subgid"))
            .max(100_000);
        let range = format!("{start}-{}", start + 65_535);
        run_ok(
            Command::new("usermod")
                .args(["--add-subuids", &range, "--add-subgids", &range])
                .arg(&self.name),
        );
    }

    /// Does this machine keep `/dev/net/tun` from users (and so from the user's
    /// podman's network)?
    pub(crate) fn tun_closed(&self) -> bool {
        let mode = std::fs::metadata(TUN).unwrap().permissions().mode();
        mode & 0o006 != 0o006
    }

    /// Open `/dev/net/tun` to everyone where it is not (its usual mode elsewhere).
    pub(crate) fn open_tun(&mut self) {
        if self.tun_closed() {
            let mode = std::fs::metadata(TUN).unwrap().permissions().mode() & 0o7777;
            std::fs::set_permissions(TUN, std::fs::Permissions::from_mode(0o666)).unwrap();
            self.tun_mode_before.get_or_insert(mode);
        }
    }

    fn runtime_dir(&self) -> PathBuf {
        self.home.join("run")
    }

    fn storage_conf(&self) -> PathBuf {
        self.home.join("storage.conf")
    }

    /// What the user's podman needs in its environment, beside HOME: its runtime dir
    /// and its storage.
    pub(crate) fn engine_env(&self) -> Vec<(String, String)> {
        vec![
            (
                "XDG_RUNTIME_DIR".into(),
                self.runtime_dir().to_string_lossy().into_owned(),
            ),
            (
                "CONTAINERS_STORAGE_CONF".into(),
                self.storage_conf().to_string_lossy().into_owned(),
            ),
        ]
    }

    /// `podman ARGS` as the user, in its home, with nothing of the test's environment.
    pub(crate) fn podman(&self, args: &[&str]) -> Command {
        let mut c = self.command("podman");
        c.args(args);
        c
    }

    /// `program` as the user, in its home, with nothing of the test's environment but
    /// what its podman needs.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={}", self.uid),
            &format!("--regid={}", self.uid),
            "--clear-groups",
            "--",
            program,
        ])
        .env_clear()
        .env("HOME", &self.home)
        .env("USER", &self.name)
        .env("LOGNAME", &self.name)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TREEBOX_PORTS_DIR", crate::env::ports_ledger())
        .envs(self.engine_env())
        .current_dir(&self.home)
        .stdin(Stdio::null());
        c
    }

    /// Copy `image` from root's podman storage into the user's.
    pub(crate) fn load(&self, image: &str) {
        let mut save = Command::new("podman")
            .args(["save", image])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = self
            .podman(&["load", "-q"])
            .stdin(save.stdout.take().unwrap())
            .output()
            .unwrap();
        assert!(save.wait().unwrap().success(), "podman save {image}");
        assert!(
            out.status.success(),
            "podman load as {}: {out:?}",
            self.name
        );
    }

    /// The address this machine has as the user's containers see it
    /// (`host.containers.internal`): slirp4netns reaches the host from the host's own
    /// network, at one of its addresses (podman names one that is not loopback).
    pub(crate) fn host_address(&self, image: &str) -> String {
        let out = self
            .podman(&[
                "run",
                "--rm",
                image,
                "getent",
                "hosts",
                "host.containers.internal",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .expect("an address for host.containers.internal")
            .to_string()
    }
}

/// The processes whose real uid is `uid` or in `range` (the user's containers).
fn processes_of_user(uid: u32, range: Option<(u32, u32)>) -> Vec<i32> {
    crate::env::processes_where(|p| {
        let status = std::fs::read_to_string(p.join("status")).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok())
            .is_some_and(|real| {
                real == uid
                    || range.is_some_and(|(start, count)| real >= start && real < start + count)
            })
    })
}

impl Drop for RootlessUser {
    fn drop(&mut self) {
        let _ = self
            .podman(&["system", "reset", "-f"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let range = std::fs::read_to_string("/etc/subuid")
            .unwrap_or_default()
            .lines()
            .find_map(|l| {
                let mut f = l.strip_prefix(&format!("{}:", self.name))?.split(':');
                Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
            });
        for _ in 0..50 {
            let left = processes_of_user(self.uid, range);
            if left.is_empty() {
                break;
            }
            for pid in left {
                // SAFETY: kill has no memory preconditions; the pid is the test user's.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = Command::new("userdel")
            .args(["-r", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("groupdel")
            .arg(&self.name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // userdel leaves a home it would not remove (files of the user's range in it).
        let _ = std::fs::remove_dir_all(&self.home);
        for (file, before) in &self.shadow_before {
            match before {
                Some(text) if std::fs::read(file).ok().as_ref() != Some(text) => {
                    let _ = std::fs::write(file, text);
                }
                None => {
                    let _ = std::fs::remove_file(file);
                }
                _ => {}
            }
        }
        if let Some(mode) = self.tun_mode_before {
            let _ = std::fs::set_permissions(TUN, std::fs::Permissions::from_mode(mode));
        }
    }
}
