//! The OpenAPI toolset against a real OpenAPI server (a FastAPI pet store on loopback, whose
//! generated document is the input), and against malformed documents.
#![cfg(feature = "openapi")]

mod support;

use std::sync::Arc;

use adk_core::ErrorKind;
use adk_test::pet_store::{API_KEY, BEARER_TOKEN, PetStore};
use adk_tool::openapi::{AuthHeaders, Credential, OpenApiSpec, OpenApiToolset, OperationInfo};
use adk_tool::{CONFIRMATION_REQUIRED_MESSAGE, ToolContext, ToolError, ToolErrorKind};
use serde_json::{Value, json};
use support::{Setup, TestToolContext};

async fn pet_store() -> PetStore {
    tokio::task::spawn_blocking(PetStore::start).await.unwrap()
}

async fn call(toolset: &OpenApiToolset, name: &str, args: Value) -> adk_core::Result<Value> {
    call_in(toolset, TestToolContext::plain(), name, args).await
}

async fn call_in(
    toolset: &OpenApiToolset,
    ctx: ToolContext,
    name: &str,
    args: Value,
) -> adk_core::Result<Value> {
    let tool = toolset
        .tool(name)
        .unwrap_or_else(|| panic!("no tool `{name}`"));
    tool.run(ctx, args).await
}

fn tool_error(error: &adk_core::Error) -> &ToolError {
    error
        .downcast_source::<ToolError>()
        .expect("a ToolError source")
}

#[tokio::test]
async fn a_fastapi_document_becomes_one_tool_per_operation_with_its_schemas() {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let toolset = OpenApiToolset::builder(spec).build().unwrap();
    assert_eq!(adk_tool::Toolset::name(&toolset), "Pet store");
    assert_eq!(
        toolset.tool_names().collect::<Vec<_>>(),
        [
            "list_pets",
            "create_pet",
            "show_pet_by_id",
            "delete_pet",
            "rename_pet"
        ]
    );
    let create = toolset.tool("create_pet").unwrap().declaration().unwrap();
    assert_eq!(create.description, "Adds a pet.");
    let parameters = create.parameters.unwrap();
    // The body's `$ref` to `NewPet` is resolved, the header parameter sits beside it.
    assert_eq!(parameters["required"], json!(["body"]));
    assert_eq!(
        parameters["properties"]["body"]["properties"]["name"]["description"],
        "The pet's name."
    );
    assert!(
        parameters["properties"]["x-request-id"].is_object(),
        "{parameters}"
    );
    assert!(!parameters.to_string().contains("$ref"));
    let list = toolset.tool("list_pets").unwrap().declaration().unwrap();
    let list = list.parameters.unwrap();
    assert_eq!(list["properties"]["limit"]["maximum"], 100);
    assert!(list.get("required").is_none(), "{list}");
}

