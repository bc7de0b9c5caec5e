//! `#[adk::tool]`: reads an `async fn` and writes the unit struct that is its tool.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, FnArg, ItemFn, Lit, Meta, Pat, PatType, ReturnType, Type, parse2};

/// One parameter of the function: an argument of the tool, or the call's context.
enum Param {
    Argument {
        name: syn::Ident,
        ty: Box<Type>,
        docs: Vec<Attribute>,
    },
    Context,
}

/// The expansion of `#[adk::tool]` on `item`.
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let effect = read_effect(attr)?;
    let mut function: ItemFn = parse2(item)?;
    check_signature(&function)?;
    let name = function.sig.ident.clone();
    let description = doc_text(&function.attrs).ok_or_else(|| {
        syn::Error::new(
            name.span(),
            "a tool needs a description: write a doc comment (`/// Returns ...`) on the function",
        )
    })?;
    let params = read_params(&mut function)?;
    let fallible = returns_result(&function.sig.output);

    let vis = function.vis.clone();
    let docs: Vec<&Attribute> = function
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .collect();
    let tool_name = name.to_string();
    let args_struct = format_ident!("__{}Arguments", to_camel(&tool_name));
    let fields = params.iter().filter_map(|param| match param {
        Param::Argument { name, ty, docs } => Some(quote! { #(#docs)* #name: #ty }),
        Param::Context => None,
    });
    let call_args = params.iter().map(|param| match param {
        Param::Argument { name, .. } => quote! { __args.#name },
        Param::Context => quote! { __ctx },
    });
    let result = if fallible {
        quote! { #name::call(#(#call_args),*).await }
    } else {
        quote! {
            ::std::result::Result::<_, ::std::convert::Infallible>::Ok(
                #name::call(#(#call_args),*).await
            )
        }
    };
    // The function keeps its signature and body as `call`, with the doc comment on it too.
    function.sig.ident = format_ident!("call");
    function.vis = vis.clone();

    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #name;

        impl #name {
            #function
        }

        const _: () = {
            use ::adk::__private::{async_trait, schemars, serde, serde_json};
            use ::adk::tool::{FunctionTool, Tool, ToolContext, ToolEffect};

            #[derive(serde::Deserialize, schemars::JsonSchema)]
            #[serde(crate = "::adk::__private::serde")]
            #[schemars(crate = "::adk::__private::schemars")]
            #[allow(non_camel_case_types)]
            struct #args_struct {
                #(#fields),*
            }

            /// The tool, built once: its schema is generated and compiled on first use.
            static TOOL: ::std::sync::LazyLock<FunctionTool> = ::std::sync::LazyLock::new(|| {
                FunctionTool::builder(
                    #tool_name,
                    #description,
                    |__ctx: ToolContext, __args: #args_struct| async move { #result },
                )
                .effect(ToolEffect::#effect)
                .build()
            });

            #[async_trait::async_trait]
            impl Tool for #name {
                fn name(&self) -> &str {
                    #tool_name
                }

                fn description(&self) -> &str {
                    #description
                }

                fn declaration(&self) -> ::std::option::Option<::adk::core::FunctionDeclaration> {
                    TOOL.declaration()
                }

                fn effect(&self) -> ToolEffect {
                    ToolEffect::#effect
                }

                async fn run(
                    &self,
                    ctx: ToolContext,
                    args: serde_json::Value,
                ) -> ::adk::core::Result<serde_json::Value> {
                    TOOL.run(ctx, args).await
                }
            }
        };
    })
}

