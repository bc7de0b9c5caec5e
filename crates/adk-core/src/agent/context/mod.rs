//! The contexts an agent run sees: [`InvocationContext`] (everything about one invocation),
//! [`ReadonlyContext`] (what instruction providers may read) and [`CallbackContext`] (what callbacks
//! may read and change), with the [`RunConfig`] and [`Services`] an invocation runs with.
//!
//! An invocation starts with a user message and ends with a final response; it can span several
//! agent runs (transfers, workflow children), each seeing a context derived from the first one that
//! shares the session, the services and the invocation-wide flags.

mod builder;
mod callback;
pub(crate) mod control;
mod invocation;
mod readonly;
mod run_config;
mod services;

pub use builder::InvocationContextBuilder;
pub use callback::CallbackContext;
pub use invocation::{AgentProgress, InvocationContext};
pub use readonly::ReadonlyContext;
pub use run_config::{DEFAULT_MAX_REPEATED_TOOL_CALLS, DEFAULT_MAX_TOOL_RESULT_BYTES, RunConfig};
pub use services::Services;

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::control::InvocationControl as _;
    use super::*;
    use crate::{
        Agent, AgentTree, ErrorKind, Event, EventStream, InvocationId, Session, SessionKey,
    };
    use serde_json::json;

    struct Named(&'static str, Vec<Arc<dyn Agent>>);

    impl Agent for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn sub_agents(&self) -> &[Arc<dyn Agent>] {
            &self.1
        }
        fn run(self: Arc<Self>, _: InvocationContext) -> EventStream {
            Box::pin(futures::stream::empty())
        }
    }

    fn tree() -> (Arc<dyn Agent>, Arc<dyn Agent>) {
        let leaf: Arc<dyn Agent> = Arc::new(Named("leaf", vec![]));
        let child: Arc<dyn Agent> = Arc::new(Named("child", vec![leaf]));
        (Arc::new(Named("root", vec![child.clone()])), child)
    }

    fn context() -> InvocationContext {
        let mut session = Session::new(SessionKey::new("app", "u", "s"));
        session.state.insert("user:name".into(), json!("Ada"));
        InvocationContext::builder(tree().0, session)
            .build()
            .unwrap()
    }

    #[test]
    fn sub_agent_contexts_extend_the_branch_and_share_flags() {
        let root = context();
        let (_, child) = tree();
        let child_ctx = root.sub_agent_context(child.clone());
        assert_eq!(child_ctx.branch(), Some("child"));
        let leaf = child.sub_agents()[0].clone();
        let leaf_ctx = child_ctx.sub_agent_context(leaf);
        assert_eq!(leaf_ctx.branch(), Some("child.leaf"));
        assert_eq!(leaf_ctx.new_event().branch.as_deref(), Some("child.leaf"));
        assert_eq!(root.with_agent(child).branch(), None);
        leaf_ctx.end_invocation();
        assert!(root.is_ended());
    }

    #[test]
    fn llm_call_limit_is_enforced() {
        let ctx = InvocationContext::builder(tree().0, Session::default())
            .run_config(RunConfig::default().with_max_llm_calls(2))
            .build()
            .unwrap();
        assert!(ctx.count_llm_call().is_ok());
        assert!(ctx.count_llm_call().is_ok());
        let error = ctx.count_llm_call().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::LlmCallsLimitExceeded);
    }

    #[test]
    fn a_nested_invocation_shares_the_budget_seams_and_cancellation() {
        let parent = InvocationContext::builder(tree().0, Session::default())
            .run_config(RunConfig::default().with_max_llm_calls(2))
            .build()
            .unwrap();
        let nested = InvocationContext::builder(tree().0, Session::default())
            .nested_in(&parent)
            .build()
            .unwrap();
        assert!(parent.count_llm_call().is_ok());
        assert!(nested.count_llm_call().is_ok());
        assert_eq!(
            parent.count_llm_call().unwrap_err().kind(),
            ErrorKind::LlmCallsLimitExceeded
        );
        assert!(std::ptr::addr_eq(parent.ids(), nested.ids()));
        assert!(std::ptr::addr_eq(parent.clock(), nested.clock()));
        parent.cancellation().cancel();
        assert!(nested.cancellation().is_cancelled());
    }

    #[test]
    fn a_resumable_invocation_pauses_after_long_running_calls() {
        use crate::{Content, FunctionCall, Part, Role};
        let mut event = Event::new(InvocationId::from("e-1"), "root").with_content(Content::new(
            Role::Model,
            [Part::function_call(
                FunctionCall::new("approve", json!({})).with_id("c1"),
            )],
        ));
        event.long_running_tool_ids = Some(vec!["c1".into()]);
        assert!(!context().should_pause_after(&event));
        let ctx = InvocationContext::builder(tree().0, Session::default())
            .resumable(true)
            .build()
            .unwrap();
        assert!(ctx.should_pause_after(&event));
        event.long_running_tool_ids = Some(vec![]);
        assert!(!ctx.should_pause_after(&event));
        ctx.pause();
        assert!(ctx.is_paused() && !ctx.is_ended());
    }

    #[test]
    fn callback_state_sees_its_own_changes() {
        let ctx = CallbackContext::new(context());
        assert_eq!(ctx.state("user:name"), Some(json!("Ada")));
        ctx.set_state("user:name", "Grace").unwrap();
        assert_eq!(ctx.state("user:name"), Some(json!("Grace")));
        assert_eq!(
            ReadonlyContext::new(ctx.invocation().clone()).state("user:name"),
            Some(json!("Ada"))
        );
        assert_eq!(ctx.take_actions().state_delta["user:name"], json!("Grace"));
    }

    #[test]
    fn progress_of_sub_agents_is_reset() {
        let ctx = context();
        ctx.set_agent_progress("leaf", Some(AgentProgress::Running(json!({"i": 1}))));
        ctx.set_agent_progress("child", Some(AgentProgress::Ended));
        ctx.reset_sub_agent_progress("root");
        assert_eq!(ctx.agent_progress("leaf"), None);
        assert_eq!(ctx.agent_progress("child"), None);
    }

    #[test]
    fn invocation_data_is_shared_by_derived_contexts() {
        #[derive(Default)]
        struct Counter(AtomicU32);
        let ctx = context();
        let (_, child) = tree();
        ctx.invocation_data::<Counter>()
            .0
            .fetch_add(1, Ordering::Relaxed);
        let seen = ctx.sub_agent_context(child).invocation_data::<Counter>();
        assert_eq!(seen.0.load(Ordering::Relaxed), 1);

        let seeded = InvocationContext::builder(tree().0, Session::default())
            .invocation_data(Counter(AtomicU32::new(7)))
            .build()
            .unwrap();
        assert_eq!(
            seeded
                .invocation_data::<Counter>()
                .0
                .load(Ordering::Relaxed),
            7
        );
    }

    #[tokio::test]
    async fn artifacts_without_a_service_are_a_config_error() {
        let ctx = CallbackContext::new(context());
        let error = ctx.list_artifacts().await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Config);
    }

    #[test]
    fn an_agent_outside_the_tree_is_rejected() {
        let (root, _) = tree();
        let stranger: Arc<dyn Agent> = Arc::new(Named("stranger", vec![]));
        let error = InvocationContext::builder(stranger, Session::default())
            .agent_tree(AgentTree::new(root).unwrap())
            .build()
            .unwrap_err();
        assert!(error.message().contains("'stranger'"));
    }
}
