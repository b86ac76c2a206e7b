//! The run loop shared by every live call (`judge`, `judge-scalar`, `classify-failures`,
//! `make-checklist`): for each key not yet done, ask the model, check the reply with the core,
//! re-ask with the violations up to `--max-retries` times, and write the outcome as soon as it
//! is known — a record to `--out`, or a failure record (`"status": "failed"`, the reason, the
//! violations, the last raw reply) to the failures journal. At most `--concurrency` calls are in
//! flight; every record carries the prompt version, provider, structured-output mode, token
//! usage and raw reply.
//!
//! A command supplies its flags ([`LiveArgs`], flattened into its own), its keys and a [`Task`]
//! per key (the prompt, the reply schema and the core's check), and writes its own success
//! records; everything else is here.

pub mod batch;
pub mod events;
pub mod progress;
pub mod tally;

use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use crate::output::{Journal, KeyOf, failures_path};
pub use crate::shard::Shard;
use anyhow::{Context, bail};
use events::{Event, Reporter};
use repoprobe_core::protocol::Protocol;
use repoprobe_core::{Dataset, LoadOptions};
use repoprobe_llm::price::Price;
use repoprobe_llm::{
    ApiKey, CallError, Client, Message, Provider, Role, Settings, Structured, Tokens,
};
use serde::Serialize;
use serde_json::value::RawValue;
use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
pub use tally::Tally;

/// The flags of every live call: the model's API, the run's files and limits, and how replies
/// are checked and sent.
#[derive(Debug, clap::Args)]
pub struct LiveArgs {
    #[command(flatten)]
    pub api: ApiArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Re-asks after an invalid reply (the violations are sent back), before the key fails.
    #[arg(long, default_value_t = 2)]
    pub max_retries: u32,
    /// How the reply shape is imposed [default: schema for openai, tool for anthropic].
    #[arg(long, value_enum)]
    pub structured: Option<StructuredFlag>,
    /// Send the requests through the provider's batch API (OpenAI Batch, Anthropic Message
    /// Batches: half price, results within 24 h) instead of live calls. The batch id is kept in
    /// `<out>.batch.json` until its results are merged, so a rerun resumes it.
    #[arg(long)]
    pub batch: bool,
    /// Seconds between two polls of a batch.
    #[arg(long, default_value_t = 30.0)]
    pub poll_s: f64,
}

/// The model and its API (shared by the judges and `answer --agent builtin`).
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// API family; the key is read from OPENAI_API_KEY or ANTHROPIC_API_KEY.
    #[arg(long, value_enum)]
    pub provider: Option<ProviderFlag>,
    /// The model, as the API (or agent CLI) names it; also the `judge`, `classifier` or `model`
    /// of every record.
    #[arg(long)]
    pub model: String,
    /// API base URL [default: https://api.openai.com/v1 or https://api.anthropic.com].
    #[arg(long)]
    pub base_url: Option<String>,
    /// Retries of one call after a transient HTTP failure (408, 409, 429, 5xx, 529, network).
    #[arg(long, default_value_t = 6)]
    pub max_http_retries: u32,
    /// First backoff delay in milliseconds; it doubles with each retry (up to 60 s), with
    /// jitter, unless the server sends `retry-after(-ms)`.
    #[arg(long, default_value_t = 1000)]
    pub backoff_ms: u64,
    /// Sampling temperature (omitted from requests when not given).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Sampling seed, for APIs that take one (OpenAI-compatible).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output token limit [default: the API's; 4096 for Anthropic, which requires one].
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// Requests per minute at most (on top of what the server's rate-limit headers say).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rpm: Option<u64>,
    /// Tokens per minute at most (input + output; a request is charged an estimate up front and
    /// settled when its usage comes back).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub tpm: Option<u64>,
}

/// `--provider`: the client's [`Provider`] as the command line names it (the client knows no
/// flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderFlag {
    /// OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, gateways).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

impl From<ProviderFlag> for Provider {
    fn from(f: ProviderFlag) -> Provider {
        match f {
            ProviderFlag::Openai => Provider::Openai,
            ProviderFlag::Anthropic => Provider::Anthropic,
        }
    }
}

/// `--structured`: the client's [`Structured`] mode as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StructuredFlag {
    /// A JSON Schema response format (OpenAI `response_format`, Anthropic `output_config`).
    Schema,
    /// A forced tool call whose input schema is the reply schema.
    Tool,
    /// No schema field: the schema is only described in the prompt (servers without structured
    /// outputs); the caller's validation is the only guard.
    Prompt,
}

