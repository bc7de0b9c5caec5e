//! PostgreSQL backend through sqlx.

mod session;

pub use session::PostgresSessionService;
