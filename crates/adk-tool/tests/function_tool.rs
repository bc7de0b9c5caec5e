//! [`FunctionTool`] end to end: declarations, validation, panics, timeouts, confirmation.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use adk_core::{ErrorKind, LlmRequest};
use adk_tool::{
    CONFIRMATION_REJECTED_MESSAGE, CONFIRMATION_REQUIRED_MESSAGE, FunctionTool, Tool, ToolContext,
    ToolError, ToolErrorKind,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{Setup, TestToolContext};

/// Where to look.
#[derive(Debug, Deserialize, JsonSchema)]
struct Place {
    /// The city name.
    city: String,
    /// The country code, two letters.
    #[schemars(length(min = 2, max = 2))]
    country: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    place: Place,
    unit: Unit,
    /// Days ahead.
    #[schemars(range(max = 7))]
    days: u8,
}

#[derive(Serialize, JsonSchema)]
struct Weather {
    summary: String,
}

async fn get_weather(_ctx: ToolContext, args: WeatherArgs) -> Result<Weather, String> {
    if args.place.city == "Atlantis" {
        return Err("Atlantis is under water; pick a city on land".to_owned());
    }
    let unit = match args.unit {
        Unit::Celsius => "C",
        Unit::Fahrenheit => "F",
    };
    let country = args.place.country.unwrap_or_default();
    Ok(Weather {
        summary: format!(
            "{}{country} in {} days: 21{unit}",
            args.place.city, args.days
        ),
    })
}

fn weather_tool() -> FunctionTool {
    FunctionTool::new("get_weather", "Returns the weather", get_weather)
}

/// The `ToolError` behind a tool's `adk_core::Error`.
fn tool_error(error: &adk_core::Error) -> &ToolError {
    error
        .downcast_source::<ToolError>()
        .expect("a tool error keeps its ToolError as the source")
}

#[tokio::test]
async fn a_plain_async_fn_becomes_a_working_tool() {
    let tool = weather_tool();
    let args = json!({"place": {"city": "Paris"}, "unit": "celsius", "days": 2});
    let result = tool.run(TestToolContext::plain(), args).await.unwrap();
    assert_eq!(result, json!({"summary": "Paris in 2 days: 21C"}));
}

#[tokio::test]
async fn the_declaration_carries_the_generated_schema() {
    let tool = FunctionTool::builder("get_weather", "Returns the weather", get_weather)
        .output_schema::<Weather>()
        .build();
    insta::assert_json_snapshot!(tool.declaration().unwrap());
    let mut request = LlmRequest::default();
    tool.process_request(&TestToolContext::plain(), &mut request)
        .await
        .unwrap();
    assert_eq!(request.tools.len(), 1);
    assert_eq!(request.tools[0].name, "get_weather");
}

#[tokio::test]
async fn invalid_arguments_name_every_field() {
    let args = json!({
        "place": {"country": "France"},
        "unit": "kelvin",
        "days": 9,
        "extra": true
    });
    let error = weather_tool()
        .run(TestToolContext::plain(), args)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::InvalidArguments);
    insta::assert_snapshot!(error.message());
}

#[tokio::test]
async fn wrong_types_and_missing_arguments_are_reported() {
    let error = weather_tool()
        .run(
            TestToolContext::plain(),
            json!({"place": "Paris", "days": "two"}),
        )
        .await
        .unwrap_err();
    insta::assert_snapshot!(error.message());
}

#[tokio::test]
async fn invalid_arguments_never_reach_the_function() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let tool = FunctionTool::new("count", "Counts calls.", move |_ctx, args: WeatherArgs| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(args.days)
        }
    });
    let _ = tool
        .run(TestToolContext::plain(), json!({}))
        .await
        .unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_function_error_is_the_message() {
    let args = json!({"place": {"city": "Atlantis"}, "unit": "celsius", "days": 1});
    let error = weather_tool()
        .run(TestToolContext::plain(), args)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Tool);
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::Failed);
    assert_eq!(
        error.message(),
        "Atlantis is under water; pick a city on land"
    );
}

#[derive(Deserialize, JsonSchema)]
struct Divide {
    numerator: i64,
    denominator: i64,
}

async fn divide(_ctx: ToolContext, args: Divide) -> Result<i64, String> {
    Ok(args.numerator / args.denominator)
}

#[tokio::test]
async fn a_panic_becomes_an_error_and_the_tool_stays_usable() {
    let tool = FunctionTool::new("divide", "Divides integers.", divide);
    let error = tool
        .run(
            TestToolContext::plain(),
            json!({"numerator": 1, "denominator": 0}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Tool);
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::Panicked);
    assert_eq!(
        error.message(),
        "The tool `divide` failed unexpectedly (it panicked: attempt to divide by zero)."
    );
    let again = tool
        .run(
            TestToolContext::plain(),
            json!({"numerator": 6, "denominator": 3}),
        )
        .await
        .unwrap();
    assert_eq!(again, json!(2));
}

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    millis: u64,
}