impl From<StructuredFlag> for Structured {
    fn from(f: StructuredFlag) -> Structured {
        match f {
            StructuredFlag::Schema => Structured::Schema,
            StructuredFlag::Tool => Structured::Tool,
            StructuredFlag::Prompt => Structured::Prompt,
        }
    }
}

/// The files and limits of a long run (shared by every live call and `answer`).
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The output journal (JSONL, appended to; a rerun skips the keys already in it).
    #[arg(long)]
    pub out: PathBuf,
    /// Where keys that could not be done are recorded [default: <out>.failures.ndjson].
    #[arg(long)]
    pub failures: Option<PathBuf>,
    /// Keys worked on at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// Run only shard I of N (`0/4` … `3/4`): each key belongs to one shard by a hash of its
    /// name, so machines given the same inputs split a run; `repoprobe bundle` merges their outputs.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Price of a million input tokens in USD, for the cost estimate [default: a small table of
    /// list prices by model name; none if the model is not in it].
    #[arg(long)]
    pub price_in: Option<f64>,
    /// Price of a million output tokens in USD (see --price-in).
    #[arg(long)]
    pub price_out: Option<f64>,
}

impl ApiArgs {
    /// Checks the flags and reads the key (from the environment only); `structured` is the
    /// reply mode, or `None` for the provider's default.
    pub fn settings(&self, structured: Option<Structured>) -> anyhow::Result<(Settings, ApiKey)> {
        let Some(provider) = self.provider.map(Provider::from) else {
            bail!("--provider is required: openai (any OpenAI-compatible server) or anthropic");
        };
        let key_env = provider.key_env();
        let Some(key) = ApiKey::from_env(key_env) else {
            bail!(
                "{key_env} is not set: the {} key is read from that environment variable only",
                provider.as_str()
            );
        };
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            bail!("--timeout-s must be a positive number of seconds");
        }
        if self.temperature.is_some_and(|t| !t.is_finite() || t < 0.0) {
            bail!("--temperature must be a non-negative number");
        }
        let settings = Settings {
            provider,
            base_url: self
                .base_url
                .clone()
                .unwrap_or_else(|| provider.default_base_url().to_string()),
            model: self.model.clone(),
            structured: structured.unwrap_or_else(|| provider.default_structured()),
            temperature: self.temperature,
            seed: self.seed,
            max_tokens: self.max_tokens,
            max_http_retries: self.max_http_retries,
            backoff: Duration::from_millis(self.backoff_ms),
            timeout: Duration::from_secs_f64(self.timeout_s),
            rpm: self.rpm,
            tpm: self.tpm,
        };
        Ok((settings, key))
    }
}

impl RunArgs {
    /// Opens `--out` (locked) and the failures journal beside it, printing what opening found.
    pub fn journals<K: Eq + std::hash::Hash>(
        &self,
        key_of: KeyOf<K>,
        kind: &str,
    ) -> anyhow::Result<(Journal<K>, Journal<K>)> {
        let failures_path = self
            .failures
            .clone()
            .unwrap_or_else(|| failures_path(&self.out));
        let out = Journal::open(&self.out, key_of)?;
        let failures = Journal::open_beside(&failures_path, key_of)?;
        out.report(kind);
        failures.report("failure");
        Ok((out, failures))
    }

    /// The price in force for `model` (see [`Price::of`]).
    pub fn price(&self, model: &str) -> Option<Price> {
        Price::of(model, self.price_in, self.price_out)
    }
}

