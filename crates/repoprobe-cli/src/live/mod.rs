//! The run loop shared by every live call (`judge`, `judge-scalar`, `classify-failures`,
//! `make-checklist`): for each key not yet done, ask the model, check the reply with the core,
//! re-ask with the violations up to `--max-retries` times, and write the outcome as soon as it
//! is known — a record to `--out`, or a failure record (`"status": "failed"` or
//! `"could_not_run"` with its `cause`, the reason, the violations, the last raw reply) to the
//! failures journal. At most `--concurrency` calls are in
//! flight; every record carries the prompt version, provider, structured-output mode, token
//! usage and raw reply.
//!
//! A command supplies its flags ([`LiveArgs`], flattened into its own), its keys and a [`Task`]
//! per key (the prompt, the reply schema and the core's check), and writes its own success
//! records; everything else is here.

pub mod agent;
pub mod batch;
pub mod estimate;
pub mod events;
pub mod progress;
mod run;
mod summary;
pub mod tally;
pub(crate) mod task;

use crate::input::{load_paths, print_issues};
use crate::output::{Journal, KeyOf};
use crate::run_files::Layout;
use crate::run_files::manifest::RunSpec;
pub use crate::shard::ShardArg;
use anyhow::{Context, bail};
use repoprobe_core::{Dataset, LoadOptions};
use repoprobe_llm::price::Price;
use repoprobe_llm::{ApiKey, Client, Provider, Settings, Structured};
pub use run::{Live, run_jobs};
use serde::Serialize;
use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
pub use summary::{Summary, could_not_run};

pub use run::runtime;
pub use tally::Tally;
pub use task::{Provenance, Task};

/// The flags of every live call: the model's API, the run's files and limits, and how replies
/// are checked and sent.
#[derive(Debug, Default, Clone, clap::Args)]
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
    /// Print the run's calls, tokens and cost (from the prompts it would send and the price in
    /// force) and exit: nothing is sent, no key is read, no file is written.
    #[arg(long)]
    pub estimate: bool,
}

impl LiveArgs {
    /// `--estimate`: the estimate of `tasks` printed, `done` keys already in `--out`.
    pub fn print_estimate<T: Task>(
        &self,
        command: &str,
        tasks: &[T],
        done: usize,
    ) -> std::io::Result<()> {
        self.api
            .one_model()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let describe_schema = self.structured.map(Structured::from) == Some(Structured::Prompt);
        let e = estimate::of_tasks(tasks, describe_schema);
        let price = self.run.price(self.api.model()).map(|p| {
            let listed = self.run.price_in.is_none() && self.run.price_out.is_none();
            if self.batch && listed { p.halved() } else { p }
        });
        let text = estimate::render(
            command,
            self.api.model(),
            e,
            done,
            price,
            estimate::PROMPT_BYTES,
        );
        crate::stdout::write(text.as_bytes())
    }

    /// The keys already in this shard's `--out`, for `--estimate`: read without creating,
    /// locking or repairing anything (a dry run writes no file).
    pub fn done_keys<K: Eq + std::hash::Hash>(
        &self,
        key_of: KeyOf<K>,
    ) -> anyhow::Result<std::collections::HashSet<K>> {
        crate::output::done_keys(&self.run.layout()?.out, key_of)
    }
}

