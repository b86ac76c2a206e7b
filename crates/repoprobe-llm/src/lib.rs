//! A thin client of our own for the judge models: OpenAI-compatible Chat Completions and
//! Anthropic Messages over `reqwest` (rustls). We build and read the bodies ourselves because the
//! structured-output and rate-limit fields move between versions and servers, and because the
//! exact reply text is kept in every record.
//!
//! Transient failures (connection errors, timeouts, HTTP 408, 409, 429, 5xx and Anthropic's 529,
//! a 2xx whose body is not the API's JSON) are retried with exponential backoff and jitter,
//! honouring `retry-after-ms` and `retry-after`; a 429 saying the quota is exhausted and every
//! other 4xx are not. That policy is [`retry`], public so that the other HTTP clients (GitHub's)
//! share it, as every crate shares the core's `text` (`cut`, `error_chain`). No redirect is
//! followed (the key's headers never go to another host), and every body is scrubbed of keys
//! before it is cut into a message. Nothing here knows about checklists: the caller validates
//! replies. Nothing here parses flags or writes to the terminal: what a caller should hear
//! about comes back in the return values.
#![forbid(unsafe_code)]

pub mod anthropic;
pub mod batch;
pub mod chat;
pub mod context;
pub mod conversation;
pub mod key;
pub mod limit;
pub mod openai;
pub mod price;
pub mod reply;
pub mod retry;

pub use key::ApiKey;
pub use reply::ReplyError;

use repoprobe_text::text::{self, error_chain};
use retry::{Attempt, RetryAfter};
use serde::Serialize;
use serde_json::value::RawValue;
use std::time::Duration;

/// Longest wait we accept from a `retry-after` header; longer asks are capped.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);
/// Longest backoff between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How much of an error body is kept in a message.
const ERROR_BODY_CHARS: usize = 600;
/// Longest wait for a connection (within `--timeout-s`): a server that does not even accept is
/// told apart from one that is slow to reply, and retried sooner.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The API family spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, gateways).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl Provider {
    /// Every provider, in the order a list of them is shown: the one list of providers in the
    /// tree (the command line's `--provider` and a plan's `provider` take exactly these names).
    pub const ALL: [Provider; 2] = [Provider::Openai, Provider::Anthropic];

    /// The name a provider goes by, in flags, plans and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The provider of that name ([`Provider::as_str`]), exactly as written.
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// What the provider is, in a line (a flag's help shows it beside the name).
    pub fn description(self) -> &'static str {
        match self {
            Provider::Openai => {
                "OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, gateways)"
            }
            Provider::Anthropic => "Anthropic Messages",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Openai => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable the key is read from.
    pub fn key_env(self) -> &'static str {
        match self {
            Provider::Openai => key::OPENAI_API_KEY,
            Provider::Anthropic => key::ANTHROPIC_API_KEY,
        }
    }

    /// The structured-output mode used when none is asked for.
    pub fn default_structured(self) -> Structured {
        match self {
            Provider::Openai => Structured::Schema,
            Provider::Anthropic => Structured::Tool,
        }
    }
}

/// How the reply's shape is imposed on the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    /// A JSON Schema response format (OpenAI `response_format`, Anthropic `output_config`).
    Schema,
    /// A forced tool call whose input schema is the reply schema.
    Tool,
    /// No schema field: the schema is only described in the prompt (servers without structured
    /// outputs); the caller's validation is the only guard.
    Prompt,
}

impl Structured {
    pub fn as_str(self) -> &'static str {
        match self {
            Structured::Schema => "schema",
            Structured::Tool => "tool",
            Structured::Prompt => "prompt",
        }
    }
}

/// Who wrote a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation (plain text).
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// What to ask: a system prompt, the conversation so far, and the reply schema (JSON text,
/// sent verbatim so its key order is kept) with its name and, for the forced tool of tool mode
/// (Anthropic), what the tool records.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub schema_name: &'a str,
    pub schema: &'a RawValue,
    pub tool_description: &'a str,
}

/// Everything about the calls that does not change from one request to the next.
#[derive(Debug, Clone)]
pub struct Settings {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    pub structured: Structured,
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
    pub max_http_retries: u32,
    pub backoff: Duration,
    pub timeout: Duration,
    /// Our own budgets per minute (requests, tokens); `None`: only the server's headers.
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
}

