//! What the benchmarks share: the runtime their services run on.

use std::sync::LazyLock;

use tokio::runtime::Runtime;

/// Two worker threads, as many as the machine the numbers are taken on has cores.
pub(crate) static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
});
