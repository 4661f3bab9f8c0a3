//! Box names, branch names and leaves (SPEC §5, §8.4).
//!
//! A box is named by its *leaf*: the directory name under the box root, which is also
//! its lock and container identity and never changes. A branch name becomes a leaf by
//! flattening `/` to `--`. Everything here is pure: validation happens before anything
//! is written, so a refused name leaves no trace.

use std::fmt;

/// Longest accepted branch name, in bytes; leaves stay well below filesystem limits.
pub const MAX_NAME_LEN: usize = 100;

/// The prefix of placeholder branches given to nameless boxes.
pub const PLACEHOLDER_PREFIX: &str = "treebox/";

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {shown}: {reason}")]
pub struct NameError {
    pub what: Named,
    pub shown: String,
    pub reason: &'static str,
}

/// What a refused name named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A box (`create NAME`, a leaf).
    Box,
    /// An existing branch (`--checkout`, `--base`).
    Branch,
}

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Named::Box => "box name",
            Named::Branch => "branch name",
        })
    }
}

fn refuse(name: &str, reason: &'static str) -> NameError {
    NameError {
        what: Named::Box,
        shown: format!("{:?}", name),
        reason,
    }
}

fn refuse_branch(name: &str, reason: &'static str) -> NameError {
    NameError {
        what: Named::Branch,
        ..refuse(name, reason)
    }
}

/// A validated box name: the branch a new box works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxName(String);

impl BoxName {
    /// Validate a user-given NAME for `create NAME` (SPEC §5).
    pub fn parse(name: &str) -> Result<BoxName, NameError> {
        check_common(name)?;
        // Whatever the case: `TreeBox/x` is the same ref as `treebox/x` on a file system
        // that ignores case.
        let lower = name.to_ascii_lowercase();
        if lower.starts_with(PLACEHOLDER_PREFIX) || lower == "treebox" {
            return Err(refuse(
                name,
                "the treebox/ prefix is reserved for placeholder branches",
            ));
        }
        let mut segs = name.split('/').peekable();
        while let Some(seg) = segs.next() {
            check_segment(name, seg)?;
            // `a-/b` would flatten to the leaf `a---b`, which reads back as `a` + `-b`.
            if seg.ends_with('-') && segs.peek().is_some() {
                return Err(refuse(
                    name,
                    "a segment followed by '/' may not end with '-'",
                ));
            }
        }
        Ok(BoxName(name.to_string()))
    }

