//! [`BodyReader`]: reading request bodies bounded by bytes — one body's size, the bytes of every
//! body being read at once, and the time one may take to arrive — so that a flood of large bodies
//! in parallel, or one trickling in, cannot exhaust memory or hold the server.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use http::header::CONTENT_LENGTH;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Why a body was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body is larger than one body may be (413).
    #[error("the request body is larger than the {limit} bytes this server accepts")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// Reading it would pass the bytes of bodies the server holds at once (503, retry later).
    #[error(
        "the server is already reading {budget} bytes of request bodies at once, its limit; retry later"
    )]
    Busy {
        /// The budget.
        budget: usize,
    },
    /// It did not arrive in time (408).
    #[error("the request body did not arrive within {} s", .after.as_secs_f64())]
    Timeout {
        /// The time it had.
        after: Duration,
    },
    /// The connection failed while it was read (400).
    #[error("cannot read the request body: {0}")]
    Read(String),
}

/// Reads request bodies under a size limit, a shared byte budget and a read timeout. Clones share
/// the budget.
///
/// ```
/// use std::time::Duration;
/// use adk_gate::BodyReader;
///
/// let reader = BodyReader::new(32 * 1024 * 1024, 128 * 1024 * 1024, Duration::from_secs(60));
/// assert_eq!(reader.limit(), 32 * 1024 * 1024);
/// ```
#[derive(Debug, Clone)]
pub struct BodyReader {
    limit: usize,
    budget: Arc<Semaphore>,
    budget_bytes: usize,
    read_timeout: Duration,
}

/// Bytes of the budget a request holds; dropping it gives them back.
#[derive(Debug)]
pub struct BodyReservation(Vec<OwnedSemaphorePermit>);

impl BodyReader {
    /// Bodies of at most `limit` bytes, at most `budget_bytes` of them at once, each arriving
    /// within `read_timeout`.
    pub fn new(limit: usize, budget_bytes: usize, read_timeout: Duration) -> Self {
        let budget_bytes = budget_bytes.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            limit,
            budget: Arc::new(Semaphore::new(budget_bytes)),
            budget_bytes,
            read_timeout,
        }
    }

    /// The same budget and timeout, with another size limit for one body.
    pub fn with_limit(&self, limit: usize) -> Self {
        Self {
            limit,
            ..self.clone()
        }
    }

    /// The largest body.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Reads `request`'s body whole. Each chunk's bytes are reserved from the budget before they
    /// are kept (all of a declared `Content-Length` at once, so a body that cannot fit is refused
    /// before it is read); the bytes stay reserved until the returned reservation is dropped,
    /// after the body was parsed.
    pub async fn read(&self, request: Request) -> Result<(Bytes, BodyReservation), BodyError> {
        let declared = request
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok())
            .and_then(|length| length.parse::<usize>().ok());
        if declared.is_some_and(|length| length > self.limit) {
            return Err(BodyError::TooLarge { limit: self.limit });
        }
        let mut reservation = BodyReservation(Vec::new());
        if let Some(length) = declared {
            reservation.0.push(self.reserve(length)?);
        }
        let reading = self.collect(request.into_body(), declared, &mut reservation);
        let bytes = tokio::time::timeout(self.read_timeout, reading)
            .await
            .map_err(|_| BodyError::Timeout {
                after: self.read_timeout,
            })??;
        Ok((bytes, reservation))
    }

    async fn collect(
        &self,
        body: Body,
        declared: Option<usize>,
        reservation: &mut BodyReservation,
    ) -> Result<Bytes, BodyError> {
        let mut bytes = BytesMut::with_capacity(declared.unwrap_or(0));
        let mut reserved = declared.unwrap_or(0);
        let mut chunks = body.into_data_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|error| BodyError::Read(error.to_string()))?;
            if bytes.len() + chunk.len() > self.limit {
                return Err(BodyError::TooLarge { limit: self.limit });
            }
            let needed = (bytes.len() + chunk.len()).saturating_sub(reserved);
            if needed > 0 {
                reservation.0.push(self.reserve(needed)?);
                reserved += needed;
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes.freeze())
    }

    /// Reserves `bytes` of the budget, or refuses at once: waiting could deadlock bodies that each
    /// hold part of the budget.
    fn reserve(&self, bytes: usize) -> Result<OwnedSemaphorePermit, BodyError> {
        let busy = BodyError::Busy {
            budget: self.budget_bytes,
        };
        let bytes = u32::try_from(bytes).map_err(|_| busy.clone())?;
        self.budget
            .clone()
            .try_acquire_many_owned(bytes)
            .map_err(|_| busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: &'static [u8], declared: bool) -> Request {
        let mut builder = http::Request::builder();
        if declared {
            builder = builder.header(CONTENT_LENGTH, body.len());
        }
        builder.body(Body::from(body)).unwrap()
    }

    #[tokio::test]
    async fn bodies_are_refused_past_the_limit_and_past_the_budget() {
        let reader = BodyReader::new(10, 15, Duration::from_secs(5));
        let (bytes, held) = reader.read(request(b"0123456789", true)).await.unwrap();
        assert_eq!(&bytes[..], b"0123456789");
        assert_eq!(
            reader
                .read(request(b"0123456789a", false))
                .await
                .unwrap_err(),
            BodyError::TooLarge { limit: 10 }
        );
        // Ten bytes are held: eight more do not fit the budget of fifteen, declared or not.
        assert_eq!(
            reader.read(request(b"01234567", true)).await.unwrap_err(),
            BodyError::Busy { budget: 15 }
        );
        assert_eq!(
            reader.read(request(b"01234567", false)).await.unwrap_err(),
            BodyError::Busy { budget: 15 }
        );
        drop(held);
        assert!(reader.read(request(b"01234567", false)).await.is_ok());
    }
}
