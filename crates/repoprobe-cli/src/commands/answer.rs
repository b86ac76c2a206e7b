//! `repoprobe answer`: the agent runs of paper §5.1. For every question (× `--attempts`) not yet
//! in `--out`, check the repository out at the question's pinned commit in a fresh worktree, run
//! the agent there on the versioned prompt (`crates/repoprobe-core/prompts/answer-v1.md`), record
//! what it answered, what it cost, and whether it changed the worktree (`git status`: evidence of
//! edit bias), and save its trajectory (ATIF) and the agent's raw output beside the answers. The
//! agent crate runs the question and says how it ended (`repoprobe_agent::run`); this command
//! keeps the keys, the journals and the files.
//!
//! Agents: `builtin` (our read-only tool loop over any model behind the judge's client) or an
//! agent CLI (`claude-code`, `codex`, `gemini`, or any `command`).
//!
//! What counts as what: a run that ends without an answer because of the agent (a time, turn or
//! token limit, an error result, an empty reply) is an answer record with `error` set — a failed
//! run, which scores 0 under the default policy, as in the paper. A run that could not happen
//! (the repository or commit cannot be had, the agent CLI cannot start, the model API kept
//! failing) is a failure record in `<out>.failures.ndjson`, never an answer, and a rerun tries
//! it again. Output, resume after `kill -9`, locking, sharding, progress and cost are the live
//! calls' (`crate::live`, `crate::output`).

