//! `git-treebox`: see the library docs.
fn main() {
    std::process::exit(treebox::cli::treebox_main())
}
