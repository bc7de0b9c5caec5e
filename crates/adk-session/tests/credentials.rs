//! The credential services: one suite run on memory, SQLite and PostgreSQL (save, load, replace,
//! delete, isolation between users and keys), and what encryption at rest promises: no secret in
//! the database's bytes, nothing opened with another key or in another user's row.

use adk_core::{CredentialKey, CredentialService, ErrorKind, StoredCredential};
use adk_session::{
    CredentialCipher, InMemoryCredentialService, PostgresCredentialService, SqliteCredentialService,
};
use serde_json::json;

const SECRET: &str = "sk-credential-secret-42";

fn unique_app() -> String {
    format!("app-{}", uuid_like())
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("{nanos:x}-{}", std::process::id())
}

async fn suite(service: &dyn CredentialService, app: &str) {
    let ada = CredentialKey::new(app, "ada", "mail");
    let bob = CredentialKey::new(app, "bob", "mail");
    let ada_drive = CredentialKey::new(app, "ada", "drive");
    assert!(service.load(&ada).await.unwrap().is_none());

    service
        .save(&ada, StoredCredential::new(json!({"accessToken": SECRET})))
        .await
        .unwrap();
    let loaded = service.load(&ada).await.unwrap().unwrap();
    assert_eq!(loaded.value(), &json!({"accessToken": SECRET}));
    // Another user's or another key's credential is another credential.
    assert!(service.load(&bob).await.unwrap().is_none());
    assert!(service.load(&ada_drive).await.unwrap().is_none());

    service
        .save(
            &ada,
            StoredCredential::new(json!({"accessToken": "second"})),
        )
        .await
        .unwrap();
    assert_eq!(
        service.load(&ada).await.unwrap().unwrap().value()["accessToken"],
        "second"
    );
    service.delete(&ada).await.unwrap();
    assert!(service.load(&ada).await.unwrap().is_none());
    // Deleting what is not there is no error.
    service.delete(&ada).await.unwrap();
}

#[tokio::test]
async fn in_memory_credentials_follow_the_contract() {
    suite(&InMemoryCredentialService::new(), "app").await;
}

#[tokio::test]
async fn sqlite_credentials_follow_the_contract_and_are_encrypted_at_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("credentials.db");
    let service = SqliteCredentialService::open(&path, CredentialCipher::new([1; 32]))
        .await
        .unwrap();
    suite(&service, "app").await;

    let key = CredentialKey::new("app", "ada", "mail");
    service
        .save(&key, StoredCredential::new(json!({"accessToken": SECRET})))
        .await
        .unwrap();
    service.close().await;
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(file.unwrap().path()).unwrap();
        assert!(
            !bytes
                .windows(SECRET.len())
                .any(|window| window == SECRET.as_bytes()),
            "the database holds the secret in clear"
        );
    }

    // Another key does not open it, and says why without quoting anything.
    let other = SqliteCredentialService::open(&path, CredentialCipher::new([2; 32]))
        .await
        .unwrap();
    let error = other.load(&key).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Credential);
    assert!(error.to_string().contains("ADK_CREDENTIAL_KEY"), "{error}");
    other.close().await;

    // A sealed value copied into another user's row does not open there.
    let pool = sqlx_pool(&path).await;
    sqlx::query(
        "INSERT INTO adk_credentials (app_name, user_id, credential_key, sealed) \
         SELECT app_name, 'mallory', credential_key, sealed FROM adk_credentials \
         WHERE user_id = 'ada'",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let service = SqliteCredentialService::open(&path, CredentialCipher::new([1; 32]))
        .await
        .unwrap();
    let stolen = CredentialKey::new("app", "mallory", "mail");
    assert_eq!(
        service.load(&stolen).await.unwrap_err().kind(),
        ErrorKind::Credential
    );
    assert!(service.load(&key).await.unwrap().is_some());
}

async fn sqlx_pool(path: &std::path::Path) -> sqlx::SqlitePool {
    sqlx::SqlitePool::connect_with(sqlx::sqlite::SqliteConnectOptions::new().filename(path))
        .await
        .unwrap()
}

#[tokio::test]
async fn postgres_credentials_follow_the_contract() {
    let Some(url) = adk_test::postgres_url() else {
        return;
    };
    let service = PostgresCredentialService::connect(&url, CredentialCipher::new([3; 32]))
        .await
        .unwrap();
    let app = unique_app();
    suite(&service, &app).await;
    let key = CredentialKey::new(&app, "ada", "mail");
    service
        .save(&key, StoredCredential::new(json!({"accessToken": SECRET})))
        .await
        .unwrap();
    let other = PostgresCredentialService::connect(&url, CredentialCipher::new([4; 32]))
        .await
        .unwrap();
    assert_eq!(
        other.load(&key).await.unwrap_err().kind(),
        ErrorKind::Credential
    );
    service.delete(&key).await.unwrap();
}

#[test]
fn a_missing_key_is_a_clear_error() {
    // Where the environment holds a key (a deployment's shell), there is nothing to check.
    if std::env::var_os(adk_session::CREDENTIAL_KEY_ENV).is_some() {
        return;
    }
    let error = CredentialCipher::from_env().unwrap_err();
    assert!(
        error.to_string().contains("ADK_CREDENTIAL_KEY is not set"),
        "{error}"
    );
}
