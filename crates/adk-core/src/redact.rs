//! Showing URLs in messages and logs without the credentials they may carry.

/// `url` without its user information (`user:password@`) and its query and fragment, which may
/// carry credentials (`?key=...`): the form in which error messages, logs and `Debug` output show
/// the URL of a provider or a server.
///
/// ```
/// use adk_core::url_without_credentials;
///
/// assert_eq!(
///     url_without_credentials("https://bob:p@ss@api.example/v1?key=k1"),
///     "https://api.example/v1"
/// );
/// assert_eq!(url_without_credentials("http://127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
/// ```
pub fn url_without_credentials(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    let Some((scheme, rest)) = without_query.split_once("://") else {
        return without_query.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    // A password may itself hold `@`: the host follows the last one.
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}
