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
//! - **failures of the moment** (no connection, a reply cut off, 408, 409, a 5xx but 502/504):
//!   tried again after 1 s, doubling, at most a minute (`POLICY`). Which statuses, the backoff,
//!   `retry-after` and the loop are the llm crate's shared policy (`repoprobe_llm::retry`): every
//!   wait between attempts is made there; this crate only says what an attempt came to.
//! - **502/504** (GitHub's answer to a query too slow to finish) are handed back as
//!   [`GhError::Gateway`]; the paged queries ([`queries`]) then ask again with half the page,
//!   down to one node.
//!
//! Nothing here knows the stages: [`queries`] holds the query texts and the reply types. It
//! must not parse flags, print (waits are told through [`GitHub::on_wait`]), read a token from
//! anywhere but the caller's [`ApiKey`], follow a redirect, or send two requests at once.

pub mod queries;

use repoprobe_llm::retry::{self, Attempt, RetryAfter};
use repoprobe_llm::{ApiKey, BuildError};
use repoprobe_text::text::terminal_safe_lines;
use repoprobe_text::text::{cut, error_chain};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use std::cell::Cell;
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

/// What every request needs: the HTTP client, the endpoint and the token.
struct Api {
    http: reqwest::Client,
    url: String,
    token: ApiKey,
}

impl Api {
    /// A reply's text as an error keeps it: scrubbed of the token whole, then cut, then made
    /// safe to print.
    fn excerpt(&self, text: &str) -> String {
        terminal_safe_lines(&cut(&self.token.scrub(text), ERROR_BODY_CHARS))
    }
}

/// The client.
pub struct GitHub {
    api: Api,
    budget: Option<Budget>,
    pub stats: Stats,
    /// Told of every wait (the command prints it).
    pub on_wait: Box<dyn Fn(&Wait)>,
}

/// The retries of a query: [`MAX_ATTEMPTS`] in all, rate-limit waits included; a transient
/// failure (no connection, a reply cut off, a 5xx but 502/504) backed off 1 s, doubling, at most
/// a minute, without jitter (one client, one request at a time); no wait over [`MAX_WAIT`].
const POLICY: retry::Policy = retry::Policy {
    retries: MAX_ATTEMPTS - 1,
    backoff: retry::Backoff {
        base: Duration::from_secs(1),
        max: Duration::from_secs(60),
        jitter: false,
    },
    max_wait: MAX_WAIT,
};

/// The wait after a secondary limit without `retry-after`: a minute ([`SECONDARY_BACKOFF`]),
/// doubling, at most 16 minutes; never less than GitHub's minimum, so no jitter.
const SECONDARY: retry::Backoff = retry::Backoff {
    base: SECONDARY_BACKOFF,
    max: Duration::from_secs(16 * 60),
    jitter: false,
};

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
            api: Api {
                http,
                url: url.to_string(),
                token,
            },
            budget: None,
            stats: Stats::default(),
            on_wait: Box::new(|_| {}),
        })
    }

    pub fn url(&self) -> &str {
        &self.api.url
    }

    /// Runs query `op` (its text and variables) to data, waiting out the rate limits (the
    /// shared retry loop, `POLICY`); errors without data are [`GhError::GraphQl`], 502/504
    /// [`GhError::Gateway`].
    pub async fn query(
        &mut self,
        op: &'static str,
        query: &str,
        variables: Value,
    ) -> Result<Reply, GhError> {
        let body = json!({"query": query, "variables": variables, "operationName": op});
        let body = body.to_string();
        let attempts = Attempts {
            api: &self.api,
            budget: Cell::from_mut(&mut self.budget),
            stats: Cell::from_mut(&mut self.stats),
            on_wait: &*self.on_wait,
            op,
            body: &body,
            secondary: Cell::new(0),
        };
        retry::run(
            &POLICY,
            |made| attempts.attempt(made + 1),
            |r| attempts.waiting(r.why.to_string(), r.wait),
        )
        .await
    }
}