/// The variant of `ToolEffect` the attribute's one option names (`effect = "read_only"`,
/// `"idempotent"` or `"effectful"`); `Effectful` when it is not given, the safe choice.
fn read_effect(attr: TokenStream) -> syn::Result<syn::Ident> {
    let mut effect = None;
    let parser = syn::meta::parser(|meta| {
        if !meta.path.is_ident("effect") {
            return Err(meta.error(
                "#[adk::tool] takes one option, `effect = \"read_only\" | \"idempotent\" | \
                 \"effectful\"`: the function's name is the tool's name and its doc comment the \
                 description",
            ));
        }
        let value: syn::LitStr = meta.value()?.parse()?;
        let variant = match value.value().as_str() {
            "read_only" => "ReadOnly",
            "idempotent" => "Idempotent",
            "effectful" => "Effectful",
            other => {
                return Err(syn::Error::new(
                    value.span(),
                    format!(
                        "`{other}` is not a tool effect; use \"read_only\", \"idempotent\" or \
                         \"effectful\""
                    ),
                ));
            }
        };
        effect = Some(syn::Ident::new(variant, value.span()));
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(effect.unwrap_or_else(|| format_ident!("Effectful")))
}

/// Refuses what a tool function cannot be: not `async`, generic, or a method.
fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        return Err(syn::Error::new(
            sig.fn_token.span(),
            "#[adk::tool] needs an `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a tool function cannot be generic: the model's arguments need one concrete type",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new(
            variadic.span(),
            "a tool function cannot be variadic",
        ));
    }
    Ok(())
}

/// The parameters, with their doc comments taken off the function (where the compiler would
/// refuse them) and kept for the schema.
fn read_params(function: &mut ItemFn) -> syn::Result<Vec<Param>> {
    let mut params = Vec::new();
    let mut context_seen = false;
    for input in &mut function.sig.inputs {
        let PatType { attrs, pat, ty, .. } = match input {
            FnArg::Typed(typed) => typed,
            FnArg::Receiver(receiver) => {
                return Err(syn::Error::new(
                    receiver.span(),
                    "a tool function cannot take `self`: write a free `async fn`",
                ));
            }
        };
        let docs: Vec<Attribute> = attrs
            .iter()
            .filter(|attr| attr.path().is_ident("doc"))
            .cloned()
            .collect();
        attrs.retain(|attr| !attr.path().is_ident("doc"));
        if is_tool_context(ty) {
            if context_seen {
                return Err(syn::Error::new(
                    ty.span(),
                    "a tool function takes at most one `ToolContext`",
                ));
            }
            context_seen = true;
            params.push(Param::Context);
            continue;
        }
        let Pat::Ident(ident) = pat.as_ref() else {
            return Err(syn::Error::new(
                pat.span(),
                "a tool's parameters must be plain names (`city: String`): each is an argument \
                 the model gives by that name",
            ));
        };
        params.push(Param::Argument {
            name: ident.ident.clone(),
            ty: ty.clone(),
            docs,
        });
    }
    Ok(params)
}

/// Whether `ty` is the tool context (`ToolContext`, by any path).
fn is_tool_context(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "ToolContext"),
        _ => false,
    }
}

/// Whether the function returns a `Result` (by any path), whose error is the tool's error.
fn returns_result(output: &ReturnType) -> bool {
    match output {
        ReturnType::Type(_, ty) => match ty.as_ref() {
            Type::Path(path) => path
                .path
                .segments
                .last()
                .is_some_and(|segment| segment.ident == "Result"),
            _ => false,
        },
        ReturnType::Default => false,
    }
}

/// The text of the doc comments in `attrs`, one line each without the space after `///`, blank
/// lines kept; `None` when there is none.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(pair) if pair.path.is_ident("doc") => match &pair.value {
                Expr::Lit(expr) => match &expr.lit {
                    Lit::Str(text) => Some(text.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_owned()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `get_weather` as `GetWeather`, for the name of the arguments struct.
fn to_camel(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_camel_case() {
        assert_eq!(to_camel("get_weather"), "GetWeather");
        assert_eq!(to_camel("_private_tool"), "PrivateTool");
    }

    #[test]
    fn a_function_without_docs_or_async_is_refused_with_a_reason() {
        let not_async = quote! { /// Doc.
        fn get_weather(city: String) -> String { city } };
        let error = expand(TokenStream::new(), not_async).unwrap_err();
        assert!(error.to_string().contains("async fn"), "{error}");

        let undocumented = quote! { async fn get_weather(city: String) -> String { city } };
        let error = expand(TokenStream::new(), undocumented).unwrap_err();
        assert!(error.to_string().contains("doc comment"), "{error}");

        let destructured = quote! { /// Doc.
        async fn get_weather((a, b): (u8, u8)) -> u8 { a + b } };
        let error = expand(TokenStream::new(), destructured).unwrap_err();
        assert!(error.to_string().contains("plain names"), "{error}");
    }

    #[test]
    fn the_effect_option_is_read_and_anything_else_refused() {
        assert_eq!(read_effect(TokenStream::new()).unwrap(), "Effectful");
        assert_eq!(
            read_effect(quote! { effect = "read_only" }).unwrap(),
            "ReadOnly"
        );
        assert_eq!(
            read_effect(quote! { effect = "idempotent" }).unwrap(),
            "Idempotent"
        );
        let error = read_effect(quote! { effect = "sometimes" }).unwrap_err();
        assert!(error.to_string().contains("not a tool effect"), "{error}");
        let error = read_effect(quote! { name = "x" }).unwrap_err();
        assert!(error.to_string().contains("takes one option"), "{error}");
        let error = read_effect(quote! { effect = read_only }).unwrap_err();
        assert!(!error.to_string().is_empty());
    }

    #[test]
    fn results_are_told_apart_from_plain_returns() {
        let fallible: ReturnType = syn::parse_quote! { -> adk::Result<String> };
        let plain: ReturnType = syn::parse_quote! { -> serde_json::Value };
        assert!(returns_result(&fallible));
        assert!(!returns_result(&plain));
        assert!(!returns_result(&ReturnType::Default));
    }

    #[test]
    fn doc_comments_lose_their_leading_space_and_keep_their_lines() {
        let function: ItemFn = syn::parse_quote! {
            /// Returns the weather.
            ///
            /// Cities only.
            async fn get_weather() {}
        };
        assert_eq!(
            doc_text(&function.attrs).as_deref(),
            Some("Returns the weather.\n\nCities only.")
        );
    }
}