/// What one key asks: the prompt, the reply schema and the check of a reply.
///
/// A command names the key and the core's [`Protocol`] of its call (prompt, schema, check,
/// re-ask: one implementation each, in the core); the rest is provided here.
pub trait Task: Send + 'static {
    /// The record key; serialised at the head of its failure record.
    type Key: Clone + Display + Serialize + Send + 'static;
    /// What a valid reply gives, for the command's record.
    type Value: Send + 'static;
    /// The core's protocol of this key's call, borrowing the task's inputs.
    type Protocol<'a>: Protocol
    where
        Self: 'a;
    fn key(&self) -> &Self::Key;
    fn protocol(&self) -> Self::Protocol<'_>;
    /// The record's value from the protocol's checked reply (with what the task adds to it).
    fn value(&self, reply: <Self::Protocol<'_> as Protocol>::Reply) -> Self::Value;

    /// The system message and first user message; with `describe_schema` (prompt-only JSON
    /// mode) the user message spells out the schema.
    fn prompt(&self, describe_schema: bool) -> (String, String) {
        let p = self.protocol().prompt(describe_schema);
        (p.system, p.user)
    }
    /// The reply schema's name and JSON text (key order kept).
    fn schema(&self) -> (&'static str, String) {
        (
            <Self::Protocol<'_> as Protocol>::REPLY_NAME,
            self.protocol().reply_schema_json(),
        )
    }
    /// What the forced tool records (tool mode).
    fn tool_description(&self) -> &'static str {
        <Self::Protocol<'_> as Protocol>::TOOL_DESCRIPTION
    }
    /// The core's check of a reply: the value, or one message per violation.
    fn check(&self, reply: &str) -> Result<Self::Value, Vec<String>> {
        let checked = self.protocol().parse_reply(reply)?;
        Ok(self.value(checked))
    }
    /// The message sent back after an invalid reply.
    fn reask(&self, violations: &[String]) -> String {
        self.protocol().reask_message(violations)
    }
}

/// Token usage of one key, as written on its record.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct UsageOut {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub calls: u32,
    pub retries: u32,
}

/// The provenance every record of a live call carries after its own fields.
#[derive(Serialize)]
pub struct Provenance<'a> {
    pub prompt_version: &'a str,
    pub provider: &'a str,
    pub structured: &'a str,
    pub usage: UsageOut,
    pub raw_reply: &'a str,
}

/// A line of the failures journal: the key, `"status": "failed"` and why. Never a result.
#[derive(Serialize)]
struct FailureRecord<'a, K> {
    #[serde(flatten)]
    key: &'a K,
    status: &'a str,
    reason: &'a str,
    violations: &'a [String],
    prompt_version: &'a str,
    provider: &'a str,
    structured: &'a str,
    usage: UsageOut,
    raw_reply: Option<&'a str>,
}

/// How a key ended.
pub(super) struct Outcome<K, V> {
    pub key: K,
    pub result: Result<(V, String), Failed>,
    pub http_retries: u32,
    pub reasks: u32,
    pub calls: u32,
    pub tokens: Tokens,
}

pub(super) struct Failed {
    pub reason: String,
    pub violations: Vec<String>,
    pub raw_reply: Option<String>,
}

/// A live call about to run: the client, the two journals and the loop's limits.
pub struct Live<K> {
    pub(super) client: Arc<Client>,
    pub out: Journal<K>,
    pub(super) failures: Journal<K>,
    pub(super) concurrency: usize,
    pub(super) max_retries: u32,
    pub(super) prompt_version: &'static str,
    pub(super) started: Instant,
    pub(super) shard: Option<Shard>,
    pub(super) price: Option<Price>,
    /// `--batch`: the poll interval.
    batch: Option<Duration>,
}

impl LiveArgs {
    /// Checks the flags and the key (from the environment only) before anything is read.
    pub fn settings(&self) -> anyhow::Result<(Settings, ApiKey)> {
        if !(self.poll_s.is_finite() && self.poll_s >= 0.0) {
            bail!("--poll-s must be a non-negative number of seconds");
        }
        self.api.settings(self.structured.map(Structured::from))
    }

    /// The model named by `--model`.
    pub fn model(&self) -> &str {
        &self.api.model
    }

    /// Opens both journals (repairing a torn last line, reading the keys done) and builds the
    /// client. `kind` names the records in messages.
    pub fn start<K: Eq + std::hash::Hash>(
        &self,
        (settings, key): (Settings, ApiKey),
        key_of: KeyOf<K>,
        kind: &str,
        prompt_version: &'static str,
    ) -> anyhow::Result<Live<K>> {
        let (out, failures) = self.run.journals(key_of, kind)?;
        Ok(Live {
            client: Arc::new(Client::new(settings, key)?),
            out,
            failures,
            concurrency: self.run.concurrency as usize,
            max_retries: self.max_retries,
            prompt_version,
            started: Instant::now(),
            shard: self.run.shard,
            price: self.run.price(&self.api.model).map(|p| {
                // Both providers charge half for batches; given prices are taken as they are.
                let listed = self.run.price_in.is_none() && self.run.price_out.is_none();
                if self.batch && listed { p.halved() } else { p }
            }),
            batch: self.batch.then(|| Duration::from_secs_f64(self.poll_s)),
        })
    }
}