use crate::exit::Exit;
use crate::live::agent::{self, AgentCommand, Estimated, Execute, Settled};
use crate::live::events::{Event, Reporter};
use crate::live::task::{Failed, Outcome};
use crate::live::{ApiArgs, RunArgs, Summary, journals, load_inputs};
use crate::output::{self, Journal};
use crate::repos::RepoArgs;
use crate::run_files::Layout;
use crate::run_files::keys::{AnswerKey, answer_key};
use crate::run_files::manifest::RunSpec;
use anyhow::{Context, bail};
use repoprobe_agent::builtin::Limits;
use repoprobe_agent::external::{AgentConfig, ExternalAgent};
use repoprobe_agent::run::{self, Agent, Confinement, Request, RunIds, Verdict};
use repoprobe_agent::sandbox;
use repoprobe_agent::workspace::RepoSource;
use repoprobe_core::model::failure::Status;
use repoprobe_core::protocol::answer::{PROMPT_VERSION, prompt};
use repoprobe_core::{Answer, Question, Usage};
use repoprobe_llm::price::Price;
use repoprobe_llm::{Client, Tokens};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    /// The benchmark (questions with their repository and pinned commit): files or
    /// directories. Each is hidden from the agent: it holds the reference answers.
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// Who answers: our read-only tool agent over --provider's API, or an agent CLI.
    #[arg(long, value_enum)]
    pub(crate) agent: AgentKind,
    #[command(flatten)]
    pub(crate) api: ApiArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// The model's name in the records, as the tables show it (`GLM-5`) [default: --model]. The
    /// API is called with --model, kept as `agent.model` when the two differ.
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// Runs per question (`attempt` 0..N-1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) attempts: u32,
    /// Answer only these questions (by id; repeatable) [default: all].
    #[arg(long = "question")]
    questions: Vec<String>,
    #[command(flatten)]
    pub(crate) repo: RepoArgs,
    /// Where the worktrees are made [default: <repos>/worktrees].
    #[arg(long)]
    worktrees: Option<PathBuf>,
    /// Keep each worktree after its run (for inspection) instead of removing it.
    #[arg(long)]
    keep_worktrees: bool,
    /// Where the transcripts are saved [default: <out without .jsonl>.transcripts/].
    #[arg(long)]
    transcripts: Option<PathBuf>,
    /// Wall-clock limit of one run in seconds (the agent CLI's whole process group is killed).
    #[arg(long, default_value_t = 1800.0)]
    agent_timeout_s: f64,
    /// Most model turns of one run (builtin; Claude Code's --max-turns).
    #[arg(long, default_value_t = 40)]
    pub(crate) max_turns: u32,
    /// Most tokens of one run, input and output over all turns (builtin).
    #[arg(long, default_value_t = 2_000_000)]
    max_run_tokens: u64,
    /// The agent CLI's executable [default: claude, codex or gemini on PATH].
    #[arg(long)]
    pub(crate) agent_bin: Option<PathBuf>,
    /// The command of `--agent command`, run by `sh -c`, with `{prompt_file}`, `{model}` and
    /// `{workdir}` replaced by shell-quoted values; its stdout is the answer.
    #[arg(long)]
    pub(crate) command: Option<String>,
    /// An environment variable of ours passed to the agent CLI (its key, its base URL);
    /// repeatable [default: the preset's usual ones]. Values never reach any output.
    #[arg(long = "pass-env")]
    pass_env: Vec<String>,
    /// The agent CLI's variable that gets the key of --key-env (e.g. ANTHROPIC_AUTH_TOKEN for a
    /// gateway that takes a bearer token) [default: the one the preset reads its key from].
    #[arg(long, value_name = "VAR", value_parser = crate::live::env_name)]
    pub(crate) agent_key_var: Option<String>,
    /// An extra argument for the agent CLI; repeatable.
    #[arg(long = "agent-arg", allow_hyphen_values = true)]
    agent_args: Vec<String>,
    /// HOME of the agent CLI (a scratch directory keeps your own settings out of the runs)
    /// [default: a fresh directory per run].
    #[arg(long)]
    agent_home: Option<PathBuf>,
    /// Run agent CLIs and commands without the bubblewrap sandbox (they can then read every file
    /// you can and reach any server); recorded as agent.sandbox on every answer.
    #[arg(long)]
    no_sandbox: bool,
    /// The model API a sandboxed agent may reach, the only server it reaches (through
    /// repoprobe's proxy, which adds the key) [default: the preset's base-URL variable, else its
    /// provider's API; `--agent command` reaches none without it, and is told the address in
    /// REPOPROBE_API_URL].
    #[arg(long)]
    pub(crate) agent_api_url: Option<String>,
    /// A directory the sandboxed agent may also read (a wrapper script's real program, a tool
    /// it runs); repeatable. Inside, nothing else exists but the system's programs and
    /// libraries, the agent program's own directory, the worktree and the run's scratch files.
    #[arg(long = "sandbox-expose")]
    pub(crate) sandbox_expose: Vec<PathBuf>,
    /// Run again the answers in --out whose agent failed (`error` set): each leaves --out for
    /// the failures journal (kept there under `superseded`) and its key is answered anew.
    #[arg(long)]
    pub(crate) retry_failed: bool,
    /// Print the runs, the tokens they would take and their cost under the assumptions it
    /// names (--estimate-turns), and exit: no agent runs, nothing is sent or written.
    #[arg(long)]
    estimate: bool,
    /// The model turns a run is assumed to take, for --estimate.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    estimate_turns: u32,
}

/// `--agent`: ours, or one of the agent crate's [`ExternalAgent::ALL`] by its own name, so an
/// agent CLI is added in that crate alone.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentKind {
    /// Our read-only tool-calling agent (list_dir, read_file, search, find_symbol) over the
    /// model of --provider.
    #[default]
    Builtin,
    /// An agent CLI (or any command).
    External(ExternalAgent),
}

impl AgentKind {
    /// `builtin`, then every external agent in the agent crate's order.
    pub(crate) const ALL: [AgentKind; 1 + ExternalAgent::ALL.len()] = {
        let mut all = [AgentKind::Builtin; 1 + ExternalAgent::ALL.len()];
        let mut i = 0;
        while i < ExternalAgent::ALL.len() {
            all[i + 1] = AgentKind::External(ExternalAgent::ALL[i]);
            i += 1;
        }
        all
    };

