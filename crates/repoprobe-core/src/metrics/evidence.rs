//! Evidence of the runs, per model: what an answer cost (tokens, USD, seconds, agent turns) and
//! how often the agent edited the repository it was asked about (`agent.worktree_changed`, the
//! edit bias), from the answer records' optional fields (docs/format.md#answer). Each mean is over the
//! answers that carry that field (failed runs included: they cost too); a model whose answers
//! carry none of a field has no value there, never a zero.

use super::stats::mean;
use crate::facts::ToolKind;
use crate::model::Answer;
use crate::model::agent::AgentBlock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One model's evidence: the means per answer and the share of runs that edited the worktree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelEvidence {
    pub model: String,
    /// Answer records of this model (every attempt, failed runs included).
    pub answers: usize,
    pub mean_cost_usd: Option<f64>,
    pub mean_input_tokens: Option<f64>,
    pub mean_output_tokens: Option<f64>,
    pub mean_turns: Option<f64>,
    pub mean_duration_s: Option<f64>,
    /// Percent (0–100) of the answers saying whether the worktree changed that say it did.
    pub edited_pct: Option<f64>,
    /// Percent (0–100) of the answers recording their tool calls that attempted an edit
    /// ([`edit_attempts`] > 0): the edit bias from behaviour, refused edits included.
    #[serde(default)]
    pub attempted_edit_pct: Option<f64>,
}

impl ModelEvidence {
    /// Whether any answer of the model carried any evidence at all.
    pub fn any(&self) -> bool {
        [
            self.mean_cost_usd,
            self.mean_input_tokens,
            self.mean_output_tokens,
            self.mean_turns,
            self.mean_duration_s,
            self.edited_pct,
            self.attempted_edit_pct,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// The agent's turns of one answer (`agent.turns`), if a whole number is given.
pub fn turns(a: &Answer) -> Option<u64> {
    AgentBlock::of(a)?.turns
}

/// Whether the agent left the worktree changed (`agent.worktree_changed`), if said.
pub fn worktree_changed(a: &Answer) -> Option<bool> {
    AgentBlock::of(a)?.worktree_changed
}

/// The edit tool calls the agent attempted, refused by the sandbox or not (`agent.tool_calls`'s
/// `edit`, a shell command that writes into the worktree counted as one: docs/metrics.md#edit-attempts);
/// `None` when the answer does not record its tool calls.
pub fn edit_attempts(a: &Answer) -> Option<u64> {
    let calls = AgentBlock::of(a)?.tool_calls.as_ref()?;
    Some(calls.get(ToolKind::Edit.as_str()).copied().unwrap_or(0))
}

/// The files an agent changed (`agent.changes`: the object `repoprobe answer` writes, or an
/// older list of paths or of objects with a `path`).
pub fn changes(a: &Answer) -> Vec<String> {
    AgentBlock::of(a)
        .map(|b| b.changed_paths())
        .unwrap_or_default()
}

/// Per-model evidence, in model order.
pub fn evidence(answers: &[Answer]) -> Vec<ModelEvidence> {
    let mut by_model: BTreeMap<&str, Vec<&Answer>> = BTreeMap::new();
    for a in answers {
        by_model.entry(&a.model).or_default().push(a);
    }
    by_model
        .into_iter()
        .map(|(model, list)| {
            let of = |f: &dyn Fn(&Answer) -> Option<f64>| {
                let mut v: Vec<f64> = list
                    .iter()
                    .filter_map(|a| f(a))
                    .filter(|x| x.is_finite())
                    .collect();
                // Summed in value order, so the input's order never changes a digit.
                v.sort_unstable_by(f64::total_cmp);
                mean(&v)
            };
            let usage = |a: &Answer| a.usage.clone().unwrap_or_default();
            ModelEvidence {
                model: model.to_string(),
                answers: list.len(),
                mean_cost_usd: of(&|a| usage(a).cost_usd),
                mean_input_tokens: of(&|a| usage(a).input_tokens.map(|t| t as f64)),
                mean_output_tokens: of(&|a| usage(a).output_tokens.map(|t| t as f64)),
                mean_turns: of(&|a| turns(a).map(|t| t as f64)),
                mean_duration_s: of(&|a| a.duration_s),
                edited_pct: of(&|a| worktree_changed(a).map(|c| if c { 100.0 } else { 0.0 })),
                attempted_edit_pct: of(&|a| {
                    edit_attempts(a).map(|n| if n > 0 { 100.0 } else { 0.0 })
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Usage;
    use serde_json::json;

    fn answer(model: &str, cost: Option<f64>, agent: Option<serde_json::Value>) -> Answer {
        Answer {
            question_id: "q1".into(),
            model: model.into(),
            attempt: 0,
            answer: Some("a".into()),
            agent: agent.and_then(|v| serde_json::from_value(v).ok()),
            usage: cost.map(|c| Usage {
                input_tokens: Some(1000),
                output_tokens: Some(10),
                cost_usd: Some(c),
            }),
            duration_s: Some(2.0),
            error: None,
        }
    }

    #[test]
    fn means_are_over_the_answers_that_carry_the_field() {
        let a = [
            answer(
                "m",
                Some(0.5),
                Some(json!({"turns": 3, "worktree_changed": true, "changes": ["a.rs"]})),
            ),
            answer(
                "m",
                Some(0.25),
                Some(json!({"turns": 5, "worktree_changed": false})),
            ),
            answer("m", None, None),
        ];
        let e = evidence(&a);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].answers, 3);
        assert_eq!(e[0].mean_cost_usd, Some(0.375));
        assert_eq!(e[0].mean_input_tokens, Some(1000.0));
        assert_eq!(e[0].mean_turns, Some(4.0));
        assert_eq!(e[0].mean_duration_s, Some(2.0));
        assert_eq!(e[0].edited_pct, Some(50.0));
        assert_eq!(changes(&a[0]), ["a.rs"]);
    }

    #[test]
    fn no_evidence_is_none_not_zero() {
        let e = evidence(&[
            answer("b", None, None),
            answer("a", None, Some(json!({"name": "x"}))),
        ]);
        assert_eq!(
            e.iter().map(|m| m.model.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(e[0].mean_cost_usd, None);
        assert_eq!(e[0].edited_pct, None);
        assert!(!e[1].any() || e[1].mean_duration_s.is_some());
    }

    #[test]
    fn changes_take_paths_from_strings_or_objects() {
        let a = answer(
            "m",
            None,
            Some(json!({"changes": ["x.rs", {"path": "y.rs", "status": "M"}, 3]})),
        );
        assert_eq!(changes(&a), ["x.rs", "y.rs"]);
        // What `repoprobe answer` writes: an object with the files and what happened to them.
        let written = answer(
            "m",
            None,
            Some(
                json!({"changes": {"files": [{"path": "src/a.rs", "kind": "modified"},
                {"path": "n.rs", "kind": "renamed", "from": "o.rs"}], "head_moved_to": "c0ffee"}}),
            ),
        );
        assert_eq!(changes(&written), ["src/a.rs", "n.rs"]);
    }

    #[test]
    fn the_table_shows_the_unrounded_mean_and_none_without_evidence() {
        let t = crate::report::evidence_table(&evidence(&[
            answer("m", Some(0.1), None),
            answer("m", Some(0.2), None),
        ]))
        .unwrap();
        assert_eq!(t.rows[0][2].text, "0.1500");
        assert_eq!(t.rows[0][2].value, Some((0.1 + 0.2) / 2.0));
        let mut bare = answer("m", None, None);
        bare.duration_s = None;
        assert!(crate::report::evidence_table(&evidence(&[bare])).is_none());
    }
}
