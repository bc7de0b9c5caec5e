//! PostgreSQL backend through sqlx: the session store's dialect and its service.

mod dialect;
mod session;

pub use session::PostgresSessionService;
