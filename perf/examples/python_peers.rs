//! Prints the path of the Python interpreter of the shared Python peers' virtualenv (ADK Python
//! among them), installing it first when needed, pinned and under a file lock, as the tests that
//! talk to ADK Python do. `cargo xtask bench --serve` runs it to find ADK Python's `adk`.

fn main() {
    let peers = adk_test::python_peers::a2a_peers();
    // The path is the program's output, read by `cargo xtask bench --serve`.
    #[allow(clippy::print_stdout)]
    {
        println!("{}", peers.python().display());
    }
}