/// The model and its API (shared by the judges and `answer --agent builtin`).
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ApiArgs {
    /// API family; the key is read from OPENAI_API_KEY or ANTHROPIC_API_KEY (see --key-env).
    #[arg(long, value_parser = provider_flag())]
    pub provider: Option<Provider>,
    /// The environment variable that holds this endpoint's key (a gateway's, a second
    /// account's) [default: OPENAI_API_KEY or ANTHROPIC_API_KEY by --provider; for an agent
    /// CLI, the variable it reads, which then gets this one's value]. Only the name is recorded.
    #[arg(long, value_name = "VAR", value_parser = env_name)]
    pub key_env: Option<String>,
    /// The model, as the API (or agent CLI) names it; also the `judge`, `classifier` or `model`
    /// of every record. `judge` takes it several times: one judge after the other, each into
    /// its own `--out` (which then holds `{model}`), for a panel (`score --panel`).
    #[arg(long, required = true, action = clap::ArgAction::Append)]
    pub model: Vec<String>,
    /// API base URL [default: https://api.openai.com/v1 or https://api.anthropic.com].
    #[arg(long)]
    pub base_url: Option<String>,
    /// Retries of one call after a transient HTTP failure (408, 409, 429, 5xx, 529, network).
    #[arg(long, default_value_t = 6)]
    pub max_http_retries: u32,
    /// First backoff delay in seconds; it doubles with each retry (up to 60 s), with jitter,
    /// unless the server sends `retry-after(-ms)`.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub backoff_s: f64,
    /// Sampling temperature (omitted from requests when not given).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// The model's sampling seed, for APIs that take one (OpenAI-compatible).
    #[arg(long)]
    pub sampling_seed: Option<u64>,
    /// Output token limit [default: the API's; 4096 for Anthropic, which requires one].
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// Per-request timeout in seconds: the whole reply, which a slow server is not asked for
    /// again (the key fails with the cause; a rerun retries it). Connecting has 10 s of it.
    #[arg(long, default_value_t = 300.0)]
    pub timeout_s: f64,
    /// The server needs no key (a local llama.cpp, vLLM, Ollama or SGLang server): none is read
    /// and no key header is sent. Only with --base-url: the providers' own APIs need a key.
    #[arg(long)]
    pub no_key: bool,
    /// Requests per minute at most (on top of what the server's rate-limit headers say); under
    /// `--shard auto` the whole run's, each shard taking 1/N.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rpm: Option<u64>,
    /// Tokens per minute at most (input + output; a request is charged an estimate up front and
    /// settled when its usage comes back); under `--shard auto` the whole run's, each shard
    /// taking 1/N.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub tpm: Option<u64>,
}

/// Most keys worked on at once: the one cap of `--concurrency` and of a plan's `concurrency`, so
/// a plan refuses before it runs what the command would refuse.
pub const MAX_CONCURRENCY: u32 = 1024;

/// `--provider`: the client's [`Provider`] by the names of [`Provider::ALL`], each with its
/// description as its help (the client knows no flags; the command line keeps no list of its own).
pub fn provider_flag() -> impl clap::builder::TypedValueParser<Value = Provider> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        Provider::ALL.map(|p| PossibleValue::new(p.as_str()).help(p.description())),
    )
    .map(|name| Provider::from_name(&name).expect("one of Provider::ALL's names"))
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
#[derive(Debug, Default, Clone, clap::Args)]
pub struct RunArgs {
    /// The output journal (JSONL, appended to; a rerun skips the keys already in it).
    #[arg(long)]
    pub out: PathBuf,
    /// Where keys that could not be done are recorded [default: <out>.failures.ndjson].
    #[arg(long)]
    pub failures: Option<PathBuf>,
    /// Keys worked on at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_CONCURRENCY)))]
    pub concurrency: u32,
    /// Run only shard I of N (`0/4` … `3/4`): each key belongs to one shard by a hash of its
    /// name, so machines given the same inputs split a run; `repoprobe merge` joins their
    /// outputs. `auto`: the index and count of this task of a Slurm job array
    /// (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job
    /// (JOB_COMPLETION_INDEX, the count from --shards or REPOPROBE_SHARDS); then --rpm and
    /// --tpm are the whole run's, each shard taking 1/N of them. `--out` may hold `{shard}`,
    /// replaced by e.g. `0003-of-0016`.
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<ShardArg>,
    /// The shard count of `--shard auto` in a Kubernetes Indexed Job (its `completions`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub shards: Option<u32>,
    /// Seconds the keys in flight get to finish after SIGTERM (no new key starts); the run then
    /// exits with 75, "run me again", and a rerun resumes.
    #[arg(long, default_value_t = 30.0)]
    pub grace_s: f64,
    /// Price of a million input tokens in USD, for the cost estimate [default: the list price of
    /// the model (`repoprobe-llm` price.rs); none if the model is not in it].
    #[arg(long)]
    pub price_in: Option<f64>,
    /// Price of a million output tokens in USD (see --price-in).
    #[arg(long)]
    pub price_out: Option<f64>,
}

impl ApiArgs {
    /// The model named by `--model` (the first, where a command takes several).
    pub fn model(&self) -> &str {
        self.model.first().map_or("", String::as_str)
    }

    /// The one model of a command that takes one: `--model` given twice is refused.
    pub fn one_model(&self) -> anyhow::Result<&str> {
        if self.model.len() > 1 {
            bail!(
                "--model is given {} times: only `judge` takes several (one judge after the \
                 other, for a panel)",
                self.model.len()
            );
        }
        Ok(self.model())
    }

