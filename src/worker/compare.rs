//! Two runs of one question side by side (`?view=compare`): each run's turns (its model
//! responses, numbered, so that turn n of one stands beside turn n of the other), each tool
//! call's reads marked when the path is the question's evidence — the first read of each
//! evidence path marked as such —, and the paths only one of the two read. The reads are the
//! core's `Facts` of each call (the kinds and paths the answer record counted).

use super::trajectory::steps::{call_facts, relative};
use crate::protocol::{CompareCall, CompareRead, CompareSide, CompareTurn};
use repoprobe_core::model::trajectory::Trajectory;
use repoprobe_core::trajectories::TrajectoryKey;
use std::collections::BTreeSet;

/// How much of a turn's text and of a call's input is shown.
const TEXT: usize = 240;
const INPUT: usize = 160;

fn short(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    repoprobe_core::text::cut(&flat, max)
}

/// One run's side, against the question's `evidence` paths.
pub fn side(key: TrajectoryKey, t: &Trajectory, evidence: &BTreeSet<String>) -> CompareSide {
    let root = t.extra_str("worktree");
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut read: Vec<String> = Vec::new();
    let mut turns = Vec::new();
    let mut n = 0;
    for step in &t.steps {
        if !step.is_model_response() && step.tool_calls.is_none() {
            continue;
        }
        n += 1;
        let calls = step
            .tool_calls
            .iter()
            .flatten()
            .map(|call| {
                let (kind, paths) = call_facts(step, call, root);
                let failed = step
                    .result_of(&call.tool_call_id)
                    .is_some_and(|r| r.is_error());
                let reads = paths
                    .into_iter()
                    .map(|path| {
                        let first = seen.insert(path.clone());
                        if first {
                            read.push(path.clone());
                        }
                        CompareRead {
                            evidence: evidence.contains(&path),
                            first,
                            path,
                        }
                    })
                    .collect();
                let input = serde_json::to_string(&call.arguments).unwrap_or_default();
                CompareCall {
                    name: call.function_name.clone(),
                    kind,
                    input: short(&relative(&input, root), INPUT),
                    read: reads,
                    failed,
                }
            })
            .collect();
        turns.push(CompareTurn {
            turn: n,
            step: step.step_id,
            text: short(&step.message.text(), TEXT),
            calls,
        });
    }
    CompareSide {
        key,
        agent: format!("{} {}", t.agent.name, t.agent.version)
            .trim()
            .to_string(),
        turns,
        read,
        only: Vec::new(),
    }
}

/// Each side's `only`: the paths it read that the other did not.
pub fn only(a: &mut CompareSide, b: &mut CompareSide) {
    let (ra, rb): (BTreeSet<&String>, BTreeSet<&String>) =
        (a.read.iter().collect(), b.read.iter().collect());
    let oa: Vec<String> = a.read.iter().filter(|p| !rb.contains(p)).cloned().collect();
    let ob: Vec<String> = b.read.iter().filter(|p| !ra.contains(p)).cloned().collect();
    a.only = oa;
    b.only = ob;
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::model::trajectory::{
        Observation, ObservationResult, Step, StepSource, ToolCall, TrajectoryAgent,
    };
    use serde_json::json;

    fn run(reads: &[&str]) -> Trajectory {
        let mut t = Trajectory::new(TrajectoryAgent::default());
        t.push(Step::new(StepSource::User, "q"));
        for (i, p) in reads.iter().enumerate() {
            let id = format!("c{i}");
            let s = t.push(Step::new(StepSource::Agent, format!("turn {i}")));
            s.tool_calls = Some(vec![ToolCall::new(&id, "read_file", json!({"path": p}))]);
            s.observation = Some(Observation {
                results: vec![ObservationResult::of(&id, "x", false)],
            });
        }
        t.push(Step::new(StepSource::Agent, "the answer"));
        t
    }

    fn key(m: &str) -> TrajectoryKey {
        TrajectoryKey {
            question_id: "q".into(),
            model: m.into(),
            attempt: 0,
        }
    }

    #[test]
    fn turns_are_numbered_reads_of_evidence_marked_the_first_and_the_reads_of_one_only() {
        let evidence: BTreeSet<String> = ["src/a.rs".to_string(), "src/b.rs".to_string()].into();
        let mut a = side(
            key("A"),
            &run(&["src/a.rs", "README.md", "src/a.rs"]),
            &evidence,
        );
        let mut b = side(key("B"), &run(&["README.md", "src/c.rs"]), &evidence);
        only(&mut a, &mut b);
        assert_eq!(a.turns.len(), 4, "three calls and the answer");
        assert_eq!(
            a.turns.iter().map(|t| t.turn).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let marks: Vec<(bool, bool)> = a
            .turns
            .iter()
            .flat_map(|t| {
                t.calls
                    .iter()
                    .flat_map(|c| c.read.iter().map(|r| (r.evidence, r.first)))
            })
            .collect();
        assert_eq!(marks, [(true, true), (false, true), (true, false)]);
        assert_eq!(a.only, ["src/a.rs"]);
        assert_eq!(b.only, ["src/c.rs"]);
        assert_eq!(a.turns[3].text, "the answer");
    }
}