    /// The name `--agent` and a plan's `agent` take.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AgentKind::Builtin => "builtin",
            AgentKind::External(a) => a.as_str(),
        }
    }

    fn description(self) -> &'static str {
        match self {
            AgentKind::Builtin => {
                "Our read-only tool-calling agent (list_dir, read_file, search, find_symbol) over \
                 the model of --provider"
            }
            AgentKind::External(a) => a.description(),
        }
    }

    fn external(self) -> Option<ExternalAgent> {
        match self {
            AgentKind::Builtin => None,
            AgentKind::External(a) => Some(a),
        }
    }
}

impl clap::ValueEnum for AgentKind {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()).help(self.description()))
    }
}

/// `answer`'s flags settled once, before any benchmark is read or any agent runs: every check
/// made, every default taken, the shard's files resolved. What follows reads this, never the
/// flags.
pub(crate) struct AnswerRun {
    benchmark: Vec<PathBuf>,
    layout: Layout,
    /// Keys worked on at once, and what the keys in flight get after SIGTERM.
    concurrency: (usize, Duration),
    price: Option<Price>,
    /// Where `price` comes from, as the records' `cost_source` says.
    price_source: &'static str,
    /// `--question` (empty: all) and `--attempts`.
    questions: Vec<String>,
    attempts: u32,
    /// The model's name in the records (`--name`, else `--model`).
    name: String,
    retry_failed: bool,
    /// How the agent is started: the checks that need it (the CLI's version, the sandbox) are
    /// [`Setup::start`]'s.
    setup: Setup,
    /// What the manifest says of this run, the agent's own part added once it has started.
    spec: RunSpec,
    files: Files,
}

/// Where a run's files go, and what every run of the command shares but the agent.
struct Files {
    source: RepoSource,
    worktrees: PathBuf,
    transcripts: PathBuf,
    /// The directory of `--out`, to which transcript paths in records are relative.
    out_dir: PathBuf,
    keep_worktrees: bool,
    /// `--model` when `--name` records another name: kept as `agent.model`.
    api_model: Option<String>,
}

/// The agent of `--agent`, settled but not started.
enum Setup {
    Builtin {
        settings: repoprobe_llm::Settings,
        key: repoprobe_llm::ApiKey,
        limits: Limits,
    },
    External {
        config: Box<AgentConfig>,
        confinement: Confinement,
        fresh_home: bool,
    },
}

/// What every run shares: the started agent and the files.
struct Ctx {
    runner: Agent,
    files: Files,
    price: Option<Price>,
    price_source: &'static str,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    agent::run_agent(a)
}

impl AgentCommand for Args {
    const NAME: &'static str = "answer";
    type Plan = AnswerRun;

    agent::flags!();

    /// `--estimate`: the runs not yet in `--out`, each assumed to take `turns` turns that each
    /// re-send the prompt and the conversation so far (every tool result adding
    /// [`ESTIMATE_RESULT_TOKENS`](crate::live::estimate::ESTIMATE_RESULT_TOKENS)) and write a fixed
    /// number of tokens (`live::estimate::agent_run`). How far an agent
    /// explores no prompt tells: the assumptions are printed, and a pilot run's evidence table
    /// (`score --evidence`) is the better guide.
    fn estimate(&self, turns: u64) -> anyhow::Result<Estimated> {
        use crate::live::estimate::{Estimate, agent_run};
        let (ds, _) = load_inputs(&self.files)?;
        let done = output::done_keys(&self.run.layout()?.out, answer_key)?;
        let (mut e, mut already) = (Estimate::default(), 0);
        for q in ds
            .questions
            .iter()
            .filter(|q| self.questions.is_empty() || self.questions.contains(&q.id))
        {
            for key in answer_keys(&q.id, self.name(), self.attempts) {
                if done.contains(&key) {
                    already += 1;
                } else {
                    e += agent_run(q, turns);
                }
            }
        }
        Ok(Estimated {
            runs: e,
            done: already,
            input: "the prompt's bytes / 4 a turn, and the conversation so far, assumed below",
            not_counted: "an agent CLI's own system prompt and tools are not counted",
        })
    }

