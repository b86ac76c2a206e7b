//! `curate enhance`'s fetcher of a thread's external links: one page per link, as text for the
//! model, read as hostile input from a host a stranger chose (docs/security.md#fetching-external-links).
//!
//! - **http and https only**, at every hop; no user name or password in an address.
//! - **Every address connected to is checked** ([`repoprobe_curate::address::refusal`]):
//!   an IP-literal host before the request, a name's addresses in our resolver
//!   (`resolve::Resolver`), which refuses the lookup when any of them is refused — at the first
//!   request and at every redirect, which reqwest does not follow (`Policy::none()`): we do,
//!   at most [`FetchLimits::max_redirects`], each hop checked from scratch.
//! - **`--allow-host HOST:PORT`** ([`HostPort`]) is the only way past the check, exactly that
//!   host and port (tests serve pages on 127.0.0.1); nothing else, no variable, bypasses it.
//!   Allowed hosts go through a second client whose resolver knows only their names, so an
//!   allowed port of a name lends nothing to another port or name.
//! - **No proxy from the environment** (`no_proxy()`): `HTTP_PROXY` would dial for us, past the
//!   check. No cookies (reqwest keeps none without a store), no `Authorization` or credential of
//!   any kind (the GitHub token is the GitHub client's alone), no `Referer`, no retries.
//! - **Caps**: [`FetchLimits`]: the body's bytes (streamed, never more held), a timeout per hop
//!   (connect, headers and body) and one for connecting, redirects, and the text handed on.
//!
//! Nothing is printed: every outcome is a [`Fetched`], its `error` a sentence naming the URL.
//! It must not parse links (the core's `curate::links` does), send a credential, retry, or
//! connect to an address it has not checked.

mod host_port;
mod resolve;
#[cfg(test)]
mod tests;
mod text;

pub use host_port::{HostPort, allowed};

use repoprobe_curate::address::refusal;
use repoprobe_text::text::quote;
use repoprobe_text::text::{error_chain, prefix};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{Instant, timeout_at};
use url::{Host, Url};

/// The HTTP clients could not be made (their TLS backend did not start).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct BuildError(#[from] reqwest::Error);

/// Why a fetch gave no text, as [`Fetched::error`] says it (after the URL, see [`stopped`]).
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("only http and https are fetched, not {scheme}:")]
    Scheme { scheme: String },
    #[error("the address carries a user name or password, and credentials are never sent: refused")]
    Credentials,
    #[error("the address has no host")]
    NoHost,
    /// An IP-literal host that [`refusal`] refuses.
    #[error("{ip} is {why}: refused; {ONLY_ALLOW_HOST}")]
    Internal { ip: std::net::IpAddr, why: String },
    /// Our resolver refused the host's lookup.
    #[error("{}{}", .0, advice(.0))]
    Resolved(resolve::Refused),
    #[error("no complete answer within {secs} s (the timeout): given up")]
    TimedOut { secs: f64 },
    /// The request failed (no connection, TLS, a reply that is not HTTP).
    #[error("cannot fetch: {}", error_words(.0))]
    Request(reqwest::Error),
    #[error("HTTP {status}, a redirect without a Location header: no page to read")]
    NoLocation { status: u16 },
    #[error(
        "HTTP {status} redirects to {}, which is not a URL ({error})",
        quote(location)
    )]
    BadLocation {
        status: u16,
        location: String,
        error: url::ParseError,
    },
    #[error("more than {max} redirects (the cap): stopped before {}", quote(next.as_str()))]
    TooManyRedirects { max: u32, next: Url },
    #[error("HTTP {status}: no page to read")]
    Status { status: u16 },
    #[error("the reply has no Content-Type, so it is not known to be text: not read")]
    NoContentType,
    #[error("the content type {} is not text: not read", quote(content_type))]
    NotText { content_type: String },
    /// The body stopped coming (`why`: [`FetchError::TimedOut`] or [`FetchError::Read`]).
    #[error("the body broke off after {bytes} bytes: {why}")]
    BodyBroke { bytes: usize, why: Box<FetchError> },
    /// Reading the body failed.
    #[error("{}", error_words(.0))]
    Read(reqwest::Error),
    #[error("larger than {max} bytes (the cap): the first {read} bytes were read, no text kept")]
    TooLarge { max: u64, read: usize },
    #[error("cannot start a thread to read the page: {0}")]
    NoThread(std::io::Error),
    #[error("the page could not be turned into text ({0})")]
    NoText(html2text::Error),
    /// The HTML renderer panicked (its thread's panic is caught).
    #[error("the page could not be turned into text")]
    RendererPanicked,
}

