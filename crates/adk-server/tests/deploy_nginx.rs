//! The load balancer of `deploy/` (its real `nginx.conf`, run by Debian's nginx in front of two
//! loopback replicas) never sends a run again once a replica may have stored it, and does send it
//! to another replica when the first answered 503, which a replica does before it stores anything.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

/// How long anything may take before the test calls it a hang.
const PATIENCE: Duration = Duration::from_secs(120);

/// What a replica does with the first request it is sent.
#[derive(Clone, Copy)]
enum First {
    /// It stores the run and dies before it answers.
    DiesAfterStoring,
    /// It answers 503 without storing anything.
    Refuses,
}

/// Two replicas sharing one count of stored runs: the first request either of them is sent gets
/// `first`, every later one is stored and answered 200.
struct Replicas {
    ports: [u16; 2],
    stored: Arc<AtomicUsize>,
}

impl Replicas {
    async fn start(first: First) -> Self {
        let stored = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let mut ports = [0; 2];
        for port in &mut ports {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            *port = listener.local_addr().unwrap().port();
            let (stored, requests) = (stored.clone(), requests.clone());
            tokio::spawn(async move {
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    let number = requests.fetch_add(1, Ordering::AcqRel);
                    tokio::spawn(replica(stream, number, first, stored.clone()));
                }
            });
        }
        Self { ports, stored }
    }
}

/// One request to a replica.
async fn replica(mut stream: TcpStream, number: usize, first: First, stored: Arc<AtomicUsize>) {
    read_request(&mut stream).await;
    match (number, first) {
        (0, First::Refuses) => {
            let refused = "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(refused.as_bytes()).await;
        }
        (0, First::DiesAfterStoring) => {
            stored.fetch_add(1, Ordering::AcqRel);
            // The process dies: the connection closes without an answer.
            drop(stream);
        }
        _ => {
            stored.fetch_add(1, Ordering::AcqRel);
            let body = "[]";
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    }
}

/// Reads a request's head and its `content-length` body.
async fn read_request(stream: &mut TcpStream) {
    let mut seen = Vec::new();
    let mut buffer = [0_u8; 4096];
    loop {
        let read = stream.read(&mut buffer).await.unwrap_or(0);
        if read == 0 {
            return;
        }
        seen.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&seen).to_ascii_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return;
            }
        }
    }
}

/// nginx running `deploy/nginx.conf` with its replicas at `ports` instead of compose's, on a free
/// loopback port; stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    async fn start(ports: [u16; 2]) -> Self {
        let binary = std::env::var("NGINX").unwrap_or_else(|_| "/usr/sbin/nginx".to_owned());
        assert!(
            std::path::Path::new(&binary).exists(),
            "{binary} is missing: install Debian's nginx (apt-get install nginx), as .ci/run does"
        );
        let conf =
            adk_test::package_dir(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf");
        let deployed = std::fs::read_to_string(&conf).unwrap();
        let port = free_port();
        // The deployed configuration, with compose's DNS and service name replaced by the two
        // replicas and its port by a free one; everything else as deployed.
        let server = deployed
            .lines()
            .filter(|line| !line.trim_start().starts_with("resolver "))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("set $replicas adk:8000;", "set $replicas replicas;")
            .replace("listen 8000;", &format!("listen 127.0.0.1:{port};"));
        assert!(
            server.contains("set $replicas replicas;"),
            "the deployed file was understood"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name).display().to_string();
        let main = format!(
            "daemon off;\nmaster_process off;\npid {pid};\nerror_log {log} info;\nevents {{}}\nhttp {{\n\
             access_log off;\nclient_body_temp_path {tmp};\nproxy_temp_path {tmp};\n\
             upstream replicas {{ server 127.0.0.1:{a}; server 127.0.0.1:{b}; }}\n{server}\n}}\n",
            pid = path("nginx.pid"),
            log = path("error.log"),
            tmp = path("tmp"),
            a = ports[0],
            b = ports[1],
        );
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, main).unwrap();
        let log_path = PathBuf::from(path("error.log"));
        let child = Command::new(&binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("nginx starts");
        let mut nginx = Self {
            child,
            port,
            _dir: dir,
        };
        tokio::time::timeout(PATIENCE, async {
            while TcpStream::connect(("127.0.0.1", nginx.port)).await.is_err() {
                if let Ok(Some(status)) = nginx.child.try_wait() {
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    panic!("nginx exited with {status}:\n{log}");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("nginx listens");
        nginx
    }

    async fn post_run(&self) -> u16 {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/run", self.port))
            .json(
                &serde_json::json!({"appName": "a", "userId": "u", "sessionId": "s",
                "newMessage": {"role": "user", "parts": [{"text": "once"}]}}),
            )
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn security_deploy_nginx_never_sends_a_stored_run_again() {
    let replicas = Replicas::start(First::DiesAfterStoring).await;
    let nginx = Nginx::start(replicas.ports).await;
    let status = tokio::time::timeout(PATIENCE, nginx.post_run())
        .await
        .expect("nginx answers");
    assert_eq!(status, 502, "the client learns the run's fate is unknown");
    assert_eq!(
        replicas.stored.load(Ordering::Acquire),
        1,
        "the run was stored once, not sent again to the other replica"
    );
}

#[tokio::test]
async fn a_run_refused_with_503_goes_to_another_replica() {
    let replicas = Replicas::start(First::Refuses).await;
    let nginx = Nginx::start(replicas.ports).await;
    let status = tokio::time::timeout(PATIENCE, nginx.post_run())
        .await
        .expect("nginx answers");
    assert_eq!(status, 200);
    assert_eq!(replicas.stored.load(Ordering::Acquire), 1);
}