    /// Settles the flags, with what every agent command settles alike (`settled`): this
    /// shard's files (from here on `--out` is this shard's file, and the transcripts and what
    /// the sandbox hides follow it), the agent's setup, the manifest's spec.
    fn settle(self, settled: Settled) -> anyhow::Result<AnswerRun> {
        let layout = settled.layout;
        let out = layout.out.clone();
        let transcripts = self
            .transcripts
            .clone()
            .unwrap_or_else(|| transcripts_dir(&out));
        let setup = setup(&self, (&layout, settled.limits), &out, &transcripts)?;
        let files = Files {
            source: settled.source,
            worktrees: settled.worktrees,
            transcripts,
            out_dir: crate::input::dir_of(&out).to_path_buf(),
            keep_worktrees: self.keep_worktrees,
            api_model: (self.name() != self.api.model()).then(|| self.api.model().to_string()),
        };
        Ok(AnswerRun {
            spec: run_spec(&self),
            benchmark: self.files,
            concurrency: settled.concurrency,
            price: settled.price,
            price_source: if self.run.price_in.is_some() || self.run.price_out.is_some() {
                "estimated from --price-in/--price-out"
            } else {
                "estimated from list prices"
            },
            name: self.name.unwrap_or_else(|| self.api.model().to_string()),
            questions: self.questions,
            attempts: self.attempts,
            retry_failed: self.retry_failed,
            layout,
            setup,
            files,
        })
    }
}

impl AnswerRun {
    /// The run's keys (the questions asked, × `--attempts`), each with its question; an unknown
    /// `--question` or a benchmark without a valid question is an error.
    fn keys(&self, questions: &[Question]) -> anyhow::Result<Vec<(AnswerKey, Arc<Question>)>> {
        if questions.is_empty() {
            bail!(
                "no valid question in {}",
                crate::input::listed(&self.benchmark)
            );
        }
        if let Some(id) = self
            .questions
            .iter()
            .find(|id| !questions.iter().any(|q| &q.id == *id))
        {
            bail!(
                "--question {id}: no such question in {}",
                crate::input::listed(&self.benchmark)
            );
        }
        let asked = questions
            .iter()
            .filter(|q| self.questions.is_empty() || self.questions.contains(&q.id));
        let mut keys = Vec::new();
        for q in asked.map(|q| Arc::new(q.clone())) {
            for key in answer_keys(&q.id, &self.name, self.attempts) {
                keys.push((key, Arc::clone(&q)));
            }
        }
        Ok(keys)
    }
}

impl Execute for AnswerRun {
    /// Reads the benchmark, starts the agent, joins the run and answers every key not yet
    /// done that is this shard's, then prints the summary.
    fn execute(self) -> anyhow::Result<Exit> {
        let (ds, input_issues) = load_inputs(&self.benchmark)?;
        let keys = self.keys(&ds.questions)?;
        let runner = self.setup.start()?;
        let spec = agent_spec(self.spec, &runner);
        let ctx = Arc::new(Ctx {
            runner,
            files: self.files,
            price: self.price,
            price_source: self.price_source,
        });
        crate::input::create_dir_all(&ctx.files.transcripts)
            .with_context(|| format!("cannot create {}", ctx.files.transcripts.display()))?;
        let layout = self.layout;
        let (mut out, mut failures) = journals(&layout, answer_key, "answer")?;
        if let Err(e) = crate::run_files::enlist(&layout, &spec, keys.iter().map(|(k, _)| k)) {
            // Refused: this shard is not the run's; it leaves no file of its own behind.
            out.discard_if_new();
            return Err(e);
        }
        if self.retry_failed {
            retry_failed(&keys, &mut out, &mut failures)?;
        }
        let (mut already_done, mut other_shards) = (0, 0);
        let mut jobs = Vec::new();
        for (key, q) in keys {
            if out.done.contains(&key) {
                already_done += 1;
            } else if layout.shard.is_some_and(|s| !s.owns(&key)) {
                other_shards += 1;
            } else {
                jobs.push((key, q));
            }
        }
        let started = Instant::now();
        let futures = jobs
            .into_iter()
            .map(|(key, q)| answer_one(Arc::clone(&ctx), key, q));
        let tally = agent::run_keys(
            self.concurrency,
            (ctx.price, other_shards),
            || None,
            futures,
            |o, reporter| record(o, &mut out, &mut failures, reporter),
        )?;
        Ok(Summary {
            command: "answer",
            verb: "answered",
            already_done,
            skipped: &[],
            failures: &failures.path,
            shard: layout.shard,
            price: ctx.price,
            started,
        }
        .print(&tally, input_issues))
    }
}

