//! One run of an agent on a question in its worktree: the one call of `repoprobe answer` and of
//! `curate verify` per key. It takes a worktree ([`checkout`]) and a [`Request`] (the question,
//! the versioned prompt, what a final reply must pass), runs the agent (built-in or a CLI),
//! inspects what the agent left in the worktree, converts its output to an ATIF trajectory and
//! derives the facts the record keeps, and decides once how the run ended ([`Verdict`]). The
//! CLI keeps the keys, the journals and the files.

use crate::atif::{self, RunInfo};
use crate::builtin::{self, BuiltinRun, Limits};
use crate::external::{self, AgentConfig, RunOutcome};
use crate::sandbox;
use crate::tools::Sandbox;
use crate::workspace::RepoSource;
use crate::workspace::Worktree;
use repoprobe_core::Question;
use repoprobe_core::facts::Facts;
use repoprobe_core::model::Repo;
use repoprobe_core::model::agent::AgentBlock;
use repoprobe_core::model::trajectory::Trajectory;
use repoprobe_core::protocol::JudgePrompt;
use repoprobe_llm::{Client, Tokens};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::verdict::{Cause, CouldNotRun, Verdict};

/// Who answers.
pub enum Agent {
    Builtin {
        client: Arc<Client>,
        limits: Limits,
    },
    External {
        config: Box<AgentConfig>,
        /// The CLI's `--version`, asked once before the runs.
        version: Option<String>,
        /// A fresh HOME per run, in its scratch directory.
        fresh_home: bool,
    },
}

/// Whether an agent CLI runs in the sandbox: the directories of ours it must not see and the
/// files masked in it, or unconfined (`--no-sandbox`).
pub enum Confinement {
    Sandboxed {
        hidden: Vec<PathBuf>,
        masked: Vec<PathBuf>,
    },
    Unconfined,
}

/// Why an agent CLI cannot be set up: the run stops before its first key. Each message holds
/// its cause's words (no `source` is chained: the CLI prints the chain).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Sandbox(#[from] sandbox::Unavailable),
    #[error("the {agent} CLI cannot run: {why} (install it, or give its path with --agent-bin)")]
    Cli {
        agent: &'static str,
        why: external::VersionError,
    },
}

impl Agent {
    /// An agent CLI ready to run: its sandbox probed once (without one it is refused, unless
    /// unconfined), its version asked once, so that a missing CLI stops the run at once rather
    /// than failing every key. `fresh_home`: a fresh HOME per run, in its scratch directory.
    pub async fn external(
        mut config: AgentConfig,
        confinement: Confinement,
        fresh_home: bool,
    ) -> Result<Agent, SetupError> {
        config.sandbox = match confinement {
            Confinement::Sandboxed { hidden, masked } => {
                Some(sandbox::Bubblewrap::probe(&hidden, &masked)?)
            }
            Confinement::Unconfined => None,
        };
        let version = match external::version(&config).await {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(why)) => {
                return Err(SetupError::Cli {
                    agent: config.agent.as_str(),
                    why,
                });
            }
        };
        Ok(Agent::External {
            config: Box::new(config),
            version,
            fresh_home,
        })
    }
}

/// The record's key, copied into the trajectory's `extra`.
#[derive(Debug, Clone, Copy)]
pub struct RunIds<'a> {
    pub question_id: &'a str,
    pub model: &'a str,
    pub attempt: u32,
}

/// What a final reply must pass: `Err` is the message sent back to the model.
pub type Check<'a> = &'a (dyn Fn(&str) -> Result<(), String> + Sync);

/// What the agent is asked, in its worktree.
pub struct Request<'a> {
    pub question: &'a Question,
    /// The versioned prompt: the built-in agent gets its system and user parts, an agent CLI
    /// both in one text.
    pub prompt: JudgePrompt,
    pub prompt_version: &'a str,
    /// What a final reply must pass. The built-in agent sends a refused reply back in the same
    /// conversation, at most `max_reasks` times; the last reply is the answer whether or not
    /// it passed, and the caller checks it again. An agent CLI's answer is the caller's to
    /// check.
    pub check: Option<Check<'a>>,
    pub max_reasks: u32,
    /// The worktree is handed back ([`Run::worktree`]) instead of removed.
    pub keep_worktree: bool,
    pub ids: RunIds<'a>,
}

