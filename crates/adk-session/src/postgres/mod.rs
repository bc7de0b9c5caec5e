//! PostgreSQL backend through sqlx: the session store's dialect and its service, and the memory
//! service.

mod dialect;
mod listener;
mod memory;
mod session;

pub use memory::PostgresMemoryService;
pub use session::PostgresSessionService;
