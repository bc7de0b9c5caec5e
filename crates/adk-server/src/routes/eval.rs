//! The eval routes of ADK Python's dev server, which adk-web's Evals tab calls: eval sets (list,
//! create, delete), their cases (add the current session as one, list, get, update, delete),
//! running a set with chosen metrics and thresholds, the results (list, get), and the metrics a
//! run can score. Each route is served under the paths ADK answers to (its older `eval_sets`
//! spellings, which the UI still calls, and the newer `eval-sets` ones), with ADK's bodies and
//! status codes.

use adk_core::{GetSessionRequest, SessionKey};
use adk_eval::{Criterion, EvalCase, EvalConfig, EvalSetResult, EvalStoreError, SessionInput};
use adk_gate::Caller;
use axum::Json;
use axum::extract::Path;
use http::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::AppState;
use crate::error::{ApiError, ApiResult};
use crate::eval::RunEvalError;
use crate::eval::wire::to_api;
use crate::extract::JsonBody;
use crate::names::check_name;
use crate::state::ServerState;

impl From<EvalStoreError> for ApiError {
    fn from(error: EvalStoreError) -> Self {
        match error {
            EvalStoreError::NotFound(message) => ApiError::not_found(message),
            EvalStoreError::Invalid(message) => ApiError::bad_request(message),
            error => {
                tracing::error!(%error, "the eval store failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "eval_store",
                    error.to_string(),
                )
            }
        }
    }
}

/// The eval store, after checking the app exists and the ids are plain names.
fn evals<'a>(
    state: &'a ServerState,
    app: &str,
    ids: &[(&str, &str)],
) -> ApiResult<&'a crate::eval::Evals> {
    state.app(app)?;
    for (what, id) in ids {
        check_name(what, id)?;
    }
    Ok(&state.evals)
}

/// `null`, what ADK answers when a route returns nothing.
fn nothing() -> Json<Value> {
    Json(Value::Null)
}

/// `GET /dev/apps/{app}/eval-sets`: `{"evalSetIds": [...]}`.
pub(super) async fn list_sets(state: AppState, Path(app): Path<String>) -> ApiResult<Json<Value>> {
    let ids = evals(&state, &app, &[])?.store.list_sets(&app).await?;
    Ok(Json(json!({ "evalSetIds": ids })))
}

/// `GET /dev/apps/{app}/eval_sets`: the ids, as a list.
pub(super) async fn list_sets_legacy(
    state: AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Vec<String>>> {
    Ok(Json(evals(&state, &app, &[])?.store.list_sets(&app).await?))
}

/// The body of `POST /dev/apps/{app}/eval-sets`: the set to create, of which only the id is
/// used (ADK creates it empty).
#[derive(Debug, Deserialize)]
pub(super) struct CreateSetBody {
    #[serde(alias = "evalSet")]
    eval_set: NewSet,
}

#[derive(Debug, Deserialize)]
struct NewSet {
    #[serde(alias = "evalSetId")]
    eval_set_id: String,
}

/// `POST /dev/apps/{app}/eval-sets`: creates an empty set and answers it (in the file's
/// snake_case, as ADK does).
pub(super) async fn create_set(
    state: AppState,
    Path(app): Path<String>,
    JsonBody(body): JsonBody<CreateSetBody>,
) -> ApiResult<Json<Value>> {
    let set = evals(&state, &app, &[])?
        .store
        .create_set(&app, &body.eval_set.eval_set_id, now())
        .await?;
    Ok(Json(serde_json::to_value(set).map_err(internal)?))
}

/// `POST /dev/apps/{app}/eval_sets/{set}`: creates an empty set; answers `null`.
pub(super) async fn create_set_legacy(
    state: AppState,
    Path((app, set)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    evals(&state, &app, &[])?
        .store
        .create_set(&app, &set, now())
        .await?;
    Ok(nothing())
}

/// `DELETE /dev/apps/{app}/eval-sets/{set}`: deletes a set (its results stay). adk-web's Evals
/// tab offers this; ADK Python 2.13 does not serve it.
pub(super) async fn delete_set(
    state: AppState,
    Path((app, set)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    evals(&state, &app, &[("eval set id", &set)])?
        .store
        .delete_set(&app, &set)
        .await?;
    Ok(nothing())
}

/// The body of `POST .../add_session`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AddSessionBody {
    #[serde(alias = "eval_id")]
    eval_id: String,
    #[serde(alias = "session_id")]
    session_id: String,
    #[serde(alias = "user_id")]
    user_id: String,
}

/// `POST /dev/apps/{app}/eval_sets/{set}/add_session` (and `eval-sets/{set}/add-session`): the
/// session becomes a case of the set, its invocations the conversation to replay. A caller may
/// add only the sessions of a user it acts for.
pub(super) async fn add_session(
    state: AppState,
    caller: Caller,
    Path((app, set)): Path<(String, String)>,
    JsonBody(body): JsonBody<AddSessionBody>,
) -> ApiResult<Json<Value>> {
    let evals = evals(&state, &app, &[("eval set id", &set)])?;
    check_name("user id", &body.user_id)?;
    check_name("session id", &body.session_id)?;
    if !caller.may_act_for(&body.user_id) {
        return Err(adk_gate::Forbidden.into());
    }
    let session = state
        .app(&app)?
        .session_service()
        .get_session(GetSessionRequest::new(SessionKey::new(
            &app,
            &body.user_id,
            body.session_id.as_str(),
        )))
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "session `{}` of user `{}` not found",
                body.session_id, body.user_id
            ))
        })?;
    let mut case = EvalCase::new(body.eval_id, adk_eval::session_invocations(&session.events))
        .with_session_input(SessionInput::new(&app, &body.user_id).with_state(Map::new()));
    case.creation_timestamp = now();
    evals.store.add_case(&app, &set, case).await?;
    Ok(nothing())
}

