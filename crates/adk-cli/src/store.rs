//! Where sessions are kept: a SQLite file by default, PostgreSQL by URL, or memory.

use std::sync::Arc;

use adk_core::SessionService;
use adk_session::{InMemorySessionService, PostgresSessionService, SqliteSessionService};
use anyhow::Context as _;

use crate::args::StoreArgs;

/// The session service the flags ask for, with a line saying where sessions go.
pub(crate) async fn open(args: &StoreArgs) -> anyhow::Result<(Arc<dyn SessionService>, String)> {
    if args.in_memory {
        let service = InMemorySessionService::new();
        return Ok((
            Arc::new(service),
            "sessions in memory (not stored)".to_owned(),
        ));
    }
    if let Some(url) = &args.database_url {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let service = PostgresSessionService::connect(url)
                .await
                .with_context(|| {
                    format!(
                        "cannot open the PostgreSQL session store at {}",
                        redact(url)
                    )
                })?;
            return Ok((Arc::new(service), format!("sessions in {}", redact(url))));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            return open_sqlite(path.as_ref()).await;
        }
        anyhow::bail!(
            "unsupported database URL '{}': use postgres://... or sqlite://path",
            redact(url)
        );
    }
    open_sqlite(&args.db).await
}

async fn open_sqlite(path: &std::path::Path) -> anyhow::Result<(Arc<dyn SessionService>, String)> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        tokio::fs::create_dir_all(parent)
            .await
            .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    }
    let service = SqliteSessionService::open(path)
        .await
        .with_context(|| format!("cannot open the SQLite session store {}", path.display()))?;
    Ok((Arc::new(service), format!("sessions in {}", path.display())))
}

/// The URL without its password, for messages. The user information ends at the last `@` before
/// the path (a password may itself hold `@`), and the query, which may carry a password too, is
/// left out.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => format!("{scheme}://{authority}{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://adk:secret@127.0.0.1/adk"),
            "postgres://adk:***@127.0.0.1/adk"
        );
        assert_eq!(
            redact("postgres://127.0.0.1/adk"),
            "postgres://127.0.0.1/adk"
        );
        // Review finding 20: a password holding `@` leaked its end.
        assert_eq!(
            redact("postgres://adk:p@ss:w@rd@db.example:5432/adk?password=again"),
            "postgres://adk:***@db.example:5432/adk"
        );
    }
}