/// Loads input files that the core reads (benchmark, answers, judgments), printing every issue;
/// returns the dataset and whether any record was left out.
pub fn load_inputs(paths: &[PathBuf]) -> anyhow::Result<(Dataset, bool)> {
    let loaded = load_paths(paths, LoadOptions::default());
    print_issues(&loaded);
    if loaded.has_unusable_input() {
        bail!("an input file could not be read (see above)");
    }
    Ok((loaded.dataset, !loaded.issues.is_empty()))
}

impl<K: Clone + Display + Serialize + Send + Eq + std::hash::Hash + 'static> Live<K> {
    /// Whether `key` is already in `--out`.
    pub fn is_done(&self, key: &K) -> bool {
        self.out.done.contains(key)
    }

    /// Runs every task with at most `--concurrency` in flight (or through the batch API with
    /// `--batch`); `write` appends the record of a
    /// key whose reply was valid (its value, then the provenance to flatten into it).
    pub fn run<T, W>(&mut self, tasks: Vec<T>, mut write: W) -> anyhow::Result<Tally>
    where
        T: Task<Key = K>,
        W: FnMut(&mut Journal<K>, &K, T::Value, Provenance<'_>) -> anyhow::Result<()>,
    {
        if let Some(poll) = self.batch {
            return self.run_batch(tasks, write, poll);
        }
        let (tasks, other_shards) = self.mine(tasks);
        let mut reporter = self.reporter(other_shards);
        let client = Arc::clone(&self.client);
        let max_retries = self.max_retries;
        // Made as they are started: a run holds the futures in flight only.
        let jobs = tasks
            .into_iter()
            .map(|task| ask(Arc::clone(&client), task, max_retries));
        run_jobs(self.concurrency, jobs, &mut reporter, |o, reporter| {
            self.record(o, &mut write, reporter)
        })?;
        Ok(reporter.into_tally())
    }

    /// The reporter of this run: the bar shows the client's rate-limit waits.
    pub(super) fn reporter(&self, other_shards: usize) -> Reporter {
        let client = Arc::clone(&self.client);
        Reporter::new(self.price, other_shards, move || client.limiter().paused())
    }

    /// Writes how a key ended: its record to `--out` or a failure record, and reports it.
    pub(super) fn record<V, W>(
        &mut self,
        o: Outcome<K, V>,
        write: &mut W,
        reporter: &mut Reporter,
    ) -> anyhow::Result<()>
    where
        W: FnMut(&mut Journal<K>, &K, V, Provenance<'_>) -> anyhow::Result<()>,
    {
        let s = self.client.settings();
        let (provider, structured) = (s.provider.as_str(), s.structured.as_str());
        reporter.on(Event::Spent {
            calls: o.calls,
            http_retries: o.http_retries,
            reasks: o.reasks,
            tokens: o.tokens,
        });
        let usage = UsageOut {
            input_tokens: o.tokens.input_tokens,
            output_tokens: o.tokens.output_tokens,
            calls: o.calls,
            retries: o.http_retries + o.reasks,
        };
        match o.result {
            Ok((value, raw_reply)) => {
                let p = Provenance {
                    prompt_version: self.prompt_version,
                    provider,
                    structured,
                    usage,
                    raw_reply: &raw_reply,
                };
                write(&mut self.out, &o.key, value, p)?;
                reporter.on(Event::Done {
                    key: &o.key,
                    note: None,
                });
            }
            Err(f) => {
                self.failures.append(&FailureRecord {
                    key: &o.key,
                    status: "failed",
                    reason: &f.reason,
                    violations: &f.violations,
                    prompt_version: self.prompt_version,
                    provider,
                    structured,
                    usage,
                    raw_reply: f.raw_reply.as_deref(),
                })?;
                reporter.on(Event::Failed {
                    key: &o.key,
                    reason: &f.reason,
                    violations: &f.violations,
                });
            }
        }
        Ok(())
    }

    /// This shard's tasks (all of them without `--shard`) and how many were left to the others.
    pub(super) fn mine<T: Task<Key = K>>(&self, tasks: Vec<T>) -> (Vec<T>, usize) {
        let (mine, others): (Vec<T>, Vec<T>) = tasks
            .into_iter()
            .partition(|t| self.shard.is_none_or(|s| s.owns(t.key())));
        (mine, others.len())
    }

    /// Prints the one-line summary and returns the exit code: 0 when every key is done, 1 when
    /// some failed or input records were left out. `skipped` lists extra counts
    /// ("1 answer(s) skipped (error set)").
    pub fn finish(
        &self,
        command: &str,
        verb: &str,
        already_done: usize,
        skipped: &[String],
        tally: &Tally,
        input_issues: bool,
    ) -> Exit {
        Summary {
            command,
            verb,
            already_done,
            skipped,
            failures: &self.failures.path,
            shard: self.shard,
            price: self.price,
            started: self.started,
        }
        .print(tally, input_issues)
    }
}

/// The closing line of a long run.
pub struct Summary<'a> {
    pub command: &'a str,
    pub verb: &'a str,
    pub already_done: usize,
    pub skipped: &'a [String],
    pub failures: &'a std::path::Path,
    pub shard: Option<Shard>,
    pub price: Option<Price>,
    pub started: Instant,
}

