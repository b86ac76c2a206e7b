//! A run's trajectory in ATIF (the core's `model::trajectory`): each agent's output converted
//! by its own module (`builtin` here from the built-in agent's turns, each CLI's in
//! `external/<cli>.rs`), then [`assemble`]d with what every run shares — the prompt as the
//! first steps, the agent, the run's own fields under `extra`, the totals — and the facts the
//! answer record keeps (`repoprobe_core::facts`).

pub mod builtin;

use repoprobe_core::facts::Facts;
use repoprobe_core::model::trajectory::{Step, StepSource, Trajectory, TrajectoryAgent};
use serde_json::{Map, Value, json};

/// What a run shares with every other, whatever its agent.
#[derive(Debug, Clone, Default)]
pub struct RunInfo<'a> {
    pub agent: &'a str,
    pub version: &'a str,
    pub model: &'a str,
    /// The system prompt, when the agent was given one of ours.
    pub system: Option<&'a str>,
    pub prompt: &'a str,
    /// The worktree's root as the agent saw it (its absolute paths start with it).
    pub worktree: &'a str,
    /// The record's own fields (`question_id`, `model`, `attempt`, `repo`, `commit`,
    /// `prompt_version`), copied under `extra`.
    pub extra: Map<String, Value>,
}

/// The run's trajectory: the prompt's steps, then the agent's `converted` steps (renumbered),
/// with `converted`'s session, notes and totals kept and the rest filled in; and its facts,
/// read once (the totals' `turns` and the record's `agent` block both come from them).
pub fn assemble(info: &RunInfo, converted: Trajectory) -> (Trajectory, Facts) {
    let mut t = Trajectory::new(TrajectoryAgent {
        name: info.agent.to_string(),
        version: info.version.to_string(),
        model_name: Some(info.model.to_string()).filter(|m| !m.is_empty()),
        ..converted.agent
    });
    t.session_id = converted.session_id;
    t.notes = converted.notes;
    let starts_with_prompt = converted
        .steps
        .first()
        .is_some_and(|s| s.source != StepSource::Agent);
    if !starts_with_prompt {
        if let Some(system) = info.system {
            t.push(Step::new(StepSource::System, system));
        }
        t.push(Step::new(StepSource::User, info.prompt));
    }
    for mut s in converted.steps {
        check_timestamp(&mut s);
        t.push(s);
    }
    let mut extra = info.extra.clone();
    extra.insert("worktree".into(), json!(info.worktree));
    t.extra = Some(extra);
    let summed = t.summed_metrics();
    let mut totals = converted.final_metrics.unwrap_or_default();
    totals.total_prompt_tokens = totals.total_prompt_tokens.or(summed.total_prompt_tokens);
    totals.total_completion_tokens = totals
        .total_completion_tokens
        .or(summed.total_completion_tokens);
    totals.total_cached_tokens = totals.total_cached_tokens.or(summed.total_cached_tokens);
    totals.total_steps = Some(t.steps.len() as u64);
    let facts = Facts::of(&t);
    totals
        .extra
        .get_or_insert_with(Map::new)
        .insert("turns".into(), json!(facts.turns));
    t.final_metrics = Some(totals);
    (t, facts)
}

/// A step's timestamp as ATIF's models read it (ISO 8601): the CLI's own, checked and written in
/// one UTC form (`2025-10-16T14:30:00.25Z`). One that does not read as a UTC date and time is
/// left out and said in the step's `extra` (`timestamp_unread`), never copied: the CLI's text
/// is not ATIF's type.
fn check_timestamp(s: &mut Step) {
    let Some(given) = s.timestamp.take() else {
        return;
    };
    match utc_timestamp(&given) {
        Some(t) => s.timestamp = Some(t),
        None => s.set_extra("timestamp_unread", Value::String(given)),
    }
}

