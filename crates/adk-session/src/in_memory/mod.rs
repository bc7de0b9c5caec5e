//! Services that keep everything in the process's memory: for tests, examples and single runs.

mod memory;
mod session;

pub use memory::InMemoryMemoryService;
pub use session::InMemorySessionService;
