//! Plugins: the order of every hook, short-circuits, and the built-in plugins.

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use adk_core::{
    Agent, CallbackContext, Content, Error, ErrorKind, Event, InvocationContext, LlmRequest,
    LlmResponse, Result,
};
use adk_flow::Plugin;
use adk_runner::plugins::{LoggingPlugin, ReflectAndRetryPlugin};
use adk_test::{ClosureTool, ScriptedModel, render_events};
use adk_tool::{Tool, ToolContext};
use async_trait::async_trait;
use expect_test::{Expect, expect};
use parking_lot::Mutex;
use serde_json::{Value, json};
use support::{agent, check, run, runner, stored};

type Log = Arc<Mutex<Vec<String>>>;

/// Writes each hook it sees to a shared log; at the hooks named in `answer_at` it returns a value
/// instead of passing.
struct Recorder {
    name: &'static str,
    log: Log,
    answer_at: HashSet<&'static str>,
}

impl Recorder {
    fn new(name: &'static str, log: &Log) -> Self {
        Self {
            name,
            log: log.clone(),
            answer_at: HashSet::new(),
        }
    }

    fn answering_at(mut self, hook: &'static str) -> Self {
        self.answer_at.insert(hook);
        self
    }

    /// Logs `hook` (with `detail`) and tells whether to answer there.
    fn saw(&self, hook: &'static str, detail: &str) -> bool {
        let answers = self.answer_at.contains(hook);
        let mark = if answers { " -> answers" } else { "" };
        self.log
            .lock()
            .push(format!("{}.{hook}({detail}){mark}", self.name));
        answers
    }
}

#[async_trait]
impl Plugin for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    async fn on_user_message(
        &self,
        _ctx: &InvocationContext,
        message: &Content,
    ) -> Result<Option<Content>> {
        let text = message.text().unwrap_or_default();
        Ok(self
            .saw("on_user_message", &text)
            .then(|| Content::user(format!("{text} (edited by {})", self.name))))
    }

    async fn before_run(&self, _ctx: &InvocationContext) -> Result<Option<Content>> {
        Ok(self
            .saw("before_run", "")
            .then(|| Content::model("answered before the run")))
    }

    async fn on_event(&self, _ctx: &InvocationContext, event: &Event) -> Result<Option<Event>> {
        let rendered = render_events(std::slice::from_ref(event));
        Ok(self.saw("on_event", rendered.trim()).then(|| {
            let mut replaced = event.clone();
            replaced.response.content = Some(Content::model("replaced by a plugin"));
            replaced
        }))
    }

    async fn after_run(&self, _ctx: &InvocationContext) -> Result<()> {
        self.saw("after_run", "");
        Ok(())
    }

    async fn on_run_error(&self, _ctx: &InvocationContext, error: &Error) -> Result<()> {
        self.saw("on_run_error", error.kind().as_str());
        Ok(())
    }

    async fn before_agent(
        &self,
        agent: &dyn Agent,
        _ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        Ok(self
            .saw("before_agent", agent.name())
            .then(|| Content::model("the agent was skipped")))
    }

    async fn after_agent(
        &self,
        agent: &dyn Agent,
        _ctx: &CallbackContext,
    ) -> Result<Option<Content>> {
        Ok(self
            .saw("after_agent", agent.name())
            .then(|| Content::model("added after the agent")))
    }

    async fn on_agent_error(
        &self,
        agent: &dyn Agent,
        _ctx: &CallbackContext,
        error: &Error,
    ) -> Result<()> {
        self.saw(
            "on_agent_error",
            &format!("{} {}", agent.name(), error.kind()),
        );
        Ok(())
    }

    async fn before_model(
        &self,
        _ctx: &CallbackContext,
        request: &mut LlmRequest,
    ) -> Result<Option<LlmResponse>> {
        Ok(self
            .saw(
                "before_model",
                &format!("{} contents", request.contents.len()),
            )
            .then(|| LlmResponse::new(Content::model("answered instead of the model"))))
    }

    async fn after_model(
        &self,
        _ctx: &CallbackContext,
        response: &LlmResponse,
    ) -> Result<Option<LlmResponse>> {
        let text = response
            .content
            .as_ref()
            .and_then(Content::text)
            .unwrap_or_default();
        Ok(self
            .saw("after_model", &text)
            .then(|| LlmResponse::new(Content::model("rewritten after the model"))))
    }

    async fn on_model_error(
        &self,
        _ctx: &CallbackContext,
        _request: &LlmRequest,
        error: &Error,
    ) -> Result<Option<LlmResponse>> {
        Ok(self
            .saw("on_model_error", error.message())
            .then(|| LlmResponse::new(Content::model("recovered from the model error"))))
    }

    async fn before_tool(
        &self,
        tool: &dyn Tool,
        args: &mut Value,
        _ctx: &ToolContext,
    ) -> Result<Option<Value>> {
        Ok(self
            .saw("before_tool", &format!("{} {args}", tool.name()))
            .then(|| json!({"answered": "by a plugin"})))
    }

    async fn after_tool(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        result: &Value,
    ) -> Result<Option<Value>> {
        Ok(self
            .saw("after_tool", &format!("{} {result}", tool.name()))
            .then(|| json!({"rewritten": true})))
    }

    async fn on_tool_error(
        &self,
        tool: &dyn Tool,
        _args: &Value,
        _ctx: &ToolContext,
        error: &Error,
    ) -> Result<Option<Value>> {
        Ok(self
            .saw(
                "on_tool_error",
                &format!("{} {}", tool.name(), error.message()),
            )
            .then(|| json!({"recovered": true})))
    }

    async fn close(&self) -> Result<()> {
        self.saw("close", "");
        Ok(())
    }
}