    /// Checks the flags and reads the key (from the environment only); `structured` is the
    /// reply mode, or `None` for the provider's default.
    pub fn settings(&self, structured: Option<Structured>) -> anyhow::Result<(Settings, ApiKey)> {
        let model = self.one_model()?.to_string();
        let Some(provider) = self.provider else {
            bail!("--provider is required: openai (any OpenAI-compatible server) or anthropic");
        };
        let key = if self.no_key {
            if self.base_url.is_none() {
                bail!(
                    "--no-key needs --base-url: {} needs a key",
                    provider.default_base_url()
                );
            }
            ApiKey::none()
        } else {
            self.key(provider.key_env())?
        };
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            bail!("--timeout-s must be a positive number of seconds");
        }
        if !(0.0..=3600.0).contains(&self.backoff_s) {
            bail!("--backoff-s must be a number of seconds from 0 to 3600");
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
            model,
            structured: structured.unwrap_or_else(|| provider.default_structured()),
            temperature: self.temperature,
            seed: self.sampling_seed,
            max_tokens: self.max_tokens,
            max_http_retries: self.max_http_retries,
            backoff: Duration::from_secs_f64(self.backoff_s),
            timeout: Duration::from_secs_f64(self.timeout_s),
            rpm: self.rpm,
            tpm: self.tpm,
        };
        Ok((settings, key))
    }
}

/// `--key-env`: an environment variable's name (letters, digits and `_`, not first a digit).
pub fn env_name(name: &str) -> Result<String, NotAnEnvName> {
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(name.to_string())
    } else {
        Err(NotAnEnvName(name.to_string()))
    }
}

/// A key's variable (`--key-env`, a plan's `key_env` or `key_var`) that is not a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not an environment variable's name: write letters, digits and `_`, not starting \
     with a digit"
)]
pub struct NotAnEnvName(pub String);

impl ApiArgs {
    /// The key, from `--key-env`'s variable or else `default` (the environment only).
    pub fn key(&self, default: &str) -> anyhow::Result<ApiKey> {
        let var = self.key_env.as_deref().unwrap_or(default);
        ApiKey::from_env(var).ok_or_else(|| {
            let given = if self.key_env.is_some() {
                " (--key-env)"
            } else {
                ""
            };
            anyhow::anyhow!(
                "{var}{given} is not set: the key is read from that environment variable only"
            )
        })
    }
}

impl RunArgs {
    /// This shard's files: `--shard` resolved (from the cluster's variables under `auto`) and
    /// `{shard}` in `--out` and `--failures` replaced.
    pub fn layout(&self) -> anyhow::Result<Layout> {
        if !(self.grace_s.is_finite() && self.grace_s >= 0.0) {
            bail!("--grace-s must be a non-negative number of seconds");
        }
        let env = |k: &str| std::env::var(k).ok();
        let mut shard = crate::shard::resolve(self.shard, self.shards, env)?;
        if self.shard == Some(ShardArg::Auto) {
            // One task of the run submitted again on its own (`sbatch --array=1 job.sh`): the
            // engine says 1 task, the run's manifest how many the run has.
            let manifest = crate::run_files::manifest_path(&self.out);
            if let (Some(s), Ok(run)) = (shard, crate::run_files::manifest::read(&manifest))
                && let Some(again) = crate::shard::resubmitted(s, run.shards, env)
            {
                eprintln!(
                    "--shard auto: this Slurm array has {} task(s) and the run {} shards \
                     ({}): task {} is shard {again} again",
                    s.count,
                    run.shards,
                    manifest.display(),
                    again.index
                );
                shard = Some(again);
            }
        }
        Ok(Layout::new(&self.out, self.failures.as_deref(), shard)?)
    }

    /// How long the keys in flight get after SIGTERM.
    pub fn grace(&self) -> Duration {
        Duration::from_secs_f64(self.grace_s)
    }

    /// Under `--shard auto`, a rate limit of the whole run is this shard's 1/N of it (at least
    /// 1); elsewhere the limit is this process's.
    pub fn share(&self, limit: Option<u64>, layout: &Layout) -> Option<u64> {
        match (self.shard, layout.shard) {
            (Some(ShardArg::Auto), Some(s)) => limit.map(|l| (l / u64::from(s.count)).max(1)),
            _ => limit,
        }
    }

