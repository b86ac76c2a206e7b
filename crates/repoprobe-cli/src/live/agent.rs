//! The commands that run an agent per key (`answer`, `curate verify`) over one skeleton
//! ([`AgentCommand`]): the flags they share checked and settled alike ([`Flags`], [`Settled`]),
//! the estimate of their runs printed alike, their keys run ([`run_keys`]) and each outcome
//! written ([`record`]): the command's record, or a failure record. And an agent run's files:
//! its trajectory (ATIF) and its raw output written beside the records, scrubbed of every
//! secret of ours, and the records themselves scrubbed the same way. The run itself is the
//! agent crate's one call (`repoprobe_agent::run`).

use super::estimate::{ESTIMATE_RESULT_TOKENS, ESTIMATE_TURN_OUTPUT_TOKENS, Estimate, render};
use super::events::Reporter;
use super::task::Outcome;
use super::{ApiArgs, RunArgs, Tally, run_jobs};
use crate::exit::Exit;
use crate::output::Journal;
use crate::repos::RepoArgs;
use crate::run_files::Layout;
use anyhow::bail;
use repoprobe_agent::builtin::Limits;
use repoprobe_agent::run::Run;
use repoprobe_agent::workspace::RepoSource;
use repoprobe_core::model::failure::{Cause, CouldNotRun};
use repoprobe_llm::key::scrub_env;
use repoprobe_llm::price::Price;
use serde::Serialize;
use serde_json::{Value, json};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A command that runs an agent per key (`answer`, `curate verify`), over one skeleton
/// ([`run_agent`]): its flags checked, then either the estimate of the runs it would make, or
/// its flags settled into its plan, which runs. What differs is the command's to say.
pub(crate) trait AgentCommand: Sized {
    /// As the command line names it (`answer`, `curate verify`).
    const NAME: &'static str;
    /// The flags settled: what the run reads from then on, never the flags.
    type Plan: Execute;
    /// The flags both commands take, each with its own defaults and words.
    fn flags(&self) -> Flags<'_>;
    /// The command's own checks, before anything else.
    fn check(&self) -> anyhow::Result<()> {
        Ok(())
    }
    /// `--estimate`: the runs not yet done, each assumed to take `turns` turns.
    fn estimate(&self, turns: u64) -> anyhow::Result<Estimated>;
    /// The plan, from the flags and what [`Flags::settle`] made of the shared ones.
    fn settle(self, settled: Settled) -> anyhow::Result<Self::Plan>;
}

/// An agent command's plan, which runs: every key not yet done that is this shard's.
pub(crate) trait Execute {
    fn execute(self) -> anyhow::Result<Exit>;
}

/// Runs the agent command whose flags are `a`: its checks, then either the estimate of its runs
/// or its plan, settled and run.
pub(crate) fn run_agent<C: AgentCommand>(a: C) -> anyhow::Result<Exit> {
    a.check()?;
    let flags = a.flags();
    flags.check()?;
    if let Some(turns) = flags.estimate {
        let e = a.estimate(u64::from(turns))?;
        let text = e.render(C::NAME, &flags, turns);
        crate::stdout::write(text.as_bytes())?;
        return Ok(Exit::Ok);
    }
    let settled = flags.settle()?;
    C::settle(a, settled)?.execute()
}

/// [`AgentCommand::flags`] of a command whose flags' fields bear the names of [`Flags`]'.
macro_rules! flags {
    () => {
        fn flags(&self) -> $crate::live::agent::Flags<'_> {
            $crate::live::agent::Flags {
                api: &self.api,
                run: &self.run,
                repo: &self.repo,
                worktrees: self.worktrees.as_deref(),
                agent_timeout_s: self.agent_timeout_s,
                max_turns: self.max_turns,
                max_run_tokens: self.max_run_tokens,
                estimate: self.estimate.then_some(self.estimate_turns),
            }
        }
    };
}
pub(crate) use flags;

/// The flags `answer` and `curate verify` both take.
pub struct Flags<'a> {
    pub api: &'a ApiArgs,
    pub run: &'a RunArgs,
    pub repo: &'a RepoArgs,
    /// `--worktrees` [default: <repos>/worktrees].
    pub worktrees: Option<&'a Path>,
    pub agent_timeout_s: f64,
    pub max_turns: u32,
    pub max_run_tokens: u64,
    /// `--estimate-turns` under `--estimate`.
    pub estimate: Option<u32>,
}

/// What both commands settle alike from their flags, before anything is read or any agent runs.
pub struct Settled {
    /// This shard's files (from here on `--out` is this shard's).
    pub layout: Layout,
    /// Keys worked on at once, and what the keys in flight get after SIGTERM.
    pub concurrency: (usize, Duration),
    pub price: Option<Price>,
    /// A run's limits (an agent CLI takes the time, and Claude Code the turns).
    pub limits: Limits,
    pub source: RepoSource,
    pub worktrees: PathBuf,
}

impl Flags<'_> {
    /// `--model` once, a wall-clock limit that is one.
    fn check(&self) -> anyhow::Result<()> {
        if !(self.agent_timeout_s.is_finite() && self.agent_timeout_s > 0.0) {
            bail!("--agent-timeout-s must be a positive number of seconds");
        }
        self.api.one_model()?;
        Ok(())
    }

    fn settle(&self) -> anyhow::Result<Settled> {
        Ok(Settled {
            layout: self.run.layout()?,
            concurrency: (self.run.concurrency as usize, self.run.grace()),
            price: self.run.price(self.api.model()),
            limits: Limits {
                max_turns: self.max_turns,
                max_total_tokens: self.max_run_tokens,
                timeout: Duration::from_secs_f64(self.agent_timeout_s),
            },
            source: self.repo.source()?,
            worktrees: self.worktrees.map_or_else(
                || self.repo.clone_cache.join("worktrees"),
                Path::to_path_buf,
            ),
        })
    }
}