/// `given` in the one form written, when it holds a UTC date and time (`Z` or `+00:00`).
fn utc_timestamp(given: &str) -> Option<String> {
    let t = given.trim();
    let zoned = ["Z", "z", "+00:00"].iter().any(|z| t.ends_with(z));
    if !zoned || !t.contains(['T', 't', ' ']) {
        return None;
    }
    let secs = repoprobe_core::date::parse_utc(t)?;
    let whole = repoprobe_core::date::format_utc(secs);
    let fraction = t
        .split_once('.')
        .map(|(_, f)| f.trim_end_matches(['Z', 'z']).trim_end_matches("+00:00"))
        .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    Some(match fraction {
        Some(f) => format!("{}.{f}Z", whole.trim_end_matches('Z')),
        None => whole,
    })
}

/// One agent step of `text` (a model response), optionally an error of the run.
pub fn agent_step(text: impl Into<String>) -> Step {
    Step::new(StepSource::Agent, text)
}

/// A step the infrastructure reports: an error that ended the run, a warning.
pub fn system_note(text: impl Into<String>, error: bool) -> Step {
    let mut s = Step::new(StepSource::System, text);
    if error {
        s.set_extra("error", Value::Bool(true));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::model::trajectory::{Observation, ObservationResult, ToolCall};

    #[test]
    fn the_prompt_comes_first_and_the_run_fields_under_extra() {
        let mut converted = Trajectory::new(TrajectoryAgent::default());
        let s = converted.push(agent_step(""));
        s.tool_calls = Some(vec![ToolCall::new(
            "t1",
            "Read",
            json!({"file_path": "/wt/a.rs"}),
        )]);
        s.observation = Some(Observation {
            results: vec![ObservationResult::of("t1", "x", false)],
        });
        converted.push(agent_step("answer"));
        let info = RunInfo {
            agent: "claude-code",
            version: "2.1.332",
            model: "m",
            prompt: "q?",
            worktree: "/wt",
            extra: Map::from_iter([("question_id".to_string(), json!("q1"))]),
            ..RunInfo::default()
        };
        let (t, facts) = assemble(&info, converted);
        assert_eq!(facts, Facts::of(&t));
        assert_eq!(t.steps.len(), 3);
        assert_eq!(t.steps[0].source, StepSource::User);
        assert_eq!(t.steps[2].step_id, 3);
        assert_eq!(t.extra_str("question_id"), Some("q1"));
        assert_eq!(t.extra_str("worktree"), Some("/wt"));
        let fm = t.final_metrics.as_ref().unwrap();
        assert_eq!(fm.total_steps, Some(3));
        assert_eq!(fm.extra.as_ref().unwrap()["turns"], 2);
        assert!(t.problems().is_empty());
        assert_eq!(Facts::of(&t).files_read, ["a.rs"]);
    }

    #[test]
    fn a_cli_timestamp_is_written_in_one_utc_form_or_left_out_and_said() {
        for (given, written) in [
            ("2025-10-16T14:30:00Z", Some("2025-10-16T14:30:00Z")),
            ("2025-10-16T14:30:00.123Z", Some("2025-10-16T14:30:00.123Z")),
            ("2025-10-16t14:30:00z", Some("2025-10-16T14:30:00Z")),
            ("2025-10-16 14:30:00+00:00", Some("2025-10-16T14:30:00Z")),
            // A leap second is the second before it (jiff's reading, POSIX time's).
            ("2025-12-31T23:59:60Z", Some("2025-12-31T23:59:59Z")),
            ("2025-10-16T14:30:00", None),
            ("2025-10-16T14:30:00+02:00", None),
            ("1765000000", None),
            ("2025-13-01T00:00:00Z", None),
            ("yesterday", None),
            ("", None),
        ] {
            let mut s = agent_step("x");
            s.timestamp = Some(given.to_string());
            check_timestamp(&mut s);
            assert_eq!(s.timestamp.as_deref(), written, "{given:?}");
            let said = s.extra.as_ref().and_then(|e| e.get("timestamp_unread"));
            assert_eq!(said.is_some(), written.is_none(), "{given:?}");
        }
    }
}