impl Request<'_> {
    /// The prompt as one text, for agent CLIs that take a single prompt.
    fn single_prompt(&self) -> String {
        format!("{}\n\n{}\n", self.prompt.system, self.prompt.user)
    }
}

/// Checks `repo` out at its pinned commit in a fresh worktree at `dir`, off the runtime's
/// thread; a repository or commit that cannot be had could not run ([`Cause::Checkout`]).
pub async fn checkout(
    source: &RepoSource,
    repo: &Repo,
    dir: &Path,
) -> Result<Worktree, CouldNotRun> {
    let (source, repo, dir) = (source.clone(), repo.clone(), dir.to_path_buf());
    match tokio::task::spawn_blocking(move || source.prepare(&repo, &dir)).await {
        Ok(Ok(wt)) => Ok(wt),
        Ok(Err(e)) => Err(CouldNotRun::new(
            Cause::Checkout,
            format!("the repository could not be checked out: {e}"),
        )),
        Err(e) => Err(CouldNotRun::new(
            Cause::Environment,
            format!("the checkout stopped unexpectedly: {e}"),
        )),
    }
}

/// What a run gave: everything the answer record and its files need.
#[derive(Debug)]
pub struct Run {
    pub verdict: Verdict,
    /// The record's `agent` block (its `transcript` is the caller's to set).
    pub agent: AgentBlock,
    pub trajectory: Trajectory,
    /// The agent's own output as it came, kept beside the trajectory for forensics.
    pub raw: Value,
    pub tokens: Tokens,
    /// As the agent reported it (Claude Code); `None` otherwise.
    pub cost_usd: Option<f64>,
    pub http_retries: u32,
    /// Final replies sent back by the request's check.
    pub reasks: u32,
    /// Model calls, for the run's progress counts.
    pub turns: u32,
    /// The worktree, when the request keeps it.
    pub worktree: Option<Worktree>,
    /// Why the worktree could not be removed, for the caller to tell.
    pub cleanup_warning: Option<String>,
}

/// Runs `agent` on `req` in `wt` (`scratch`, outside the worktree, holds the run's own files
/// and is removed afterwards), then reads what it changed and removes the worktree unless the
/// request keeps it.
pub async fn answer(agent: &Agent, req: &Request<'_>, wt: Worktree, scratch: &Path) -> Run {
    let q = req.question;
    let mut run = match agent {
        Agent::Builtin { client, limits } => run_builtin(client, limits, req, &wt).await,
        Agent::External {
            config,
            version,
            fresh_home,
        } => run_external(config, version.as_deref(), *fresh_home, req, &wt, scratch).await,
    };
    let _ = std::fs::remove_dir_all(scratch);
    let (trajectory, facts) = trajectory(&mut run, req, &wt);
    let mut block = std::mem::take(&mut run.agent);
    block.prompt_version = Some(req.prompt_version.into());
    block.repo = Some(q.repo.name.clone());
    block.commit = Some(wt.commit.clone());
    block.from_head = Some(wt.from_head);
    block.turns = Some(facts.turns);
    block.tool_calls = Some(facts.tool_calls);
    block.files_read = Some(facts.files_read);
    block.files_searched = Some(facts.files_searched);
    let mut verdict = std::mem::replace(&mut run.verdict, Verdict::AgentFailed(String::new()));
    let left = inspect(wt, req.keep_worktree, &mut block, &mut verdict).await;
    Run {
        verdict,
        agent: block,
        trajectory,
        raw: run.raw,
        tokens: run.tokens,
        cost_usd: run.cost_usd,
        http_retries: run.http_retries,
        reasks: run.reasks,
        turns: run.turns,
        worktree: left.worktree,
        cleanup_warning: left.cleanup_warning,
    }
}

/// The run's ATIF trajectory: the agent's converted steps assembled with the prompt and the
/// record's key under `extra`.
fn trajectory(run: &mut Partial, req: &Request<'_>, wt: &Worktree) -> (Trajectory, Facts) {
    let root = wt.path.canonicalize().unwrap_or_else(|_| wt.path.clone());
    let ids = req.ids;
    let info = RunInfo {
        agent: run.agent.name.as_deref().unwrap_or(""),
        version: run.agent.version.as_deref().unwrap_or(""),
        model: run.model.as_str(),
        system: run.system.as_deref(),
        prompt: &run.prompt,
        worktree: &root.to_string_lossy(),
        extra: Map::from_iter([
            ("question_id".to_string(), json!(ids.question_id)),
            ("model".to_string(), json!(ids.model)),
            ("attempt".to_string(), json!(ids.attempt)),
            ("repo".to_string(), json!(req.question.repo.name)),
            ("commit".to_string(), json!(wt.commit)),
            ("prompt_version".to_string(), json!(req.prompt_version)),
        ]),
    };
    atif::assemble(&info, std::mem::replace(&mut run.converted, empty()))
}

