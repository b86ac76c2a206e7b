//! The GitHub GraphQL client of `repoprobe curate`: one request at a time (GitHub asks for no
//! concurrency on its API, and its secondary limits punish it), the token from `GITHUB_TOKEN`
//! only (held in the one key type, `repoprobe_llm::ApiKey`, never printed, scrubbed from every
//! body we keep), and patient with the limits:
//!
//! - **primary**: every query asks for `rateLimit { cost remaining resetAt }` and the
//!   `x-ratelimit-remaining`/`x-ratelimit-reset` headers are read; when nothing is left the next
//!   request waits for the reset. Over the limit GitHub still answers HTTP 200, with an `errors`
//!   entry of type `RATE_LIMITED`: we wait for the reset and ask again.
//! - **secondary** (403 or 429 without the primary budget spent): `retry-after` is honoured,
//!   else we back off for at least a minute ([`SECONDARY_BACKOFF`]), doubling.
//! - **502/504** (GitHub's answer to a query too slow to finish) are handed back as
//!   [`GhError::Gateway`]; the paged queries ([`queries`]) then ask again with half the page,
//!   down to one node.
//!
//! Nothing here knows the stages: [`queries`] holds the query texts and the reply types. It
//! must not parse flags, print (waits are told through [`GitHub::on_wait`]), read a token from
//! anywhere but the caller's [`ApiKey`], follow a redirect, or send two requests at once.

pub mod queries;

use repoprobe_llm::{ApiKey, BuildError};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable of the token.
pub const GITHUB_TOKEN: &str = "GITHUB_TOKEN";
/// GitHub.com's GraphQL endpoint (GitHub Enterprise: `https://HOST/api/graphql`).
pub const DEFAULT_API_URL: &str = "https://api.github.com/graphql";
/// The least wait after a secondary limit without `retry-after` (GitHub's documented minimum).
pub const SECONDARY_BACKOFF: Duration = Duration::from_secs(60);
/// The longest single wait: a primary limit resets within the hour.
const MAX_WAIT: Duration = Duration::from_secs(3700);
/// Attempts of one request (rate-limit waits included) before it fails.
const MAX_ATTEMPTS: u32 = 10;
/// Biggest reply body read.
const MAX_BODY: usize = 64 << 20;
/// How much of a body an error message keeps.
const ERROR_BODY_CHARS: usize = 400;

