//! The Host allow-list: a request whose `Host` names a host the server was not told it is reached
//! by is refused, whatever its method. A web page whose own name was rebound to a loopback
//! address (DNS rebinding) reaches the port, but its requests still say its own name.

use std::fmt;

/// The hosts a server answers to by default: its loopback names.
pub const DEFAULT_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The host names a server answers to: exact names (`api.example.com`, `10.0.0.7`, `[::1]`),
/// every subdomain of a name (`*.example.com`), or any (`*`). Ports are not compared.
#[derive(Clone, PartialEq, Eq)]
pub struct HostPolicy {
    any: bool,
    names: Vec<String>,
    suffixes: Vec<String>,
}

impl Default for HostPolicy {
    /// The loopback names alone ([`DEFAULT_HOSTS`]).
    fn default() -> Self {
        Self::new(DEFAULT_HOSTS)
    }
}

impl HostPolicy {
    /// Answers to `hosts` only (no loopback name unless listed).
    pub fn new<I, S>(hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut policy = Self {
            any: false,
            names: Vec::new(),
            suffixes: Vec::new(),
        };
        for host in hosts {
            policy.add(host.as_ref());
        }
        policy
    }

    /// Also answers to `host`.
    ///
    /// ```
    /// use adk_gate::HostPolicy;
    ///
    /// let mut hosts = HostPolicy::default();
    /// hosts.add("api.example.com");
    /// hosts.add("*.corp.example");
    /// assert!(hosts.allows(Some("API.example.com:8000")));
    /// assert!(hosts.allows(Some("dev.corp.example")));
    /// assert!(hosts.allows(Some("[::1]:8000")));
    /// assert!(!hosts.allows(Some("evil.test:8000")));
    /// assert!(!hosts.allows(Some("corp.example.evil")));
    /// ```
    pub fn add(&mut self, host: &str) {
        let host = normalize(host.trim());
        if host.is_empty() {
            return;
        }
        if host == "*" {
            self.any = true;
        } else if let Some(suffix) = host.strip_prefix("*.") {
            self.suffixes.push(format!(".{suffix}"));
        } else if host.contains(':') && !host.starts_with('[') {
            // An IPv6 address written without brackets, as a bind address is: the Host header
            // brackets it.
            self.names.push(format!("[{host}]"));
        } else {
            self.names.push(host);
        }
    }

    /// Whether any host is allowed (`*`).
    pub fn allows_any(&self) -> bool {
        self.any
    }

    /// Whether a request whose `Host` (or `:authority`) is `host` may go on. A request that names
    /// no host passes: browsers always send one, so a page cannot use its absence.
    pub fn allows(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return true;
        };
        if self.any {
            return true;
        }
        let name = strip_port(host.trim());
        let name = name.strip_suffix('.').unwrap_or(name);
        self.names
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
            || self.suffixes.iter().any(|suffix| {
                name.len() > suffix.len()
                    && name.is_char_boundary(name.len() - suffix.len())
                    && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
            })
    }
}

impl fmt::Debug for HostPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        if self.any {
            list.entry(&"*");
        }
        list.entries(&self.names);
        list.entries(self.suffixes.iter().map(|suffix| format!("*{suffix}")));
        list.finish()
    }
}

fn normalize(host: &str) -> String {
    let host = strip_port(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// `host` without its `:port`, brackets of an IPv6 address kept.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        // Only one colon: a name or IPv4 address with a port. More: a bare IPv6 address.
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_names_are_allowed_by_default_and_nothing_else() {
        let hosts = HostPolicy::default();
        for host in [
            "localhost",
            "localhost:8000",
            "LOCALHOST.",
            "127.0.0.1:1",
            "[::1]:8000",
        ] {
            assert!(hosts.allows(Some(host)), "{host}");
        }
        for host in [
            "evil.test:8124",
            "127.0.0.2",
            "localhost.evil.test",
            "0.0.0.0:8000",
        ] {
            assert!(!hosts.allows(Some(host)), "{host}");
        }
        assert!(hosts.allows(None));
    }

    #[test]
    fn bound_names_and_wildcards_are_added() {
        let mut hosts = HostPolicy::new(["10.0.0.7:8000", "::1", "*.example.com"]);
        assert!(hosts.allows(Some("10.0.0.7:80")));
        assert!(hosts.allows(Some("[::1]:8000")));
        assert!(hosts.allows(Some("a.b.example.com")));
        assert!(!hosts.allows(Some("example.com")));
        assert!(!hosts.allows(Some("localhost")));
        hosts.add("*");
        assert!(hosts.allows(Some("anything")));
    }
}