#[tokio::test]
async fn calls_send_bodies_paths_queries_and_credentials_and_read_the_answers() {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let toolset = OpenApiToolset::builder(spec)
        .credential("APIKeyHeader", Credential::api_key(API_KEY))
        .credential("HTTPBearer", Credential::bearer(BEARER_TOKEN))
        .build()
        .unwrap();

    let rex = call(
        &toolset,
        "create_pet",
        json!({"body": {"name": "Rex", "tag": "dog"}}),
    )
    .await
    .unwrap();
    assert_eq!(rex, json!({"id": 1, "name": "Rex", "tag": "dog"}));
    call(
        &toolset,
        "create_pet",
        json!({"body": {"name": "Tom", "tag": "cat"}}),
    )
    .await
    .unwrap();
    call(
        &toolset,
        "create_pet",
        json!({"body": {"name": "Kiwi", "tag": "bird"}}),
    )
    .await
    .unwrap();
    // An array query parameter goes as repeated keys.
    let some = call(
        &toolset,
        "list_pets",
        json!({"tag": ["dog", "bird"], "limit": 5}),
    )
    .await
    .unwrap();
    let names: Vec<&str> = some
        .as_array()
        .unwrap()
        .iter()
        .map(|pet| pet["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Rex", "Kiwi"]);
    // A bearer-protected PATCH with path and query parameters.
    let renamed = call(
        &toolset,
        "rename_pet",
        json!({"pet_id": 2, "name": "Thomas"}),
    )
    .await
    .unwrap();
    assert_eq!(renamed["name"], "Thomas");
    // An API-key-protected DELETE answering 204 without a body.
    let deleted = call(&toolset, "delete_pet", json!({"pet_id": 1}))
        .await
        .unwrap();
    assert_eq!(deleted, Value::Null);
    let error = call(&toolset, "show_pet_by_id", json!({"pet_id": 1}))
        .await
        .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::HttpStatus);
    assert_eq!(
        error.message(),
        format!(
            "`show_pet_by_id` failed: GET {}/pets/1 answered 404 Not Found: {{\"detail\":\"no pet 1\"}}",
            store.url()
        )
    );
}

