//! [`Beginning`]: a connection whose transaction is beginning, closed rather than reused when the
//! future beginning it is dropped before the database answered `BEGIN`.
//!
//! sqlx 0.9 counts a PostgreSQL transaction only once the answer to its `BEGIN` is read; a future
//! dropped in between (a client that went away, a cancelled run) hands the connection back to
//! the pool inside a transaction nothing will end, and the next borrower's statements run in it:
//! a write after a cancelled read fails with "cannot execute SELECT FOR UPDATE in a read-only
//! transaction" (sqlx issue 4393). Closing that connection instead ends the stray transaction on
//! the server.

/// A connection (`conn`) being handed a transaction. Set `begun` once the `BEGIN` was answered;
/// dropped before that, the connection is given to `abandon`, which marks it to be closed.
pub(crate) struct Beginning<C> {
    pub(crate) conn: C,
    pub(crate) begun: bool,
    abandon: fn(&mut C),
}

impl<C> Beginning<C> {
    /// Guards `conn` while its transaction begins.
    pub(crate) fn new(conn: C, abandon: fn(&mut C)) -> Self {
        Self {
            conn,
            begun: false,
            abandon,
        }
    }
}

impl<C> Drop for Beginning<C> {
    fn drop(&mut self) {
        if !self.begun {
            (self.abandon)(&mut self.conn);
        }
    }
}