/// A request that did not give data. Messages say which operation, and why; bodies are
/// scrubbed of the token and cut.
#[derive(Debug, thiserror::Error)]
pub enum GhError {
    #[error(
        "{op}: {url} refused the token (HTTP {status}): check GITHUB_TOKEN (a classic token \
         needs no scope for public repositories; a fine-grained one read access): {body}"
    )]
    Unauthorized {
        op: &'static str,
        url: String,
        status: u16,
        body: String,
    },
    #[error("{op}: HTTP {status} from {url} (after {attempts} attempt(s)): {body}")]
    Status {
        op: &'static str,
        url: String,
        status: u16,
        attempts: u32,
        body: String,
    },
    #[error("{op}: HTTP {status} from {url}: the query took too long for GitHub")]
    Gateway {
        op: &'static str,
        url: String,
        status: u16,
    },
    #[error("{op}: the reply of {url} is not the API's JSON (HTTP {status}): {body}")]
    NotJson {
        op: &'static str,
        url: String,
        status: u16,
        body: String,
    },
    #[error("{op}: GitHub answered with errors: {messages}")]
    GraphQl { op: &'static str, messages: String },
    #[error("{op}: the reply's data is not as asked: {why}")]
    Shape { op: &'static str, why: String },
    #[error("{op}: cannot reach {url}: {message} (after {attempts} attempt(s))")]
    Transport {
        op: &'static str,
        url: String,
        message: String,
        attempts: u32,
    },
    #[error("{op}: still rate-limited after {attempts} attempts; run again later")]
    StillLimited { op: &'static str, attempts: u32 },
}

/// What a query gave: its `data`, and the errors GitHub listed beside it (a `NOT_FOUND`
/// repository comes as `null` data and an error).
#[derive(Debug)]
pub struct Reply {
    pub data: Value,
    pub errors: Vec<GqlError>,
}

/// One entry of a reply's `errors`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct GqlError {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// A wait the client chose, for the command to tell the user.
#[derive(Debug, Clone)]
pub struct Wait {
    pub op: &'static str,
    pub why: String,
    pub wait: Duration,
}

/// The requests made and the points they cost.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub requests: u64,
    pub cost: u64,
    pub waited: Duration,
}

/// The primary budget as last seen.
#[derive(Debug, Clone, Copy)]
struct Budget {
    remaining: u64,
    /// Unix seconds.
    reset_at: i64,
}

/// The client.
pub struct GitHub {
    http: reqwest::Client,
    url: String,
    token: ApiKey,
    budget: Option<Budget>,
    pub stats: Stats,
    /// Told of every wait (the command prints it).
    pub on_wait: Box<dyn Fn(&Wait)>,
}

impl GitHub {
    /// A client of `url` with `token`; each request may take `timeout`.
    pub fn new(url: &str, token: ApiKey, timeout: Duration) -> Result<GitHub, BuildError> {
        let http = reqwest::Client::builder()
            // A redirect would take the token's header to wherever it points.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .user_agent(concat!("repoprobe/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(GitHub {
            http,
            url: url.to_string(),
            token,
            budget: None,
            stats: Stats::default(),
            on_wait: Box::new(|_| {}),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs query `op` (its text and variables) to data, waiting out the rate limits; errors
    /// without data are [`GhError::GraphQl`], 502/504 [`GhError::Gateway`].
    pub async fn query(
        &mut self,
        op: &'static str,
        query: &str,
        variables: Value,
    ) -> Result<Reply, GhError> {
        let body = json!({"query": query, "variables": variables, "operationName": op});
        let body = body.to_string();
        let mut secondary = 0u32;
        let mut transient = 0u32;
        for attempt in 1..=MAX_ATTEMPTS {
            if let Some(b) = self.budget
                && b.remaining == 0
            {
                let wait = until(b.reset_at);
                if !wait.is_zero() {
                    self.wait(op, "the rate limit's points are spent".into(), wait)
                        .await;
                }
                self.budget = None;
            }
            let sent = self
                .http
                .post(&self.url)
                .header("authorization", format!("bearer {}", self.token.expose()))
                .header("content-type", "application/json")
                .header("accept", "application/json")
                .body(body.clone())
                .send()
                .await;
            self.stats.requests += 1;
            let response = match sent {
                Ok(r) => r,
                Err(e) => {
                    transient += 1;
                    if attempt == MAX_ATTEMPTS {
                        return Err(GhError::Transport {
                            op,
                            url: self.url.clone(),
                            message: self.token.scrub(&error_chain(&e)),
                            attempts: attempt,
                        });
                    }
                    self.wait(op, "the connection failed".into(), backoff(transient))
                        .await;
                    continue;
                }
            };
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::trim)
            };
            let remaining = header("x-ratelimit-remaining").and_then(|v| v.parse::<u64>().ok());
            let reset = header("x-ratelimit-reset").and_then(|v| v.parse::<i64>().ok());
            if let (Some(remaining), Some(reset_at)) = (remaining, reset) {
                self.budget = Some(Budget {
                    remaining,
                    reset_at,
                });
            }
            let retry_after = header("retry-after").and_then(parse_retry_after);
            let text = match read_body(response).await {
                Ok(t) => t,
                Err(e) => {
                    transient += 1;
                    if attempt == MAX_ATTEMPTS {
                        return Err(GhError::Transport {
                            op,
                            url: self.url.clone(),
                            message: self.token.scrub(&e),
                            attempts: attempt,
                        });
                    }
                    self.wait(op, "the reply was cut off".into(), backoff(transient))
                        .await;
                    continue;
                }
            };
            let cut = |t: &str| cut(&self.token.scrub(t));
            match status {
                200..=299 => {}
                401 => {
                    return Err(GhError::Unauthorized {
                        op,
                        url: self.url.clone(),
                        status,
                        body: cut(&text),
                    });
                }
                403 | 429 => {
                    let primary_spent = remaining == Some(0);
                    let (why, wait) = if primary_spent {
                        let wait = retry_after
                            .or(reset.map(until))
                            .unwrap_or(SECONDARY_BACKOFF);
                        (format!("HTTP {status}: the rate limit is spent"), wait)
                    } else {
                        secondary += 1;
                        let why = match retry_after {
                            Some(_) => {
                                format!("HTTP {status}: a secondary rate limit (retry-after)")
                            }
                            None => format!("HTTP {status}: a secondary rate limit"),
                        };
                        (
                            why,
                            retry_after.unwrap_or_else(|| secondary_backoff(secondary)),
                        )
                    };
                    let wait = wait.min(MAX_WAIT);
                    if attempt == MAX_ATTEMPTS {
                        return Err(GhError::Status {
                            op,
                            url: self.url.clone(),
                            status,
                            attempts: attempt,
                            body: cut(&text),
                        });
                    }
                    self.wait(op, why, wait).await;
                    continue;
                }
                502 | 504 => {
                    return Err(GhError::Gateway {
                        op,
                        url: self.url.clone(),
                        status,
                    });
                }
                500..=599 => {
                    transient += 1;
                    if attempt == MAX_ATTEMPTS {
                        return Err(GhError::Status {
                            op,
                            url: self.url.clone(),
                            status,
                            attempts: attempt,
                            body: cut(&text),
                        });
                    }
                    self.wait(op, format!("HTTP {status}"), backoff(transient))
                        .await;
                    continue;
                }
                _ => {
                    return Err(GhError::Status {
                        op,
                        url: self.url.clone(),
                        status,
                        attempts: attempt,
                        body: cut(&text),
                    });
                }
            }
            let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(&text) else {
                return Err(GhError::NotJson {
                    op,
                    url: self.url.clone(),
                    status,
                    body: cut(&text),
                });
            };
            let errors: Vec<GqlError> = match reply.remove("errors") {
                Some(Value::Array(a)) => a
                    .into_iter()
                    .map(|e| {
                        serde_json::from_value(e).unwrap_or(GqlError {
                            kind: None,
                            message: "(an error of another shape)".into(),
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if errors
                .iter()
                .any(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
            {
                let wait = reset
                    .or(self.budget.map(|b| b.reset_at))
                    .map(until)
                    .filter(|w| !w.is_zero())
                    .unwrap_or(SECONDARY_BACKOFF);
                self.budget = None;
                if attempt == MAX_ATTEMPTS {
                    return Err(GhError::StillLimited {
                        op,
                        attempts: attempt,
                    });
                }
                self.wait(op, "RATE_LIMITED: the hour's points are spent".into(), wait)
                    .await;
                continue;
            }
            let data = reply.remove("data").unwrap_or(Value::Null);
            if let Some(rate) = data.get("rateLimit") {
                let cost = rate.get("cost").and_then(Value::as_u64);
                let remaining = rate.get("remaining").and_then(Value::as_u64);
                let reset_at = rate
                    .get("resetAt")
                    .and_then(Value::as_str)
                    .and_then(repoprobe_core::curate::date::parse_utc);
                self.stats.cost += cost.unwrap_or(0);
                if let (Some(remaining), Some(reset_at)) = (remaining, reset_at) {
                    // The next query costs at least as much as this one: wait when it would not fit.
                    let left = remaining.saturating_sub(cost.unwrap_or(1).saturating_sub(1));
                    self.budget = Some(Budget {
                        remaining: if left == 0 { 0 } else { remaining },
                        reset_at,
                    });
                }
            }
            if data.is_null() || !data.is_object() {
                let messages = if errors.is_empty() {
                    "no data and no error".to_string()
                } else {
                    describe(&errors)
                };
                return Err(GhError::GraphQl {
                    op,
                    messages: cut(&messages),
                });
            }
            return Ok(Reply { data, errors });
        }
        Err(GhError::StillLimited {
            op,
            attempts: MAX_ATTEMPTS,
        })
    }

    async fn wait(&mut self, op: &'static str, why: String, wait: Duration) {
        (self.on_wait)(&Wait { op, why, wait });
        self.stats.waited += wait;
        tokio::time::sleep(wait).await;
    }
}

/// The errors of a reply in one line.
pub fn describe(errors: &[GqlError]) -> String {
    errors
        .iter()
        .map(|e| match &e.kind {
            Some(k) => format!("{k}: {}", e.message),
            None => e.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn cut(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(ERROR_BODY_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    repoprobe_core::report::terminal_safe_lines(&out)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

async fn read_body(mut response: reqwest::Response) -> Result<String, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(format!("the reply is over {} MiB", MAX_BODY >> 20));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Seconds since 1970, now.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// From now until `reset_at` (Unix seconds) and one second more (the reset is rounded down),
/// capped at [`MAX_WAIT`]; zero when it is past.
fn until(reset_at: i64) -> Duration {
    let secs = reset_at - unix_now();
    if secs < 0 {
        return Duration::ZERO;
    }
    Duration::from_secs(secs as u64 + 1).min(MAX_WAIT)
}

/// `retry-after`: seconds (an HTTP date is taken as a minute: GitHub sends seconds).
fn parse_retry_after(v: &str) -> Option<Duration> {
    match v.parse::<u64>() {
        Ok(s) => Some(Duration::from_secs(s)),
        Err(_) => Some(SECONDARY_BACKOFF),
    }
}

/// The wait after the `n`th secondary limit without `retry-after`: a minute, doubling, at most
/// 16 minutes.
fn secondary_backoff(n: u32) -> Duration {
    SECONDARY_BACKOFF * 2u32.pow(n.saturating_sub(1).min(4))
}

/// The wait after the `n`th transient failure: 1 s doubling, at most a minute.
fn backoff(n: u32) -> Duration {
    Duration::from_secs(2u64.pow(n.saturating_sub(1).min(6))).min(Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secondary_limit_without_retry_after_waits_at_least_a_minute() {
        assert_eq!(secondary_backoff(1), Duration::from_secs(60));
        assert_eq!(secondary_backoff(2), Duration::from_secs(120));
        assert_eq!(secondary_backoff(50), Duration::from_secs(960));
        assert!((1..20).all(|n| secondary_backoff(n) >= SECONDARY_BACKOFF));
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(SECONDARY_BACKOFF)
        );
    }

    #[test]
    fn a_reset_in_the_past_needs_no_wait_and_one_far_away_is_capped() {
        assert_eq!(until(unix_now() - 10), Duration::ZERO);
        assert_eq!(until(unix_now() + 1_000_000), MAX_WAIT);
        let w = until(unix_now() + 5);
        assert!(
            w >= Duration::from_secs(5) && w <= Duration::from_secs(6),
            "{w:?}"
        );
    }

    fn client(url: &str) -> GitHub {
        let token = ApiKey::for_test("ghp_unit_test_token_123");
        GitHub::new(url, token, Duration::from_secs(10)).unwrap()
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn a_spent_budget_in_rate_limit_makes_the_next_request_wait_for_the_reset() {
        use repoprobe_test_support::{FakeServer, Response};
        let arrivals = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = std::sync::Arc::clone(&arrivals);
        let server = FakeServer::start(move |req| {
            assert_eq!(
                req.header("authorization"),
                Some("bearer ghp_unit_test_token_123")
            );
            seen.lock().unwrap().push(std::time::Instant::now());
            let reset = repoprobe_core::curate::date::format_utc(unix_now() + 1);
            Response::json(
                200,
                json!({"data": {"rateLimit": {"cost": 1, "remaining": 0, "resetAt": reset}}})
                    .to_string(),
            )
        });
        let mut gh = client(&server.origin());
        let waits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let w = std::sync::Arc::clone(&waits);
        gh.on_wait = Box::new(move |wait| w.lock().unwrap().push(wait.why.clone()));
        rt().block_on(async {
            gh.query(
                "Q",
                "query Q { rateLimit { cost remaining resetAt } }",
                json!({}),
            )
            .await
            .unwrap();
            gh.query(
                "Q",
                "query Q { rateLimit { cost remaining resetAt } }",
                json!({}),
            )
            .await
            .unwrap();
        });
        let t = arrivals.lock().unwrap();
        assert_eq!(t.len(), 2);
        assert!(
            t[1] - t[0] >= Duration::from_millis(900),
            "{:?}",
            t[1] - t[0]
        );
        assert_eq!(waits.lock().unwrap().len(), 1);
        assert_eq!((gh.stats.requests, gh.stats.cost), (2, 2));
    }

    #[test]
    fn a_redirect_is_not_followed_and_errors_never_carry_the_token() {
        use repoprobe_test_support::{FakeServer, Response};
        let server = FakeServer::start(|_| {
            Response::json(307, "moved; your token ghp_unit_test_token_123 is bad")
                .header("location", "http://127.0.0.1:9/elsewhere")
        });
        let mut gh = client(&server.origin());
        let e = rt()
            .block_on(gh.query("Q", "query Q { viewer { login } }", json!({})))
            .unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("Q: HTTP 307 from"), "{text}");
        assert!(!text.contains("ghp_unit_test_token_123"), "{text}");
        assert_eq!(server.hits(), 1);
    }
}
