//! A panel of judges (docs/metrics.md#a-panel-of-judges): a synthetic judge whose score of an
//! item is a rule over its members' scores, for when one judge is not good enough. Its
//! judgments are ordinary checklist judgments — every score one the item's rubric allows — so
//! every table, filter and export reads the panel like any judge.
//!
//! A panel judges an answer in a judge run when more than half its members did (a quorum);
//! the members present vote. Rules: `median` (of an even count, the mean of the middle two),
//! `mean`, then snapped to the rubric's nearest allowed score, ties down; `majority`, the score
//! most members gave, ties down.

use super::judges::{JudgePair, JudgesOptions};
use crate::dataset::Dataset;
use crate::model::{ChecklistItem, ItemScore, Judgment};
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a panel's members' scores of one item make the panel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PanelRule {
    Median,
    Mean,
    Majority,
}

impl PanelRule {
    pub fn as_str(self) -> &'static str {
        match self {
            PanelRule::Median => "median",
            PanelRule::Mean => "mean",
            PanelRule::Majority => "majority",
        }
    }
}

/// The panel asked for: its members (judge names) and its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panel {
    pub members: Vec<String>,
    pub rule: PanelRule,
}

/// Why a panel cannot be formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PanelError {
    #[error("a panel needs at least two judges, {0} given")]
    TooFew(usize),
    #[error("judge {0:?} is named twice in the panel")]
    Twice(String),
    #[error("panel member {0:?} has no valid judgments; judges present: {1}")]
    Unknown(String, String),
    #[error("the panel's name {0:?} is a judge of the files already")]
    Taken(String),
}

/// What the report says of the panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelReport {
    /// The panel's judge name, as its rows in every table carry it.
    pub judge: String,
    pub members: Vec<String>,
    pub rule: PanelRule,
    /// Judgments the panel made.
    pub judgments: usize,
    /// Answers in a judge run that some member judged but fewer than a quorum did.
    pub short_of_quorum: usize,
    /// Each member against the panel (A the member, B the panel).
    pub agreement: Vec<JudgePair>,
}

impl Panel {
    /// The panel's judge name: `panel-RULE(A, B, C)`.
    pub fn name(&self) -> String {
        format!("panel-{}({})", self.rule.as_str(), self.members.join(", "))
    }

