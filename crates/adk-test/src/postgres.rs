//! The PostgreSQL a test may use: its URL from `ADK_POSTGRES_URL`, or an honest skip.

use std::io::Write as _;
use std::sync::Once;

/// The environment variable holding the URL of the PostgreSQL the tests may use.
pub const POSTGRES_URL_ENV: &str = "ADK_POSTGRES_URL";

/// The PostgreSQL URL, or `None` after reporting the calling test as skipped (see
/// [`report_skipped`](crate::report_skipped)) and saying once per test binary, on stderr, that the
/// PostgreSQL tests did not run.
///
/// # Panics
///
/// In CI (`CI` set) when `ADK_POSTGRES_URL` is not: there the tests must run.
pub fn postgres_url() -> Option<String> {
    match std::env::var(POSTGRES_URL_ENV) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{POSTGRES_URL_ENV} is not set in CI: the PostgreSQL tests must run there")
        }
        _ => {
            crate::report_skipped(&format!("{POSTGRES_URL_ENV} is not set"));
            // Straight to stderr: the harness captures `eprintln!`, and this must be seen.
            static NOTICE: Once = Once::new();
            NOTICE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** NOT RUN: the PostgreSQL tests were skipped because {POSTGRES_URL_ENV} \
                     is not set (e.g. postgres://adk:adk@127.0.0.1:5432/adk) ***\n"
                );
            });
            None
        }
    }
}
