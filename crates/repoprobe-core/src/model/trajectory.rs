//! One run of an agent, step by step, in the Agent Trajectory Interchange Format (ATIF, Harbor's
//! RFC 0001; docs/format.md#trajectory): the one format of every run, whichever agent made it,
//! so that the site, the facts of the agent block and other tools (Harbor, Docent) read them
//! alike. Each agent's converter (in the agent crate) writes one; the site reads them back.
//!
//! Written, a trajectory holds only the RFC's fields (its reference models forbid any other);
//! ours go under `extra`. Read, unknown fields are ignored, so a trajectory of a newer ATIF
//! version still shows.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// The ATIF version written.
pub const ATIF_VERSION: &str = "ATIF-v1.8";

/// The root document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Trajectory {
    /// `ATIF-v1.8` when we wrote it.
    pub schema_version: String,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub session_id: Option<String>,
    pub agent: TrajectoryAgent,
    /// What the trajectory leaves out or renders differently from the agent's own output.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub final_metrics: Option<FinalMetrics>,
    /// Ours: `question_id`, `model`, `attempt`, `repo`, `commit`, `prompt_version`, and
    /// `worktree` (the root as the agent saw it, so its absolute paths can be made relative).
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Map<String, Value>>"))]
    pub extra: Option<Map<String, Value>>,
    /// Written last, so that the first bytes of a trajectories line hold every other field.
    pub steps: Vec<Step>,
}

/// The agent that made the trajectory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct TrajectoryAgent {
    /// `builtin`, `claude-code`, `codex`, `gemini`, `command`, …
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub model_name: Option<String>,
    /// The tools offered to the model, as function definitions (`name`, `description`,
    /// `parameters`) where known.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub tool_definitions: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
}

/// Who a step comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum StepSource {
    System,
    User,
    Agent,
}

/// One step: a system prompt, a user message, or one response of the model with the tool calls
/// it made and what they returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Step {
    /// 1, 2, 3, … in order.
    pub step_id: u64,
    /// ISO 8601, where the agent's output gives one.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub timestamp: Option<String>,
    pub source: StepSource,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub model_name: Option<String>,
    /// The step's text (empty when a model response was tool calls only).
    #[serde(default)]
    pub message: Message,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub observation: Option<Observation>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub metrics: Option<StepMetrics>,
    /// Ours: `error` (why the run ended here), `stop_reason`.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
    /// Model calls behind an agent step: `0` for a step no model made (a tool result the agent
    /// reported on its own); absent means one.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub llm_call_count: Option<u32>,
}

/// A step's text: plain, or the RFC's multimodal parts (read for the text parts only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum Message {
    Text(String),
    Parts(Vec<Value>),
}

impl Default for Message {
    fn default() -> Message {
        Message::Text(String::new())
    }
}

impl Message {
    /// The text, multimodal parts' text joined by newlines.
    pub fn text(&self) -> String {
        match self {
            Message::Text(t) => t.clone(),
            Message::Parts(parts) => parts_text(parts),
        }
    }
}

/// One tool call of a model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    /// The input as a JSON object (an input that was not one is kept as `{"input": …}`).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Map<String, Value>"))]
    pub arguments: Map<String, Value>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
}

/// What the step's tool calls returned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct Observation {
    pub results: Vec<ObservationResult>,
}

/// One tool call's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct ObservationResult {
    /// The [`ToolCall::tool_call_id`] it answers.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub source_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub content: Option<Content>,
    /// Ours: `is_error` (the tool failed), `exit_code` (a shell command's).
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
}

impl ObservationResult {
    /// Whether the tool reported a failure.
    pub fn is_error(&self) -> bool {
        self.extra
            .as_ref()
            .and_then(|e| e.get("is_error"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The content's text.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Content::Text(t)) => t.clone(),
            Some(Content::Parts(p)) => parts_text(p),
            None => String::new(),
        }
    }
}

/// A result's content: text, or multimodal parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Value>),
}

/// Tokens and cost of one model response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct StepMetrics {
    /// Every input token, cached ones included.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
}

