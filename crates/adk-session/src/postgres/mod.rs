//! PostgreSQL backend through sqlx.

mod schema;
mod session;

pub use session::PostgresSessionService;