    /// The price in force for `model` (see [`Price::of`]).
    pub fn price(&self, model: &str) -> Option<Price> {
        Price::of(model, self.price_in, self.price_out)
    }
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
        self.api.model()
    }

    /// Opens both journals of this shard (repairing a torn last line, reading the keys done)
    /// and builds the client. `kind` names the records in messages; `spec` is what the command
    /// says of its run (inputs, flags of its own), to which the model's settings are added.
    pub fn start<K: Eq + std::hash::Hash>(
        &self,
        (mut settings, key): (Settings, ApiKey),
        key_of: KeyOf<K>,
        kind: &str,
        prompt_version: &'static str,
        spec: RunSpec,
    ) -> anyhow::Result<Live<K>> {
        let layout = self.run.layout()?;
        settings.rpm = self.run.share(settings.rpm, &layout);
        settings.tpm = self.run.share(settings.tpm, &layout);
        let spec = spec
            .set("prompt_version", prompt_version)
            .set("model", &settings.model)
            .set("provider", settings.provider.as_str())
            .set("structured", settings.structured.as_str())
            .set("temperature", settings.temperature)
            .set("seed", settings.seed)
            .set("max_tokens", settings.max_tokens);
        let (out, failures) = journals(&layout, key_of, kind)?;
        Ok(Live {
            layout,
            spec,
            grace: self.run.grace(),
            client: Arc::new(Client::new(settings, key)?),
            out,
            failures,
            concurrency: self.run.concurrency as usize,
            max_retries: self.max_retries,
            prompt_version,
            started: Instant::now(),
            price: self.run.price(self.api.model()).map(|p| {
                // Both providers charge half for batches; given prices are taken as they are.
                let listed = self.run.price_in.is_none() && self.run.price_out.is_none();
                if self.batch && listed { p.halved() } else { p }
            }),
            batch: self.batch.then(|| Duration::from_secs_f64(self.poll_s)),
        })
    }
}

/// Opens this shard's output (locked) and the failures journal beside it, printing what
/// opening found.
pub fn journals<K: Eq + std::hash::Hash>(
    layout: &Layout,
    key_of: KeyOf<K>,
    kind: &str,
) -> anyhow::Result<(Journal<K>, Journal<K>)> {
    if let Some(dir) = layout.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::input::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let out = Journal::open(&layout.out, key_of)?;
    let failures = Journal::open_beside(&layout.failures, key_of)?;
    out.report(kind);
    failures.report("failure");
    Ok((out, failures))
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
    /// Runs every task, as live calls or through the provider's batch API (`--batch`); `write`
    /// appends the record of a key whose reply was valid (its value, then the provenance to
    /// flatten into it).
    pub fn run<T, W>(&mut self, tasks: Vec<T>, write: W) -> anyhow::Result<Tally>
    where
        T: Task<Key = K>,
        W: FnMut(&mut Journal<K>, &K, T::Value, Provenance<'_>) -> anyhow::Result<()>,
    {
        match self.batch {
            Some(poll) => self.run_batch(tasks, write, poll),
            None => self.run_calls(tasks, write),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ApiArgs;
    use clap::{CommandFactory, Parser};
    use repoprobe_llm::Provider;

    #[derive(Parser)]
    struct Api {
        #[command(flatten)]
        api: ApiArgs,
    }

    #[test]
    fn provider_flag_takes_exactly_the_clients_providers() {
        let command = Api::command();
        let flag = command
            .get_arguments()
            .find(|a| a.get_id() == "provider")
            .unwrap();
        let shown: Vec<(String, String)> = flag
            .get_possible_values()
            .iter()
            .map(|v| (v.get_name().to_string(), v.get_help().unwrap().to_string()))
            .collect();
        let listed: Vec<(String, String)> = Provider::ALL
            .iter()
            .map(|p| (p.as_str().to_string(), p.description().to_string()))
            .collect();
        assert_eq!(shown, listed);
        for p in Provider::ALL {
            let a = Api::try_parse_from(["x", "--model", "m", "--provider", p.as_str()]).unwrap();
            assert_eq!(a.api.provider, Some(p));
        }
        assert!(Api::try_parse_from(["x", "--model", "m", "--provider", "OpenAI"]).is_err());
    }
}