/// Token counts as the API reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Tokens {
    fn add_assign(&mut self, o: Tokens) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// A model's reply: its text (the tool input's JSON text in tool mode) and what it cost.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub tokens: Tokens,
    /// Something the caller should add to a rejection (cut at the token limit, a refusal).
    pub note: Option<String>,
}

/// A call that did not produce a reply. Messages never contain the key (bodies are scrubbed).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("HTTP {status}{}: {body}", if *.retried > 0 { format!(" after {} retries", .retried) } else { String::new() })]
    Status {
        status: u16,
        body: String,
        retried: u32,
    },
    #[error("{message} (after {retried} retries)")]
    Transport { message: String, retried: u32 },
    /// The request cannot fit in the model's context as its server says it: never sent.
    #[error("{0}")]
    TooLong(String),
}

/// The HTTP client could not be made (its TLS backend did not start).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct BuildError(#[from] reqwest::Error);

/// A client for one provider, model and key.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    key: ApiKey,
    settings: Settings,
    limiter: std::sync::Arc<limit::Limiter>,
    /// The model's context as a self-served model's server says it, asked once.
    context: std::sync::Arc<tokio::sync::OnceCell<Option<u64>>>,
}

impl Client {
    pub fn new(settings: Settings, key: ApiKey) -> Result<Client, BuildError> {
        // No redirect is followed: a 3xx would carry the key's headers to another host (and
        // an API never redirects a POST); it is an error like any other 3xx.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout.min(CONNECT_TIMEOUT))
            .user_agent(concat!("repoprobe/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Client {
            http,
            key,
            limiter: std::sync::Arc::new(limit::Limiter::new(settings.rpm, settings.tpm)),
            context: Default::default(),
            settings,
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The rate limiter every request of this client waits on.
    pub fn limiter(&self) -> &limit::Limiter {
        &self.limiter
    }

    /// What a request with this body is charged against `--tpm` before its usage is known:
    /// its bytes / 4 (about a token each) plus the output limit.
    pub fn estimate(&self, body: &[u8]) -> u64 {
        body.len() as u64 / 4 + u64::from(self.settings.max_tokens.unwrap_or(0))
    }

    /// Removes the key from text that came from a server.
    pub fn scrub(&self, text: &str) -> String {
        self.key.scrub(text)
    }

    /// Sends one structured request, retrying transient failures; `retries` counts the retries
    /// made.
    pub async fn call(&self, req: Request<'_>, retries: &mut u32) -> Result<Reply, CallError> {
        let body = self.body(req)?;
        self.settled(body, retries, |bytes| self.reply(bytes), |r| r.tokens)
            .await
    }

    /// Sends one turn of a tool-calling conversation (the built-in agent's) as [`Client::call`]
    /// sends a structured request: the same retries, rate limits and key handling, the reply
    /// read by the provider's same parser, its text scrubbed of the key.
    pub async fn chat(
        &self,
        system: &str,
        tools: &[chat::ToolDef],
        messages: &[chat::ChatMessage],
        retries: &mut u32,
    ) -> Result<chat::Turn, CallError> {
        let body = chat::body(&self.settings, system, tools, messages).map_err(build_error)?;
        let provider = self.settings.provider;
        let mut turn = self
            .settled(
                body,
                retries,
                |bytes| chat::parse(provider, bytes),
                |t| t.tokens,
            )
            .await?;
        turn.text = self.scrub(&turn.text);
        Ok(turn)
    }

    /// [`Client::send`], then the tokens-per-minute budget charged what the reply really used
    /// instead of the estimate.
    async fn settled<T>(
        &self,
        body: Vec<u8>,
        retries: &mut u32,
        parse: impl Fn(&[u8]) -> Result<T, ReplyError>,
        tokens: impl Fn(&T) -> Tokens,
    ) -> Result<T, CallError> {
        let estimate = self.estimate(&body);
        let reply = self.send(body, retries, parse).await?;
        let used = tokens(&reply);
        self.limiter
            .settle(estimate, used.input_tokens + used.output_tokens);
        Ok(reply)
    }

    /// The request body of a structured call, as the live and the batch APIs take it.
    pub fn body(&self, req: Request<'_>) -> Result<Vec<u8>, CallError> {
        let s = &self.settings;
        match s.provider {
            Provider::Openai => openai::body(s, req),
            Provider::Anthropic => anthropic::body(s, req),
        }
        .map_err(build_error)
    }

    /// The reply in a 2xx body of a structured call (the key scrubbed from its text).
    pub fn reply(&self, bytes: &[u8]) -> Result<Reply, ReplyError> {
        let s = &self.settings;
        let mut reply = match s.provider {
            Provider::Openai => openai::reply(bytes, s.structured),
            Provider::Anthropic => anthropic::reply(bytes, s.structured),
        }?;
        reply.text = self.scrub(&reply.text);
        Ok(reply)
    }

    /// The provider's endpoint for one model call.
    pub fn url(&self) -> String {
        match self.settings.provider {
            Provider::Openai => openai::url(&self.settings.base_url),
            Provider::Anthropic => anthropic::url(&self.settings.base_url),
        }
    }

    /// POSTs `body` (the provider's JSON) to [`Client::url`], retrying transient failures; a
    /// 2xx body that `parse` rejects (a gateway's HTML page, a cut body) is retried too.
    /// `retries` counts the retries made. Every model call goes through here, so retry, backoff,
    /// rate limits and the key's handling live in one place.
    pub async fn send<T>(
        &self,
        body: Vec<u8>,
        retries: &mut u32,
        parse: impl Fn(&[u8]) -> Result<T, ReplyError>,
    ) -> Result<T, CallError> {
        self.fits(&body).await?;
        let url = self.url();
        let estimate = self.estimate(&body);
        self.exchange(
            |http| {
                http.post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
            },
            estimate,
            retries,
            parse,
        )
        .await
    }

    /// Any request to the provider's API (`build` makes it anew for each attempt), with the
    /// key's headers, the rate limiter (charged `estimate` tokens) and the retries of
    /// [`Client::send`]: the shared loop ([`retry::run`]), backing off from
    /// [`Settings::backoff`] with jitter, waiting what a server asks up to 5 minutes.
    pub async fn exchange<T>(
        &self,
        build: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
        estimate: u64,
        retries: &mut u32,
        parse: impl Fn(&[u8]) -> Result<T, ReplyError>,
    ) -> Result<T, CallError> {
        let s = &self.settings;
        let policy = retry::Policy {
            retries: s.max_http_retries,
            backoff: retry::Backoff {
                base: s.backoff,
                max: MAX_BACKOFF,
                jitter: true,
            },
            max_wait: MAX_RETRY_AFTER,
        };
        let (build, parse) = (&build, &parse);
        retry::run(
            &policy,
            move |made| self.attempt(build, estimate, parse, made),
            |_| *retries += 1,
        )
        .await
    }

    /// One attempt of [`Client::exchange`], `made` retries after the first: the rate limiter
    /// waited on, the request sent with the key's headers, the reply read and classified.
    async fn attempt<T>(
        &self,
        build: &impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
        estimate: u64,
        parse: &impl Fn(&[u8]) -> Result<T, ReplyError>,
        made: u32,
    ) -> Attempt<T, CallError> {
        self.limiter.acquire(estimate).await;
        let rb = build(&self.http);
        let rb = match self.settings.provider {
            _ if self.key.is_none() => match self.settings.provider {
                Provider::Openai => rb,
                Provider::Anthropic => rb.header("anthropic-version", anthropic::VERSION),
            },
            Provider::Openai => rb.header("authorization", format!("Bearer {}", self.key.expose())),
            Provider::Anthropic => rb
                .header("x-api-key", self.key.expose())
                .header("anthropic-version", anthropic::VERSION),
        };
        let resp = match rb.send().await {
            Ok(resp) => resp,
            Err(e) if e.is_timeout() && !e.is_connect() => return self.too_slow(&e, made),
            Err(e) => {
                return transient(
                    None,
                    "the connection failed",
                    self.scrub(&error_chain(&e)),
                    made,
                );
            }
        };
        let status = resp.status().as_u16();
        self.limiter.observe(resp.headers());
        let wait = match retry::retry_after(resp.headers()) {
            Some(RetryAfter::Wait(wait)) => Some(wait),
            // An HTTP date: our backoff applies.
            Some(RetryAfter::Unread) | None => None,
        };
        match resp.bytes().await {
            Err(e) if e.is_timeout() => self.too_slow(&e, made),
            Err(e) => transient(
                wait,
                "the reply was cut off",
                self.scrub(&error_chain(&e)),
                made,
            ),
            Ok(bytes) => self.classify(status, wait, &bytes, parse, made),
        }
    }

    /// The model's context, as a server the user runs says it (an OpenAI-compatible one
    /// called without a key: `/v1/models` for vLLM and llama.cpp, then llama.cpp's `/props`);
    /// asked once, `None` when it does not say or cannot be asked. Providers and gateways,
    /// which take a key, are not asked: their limits are theirs to enforce.
    pub async fn context(&self) -> Option<u64> {
        let s = &self.settings;
        if s.provider != Provider::Openai || !self.key.is_none() {
            return None;
        }
        *self
            .context
            .get_or_init(|| async {
                let models = format!("{}/models", s.base_url.trim_end_matches('/'));
                if let Some(n) = self
                    .get(&models)
                    .await
                    .and_then(|b| context::from_models(&b, &s.model))
                {
                    return Some(n);
                }
                let props = format!("{}/props", context::root(&s.base_url));
                self.get(&props).await.and_then(|b| context::from_props(&b))
            })
            .await
    }

    /// A GET or POST of a side endpoint (models, props, tokenize), with the key's header: its
    /// 2xx body, or `None` for anything else. Once, within the connect timeout.
    async fn side(&self, rb: reqwest::RequestBuilder) -> Option<Vec<u8>> {
        let rb = if self.key.is_none() {
            rb
        } else {
            rb.header("authorization", format!("Bearer {}", self.key.expose()))
        };
        let resp = rb.timeout(CONNECT_TIMEOUT).send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.bytes().await.ok().map(|b| b.to_vec())
    }

    async fn get(&self, url: &str) -> Option<Vec<u8>> {
        self.side(self.http.get(url)).await
    }

    /// `Err` when the request surely cannot fit in the server's context: counted by the
    /// server's tokenizer when its size says it may not (see [`context`]). Anything unknown
    /// (no context said, no tokenizer) lets it go: the server's own refusal then says why.
    async fn fits(&self, body: &[u8]) -> Result<(), CallError> {
        let Some(ctx) = self.context().await else {
            return Ok(());
        };
        let max_tokens = self.settings.max_tokens;
        if !context::may_not_fit(body.len(), max_tokens, ctx) {
            return Ok(());
        }
        let Some(text) = context::prompt_text(body) else {
            return Ok(());
        };
        let url = format!("{}/tokenize", context::root(&self.settings.base_url));
        let rb = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(context::tokenize_body(&self.settings.model, &text));
        let Some(count) = self.side(rb).await.and_then(|b| context::token_count(&b)) else {
            return Ok(());
        };
        match context::overflow(count, max_tokens, ctx) {
            Some(why) => Err(CallError::TooLong(why)),
            None => Ok(()),
        }
    }

    /// A reply that did not come within `--timeout-s`: not retried. The same request to the
    /// same server takes as long again (a local model on a CPU, a reply that runs to the context's
    /// end without a token limit), so a retry would only multiply the silence; the key fails
    /// with the cause, and a rerun (or a larger `--timeout-s`, a smaller `--max-tokens`) retries
    /// it.
    fn too_slow<T>(&self, e: &reqwest::Error, made: u32) -> Attempt<T, CallError> {
        let limit = self.settings.timeout.as_secs_f64();
        Attempt::Fail(CallError::Transport {
            message: format!(
                "no reply within {limit} s (--timeout-s): the server is too slow for this \
                 request or stuck; raise --timeout-s, or lower --max-tokens so that a reply \
                 cannot run on ({})",
                self.scrub(&error_chain(e))
            ),
            retried: made,
        })
    }

    fn classify<T>(
        &self,
        status: u16,
        wait: Option<Duration>,
        bytes: &[u8],
        parse: &impl Fn(&[u8]) -> Result<T, ReplyError>,
        made: u32,
    ) -> Attempt<T, CallError> {
        let text = String::from_utf8_lossy(bytes);
        if (200..300).contains(&status) {
            return match parse(bytes) {
                Ok(r) => Attempt::Done(r),
                // A gateway's HTML page or a cut body: try again.
                Err(e) => transient(
                    wait,
                    "a body that is not the API's",
                    format!(
                        "HTTP {status} with a body that is not a {} response ({e}): {}",
                        self.settings.provider.as_str(),
                        excerpt(&self.scrub(&text))
                    ),
                    made,
                ),
            };
        }
        // Scrubbed whole, then cut: a key cut in two would no longer be found.
        let body = excerpt(&self.scrub(&text));
        if retry::retryable(status) && !(status == 429 && quota_exhausted(&text)) {
            transient(
                wait,
                &format!("HTTP {status}"),
                format!("HTTP {status}: {body}"),
                made,
            )
        } else {
            Attempt::Fail(CallError::Status {
                status,
                body,
                retried: made,
            })
        }
    }
}

/// An attempt worth another, after `wait` (`None`: the backoff), `made` retries in: `message`
/// is the error when none is left.
fn transient<T>(
    wait: Option<Duration>,
    why: &str,
    message: String,
    made: u32,
) -> Attempt<T, CallError> {
    Attempt::Retry {
        wait,
        why: why.to_string(),
        error: CallError::Transport {
            message,
            retried: made,
        },
    }
}

/// A request body that could not be serialised (never sent, so nothing was retried).
fn build_error(e: serde_json::Error) -> CallError {
    CallError::Transport {
        message: format!("cannot build the request: {e}"),
        retried: 0,
    }
}

/// A 429 that no amount of waiting fixes (OpenAI's `insufficient_quota`, spend caps).
fn quota_exhausted(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("insufficient_quota")
        || b.contains("exceeded your current quota")
        || b.contains("spend limit")
}

/// A body's text as an error keeps it: its first [`ERROR_BODY_CHARS`] characters, on one line.
/// The caller scrubs first.
fn excerpt(text: &str) -> String {
    text::cut(text, ERROR_BODY_CHARS).replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_test_support::{FakeServer, Fault, Response};

    #[test]
    fn every_provider_is_listed_once_and_found_by_its_exact_name() {
        for (i, p) in Provider::ALL.into_iter().enumerate() {
            assert_eq!(Provider::from_name(p.as_str()), Some(p));
            assert!(!Provider::ALL[..i].contains(&p), "{p:?} listed twice");
        }
        assert_eq!(Provider::from_name("OpenAI"), None);
        assert_eq!(Provider::from_name(""), None);
    }

    fn settings(base_url: String) -> Settings {
        Settings {
            provider: Provider::Anthropic,
            base_url,
            model: "m".into(),
            structured: Structured::Tool,
            temperature: None,
            seed: None,
            max_tokens: None,
            max_http_retries: 0,
            backoff: Duration::from_millis(1),
            timeout: Duration::from_secs(10),
            rpm: None,
            tpm: None,
        }
    }

    /// The request bytes of a structured call for each provider and mode, and of a built-in
    /// agent's chat: the wire format, byte for byte (key order included).
    #[test]
    fn request_bodies_are_their_snapshots() {
        let schema = RawValue::from_string(
            r#"{"type":"object","properties":{"k1":{"type":"integer"}},"required":["k1"]}"#.into(),
        )
        .unwrap();
        let messages = [
            Message {
                role: Role::User,
                content: "Grade this.".into(),
            },
            Message {
                role: Role::Assistant,
                content: "{}".into(),
            },
            Message {
                role: Role::User,
                content: "Your reply cannot be accepted.".into(),
            },
        ];
        let req = Request {
            system: "You grade.",
            messages: &messages,
            schema_name: "checklist_judgment",
            schema: &schema,
            tool_description: "Record the grading of every checklist item.",
        };
        let mut out = String::new();
        for provider in [Provider::Openai, Provider::Anthropic] {
            for structured in [Structured::Schema, Structured::Tool, Structured::Prompt] {
                let mut s = settings(String::new());
                s.provider = provider;
                s.structured = structured;
                s.temperature = Some(0.0);
                s.seed = Some(7);
                let body = match provider {
                    Provider::Openai => openai::body(&s, req),
                    Provider::Anthropic => anthropic::body(&s, req),
                }
                .unwrap();
                out.push_str(&format!(
                    "{} {}\n{}\n",
                    provider.as_str(),
                    structured.as_str(),
                    String::from_utf8(body).unwrap()
                ));
            }
            let s = Settings {
                provider,
                temperature: Some(0.0),
                seed: Some(7),
                ..settings(String::new())
            };
            let tools = [chat::ToolDef {
                name: "read_file".into(),
                description: "Read a file.".into(),
                input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }];
            let conversation = [
                chat::ChatMessage::User {
                    text: "Where is main?".into(),
                },
                chat::ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![chat::ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        input: serde_json::json!({"path": "src/main.rs"}),
                        invalid: None,
                    }],
                },
                chat::ChatMessage::ToolResults {
                    results: vec![chat::ToolResult {
                        id: "c1".into(),
                        content: "no such file".into(),
                        is_error: true,
                    }],
                },
            ];
            let body = chat::body(&s, "You explore.", &tools, &conversation).unwrap();
            out.push_str(&format!(
                "{} chat\n{}\n",
                provider.as_str(),
                String::from_utf8(body).unwrap()
            ));
        }
        insta::assert_snapshot!(out);
    }

    #[test]
    fn the_forced_tool_says_what_the_caller_says_it_records() {
        let schema = RawValue::from_string(r#"{"type":"object"}"#.into()).unwrap();
        let req = Request {
            system: "s",
            messages: &[],
            schema_name: "failure_mode",
            schema: &schema,
            tool_description: "Record the failure mode of the answer.",
        };
        let body: serde_json::Value =
            serde_json::from_slice(&anthropic::body(&settings(String::new()), req).unwrap())
                .unwrap();
        assert_eq!(body["tools"][0]["name"], "failure_mode");
        assert_eq!(
            body["tools"][0]["description"],
            "Record the failure mode of the answer."
        );
        assert_eq!(body["tool_choice"]["name"], "failure_mode");
        let mut openai = settings(String::new());
        openai.provider = Provider::Openai;
        let body: serde_json::Value =
            serde_json::from_slice(&openai::body(&openai, req).unwrap()).unwrap();
        assert_eq!(body["tools"][0]["function"]["name"], "failure_mode");
        assert_eq!(
            body["tools"][0]["function"]["description"],
            "Record the failure mode of the answer."
        );
    }

    #[test]
    fn a_redirect_is_not_followed_and_the_key_stays_home() {
        let elsewhere = FakeServer::start(|_| Response::new(200, "{}"));
        let to = format!("{}/steal", elsewhere.origin());
        let api = FakeServer::start(move |_| Response::new(307, "").header("location", &to));
        let client = Client::new(
            settings(api.origin()),
            ApiKey::for_test("sk-redirect-test-1"),
        )
        .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut retries = 0;
        let r = rt.block_on(client.send(b"{}".to_vec(), &mut retries, |b| Ok(b.to_vec())));
        match r {
            Err(CallError::Status { status, .. }) => assert_eq!(status, 307),
            other => panic!("{other:?}"),
        }
        assert_eq!(api.hits(), 1);
        assert_eq!(elsewhere.hits(), 0);
    }

    #[test]
    fn an_error_body_is_scrubbed_before_it_is_cut() {
        let key = "sk-cut-test-0123456789";
        // The key straddles the cut: cutting first would leave its head in the message.
        let body = format!("{}{key}", "x".repeat(ERROR_BODY_CHARS - 6));
        let api = FakeServer::start(move |_| Response::new(400, body.clone()));
        let client = Client::new(settings(api.origin()), ApiKey::for_test(key)).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut retries = 0;
        let err = rt
            .block_on(client.send(b"{}".to_vec(), &mut retries, |b| Ok(b.to_vec())))
            .unwrap_err()
            .to_string();
        assert!(!err.contains("sk-cut"), "{err}");
    }

    #[test]
    fn transient_faults_are_retried_and_an_exhausted_quota_is_not() {
        let api = FakeServer::start(|_| Response::json(200, "{}"));
        for fault in [Fault::RateLimited, Fault::ServerError, Fault::HtmlBody] {
            api.fault(fault);
        }
        let mut s = settings(api.origin());
        s.max_http_retries = 3;
        let client = Client::new(s, ApiKey::for_test("sk-retry-test-1")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let parse = |b: &[u8]| {
            serde_json::from_slice::<serde_json::Value>(b)
                .map(|_| ())
                .map_err(ReplyError::NotJson)
        };
        let mut retries = 0;
        rt.block_on(client.send(b"{}".to_vec(), &mut retries, parse))
            .unwrap();
        assert_eq!((retries, api.hits()), (3, 4));
        api.fault(Fault::QuotaExhausted);
        let mut retries = 0;
        match rt.block_on(client.send(b"{}".to_vec(), &mut retries, parse)) {
            Err(CallError::Status { status: 429, .. }) => assert_eq!(retries, 0),
            other => panic!("{other:?}"),
        }
    }

    /// A server that takes longer than the timeout is asked once, not once per retry: the
    /// silence of a stuck local model ends within one `--timeout-s`, with its cause.
    #[test]
    fn a_reply_slower_than_the_timeout_fails_at_once_with_its_cause() {
        let api = FakeServer::start(|_| {
            std::thread::sleep(Duration::from_millis(1500));
            Response::json(200, "{}")
        });
        let mut s = settings(api.origin());
        s.max_http_retries = 5;
        s.timeout = Duration::from_millis(300);
        let client = Client::new(s, ApiKey::for_test("sk-slow-test-1")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut retries = 0;
        let started = std::time::Instant::now();
        let err = rt
            .block_on(client.send(b"{}".to_vec(), &mut retries, |b| Ok(b.to_vec())))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no reply within 0.3 s (--timeout-s)"), "{err}");
        assert_eq!((retries, api.hits()), (0, 1));
        assert!(
            started.elapsed() < Duration::from_millis(1400),
            "{:?}",
            started.elapsed()
        );
    }

    /// A vLLM-like server serving a 2,048-token context: a prompt its tokenizer counts over
    /// it is refused before it is sent, with the numbers; one that fits is sent. Providers'
    /// clients (with a key) never ask.
    #[test]
    fn a_prompt_over_the_servers_context_is_refused_before_it_is_sent() {
        let paths = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let seen = std::sync::Arc::clone(&paths);
        let api = FakeServer::start(move |req| {
            seen.lock()
                .unwrap()
                .push(format!("{} {}", req.method, req.path));
            match req.path.as_str() {
                "/v1/models" => Response::json(
                    200,
                    r#"{"object":"list","data":[{"id":"m","max_model_len":2048}]}"#,
                ),
                // vLLM's reply: the count of what it was sent (a word a token here).
                "/tokenize" => {
                    let prompt = req.json()["prompt"].as_str().unwrap_or("").to_string();
                    let n = prompt.split_whitespace().count();
                    Response::json(200, format!(r#"{{"count":{n},"max_model_len":2048}}"#))
                }
                _ => Response::json(200, "{}"),
            }
        });
        let mut s = settings(format!("{}/v1", api.origin()));
        s.provider = Provider::Openai;
        s.max_tokens = Some(100);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let body = |words: usize| {
            serde_json::json!({"model": "m", "messages": [
                {"role": "user", "content": "word ".repeat(words)}]})
            .to_string()
            .into_bytes()
        };
        let send = |client: &Client, b: Vec<u8>| {
            let mut retries = 0;
            rt.block_on(client.send(b, &mut retries, |b| Ok(b.to_vec())))
        };
        let local = Client::new(s.clone(), ApiKey::none()).unwrap();
        match send(&local, body(3000)) {
            Err(CallError::TooLong(why)) => {
                assert!(why.contains("3000 tokens"), "{why}");
                assert!(why.contains("context of 2048 tokens"), "{why}");
                assert!(why.contains("--max-tokens 100"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // 1,990 + 100 over 2,048: the reply's budget does not fit either.
        assert!(matches!(
            send(&local, body(1990)),
            Err(CallError::TooLong(_))
        ));
        // Small: not even counted; 900 words: counted, fits, sent.
        send(&local, body(10)).unwrap();
        send(&local, body(900)).unwrap();
        let asked = paths.lock().unwrap().clone();
        assert_eq!(
            asked,
            [
                "GET /v1/models",
                "POST /tokenize",
                "POST /tokenize",
                "POST /v1/chat/completions",
                "POST /tokenize",
                "POST /v1/chat/completions",
            ],
            "the context asked once, the big prompts counted, the two over it never sent"
        );
        // With a key (a provider, a gateway): nothing is asked, the request goes.
        paths.lock().unwrap().clear();
        let keyed = Client::new(s, ApiKey::for_test("sk-context-test-1")).unwrap();
        send(&keyed, body(3000)).unwrap();
        assert_eq!(*paths.lock().unwrap(), ["POST /v1/chat/completions"]);
    }
}
