//! Conversions that let a builder take a model, an agent or a service as itself, already shared
//! (`Arc<T>`), or as a trait object (`Arc<dyn Trait>`): callers never write `Arc::new`.
//!
//! Each conversion is its own trait ([`IntoAgent`](crate::IntoAgent),
//! [`IntoLlm`](crate::IntoLlm), ...) because a blanket `From<T> for Arc<dyn Trait>` cannot be
//! written outside the standard library. Each is defined beside its trait with the macro written
//! here, as the crates above define theirs (tools, toolsets, plugins).

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
