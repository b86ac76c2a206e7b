//! The one home of API keys: read from the documented environment variables only, held in a
//! type that never prints its value, and scrubbed from any text that leaves the process.

use std::fmt;

/// Environment variable of the OpenAI-compatible key.
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// Environment variable of the Anthropic key.
pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";

const REDACTED: &str = "[redacted]";

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

    /// A key given directly, for unit tests of clients (no environment to share between threads).
    #[cfg(test)]
    pub fn for_test(key: &str) -> ApiKey {
        ApiKey(key.to_string())
    }

    /// The secret, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`: applied to everything a
    /// server sends back before it is stored or printed (some APIs echo the key in errors).
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 || !text.contains(&self.0) {
            return text.to_string();
        }
        text.replace(&self.0, REDACTED)
    }
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
}
