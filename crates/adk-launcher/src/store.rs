//! Where sessions, artifacts, memory and credentials are kept, chosen by URL as ADK Python's
//! `--session_service_uri` does: a SQLite file by default, PostgreSQL, or memory; artifacts in a
//! folder or in memory; memory in memory, SQLite or PostgreSQL; credentials (encrypted) in
//! SQLite, PostgreSQL or memory. Memory searches by meaning too when `--memory-embedder` names an
//! embedder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use adk_core::{Agent, ArtifactService, CredentialService, MemoryService, SessionService};
use adk_runner::{Runner, Summarizer};
use adk_session::{
    CREDENTIAL_KEY_ENV, CredentialCipher, FileArtifactService, InMemoryArtifactService,
    InMemoryCredentialService, InMemoryMemoryService, InMemorySessionService,
    PostgresCredentialService, PostgresMemoryService, PostgresSettings, SemanticSearch,
    SqliteCredentialService, SqliteMemoryService, SqliteSessionService,
};

use crate::args::ServiceArgs;
use crate::embedder::{self, MemoryEmbedder};
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

/// The services a launcher command runs its agents with, and a line saying where they keep things.
pub(crate) struct Services {
    pub(crate) sessions: Arc<dyn SessionService>,
    pub(crate) artifacts: Arc<dyn ArtifactService>,
    pub(crate) memory: Arc<dyn MemoryService>,
    /// The tokens tools sign users in for (OAuth2): encrypted in SQLite or PostgreSQL, or in
    /// memory (a user signs in again after a restart).
    pub(crate) credentials: Arc<dyn CredentialService>,
    pub(crate) description: String,
    /// How to reach PostgreSQL when sessions are there: a server takes its session locks there.
    pub(crate) postgres: Option<PostgresSettings>,
    /// The embedder memory searches with, kept for the local server it may hold.
    _embedder: Option<MemoryEmbedder>,
}

impl Services {
    /// A runner for `agent` as the app `app_name` on these services; `auto_create` creates
    /// sessions on first use (the terminal does; the API server, like ADK's, does not), and
    /// `overflow` answers a context overflow by compaction. With `resume_interrupted` (the
    /// servers), the next message to a session first continues an invocation a crash cut off.
    pub(crate) fn runner(
        &self,
        app_name: &str,
        agent: Arc<dyn Agent>,
        auto_create: bool,
        resume_interrupted: bool,
        overflow: Option<Arc<dyn Summarizer>>,
    ) -> Result<Runner, LaunchError> {
        let builder = Runner::builder(app_name, agent, self.sessions.clone())
            .artifact_service(self.artifacts.clone())
            .memory_service(self.memory.clone())
            .credential_service(self.credentials.clone())
            .auto_create_session(auto_create)
            .resume_interrupted(resume_interrupted);
        match overflow {
            Some(summarizer) => builder.overflow_compaction(summarizer),
            None => builder,
        }
        .build()
        .context(LaunchErrorKind::Agent, || {
            format!("cannot set up a runner for {app_name}")
        })
    }
}

/// The size of a server's session pool: `explicit` when given, else one connection for each of
/// the `runs` it allows at once, and never fewer than [`adk_session::DEFAULT_POOL_SIZE`]. Each
/// run appends its events and writes its effect journal through the pool; with fewer connections
/// than runs, a run's write could wait out the pool's acquire timeout behind the others under load.
pub(crate) fn session_pool_size(explicit: Option<u32>, runs: usize) -> u32 {
    explicit.unwrap_or_else(|| {
        u32::try_from(runs)
            .unwrap_or(u32::MAX)
            .max(adk_session::DEFAULT_POOL_SIZE)
    })
}

/// Opens the services the flags ask for.
pub(crate) async fn open(args: &ServiceArgs) -> Result<Services, LaunchError> {
    open_with_env(args, &|name| {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    })
    .await
}