/// What the worktree's inspection left: the worktree, when kept, and why it could not be
/// removed.
struct Left {
    worktree: Option<Worktree>,
    cleanup_warning: Option<String>,
}

/// What the agent left behind in `wt` (into `block`), then the worktree removed unless kept; a
/// worktree that cannot be inspected makes the run one that could not run (its changes, the
/// edit-bias evidence, are unknown).
async fn inspect(wt: Worktree, keep: bool, block: &mut AgentBlock, verdict: &mut Verdict) -> Left {
    let inspected = tokio::task::spawn_blocking(move || {
        let changes = wt.changes();
        let (kept, removed) = if keep {
            (Some(wt), Ok(()))
        } else {
            (None, wt.remove())
        };
        (changes, kept, removed.err().map(|e| e.to_string()))
    })
    .await;
    let (changes, worktree, cleanup_warning) = match inspected {
        Ok(parts) => parts,
        Err(e) => {
            *verdict = Verdict::could_not_run(
                Cause::Environment,
                format!("the worktree check stopped unexpectedly: {e}"),
            );
            return Left {
                worktree: None,
                cleanup_warning: None,
            };
        }
    };
    match changes {
        Ok(changes) => {
            block.worktree_changed = Some(!changes.is_empty());
            block.changes = Some(changes);
        }
        Err(e) if !matches!(verdict, Verdict::CouldNotRun(_)) => {
            *verdict = Verdict::could_not_run(
                Cause::Environment,
                format!("the worktree could not be inspected afterwards: {e}"),
            )
        }
        Err(_) => {}
    }
    Left {
        worktree,
        cleanup_warning,
    }
}

fn empty() -> Trajectory {
    Trajectory::new(Default::default())
}

/// A run before its trajectory is assembled.
struct Partial {
    verdict: Verdict,
    agent: AgentBlock,
    /// The API's model name.
    model: String,
    system: Option<String>,
    prompt: String,
    converted: Trajectory,
    raw: Value,
    tokens: Tokens,
    cost_usd: Option<f64>,
    http_retries: u32,
    reasks: u32,
    turns: u32,
}

impl Partial {
    /// A run of `agent` on `model` given `system` and `prompt`, before it ran (a verdict is
    /// always set before it is returned).
    fn new(agent: AgentBlock, model: String, system: Option<String>, prompt: String) -> Partial {
        Partial {
            verdict: Verdict::could_not_run(Cause::Environment, "the run never started"),
            agent,
            model,
            system,
            prompt,
            converted: empty(),
            raw: Value::Null,
            tokens: Tokens::default(),
            cost_usd: None,
            http_retries: 0,
            reasks: 0,
            turns: 0,
        }
    }
}