/// The keys of one question: `attempts` runs of `model`.
fn answer_keys(question_id: &str, model: &str, attempts: u32) -> impl Iterator<Item = AnswerKey> {
    (0..attempts).map(move |attempt| AnswerKey {
        question_id: question_id.to_string(),
        model: model.to_string(),
        attempt,
    })
}

impl Args {
    /// The model's name in the records: `--name`, else `--model`.
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(self.api.model())
    }
}

/// `--retry-failed`: the answers of this run's keys whose agent failed (`error` set) leave
/// `--out` for the failures journal, as failure records holding the old record under
/// `superseded`, so the run below makes them again and the results count the new attempt.
fn retry_failed(
    keys: &[(AnswerKey, Arc<Question>)],
    out: &mut Journal<AnswerKey>,
    failures: &mut Journal<AnswerKey>,
) -> anyhow::Result<()> {
    let ours: std::collections::HashSet<&AnswerKey> = keys.iter().map(|(k, _)| k).collect();
    let failed =
        |v: &Value| !v["error"].is_null() && answer_key(v).is_some_and(|k| ours.contains(&k));
    let taken = out.withdraw(answer_key, failed, |taken| {
        for old in taken {
            let reason = format!(
                "the agent failed ({}); withdrawn by --retry-failed for a new run",
                output::text(old, "error").unwrap_or_default()
            );
            failures.append(&json!({
                "question_id": old["question_id"], "model": old["model"], "attempt": old["attempt"],
                "status": Status::Failed, "reason": reason, "violations": [],
                "superseded": old,
            }))?;
        }
        failures.sync()?;
        Ok(())
    })?;
    if !taken.is_empty() {
        eprintln!(
            "--retry-failed: {} failed answer(s) moved from {} to {}; they run again",
            taken.len(),
            out.path.display(),
            failures.path.display()
        );
    }
    Ok(())
}

