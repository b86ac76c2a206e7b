//! What a run gave ([`AgentResult`]) and what every CLI's reading shares: the counts the record
//! keeps, read once from the run's trajectory whatever the CLI ([`count`]: turns, tokens, cost,
//! the tally of tool calls that tells a broken environment from a model's mistakes), and the
//! helpers that find a JSON object in noisy output and cut long text for messages. Each CLI's
//! own format is read in its module, in one pass into its ATIF trajectory; the verdict on the
//! exit status and an empty answer is `super::registry::parse`'s.

use crate::verdict::{Cause, CouldNotRun, Verdict};
use repoprobe_core::facts::{ToolKind, kind_of};
use repoprobe_core::model::trajectory::{Trajectory, TrajectoryAgent};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// How much of stderr or of bad output goes into an error message.
pub(super) const ERROR_TAIL_CHARS: usize = 600;

/// What a run gave, parsed. Never holds a secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentResult {
    /// The final answer; `None` whenever `error` is set.
    pub answer: Option<String>,
    pub error: Option<String>,
    /// Model responses: those of the trajectory (the record's `turns`), or for an output that
    /// shows no steps as the CLI reports them (Claude Code's `num_turns`, Gemini's API requests).
    pub turns: Option<u32>,
    /// All input tokens, cached ones included.
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Of `input_tokens`, those read from the prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Of `input_tokens`, those written to the prompt cache (Claude).
    pub cache_creation_tokens: Option<u64>,
    /// As the CLI reports it (Claude Code prices tokens with its own table); Codex and Gemini
    /// report none.
    pub cost_usd: Option<f64>,
    /// Anything else worth keeping: session id, subtype, stop reason, tool calls, warnings.
    pub meta: BTreeMap<String, Value>,
    /// Why the run could not happen — the model API refused or failed, the agent could not
    /// start, its sandbox or environment broke — with its cause: it says nothing about the
    /// model, so it is a failure to retry, never an answer. Set where the fact is known (the
    /// CLI's parser, the runner); read through [`AgentResult::verdict`], where it wins over
    /// `answer` and `error`.
    pub could_not_run: Option<CouldNotRun>,
    /// The run's steps as the CLI's module converted them (`AgentCli::read`), before the
    /// prompt and the run's fields are added; `None` when no process ran.
    pub trajectory: Option<Trajectory>,
    /// The output did not read as the CLI's format (its error is ours, not the CLI's words).
    #[serde(skip)]
    pub(super) unparsed: bool,
    /// What of the counts `trajectory` holds, as the CLI's reading found its output ([`count`]).
    #[serde(skip)]
    pub(super) shown: Shown,
}

/// What a CLI's output showed of the run, hence which counts [`count`] reads from its
/// trajectory; the others are the CLI's reading's to set, from what its output reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Shown {
    /// Nothing is counted from it: the output did not read as the CLI's format, or its format
    /// reports no usage (`command`, Gemini's `json`, which holds counts only).
    #[default]
    Nothing,
    /// One result object (Claude Code's `json`): its tokens and cost are in the totals; turns
    /// and tool calls are as the CLI reports them.
    Totals,
    /// An event stream: every step, so the turns and the tool calls too.
    Steps,
}

/// What a failed tool call's output says when the sandbox, not the model, is to blame: the
/// CLI's own sandbox could not be built (Codex's bwrap: "error building bubblewrap command:
/// Read-only file system", its helper missing, Landlock or seccomp refused) or a program could
/// not be spawned in it. A tool's output is text only, so it is read as text: matched
/// case-insensitively, in calls that failed only.
const SANDBOX_SIGNS: &[&str] = &[
    "error building bubblewrap command",
    "bwrap: ",
    "codex-linux-sandbox",
    "failed to apply sandbox",
    "sandbox error",
    "landlock",
    "seccomp",
    "spawn enoent",
    "spawn eacces",
];

/// The agent's tool calls as its CLI reported them, and what they say of the environment.
#[derive(Debug, Default)]
pub(super) struct ToolTally {
    pub calls: u64,
    pub failed: u64,
    /// The first failed call's output that names a broken sandbox.
    sandbox: Option<String>,
    first_error: Option<String>,
}

impl ToolTally {
    /// One call: whether it succeeded, and its output (or error text).
    pub fn call(&mut self, ok: bool, output: &str) {
        self.calls += 1;
        if ok {
            return;
        }
        self.failed += 1;
        let lower = output.to_lowercase();
        if self.sandbox.is_none() && SANDBOX_SIGNS.iter().any(|s| lower.contains(s)) {
            self.sandbox = Some(tail(output.trim(), ERROR_TAIL_CHARS));
        }
        if self.first_error.is_none() {
            self.first_error = Some(tail(output.trim(), ERROR_TAIL_CHARS));
        }
    }

