//! `repoprobe run PLAN --status`: where the whole plan stands, per stage and model, from its
//! files alone (every shard's): keys done, failed (the agent or the model's replies failed),
//! could not run (by cause), and left. What a stage has to do follows from the plan and the
//! stage before it: every question × attempt for the answers, every answered one × the runs
//! for the judges; the failure stage's share (the answers below 60 %) is known only once judged.

use super::Plan;
use super::stages::{Files, judged};
use repoprobe_core::model::failure::{FailureHead, Status};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

/// One stage of one model.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Line {
    pub stage: &'static str,
    pub who: String,
    pub done: usize,
    /// Answers whose agent failed (`error` set): done, but no answer.
    pub agent_failed: usize,
    pub failed: usize,
    /// Could not run, by cause.
    pub could_not_run: BTreeMap<String, usize>,
    /// What is left (`None`: not known before the stage before it ends).
    pub left: Option<usize>,
    /// Whether running the stage again may do what is not done: a key failed, or could not run
    /// for a cause that passes with time (a rate limit, the network, the API); an expired login
    /// or a broken configuration needs a person first.
    pub again_helps: bool,
}

/// The key of a record of any stage: what tells two records of one file apart.
fn key(v: &Value) -> String {
    ["question_id", "attempt", "judge_run"]
        .map(|f| v[f].to_string())
        .join("/")
}

fn records(path: &std::path::Path) -> Vec<Value> {
    crate::input::read_json_records(path)
        .map(|r| r.into_iter().filter_map(|(_, v)| v.ok()).collect())
        .unwrap_or_default()
}

/// The line of one stage of one model, `expected` the keys it has to do when known.
pub fn line(files: &Files, stage: &'static str, who: &str, expected: Option<usize>) -> Line {
    let mut l = Line {
        stage,
        who: who.to_string(),
        ..Line::default()
    };
    let mut done = HashSet::new();
    let mut failures: BTreeMap<String, FailureHead> = BTreeMap::new();
    for out in files.all_of(stage, who) {
        for v in records(&out) {
            if done.insert(key(&v)) && !v["error"].is_null() {
                l.agent_failed += 1;
            }
        }
        for v in records(&crate::output::failures_path(&out)) {
            if let Some(head) = FailureHead::of(&v) {
                failures.insert(key(&v), head);
            }
        }
    }
    l.done = done.len();
    for (_, head) in failures.into_iter().filter(|(k, _)| !done.contains(k)) {
        match head.status {
            Status::Failed => {
                l.failed += 1;
                l.again_helps = true;
            }
            Status::CouldNotRun => {
                l.again_helps |= head.cause.is_none_or(|c| c.passes_with_time());
                let cause = head
                    .cause
                    .map_or("unknown".to_string(), |c| c.as_str().to_string());
                *l.could_not_run.entry(cause).or_default() += 1;
            }
        }
    }
    let not_done = l.failed + l.could_not_run.values().sum::<usize>();
    l.left = expected.map(|e| e.saturating_sub(l.done + not_done));
    l
}

/// Answers of `who` with an answer (what its judges have to judge).
fn answered(files: &Files, who: &str) -> usize {
    files
        .all_of("answers", who)
        .iter()
        .flat_map(|p| records(p))
        .filter(|v| v["error"].is_null())
        .map(|v| key(&v))
        .collect::<HashSet<_>>()
        .len()
}

/// Every line of the plan, in the stages' order.
pub fn lines(plan: &Plan, files: &Files, questions: usize) -> Vec<Line> {
    let mut v = Vec::new();
    for m in &plan.models {
        let expected = questions * m.attempts.unwrap_or(1) as usize;
        v.push(line(files, "answers", &m.name, Some(expected)));
    }
    for j in judged(plan) {
        let expected = answered(files, j.model) * j.runs as usize;
        v.push(line(files, "judgments", &j.who, Some(expected)));
    }
    if let Some(r) = &plan.reliability {
        for name in &r.models {
            let expected = answered(files, name) * r.runs as usize;
            v.push(line(files, "scalar", name, Some(expected)));
        }
    }
    if let Some(f) = &plan.failures {
        for name in &f.models {
            v.push(line(files, "failures", name, None));
        }
    }
    v
}

/// The lines in words, and whether the plan is complete (nothing failed, could not run or
/// left).
pub fn render(lines: &[Line]) -> (String, bool) {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:<24} {:>7} {:>12} {:>7} {:>13} {:>7}  could not run, by cause",
        "stage", "for", "done", "agent failed", "failed", "could not run", "left"
    );
    let mut complete = true;
    for l in lines {
        let cnr: usize = l.could_not_run.values().sum();
        let causes = l
            .could_not_run
            .iter()
            .map(|(c, n)| format!("{c}: {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let left = l.left.map_or("?".to_string(), |n| n.to_string());
        complete &= l.failed == 0 && cnr == 0 && l.left.is_none_or(|n| n == 0);
        let _ = writeln!(
            s,
            "{:<10} {:<24} {:>7} {:>12} {:>7} {:>13} {:>7}  {}",
            l.stage,
            repoprobe_core::text::terminal_safe(&l.who),
            l.done,
            l.agent_failed,
            l.failed,
            cnr,
            left,
            causes
        );
    }
    let _ = writeln!(
        s,
        "{}",
        if complete {
            "complete: every stage's keys are done"
        } else {
            "not complete: `repoprobe run` again resumes it (--retry-failed redoes failed answers)"
        }
    );
    (s, complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_with_failures_or_keys_left_is_not_complete() {
        let done = Line {
            stage: "answers",
            who: "A".into(),
            done: 6,
            left: Some(0),
            ..Line::default()
        };
        assert!(render(std::slice::from_ref(&done)).1);
        let mut cnr = done.clone();
        cnr.could_not_run.insert("auth".into(), 1);
        let (text, complete) = render(&[done.clone(), cnr]);
        assert!(!complete);
        assert!(text.contains("auth: 1"), "{text}");
        let left = Line {
            left: Some(2),
            ..done.clone()
        };
        assert!(!render(&[left]).1);
        // The failure stage's share is not known: it does not hold the plan back.
        let unknown = Line {
            stage: "failures",
            left: None,
            ..done
        };
        assert!(render(&[unknown]).1);
    }
}
