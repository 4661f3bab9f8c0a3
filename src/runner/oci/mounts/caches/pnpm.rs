//! Which part of the host's pnpm store a box gets a copy of: the packages its
//! `pnpm-lock.yaml` pins, not the whole store (which holds every package of every
//! project the user installed).
//!
//! The store is content-addressed: under each version dir (`v3`, `v10`, …), a package's
//! index (`files/<xx>/<hex>-index.json` in `v3`; `index/<xx>/<hex>-<id>.json|.mpk`
//! later, the hex cut to 64 digits) is named by the sha512 of its tarball — the
//! `integrity` its lockfile pins — and lists its files by their own sha512, each stored
//! at `files/<xx>/<rest>` (`-exec` when executable). A box gets the indexes of the
//! pinned integrities and the files they list. Anything else is a miss pnpm fetches
//! into the box's own store; an unexpected layout only makes misses.
//!
//! The lockfile is the box's ([`read_lock`]); only hex digests computed from it ever
//! name a path, so it can pick entries of the host's store and nothing else.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::Path;

use super::{copy_tree, read_lock, ContainerError};

/// The largest index file read for the files it lists.
const INDEX_CAP: u64 = 16 * 1024 * 1024;

/// Copy into `own` what of the host's store `host` the lockfile `lock` pins.
pub(super) fn copy_locked(host: &Path, own: &Path, lock: &Path) -> Result<(), ContainerError> {
    let Some(text) = read_lock(lock) else {
        return Ok(());
    };
    let pinned = digests(&text);
    let Ok(rd) = fs::read_dir(host) else {
        return Ok(());
    };
    for version in rd.flatten() {
        let vname = version.file_name();
        if !version.file_type().is_ok_and(|t| t.is_dir())
            || !vname.to_string_lossy().starts_with('v')
        {
            continue;
        }
        let (vhost, vown) = (version.path(), own.join(&vname));
        for hex in &pinned {
            let (dir, rest) = (&hex[..2], &hex[2..64]);
            for sub in ["files", "index"] {
                let from = vhost.join(sub).join(dir);
                for e in fs::read_dir(&from).into_iter().flatten().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let is_index = name.ends_with(".json") || name.ends_with(".mpk");
                    if !(name.starts_with(rest) && is_index) {
                        continue;
                    }
                    copy_tree(&e.path(), &vown.join(sub).join(dir).join(&name))?;
                    for file in listed(&e.path()) {
                        let (fd, frest) = file.split_at(2);
                        for suffix in ["", "-exec"] {
                            let rel = Path::new("files").join(fd).join(format!("{frest}{suffix}"));
                            copy_tree(&vhost.join(&rel), &vown.join(&rel))?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The files an index lists, as hex sha512 digests (JSON indexes say `sha512-<base64>`,
/// msgpack ones the hex itself).
fn listed(index: &Path) -> BTreeSet<String> {
    let mut bytes = Vec::new();
    let Ok(f) = fs::File::open(index) else {
        return BTreeSet::new();
    };
    if f.take(INDEX_CAP).read_to_end(&mut bytes).is_err() {
        return BTreeSet::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut out = digests(&text);
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
        } else {
            if run.len() == 128 {
                out.insert(std::mem::take(&mut run));
            }
            run.clear();
        }
    }
    out
}

/// Every `sha512-<base64>` in `text`, as 128 hex digits.
fn digests(text: &str) -> BTreeSet<String> {
    text.match_indices("sha512-")
        .filter_map(|(i, m)| {
            let b64: String = text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
                .collect();
            let raw = base64(&b64)?;
            (raw.len() == 64).then(|| hex::encode(raw))
        })
        .collect()
}

/// Standard base64 (padding optional); `None` on any other character.
fn base64(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{general_purpose, DecodePaddingMode, GeneralPurpose};
    use base64::Engine;
    const STANDARD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        general_purpose::PAD.with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    STANDARD.decode(s).ok()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// sha512 of "a", in the lockfile's form and as hex.
    pub(crate) const B64: &str =
        "H0D8ktokFpR1CXnubPWC8tXX0o4YM13gWrxU0FYOD1MChgxlK/CNVgJSql50IQVG82n7u86MEs/HlXsmUv6adQ==";
    pub(crate) const HEX: &str = "1f40fc92da241694750979ee6cf582f2d5d7d28e18335de05abc54d0560e0f5302860c652bf08d560252aa5e74210546f369fbbbce8c12cfc7957b2652fe9a75";

    #[test]
    fn integrities_become_hex_digests() {
        let lock = format!("  /a@1.0.0:\n    resolution: {{integrity: sha512-{B64}}}\n");
        assert_eq!(digests(&lock).into_iter().collect::<Vec<_>>(), [HEX]);
        assert!(digests("sha512-not*base64").is_empty());
        assert!(digests("sha512-QUJD").is_empty(), "not 64 bytes");
    }

    #[test]
    fn only_the_pinned_packages_and_their_files_are_copied() {
        let d = tempfile::tempdir().unwrap();
        let (host, own) = (d.path().join("store"), d.path().join("own"));
        let file_hex = "ab".repeat(64);
        let (fd, frest) = file_hex.split_at(2);
        // v3: a JSON index listing one file by integrity (here: the same digest).
        write(
            &host.join(format!("v3/files/{}/{}-index.json", &HEX[..2], &HEX[2..])),
            &format!(r#"{{"files":{{"index.js":{{"integrity":"sha512-{B64}","mode":420}}}}}}"#),
        );
        write(
            &host.join(format!("v3/files/{}/{}", &HEX[..2], &HEX[2..])),
            "a",
        );
        // v11: a msgpack index that names a file by its hex digest.
        write(
            &host.join(format!(
                "v11/index/{}/{}-a@1.0.0.mpk",
                &HEX[..2],
                &HEX[2..64]
            )),
            &format!("\u{a6}digest\u{d9}\u{80}{file_hex}\u{a4}mode"),
        );
        write(&host.join(format!("v11/files/{fd}/{frest}-exec")), "#!");
        write(
            &host.join(format!("v11/files/{fd}/{}", "cd".repeat(63))),
            "other",
        );
        let lock = d.path().join("pnpm-lock.yaml");
        write(&lock, &format!("resolution: {{integrity: sha512-{B64}}}\n"));
        copy_locked(&host, &own, &lock).unwrap();
        assert!(own
            .join(format!("v3/files/{}/{}-index.json", &HEX[..2], &HEX[2..]))
            .is_file());
        assert!(own
            .join(format!("v3/files/{}/{}", &HEX[..2], &HEX[2..]))
            .is_file());
        assert!(own.join(format!("v11/files/{fd}/{frest}-exec")).is_file());
        assert!(!own
            .join(format!("v11/files/{fd}/{}", "cd".repeat(63)))
            .exists());
    }
}