async fn run_builtin(
    client: &Client,
    limits: &Limits,
    req: &Request<'_>,
    wt: &Worktree,
) -> Partial {
    let s = client.settings();
    let p = &req.prompt;
    let mut partial = Partial::new(
        AgentBlock {
            name: Some("builtin".into()),
            version: Some(concat!("repoprobe ", env!("CARGO_PKG_VERSION")).into()),
            // No process is started: the tools confine their own paths.
            sandbox: Some("none (in-process read-only tools)".into()),
            provider: Some(s.provider.as_str().into()),
            ..AgentBlock::default()
        },
        s.model.clone(),
        Some(p.system.clone()),
        p.user.clone(),
    );
    let sandbox = match Sandbox::new(&wt.path) {
        Ok(sb) => sb,
        Err(e) => {
            let why = format!("cannot open the worktree {}: {e}", wt.path.display());
            partial.converted.push(atif::system_note(&why, true));
            partial.verdict = Verdict::could_not_run(Cause::Environment, why);
            return partial;
        }
    };
    let check = |text: &str| req.check.map_or(Ok(()), |c| c(text));
    let r: BuiltinRun = builtin::run_checked(
        client,
        &sandbox,
        &p.system,
        &p.user,
        limits,
        req.max_reasks,
        check,
    )
    .await;
    partial.verdict = match (&r.could_not_run, &r.answer, &r.error) {
        (Some(c), _, _) => Verdict::CouldNotRun(c.clone()),
        (None, Some(a), None) => Verdict::Answered(a.clone()),
        (None, _, e) => Verdict::AgentFailed(e.clone().unwrap_or_else(|| "empty answer".into())),
    };
    partial.converted = atif::builtin::convert(&r.transcript);
    partial.agent.stop_reason = r.stop_reason.clone();
    partial.agent.cut_at_token_limit = Some(r.cut_at_token_limit);
    partial.agent.http_retries = Some(r.http_retries.into());
    partial.raw = json!({"agent": "builtin", "transcript": r.transcript});
    partial.tokens = r.tokens;
    partial.http_retries = r.http_retries;
    partial.reasks = r.reasks;
    partial.turns = r.turns;
    partial
}

async fn run_external(
    config: &AgentConfig,
    version: Option<&str>,
    fresh_home: bool,
    req: &Request<'_>,
    wt: &Worktree,
    scratch: &Path,
) -> Partial {
    let text = req.single_prompt();
    let mut config = config.clone();
    let mut partial = Partial::new(
        AgentBlock {
            name: Some(config.agent.as_str().into()),
            version: version.map(str::to_string),
            ..AgentBlock::default()
        },
        config.model.clone(),
        None,
        text.clone(),
    );
    if fresh_home && let Err(why) = fresh_home_settings(&mut config, scratch, wt) {
        let why = why.to_string();
        partial.converted.push(atif::system_note(&why, true));
        partial.verdict = Verdict::could_not_run(Cause::Environment, why);
        return partial;
    }
    let r: RunOutcome = external::run(&config, &wt.path, &text, scratch).await;
    partial.raw = json!({"agent": config.agent.as_str(), "command": r.command, "exit_code": r.exit_code,
        "timed_out": r.timed_out, "stdout": r.stdout, "stderr_tail": r.stderr_tail});
    let res = r.result;
    partial.verdict = res.verdict();
    partial.converted = res.trajectory.clone().unwrap_or_else(empty);
    if let Some(why) = partial.verdict.failure_text() {
        partial.converted.push(atif::system_note(&why, true));
    }
    let b = &mut partial.agent;
    b.exit_code = r.exit_code.map(i64::from);
    b.timed_out = Some(r.timed_out);
    b.sandbox = Some(format!(
        "{}; network: {}",
        config
            .sandbox
            .as_ref()
            .map_or(sandbox::NONE, |b| b.describe()),
        r.network
    ));
    b.cache_read_tokens = res.cache_read_tokens;
    b.cache_creation_tokens = res.cache_creation_tokens;
    b.meta = Some(json!(res.meta));
    partial.tokens = Tokens {
        input_tokens: res.input_tokens.unwrap_or(0),
        output_tokens: res.output_tokens.unwrap_or(0),
    };
    partial.cost_usd = res.cost_usd;
    partial.turns = res.turns.unwrap_or(0);
    partial
}

/// Why a run's fresh HOME could not be made: the directory, or the CLI's settings in it.
#[derive(Debug, thiserror::Error)]
enum HomeError {
    #[error("cannot create {}: {error}", .home.display())]
    Create {
        home: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot write the agent's settings in {}: {error}", .home.display())]
    Settings {
        home: PathBuf,
        error: std::io::Error,
    },
}

/// A fresh HOME in the run's scratch directory, with the settings that keep the CLI from
/// loading the repository's own (Gemini, Codex).
fn fresh_home_settings(
    config: &mut AgentConfig,
    scratch: &Path,
    wt: &Worktree,
) -> Result<(), HomeError> {
    let home = scratch.join("home");
    if let Err(error) = std::fs::create_dir_all(&home) {
        return Err(HomeError::Create { home, error });
    }
    let vars = match external::home_settings(config.agent, &home, &wt.path) {
        Ok(vars) => vars,
        Err(error) => return Err(HomeError::Settings { home, error }),
    };
    config.set_env.extend(vars);
    config.home = Some(home);
    Ok(())
}
