//! Did-you-mean: the closest known word to a mistyped one.
//!
//! Used by `config` (unknown keys of the user's config file) and `template::spec`
//! (unknown keys of `container.json`, unknown capabilities). A leaf module: it depends
//! on nothing in the crate, so both can use it without depending on each other.

/// The closest candidate to a mistyped key, for a did-you-mean (config and templates).
pub(crate) fn suggest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .map(|c| (strsim::jaro_winkler(key, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}