/// The attempts of one query and what they share: the connection, the limits as last seen, the
/// counts, the secondary limits met so far (in cells: each attempt's future shares them, see
/// [`retry::run`]).
struct Attempts<'a> {
    api: &'a Api,
    budget: &'a Cell<Option<Budget>>,
    stats: &'a Cell<Stats>,
    on_wait: &'a dyn Fn(&Wait),
    op: &'static str,
    body: &'a str,
    secondary: Cell<u32>,
}

/// A reply as read whole.
struct Replied {
    status: u16,
    limits: Limits,
    text: String,
}

/// The limits a reply's headers state.
struct Limits {
    /// `x-ratelimit-remaining`.
    remaining: Option<u64>,
    /// `x-ratelimit-reset`, Unix seconds.
    reset: Option<i64>,
    retry_after: Option<Duration>,
}

impl Limits {
    fn of(headers: &HeaderMap) -> Limits {
        fn number<T: std::str::FromStr>(headers: &HeaderMap, name: &str) -> Option<T> {
            let value = headers.get(name)?.to_str().ok()?;
            value.trim().parse().ok()
        }
        Limits {
            remaining: number(headers, "x-ratelimit-remaining"),
            reset: number(headers, "x-ratelimit-reset"),
            retry_after: retry_after(headers),
        }
    }
}

/// Why a query got no whole reply: its variant in a few words (the retry's note), and the
/// transport's own words, scrubbed of the token (the error's message).
#[derive(Debug, thiserror::Error)]
enum Unsent {
    #[error("the connection failed")]
    Connection(String),
    #[error("the reply was cut off")]
    CutOff(String),
}

impl Unsent {
    fn into_words(self) -> String {
        match self {
            Unsent::Connection(w) | Unsent::CutOff(w) => w,
        }
    }
}

