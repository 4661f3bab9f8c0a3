fn main() {
    std::process::exit(treebox::guard_hook::main())
}
