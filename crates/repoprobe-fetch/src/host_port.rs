//! `--allow-host HOST:PORT`: the one way past the fetcher's address check, for tests that serve
//! pages on loopback. Exactly that host and that port: an allowed `127.0.0.1:8080` does not
//! allow `127.0.0.1:8081`, `127.0.0.2:8080` or `localhost:8080`.
//! [`allowed`]: the links `curate enhance` sends past the check, normalised as fetched.

use std::fmt;
use std::str::FromStr;
use url::Host;

/// A host (a name or an IP literal, normalised as a URL's host is) and a port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    host: Host<String>,
    port: u16,
}

/// A `--allow-host` value that is not `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value} is not HOST:PORT (a name or an IP address, IPv6 in brackets: [::1]:8080): {why}")]
pub struct HostPortError {
    value: String,
    why: String,
}

impl HostPort {
    /// Whether a URL's `host` and port (explicit or the scheme's) are this one.
    pub fn matches(&self, host: &Host<&str>, port: u16) -> bool {
        port == self.port
            && match (&self.host, host) {
                (Host::Domain(a), Host::Domain(b)) => a.eq_ignore_ascii_case(b),
                (Host::Ipv4(a), Host::Ipv4(b)) => a == b,
                (Host::Ipv6(a), Host::Ipv6(b)) => a == b,
                _ => false,
            }
    }

    /// The host name, when it is one (not an IP literal), lower case.
    pub fn name(&self) -> Option<&str> {
        match &self.host {
            Host::Domain(d) => Some(d),
            _ => None,
        }
    }
}

impl FromStr for HostPort {
    type Err = HostPortError;

    fn from_str(value: &str) -> Result<HostPort, HostPortError> {
        let fail = |why: &str| HostPortError {
            value: repoprobe_text::text::quote(value),
            why: why.to_string(),
        };
        let (host, port) = value
            .rsplit_once(':')
            .ok_or_else(|| fail("there is no :PORT"))?;
        if host.is_empty() {
            return Err(fail("the host is empty"));
        }
        if host.contains(':') && !(host.starts_with('[') && host.ends_with(']')) {
            return Err(fail("an IPv6 address is written in brackets"));
        }
        let port: u16 = port
            .parse()
            .map_err(|_| fail("the port is not a number from 0 to 65535"))?;
        // Parsed as a URL's host is, so that `127.1` is 127.0.0.1 and `LocalHost` localhost,
        // as they are in the URLs compared with it.
        let host = Host::parse(host).map_err(|e| fail(&e.to_string()))?;
        if let Host::Domain(d) = &host
            && (d.contains(['/', '@', '?', '#', ' ']) || d.is_empty())
        {
            return Err(fail("not a host name"));
        }
        Ok(HostPort { host, port })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// The link, normalised without its fragment, when `--allow-host` names its host and port.
pub fn allowed(written: &str, allow: &[HostPort]) -> Option<String> {
    if allow.is_empty() {
        return None;
    }
    let mut url = url::Url::parse(written).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let port = url.port_or_known_default()?;
    let host = url.host()?;
    if !allow.iter().any(|a| a.matches(&host, port)) {
        return None;
    }
    url.set_fragment(None);
    Some(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(s: &str) -> HostPort {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn host_and_port_parse_names_and_both_kinds_of_literal() {
        assert_eq!(hp("127.0.0.1:8080").to_string(), "127.0.0.1:8080");
        assert_eq!(hp("[::1]:80").to_string(), "[::1]:80");
        assert_eq!(hp("LocalHost:3000").to_string(), "localhost:3000");
        assert_eq!(hp("127.1:9").to_string(), "127.0.0.1:9");
        assert_eq!(hp("docs.example.com:443").name(), Some("docs.example.com"));
        assert_eq!(hp("[::1]:80").name(), None);
    }

    #[test]
    fn anything_but_host_colon_port_is_refused_with_the_form_named() {
        for bad in [
            "",
            "127.0.0.1",
            ":80",
            "127.0.0.1:",
            "127.0.0.1:http",
            "127.0.0.1:70000",
            "::1:80",
            "[::1]",
            "[zz]:80",
            "a/b:80",
            "user@host:80",
            "a b:80",
        ] {
            let e = bad.parse::<HostPort>().unwrap_err().to_string();
            assert!(e.contains("is not HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn only_the_exact_host_and_port_match() {
        let allowed = hp("127.0.0.1:8080");
        let v4 = |s: &str| Host::Ipv4(s.parse().unwrap());
        assert!(allowed.matches(&v4("127.0.0.1"), 8080));
        assert!(!allowed.matches(&v4("127.0.0.1"), 8081));
        assert!(!allowed.matches(&v4("127.0.0.2"), 8080));
        assert!(!allowed.matches(&Host::Domain("localhost"), 8080));
        let name = hp("localhost:8080");
        assert!(name.matches(&Host::Domain("LOCALHOST"), 8080));
        assert!(!name.matches(&v4("127.0.0.1"), 8080));
        assert!(!name.matches(&Host::Domain("localhost.example"), 8080));
    }
}