impl Attempts<'_> {
    /// Attempt number `attempt` (from 1): a spent budget waited out, the request sent, its
    /// reply read to data or to what another attempt may fix.
    async fn attempt(&self, attempt: u32) -> Attempt<Reply, GhError> {
        self.wait_for_budget().await;
        let replied = match self.send().await {
            Ok(replied) => replied,
            Err(unsent) => {
                return Attempt::Retry {
                    wait: None,
                    why: unsent.to_string(),
                    error: GhError::Transport {
                        op: self.op,
                        url: self.api.url.clone(),
                        message: unsent.into_words(),
                        attempts: attempt,
                    },
                };
            }
        };
        if (200..300).contains(&replied.status) {
            self.read(&replied, attempt)
        } else {
            self.refused(&replied, attempt)
        }
    }

    /// When the last reply said no point is left, the wait until the reset.
    async fn wait_for_budget(&self) {
        let Some(budget) = self.budget.get() else {
            return;
        };
        if budget.remaining > 0 {
            return;
        }
        let wait = until(budget.reset_at);
        if !wait.is_zero() {
            self.waiting("the rate limit's points are spent".into(), wait);
            tokio::time::sleep(wait).await;
        }
        self.budget.set(None);
    }

    /// A wait about to be made, told and counted.
    fn waiting(&self, why: String, wait: Duration) {
        (self.on_wait)(&Wait {
            op: self.op,
            why,
            wait,
        });
        self.count(|s| s.waited += wait);
    }

    fn count(&self, f: impl FnOnce(&mut Stats)) {
        let mut stats = self.stats.get();
        f(&mut stats);
        self.stats.set(stats);
    }

    /// Sends the query and reads the reply whole: its status, limits and text; or why not.
    async fn send(&self) -> Result<Replied, Unsent> {
        let api = self.api;
        let sent = api
            .http
            .post(&api.url)
            .header("authorization", format!("bearer {}", api.token.expose()))
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(self.body.to_string())
            .send()
            .await;
        self.count(|s| s.requests += 1);
        let response = sent.map_err(|e| Unsent::Connection(api.token.scrub(&error_chain(&e))))?;
        let status = response.status().as_u16();
        let limits = Limits::of(response.headers());
        if let (Some(remaining), Some(reset_at)) = (limits.remaining, limits.reset) {
            self.budget.set(Some(Budget {
                remaining,
                reset_at,
            }));
        }
        let text = read_body(response)
            .await
            .map_err(|e| Unsent::CutOff(api.token.scrub(&e.to_string())))?;
        Ok(Replied {
            status,
            limits,
            text,
        })
    }

    /// A reply other than 2xx: the token refused, a rate limit waited out, a 502/504 handed
    /// back (the paged queries ask for less), other failures of the moment tried again.
    fn refused(&self, replied: &Replied, attempt: u32) -> Attempt<Reply, GhError> {
        let Replied {
            status,
            limits,
            text,
        } = replied;
        let status = *status;
        let (op, url, body) = (self.op, self.api.url.clone(), self.api.excerpt(text));
        match status {
            401 => Attempt::Fail(GhError::Unauthorized {
                op,
                url,
                status,
                body,
            }),
            502 | 504 => Attempt::Fail(GhError::Gateway { op, url, status }),
            _ => {
                let error = GhError::Status {
                    op,
                    url,
                    status,
                    attempts: attempt,
                    body,
                };
                if matches!(status, 403 | 429) {
                    let (why, wait) = self.rate_limited(status, limits);
                    Attempt::Retry {
                        wait: Some(wait),
                        why,
                        error,
                    }
                } else if retry::retryable(status) {
                    Attempt::Retry {
                        wait: None,
                        why: format!("HTTP {status}"),
                        error,
                    }
                } else {
                    Attempt::Fail(error)
                }
            }
        }
    }

    /// Why and how long to wait after a 403 or 429: until the reset when the primary budget is
    /// spent; else a secondary limit, for `retry-after` or the [`SECONDARY`] backoff.
    fn rate_limited(&self, status: u16, limits: &Limits) -> (String, Duration) {
        if limits.remaining == Some(0) {
            let wait = limits
                .retry_after
                .or(limits.reset.map(until))
                .unwrap_or(SECONDARY_BACKOFF);
            return (format!("HTTP {status}: the rate limit is spent"), wait);
        }
        let secondary = self.secondary.get();
        self.secondary.set(secondary + 1);
        match limits.retry_after {
            Some(wait) => (
                format!("HTTP {status}: a secondary rate limit (retry-after)"),
                wait,
            ),
            None => (
                format!("HTTP {status}: a secondary rate limit"),
                SECONDARY.delay(secondary),
            ),
        }
    }

    /// A 2xx reply read to its data: `RATE_LIMITED` waited out (GitHub's answer over the limit
    /// is a 200), the `rateLimit` it reports kept for the next request, no data an error.
    fn read(&self, replied: &Replied, attempt: u32) -> Attempt<Reply, GhError> {
        let Replied {
            status,
            limits,
            text,
        } = replied;
        let (op, status) = (self.op, *status);
        let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(text) else {
            return Attempt::Fail(GhError::NotJson {
                op,
                url: self.api.url.clone(),
                status,
                body: self.api.excerpt(text),
            });
        };
        let errors = gql_errors(reply.remove("errors"));
        if errors
            .iter()
            .any(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
        {
            let wait = limits
                .reset
                .or(self.budget.get().map(|b| b.reset_at))
                .map(until)
                .filter(|w| !w.is_zero())
                .unwrap_or(SECONDARY_BACKOFF);
            self.budget.set(None);
            return Attempt::Retry {
                wait: Some(wait),
                why: "RATE_LIMITED: the hour's points are spent".into(),
                error: GhError::StillLimited {
                    op,
                    attempts: attempt,
                },
            };
        }
        let data = reply.remove("data").unwrap_or(Value::Null);
        self.note_rate_limit(&data);
        if !data.is_object() {
            let messages = if errors.is_empty() {
                "no data and no error".to_string()
            } else {
                describe(&errors)
            };
            return Attempt::Fail(GhError::GraphQl {
                op,
                messages: self.api.excerpt(&messages),
            });
        }
        Attempt::Done(Reply { data, errors })
    }

    /// The points the query cost and what is left (`rateLimit`): the next query waits for the
    /// reset when it would not fit, as it costs at least as much as this one.
    fn note_rate_limit(&self, data: &Value) {
        let Some(rate) = data.get("rateLimit") else {
            return;
        };
        let cost = rate.get("cost").and_then(Value::as_u64);
        let remaining = rate.get("remaining").and_then(Value::as_u64);
        let reset_at = rate
            .get("resetAt")
            .and_then(Value::as_str)
            .and_then(repoprobe_text::date::parse_utc);
        self.count(|s| s.cost += cost.unwrap_or(0));
        if let (Some(remaining), Some(reset_at)) = (remaining, reset_at) {
            let left = remaining.saturating_sub(cost.unwrap_or(1).saturating_sub(1));
            self.budget.set(Some(Budget {
                remaining: if left == 0 { 0 } else { remaining },
                reset_at,
            }));
        }
    }
}

