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
/// with `converted`'s session, notes and totals kept and the rest filled in.
pub fn assemble(info: &RunInfo, converted: Trajectory) -> Trajectory {
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
    for s in converted.steps {
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
    t
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
        let t = assemble(&info, converted);
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
}