/// An agent that calls `ping` (which fails when told to) and then answers, with callbacks that log
/// after the plugins.
fn pinger(model: &ScriptedModel, log: &Log) -> Arc<dyn Agent> {
    let (before_model, before_tool) = (log.clone(), log.clone());
    Arc::new(
        agent("pinger", model)
            .tool(ClosureTool::shared("ping", |_, args| {
                if args["fail"] == json!(true) {
                    return Err(Error::new(ErrorKind::Tool, "ping failed"));
                }
                Ok(json!({"pong": true}))
            }))
            .before_model_callback(move |_, _| {
                before_model.lock().push("callback.before_model".into());
                Ok(None)
            })
            .before_tool_callback(move |_, _, _| {
                before_tool.lock().push("callback.before_tool".into());
                Ok(None)
            })
            .build()
            .unwrap(),
    )
}

/// Runs `pinger` on `model` with the plugins `first` and `second`, and checks the events and the
/// hooks' log.
async fn check_hooks(
    model: ScriptedModel,
    first: impl FnOnce(Recorder) -> Recorder,
    second: impl FnOnce(Recorder) -> Recorder,
    events: Expect,
    hooks: Expect,
) {
    let log = Log::default();
    let runner = runner(pinger(&model, &log))
        .plugin(first(Recorder::new("first", &log)))
        .plugin(second(Recorder::new("second", &log)))
        .build()
        .unwrap();
    check(&run(&runner, "ping").await, events);
    runner.close().await.unwrap();
    hooks.assert_eq(&(log.lock().join("\n") + "\n"));
}

fn unchanged(recorder: Recorder) -> Recorder {
    recorder
}

