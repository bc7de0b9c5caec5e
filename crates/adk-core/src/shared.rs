//! Conversions that let a builder take a model, an agent or a service as itself, already shared
//! (`Arc<T>`), or as a trait object (`Arc<dyn Trait>`): callers never write `Arc::new`.
//!
//! Each conversion is its own trait ([`IntoAgent`], [`IntoLlm`], ...) because a blanket
//! `From<T> for Arc<dyn Trait>` cannot be written outside the standard library. The crates above
//! define theirs (tools, toolsets, plugins) with the same macro.

use crate::{Agent, ArtifactService, Llm, MemoryService, SessionService};

/// Defines a conversion trait `$name` with method `$method` into `Arc<dyn $bound>` (with
/// `$message` as the compiler's error when a value is not one), implemented
/// for every `$bound`, every `Arc` of one, and `Arc<dyn $bound>` itself (passed on unchanged, so
/// a shared value keeps its identity: downcasts and pointer comparisons still see it).
#[doc(hidden)]
#[macro_export]
macro_rules! __into_shared {
    ($(#[$doc:meta])* $name:ident, $method:ident, $bound:ident, $message:literal) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = $message,
            note = "pass a value that implements the trait, an `Arc` of one, or an `Arc<dyn _>`"
        )]
        pub trait $name {
            /// The value, shared.
            fn $method(self) -> ::std::sync::Arc<dyn $bound>;
        }

        impl<T: $bound + 'static> $name for T {
            fn $method(self) -> ::std::sync::Arc<dyn $bound> {
                ::std::sync::Arc::new(self)
            }
        }

        impl<T: $bound + 'static> $name for ::std::sync::Arc<T> {
            fn $method(self) -> ::std::sync::Arc<dyn $bound> {
                self
            }
        }

        impl $name for ::std::sync::Arc<dyn $bound> {
            fn $method(self) -> ::std::sync::Arc<dyn $bound> {
                self
            }
        }
    };
}

crate::__into_shared!(
    /// An [`Agent`] as a builder takes it: the agent itself, an `Arc` of it, or an
    /// `Arc<dyn Agent>`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use adk_core::{Agent, EventStream, IntoAgent, InvocationContext};
    ///
    /// struct Quiet;
    /// impl Agent for Quiet {
    ///     fn name(&self) -> &str { "quiet" }
    ///     fn description(&self) -> &str { "Says nothing." }
    ///     fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
    ///         Box::pin(futures::stream::empty())
    ///     }
    /// }
    ///
    /// let shared: Arc<dyn Agent> = Quiet.into_agent();
    /// assert!(Arc::ptr_eq(&shared, &shared.clone().into_agent()));
    /// ```
    IntoAgent,
    into_agent,
    Agent,
    "`{Self}` is not an agent: it does not implement `Agent`"
);

crate::__into_shared!(
    /// A model ([`Llm`]) as a builder takes it: the model itself, an `Arc` of it, or an
    /// `Arc<dyn Llm>`.
    IntoLlm,
    into_llm,
    Llm,
    "`{Self}` is not a model: it does not implement `Llm`"
);

crate::__into_shared!(
    /// A [`SessionService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn SessionService>`.
    IntoSessionService,
    into_session_service,
    SessionService,
    "`{Self}` is not a session service"
);

crate::__into_shared!(
    /// An [`ArtifactService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn ArtifactService>`.
    IntoArtifactService,
    into_artifact_service,
    ArtifactService,
    "`{Self}` is not an artifact service"
);

crate::__into_shared!(
    /// A [`MemoryService`] as a builder takes it: the service itself, an `Arc` of it, or an
    /// `Arc<dyn MemoryService>`.
    IntoMemoryService,
    into_memory_service,
    MemoryService,
    "`{Self}` is not a memory service"
);
