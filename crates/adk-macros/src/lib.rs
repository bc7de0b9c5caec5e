#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The macros are used through the `adk` facade (`#[adk::tool]`): the code they write names the
// facade's paths.

mod tool;

use proc_macro::TokenStream;

/// Makes a tool of an `async fn` with plain parameters; used as `#[adk::tool]`.
///
/// The function becomes a unit struct of the same name that implements `adk::tool::Tool`, so it
/// is passed to an agent as it is: `.tool(get_weather)`. Its doc comment is the description the
/// model reads; its parameters are the tool's arguments, and their types and doc comments make
/// the JSON schema of the declaration; a parameter of type `ToolContext` is not an argument but
/// the call's context, passed through. A return type named `Result` is a fallible result: its
/// error becomes the tool's error result, which the model reads. Anything else that serializes
/// is the result as it is. The function stays callable as `get_weather::call(...)`.
///
/// One option declares what the tool does outside the session (`adk::tool::ToolEffect`):
/// `#[adk::tool(effect = "read_only")]`, `"idempotent"` or `"effectful"`. Without it the tool is
/// effectful, the safe choice: a call interrupted by a crash is never run again without the
/// user's decision.
///
/// See the `adk` crate's documentation of `tool` for an example.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
