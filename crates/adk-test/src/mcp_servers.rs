//! The real MCP servers the MCP tests of adk-tool and adk-config run, installed from npm on first
//! use.
//!
//! The servers are installed with `npm install --prefix <dir>` into `$ADK_MCP_SERVERS_DIR`
//! (by default `$HOME/.cache/adk-rs/mcp-servers`), at pinned versions. An exclusive file lock
//! keeps parallel test binaries from installing at the same time; a marker file naming the
//! versions makes later runs skip the install.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Overrides where the servers are installed.
pub const SERVERS_DIR_ENV: &str = "ADK_MCP_SERVERS_DIR";

/// The npm packages, pinned.
const PACKAGES: [(&str, &str); 2] = [
    ("@modelcontextprotocol/server-everything", "2026.8.31"),
    ("@modelcontextprotocol/server-filesystem", "2026.8.31"),
];

/// Where the installed servers are.
pub struct McpServers {
    dir: PathBuf,
}

impl McpServers {
    /// The entry script of `@modelcontextprotocol/server-everything` (run it with `node`, then
    /// `stdio` or `streamableHttp`).
    pub fn everything(&self) -> String {
        self.entry("server-everything")
    }

    /// The entry script of `@modelcontextprotocol/server-filesystem` (run it with `node`, then
    /// the allowed directories).
    pub fn filesystem(&self) -> String {
        self.entry("server-filesystem")
    }

    /// The folder of the official TypeScript SDK the servers are built on, for test servers of
    /// our own (`tests/support/hostile_mcp_server.mjs`).
    pub fn sdk(&self) -> String {
        let path = self.dir.join("node_modules/@modelcontextprotocol/sdk");
        path.to_str().expect("a UTF-8 path").to_owned()
    }

    fn entry(&self, package: &str) -> String {
        let path = self
            .dir
            .join("node_modules/@modelcontextprotocol")
            .join(package)
            .join("dist/index.js");
        path.to_str().expect("a UTF-8 path").to_owned()
    }
}

/// The servers, installed if needed (once per test binary).
pub fn installed() -> &'static McpServers {
    static SERVERS: OnceLock<McpServers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let dir = crate::cache_dir(SERVERS_DIR_ENV, "mcp-servers");
        install(&dir);
        McpServers { dir }
    })
}

fn install(dir: &Path) {
    let wanted: Vec<String> = PACKAGES
        .iter()
        .map(|(name, version)| format!("{name}@{version}"))
        .collect();
    crate::install_once(dir, &wanted.join("\n"), |dir| npm_install(dir, &wanted));
}

/// Installs the npm packages `wanted` into `dir` (for every npm install of this crate).
pub(crate) fn npm_install(dir: &Path, wanted: &[String]) {
    let npm = Command::new("npm").arg("--version").output();
    if !npm.is_ok_and(|output| output.status.success()) {
        panic!(
            "these tests need npm to install their servers ({}); install Node.js 20 or later \
             with npm (for example `apt-get install nodejs npm`) and run the tests again",
            wanted.join(", ")
        );
    }
    let output = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
        ])
        .arg(dir)
        .args(wanted)
        .output()
        .expect("npm runs");
    assert!(
        output.status.success(),
        "`npm install --prefix {} {}` failed:\n{}",
        dir.display(),
        wanted.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A server-everything listening for streamable HTTP on a free loopback port; killed on drop.
pub struct HttpEverything {
    child: Child,
    port: u16,
}

impl HttpEverything {
    /// Starts the server and waits until it listens.
    pub fn start() -> Self {
        let port = free_port();
        let child = Command::new("node")
            .arg(installed().everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts server-everything");
        let server = Self { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on port {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The server's MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a free loopback port");
    listener.local_addr().expect("a local address").port()
}