/// What a refusal of our resolver adds: the way past it, for an address refused.
fn advice(r: &resolve::Refused) -> String {
    match r {
        resolve::Refused::Address { .. } => format!("; {ONLY_ALLOW_HOST}"),
        _ => String::new(),
    }
}

/// The fetcher's caps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchLimits {
    /// The most body bytes read (2 MiB): past it the page is "larger than" and has no text.
    pub max_bytes: u64,
    /// Each hop's time, from connecting to the body's last byte (20 s).
    pub timeout: Duration,
    /// Connecting's time (10 s).
    pub connect_timeout: Duration,
    /// Redirects followed (5); one more is an error.
    pub max_redirects: u32,
    /// Characters of text handed on (20,000); past it the text is cut and `text_cut` set.
    pub max_text_chars: usize,
}

impl Default for FetchLimits {
    fn default() -> FetchLimits {
        FetchLimits {
            max_bytes: 2 << 20,
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 5,
            max_text_chars: 20_000,
        }
    }
}

/// What became of one link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetched {
    /// The URL asked, as given.
    pub url: String,
    /// The URL of the last response (after redirects); absent when none came.
    pub final_url: Option<String>,
    /// The last response's status (a redirect's when the redirect was refused).
    pub status: Option<u16>,
    pub content_type: Option<String>,
    /// Body bytes read (at most [`FetchLimits::max_bytes`]); absent when the body was not read.
    pub bytes: Option<u64>,
    /// SHA-256 of the bytes read, lowercase hex.
    pub sha256: Option<String>,
    /// The page as text; absent when `error` says why.
    pub text: Option<String>,
    /// The text was cut at [`FetchLimits::max_text_chars`].
    pub text_cut: bool,
    /// Why there is no text: a sentence naming the URL.
    pub error: Option<String>,
}

/// The fetcher: two HTTP clients (checked, and allowed hosts only) and the caps. `Send + Sync`;
/// clones share the connection pools.
#[derive(Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

struct Inner {
    checked: reqwest::Client,
    allowed: reqwest::Client,
    allow: Vec<HostPort>,
    limits: FetchLimits,
}

/// Most characters of a request's error kept.
const ERROR_CHARS: usize = 400;
/// Most characters of a content type kept.
const CONTENT_TYPE_CHARS: usize = 200;
/// The message's advice on a refused address.
const ONLY_ALLOW_HOST: &str = "internal addresses are never fetched (a test serving pages on loopback passes --allow-host HOST:PORT)";

impl Fetcher {
    /// A fetcher with `limits`, reaching past the address check only `allow`'s hosts and ports.
    pub fn new(limits: FetchLimits, allow: Vec<HostPort>) -> Result<Fetcher, BuildError> {
        let names = allow
            .iter()
            .filter_map(|a| a.name().map(str::to_ascii_lowercase))
            .collect();
        let checked = client(&limits, resolve::Resolver::Checked)?;
        let allowed = client(&limits, resolve::Resolver::Allowed(names))?;
        Ok(Fetcher {
            inner: Arc::new(Inner {
                checked,
                allowed,
                allow,
                limits,
            }),
        })
    }

    /// Fetches `url` (following redirects as the rules say) to a [`Fetched`]; never fails.
    pub async fn fetch(&self, url: &str) -> Fetched {
        let mut out = Fetched {
            url: url.to_string(),
            ..Fetched::default()
        };
        let mut current = match Url::parse(url.trim()) {
            Ok(u) => u,
            Err(e) => {
                out.error = Some(format!("{}: not a URL ({e})", quote(url)));
                return out;
            }
        };
        let mut redirects = 0u32;
        loop {
            match self.hop(&current, redirects, &mut out).await {
                Ok(Hop::Redirect(next)) => {
                    redirects += 1;
                    current = next;
                }
                Ok(Hop::Page) => return out,
                Err(why) => {
                    out.error = Some(stopped(url, &current, redirects, &why));
                    return out;
                }
            }
        }
    }

