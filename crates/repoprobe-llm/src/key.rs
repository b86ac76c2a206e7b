//! The one home of API keys: read from the documented environment variables only, held in a
//! type that never prints its value, and scrubbed from any text that leaves the process — with
//! every other secret-looking value of our environment ([`env_secrets`]).

use std::fmt;

/// Environment variable of the OpenAI-compatible key.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// Environment variable of the Anthropic key.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";

const REDACTED: &str = "[redacted]";
/// Shortest value taken for a secret (shorter ones would scrub ordinary words).
const MIN_SECRET: usize = 8;

/// An API key. `Debug` and `Display` print `[redacted]`; only [`ApiKey::expose`] gives the value,
/// and it is called only where the request header is built.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Reads the key from `var`; `None` when unset or blank.
    pub fn from_env(var: &str) -> Option<ApiKey> {
        std::env::var(var)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(ApiKey)
    }

    /// A key given directly, for unit tests of clients (no environment to share between threads);
    /// other crates' tests get it with the feature `test-support`.
    #[cfg(any(test, feature = "test-support"))]
    pub fn for_test(key: &str) -> ApiKey {
        ApiKey(key.to_string())
    }

    /// No key: for a server that needs none (a local llama.cpp, vLLM or Ollama). Requests carry
    /// no key header at all.
    pub fn none() -> ApiKey {
        ApiKey(String::new())
    }

    /// Whether this is [`ApiKey::none`].
    pub fn is_none(&self) -> bool {
        self.0.is_empty()
    }

    /// The secret, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`: applied to everything a
    /// server sends back before it is stored or printed (some APIs echo the key in errors).
    /// Every other secret-looking value of our environment ([`env_secrets`]) is scrubbed too.
    pub fn scrub(&self, text: &str) -> String {
        let text = scrub_env(text);
        if self.0.len() < 4 || !text.contains(&self.0) {
            return text;
        }
        text.replace(&self.0, REDACTED)
    }
}

/// Whether a variable of ours holds a secret by its name: `*_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*_PASSWORD` (and `*_KEY_…`-style suffixes such as `_SECRET_ACCESS_KEY` fall under `_KEY`).
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD"]
        .iter()
        .any(|s| n.ends_with(s))
        || matches!(n.as_str(), "KEY" | "TOKEN" | "SECRET" | "PASSWORD")
}

/// The secrets in one variable: its whole value when the name says so, and the credentials of
/// any URL in it (`scheme://user:password@host`: `user:password` and the password alone).
fn secrets_in(name: &str, value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let value = value.trim();
    if secret_name(name) {
        out.push(value.to_string());
    }
    for (i, _) in value.match_indices("://") {
        let rest = &value[i + 3..];
        let end = rest
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(rest.len());
        if let Some((userinfo, _host)) = rest[..end].rsplit_once('@') {
            out.push(userinfo.to_string());
            if let Some((_, password)) = userinfo.split_once(':') {
                out.push(password.to_string());
            }
            out.push(value.to_string());
        }
    }
    out.retain(|s| s.len() >= MIN_SECRET);
    out
}

/// Every secret-looking value of our own environment, read once: values of `*_KEY`, `*_TOKEN`,
/// `*_SECRET`, `*_PASSWORD` variables and URLs with credentials, longest first. Scrubbed from
/// everything we write, whether or not it was passed to anyone (a judge key kept while an agent
/// runs, say).
pub fn env_secrets() -> &'static [String] {
    static SECRETS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SECRETS.get_or_init(|| {
        let mut s: Vec<String> = std::env::vars_os()
            .flat_map(|(k, v)| secrets_in(&k.to_string_lossy(), &v.to_string_lossy()))
            .collect();
        s.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        s.dedup();
        s
    })
}

/// `text` with every value of [`env_secrets`] replaced by `[redacted]`.
pub fn scrub_env(text: &str) -> String {
    scrub_all(env_secrets(), text)
}

/// `text` with each of `secrets` (longest first, so a key that contains another goes whole)
/// replaced by `[redacted]`.
pub fn scrub_all(secrets: &[String], text: &str) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if s.len() >= 4 && out.contains(s.as_str()) {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    out
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_display_and_scrub_never_show_the_key() {
        let k = ApiKey("sk-secret-123".into());
        assert_eq!(
            format!("{k} {k:?} {:?}", Some(&k)),
            "[redacted] [redacted] Some([redacted])"
        );
        assert_eq!(k.scrub("bad key sk-secret-123!"), "bad key [redacted]!");
        assert_eq!(k.expose(), "sk-secret-123");
    }

    #[test]
    fn secrets_are_known_by_name_and_by_url_credentials() {
        assert_eq!(
            secrets_in("OPENAI_API_KEY", " sk-abcdefgh "),
            ["sk-abcdefgh"]
        );
        assert_eq!(secrets_in("GITHUB_TOKEN", "ghp_12345678"), ["ghp_12345678"]);
        assert_eq!(
            secrets_in("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI"),
            ["wJalrXUtnFEMI"]
        );
        assert_eq!(
            secrets_in("DB_PASSWORD", "hunter2hunter2"),
            ["hunter2hunter2"]
        );
        assert!(secrets_in("PATH", "/usr/bin:/bin").is_empty());
        assert!(
            secrets_in("MY_KEY", "short").is_empty(),
            "too short to be a key"
        );
        assert_eq!(
            secrets_in("PROXY", "https://bob:pa55word-x@proxy.example:8080/path"),
            [
                "bob:pa55word-x",
                "pa55word-x",
                "https://bob:pa55word-x@proxy.example:8080/path"
            ]
        );
        assert!(secrets_in("ANTHROPIC_BASE_URL", "http://127.0.0.1:9").is_empty());
    }

    #[test]
    fn the_longest_secret_goes_first_and_whole() {
        let s = vec!["abcdefgh-long-key".to_string(), "abcdefgh".to_string()];
        assert_eq!(
            scrub_all(&s, "x abcdefgh-long-key y abcdefgh"),
            "x [redacted] y [redacted]"
        );
    }
}
