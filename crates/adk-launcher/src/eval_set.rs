//! `eval_set create` and `eval_set add_eval_case`: an app's eval sets made and filled from the
//! command line, as ADK Python's commands of the same names do, in the same files (adk-eval's
//! [`EvalStore`], which the server's eval routes use too).
//!
//! The app is a folder, named after it, whose sets are kept in it (ADK Python's layout, so its
//! `adk web` and `adk eval` read them), or one of the program's apps, whose sets are kept where
//! `adk web` keeps them without an agents folder; `--eval-storage-uri` names another folder. A
//! case added from a scenario is named as ADK names it, so adding a file twice, with either
//! tool, adds each scenario once.

use std::path::{Path, PathBuf};

use adk_core::{Clock as _, SystemClock};
use adk_eval::{ConversationScenarios, EvalCase, EvalStore, EvalStoreError, SessionInput};

use crate::apps::App;
use crate::args::{AddEvalCaseArgs, EvalSetArgs, EvalSetCommand, EvalSetTarget};
use crate::error::{Context as _, LaunchError, LaunchErrorKind};

/// Runs `eval_set`'s subcommand.
pub(crate) async fn eval_set(apps: &[App], args: EvalSetArgs) -> Result<(), LaunchError> {
    match args.command {
        EvalSetCommand::Create(target) => create(apps, &target).await,
        EvalSetCommand::AddEvalCase(args) => add_eval_cases(apps, args).await,
    }
}

/// `eval_set create`: the empty set, or an error when its id is not ADK's kind of id or the set
/// exists.
async fn create(apps: &[App], target: &EvalSetTarget) -> Result<(), LaunchError> {
    let (app, store) = resolve(apps, target)?;
    let id = &target.eval_set_id;
    store
        .create_set(&app, id, now())
        .await
        .map_err(|error| store_error(error, || format!("cannot create eval set '{id}'")))?;
    println!("Eval set '{id}' created for app '{app}'.");
    Ok(())
}

/// `eval_set add_eval_case`: one case per scenario, starting in the session input's session.
/// Both files are read before the set is touched; each case is written as it is added.
async fn add_eval_cases(apps: &[App], args: AddEvalCaseArgs) -> Result<(), LaunchError> {
    let (app, store) = resolve(apps, &args.target)?;
    let set = &args.target.eval_set_id;
    let session_input = SessionInput::load(&args.session_input_file)
        .await
        .context(LaunchErrorKind::Usage, || {
            "cannot read the session input".to_owned()
        })?;
    let scenarios = ConversationScenarios::load(&args.scenarios_file)
        .await
        .context(LaunchErrorKind::Usage, || {
            "cannot read the conversation scenarios".to_owned()
        })?;
    if scenarios.scenarios.is_empty() {
        eprintln!(
            "adk: {} holds no scenarios; no case was added",
            args.scenarios_file.display()
        );
    }
    for scenario in scenarios.scenarios {
        let id = scenario.case_id();
        let mut case = EvalCase::simulated(&id, scenario).with_session_input(session_input.clone());
        case.creation_timestamp = now();
        let added = store
            .add_case_if_new(&app, set, case)
            .await
            .map_err(|error| {
                store_error(error, || format!("cannot add eval case '{id}' to '{set}'"))
            })?;
        if added {
            println!("Eval case '{id}' added to eval set '{set}'.");
        } else {
            println!("Eval case '{id}' already exists in eval set '{set}', skipped.");
        }
    }
    Ok(())
}

/// The app's name and the store its sets are kept in.
fn resolve(apps: &[App], target: &EvalSetTarget) -> Result<(String, EvalStore), LaunchError> {
    let (app, default_root) = app_and_folder(apps, &target.agent)?;
    let root = match &target.eval_storage_uri {
        Some(uri) => storage_folder(uri)?,
        None => default_root,
    };
    Ok((app, EvalStore::new(root)))
}

/// The app `agent` names and the folder its sets are kept in by default: a folder's name and
/// its parent (so the sets land in the folder itself), or a program app's name and the server's
/// default folder.
fn app_and_folder(apps: &[App], agent: &str) -> Result<(String, PathBuf), LaunchError> {
    let path = Path::new(agent);
    if path.is_dir() {
        let dir = path.canonicalize().context(LaunchErrorKind::Io, || {
            format!("cannot resolve the folder {agent}")
        })?;
        let name = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .ok_or_else(|| {
                LaunchError::new(
                    LaunchErrorKind::Usage,
                    format!("{agent} names no app: give the app's own folder"),
                )
            })?;
        let parent = dir.parent().map_or_else(|| dir.clone(), Path::to_path_buf);
        return Ok((name, parent));
    }
    match apps.iter().find(|app| app.name == agent) {
        Some(app) => Ok((
            app.name.clone(),
            PathBuf::from(adk_server::DEFAULT_EVAL_STORAGE),
        )),
        None => {
            let names: Vec<&str> = apps.iter().map(|app| app.name.as_str()).collect();
            Err(LaunchError::new(
                LaunchErrorKind::Usage,
                format!(
                    "'{agent}' is neither a folder nor one of this program's apps ({})",
                    names.join(", ")
                ),
            ))
        }
    }
}

/// The folder `--eval-storage-uri` names: a path or a `file://` URL. Eval sets are files, so a
/// cloud bucket's URL is refused by name.
pub(crate) fn storage_folder(uri: &str) -> Result<PathBuf, LaunchError> {
    if let Some(path) = uri.strip_prefix("file://") {
        return Ok(path.into());
    }
    if uri.contains("://") {
        return Err(LaunchError::new(
            LaunchErrorKind::Usage,
            format!(
                "--eval-storage-uri {uri}: eval sets are kept in a folder; give its path or a file:// URL"
            ),
        ));
    }
    Ok(uri.into())
}

/// A store error as a launch error: a wrong id or a missing set is the command line's mistake,
/// a file that cannot be read or written is not.
fn store_error(error: EvalStoreError, message: impl FnOnce() -> String) -> LaunchError {
    let kind = match error {
        EvalStoreError::Io { .. } => LaunchErrorKind::Io,
        _ => LaunchErrorKind::Usage,
    };
    LaunchError::with_source(kind, message(), error)
}

/// Now, in seconds since the Unix epoch, as eval files stamp their sets and cases.
fn now() -> f64 {
    SystemClock.now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_is_a_folder_or_a_file_url() {
        assert_eq!(storage_folder("evals").unwrap(), PathBuf::from("evals"));
        assert_eq!(
            storage_folder("file:///srv/evals").unwrap(),
            PathBuf::from("/srv/evals")
        );
        let error = storage_folder("gs://bucket/evals").unwrap_err();
        assert_eq!(error.kind(), LaunchErrorKind::Usage);
        assert!(error.to_string().contains("file:// URL"), "{error}");
    }

    #[test]
    fn a_folder_is_an_app_named_after_it_with_its_sets_inside() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("weather");
        std::fs::create_dir(&agent).unwrap();
        let (name, root) = app_and_folder(&[], agent.to_str().unwrap()).unwrap();
        assert_eq!(name, "weather");
        assert_eq!(root, dir.path().canonicalize().unwrap());
    }

    #[test]
    fn an_unknown_app_names_the_programs_apps() {
        let error = app_and_folder(&[], "no-such-app-or-folder").unwrap_err();
        assert_eq!(error.kind(), LaunchErrorKind::Usage);
        assert!(error.to_string().contains("neither a folder"), "{error}");
    }
}
