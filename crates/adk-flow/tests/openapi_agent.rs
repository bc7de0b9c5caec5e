//! An agent on a scripted model using an OpenAPI toolset made from a real server's document (a
//! FastAPI pet store on loopback): three operations, one with a request body and one
//! authenticated, their answers and errors returned to the model as function responses.

mod support;

use std::sync::Arc;

use adk_test::pet_store::{API_KEY, PetStore};
use adk_test::{AgentRun, ScriptedModel};
use adk_tool::openapi::{Credential, OpenApiSpec, OpenApiToolset};
use serde_json::json;
use support::agent;

#[tokio::test]
async fn an_agent_creates_reads_and_deletes_through_the_documented_api() {
    let store = tokio::task::spawn_blocking(PetStore::start).await.unwrap();
    let spec = OpenApiSpec::from_url(&store.openapi_url()).await.unwrap();
    let pets = OpenApiToolset::builder(spec)
        .name("pets")
        .credential("APIKeyHeader", Credential::api_key(API_KEY))
        .operations(["createPet", "showPetById", "deletePet"])
        .build()
        .unwrap();

    let model = ScriptedModel::new("gemini-2.5-flash")
        .then_call("create_pet", json!({"body": {"name": "Rex", "tag": "dog"}}))
        .then_call("show_pet_by_id", json!({"pet_id": 1}))
        .then_call("delete_pet", json!({"pet_id": 1}))
        .then_call("show_pet_by_id", json!({"pet_id": 1}))
        .then_text("Rex came and went.");
    let keeper = agent("keeper", &model)
        .toolset(Arc::new(pets))
        .build()
        .unwrap();
    let run = AgentRun::new(Arc::new(keeper), "Add Rex, check him, then remove him.").await;
    assert!(run.error.is_none(), "{:?}", run.error);

    // The model was offered the three operations with their schemas.
    let requests = model.requests();
    let declared: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(declared, ["create_pet", "show_pet_by_id", "delete_pet"]);

    let responses: Vec<_> = run
        .session
        .events
        .iter()
        .flat_map(|event| event.function_responses().cloned().collect::<Vec<_>>())
        .map(|response| (response.name, serde_json::Value::Object(response.response)))
        .collect();
    assert_eq!(responses.len(), 4, "{responses:?}");
    assert_eq!(responses[0].0, "create_pet");
    assert_eq!(
        responses[0].1,
        json!({"id": 1, "name": "Rex", "tag": "dog"})
    );
    assert_eq!(
        responses[1].1,
        json!({"id": 1, "name": "Rex", "tag": "dog"})
    );
    assert_eq!(responses[2].0, "delete_pet");
    // The last read fails with the server's 404, which the model reads and the run survives.
    let error = responses[3].1["error"].as_str().unwrap();
    assert!(
        error.contains("answered 404 Not Found") && error.contains("no pet 1"),
        "{error}"
    );
    assert_eq!(
        run.session.events.last().unwrap().text().as_deref(),
        Some("Rex came and went.")
    );
}