/// `GET /dev/apps/{app}/eval_sets/{set}/evals`: the case ids, sorted; 400 for a missing set,
/// as ADK answers.
pub(super) async fn list_cases(
    state: AppState,
    Path((app, set)): Path<(String, String)>,
) -> ApiResult<Json<Vec<String>>> {
    let evals = evals(&state, &app, &[("eval set id", &set)])?;
    let found = evals
        .store
        .get_set(&app, &set)
        .await?
        .ok_or_else(|| ApiError::bad_request(format!("no eval set `{set}` in app `{app}`")))?;
    let mut ids: Vec<String> = found
        .eval_cases
        .into_iter()
        .map(|case| case.eval_id)
        .collect();
    ids.sort();
    Ok(Json(ids))
}

/// `GET /dev/apps/{app}/eval_sets/{set}/evals/{case}` (and `eval-sets/{set}/eval-cases/{case}`):
/// the case, in camelCase.
pub(super) async fn get_case(
    state: AppState,
    Path((app, set, case)): Path<(String, String, String)>,
) -> ApiResult<Json<Value>> {
    let evals = evals(
        &state,
        &app,
        &[("eval set id", &set), ("eval case id", &case)],
    )?;
    let found = evals
        .store
        .get_set(&app, &set)
        .await?
        .and_then(|found| found.case(&case).cloned())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no eval case `{case}` in eval set `{set}` of app `{app}`"
            ))
        })?;
    Ok(Json(to_api(serde_json::to_value(found).map_err(internal)?)))
}

/// `PUT /dev/apps/{app}/eval_sets/{set}/evals/{case}` (and `eval-sets/.../eval-cases/...`):
/// replaces the case; the body's id, when given, must be the path's.
pub(super) async fn update_case(
    state: AppState,
    Path((app, set, case)): Path<(String, String, String)>,
    JsonBody(mut body): JsonBody<EvalCase>,
) -> ApiResult<Json<Value>> {
    let evals = evals(
        &state,
        &app,
        &[("eval set id", &set), ("eval case id", &case)],
    )?;
    if !body.eval_id.is_empty() && body.eval_id != case {
        return Err(ApiError::bad_request(format!(
            "the body's evalId `{}` is not the path's `{case}`",
            body.eval_id
        )));
    }
    body.eval_id = case;
    evals.store.update_case(&app, &set, body).await?;
    Ok(nothing())
}

/// `DELETE /dev/apps/{app}/eval_sets/{set}/evals/{case}` (and `eval-sets/.../eval-cases/...`).
pub(super) async fn delete_case(
    state: AppState,
    Path((app, set, case)): Path<(String, String, String)>,
) -> ApiResult<Json<Value>> {
    evals(
        &state,
        &app,
        &[("eval set id", &set), ("eval case id", &case)],
    )?
    .store
    .delete_case(&app, &set, &case)
    .await?;
    Ok(nothing())
}

/// The body of a run: the cases (all when none) and the metrics with their thresholds.
#[derive(Debug, Deserialize)]
pub(super) struct RunBody {
    #[serde(default, alias = "evalCaseIds")]
    eval_case_ids: Vec<String>,
    /// ADK's older name for `eval_case_ids`.
    #[serde(default, alias = "evalIds")]
    eval_ids: Vec<String>,
    #[serde(alias = "evalMetrics")]
    eval_metrics: Vec<MetricChoice>,
}

/// One metric of a run (ADK's `EvalMetric`): its name and its threshold, or a whole criterion.
#[derive(Debug, Deserialize)]
struct MetricChoice {
    #[serde(alias = "metricName")]
    metric_name: String,
    #[serde(default)]
    threshold: Option<f64>,
    #[serde(default)]
    criterion: Option<Criterion>,
}