#[tokio::test]
async fn without_credentials_a_protected_operation_is_not_sent_and_a_wrong_key_is_the_servers_answer()
 {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let bare = OpenApiToolset::builder(spec.clone()).build().unwrap();
    call(&bare, "create_pet", json!({"body": {"name": "Rex"}}))
        .await
        .unwrap();
    let error = call(&bare, "delete_pet", json!({"pet_id": 1}))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("needs credentials for the security scheme `APIKeyHeader`"),
        "{}",
        error.message()
    );

    let wrong = OpenApiToolset::builder(spec)
        .credential("APIKeyHeader", Credential::api_key("not-the-key"))
        .build()
        .unwrap();
    let error = call(&wrong, "delete_pet", json!({"pet_id": 1}))
        .await
        .unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::HttpStatus);
    assert!(
        error.message().contains("401 Unauthorized"),
        "{}",
        error.message()
    );
    assert!(!error.message().contains("not-the-key"));
    // The pet is still there.
    assert_eq!(
        call(&bare, "show_pet_by_id", json!({"pet_id": 1}))
            .await
            .unwrap()["name"],
        "Rex"
    );
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_any_request_naming_each_field() {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let toolset = OpenApiToolset::builder(spec).build().unwrap();
    let error = call(&toolset, "create_pet", json!({"body": {"tag": 7}}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        error.message().contains("`body.tag`")
            && error.message().contains("\"name\" is a required property"),
        "{}",
        error.message()
    );
    let none = call(&toolset, "list_pets", json!({})).await.unwrap();
    assert_eq!(none, json!([]), "nothing was created");
}

#[tokio::test]
async fn writes_wait_for_confirmation_when_asked_and_reads_do_not() {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let toolset = OpenApiToolset::builder(spec)
        .operations(["createPet", "list_pets"])
        .require_confirmation_for_writes(true)
        .build()
        .unwrap();
    assert_eq!(
        toolset.tool_names().collect::<Vec<_>>(),
        ["list_pets", "create_pet"]
    );
    let ctx = TestToolContext::plain();
    let waiting = call_in(
        &toolset,
        ctx.clone(),
        "create_pet",
        json!({"body": {"name": "Rex"}}),
    )
    .await
    .unwrap();
    assert_eq!(waiting, json!({"error": CONFIRMATION_REQUIRED_MESSAGE}));
    assert!(ctx.update_actions(|actions| actions.requested_tool_confirmations.len()) == 1);
    assert_eq!(
        call(&toolset, "list_pets", json!({})).await.unwrap(),
        json!([])
    );
    let confirmed = Setup::default().confirmation(true).build();
    let created = call_in(
        &toolset,
        confirmed,
        "create_pet",
        json!({"body": {"name": "Rex"}}),
    )
    .await
    .unwrap();
    assert_eq!(created["id"], 1);
}

/// Signs the calls of `delete_pet` with the pet store's key, as an application would with a key
/// it looks up per user.
struct KeyForDeletes;

#[async_trait::async_trait]
impl AuthHeaders for KeyForDeletes {
    async fn headers(
        &self,
        _ctx: &ToolContext,
        operation: &OperationInfo,
    ) -> adk_core::Result<Vec<(String, String)>> {
        if operation
            .security_schemes
            .iter()
            .any(|scheme| scheme == "APIKeyHeader")
        {
            return Ok(vec![("X-API-Key".to_owned(), API_KEY.to_owned())]);
        }
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn auth_headers_sign_calls_in_place_of_credentials() {
    let store = pet_store().await;
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let toolset = OpenApiToolset::builder(spec)
        .operations(["create_pet", "delete_pet", "list_pets"])
        .auth_headers(Arc::new(KeyForDeletes))
        .build()
        .unwrap();
    call(&toolset, "create_pet", json!({"body": {"name": "Rex"}}))
        .await
        .unwrap();
    call(&toolset, "delete_pet", json!({"pet_id": 1}))
        .await
        .unwrap();
    assert_eq!(
        call(&toolset, "list_pets", json!({})).await.unwrap(),
        json!([])
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_request_error_naming_the_url_without_secrets() {
    let spec = OpenApiSpec::parse(
        r##"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "key"}}},
            "security": [{"key": []}],
            "paths": {"/ping": {"get": {"operationId": "ping"}}}}"##,
    )
    .unwrap();
    // Port 9 (discard) on loopback is closed on test machines.
    let toolset = OpenApiToolset::builder(spec)
        .base_url("http://127.0.0.1:9/api")
        .credential("key", Credential::api_key("s3cret"))
        .build()
        .unwrap();
    let error = call(&toolset, "ping", json!({})).await.unwrap_err();
    assert_eq!(tool_error(&error).kind(), ToolErrorKind::HttpRequest);
    assert!(
        error
            .message()
            .starts_with("`ping` failed: GET http://127.0.0.1:9/api/ping could not be completed"),
        "{}",
        error.message()
    );
    assert!(!error.message().contains("s3cret"));
}

#[test]
fn malformed_documents_are_refused_naming_the_place() {
    let cases = [
        (
            r##"openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets/{id}:
    get:
      parameters:
        - {name: id, in: body}
"##,
            r##"paths["/pets/{id}"].get.parameters[0].in"##,
            "`body` is not one of path, query, header or cookie",
        ),
        (
            r##"openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /trees:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Tree"}
components:
  schemas:
    Tree:
      type: object
      properties:
        children: {type: array, items: {$ref: "#/components/schemas/Tree"}}
"##,
            "#/components/schemas/Tree.properties.children.items.$ref",
            "cycle",
        ),
        (
            r##"openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      parameters: [{$ref: "#/components/parameters/Missing"}]
"##,
            r##"paths["/a"].get.parameters[0].$ref"##,
            "points to nothing",
        ),
        (
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get: [1]\n",
            r##"paths["/a"].get"##,
            "is not a mapping",
        ),
    ];
    for (document, place, message) in cases {
        let spec = OpenApiSpec::parse(document).unwrap();
        let error = OpenApiToolset::builder(spec)
            .base_url("http://127.0.0.1:1")
            .build()
            .unwrap_err();
        assert_eq!(error.location(), Some(place), "{error}");
        assert!(error.to_string().contains(message), "{error}");
    }
}

#[test]
fn the_filter_leaves_out_an_operation_the_toolset_would_refuse() {
    let spec = OpenApiSpec::parse(
        r##"openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /trees: {post: {operationId: addTree, requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Tree"}}}}}}
  /ping: {get: {operationId: ping}}
components:
  schemas:
    Tree: {type: object, properties: {children: {type: array, items: {$ref: "#/components/schemas/Tree"}}}}
"##,
    )
    .unwrap();
    let toolset = OpenApiToolset::builder(spec)
        .base_url("http://127.0.0.1:1")
        .operation_filter(|operation| operation.method == "GET")
        .build()
        .unwrap();
    assert_eq!(toolset.tool_names().collect::<Vec<_>>(), ["ping"]);
}

#[test]
fn credentials_must_fit_a_scheme_of_the_document() {
    let document = r##"{"openapi": "3.0.1", "info": {"title": "t", "version": "1"}, "paths": {},
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}}}"##;
    let spec = OpenApiSpec::parse(document).unwrap();
    let unknown = OpenApiToolset::builder(spec.clone())
        .base_url("http://127.0.0.1:1")
        .credential("key", Credential::api_key("k"))
        .build()
        .unwrap_err();
    assert_eq!(unknown.location(), Some("components.securitySchemes.key"));
    let wrong = OpenApiToolset::builder(spec)
        .base_url("http://127.0.0.1:1")
        .credential("token", Credential::basic("u", "p"))
        .build()
        .unwrap_err();
    assert!(
        wrong
            .to_string()
            .contains("is a bearer-token scheme, and the credential given for it is Basic"),
        "{wrong}"
    );
    assert!(!format!("{wrong:?}").contains("\"p\""));
}

#[test]
fn a_document_without_servers_given_as_text_needs_a_base_url() {
    let spec = OpenApiSpec::parse(
        r##"{"openapi": "3.0.1", "info": {"title": "t", "version": "1"}, "paths": {}}"##,
    )
    .unwrap();
    let error = OpenApiToolset::builder(spec).build().unwrap_err();
    assert!(
        error.to_string().contains("give one with `base_url`"),
        "{error}"
    );
}

#[tokio::test]
async fn an_idempotency_key_header_carries_the_calls_key_and_makes_a_post_idempotent() {
    let spec = OpenApiSpec::parse(
        r##"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {"/payments": {"post": {"operationId": "pay",
                "parameters": [{"name": "Idempotency-Key", "in": "header", "required": true,
                                "schema": {"type": "string"}}],
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"type": "object", "properties": {"cents": {"type": "integer"}}}}}}}},
                      "/refunds": {"post": {"operationId": "refund"}}}}"##,
    )
    .unwrap();
    let server = adk_test::MockServer::start([
        adk_test::MockResponse::json(200, &json!({"id": "p1"})),
        adk_test::MockResponse::json(200, &json!({"id": "p1"})),
    ])
    .await;
    let toolset = OpenApiToolset::builder(spec)
        .base_url(server.base_url())
        .build()
        .unwrap();
    let pay = toolset.tool("pay").unwrap();
    assert_eq!(pay.effect(), adk_tool::ToolEffect::Idempotent);
    assert_eq!(
        toolset.tool("refund").unwrap().effect(),
        adk_tool::ToolEffect::Effectful
    );
    // The model is not asked for the key.
    let parameters = pay.declaration().unwrap().parameters.unwrap();
    assert_eq!(parameters["required"], json!(["body"]));
    assert!(
        !parameters.to_string().contains("Idempotency"),
        "{parameters}"
    );

    // Two runs of one call send the same key, the call's.
    let ctx = TestToolContext::plain();
    for _ in 0..2 {
        let answer = call_in(&toolset, ctx.clone(), "pay", json!({"body": {"cents": 5}}))
            .await
            .unwrap();
        assert_eq!(answer, json!({"id": "p1"}));
    }
    let requests = server.requests();
    let keys: Vec<&str> = requests
        .iter()
        .map(|request| request.header("idempotency-key").unwrap())
        .collect();
    let key = ctx.idempotency_key().unwrap();
    assert_eq!(keys, [key.as_str(), key.as_str()]);
    assert!(keys[0].starts_with("adk1-"));
}