/// Opens the services the flags ask for, reading the embedder's keys and URLs through `env`.
async fn open_with_env(
    args: &ServiceArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Services, LaunchError> {
    let embedder = embedder::open(&args.memory_embedder, env).await?;
    let semantic = embedder.as_ref().map(|embedder| embedder.semantic.clone());
    let searched_by = embedder
        .as_ref()
        .map(|embedder| format!(", {}", embedder.description))
        .unwrap_or_default();
    if args.in_memory {
        return Ok(Services {
            sessions: Arc::new(InMemorySessionService::new()),
            artifacts: Arc::new(InMemoryArtifactService::new()),
            memory: in_memory(semantic),
            credentials: Arc::new(InMemoryCredentialService::new()),
            description: format!("sessions in memory (not stored){searched_by}"),
            postgres: None,
            _embedder: embedder,
        });
    }
    let postgres = args
        .session_service_uri
        .as_deref()
        .filter(|uri| is_postgres(uri))
        .map(|uri| {
            let settings = PostgresSettings::new(uri)
                .max_connections(args.db_pool_size.unwrap_or(adk_session::DEFAULT_POOL_SIZE));
            match args.db_statement_timeout {
                Some(timeout) => settings.statement_timeout(timeout),
                None => settings,
            }
        });
    let (sessions, description) = match (&postgres, &args.session_service_uri) {
        (Some(settings), Some(uri)) => open_postgres(settings, uri).await?,
        (_, Some(uri)) => open_sessions(uri).await?,
        (_, None) => open_sqlite(&args.session_db).await?,
    };
    let session_db = match &args.session_service_uri {
        Some(uri) => SqlDatabase::parse(uri),
        None => Some(SqlDatabase::Sqlite(args.session_db.clone())),
    };
    let (credentials, credentials_description) =
        open_credentials(args.credential_service_uri.as_deref(), session_db).await?;
    let artifacts = match &args.artifact_service_uri {
        Some(uri) => open_artifacts(uri)?,
        None => Arc::new(FileArtifactService::new(default_artifact_dir(args))) as _,
    };
    let memory = match &args.memory_service_uri {
        Some(uri) => open_memory(uri, semantic).await?,
        None => in_memory(semantic),
    };
    Ok(Services {
        sessions,
        artifacts,
        memory,
        credentials,
        description: format!("{description}, {credentials_description}{searched_by}"),
        postgres,
        _embedder: embedder,
    })
}

/// A SQL database a service can be kept in.
#[derive(Debug, Clone, PartialEq)]
enum SqlDatabase {
    Sqlite(PathBuf),
    Postgres(String),
}

impl SqlDatabase {
    /// The database `uri` names (`sqlite://path` or `postgres://...`); `None` for anything else.
    fn parse(uri: &str) -> Option<Self> {
        if is_postgres(uri) {
            return Some(Self::Postgres(uri.to_owned()));
        }
        uri.strip_prefix("sqlite://")
            .map(|path| Self::Sqlite(PathBuf::from(path)))
    }
}

/// The credential service `uri` names, or by default the sessions' SQL database when there is
/// one and `ADK_CREDENTIAL_KEY` is set (sealing needs the key), else memory; with a line saying
/// where credentials are kept.
async fn open_credentials(
    uri: Option<&str>,
    session_db: Option<SqlDatabase>,
) -> Result<(Arc<dyn CredentialService>, String), LaunchError> {
    let database = match uri {
        Some("memory://") => None,
        Some(uri) => Some(SqlDatabase::parse(uri).ok_or_else(|| {
            LaunchError::new(
                LaunchErrorKind::Usage,
                format!(
                    "unsupported credential service URI '{}': use sqlite://path, \
                     postgres://... or memory://",
                    redact(uri)
                ),
            )
        })?),
        None => session_db.filter(|_| std::env::var_os(CREDENTIAL_KEY_ENV).is_some()),
    };
    let Some(database) = database else {
        return Ok((
            Arc::new(InMemoryCredentialService::new()),
            "credentials in memory".to_owned(),
        ));
    };
    let cipher = CredentialCipher::from_env().context(LaunchErrorKind::Usage, || {
        "credentials are stored encrypted, which needs a key".to_owned()
    })?;
    match database {
        SqlDatabase::Sqlite(path) => {
            create_parent(&path).await?;
            let service = SqliteCredentialService::open(&path, cipher)
                .await
                .context(LaunchErrorKind::Storage, || {
                    format!("cannot open the SQLite credential store {}", path.display())
                })?;
            Ok((
                Arc::new(service),
                format!("credentials encrypted in {}", path.display()),
            ))
        }
        SqlDatabase::Postgres(url) => {
            let service = PostgresCredentialService::connect(&url, cipher)
                .await
                .context(LaunchErrorKind::Storage, || {
                    format!(
                        "cannot open the PostgreSQL credential store at {}",
                        redact(&url)
                    )
                })?;
            Ok((
                Arc::new(service),
                format!("credentials encrypted in {}", redact(&url)),
            ))
        }
    }
}

fn is_postgres(uri: &str) -> bool {
    uri.starts_with("postgres://") || uri.starts_with("postgresql://")
}

async fn open_postgres(
    settings: &PostgresSettings,
    uri: &str,
) -> Result<(Arc<dyn SessionService>, String), LaunchError> {
    let service = settings
        .connect_sessions()
        .await
        .context(LaunchErrorKind::Storage, || {
            format!(
                "cannot open the PostgreSQL session store at {}",
                redact(uri)
            )
        })?;
    Ok((Arc::new(service), format!("sessions in {}", redact(uri))))
}

/// `sqlite://path`, `postgres://...` (or `postgresql://`), or `memory://`.
async fn open_sessions(uri: &str) -> Result<(Arc<dyn SessionService>, String), LaunchError> {
    if is_postgres(uri) {
        return open_postgres(&PostgresSettings::new(uri), uri).await;
    }
    if let Some(path) = uri.strip_prefix("sqlite://") {
        return open_sqlite(path.as_ref()).await;
    }
    if uri == "memory://" {
        return Ok((
            Arc::new(InMemorySessionService::new()),
            "sessions in memory (not stored)".to_owned(),
        ));
    }
    Err(LaunchError::new(
        LaunchErrorKind::Usage,
        format!(
            "unsupported session service URI '{}': use sqlite://path, postgres://... or memory://",
            redact(uri)
        ),
    ))
}

async fn open_sqlite(path: &Path) -> Result<(Arc<dyn SessionService>, String), LaunchError> {
    create_parent(path).await?;
    let service = SqliteSessionService::open(path)
        .await
        .context(LaunchErrorKind::Storage, || {
            format!("cannot open the SQLite session store {}", path.display())
        })?;
    Ok((Arc::new(service), format!("sessions in {}", path.display())))
}

/// `file://dir` or `memory://`.
fn open_artifacts(uri: &str) -> Result<Arc<dyn ArtifactService>, LaunchError> {
    if let Some(dir) = uri.strip_prefix("file://") {
        return Ok(Arc::new(FileArtifactService::new(dir)));
    }
    if uri == "memory://" {
        return Ok(Arc::new(InMemoryArtifactService::new()));
    }
    Err(LaunchError::new(
        LaunchErrorKind::Usage,
        format!(
            "unsupported artifact service URI '{}': use file://dir or memory:// (cloud object \
             stores are reached through adk-session's ObjectStoreArtifactService in your own \
             code)",
            redact(uri)
        ),
    ))
}

/// Memory in memory, searching by meaning with `semantic` when given.
fn in_memory(semantic: Option<SemanticSearch>) -> Arc<dyn MemoryService> {
    let service = InMemoryMemoryService::new();
    Arc::new(match semantic {
        Some(semantic) => service.with_semantic_search(semantic),
        None => service,
    })
}

/// `memory://`, `sqlite://path` or `postgres://...`, searching by meaning with `semantic` when
/// given.
async fn open_memory(
    uri: &str,
    semantic: Option<SemanticSearch>,
) -> Result<Arc<dyn MemoryService>, LaunchError> {
    if let Some(path) = uri.strip_prefix("sqlite://") {
        let path = Path::new(path);
        create_parent(path).await?;
        let service = SqliteMemoryService::open(path)
            .await
            .context(LaunchErrorKind::Storage, || {
                format!("cannot open the SQLite memory store {}", path.display())
            })?;
        return Ok(Arc::new(match semantic {
            Some(semantic) => service.with_semantic_search(semantic),
            None => service,
        }));
    }
    if uri == "memory://" {
        return Ok(in_memory(semantic));
    }
    if is_postgres(uri) {
        let service = PostgresMemoryService::connect(uri)
            .await
            .context(LaunchErrorKind::Storage, || {
                format!("cannot open the PostgreSQL memory store at {}", redact(uri))
            })?;
        return Ok(Arc::new(match semantic {
            Some(semantic) => service.with_semantic_search(semantic),
            None => service,
        }));
    }
    Err(LaunchError::new(
        LaunchErrorKind::Usage,
        format!(
            "unsupported memory service URI '{}': use memory://, sqlite://path or postgres://...",
            redact(uri)
        ),
    ))
}

/// Artifacts go beside the SQLite session file (`.adk/artifacts` by default).
fn default_artifact_dir(args: &ServiceArgs) -> PathBuf {
    args.session_db
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .map_or_else(|| ".adk".into(), Path::to_path_buf)
        .join("artifacts")
}

async fn create_parent(path: &Path) -> Result<(), LaunchError> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        tokio::fs::create_dir_all(parent)
            .await
            .context(LaunchErrorKind::Io, || {
                format!("cannot create the folder {}", parent.display())
            })?;
    }
    Ok(())
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
    use crate::embedder::EmbedderSpec;

    /// A server's session pool holds one connection per run it allows at once, so that no run's
    /// write queues behind more runs than there are connections; the flag overrides it.
    #[test]
    fn the_session_pool_is_sized_from_the_run_limit() {
        assert_eq!(session_pool_size(None, 64), 64);
        assert_eq!(session_pool_size(None, 200), 200);
        assert_eq!(
            session_pool_size(None, 2),
            adk_session::DEFAULT_POOL_SIZE,
            "never fewer than the default"
        );
        assert_eq!(session_pool_size(Some(6), 64), 6, "the flag decides");
        assert_eq!(session_pool_size(None, usize::MAX), u32::MAX);
    }

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

    #[tokio::test]
    async fn unsupported_uris_name_what_is_supported() {
        let error = open_sessions("redis://localhost").await.err().unwrap();
        assert_eq!(error.kind(), LaunchErrorKind::Usage);
        assert!(
            error
                .to_string()
                .contains("sqlite://path, postgres://... or memory://")
        );
        let error = open_artifacts("s3://bucket").err().unwrap();
        assert!(error.to_string().contains("file://dir or memory://"));
        let error = open_memory("redis://x", None).await.err().unwrap();
        assert!(
            error
                .to_string()
                .contains("memory://, sqlite://path or postgres://...")
        );
        let error = open_credentials(Some("vault://secrets"), None)
            .await
            .err()
            .unwrap();
        assert_eq!(error.kind(), LaunchErrorKind::Usage);
        assert!(
            error
                .to_string()
                .contains("sqlite://path, postgres://... or memory://")
        );
    }

    #[tokio::test]
    async fn each_service_opens_from_its_uri() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = dir.path().join("nested/sessions.db");
        let memory = dir.path().join("memory.db");
        let args = ServiceArgs {
            in_memory: false,
            session_service_uri: Some(format!("sqlite://{}", sessions.display())),
            session_db: PathBuf::from("unused.db"),
            artifact_service_uri: Some(format!("file://{}", dir.path().join("files").display())),
            memory_service_uri: Some(format!("sqlite://{}", memory.display())),
            credential_service_uri: Some("memory://".to_owned()),
            db_pool_size: None,
            db_statement_timeout: None,
            memory_embedder: EmbedderSpec::None,
        };
        let services = open(&args).await.unwrap();
        assert!(sessions.exists());
        assert!(memory.exists());
        assert_eq!(
            services.description,
            format!("sessions in {}, credentials in memory", sessions.display())
        );
        let version = services
            .artifacts
            .save_artifact(
                &adk_core::SessionKey::new("app", "user", "s1"),
                "notes.txt",
                adk_core::Part::text("hello"),
                serde_json::Map::new(),
            )
            .await
            .unwrap();
        assert_eq!(version, 0);
        assert!(dir.path().join("files").exists());
    }

    /// `--memory-embedder openai:<model>` with `OPENAI_BASE_URL`: memory embeds what a session
    /// said and finds it by meaning, with no word in common, through the embedder's server.
    #[tokio::test]
    async fn memory_searches_by_meaning_with_the_embedder_named() {
        use adk_test::{MockResponse, MockServer};
        let vector = |vector: [f32; 2]| {
            MockResponse::json(
                200,
                &serde_json::json!({"data": [{"index": 0, "embedding": vector}], "model": "embed-small"}),
            )
        };
        let server = MockServer::start([vector([1.0, 0.0]), vector([0.9, 0.1])]).await;
        let base_url = format!("{}/v1", server.base_url());
        let dir = tempfile::tempdir().unwrap();
        let args = ServiceArgs {
            in_memory: false,
            session_service_uri: Some("memory://".to_owned()),
            session_db: PathBuf::from("unused.db"),
            artifact_service_uri: Some("memory://".to_owned()),
            memory_service_uri: Some(format!(
                "sqlite://{}",
                dir.path().join("memory.db").display()
            )),
            credential_service_uri: Some("memory://".to_owned()),
            db_pool_size: None,
            db_statement_timeout: None,
            memory_embedder: "openai:embed-small".parse().unwrap(),
        };
        let env = |name: &str| (name == "OPENAI_BASE_URL").then(|| base_url.clone());
        let services = open_with_env(&args, &env).await.unwrap();
        assert!(
            services
                .description
                .ends_with("memory searched by meaning with embed-small"),
            "{}",
            services.description
        );
        let mut session = adk_core::Session::new(adk_core::SessionKey::new("app", "ada", "s1"));
        session.events.push(
            adk_core::Event::new(adk_core::InvocationId::from("e-1"), "user")
                .with_content(adk_core::Content::user("Is it cold in the Alps?")),
        );
        services
            .memory
            .add_session_to_memory(&session)
            .await
            .unwrap();
        let found = services
            .memory
            .search_memory("app", "ada", "mountain weather")
            .await
            .unwrap();
        assert_eq!(found.memories.len(), 1);
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "one call to add, one to search");
        assert_eq!(requests[0].path, "/v1/embeddings");
        assert_eq!(
            requests[1].json()["input"],
            serde_json::json!(["mountain weather"])
        );
    }
}
