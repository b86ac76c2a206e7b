//! The built-in agent's trajectory, from its typed turns ([`crate::builtin::Entry`]):
//! the system prompt and the user's, then one agent step per model turn with its tool calls and
//! their results, and the error that ended the run, if one did.

use super::{agent_step, system_note};
use crate::builtin::Entry;
use repoprobe_core::model::trajectory::{
    ObservationResult, Step, StepMetrics, StepSource, ToolCall, Trajectory, TrajectoryAgent,
};
use repoprobe_llm::Tokens;
use repoprobe_llm::chat::ToolCall as LlmToolCall;
use serde_json::{Map, Value, json};

/// The steps of a built-in run's transcript.
pub fn convert(transcript: &[Entry]) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryAgent::default());
    for e in transcript {
        match e {
            Entry::System { text, tools } => {
                t.agent.tool_definitions = Some(tools.iter().map(|n| json!({"name": n})).collect());
                t.push(Step::new(StepSource::System, text.as_str()));
            }
            Entry::User { text, .. } => {
                t.push(Step::new(StepSource::User, text.as_str()));
            }
            Entry::Model {
                text,
                tool_calls,
                tokens,
                stop_reason,
                ..
            } => {
                t.push(model_step(
                    text,
                    tool_calls,
                    *tokens,
                    stop_reason.as_deref(),
                ));
            }
            Entry::Tool {
                id,
                content,
                is_error,
                ..
            } => {
                t.attach_result(ObservationResult::of(id, content, *is_error));
            }
            Entry::Error { message } => {
                t.push(system_note(message.as_str(), true));
            }
        }
    }
    t
}

/// A model turn as an agent step: its text, its tool calls (an unusable call's arguments kept
/// with why under the call's `extra`), its tokens and stop reason.
fn model_step(text: &str, calls: &[LlmToolCall], tokens: Tokens, stop: Option<&str>) -> Step {
    let mut s = agent_step(text);
    let calls: Vec<ToolCall> = calls
        .iter()
        .map(|c| {
            let mut call = ToolCall::new(&c.id, &c.name, c.input.clone());
            if let Some(why) = &c.invalid {
                call.extra = Some(Map::from_iter([("invalid".to_string(), json!(why))]));
            }
            call
        })
        .collect();
    if !calls.is_empty() {
        s.tool_calls = Some(calls);
    }
    s.metrics = Some(StepMetrics {
        prompt_tokens: Some(tokens.input_tokens),
        completion_tokens: Some(tokens.output_tokens),
        ..StepMetrics::default()
    });
    if let Some(r) = stop {
        s.set_extra("stop_reason", Value::String(r.to_string()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::facts::Facts;

    #[test]
    fn a_built_in_transcript_becomes_steps_with_results_in_place() {
        let tokens = |i, o| Tokens {
            input_tokens: i,
            output_tokens: o,
        };
        let transcript = vec![
            Entry::System {
                text: "sys".into(),
                tools: vec!["read_file".into(), "search".into()],
            },
            Entry::User {
                turn: None,
                text: "q".into(),
            },
            Entry::Model {
                turn: 1,
                text: String::new(),
                tool_calls: vec![LlmToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "src/lib.rs"}),
                    invalid: None,
                }],
                tokens: tokens(10, 2),
                stop_reason: Some("tool_calls".into()),
            },
            Entry::Tool {
                turn: 1,
                id: "c1".into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
                content: "src/lib.rs (lines 1-1 of 1)\n1\tfn x".into(),
                is_error: false,
            },
            Entry::Model {
                turn: 2,
                text: "It is x.".into(),
                tool_calls: vec![],
                tokens: tokens(20, 5),
                stop_reason: Some("stop".into()),
            },
        ];
        let t = convert(&transcript);
        assert_eq!(t.steps.len(), 4);
        assert_eq!(
            t.steps[2].observation.as_ref().unwrap().results[0].text(),
            "src/lib.rs (lines 1-1 of 1)\n1\tfn x"
        );
        assert_eq!(t.steps[3].message.text(), "It is x.");
        assert_eq!(t.steps[3].metrics.as_ref().unwrap().prompt_tokens, Some(20));
        assert_eq!(t.agent.tool_definitions.as_ref().unwrap().len(), 2);
        assert!(t.problems().is_empty());
        let f = Facts::of(&t);
        assert_eq!(
            (f.turns, f.files_read.clone()),
            (2, vec!["src/lib.rs".to_string()])
        );
    }

    #[test]
    fn a_run_that_ended_in_an_error_says_so_in_its_last_step() {
        let t = convert(&[
            Entry::User {
                turn: None,
                text: "q".into(),
            },
            Entry::Error {
                message: "turn limit reached".into(),
            },
        ]);
        assert_eq!(t.steps[1].source, StepSource::System);
        assert_eq!(t.steps[1].extra.as_ref().unwrap()["error"], true);
    }
}
