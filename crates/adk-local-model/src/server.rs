//! A running `llama-server`: started on a loopback port it picks itself, answering only to a key
//! of its own, healthy, killed when dropped.
//!
//! Any local process, and any web page the browser opens (through DNS rebinding or a plain
//! `fetch` to loopback), can reach a loopback port. So the server gets a random API key through
//! its environment (not its command line, which other local users can read) and refuses every
//! request without it, and it binds port 0 and reports the port it got, so that no other process
//! can take the port between a check and the bind and stand in for it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Child;

use crate::commands;
use crate::config::ServerOptions;
use crate::error::{Error, Result};
use crate::process::{self, create_dir, tail_of_file};

/// A running `llama-server` process serving the OpenAI-compatible API on `127.0.0.1`.
///
/// The process is killed when this handle is dropped (or the program unwinds from a panic);
/// [`stop`](Self::stop) also waits for it. Its log file is removed then too: only the logs of
/// servers that failed to start stay, for their error messages to point at.
pub struct LocalServer {
    child: Child,
    port: u16,
    model_name: String,
    api_key: String,
    log: PathBuf,
    /// Whether the log outlives the handle: set when starting failed.
    keep_log: bool,
}

impl std::fmt::Debug for LocalServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The API key is left out.
        f.debug_struct("LocalServer")
            .field("pid", &self.child.id())
            .field("port", &self.port)
            .field("model_name", &self.model_name)
            .field("log", &self.log)
            .finish_non_exhaustive()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        // `kill_on_drop` ends the process; the log is a small file, removed in place.
        if !self.keep_log {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

impl LocalServer {
    /// The OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`: append `/chat/completions`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.origin())
    }

    /// The server's origin, `http://127.0.0.1:<port>`, where `/health` lives.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The model name the server answers to (its `--alias`).
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// The API key the server requires (`Authorization: Bearer <key>`) on every route but
    /// `/health`: random for each server.
    pub fn api_key(&self) -> &str {
        &self.api_key
    }

    /// The process id, while the process runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The file that holds the server's standard output and error.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Kills the server and waits until it has exited.
    pub async fn stop(mut self) -> Result<()> {
        self.child
            .kill()
            .await
            .map_err(|err| Error::io("stop", "llama-server", err))
    }
}

/// The environment variable through which `llama-server` reads its API key.
const API_KEY_ENV: &str = "LLAMA_API_KEY";

/// What `llama-server` logs once it listens, before the address.
const LISTENING: &str = "listening on http://127.0.0.1:";

/// Starts `binary` serving `model` as `name`, and waits until `/health` answers 200. With port 0
/// (the default) the server binds a port of its own choosing and the log says which.
pub(crate) async fn start(
    binary: &Path,
    model: &Path,
    name: &str,
    logs: &Path,
    options: &ServerOptions,
) -> Result<LocalServer> {
    let port = if options.port == 0 {
        0
    } else {
        check_port(options.port).await?
    };
    start_on(binary, model, name, logs, options, port).await
}

/// One start on `port` (0: any free port).
async fn start_on(
    binary: &Path,
    model: &Path,
    name: &str,
    logs: &Path,
    options: &ServerOptions,
    port: u16,
) -> Result<LocalServer> {
    create_dir(logs).await?;
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let log = logs.join(format!("llama-server-{}.log", &run_id[..12]));
    let file = tokio::fs::File::create(&log)
        .await
        .map_err(|err| Error::io("create log", &log, err))?;
    let stderr = file
        .try_clone()
        .await
        .map_err(|err| Error::io("create log", &log, err))?;
    let api_key = uuid::Uuid::new_v4().simple().to_string();
    let mut command = process::command(binary, &commands::server_args(model, name, port, options));
    command
        .env(API_KEY_ENV, &api_key)
        .stdout(file.into_std().await)
        .stderr(stderr.into_std().await);
    let child = command.spawn().map_err(|source| Error::Spawn {
        program: binary.display().to_string(),
        source,
    })?;
    let mut server = LocalServer {
        child,
        port,
        model_name: name.to_owned(),
        api_key,
        log,
        keep_log: false,
    };
    let deadline = Instant::now() + options.health_timeout;
    let started = async {
        if port == 0 {
            server.port = wait_listening(&mut server, binary, deadline, options).await?;
        }
        wait_healthy(&mut server, binary, deadline, options.health_timeout).await
    };
    if let Err(error) = started.await {
        server.keep_log = true;
        return Err(error);
    }
    Ok(server)
}

