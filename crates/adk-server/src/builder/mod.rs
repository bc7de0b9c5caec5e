//! adk-web's Builder tab on the server side: which apps it may edit (apps described in YAML, each
//! a folder holding `root_agent.yaml`) and where it may create new ones, and how a saved app is
//! checked and rebuilt — all given by whoever builds the apps, as the server itself knows no
//! config format.
//!
//! [`YamlApps`] is handed to [`ServerBuilder::yaml_apps`](crate::ServerBuilder::yaml_apps); the
//! routes live in `routes/builder.rs` and the file work in `files.rs`.

pub(crate) mod files;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError};

use adk_runner::Runner;
use futures::future::BoxFuture;

/// A boxed error of whoever rebuilds an app.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What the Builder tab's save needs from whoever builds the apps: checking a config before it is
/// written, and building an app anew from its saved files.
///
/// `adk web` implements it with the YAML loader of `adk-config`; a program serving its own YAML
/// apps does the same with its `AgentLoader`.
pub trait AgentFiles: Send + Sync {
    /// Checks the agent config whose root file is `root` (its sub-agent files beside it) as the
    /// loader reads it — YAML syntax, the keys and types of the config schema, agent classes,
    /// tool names, sub-agent files — building and starting nothing. A problem names its file,
    /// and the line and column when it is at one place.
    fn check<'a>(&'a self, root: &'a Path) -> BoxFuture<'a, Result<(), FileProblem>>;

    /// Builds app `app` anew from its files in `dir` (the folder holding `root_agent.yaml`); the
    /// server serves the runner from the next request on.
    fn reload<'a>(&'a self, app: &'a str, dir: &'a Path)
    -> BoxFuture<'a, Result<Runner, BoxError>>;
}

/// A problem in an agent config file: the file, the line and column (from 1) when the problem is
/// at one place, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileProblem {
    /// The file the problem is in.
    pub file: PathBuf,
    /// The line and column, both from 1.
    pub location: Option<(usize, usize)>,
    /// What was wrong, and what is allowed instead.
    pub message: String,
}

impl FileProblem {
    /// A problem in `file`, at `location` (line, column) when known.
    pub fn new(
        file: impl Into<PathBuf>,
        location: Option<(usize, usize)>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            location,
            message: message.into(),
        }
    }
}

/// `file:line:column: message`, the form editors and terminals link to.
impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FileProblem {}

/// The apps adk-web's Builder tab may read and save: each app's name and the folder holding its
/// `root_agent.yaml`, the folder new apps may be created in, and the [`AgentFiles`] that checks
/// and rebuilds them.
///
/// ```
/// use std::path::Path;
/// use adk_server::builder::{AgentFiles, BoxError, FileProblem, YamlApps};
/// use futures::future::BoxFuture;
///
/// /// Accepts every config and rebuilds nothing (a real one calls the YAML loader).
/// struct Lenient;
///
/// impl AgentFiles for Lenient {
///     fn check<'a>(&'a self, _root: &'a Path) -> BoxFuture<'a, Result<(), FileProblem>> {
///         Box::pin(async { Ok(()) })
///     }
///     fn reload<'a>(&'a self, app: &'a str, _dir: &'a Path) -> BoxFuture<'a, Result<adk_runner::Runner, BoxError>> {
///         Box::pin(async move { Err(format!("{app} cannot be rebuilt here").into()) })
///     }
/// }
///
/// let apps = YamlApps::new(Lenient).app("weather", "agents/weather").new_apps_in("agents");
/// assert!(apps.dir("weather").is_some());
/// assert!(apps.dir("other").is_none());
/// ```
#[derive(Clone)]
pub struct YamlApps {
    /// The apps' folders; the Builder tab adds the apps it creates.
    dirs: Arc<std::sync::RwLock<BTreeMap<String, PathBuf>>>,
    /// Where the Builder tab may create apps, each a folder named after it.
    new_apps: Option<PathBuf>,
    files: Arc<dyn AgentFiles>,
    /// One save or draft change at a time, so two tabs saving at once cannot interleave files.
    writing: Arc<tokio::sync::Mutex<()>>,
}

impl YamlApps {
    /// No apps yet, checked and rebuilt by `files`.
    pub fn new(files: impl AgentFiles + 'static) -> Self {
        Self {
            dirs: Arc::default(),
            new_apps: None,
            files: Arc::new(files),
            writing: Arc::default(),
        }
    }

    /// Lets the Builder tab edit app `name`, whose `root_agent.yaml` is in `dir`.
    #[must_use]
    pub fn app(self, name: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.add(name.into(), dir.into());
        self
    }

    /// Lets the Builder tab create apps in `dir` (adk-web's "Create new agent"): an app is a
    /// folder `dir/<name>` holding its `root_agent.yaml`, served from its first save on, as the
    /// agents folder `adk web` serves holds them. A new app's name is an identifier (ASCII
    /// letters, digits and `_`, not starting with a digit), as adk-web asks for.
    #[must_use]
    pub fn new_apps_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.new_apps = Some(dir.into());
        self
    }

    /// The folder of app `name`, when the Builder tab may edit it.
    pub fn dir(&self, name: &str) -> Option<PathBuf> {
        self.dirs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// The folder app `name` would be created in: only with [`new_apps_in`](Self::new_apps_in),
    /// for an identifier that is no app yet, and when the folder is not a link and holds no
    /// `root_agent.yaml` of an app this server did not load.
    pub(crate) fn new_app_dir(&self, name: &str) -> Option<PathBuf> {
        let root = self.new_apps.as_ref()?;
        let mut chars = name.chars();
        let identifier = chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier || self.dir(name).is_some() {
            return None;
        }
        let dir = root.join(name);
        let linked =
            std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.file_type().is_symlink());
        (!linked && !dir.join(files::ROOT_FILE).exists()).then_some(dir)
    }

    /// The apps the Builder tab began creating and has not saved yet: the folders of
    /// [`new_apps_in`](Self::new_apps_in) holding only a draft, in no particular order. adk-web
    /// reloads the page onto a new app's draft and opens the builder only when the app list names
    /// it (ADK Python 2.13 lists only folders that hold an agent, so there the dialog ends on
    /// "Agent not found"). Reads the folder: call it on a blocking thread.
    pub(crate) fn drafted_new_apps(&self) -> Vec<String> {
        let Some(root) = &self.new_apps else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(root) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| {
                self.new_app_dir(name)
                    .is_some_and(|dir| files::has_draft_root(&dir, name))
            })
            .collect()
    }

    /// Records app `name`, created by the Builder tab, in `dir`.
    pub(crate) fn add(&self, name: String, dir: PathBuf) {
        self.dirs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name, dir);
    }

    pub(crate) fn files(&self) -> &dyn AgentFiles {
        self.files.as_ref()
    }

    pub(crate) async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writing.lock().await
    }
}

impl fmt::Debug for YamlApps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("YamlApps")
            .field("dirs", &self.dirs)
            .field("new_apps", &self.new_apps)
            .finish_non_exhaustive()
    }
}