impl Summary<'_> {
    /// Prints the summary and returns the exit code: 0 when every key is done, 1 when some
    /// failed or input records were left out.
    pub fn print(&self, tally: &Tally, input_issues: bool) -> Exit {
        eprintln!("{}", self.line(tally, self.started.elapsed()));
        if tally.failed > 0 || input_issues {
            Exit::InvalidRecords
        } else {
            Exit::Ok
        }
    }

    /// The summary's one line, for a run that took `elapsed`.
    pub fn line(&self, tally: &Tally, elapsed: Duration) -> String {
        let mut skipped: String = self.skipped.iter().map(|s| format!(", {s}")).collect();
        if let Some(shard) = self.shard {
            skipped.push_str(&format!(
                ", {} left to the other shards (this is shard {shard})",
                tally.other_shards
            ));
        }
        let cost = match self.price {
            Some(p) => format!("; ≈${:.2} estimated", p.cost(tally.tokens)),
            None => String::new(),
        };
        format!(
            "{}: {} {}, {} already done{skipped}, {} failed{}; \
             {} retries ({} HTTP, {} re-asks); {} calls; tokens {} in, {} out{cost}; {:.1} s",
            self.command,
            tally.done,
            self.verb,
            self.already_done,
            tally.failed,
            if tally.failed > 0 {
                format!(
                    " (see {}; a rerun tries them again)",
                    self.failures.display()
                )
            } else {
                String::new()
            },
            tally.http_retries + tally.reasks,
            tally.http_retries,
            tally.reasks,
            tally.calls,
            tally.tokens.input_tokens,
            tally.tokens.output_tokens,
            elapsed.as_secs_f64(),
        )
    }
}

/// The run loop of every long run (`judge` and the other live calls, `answer`): `jobs` with at
/// most `concurrency` in flight, each outcome handed to `record` (which writes it and reports
/// it) as soon as it is ready; the start, the waits and the end reported to `reporter`.
pub fn run_jobs<F, O>(
    concurrency: usize,
    jobs: impl ExactSizeIterator<Item = F>,
    reporter: &mut Reporter,
    mut record: impl FnMut(O, &mut Reporter) -> anyhow::Result<()>,
) -> anyhow::Result<()>
where
    F: std::future::Future<Output = O> + Send + 'static,
    O: Send + 'static,
{
    reporter.on(Event::Started { total: jobs.len() });
    let ran = drive(concurrency, jobs, |finished| match finished {
        Some(o) => record(o, reporter),
        None => {
            reporter.on(Event::Waiting);
            Ok(())
        }
    });
    reporter.on(Event::Finished);
    ran
}

/// Runs `jobs` with at most `concurrency` in flight on one current-thread runtime, handing each
/// result to `finished` as soon as it is ready, and `None` every half second while none is (for
/// redrawing progress); the first error from `finished` stops the run. [`run_jobs`]'s engine.
fn drive<F, O>(
    concurrency: usize,
    jobs: impl IntoIterator<Item = F>,
    mut finished: impl FnMut(Option<O>) -> anyhow::Result<()>,
) -> anyhow::Result<()>
where
    F: std::future::Future<Output = O> + Send + 'static,
    O: Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let mut pending = jobs.into_iter();
        let mut running = tokio::task::JoinSet::new();
        loop {
            while running.len() < concurrency.max(1) {
                let Some(job) = pending.next() else { break };
                running.spawn(job);
            }
            let joined = tokio::select! {
                j = running.join_next() => j,
                () = tokio::time::sleep(Duration::from_millis(500)) => {
                    finished(None)?;
                    continue;
                }
            };
            match joined {
                None => return Ok(()),
                Some(Ok(o)) => finished(Some(o))?,
                Some(Err(e)) => bail!("a task stopped unexpectedly: {e}"),
            }
        }
    })
}