/// Waits until the server's log names the port it listens on; fails when the process exits or
/// the deadline passes first.
async fn wait_listening(
    server: &mut LocalServer,
    binary: &Path,
    deadline: Instant,
    options: &ServerOptions,
) -> Result<u16> {
    loop {
        check_running(server, binary).await?;
        if let Ok(log) = tokio::fs::read_to_string(&server.log).await
            && let Some(port) = listening_port(&log)
        {
            return Ok(port);
        }
        if Instant::now() >= deadline {
            return Err(Error::HealthTimeout {
                seconds: options.health_timeout.as_secs(),
                log: server.log.clone(),
                tail: tail_of_file(&server.log).await,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The port in `llama-server`'s `listening on http://127.0.0.1:<port>` line.
fn listening_port(log: &str) -> Option<u16> {
    let (_, after) = log.split_once(LISTENING)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Fails with the right error when the server's process has exited.
async fn check_running(server: &mut LocalServer, binary: &Path) -> Result<()> {
    let Some(status) = server
        .child
        .try_wait()
        .map_err(|err| Error::io("wait for", binary, err))?
    else {
        return Ok(());
    };
    let tail = tail_of_file(&server.log).await;
    if says_port_in_use(&tail) {
        return Err(Error::PortInUse { port: server.port });
    }
    Err(Error::ServerExited {
        status: process::status_text(status),
        log: server.log.clone(),
        tail,
        binary: binary.to_path_buf(),
    })
}

/// Polls `/health` until it answers 200, the process exits or the deadline passes.
async fn wait_healthy(
    server: &mut LocalServer,
    binary: &Path,
    deadline: Instant,
    timeout: Duration,
) -> Result<()> {
    loop {
        check_running(server, binary).await?;
        if health_status(server.port).await == Some(200) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let tail = tail_of_file(&server.log).await;
            // Dropping the handle kills the process.
            return Err(Error::HealthTimeout {
                seconds: timeout.as_secs(),
                log: server.log.clone(),
                tail,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `port` if it is free on `127.0.0.1`, else [`Error::PortInUse`].
async fn check_port(port: u16) -> Result<u16> {
    match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(_) => Ok(port),
        Err(err) if err.kind() == std::io::ErrorKind::AddrInUse => Err(Error::PortInUse { port }),
        Err(err) => Err(Error::io("bind", format!("127.0.0.1:{port}"), err)),
    }
}

/// Whether the server's output says that it could not bind its port.
fn says_port_in_use(output: &str) -> bool {
    let output = output.to_ascii_lowercase();
    output.contains("address already in use") || output.contains("couldn't bind")
}

/// The status code of `GET /health` on `127.0.0.1:port`, or `None` when nothing answers.
///
/// A plain HTTP/1.1 exchange over TCP keeps the library free of an HTTP client.
pub(crate) async fn health_status(port: u16) -> Option<u16> {
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0_u8; 64];
        let mut read = 0;
        while read < head.len() {
            match stream.read(&mut head[read..]).await.ok()? {
                0 => break,
                n => read += n,
            }
        }
        parse_status_line(&head[..read])
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
}

/// The status code of an HTTP response that starts with `bytes`.
fn parse_status_line(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut parts = text.lines().next()?.split_whitespace();
    parts
        .next()
        .filter(|version| version.starts_with("HTTP/"))?;
    parts.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse() {
        assert_eq!(
            parse_status_line(b"HTTP/1.1 200 OK\r\nContent-Length: 15"),
            Some(200)
        );
        assert_eq!(
            parse_status_line(b"HTTP/1.1 503 Service Unavailable\r\n"),
            Some(503)
        );
        assert_eq!(parse_status_line(b"SSH-2.0-OpenSSH"), None);
        assert_eq!(parse_status_line(b""), None);
    }

    #[test]
    fn bind_failures_are_recognised() {
        assert!(says_port_in_use(
            "couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080"
        ));
        assert!(says_port_in_use("bind: Address already in use"));
        assert!(!says_port_in_use("model loaded"));
    }

    #[tokio::test]
    async fn a_taken_port_is_refused() {
        let taken = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = taken.local_addr().unwrap().port();
        assert!(matches!(check_port(port).await, Err(Error::PortInUse { port: p }) if p == port));
    }

    #[test]
    fn the_listening_line_gives_the_port() {
        let log = "main: model loaded\nmain: listening on http://127.0.0.1:43117\nmain: starting\n";
        assert_eq!(listening_port(log), Some(43117));
        assert_eq!(listening_port("main: loading model"), None);
    }

    #[tokio::test]
    async fn health_reads_the_status_of_a_loopback_server() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let serve = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0_u8; 256];
            let _ = socket.read(&mut request).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\n\r\n")
                .await
                .unwrap();
        });
        assert_eq!(health_status(port).await, Some(503));
        serve.await.unwrap();
        assert_eq!(health_status(port).await, None);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_server_that_exits_at_once_is_reported_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fake-server");
        tokio::fs::write(
            &script,
            "#!/bin/sh\necho 'error: Illegal instruction' >&2\nexit 3\n",
        )
        .await
        .unwrap();
        let mut permissions = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).unwrap();
        let options = ServerOptions::default();
        let err = start(&script, Path::new("/m.gguf"), "m", dir.path(), &options)
            .await
            .unwrap_err();
        match &err {
            Error::ServerExited { tail, .. } => {
                assert!(tail.contains("Illegal instruction"), "{err}")
            }
            other => panic!("expected ServerExited, got {other}"),
        }
    }
}
