//! Taking a stream's next item onto the heap, for streams written as `async` blocks.
//!
//! An `async` block keeps room in its state for every value that lives across more than one of
//! its awaits, and a `yield` in `try_stream!` is an await, as is each `?`. An event (or model
//! response) taken from a stream and yielded after a few checks is such a value: held inline, it
//! would take its full size in the block's state for as long as the block waits on its model.
//! Boxed, it takes a pointer.

use adk_core::Result;
use futures::{Stream, StreamExt as _};

/// The next item of `items`, its value boxed.
pub(crate) async fn next_on_heap<S, T>(items: &mut S) -> Option<Result<Box<T>>>
where
    S: Stream<Item = Result<T>> + Unpin,
{
    items.next().await.map(|item| item.map(Box::new))
}