async fn sleep(_ctx: ToolContext, args: Sleep) -> Result<&'static str, String> {
    tokio::time::sleep(Duration::from_millis(args.millis)).await;
    Ok("awake")
}

// Paused time: the runtime jumps to the next timer, so the timeout fires first, without waiting.
#[tokio::test(start_paused = true)]
async fn a_slow_call_times_out() {
    let tool = FunctionTool::builder("sleep", "Sleeps.", sleep)
        .timeout(Duration::from_millis(50))
        .build();
    assert_eq!(tool.timeout(), Some(Duration::from_millis(50)));
    let error = tool
        .run(TestToolContext::plain(), json!({"millis": 10_000}))
        .await
        .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::Timeout);
    assert_eq!(
        error.message(),
        "The tool `sleep` did not finish within 50ms and was stopped. It may succeed with a \
         smaller request or later."
    );
    let fast = tool
        .run(TestToolContext::plain(), json!({"millis": 1}))
        .await
        .unwrap();
    assert_eq!(fast, json!("awake"));
}

#[derive(Deserialize, JsonSchema)]
struct Transfer {
    amount: u32,
}

fn transfer_tool(calls: Arc<AtomicUsize>) -> FunctionTool {
    FunctionTool::builder("transfer", "Sends money.", move |_ctx, args: Transfer| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(json!({"sent": args.amount}))
        }
    })
    .require_confirmation_if(|args| args.amount >= 100)
    .build()
}

#[tokio::test]
async fn a_call_needing_confirmation_asks_for_it_first() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = transfer_tool(calls.clone());
    let ctx = TestToolContext::plain();
    let response = tool.run(ctx.clone(), json!({"amount": 500})).await.unwrap();
    assert_eq!(response, json!({"error": CONFIRMATION_REQUIRED_MESSAGE}));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let actions = ctx.take_actions();
    let requested = &actions.requested_tool_confirmations["call-1"];
    assert!(!requested.confirmed);
    assert_eq!(
        requested.hint,
        "Approve or reject the call to the tool `transfer` by answering with a function \
         response that carries a ToolConfirmation."
    );
}

#[tokio::test]
async fn the_predicate_decides_which_calls_need_confirmation() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = transfer_tool(calls.clone());
    let ctx = TestToolContext::plain();
    let response = tool.run(ctx.clone(), json!({"amount": 5})).await.unwrap();
    assert_eq!(response, json!({"sent": 5}));
    assert!(ctx.take_actions().requested_tool_confirmations.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_confirmed_call_runs_and_a_rejected_one_does_not() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tool = transfer_tool(calls.clone());
    let confirmed = Setup::default().confirmation(true).build();
    let response = tool.run(confirmed, json!({"amount": 500})).await.unwrap();
    assert_eq!(response, json!({"sent": 500}));
    let rejected = Setup::default().confirmation(false).build();
    let response = tool
        .run(rejected.clone(), json!({"amount": 500}))
        .await
        .unwrap();
    assert_eq!(response, json!({"error": CONFIRMATION_REJECTED_MESSAGE}));
    assert!(
        rejected
            .take_actions()
            .requested_tool_confirmations
            .is_empty()
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn require_confirmation_true_gates_every_call() {
    let tool = FunctionTool::builder("delete", "Deletes.", |_ctx, _args: Transfer| async {
        Ok::<_, String>(Value::Null)
    })
    .require_confirmation(true)
    .build();
    let response = tool
        .run(TestToolContext::plain(), json!({"amount": 1}))
        .await
        .unwrap();
    assert_eq!(response, json!({"error": CONFIRMATION_REQUIRED_MESSAGE}));
}

#[tokio::test]
async fn a_long_running_tool_says_so_in_its_description() {
    let tool = FunctionTool::builder("sleep", "Sleeps.", sleep)
        .long_running(true)
        .build();
    assert!(tool.is_long_running());
    insta::assert_snapshot!(tool.declaration().unwrap().description);
}

#[tokio::test]
async fn tools_without_arguments_declare_no_parameters() {
    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}
    let tool = FunctionTool::new("now", "Tells the time.", |_ctx, _args: Nothing| async {
        Ok::<_, String>("noon")
    });
    assert_eq!(tool.declaration().unwrap().parameters, None);
    let result = tool
        .run(TestToolContext::plain(), Value::Null)
        .await
        .unwrap();
    assert_eq!(result, json!("noon"));
}

#[tokio::test]
async fn tools_see_and_change_state() {
    #[derive(Deserialize, JsonSchema)]
    struct Remember {
        fact: String,
    }
    async fn remember(ctx: ToolContext, args: Remember) -> adk_core::Result<Value> {
        ctx.set_state("user:fact", args.fact)?;
        Ok(json!({"stored": ctx.state("user:fact")}))
    }
    let tool = FunctionTool::new("remember", "Remembers a fact.", remember);
    let ctx = TestToolContext::plain();
    let result = tool.run(ctx.clone(), json!({"fact": "tea"})).await.unwrap();
    assert_eq!(result, json!({"stored": "tea"}));
    assert_eq!(ctx.take_actions().state_delta["user:fact"], json!("tea"));
}