/// Does one key: ask, check, re-ask with the violations, up to `max_retries` re-asks.
async fn ask<T: Task>(client: Arc<Client>, task: T, max_retries: u32) -> Outcome<T::Key, T::Value> {
    let (system, user) = task.prompt(client.settings().structured == Structured::Prompt);
    let (schema_name, schema) = task.schema();
    let schema = RawValue::from_string(schema).expect("a reply schema is valid JSON");
    let mut messages = vec![Message {
        role: Role::User,
        content: user,
    }];
    let mut o = Outcome {
        key: task.key().clone(),
        result: Err(Failed {
            reason: String::new(),
            violations: Vec::new(),
            raw_reply: None,
        }),
        http_retries: 0,
        reasks: 0,
        calls: 0,
        tokens: Tokens::default(),
    };
    for asked in 0..=max_retries {
        let req = repoprobe_llm::Request {
            system: &system,
            messages: &messages,
            schema_name,
            schema: &schema,
            tool_description: task.tool_description(),
        };
        let mut retries = 0;
        let called = client.call(req, &mut retries).await;
        o.http_retries += retries;
        let reply = match called {
            Ok(r) => r,
            Err(e) => {
                let reason = match &e {
                    CallError::Status { status, .. } if (400..500).contains(status) => {
                        format!("the API refused the request: {e}")
                    }
                    _ => format!("the call failed: {e}"),
                };
                o.result = Err(Failed {
                    reason,
                    violations: Vec::new(),
                    raw_reply: None,
                });
                return o;
            }
        };
        o.calls += 1;
        o.tokens += reply.tokens;
        match task.check(&reply.text) {
            Ok(value) => {
                o.result = Ok((value, reply.text));
                return o;
            }
            Err(mut violations) => {
                violations.extend(reply.note);
                if asked < max_retries {
                    o.reasks += 1;
                    let said = if reply.text.trim().is_empty() {
                        "(an empty reply)".to_string()
                    } else {
                        reply.text.clone()
                    };
                    messages.push(Message {
                        role: Role::Assistant,
                        content: said,
                    });
                    messages.push(Message {
                        role: Role::User,
                        content: task.reask(&violations),
                    });
                }
                o.result = Err(Failed {
                    reason: format!("the reply was still invalid after {max_retries} re-ask(s)"),
                    violations,
                    raw_reply: Some(reply.text),
                });
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn summary<'a>(
        skipped: &'a [String],
        shard: Option<Shard>,
        price: Option<Price>,
    ) -> Summary<'a> {
        Summary {
            command: "judge",
            verb: "judged",
            already_done: 3,
            skipped,
            failures: Path::new("runs/judgments.failures.ndjson"),
            shard,
            price,
            started: Instant::now(),
        }
    }

    fn tally(failed: usize) -> Tally {
        Tally {
            done: 40,
            failed,
            http_retries: 2,
            reasks: 5,
            calls: 47,
            tokens: Tokens {
                input_tokens: 123_456,
                output_tokens: 7_890,
            },
            other_shards: 9,
        }
    }

    #[test]
    fn the_summary_of_a_clean_run() {
        let s = summary(&[], None, None);
        insta::assert_snapshot!(s.line(&tally(0), Duration::from_millis(12_345)));
    }

    #[test]
    fn the_summary_of_a_shard_with_failures_skips_and_a_price() {
        let skipped = ["2 answers without a checklist".to_string()];
        let s = summary(
            &skipped,
            Some("1/4".parse().unwrap()),
            Some(Price {
                input: 3.0,
                output: 15.0,
            }),
        );
        insta::assert_snapshot!(s.line(&tally(2), Duration::from_millis(600)));
    }

    #[test]
    fn the_exit_code_says_whether_every_key_is_done() {
        let s = summary(&[], None, None);
        assert_eq!(s.print(&tally(0), false), Exit::Ok);
        assert_eq!(s.print(&tally(0), true), Exit::InvalidRecords);
        assert_eq!(s.print(&tally(1), false), Exit::InvalidRecords);
    }
}
