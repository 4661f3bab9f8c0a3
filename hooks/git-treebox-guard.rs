//! `git-treebox-guard`: the hook treebox installs in every box (see `treebox::guard`).
fn main() {
    std::process::exit(treebox::guard::hook::main())
}
