//! Toolset filters and the close hook.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use adk_core::{ReadonlyContext, Result};
use adk_tool::{FunctionTool, Tool, ToolFilter, Toolset, ToolsetExt};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use support::{Readonly as _, TestToolContext};

#[derive(Deserialize, JsonSchema)]
struct Path {
    path: String,
}

fn file_tool(name: &str) -> Arc<dyn Tool> {
    Arc::new(FunctionTool::new(
        name,
        "A file tool.",
        |_ctx, args: Path| async move { Ok::<_, String>(args.path) },
    ))
}

/// A toolset of fixed tools that records whether it was closed.
#[derive(Default)]
struct Files {
    closed: AtomicBool,
}

#[async_trait]
impl Toolset for Files {
    fn name(&self) -> &str {
        "files"
    }

    async fn tools(&self, _ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> {
        Ok(["read_file", "write_file", "delete_file"]
            .into_iter()
            .map(file_tool)
            .collect())
    }

    async fn close(&self) -> Result<()> {
        self.closed.store(true, Ordering::SeqCst);
        Ok(())
    }
}

fn names(tools: &[Arc<dyn Tool>]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name()).collect()
}

#[tokio::test]
async fn a_name_filter_keeps_the_named_tools() {
    let ctx = TestToolContext::plain().readonly();
    let toolset = Files::default().with_tool_names(["read_file", "delete_file", "missing"]);
    assert_eq!(toolset.name(), "files");
    let tools = toolset.tools(&ctx).await.unwrap();
    assert_eq!(names(&tools), ["read_file", "delete_file"]);
}

#[tokio::test]
async fn a_predicate_filter_sees_the_tool_and_the_invocation() {
    let ctx = TestToolContext::plain().readonly();
    let toolset = Files::default().with_tool_filter(|tool, ctx| {
        ctx.agent_name() == "assistant" && !tool.name().starts_with("delete")
    });
    let tools = toolset.tools(&ctx).await.unwrap();
    assert_eq!(names(&tools), ["read_file", "write_file"]);
}

#[tokio::test]
async fn closing_a_filtered_toolset_closes_the_inner_one() {
    let toolset = Files::default().with_tool_names(["read_file"]);
    toolset.close().await.unwrap();
    assert!(toolset.inner().closed.load(Ordering::SeqCst));
}

#[test]
fn filters_can_be_named_in_debug_output() {
    assert_eq!(format!("{:?}", ToolFilter::names(["a"])), r#"Names(["a"])"#);
    assert_eq!(
        format!("{:?}", ToolFilter::predicate(|_, _| true)),
        "Predicate(..)"
    );
}
