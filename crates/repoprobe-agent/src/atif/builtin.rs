//! The built-in agent's trajectory, from its turns ([`crate::builtin::BuiltinRun::transcript`]):
//! the system prompt and the user's, then one agent step per model turn with its tool calls and
//! their results, and the error that ended the run, if one did.

use super::{agent_step, system_note};
use repoprobe_core::model::trajectory::{
    ObservationResult, Step, StepMetrics, StepSource, ToolCall, Trajectory, TrajectoryAgent,
};
use serde_json::{Map, Value, json};

/// The steps of a built-in run's transcript (entries of a kind it does not know are left out).
pub fn convert(transcript: &[Value]) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryAgent::default());
    for e in transcript {
        let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match e.get("kind").and_then(Value::as_str).unwrap_or("") {
            "system" => {
                t.agent.tool_definitions = e.get("tools").and_then(Value::as_array).map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|n| json!({"name": n}))
                        .collect()
                });
                t.push(Step::new(StepSource::System, text("text")));
            }
            "user" => {
                t.push(Step::new(StepSource::User, text("text")));
            }
            "model" => {
                let s = t.push(model_step(e));
                s.message = repoprobe_core::model::trajectory::Message::Text(text("text"));
            }
            "tool" => tool_result(&mut t, e),
            "error" => {
                t.push(system_note(text("message"), true));
            }
            _ => {}
        }
    }
    t
}

fn model_step(e: &Value) -> Step {
    let mut s = agent_step("");
    let calls: Vec<ToolCall> = e
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let mut call = ToolCall::new(
                c.get("id").and_then(Value::as_str).unwrap_or(""),
                c.get("name").and_then(Value::as_str).unwrap_or(""),
                c.get("input").cloned().unwrap_or(Value::Null),
            );
            if let Some(why) = c.get("invalid").and_then(Value::as_str) {
                call.extra = Some(Map::from_iter([("invalid".to_string(), json!(why))]));
            }
            call
        })
        .collect();
    if !calls.is_empty() {
        s.tool_calls = Some(calls);
    }
    let n = |k: &str| e.pointer(&format!("/tokens/{k}")).and_then(Value::as_u64);
    s.metrics = Some(StepMetrics {
        prompt_tokens: n("input_tokens"),
        completion_tokens: n("output_tokens"),
        ..StepMetrics::default()
    });
    if let Some(r) = e.get("stop_reason").filter(|r| !r.is_null()) {
        s.set_extra("stop_reason", r.clone());
    }
    s
}

/// A tool's result, put with the call it answers.
fn tool_result(t: &mut Trajectory, e: &Value) {
    let id = e.get("id").and_then(Value::as_str).unwrap_or("");
    let content = e.get("content").and_then(Value::as_str).unwrap_or("");
    let failed = e.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    t.attach_result(ObservationResult::of(id, content, failed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::facts::Facts;

    #[test]
    fn a_built_in_transcript_becomes_steps_with_results_in_place() {
        let transcript = vec![
            json!({"kind": "system", "text": "sys", "tools": ["read_file", "search"]}),
            json!({"kind": "user", "text": "q"}),
            json!({"kind": "model", "turn": 1, "text": "", "tokens": {"input_tokens": 10, "output_tokens": 2},
                   "tool_calls": [{"id": "c1", "name": "read_file", "input": {"path": "src/lib.rs"}}],
                   "stop_reason": "tool_calls"}),
            json!({"kind": "tool", "turn": 1, "id": "c1", "name": "read_file", "input": {"path": "src/lib.rs"},
                   "content": "src/lib.rs (lines 1-1 of 1)\n1\tfn x", "is_error": false}),
            json!({"kind": "model", "turn": 2, "text": "It is x.", "tokens": {"input_tokens": 20, "output_tokens": 5},
                   "tool_calls": [], "stop_reason": "stop"}),
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
            json!({"kind": "user", "text": "q"}),
            json!({"kind": "error", "message": "turn limit reached"}),
        ]);
        assert_eq!(t.steps[1].source, StepSource::System);
        assert_eq!(t.steps[1].extra.as_ref().unwrap()["error"], true);
    }
}
