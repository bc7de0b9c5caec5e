//! What reading one config file needs to know beyond its text: where the file is, which files
//! name it, which function tools the caller registered, and which agent names the tree already
//! has.
//!
//! serde offers no way to hand such knowledge to derived `Deserialize` impls, and the checks that
//! need it must run during deserialization so that serde_yaml gives their errors a line and a
//! column. So the loader installs a [`ReadContext`] for the current thread while serde_yaml reads
//! one file, and the config types consult it. Reading is synchronous and never crosses threads,
//! so a thread-local is enough; a guard removes it when reading ends, also on panic.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// What the config types may consult while one file is read.
#[derive(Debug, Clone)]
pub(crate) struct ReadContext {
    /// The file being read, as the user named it (for messages).
    pub(crate) shown_path: PathBuf,
    /// The same file with symbolic links and `..` resolved (to tell files apart).
    pub(crate) real_path: PathBuf,
    /// The files of the agents above this one, the root first, as shown and as resolved.
    pub(crate) ancestors: Vec<(PathBuf, PathBuf)>,
    /// The names of the function tools the caller registered.
    pub(crate) function_tools: Arc<BTreeSet<String>>,
    /// Whether MCP servers started as local processes may be declared.
    pub(crate) stdio_mcp_allowed: bool,
    /// The agent names of the tree read so far, each with the file that declares it.
    pub(crate) agent_names: Rc<RefCell<BTreeMap<String, PathBuf>>>,
}

impl ReadContext {
    /// The directory of the file being read, as resolved.
    pub(crate) fn real_dir(&self) -> &Path {
        self.real_path.parent().unwrap_or(Path::new("/"))
    }

    /// The directory of the file being read, as the user named it.
    pub(crate) fn shown_dir(&self) -> &Path {
        self.shown_path.parent().unwrap_or(Path::new(""))
    }
}

thread_local! {
    static CURRENT: RefCell<Option<ReadContext>> = const { RefCell::new(None) };
}

/// Runs `read` with `context` installed for this thread, and removes it afterwards.
pub(crate) fn reading<T>(context: ReadContext, read: impl FnOnce() -> T) -> T {
    /// Removes the context when reading ends, however it ends.
    struct Uninstall(Option<ReadContext>);

    impl Drop for Uninstall {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|current| *current.borrow_mut() = previous);
        }
    }

    let previous = CURRENT.with(|current| current.borrow_mut().replace(context));
    let _uninstall = Uninstall(previous);
    read()
}

/// Calls `check` with the context of the file being read.
///
/// # Errors
///
/// A message saying the config types are read only through the loader, when no file is being
/// read (the types are private to the crate, so that is a bug of this crate).
pub(crate) fn with<T>(check: impl FnOnce(&ReadContext) -> Result<T, String>) -> Result<T, String> {
    CURRENT.with(|current| match current.borrow().as_ref() {
        Some(context) => check(context),
        None => Err("agent configs are read only through adk_config::AgentLoader".to_owned()),
    })
}