/// A command's estimate of its runs (`live::estimate::agent_run`).
pub struct Estimated {
    /// The runs not yet done.
    pub runs: Estimate,
    /// The keys done already.
    pub done: usize,
    /// Where the input tokens come from, in words.
    pub input: &'static str,
    /// What the model of a run leaves out, in words.
    pub not_counted: &'static str,
}

impl Estimated {
    fn render(&self, command: &str, flags: &Flags<'_>, turns: u32) -> String {
        let model = flags.api.model();
        let price = flags.run.price(model);
        let mut text = render(command, model, self.runs, self.done, price, self.input);
        text.push_str(&format!(
            "  assumed: {turns} turns a run (--estimate-turns), each re-sending the prompt and the \
             conversation, every tool result adding {ESTIMATE_RESULT_TOKENS} tokens and every turn \
             writing {ESTIMATE_TURN_OUTPUT_TOKENS}; {}\n",
            self.not_counted
        ));
        text
    }
}

/// Runs `jobs`, at most `concurrency` at once, each outcome written by `record` as it comes
/// (`limit`: what holds the calls back, for the progress line); the tally, with how the run was
/// stopped.
pub fn run_keys<F, O>(
    concurrency: (usize, Duration),
    (price, other_shards): (Option<Price>, usize),
    limit: impl Fn() -> Option<&'static str> + 'static,
    jobs: impl ExactSizeIterator<Item = F>,
    mut record: impl FnMut(O, &mut Reporter) -> anyhow::Result<()>,
) -> anyhow::Result<Tally>
where
    F: std::future::Future<Output = O> + Send + 'static,
    O: Send + 'static,
{
    let mut reporter = Reporter::new(price, other_shards, limit);
    let ended = run_jobs(concurrency, jobs, &mut reporter, |o, r| record(o, r))?;
    let mut tally = reporter.into_tally();
    tally.stopped = ended.stopped;
    Ok(tally)
}

/// Writes how a key ended and counts it: its value by `written` (which reports it as done), or
/// its failure to `failures`, as the record of `failure_key(key)` with its reason scrubbed of
/// our secrets.
pub fn record<K: Display + Eq + std::hash::Hash, V, FK: Serialize>(
    o: Outcome<K, V>,
    failures: &mut Journal<K>,
    failure_key: impl FnOnce(&K) -> FK,
    prompt_version: &str,
    reporter: &mut Reporter,
    written: impl FnOnce(&K, V, &mut Reporter) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    reporter.on(o.spent());
    match o.result {
        Ok(v) => written(&o.key, v, reporter),
        Err(mut f) => {
            f.reason = scrub_env(&f.reason);
            failures.append(&f.record(&failure_key(&o.key), prompt_version))?;
            reporter.on(f.event(&o.key));
            Ok(())
        }
    }
}

/// Writes `run`'s trajectory to `<dir>/<name>.json` and its raw output to `<dir>/<name>.raw.json`;
/// returns the trajectory's path. A file that cannot be written is the machine's failure.
pub fn write_files(dir: &Path, name: &str, run: &Run) -> Result<PathBuf, CouldNotRun> {
    let trajectory = dir.join(format!("{name}.json"));
    let raw = dir.join(format!("{name}.raw.json"));
    serde_json::to_value(&run.trajectory)
        .map_err(RunFileError::Json)
        .and_then(|t| write_json(&trajectory, &t))
        .and_then(|()| write_json(&raw, &run.raw))
        .map_err(|e| CouldNotRun::new(Cause::Environment, e.to_string()))?;
    Ok(trajectory)
}

/// Why a run's file was not written: the machine's failure (`Cause::Environment`).
#[derive(Debug, thiserror::Error)]
enum RunFileError {
    #[error("{0}")]
    Json(serde_json::Error),
    #[error("cannot write {}: {error}", .path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Writes a JSON file, scrubbed of every secret of our environment.
fn write_json(path: &Path, v: &Value) -> Result<(), RunFileError> {
    let text = serde_json::to_string_pretty(v).map_err(RunFileError::Json)?;
    crate::input::write_atomically(path, scrub_env(&text).as_bytes()).map_err(|error| {
        RunFileError::Write {
            path: path.to_path_buf(),
            error,
        }
    })
}

/// `v` with every secret of our environment replaced in its strings (a secret holds no quote
/// or backslash once found in JSON text, so the replacement keeps the JSON whole).
pub fn scrubbed(v: Value) -> Value {
    scrubbed_with(v, scrub_env)
}

/// [`scrubbed`] with the scrubber given (the tests' own secrets).
fn scrubbed_with(v: Value, scrub: impl Fn(&str) -> String) -> Value {
    let text = v.to_string();
    let clean = scrub(&text);
    if clean == text {
        return v;
    }
    serde_json::from_str(&clean).unwrap_or_else(|_| json!({"error": "[redacted record]"}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_scrubbed_of_secrets_stays_json() {
        let secrets = ["sk-test-0123456789".to_string()];
        let scrub = |t: &str| repoprobe_llm::key::scrub_all(&secrets, t);
        let v = json!({"answer": "my key is sk-test-0123456789", "n": 1,
            "agent": {"meta": {"echo": ["x sk-test-0123456789 y"]}}});
        assert_eq!(
            scrubbed_with(v, scrub),
            json!({"answer": "my key is [redacted]", "n": 1,
                "agent": {"meta": {"echo": ["x [redacted] y"]}}})
        );
        let clean = json!({"answer": "ok", "n": 1});
        assert_eq!(scrubbed_with(clean.clone(), scrub), clean);
    }
}