    /// The members checked against the judges of `ds`.
    pub fn check(&self, ds: &Dataset) -> Result<(), PanelError> {
        if self.members.len() < 2 {
            return Err(PanelError::TooFew(self.members.len()));
        }
        let mut present: Vec<&str> = ds.judgments.iter().map(|j| j.judge.as_str()).collect();
        present.shared_sort();
        present.dedup();
        for (n, m) in self.members.iter().enumerate() {
            if self.members[..n].contains(m) {
                return Err(PanelError::Twice(m.clone()));
            }
            if present.binary_search(&m.as_str()).is_err() {
                let known = present
                    .iter()
                    .map(|j| format!("{j:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(PanelError::Unknown(m.clone(), known));
            }
        }
        let name = self.name();
        if present.binary_search(&name.as_str()).is_ok() {
            return Err(PanelError::Taken(name));
        }
        Ok(())
    }

    /// The panel's judgments over `ds`, in key order, and the answers short of a quorum.
    pub fn judgments(&self, ds: &Dataset) -> (Vec<Judgment>, usize) {
        let questions: BTreeMap<&str, &[ChecklistItem]> = ds
            .questions
            .iter()
            .map(|q| (q.id.as_str(), q.checklist.as_slice()))
            .collect_map();
        // (question, model, attempt, judge run) -> member -> judgment (the first of a key).
        type Key<'d> = (&'d str, &'d str, u32, u32);
        let mut by_key: BTreeMap<Key, BTreeMap<&str, &Judgment>> = BTreeMap::new();
        for j in &ds.judgments {
            if self.members.contains(&j.judge) {
                by_key
                    .entry((&j.question_id, &j.model, j.attempt, j.judge_run))
                    .or_default()
                    .entry(j.judge.as_str())
                    .or_insert(j);
            }
        }
        let name = self.name();
        let (mut out, mut short) = (Vec::new(), 0);
        for ((q, model, attempt, run), members) in by_key {
            let Some(checklist) = questions.get(q) else {
                continue;
            };
            if 2 * members.len() <= self.members.len() {
                short += 1;
                continue;
            }
            let items = checklist
                .iter()
                .map(|item| {
                    let scores: Vec<u32> = members
                        .values()
                        .filter_map(|j| j.items.iter().find(|s| s.id == item.id))
                        .map(|s| s.score)
                        .collect();
                    ItemScore {
                        id: item.id.clone(),
                        rationale: format!(
                            "{} of {}",
                            self.rule.as_str(),
                            scores
                                .iter()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        score: self.rule.apply(&scores, item),
                    }
                })
                .collect();
            out.push(Judgment {
                question_id: q.to_string(),
                model: model.to_string(),
                attempt,
                judge: name.clone(),
                judge_run: run,
                items,
            });
        }
        (out, short)
    }

    /// `ds` with the panel's judgments added, and the panel's report (each member's agreement
    /// with it computed with `agreement`'s options).
    pub fn apply(
        &self,
        ds: &Dataset,
        agreement: &JudgesOptions,
    ) -> Result<(Dataset, PanelReport), PanelError> {
        self.check(ds)?;
        let (judgments, short) = self.judgments(ds);
        let mut with = ds.clone();
        let made = judgments.len();
        with.judgments.extend(judgments);
        let pairs = self.member_agreement(&with, agreement);
        Ok((
            with,
            PanelReport {
                judge: self.name(),
                members: self.members.clone(),
                rule: self.rule,
                judgments: made,
                short_of_quorum: short,
                agreement: pairs,
            },
        ))
    }
}

impl Panel {
    /// Each member (A) against the panel (B) over `with`, a dataset holding the panel's
    /// judgments ([`Panel::apply`]'s, or the part of it in force).
    pub fn member_agreement(&self, with: &Dataset, agreement: &JudgesOptions) -> Vec<JudgePair> {
        // The names were checked when the panel was applied: no error to expect.
        super::judges::judges(
            with,
            &JudgesOptions {
                a: None,
                b: Some(self.name()),
                ..agreement.clone()
            },
        )
        .map(|r| r.pairs)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| self.members.contains(&p.a))
        .collect()
    }
}

impl PanelRule {
    /// The panel's score of `item` from its members' `scores` (at least one).
    pub fn apply(self, scores: &[u32], item: &ChecklistItem) -> u32 {
        let mut s = scores.to_vec();
        s.shared_sort();
        match self {
            PanelRule::Median => {
                let n = s.len();
                if n % 2 == 1 {
                    snap(f64::from(s[n / 2]), item)
                } else {
                    snap((f64::from(s[n / 2 - 1]) + f64::from(s[n / 2])) / 2.0, item)
                }
            }
            PanelRule::Mean => {
                let sum: u64 = s.iter().map(|&x| u64::from(x)).sum();
                snap(sum as f64 / s.len().max(1) as f64, item)
            }
            PanelRule::Majority => {
                // Sorted ascending: the first score to reach the highest count is the lowest.
                let mut best = (0usize, 0u32);
                for run in s.chunk_by(|a, b| a == b) {
                    if run.len() > best.0 {
                        best = (run.len(), run[0]);
                    }
                }
                best.1
            }
        }
    }
}

/// The allowed score of `item` nearest to `value`, the lower one on a tie.
fn snap(value: f64, item: &ChecklistItem) -> u32 {
    let mut allowed: Vec<u32> = item.rubric.iter().map(|t| t.score).collect();
    allowed.shared_sort();
    allowed
        .into_iter()
        .min_by(|a, b| {
            (f64::from(*a) - value)
                .abs()
                .total_cmp(&(f64::from(*b) - value).abs())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ItemKind, RubricTier};

    fn item(weight: u32, allowed: &[u32]) -> ChecklistItem {
        ChecklistItem {
            id: "k".into(),
            kind: ItemKind::Knowledge,
            key_point: String::new(),
            weight,
            rubric: allowed
                .iter()
                .map(|&score| RubricTier {
                    score,
                    criterion: String::new(),
                })
                .collect(),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn each_rule_gives_an_allowed_score_and_ties_go_down() {
        let it = item(5, &[5, 3, 0]);
        assert_eq!(PanelRule::Median.apply(&[0, 5, 3], &it), 3);
        // Median of 0 and 3 is 1.5: nearer 0 (1.5) than 3 (1.5)? A tie: down to 0.
        assert_eq!(PanelRule::Median.apply(&[0, 3], &it), 0);
        assert_eq!(PanelRule::Median.apply(&[3, 5], &it), 3);
        // Mean of 0, 5, 5 is 3.33: 3.
        assert_eq!(PanelRule::Mean.apply(&[0, 5, 5], &it), 3);
        // Mean of 5, 5, 3 is 4.33: 5.
        assert_eq!(PanelRule::Mean.apply(&[5, 5, 3], &it), 5);
        assert_eq!(PanelRule::Majority.apply(&[5, 0, 5], &it), 5);
        // Three different scores: the lowest.
        assert_eq!(PanelRule::Majority.apply(&[5, 0, 3], &it), 0);
        assert_eq!(PanelRule::Majority.apply(&[5, 3, 3, 5], &it), 3);
    }

    #[test]
    fn a_panel_judges_where_a_quorum_of_members_did() {
        let q = crate::fixtures::question();
        let judgment = |judge: &str, model: &str, scores: [u32; 3]| Judgment {
            question_id: q.id.clone(),
            model: model.into(),
            attempt: 0,
            judge: judge.into(),
            judge_run: 0,
            items: q
                .checklist
                .iter()
                .zip(scores)
                .map(|(i, score)| ItemScore {
                    id: i.id.clone(),
                    rationale: String::new(),
                    score,
                })
                .collect(),
        };
        let ds = Dataset {
            questions: vec![q.clone()],
            judgments: vec![
                judgment("a", "m", [5, 4, 1]),
                judgment("b", "m", [3, 0, 1]),
                judgment("c", "m", [0, 0, 0]),
                // One member of three: short of a quorum.
                judgment("a", "n", [5, 4, 1]),
            ],
            ..Dataset::default()
        };
        let panel = Panel {
            members: vec!["a".into(), "b".into(), "c".into()],
            rule: PanelRule::Median,
        };
        let (with, report) = panel.apply(&ds, &JudgesOptions::default()).unwrap();
        assert_eq!(report.judge, "panel-median(a, b, c)");
        assert_eq!((report.judgments, report.short_of_quorum), (1, 1));
        let made = with.judgments.last().unwrap();
        let scores: Vec<u32> = made.items.iter().map(|i| i.score).collect();
        assert_eq!(scores, vec![3, 0, 1]);
        assert_eq!(report.agreement.len(), 3);
        assert!(
            report
                .agreement
                .iter()
                .all(|p| p.b == report.judge && p.overall.items == 3)
        );
        assert_eq!(
            Panel {
                members: vec!["a".into(), "z".into()],
                rule: PanelRule::Mean
            }
            .check(&ds),
            Err(PanelError::Unknown(
                "z".into(),
                "\"a\", \"b\", \"c\"".into()
            ))
        );
    }
}