/// The whole run's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct FinalMetrics {
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub total_prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub total_completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub total_cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub total_cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub total_steps: Option<u64>,
    /// Ours: `duration_s`, `turns`.
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub extra: Option<Map<String, Value>>,
}

impl Trajectory {
    /// An empty trajectory of `agent`.
    pub fn new(agent: TrajectoryAgent) -> Trajectory {
        Trajectory {
            schema_version: ATIF_VERSION.into(),
            session_id: None,
            agent,
            steps: Vec::new(),
            notes: None,
            final_metrics: None,
            extra: None,
        }
    }

    /// Appends a step, numbering it.
    pub fn push(&mut self, mut step: Step) -> &mut Step {
        step.step_id = self.steps.len() as u64 + 1;
        self.steps.push(step);
        self.steps.last_mut().expect("just pushed")
    }

    /// Puts a tool call's result in the observation of the latest step that made the call;
    /// `false` (and nothing kept) when no step did.
    pub fn attach_result(&mut self, result: ObservationResult) -> bool {
        let Some(id) = result.source_call_id.as_deref() else {
            return false;
        };
        let maker = self
            .steps
            .iter_mut()
            .rev()
            .find(|s| s.tool_calls.iter().flatten().any(|c| c.tool_call_id == id));
        match maker {
            Some(s) => {
                s.observation
                    .get_or_insert_with(Observation::default)
                    .results
                    .push(result);
                true
            }
            None => false,
        }
    }

    /// A string field of `extra`.
    pub fn extra_str(&self, key: &str) -> Option<&str> {
        self.extra.as_ref()?.get(key)?.as_str()
    }

    /// Totals summed from the steps' metrics (a total is absent when no step gave it), with
    /// `total_steps` the number of steps.
    pub fn summed_metrics(&self) -> FinalMetrics {
        let sum = |f: fn(&StepMetrics) -> Option<u64>| {
            self.steps
                .iter()
                .filter_map(|s| s.metrics.as_ref().and_then(f))
                .reduce(|a, b| a + b)
        };
        FinalMetrics {
            total_prompt_tokens: sum(|m| m.prompt_tokens),
            total_completion_tokens: sum(|m| m.completion_tokens),
            total_cached_tokens: sum(|m| m.cached_tokens),
            total_cost_usd: None,
            total_steps: Some(self.steps.len() as u64),
            extra: None,
        }
    }

    /// What breaks the RFC's rules (each a sentence naming the step): ids not 1, 2, 3, …; an
    /// agent-only field on a system or user step; a result answering no call of its step.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, s) in self.steps.iter().enumerate() {
            let n = i as u64 + 1;
            if s.step_id != n {
                out.push(format!("step {n} has step_id {} (expected {n})", s.step_id));
            }
            if s.source != StepSource::Agent
                && (s.model_name.is_some()
                    || s.reasoning_content.is_some()
                    || s.tool_calls.is_some()
                    || s.metrics.is_some())
            {
                out.push(format!(
                    "step {n} is not the agent's but has model fields (model_name, reasoning_content, tool_calls or metrics)"
                ));
            }
            if let (Some(obs), Some(calls)) = (&s.observation, &s.tool_calls) {
                for r in &obs.results {
                    if let Some(id) = &r.source_call_id
                        && !calls.iter().any(|c| &c.tool_call_id == id)
                    {
                        out.push(format!(
                            "step {n} has a result for {id:?}, a call it did not make"
                        ));
                    }
                }
            }
        }
        out
    }
}

impl Step {
    /// A step of `source` with `message`.
    pub fn new(source: StepSource, message: impl Into<String>) -> Step {
        Step {
            step_id: 0,
            timestamp: None,
            source,
            model_name: None,
            message: Message::Text(message.into()),
            reasoning_content: None,
            tool_calls: None,
            observation: None,
            metrics: None,
            extra: None,
            llm_call_count: None,
        }
    }