/// A reply's `errors`, each read as far as it goes.
fn gql_errors(errors: Option<Value>) -> Vec<GqlError> {
    let Some(Value::Array(errors)) = errors else {
        return Vec::new();
    };
    errors
        .into_iter()
        .map(|e| {
            serde_json::from_value(e).unwrap_or(GqlError {
                kind: None,
                message: "(an error of another shape)".into(),
            })
        })
        .collect()
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

/// Why a reply's body was not read whole (the token scrubbed from its words by the caller).
#[derive(Debug, thiserror::Error)]
enum BodyError {
    /// The body stopped coming.
    #[error("{}", error_chain(.0))]
    Broke(reqwest::Error),
    /// More than [`MAX_BODY`].
    #[error("the reply is over {} MiB", MAX_BODY >> 20)]
    TooLarge,
}

async fn read_body(mut response: reqwest::Response) -> Result<String, BodyError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Broke)? {
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(BodyError::TooLarge);
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

/// The server's `retry-after` (the shared reading); one that is not seconds (an HTTP date) is
/// taken as a minute: GitHub sends seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    match retry::retry_after(headers)? {
        RetryAfter::Wait(wait) => Some(wait),
        RetryAfter::Unread => Some(SECONDARY_BACKOFF),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secondary_limit_without_retry_after_waits_at_least_a_minute() {
        assert_eq!(SECONDARY.delay(0), Duration::from_secs(60));
        assert_eq!(SECONDARY.delay(1), Duration::from_secs(120));
        assert_eq!(SECONDARY.delay(49), Duration::from_secs(960));
        assert!((0..20).all(|n| SECONDARY.delay(n) >= SECONDARY_BACKOFF));
        let mut h = HeaderMap::new();
        h.insert("retry-after", "3".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(SECONDARY_BACKOFF));
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
            let reset = repoprobe_text::date::format_utc(unix_now() + 1);
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
            for _ in 0..2 {
                let q = "query Q { rateLimit { cost remaining resetAt } }";
                gh.query("Q", q, json!({})).await.unwrap();
            }
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
    fn failures_of_the_moment_and_secondary_limits_are_waited_out_by_the_shared_loop() {
        use repoprobe_test_support::{FakeServer, Response};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let n = std::sync::Arc::new(AtomicUsize::new(0));
        let seen = std::sync::Arc::clone(&n);
        let server = FakeServer::start(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
            0 => Response::json(500, "busy"),
            1 => Response::json(429, "slow down").header("retry-after", "0"),
            _ => Response::json(200, json!({"data": {"viewer": {"login": "x"}}}).to_string()),
        });
        let mut gh = client(&server.origin());
        let waits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let w = std::sync::Arc::clone(&waits);
        gh.on_wait = Box::new(move |wait| w.lock().unwrap().push((wait.why.clone(), wait.wait)));
        let reply = rt()
            .block_on(gh.query("Q", "query Q { viewer { login } }", json!({})))
            .unwrap();
        assert_eq!(reply.data["viewer"]["login"], "x");
        assert_eq!(
            *waits.lock().unwrap(),
            [
                ("HTTP 500".to_string(), Duration::from_secs(1)),
                (
                    "HTTP 429: a secondary rate limit (retry-after)".to_string(),
                    Duration::ZERO
                ),
            ]
        );
        assert_eq!(
            (gh.stats.requests, gh.stats.waited),
            (3, Duration::from_secs(1))
        );
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
