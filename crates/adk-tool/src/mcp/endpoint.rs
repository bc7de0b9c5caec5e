//! How to reach an MCP server, and what of that may be shown: the command line, environment and
//! bearer token of an endpoint may hold secrets, so messages name a server by its program or URL
//! only and `Debug` redacts the rest.

use std::fmt;
use std::path::PathBuf;

/// What replaces a secret in `Debug` output and messages.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// The environment variables a stdio server gets from this process without being named: what a
/// program needs to find its tools, its home, its locale, a temporary folder and the system's
/// certificates. Everything else (API keys, database URLs, proxies with passwords) stays out
/// unless the toolset passes it with `env` or `inherit_env`.
#[cfg(not(windows))]
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The environment variables a stdio server gets from this process without being named (see the
/// Unix list); Windows programs also need their system folders.
#[cfg(windows)]
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "TEMP",
    "TMP",
    "USERNAME",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
];

/// How to reach a server.
#[derive(Clone)]
pub(crate) enum Endpoint {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        program: String,
        args: Vec<String>,
        /// Variables set explicitly, values included.
        env: Vec<(String, String)>,
        /// Variables passed on from this process by name.
        inherit_env: Vec<String>,
        current_dir: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    StreamableHttp {
        url: String,
        bearer_token: Option<String>,
    },
}

impl Endpoint {
    /// How messages name the server: its program (without arguments, which may hold secrets) or
    /// its URL (without user information and query).
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Stdio { program, .. } => format!("`{program}`"),
            Self::StreamableHttp { url, .. } => {
                format!("at {}", adk_core::url_without_credentials(url))
            }
        }
    }

    /// The secrets this endpoint knows (explicit environment values, the bearer token), to scrub
    /// from text the server sends back.
    pub(crate) fn secrets(&self) -> Vec<&str> {
        match self {
            Self::Stdio { env, .. } => env
                .iter()
                .map(|(_, value)| value.as_str())
                .filter(|value| value.len() >= 4)
                .collect(),
            Self::StreamableHttp { bearer_token, .. } => {
                bearer_token.iter().map(String::as_str).collect()
            }
        }
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio {
                program,
                args,
                env,
                inherit_env,
                current_dir,
            } => {
                let env: Vec<String> = env
                    .iter()
                    .map(|(key, _)| format!("{key}={REDACTED}"))
                    .collect();
                f.debug_struct("Stdio")
                    .field("program", program)
                    .field("args", &format_args!("[{} arguments]", args.len()))
                    .field("env", &env)
                    .field("inherit_env", inherit_env)
                    .field("current_dir", current_dir)
                    .finish()
            }
            Self::StreamableHttp { url, bearer_token } => f
                .debug_struct("StreamableHttp")
                .field("url", &adk_core::url_without_credentials(url))
                .field("bearer_token", &bearer_token.as_ref().map(|_| REDACTED))
                .finish(),
        }
    }
}

/// `text` with every secret of `secrets` replaced by [`REDACTED`].
pub(crate) fn scrub(text: &str, secrets: &[&str]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if !secret.is_empty() {
            text = text.replace(secret, REDACTED);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_labels_hide_secrets() {
        let stdio = Endpoint::Stdio {
            program: "npx".into(),
            args: vec!["--token".into(), "tok-123456".into()],
            env: vec![("API_KEY".into(), "sk-abcdef".into())],
            inherit_env: vec!["NPM_CONFIG_REGISTRY".into()],
            current_dir: None,
        };
        let shown = format!("{stdio:?} {}", stdio.label());
        assert!(
            !shown.contains("tok-123456") && !shown.contains("sk-abcdef"),
            "{shown}"
        );
        assert!(
            shown.contains("API_KEY=[REDACTED]") && shown.contains("[2 arguments]"),
            "{shown}"
        );
        let http = Endpoint::StreamableHttp {
            url: "https://bob:pw@mcp.example/mcp?key=k1".into(),
            bearer_token: Some("bearer-secret".into()),
        };
        let shown = format!("{http:?} {}", http.label());
        assert!(
            !shown.contains("bearer-secret") && !shown.contains("pw") && !shown.contains("k1"),
            "{shown}"
        );
        assert!(shown.contains("https://mcp.example/mcp"), "{shown}");
        assert_eq!(
            scrub("failed with sk-abcdef", &stdio.secrets()),
            "failed with [REDACTED]"
        );
    }
}