    /// Whether a model made this step (an agent step not marked `llm_call_count: 0`).
    pub fn is_model_response(&self) -> bool {
        self.source == StepSource::Agent && self.llm_call_count != Some(0)
    }

    /// The result of the call `id` in this step.
    pub fn result_of(&self, id: &str) -> Option<&ObservationResult> {
        self.observation
            .as_ref()?
            .results
            .iter()
            .find(|r| r.source_call_id.as_deref() == Some(id))
    }

    /// Sets one field of `extra`.
    pub fn set_extra(&mut self, key: &str, value: Value) {
        self.extra
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
    }
}

impl ToolCall {
    /// A call with `arguments`: an object kept as it is, anything else as `{"input": …}`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> ToolCall {
        let arguments = match arguments {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => Map::from_iter([("input".to_string(), other)]),
        };
        ToolCall {
            tool_call_id: id.into(),
            function_name: name.into(),
            arguments,
            extra: None,
        }
    }
}

impl ObservationResult {
    /// The result of call `id`: `content`, failed or not.
    pub fn of(id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        ObservationResult {
            source_call_id: Some(id.into()),
            content: Some(Content::Text(content.into())),
            extra: is_error.then(|| Map::from_iter([("is_error".to_string(), Value::Bool(true))])),
        }
    }
}

/// The `text` of every `{"type": "text", "text": …}` part, joined by newlines.
fn parts_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Trajectory {
        let mut t = Trajectory::new(TrajectoryAgent {
            name: "builtin".into(),
            version: "repoprobe 0.1.0".into(),
            ..TrajectoryAgent::default()
        });
        t.push(Step::new(StepSource::System, "You answer questions."));
        t.push(Step::new(StepSource::User, "What does main do?"));
        let s = t.push(Step::new(StepSource::Agent, ""));
        s.tool_calls = Some(vec![ToolCall::new(
            "c1",
            "read_file",
            json!({"path": "src/main.rs"}),
        )]);
        s.observation = Some(Observation {
            results: vec![ObservationResult::of("c1", "fn main() {}", false)],
        });
        s.metrics = Some(StepMetrics {
            prompt_tokens: Some(100),
            completion_tokens: Some(10),
            ..StepMetrics::default()
        });
        t
    }

    #[test]
    fn steps_are_numbered_and_round_trip_without_empty_fields() {
        let t = sample();
        assert_eq!(
            t.steps.iter().map(|s| s.step_id).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["schema_version"], ATIF_VERSION);
        assert!(v["steps"][0].get("tool_calls").is_none());
        assert!(
            v["steps"][2]["observation"]["results"][0]
                .get("extra")
                .is_none()
        );
        let back: Trajectory = serde_json::from_value(v).unwrap();
        assert_eq!(back, t);
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        assert_eq!(t.summed_metrics().total_prompt_tokens, Some(100));
        assert_eq!(t.summed_metrics().total_cached_tokens, None);
    }

    #[test]
    fn a_newer_trajectory_with_unknown_fields_and_parts_still_reads() {
        let t: Trajectory = serde_json::from_value(json!({
            "schema_version": "ATIF-v9", "agent": {"name": "x", "version": "1", "new": 1},
            "steps": [{"step_id": 1, "source": "agent", "message": [{"type": "text", "text": "hi"}],
                       "observation": {"results": [{"content": [{"type": "text", "text": "out"}]}]},
                       "future_field": true}]
        }))
        .unwrap();
        assert_eq!(t.steps[0].message.text(), "hi");
        assert_eq!(
            t.steps[0].observation.as_ref().unwrap().results[0].text(),
            "out"
        );
    }

    #[test]
    fn rule_breaking_steps_are_named() {
        let mut t = sample();
        t.steps[1].step_id = 7;
        t.steps[0].metrics = Some(StepMetrics::default());
        t.steps[2].observation.as_mut().unwrap().results[0].source_call_id = Some("zz".into());
        let p = t.problems();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].starts_with("step 1 is not the agent's"));
        assert!(p[1].contains("step_id 7"));
        assert!(p[2].contains("\"zz\""));
    }
}
