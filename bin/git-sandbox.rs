//! `git-sandbox`: see the library docs.
fn main() {
    std::process::exit(treebox::cli::sandbox_main())
}