impl RunBody {
    fn config(&self) -> ApiResult<EvalConfig> {
        let mut criteria = Vec::with_capacity(self.eval_metrics.len());
        for choice in &self.eval_metrics {
            let criterion = match (&choice.criterion, choice.threshold) {
                (Some(criterion), _) => criterion.clone(),
                (None, Some(threshold)) => Criterion::threshold(threshold),
                (None, None) => {
                    return Err(ApiError::bad_request(format!(
                        "metric `{}` needs a threshold or a criterion",
                        choice.metric_name
                    )));
                }
            };
            criteria.push((choice.metric_name.clone(), criterion));
        }
        Ok(EvalConfig::new(criteria))
    }
}

/// Runs the set and returns its result, saved among the app's results. The run takes a place
/// among the server's runs, as `/run` does.
async fn run_set(
    state: &ServerState,
    app: &str,
    set: &str,
    body: RunBody,
) -> ApiResult<EvalSetResult> {
    let evals = evals(state, app, &[("eval set id", set)])?;
    let config = body.config()?;
    let only = if body.eval_case_ids.is_empty() {
        body.eval_ids
    } else {
        body.eval_case_ids
    };
    let _slot = state.run_slot()?;
    let runner = state.app(app)?;
    evals
        .run(&runner, state.run_config.clone(), set, &only, config)
        .await
        .map_err(|error| match error {
            // ADK answers a missing set of a run with 400.
            RunEvalError::Store(EvalStoreError::NotFound(message)) => {
                ApiError::bad_request(message)
            }
            RunEvalError::Store(error) => error.into(),
            RunEvalError::Eval(error) => ApiError::bad_request(error.to_string()),
        })
}

/// Each case's result as a run answers it (ADK's `RunEvalResult`).
fn run_results(result: EvalSetResult) -> ApiResult<Vec<Value>> {
    result
        .eval_case_results
        .into_iter()
        .map(|case| {
            let mut wire = to_api(json!({
                "eval_set_file": case.eval_set_file.unwrap_or_else(|| case.eval_set_id.clone()),
                "eval_set_id": case.eval_set_id,
                "eval_id": case.eval_id,
                "final_eval_status": case.final_eval_status,
                "overall_eval_metric_results": case.overall_eval_metric_results,
                "eval_metric_result_per_invocation": case.eval_metric_result_per_invocation,
                "user_id": case.user_id.unwrap_or_default(),
                "session_id": case.session_id,
            }));
            // ADK's deprecated pairs of metric and result, always empty.
            wire["evalMetricResults"] = json!([]);
            Ok(wire)
        })
        .collect()
}

/// `POST /dev/apps/{app}/eval-sets/{set}/run`: `{"runEvalResults": [...]}`.
pub(super) async fn run(
    state: AppState,
    Path((app, set)): Path<(String, String)>,
    JsonBody(body): JsonBody<RunBody>,
) -> ApiResult<Json<Value>> {
    let result = run_set(&state, &app, &set, body).await?;
    Ok(Json(json!({ "runEvalResults": run_results(result)? })))
}

/// `POST /dev/apps/{app}/eval_sets/{set}/run_eval`: the results, as a list.
pub(super) async fn run_legacy(
    state: AppState,
    Path((app, set)): Path<(String, String)>,
    JsonBody(body): JsonBody<RunBody>,
) -> ApiResult<Json<Vec<Value>>> {
    let result = run_set(&state, &app, &set, body).await?;
    Ok(Json(run_results(result)?))
}

/// `GET /dev/apps/{app}/eval-results`: `{"evalResultIds": [...]}`.
pub(super) async fn list_results(
    state: AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Value>> {
    let ids = evals(&state, &app, &[])?.store.list_results(&app).await?;
    Ok(Json(json!({ "evalResultIds": ids })))
}

/// `GET /dev/apps/{app}/eval_results`: the ids, as a list.
pub(super) async fn list_results_legacy(
    state: AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Vec<String>>> {
    Ok(Json(
        evals(&state, &app, &[])?.store.list_results(&app).await?,
    ))
}

/// `GET /dev/apps/{app}/eval_results/{result}` (and `eval-results/{result}`): the result, in
/// camelCase.
pub(super) async fn get_result(
    state: AppState,
    Path((app, result)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let found = evals(&state, &app, &[("eval result id", &result)])?
        .store
        .get_result(&app, &result)
        .await?;
    Ok(Json(to_api(serde_json::to_value(found).map_err(internal)?)))
}

/// `GET /dev/apps/{app}/metrics-info`: `{"metricsInfo": [...]}`.
pub(super) async fn metrics_info(
    state: AppState,
    Path(app): Path<String>,
) -> ApiResult<Json<Value>> {
    let infos = evals(&state, &app, &[])?.metrics_info();
    Ok(Json(json!({ "metricsInfo": infos })))
}

fn internal(error: serde_json::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        format!("cannot write the answer as JSON: {error}"),
    )
}

/// Seconds since the Unix epoch, as ADK stamps sets and cases.
fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs_f64())
        .unwrap_or_default()
}