/// The agent of `--agent`, settled: the model's client settings and limits, or the CLI's
/// configuration with its confinement (`out` is this shard's `--out`, `transcripts` where the
/// runs' files go: both hidden from a confined agent).
fn setup(
    a: &Args,
    (layout, limits): (&Layout, Limits),
    out: &Path,
    transcripts: &Path,
) -> anyhow::Result<Setup> {
    let timeout = limits.timeout;
    let Some(agent) = a.agent.external() else {
        let (mut settings, key) = a.api.settings(None)?;
        settings.rpm = a.run.share(settings.rpm, layout);
        settings.tpm = a.run.share(settings.tpm, layout);
        return Ok(Setup::Builtin {
            settings,
            key,
            limits,
        });
    };
    if a.api.provider.is_some() {
        eprintln!("note: --provider is for --agent builtin; the agent CLI calls its own API");
    }
    if agent == ExternalAgent::Command && a.command.as_deref().is_none_or(|c| c.trim().is_empty()) {
        bail!(
            "--agent command needs --command '<template with {{prompt_file}}, {{model}}, {{workdir}}>'"
        );
    }
    if let Some(url) = &a.agent_api_url {
        repoprobe_agent::proxy::Upstream::parse(url)
            .map_err(|e| anyhow::anyhow!("--agent-api-url: {e}"))?;
    }
    let config = AgentConfig {
        set_env: agent_endpoint(a, agent)?,
        program: a.agent_bin.clone(),
        max_turns: (agent == ExternalAgent::ClaudeCode).then_some(a.max_turns),
        command: a.command.clone(),
        extra_args: a.agent_args.clone(),
        pass_env: if a.pass_env.is_empty() {
            agent.usual_env().iter().map(|s| s.to_string()).collect()
        } else {
            a.pass_env.clone()
        },
        home: a.agent_home.clone(),
        timeout,
        api_url: a.agent_api_url.clone(),
        expose: a.sandbox_expose.clone(),
        // This very binary is the bridge to the API proxy inside the sandbox.
        bridge: Some(
            std::env::current_exe()
                .and_then(|p| p.canonicalize())
                .context("cannot find repoprobe's own binary (the sandbox's bridge to the API)")?,
        ),
        ..AgentConfig::new(agent, a.api.model().to_string())
    };
    let confinement = if a.no_sandbox {
        eprintln!(
            "warning: --no-sandbox: the agent runs unconfined and can read every file you can \
             (recorded as agent.sandbox = \"{}\")",
            sandbox::NONE
        );
        Confinement::Unconfined
    } else {
        let mut hidden = hidden_dirs(a, out, transcripts);
        // They are made before the first run anyway; hidden, they must exist now.
        for d in hidden.iter().filter(|d| !d.exists()) {
            crate::input::create_dir_all(d)
                .with_context(|| format!("cannot create {}", d.display()))?;
        }
        hidden.extend(mapped_clones(a));
        // The benchmark holds the reference answers and checklists.
        let masked = a.files.clone();
        Confinement::Sandboxed { hidden, masked }
    };
    Ok(Setup::External {
        config: Box::new(config),
        confinement,
        fresh_home: a.agent_home.is_none(),
    })
}

impl Setup {
    /// The agent, checked before anything runs: the model's client, or the CLI (its version
    /// asked once, so a missing CLI stops the run at once rather than failing every key) with
    /// its sandbox (probed once: without one, external agents are refused unless
    /// `--no-sandbox`).
    fn start(self) -> anyhow::Result<Agent> {
        match self {
            Setup::Builtin {
                settings,
                key,
                limits,
            } => Ok(Agent::Builtin {
                client: Arc::new(Client::new(settings, key)?),
                limits,
            }),
            Setup::External {
                config,
                confinement,
                fresh_home,
            } => Ok(crate::live::runtime()?.block_on(Agent::external(
                *config,
                confinement,
                fresh_home,
            ))?),
        }
    }
}

/// The variables that point an agent CLI at its endpoint: `--agent-api-url` in the preset's
/// base-URL variable, and the key of `--key-env` in the variable the CLI reads its key from
/// (`--agent-key-var`, else the preset's; `command` gets it under its own name). A gateway in
/// front of another provider's model needs both; the sandbox then puts the bridge's address and
/// a placeholder in their stead.
fn agent_endpoint(a: &Args, agent: ExternalAgent) -> anyhow::Result<Vec<(String, String)>> {
    let mut env = Vec::new();
    if let (Some(url), Some(var)) = (&a.agent_api_url, agent.base_url_var()) {
        env.push((var.to_string(), url.clone()));
    }
    if let Some(var) = &a.api.key_env {
        let key = a.api.key(var)?;
        let into = a
            .agent_key_var
            .as_deref()
            .or(agent.key_var())
            .unwrap_or(var);
        env.push((into.to_string(), key.expose().to_string()));
    } else if a.agent_key_var.is_some() {
        bail!("--agent-key-var names where the key of --key-env goes: give --key-env too");
    }
    Ok(env)
}