    /// One hop: `url` asked through the client its address allows, the response recorded in
    /// `out`; a redirect's target checked against the cap, else the page read. `redirects`:
    /// the hops before this one.
    async fn hop(&self, url: &Url, redirects: u32, out: &mut Fetched) -> Result<Hop, FetchError> {
        let client = self.route(url)?;
        let deadline = Instant::now() + self.inner.limits.timeout;
        let response = self.send(client, url, deadline).await?;
        let status = response.status().as_u16();
        out.final_url = Some(url.to_string());
        out.status = Some(status);
        out.content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|v| cut_chars(&String::from_utf8_lossy(v.as_bytes()), CONTENT_TYPE_CHARS));
        if matches!(status, 301 | 302 | 303 | 307 | 308) {
            let next = self.redirect(status, url, redirects, response.headers())?;
            return Ok(Hop::Redirect(next));
        }
        self.read_page(response, deadline, out).await?;
        Ok(Hop::Page)
    }

    /// The request of one hop, its headers awaited until `deadline`.
    async fn send(
        &self,
        client: &reqwest::Client,
        url: &Url,
        deadline: Instant,
    ) -> Result<reqwest::Response, FetchError> {
        let sent = client
            .get(url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, \
                 application/json;q=0.8, text/*;q=0.7",
            )
            .send();
        match timeout_at(deadline, sent).await {
            Err(_) => Err(self.timed_out()),
            Ok(Err(e)) => Err(self.transport(e)),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Where a redirect of `url` points, if it is a URL and one more redirect is allowed.
    fn redirect(
        &self,
        status: u16,
        url: &Url,
        redirects: u32,
        headers: &reqwest::header::HeaderMap,
    ) -> Result<Url, FetchError> {
        let Some(location) = headers.get(reqwest::header::LOCATION) else {
            return Err(FetchError::NoLocation { status });
        };
        let location = String::from_utf8_lossy(location.as_bytes()).into_owned();
        let next = match url.join(location.trim()) {
            Ok(next) => next,
            Err(error) => {
                return Err(FetchError::BadLocation {
                    status,
                    location,
                    error,
                });
            }
        };
        let max = self.inner.limits.max_redirects;
        if redirects == max {
            return Err(FetchError::TooManyRedirects { max, next });
        }
        Ok(next)
    }

    /// The page of a final response into `out`: a 2xx of a textual type, its body read within
    /// the byte cap by `deadline`, hashed, and turned into text (cut at the text cap).
    async fn read_page(
        &self,
        response: reqwest::Response,
        deadline: Instant,
        out: &mut Fetched,
    ) -> Result<(), FetchError> {
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(FetchError::Status { status });
        }
        let Some(content_type) = out.content_type.clone() else {
            return Err(FetchError::NoContentType);
        };
        let Some(kind) = text::kind_of(&content_type) else {
            return Err(FetchError::NotText { content_type });
        };
        let limits = &self.inner.limits;
        let body = timeout_at(deadline, self.read_body(response))
            .await
            .map_err(|_| self.timed_out())?;
        out.bytes = Some(body.bytes.len() as u64);
        out.sha256 = Some(hex(&Sha256::digest(&body.bytes)));
        if let Some(why) = body.broke {
            return Err(FetchError::BodyBroke {
                bytes: body.bytes.len(),
                why: Box::new(why),
            });
        }
        if body.over {
            return Err(FetchError::TooLarge {
                max: limits.max_bytes,
                read: body.bytes.len(),
            });
        }
        let mut text = page_text(body.bytes, content_type, kind).await?;
        let (kept, was_cut) = prefix(&text, limits.max_text_chars);
        text.truncate(kept.len());
        out.text = Some(text);
        out.text_cut = was_cut;
        Ok(())
    }

    /// The client that may ask for `url`, or why none may.
    fn route(&self, url: &Url) -> Result<&reqwest::Client, FetchError> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(FetchError::Scheme {
                scheme: cut_chars(scheme, 40),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(FetchError::Credentials);
        }
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return Err(FetchError::NoHost);
        };
        if self.inner.allow.iter().any(|a| a.matches(&host, port)) {
            return Ok(&self.inner.allowed);
        }
        let literal = match host {
            Host::Ipv4(ip) => Some(std::net::IpAddr::V4(ip)),
            Host::Ipv6(ip) => Some(std::net::IpAddr::V6(ip)),
            Host::Domain(_) => None,
        };
        if let Some(ip) = literal
            && let Some(why) = refusal(ip)
        {
            return Err(FetchError::Internal { ip, why });
        }
        Ok(&self.inner.checked)
    }

    fn timed_out(&self) -> FetchError {
        FetchError::TimedOut {
            secs: self.inner.limits.timeout.as_secs_f64(),
        }
    }

    /// A request's error: a refusal of our resolver as it is, a timeout, else the request's.
    fn transport(&self, e: reqwest::Error) -> FetchError {
        if let Some(r) = resolve::refused_in(&e) {
            return FetchError::Resolved(r);
        }
        if e.is_timeout() {
            return self.timed_out();
        }
        FetchError::Request(e)
    }

    /// The body, at most the cap, streamed.
    async fn read_body(&self, mut response: reqwest::Response) -> Body {
        let cap = usize::try_from(self.inner.limits.max_bytes).unwrap_or(usize::MAX);
        let mut body = Body::default();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = cap - body.bytes.len();
                    if chunk.len() > room {
                        body.bytes.extend_from_slice(&chunk[..room]);
                        body.over = true;
                        return body;
                    }
                    body.bytes.extend_from_slice(&chunk);
                }
                Ok(None) => return body,
                Err(e) => {
                    body.broke = Some(if e.is_timeout() {
                        self.timed_out()
                    } else {
                        FetchError::Read(e)
                    });
                    return body;
                }
            }
        }
    }
}

/// What a hop came to, short of an error.
enum Hop {
    /// A redirect to follow.
    Redirect(Url),
    /// The page, read into the [`Fetched`].
    Page,
}

/// Where a fetch of `asked` stopped and `why`: after redirects, the URL it had come to.
fn stopped(asked: &str, at: &Url, redirects: u32, why: &FetchError) -> String {
    if redirects == 0 {
        format!("{}: {why}", quote(asked))
    } else {
        format!(
            "{}: after {redirects} redirect(s), {}: {why}",
            quote(asked),
            quote(at.as_str())
        )
    }
}

/// A body as read.
#[derive(Default)]
struct Body {
    bytes: Vec<u8>,
    /// There was more than the cap.
    over: bool,
    /// Reading failed: why.
    broke: Option<FetchError>,
}

fn client(
    limits: &FetchLimits,
    resolver: resolve::Resolver,
) -> Result<reqwest::Client, BuildError> {
    Ok(reqwest::Client::builder()
        // Each hop is ours to check.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would connect for us, to addresses we never saw.
        .no_proxy()
        .dns_resolver(resolver)
        .referer(false)
        .retry(reqwest::retry::never())
        .timeout(limits.timeout)
        .connect_timeout(limits.connect_timeout)
        .user_agent(concat!("repoprobe/", env!("CARGO_PKG_VERSION")))
        .build()?)
}

/// The body as tidy text, off the runtime's thread: HTML is rendered on a thread of its own
/// with a deep stack, and a panic there is an error, not a crash.
async fn page_text(
    body: Vec<u8>,
    content_type: String,
    kind: text::Kind,
) -> Result<String, FetchError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("fetch-html".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let result = std::panic::catch_unwind(move || {
                let decoded = text::decode(&body, &content_type, kind);
                match kind {
                    text::Kind::Html => text::html_to_text(&decoded).map(|t| text::tidy(&t)),
                    text::Kind::Text => Ok(text::tidy(&decoded)),
                }
            });
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        return Err(FetchError::NoThread(e));
    }
    match rx.await {
        Ok(Ok(Ok(text))) => Ok(text),
        Ok(Ok(Err(e))) => Err(FetchError::NoText(e)),
        Ok(Err(_)) | Err(_) => Err(FetchError::RendererPanicked),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first `n` characters of `s` (no mark: these are values, not messages).
fn cut_chars(s: &str, n: usize) -> String {
    prefix(s, n).0.to_string()
}

/// A request's error and its causes, at most [`ERROR_CHARS`] characters.
fn error_words(e: &dyn std::error::Error) -> String {
    cut_chars(&error_chain(e), ERROR_CHARS)
}