#[tokio::test]
async fn every_hook_runs_in_plugin_order_before_the_agents_callbacks() {
    let model = ScriptedModel::new("m")
        .then_call("ping", json!({}))
        .then_text("pong");
    check_hooks(
        model,
        unchanged,
        unchanged,
        expect![[r#"
            pinger: call ping {}
            pinger: response ping {"pong":true}
            pinger: "pong"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents)
            second.before_model(1 contents)
            callback.before_model
            first.after_model()
            second.after_model()
            first.on_event(pinger: call ping {})
            second.on_event(pinger: call ping {})
            first.before_tool(ping {})
            second.before_tool(ping {})
            callback.before_tool
            first.after_tool(ping {"pong":true})
            second.after_tool(ping {"pong":true})
            first.on_event(pinger: response ping {"pong":true})
            second.on_event(pinger: response ping {"pong":true})
            first.before_model(3 contents)
            second.before_model(3 contents)
            callback.before_model
            first.after_model(pong)
            second.after_model(pong)
            first.on_event(pinger: "pong")
            second.on_event(pinger: "pong")
            first.after_agent(pinger)
            second.after_agent(pinger)
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_replaced_user_message_is_the_one_stored_and_later_plugins_do_not_see_it() {
    let model = ScriptedModel::new("m").then_text("ok");
    let log = Log::default();
    let runner = runner(pinger(&model, &log))
        .plugin(Recorder::new("first", &log).answering_at("on_user_message"))
        .plugin(Recorder::new("second", &log))
        .build()
        .unwrap();
    run(&runner, "ping").await;
    assert_eq!(
        model.requests()[0].contents[0].text().as_deref(),
        Some("ping (edited by first)")
    );
    expect![[r#"
        user: "ping (edited by first)"
        pinger: "ok"
    "#]]
    .assert_eq(&render_events(&stored(&runner).await.events));
    assert!(
        !log.lock()
            .iter()
            .any(|line| line == "second.on_user_message(ping)")
    );
}

#[tokio::test]
async fn before_run_can_answer_without_running_the_agent() {
    check_hooks(
        ScriptedModel::new("m"),
        |first| first.answering_at("before_run"),
        unchanged,
        expect![[r#"
            pinger: "answered before the run"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run() -> answers
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn the_first_plugin_that_answers_a_model_call_skips_the_rest_and_the_model() {
    check_hooks(
        ScriptedModel::new("m"),
        |first| first.answering_at("before_model"),
        unchanged,
        expect![[r#"
            pinger: "answered instead of the model"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents) -> answers
            first.on_event(pinger: "answered instead of the model")
            second.on_event(pinger: "answered instead of the model")
            first.after_agent(pinger)
            second.after_agent(pinger)
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn plugins_short_circuit_agents_tools_and_events() {
    let model = ScriptedModel::new("m")
        .then_call("ping", json!({}))
        .then_text("pong");
    check_hooks(
        model,
        |first| {
            first
                .answering_at("before_tool")
                .answering_at("after_agent")
        },
        |second| second.answering_at("on_event"),
        expect![[r#"
            pinger: "replaced by a plugin"
            pinger: "replaced by a plugin"
            pinger: "replaced by a plugin"
            pinger: "replaced by a plugin"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents)
            second.before_model(1 contents)
            callback.before_model
            first.after_model()
            second.after_model()
            first.on_event(pinger: call ping {})
            second.on_event(pinger: call ping {}) -> answers
            first.before_tool(ping {}) -> answers
            first.after_tool(ping {"answered":"by a plugin"})
            second.after_tool(ping {"answered":"by a plugin"})
            first.on_event(pinger: response ping {"answered":"by a plugin"})
            second.on_event(pinger: response ping {"answered":"by a plugin"}) -> answers
            first.before_model(3 contents)
            second.before_model(3 contents)
            callback.before_model
            first.after_model(pong)
            second.after_model(pong)
            first.on_event(pinger: "pong")
            second.on_event(pinger: "pong") -> answers
            first.after_agent(pinger) -> answers
            first.on_event(pinger: "added after the agent")
            second.on_event(pinger: "added after the agent") -> answers
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn model_and_tool_errors_reach_the_plugins_which_may_recover() {
    let model = ScriptedModel::new("m")
        .then_call("ping", json!({"fail": true}))
        .then_fail("overloaded");
    check_hooks(
        model,
        |first| first.answering_at("on_model_error"),
        |second| second.answering_at("on_tool_error"),
        expect![[r#"
            pinger: call ping {"fail":true}
            pinger: response ping {"recovered":true}
            pinger: "recovered from the model error"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents)
            second.before_model(1 contents)
            callback.before_model
            first.after_model()
            second.after_model()
            first.on_event(pinger: call ping {"fail":true})
            second.on_event(pinger: call ping {"fail":true})
            first.before_tool(ping {"fail":true})
            second.before_tool(ping {"fail":true})
            callback.before_tool
            first.on_tool_error(ping ping failed)
            second.on_tool_error(ping ping failed) -> answers
            first.after_tool(ping {"recovered":true})
            second.after_tool(ping {"recovered":true})
            first.on_event(pinger: response ping {"recovered":true})
            second.on_event(pinger: response ping {"recovered":true})
            first.before_model(3 contents)
            second.before_model(3 contents)
            callback.before_model
            first.on_model_error(overloaded) -> answers
            first.after_model(recovered from the model error)
            second.after_model(recovered from the model error)
            first.on_event(pinger: "recovered from the model error")
            second.on_event(pinger: "recovered from the model error")
            first.after_agent(pinger)
            second.after_agent(pinger)
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn a_failed_run_reaches_on_run_error() {
    let model = ScriptedModel::new("m").then_fail("overloaded");
    check_hooks(
        model,
        unchanged,
        unchanged,
        expect![[r#"
            error: model: overloaded
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents)
            second.before_model(1 contents)
            callback.before_model
            first.on_model_error(overloaded)
            second.on_model_error(overloaded)
            first.on_agent_error(pinger model)
            second.on_agent_error(pinger model)
            first.on_run_error(model)
            second.on_run_error(model)
            first.close()
            second.close()
        "#]],
    )
    .await;
}

#[tokio::test]
async fn reflect_and_retry_turns_a_tool_error_into_guidance_for_the_model() {
    let failures = Arc::new(AtomicUsize::new(0));
    let seen = failures.clone();
    let model = ScriptedModel::new("m")
        .then_call("lookup", json!({"id": "x"}))
        .then_call("lookup", json!({"id": 7}))
        .then_text("Found it.");
    let searcher = agent("searcher", &model)
        .tool(ClosureTool::shared("lookup", move |_, args| {
            if !args["id"].is_number() {
                seen.fetch_add(1, Ordering::SeqCst);
                return Err(Error::new(ErrorKind::Tool, "id must be a number"));
            }
            Ok(json!({"item": "widget"}))
        }))
        .build()
        .unwrap();
    let runner = runner(Arc::new(searcher))
        .plugin(LoggingPlugin::new())
        .plugin(ReflectAndRetryPlugin::new().max_retries(2))
        .build()
        .unwrap();
    check(
        &run(&runner, "find x").await,
        expect![[r#"
            searcher: call lookup {"id":"x"}
            searcher: response lookup {"error_details":"id must be a number","error_type":"tool","reflection_guidance":"The call to `lookup` with arguments {\"id\":\"x\"} failed: id must be a number. Reflect on why: check the arguments against the tool's description and schema, and whether another tool fits better. Then call again with corrected arguments, or answer without the tool. 2 attempt(s) left.","response_type":"ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN","retry_count":1}
            searcher: call lookup {"id":7}
            searcher: response lookup {"item":"widget"}
            searcher: "Found it."
        "#]],
    );
    assert_eq!(failures.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn reflect_and_retry_gives_up_past_its_retry_cap() {
    let model = ScriptedModel::new("m")
        .then_call("lookup", json!({}))
        .then_call("lookup", json!({}))
        .then_text("never reached");
    let searcher = agent("searcher", &model)
        .tool(ClosureTool::shared("lookup", |_, _| {
            Err(Error::new(ErrorKind::Tool, "the index is down"))
        }))
        .build()
        .unwrap();
    let runner = runner(Arc::new(searcher))
        .plugin(ReflectAndRetryPlugin::new().max_retries(1))
        .build()
        .unwrap();
    check(
        &run(&runner, "find").await,
        expect![[r#"
            searcher: call lookup {}
            searcher: response lookup {"error_details":"the index is down","error_type":"tool","reflection_guidance":"The call to `lookup` with arguments {} failed: the index is down. Reflect on why: check the arguments against the tool's description and schema, and whether another tool fits better. Then call again with corrected arguments, or answer without the tool. 1 attempt(s) left.","response_type":"ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN","retry_count":1}
            searcher: call lookup {}
            searcher: response lookup {"error":"tool 'lookup' failed 2 times in this invocation, more than the 1 retries allowed; last error: the index is down"}
            error: tool: tool 'lookup' failed 2 times in this invocation, more than the 1 retries allowed; last error: the index is down
        "#]],
    );
}

#[tokio::test]
async fn plugin_names_must_be_unique() {
    let model = ScriptedModel::new("m");
    let log = Log::default();
    let error = runner(pinger(&model, &log))
        .plugin(Recorder::new("first", &log))
        .plugin(Recorder::new("first", &log))
        .build()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Config);
}

#[tokio::test]
async fn before_agent_can_skip_the_agent_and_after_model_can_rewrite_its_answer() {
    check_hooks(
        ScriptedModel::new("m"),
        |first| first.answering_at("before_agent"),
        unchanged,
        expect![[r#"
            pinger: "the agent was skipped"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger) -> answers
            first.on_event(pinger: "the agent was skipped")
            second.on_event(pinger: "the agent was skipped")
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
    check_hooks(
        ScriptedModel::new("m").then_text("original"),
        unchanged,
        |second| second.answering_at("after_model"),
        expect![[r#"
            pinger: "rewritten after the model"
        "#]],
        expect![[r#"
            first.on_user_message(ping)
            second.on_user_message(ping)
            first.before_run()
            second.before_run()
            first.before_agent(pinger)
            second.before_agent(pinger)
            first.before_model(1 contents)
            second.before_model(1 contents)
            callback.before_model
            first.after_model(original)
            second.after_model(original) -> answers
            first.on_event(pinger: "rewritten after the model")
            second.on_event(pinger: "rewritten after the model")
            first.after_agent(pinger)
            second.after_agent(pinger)
            first.after_run()
            second.after_run()
            first.close()
            second.close()
        "#]],
    )
    .await;
}