    /// Why the agent's tools could not work, if they could not: a failed call named a broken
    /// sandbox, or every call failed (two at least: one failing `grep` is the model's
    /// business).
    pub fn verdict(&self) -> Option<CouldNotRun> {
        if let Some(e) = &self.sandbox {
            return Some(CouldNotRun::new(
                Cause::Sandbox,
                format!("a tool call failed in the sandbox: {e}"),
            ));
        }
        (self.calls >= 2 && self.failed == self.calls).then(|| {
            CouldNotRun::new(
                Cause::Environment,
                format!(
                    "every tool call failed ({} of {}); the first: {}",
                    self.failed,
                    self.calls,
                    self.first_error.as_deref().unwrap_or("(no output)")
                ),
            )
        })
    }

    /// Puts the counts in `r.meta` and the verdict, if any, in `r.could_not_run` (unless the
    /// parser found a cause already: the API's refusal explains the tools' failures).
    pub fn record(&self, r: &mut AgentResult) {
        r.meta.insert("tool_calls".into(), self.calls.into());
        if self.failed > 0 {
            r.meta
                .insert("failed_tool_calls".into(), self.failed.into());
        }
        if r.could_not_run.is_none() {
            r.could_not_run = self.verdict();
        }
    }
}

/// Sets the counts of `r` from its trajectory, once, whatever the CLI — each one its reading
/// left unset, and only those its output showed ([`Shown`]): tokens and cost from the totals;
/// the turns (model responses, as the record's `turns`) and the tool calls from the steps,
/// then what the tool calls say of the environment ([`ToolTally::record`]).
pub(super) fn count(r: &mut AgentResult) {
    let Some(t) = &r.trajectory else {
        return;
    };
    // A stream without its totals (cut before its last line) is counted from its steps.
    let summed = (r.shown == Shown::Steps && t.final_metrics.is_none()).then(|| t.summed_metrics());
    if r.shown >= Shown::Totals
        && let Some(fm) = t.final_metrics.as_ref().or(summed.as_ref())
    {
        r.input_tokens = r.input_tokens.or(fm.total_prompt_tokens);
        r.output_tokens = r.output_tokens.or(fm.total_completion_tokens);
        r.cache_read_tokens = r.cache_read_tokens.or(fm.total_cached_tokens);
        r.cost_usd = r.cost_usd.or(fm.total_cost_usd);
    }
    if r.shown == Shown::Steps {
        let turns = t.steps.iter().filter(|s| s.is_model_response()).count();
        r.turns = r.turns.or(Some(u32::try_from(turns).unwrap_or(u32::MAX)));
        tally(t).record(r);
    }
}

/// The results of the trajectory's tool calls, edits aside: an edit refused by a read-only
/// sandbox is that sandbox doing its job, not a broken environment.
fn tally(t: &Trajectory) -> ToolTally {
    let mut tally = ToolTally::default();
    for step in &t.steps {
        let calls = step.tool_calls.as_deref().unwrap_or_default();
        let results = step.observation.iter().flat_map(|o| &o.results);
        for result in results {
            let id = result.source_call_id.as_deref();
            let call = calls.iter().find(|c| Some(c.tool_call_id.as_str()) == id);
            if call.is_some_and(|c| kind_of(&c.function_name) == ToolKind::Edit) {
                continue;
            }
            tally.call(!result.is_error(), &result.text());
        }
    }
    tally
}

/// A trajectory of one agent step: the whole output as its message (llm_call_count unknown).
pub(super) fn one_step(stdout: &str) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryAgent::default());
    t.push(crate::atif::agent_step(stdout));
    t.notes = Some("the agent's output holds no steps: it is kept whole as one".into());
    t
}

impl AgentResult {
    /// A result of a run that could not happen.
    pub fn could_not_run(cause: Cause, why: impl Into<String>) -> AgentResult {
        AgentResult {
            could_not_run: Some(CouldNotRun::new(cause, why)),
            ..AgentResult::default()
        }
    }

    /// How the run ended: a cause to not run wins over anything the agent said.
    pub fn verdict(&self) -> Verdict {
        if let Some(c) = &self.could_not_run {
            return Verdict::CouldNotRun(c.clone());
        }
        match (&self.answer, &self.error) {
            (Some(a), None) => Verdict::Answered(a.clone()),
            (_, Some(e)) => Verdict::AgentFailed(e.clone()),
            (None, None) => Verdict::AgentFailed("empty answer".into()),
        }
    }
}

pub(super) fn unparsable(what: &str, stdout: &str) -> AgentResult {
    let shown = tail(stdout.trim(), ERROR_TAIL_CHARS);
    AgentResult {
        error: Some(if shown.is_empty() {
            format!("no output (expected {what})")
        } else {
            format!("could not parse the output as {what}: {shown:?}")
        }),
        unparsed: true,
        ..AgentResult::default()
    }
}

/// The whole text as one JSON object, else the last line-started object (possibly spanning
/// several lines) that `wanted` accepts.
pub(super) fn json_object(text: &str, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return wanted(&v).then_some(v);
    }
    let mut starts: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter(|&i| text[i..].starts_with('{'))
        .collect();
    if text.starts_with('{') {
        starts.insert(0, 0);
    }
    for &start in starts.iter().rev() {
        let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next()
            && v.is_object()
            && wanted(&v)
        {
            return Some(v);
        }
    }
    None
}

/// The last `max` characters of `s` (a message's end says what went wrong).
pub(super) use repoprobe_core::text::cut_tail as tail;