/// What `answer` says of its run in the run's manifest: the benchmark, the agent, the model and
/// the flags that change answers ([`agent_spec`] adds what the started agent says of itself).
fn run_spec(a: &Args) -> RunSpec {
    let spec = RunSpec::new(crate::run_files::kind::RunKind::Answer)
        .files(&a.files)
        .set("prompt_version", PROMPT_VERSION)
        .set("agent", a.agent.as_str())
        .set("model", a.api.model())
        .set("name", a.name())
        .scope("attempts", a.attempts)
        .scope("questions", &a.questions)
        .set("allow_unpinned", a.repo.allow_unpinned)
        .set("agent_timeout_s", a.agent_timeout_s)
        .set("max_turns", a.max_turns)
        .set("sandbox", !a.no_sandbox);
    match a.agent {
        AgentKind::Builtin => spec,
        _ => spec
            .set("command", &a.command)
            .set("agent_args", &a.agent_args),
    }
}

/// The manifest's spec with what the started agent says of itself: the client's settings, or
/// the CLI's version.
fn agent_spec(spec: RunSpec, runner: &Agent) -> RunSpec {
    match runner {
        Agent::Builtin { client, limits } => {
            let s = client.settings();
            spec.set("provider", s.provider.as_str())
                .set("temperature", s.temperature)
                .set("seed", s.seed)
                .set("max_tokens", s.max_tokens)
                .set("max_run_tokens", limits.max_total_tokens)
        }
        Agent::External { version, .. } => spec.set("agent_version", version),
    }
}

/// What a confined agent must not see of ours: the clone cache, the worktrees (others'), the
/// journals' and transcripts' directories (`out` is this shard's `--out`). Relative paths are
/// taken from the current directory.
fn hidden_dirs(a: &Args, out: &Path, transcripts: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![a.repo.clone_cache.clone()];
    dirs.extend(a.worktrees.clone());
    dirs.push(crate::input::dir_of(out).to_path_buf());
    dirs.push(transcripts.to_path_buf());
    dirs
}

/// The local clones of `--repo-map`: hidden from a confined agent too (their history goes past
/// the pinned commit).
fn mapped_clones(a: &Args) -> Vec<PathBuf> {
    a.repo
        .repo_map
        .iter()
        .filter_map(|m| RepoSource::parse_map_arg(m).ok())
        .map(|(_, p)| p)
        .collect()
}

/// `out/answers.jsonl` → `out/answers.transcripts`.
fn transcripts_dir(out: &Path) -> PathBuf {
    crate::output::beside(out, "transcripts")
}

/// A file-name-safe form of a key part, one to one (`q/1` and `q_1` stay apart).
fn safe(s: &str) -> String {
    crate::output::file_name_part(s)
}

/// Does one key: worktree, then the agent crate's one run (agent, changes, trajectory,
/// verdict), then the trajectory and the raw output written beside the answers and the record.
async fn answer_one(ctx: Arc<Ctx>, key: AnswerKey, q: Arc<Question>) -> Outcome<AnswerKey, Value> {
    let started = Instant::now();
    let name = format!(
        "{}__{}__a{}",
        safe(&key.question_id),
        safe(&key.model),
        key.attempt
    );
    let mut o = Outcome::begun(key);
    let wt = match run::checkout(&ctx.files.source, &q.repo, &ctx.files.worktrees.join(&name)).await
    {
        Ok(wt) => wt,
        Err(c) => {
            o.result = Err(Failed::could_not_run(c));
            return o;
        }
    };
    let req = Request {
        question: &q,
        prompt: prompt(&q, &wt.commit),
        prompt_version: PROMPT_VERSION,
        check: None,
        max_reasks: 0,
        keep_worktree: ctx.files.keep_worktrees,
        ids: RunIds {
            question_id: &o.key.question_id,
            model: &o.key.model,
            attempt: o.key.attempt,
        },
    };
    let scratch = ctx.files.worktrees.join(format!("{name}.scratch"));
    let run = run::answer(&ctx.runner, &req, wt, &scratch).await;
    if let Some(w) = &run.cleanup_warning {
        eprintln!("warning: {w}");
    }
    (o.tokens, o.http_retries, o.calls) = (run.tokens, run.http_retries, run.turns);
    let written = agent::write_files(&ctx.files.transcripts, &name, &run);
    let (answer, error) = match run.verdict {
        Verdict::CouldNotRun(c) => {
            o.result = Err(Failed::could_not_run(c));
            return o;
        }
        Verdict::Answered(a) => (Some(a), None),
        Verdict::AgentFailed(e) => (None, Some(e)),
    };
    let trajectory_path = match written {
        Ok(p) => p,
        Err(c) => {
            o.result = Err(Failed::could_not_run(c));
            return o;
        }
    };
    let mut agent = run.agent;
    agent.transcript = Some(
        trajectory_path
            .strip_prefix(&ctx.files.out_dir)
            .unwrap_or(&trajectory_path)
            .display()
            .to_string(),
    );
    let (cost, cost_source) = cost(run.cost_usd, ctx.price, ctx.price_source, run.tokens);
    agent.cost_source = Some(cost_source.into());
    agent.model.clone_from(&ctx.files.api_model);
    // A line of `--out` is the core's own record (docs/format.md#answer): what the loader reads
    // back is what was written.
    let record = Answer {
        question_id: o.key.question_id.clone(),
        model: o.key.model.clone(),
        attempt: o.key.attempt,
        answer,
        agent: Some(Box::new(agent)),
        usage: Some(Usage {
            input_tokens: Some(run.tokens.input_tokens),
            output_tokens: Some(run.tokens.output_tokens),
            cost_usd: cost,
        }),
        duration_s: Some(started.elapsed().as_secs_f64()),
        error,
    };
    o.result = serde_json::to_value(&record).map_err(|e| Failed::refused(e.to_string()));
    o
}