    /// The placeholder name for a nameless box: `treebox/<petname>`.
    pub fn placeholder(petname: &str) -> Result<BoxName, NameError> {
        check_common(petname)?;
        check_segment(petname, petname)?;
        Ok(BoxName(format!("{PLACEHOLDER_PREFIX}{petname}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The directory leaf: `/` flattened to `--`, placeholder prefix dropped.
    pub fn leaf(&self) -> Leaf {
        let s = self.0.strip_prefix(PLACEHOLDER_PREFIX).unwrap_or(&self.0);
        Leaf(s.replace('/', "--"))
    }

    pub fn is_placeholder(&self) -> bool {
        is_placeholder_branch(&self.0)
    }
}

impl fmt::Display for BoxName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True for a placeholder branch (`treebox/…`), given a short or full ref name.
pub fn is_placeholder_branch(branch: &str) -> bool {
    let b = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    b.starts_with(PLACEHOLDER_PREFIX)
}

/// A box's permanent identity: the directory name under the root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Leaf(String);

impl Leaf {
    /// Validate a leaf read from a user (e.g. `--name`) or from disk.
    pub fn parse(leaf: &str) -> Result<Leaf, NameError> {
        check_common(leaf)?;
        if leaf.contains('/') {
            return Err(refuse(leaf, "a box directory name cannot contain '/'"));
        }
        // A leaf is a flattened branch: each `--`-separated part is one segment.
        for part in leaf.split("--") {
            check_segment(leaf, part)?;
        }
        Ok(Leaf(leaf.to_string()))
    }

    /// The leaf for an existing branch taken with `--checkout`: as for `create NAME`,
    /// `/` flattened to `--` (case kept), and anything outside `[A-Za-z0-9._-]` (which
    /// git allows in a branch and a box directory does not) replaced by `-`.
    pub fn from_branch(branch: &str) -> Result<Leaf, NameError> {
        let flat = clean_segments(branch).join("--");
        Leaf::parse(&flat).map_err(|e| NameError {
            shown: format!("{branch:?}"),
            ..e
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Leaf {
    /// The same box name, whatever the case (`JIRA-1` and `jira-1` are one box: they
    /// would be one directory on a case-insensitive file system, and one lower-cased
    /// image or volume name).
    pub fn same_box(&self, other: &Leaf) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The segments of `name` (split at `/`) made fit for a box name: anything outside
/// `[A-Za-z0-9._-]` replaced by `-`, runs of `-` made one, `-` and `.` trimmed from the
/// ends; `..`, `.` and empty segments dropped (they say nothing about the name).
pub fn clean_segments(name: &str) -> Vec<String> {
    name.split('/')
        .map(|seg| {
            let mut s: String = seg
                .chars()
                .map(|c| match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' => c,
                    _ => '-',
                })
                .collect();
            while s.contains("--") {
                s = s.replace("--", "-");
            }
            s.trim_matches(|c| c == '-' || c == '.').to_string()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Validate an existing branch name given to `--checkout` (git's rules, no more):
/// any branch the user already has must be usable, but it may not escape or inject.
pub fn check_existing_branch(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(refuse_branch(name, "it is empty"));
    }
    if name.len() > 255 {
        return Err(refuse_branch(name, "it is too long"));
    }
    if name.starts_with('-') {
        return Err(refuse_branch(name, "it starts with '-'"));
    }
    if name.chars().any(|c| c.is_control()) {
        return Err(refuse_branch(name, "it contains a control character"));
    }
    if !git2::Branch::name_is_valid(name).unwrap_or(false) {
        return Err(refuse_branch(name, "it is not a valid git branch name"));
    }
    Ok(())
}

fn check_common(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(refuse(name, "it is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(refuse(name, "it is longer than 100 characters"));
    }
    if name.chars().any(|c| c.is_control()) {
        return Err(refuse(name, "it contains a control character"));
    }
    if name.starts_with('-') {
        return Err(refuse(name, "it starts with '-'"));
    }
    if name.starts_with('/') {
        return Err(refuse(name, "it is an absolute path"));
    }
    if name.ends_with('/') || name.contains("//") {
        return Err(refuse(name, "it has an empty path segment"));
    }
    // `HEAD` names the checked-out commit, never a branch (git refuses it as one).
    if name.ends_with(".lock") || name.contains("@{") || name.contains("..") || name == "HEAD" {
        return Err(refuse(name, "it is not a valid git branch name"));
    }
    Ok(())
}

fn check_segment(name: &str, seg: &str) -> Result<(), NameError> {
    if seg.is_empty() {
        return Err(refuse(name, "it has an empty path segment"));
    }
    if seg == "." || seg == ".." {
        return Err(refuse(name, "it has a '.' or '..' path segment"));
    }
    if seg.starts_with('.') || seg.ends_with('.') || seg.ends_with(".lock") {
        return Err(refuse(
            name,
            "a segment may not start or end with '.' or end with .lock",
        ));
    }
    if seg.starts_with('-') {
        return Err(refuse(name, "a segment starts with '-'"));
    }
    if seg.contains("--") {
        return Err(refuse(
            name,
            "'--' is reserved: it stands for '/' in box directory names",
        ));
    }
    // Upper case too: real branch names carry ticket keys (`JIRA-123-fix`).
    if !seg
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
    {
        return Err(refuse(
            name,
            "use letters, digits, '.', '_' and '-', with '/' between segments",
        ));
    }
    Ok(())
}

/// A petname `adjective-animal`. With `seed`, the choice is deterministic (tests set
/// `TREEBOX_SEED`); `attempt` varies it when the first choice is taken.
pub fn petname(seed: Option<u64>, attempt: u32) -> String {
    let words = petname::Petnames::medium();
    let base = seed.unwrap_or_else(entropy);
    let mut state = base ^ (u64::from(attempt)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let a = splitmix(&mut state) as usize % words.adjectives.len();
    let n = splitmix(&mut state) as usize % words.nouns.len();
    format!("{}-{}", words.adjectives[a], words.nouns[n])
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(d) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(d.as_nanos());
    }
    h.finish()
}

/// An environment variable name a box may be given: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn env_name_ok(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The top-level directory of the boxes' root ([`crate::state::layout::BOX_ROOT`]): a tree that tracks
/// anything under it is refused by `land` and `create` (SPEC §8.11).
pub const BOXES_DIR: &str = ".treebox";

/// The code points HFS+ leaves out of a name when comparing (git's `is_hfs_dotgit`).
fn hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

/// Is this top-level name [`BOXES_DIR`], as macOS would see it (ASCII case folded, the
/// code points HFS+ ignores left out)? A `.treebox` deeper in a tree is not.
pub fn is_boxes_dir(name: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(name) else {
        return false;
    };
    let folded: String = s.chars().filter(|c| !hfs_ignorable(*c)).collect();
    folded.eq_ignore_ascii_case(BOXES_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_good_names_and_flattens() {
        let n = BoxName::parse("feat/login-form").unwrap();
        assert_eq!(n.leaf().as_str(), "feat--login-form");
        assert!(!n.is_placeholder());
        for ok in ["fix", "a.b_c-d", "x/y/z", "v1.2", "UPPER", "JIRA-123-fix"] {
            BoxName::parse(ok).unwrap();
        }
        let n = BoxName::parse("feature/ABC-7").unwrap();
        assert_eq!(n.leaf().as_str(), "feature--ABC-7");
        assert!(n.leaf().same_box(&Leaf::parse("FEATURE--abc-7").unwrap()));
        assert!(!n.leaf().same_box(&Leaf::parse("feature--abc-8").unwrap()));
    }

    #[test]
    fn refuses_bad_names() {
        let long = "a".repeat(MAX_NAME_LEN + 1);
        for bad in [
            "Bad Name",
            "treebox/x",
            "treebox",
            "-x",
            "..",
            "a/../b",
            "a\nb",
            "a\tb",
            "",
            "/abs",
            "a//b",
            "a/",
            "TreeBox/x",
            "TREEBOX",
            "x.lock",
            "a--b",
            ".hidden",
            "a/-b",
            "a@{b",
            "a-/b",
            "x/y-/z",
            long.as_str(),
        ] {
            assert!(BoxName::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn placeholder_and_leaf() {
        let p = BoxName::placeholder("brave-otter").unwrap();
        assert_eq!(p.as_str(), "treebox/brave-otter");
        assert_eq!(p.leaf().as_str(), "brave-otter");
        assert!(p.is_placeholder());
        assert!(is_placeholder_branch("refs/heads/treebox/x"));
        assert!(!is_placeholder_branch("refs/heads/feat/treebox"));
    }

    #[test]
    fn leaf_parse() {
        assert!(Leaf::parse("feat--x").is_ok());
        assert!(Leaf::parse("a/b").is_err());
        assert!(Leaf::parse("..").is_err());
        assert!(Leaf::parse("a----b").is_err());
        assert_eq!(
            Leaf::from_branch("Feature/Up per").unwrap().as_str(),
            "Feature--Up-per"
        );
    }

    #[test]
    fn existing_branch_rules() {
        assert!(check_existing_branch("Feature/Upper").is_ok());
        assert!(check_existing_branch("-x").is_err());
        assert!(check_existing_branch("a..b").is_err());
        assert!(check_existing_branch("a b").is_err());
    }

    #[test]
    fn petname_is_seedable() {
        assert_eq!(petname(Some(7), 0), petname(Some(7), 0));
        assert_ne!(petname(Some(7), 0), petname(Some(7), 1));
        let p = petname(Some(1), 0);
        assert!(BoxName::placeholder(&p).is_ok(), "{p}");
    }

    mod props {
        //! Bad input, generated: no name may panic the parser, and whatever is accepted
        //! is a valid git branch whose leaf cannot escape the box root.
        use super::super::*;
        use proptest::prelude::*;

        /// Strings built from the characters that matter to git and to paths.
        fn tricky() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                Just("a".to_string()),
                Just("z9".to_string()),
                Just("/".to_string()),
                Just("//".to_string()),
                Just(".".to_string()),
                Just("..".to_string()),
                Just("-".to_string()),
                Just("--".to_string()),
                Just("_".to_string()),
                Just(".lock".to_string()),
                Just("@{".to_string()),
                Just("@".to_string()),
                Just("treebox/".to_string()),
                Just("refs/heads/".to_string()),
                Just("HEAD".to_string()),
                Just("~^:?*[\\ ".to_string()),
                Just("\u{1b}[2J".to_string()),
                Just("\n".to_string()),
                Just("\u{7f}".to_string()),
                Just("\u{0}".to_string()),
                Just("é".to_string()),
                Just("\u{202e}".to_string()),
                "[A-Za-z0-9._-]{1,6}",
                any::<char>().prop_map(String::from),
            ];
            prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
        }

        fn names() -> impl Strategy<Value = String> {
            let segmented =
                prop::collection::vec("[A-Za-z0-9._-]{1,5}", 1..5).prop_map(|v| v.join("/"));
            prop_oneof![
                any::<String>(),
                tricky(),
                "[A-Za-z0-9._/-]{0,40}",
                segmented
            ]
        }

        fn assert_safe_leaf(leaf: &str, input: &str) {
            assert!(!leaf.is_empty(), "{input:?} → empty leaf");
            assert!(!leaf.contains('/'), "{input:?} → leaf {leaf:?} has '/'");
            assert!(!leaf.contains(".."), "{input:?} → leaf {leaf:?} has '..'");
            assert!(
                !leaf.chars().any(char::is_control),
                "{input:?} → leaf {leaf:?} has a control character"
            );
            assert!(
                !leaf.starts_with('-') && !leaf.starts_with('.'),
                "{input:?} → leaf {leaf:?} starts with '-' or '.'"
            );
            assert!(leaf.len() <= 2 * MAX_NAME_LEN, "{input:?} → leaf too long");
            // The leaf is a single, ordinary path component.
            let mut comps = std::path::Path::new(leaf).components();
            assert!(
                matches!(comps.next(), Some(std::path::Component::Normal(_)))
                    && comps.next().is_none(),
                "{input:?} → leaf {leaf:?} is not one normal path component"
            );
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn box_name_accepts_only_valid_branches(s in names()) {
                if let Ok(n) = BoxName::parse(&s) {
                    prop_assert_eq!(n.as_str(), s.as_str());
                    prop_assert!(
                        git2::Branch::name_is_valid(&s).unwrap_or(false),
                        "accepted {:?}, which git refuses as a branch name", s
                    );
                    prop_assert!(!n.is_placeholder());
                    prop_assert!(check_existing_branch(&s).is_ok());
                    let leaf = n.leaf();
                    assert_safe_leaf(leaf.as_str(), &s);
                    // The leaf reads back as a leaf, and unflattens to the name.
                    prop_assert_eq!(Leaf::parse(leaf.as_str()).ok(), Some(leaf.clone()));
                    prop_assert_eq!(leaf.as_str().replace("--", "/"), s);
                }
            }

            #[test]
            fn leaf_parse_accepts_only_safe_leaves(s in names()) {
                if let Ok(l) = Leaf::parse(&s) {
                    prop_assert_eq!(l.as_str(), s.as_str());
                    assert_safe_leaf(l.as_str(), &s);
                    prop_assert!(
                        git2::Branch::name_is_valid(&s).unwrap_or(false),
                        "accepted leaf {:?}, which git refuses as a branch name", s
                    );
                }
            }

            #[test]
            fn leaf_from_branch_is_safe(s in names()) {
                if let Ok(l) = Leaf::from_branch(&s) {
                    assert_safe_leaf(l.as_str(), &s);
                    prop_assert_eq!(Leaf::parse(l.as_str()).ok(), Some(l.clone()));
                }
            }

            #[test]
            fn existing_branch_check_agrees_with_git(s in names()) {
                if check_existing_branch(&s).is_ok() {
                    prop_assert!(git2::Branch::name_is_valid(&s).unwrap_or(false));
                    prop_assert!(!s.starts_with('-'));
                    prop_assert!(!s.chars().any(char::is_control));
                }
            }

            #[test]
            fn placeholders_of_any_seed_are_valid(seed in any::<u64>(), attempt in 0u32..64) {
                let pet = petname(Some(seed), attempt);
                let n = BoxName::placeholder(&pet).expect("a petname is a valid segment");
                prop_assert!(n.is_placeholder());
                prop_assert!(git2::Branch::name_is_valid(n.as_str()).unwrap_or(false));
                assert_safe_leaf(n.leaf().as_str(), &pet);
            }
        }
    }
}