/// What the run cost and where that figure came from: the agent's own report, else the prices
/// in force (`source`: list prices or the flags') times the tokens, else unknown.
fn cost(
    reported: Option<f64>,
    price: Option<Price>,
    source: &'static str,
    tokens: Tokens,
) -> (Option<f64>, &'static str) {
    match (reported, price) {
        (Some(c), _) => (Some(c), "reported by the agent"),
        (None, Some(p)) => (Some(p.cost(tokens)), source),
        (None, None) => (None, "unknown"),
    }
}

/// Writes how a key ended and counts it; whatever a run gave, no secret of ours is written or
/// printed.
fn record(
    o: Outcome<AnswerKey, Value>,
    out: &mut Journal<AnswerKey>,
    failures: &mut Journal<AnswerKey>,
    reporter: &mut Reporter,
) -> anyhow::Result<()> {
    let written = |key: &AnswerKey, record: Value, reporter: &mut Reporter| {
        let record = agent::scrubbed(record);
        out.append(&record)?;
        reporter.on(Event::Done {
            key,
            note: record["error"].as_str(),
        });
        Ok(())
    };
    agent::record(
        o,
        failures,
        AnswerKey::clone,
        PROMPT_VERSION,
        reporter,
        written,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_flag_takes_builtin_then_exactly_the_agent_crates_agents() {
        use clap::{CommandFactory, Parser};
        #[derive(Parser)]
        struct Answer {
            #[command(flatten)]
            args: Args,
        }
        let command = Answer::command();
        let flag = command
            .get_arguments()
            .find(|a| a.get_id() == "agent")
            .unwrap();
        let shown: Vec<String> = flag
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        let listed: Vec<&str> = std::iter::once("builtin")
            .chain(ExternalAgent::ALL.map(ExternalAgent::as_str))
            .collect();
        assert_eq!(shown, listed);
        for k in AgentKind::ALL {
            let a = Answer::try_parse_from([
                "x",
                "f.jsonl",
                "--model",
                "m",
                "--out",
                "o",
                "--clone-cache",
                "c",
                "--agent",
                k.as_str(),
            ])
            .unwrap();
            assert_eq!(a.args.agent, k);
        }
    }

    #[test]
    fn names_are_safe_and_transcripts_sit_beside_the_answers() {
        assert_eq!(safe("django/q 1"), "django_2Fq_201");
        assert_eq!(
            transcripts_dir(Path::new("runs/answers.jsonl")),
            Path::new("runs/answers.transcripts")
        );
    }
}
