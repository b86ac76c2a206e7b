//! Agreement between judges over a dataset (docs/metrics.md#agreement-between-judges): which
//! checklist items two judges both scored, the figures of [`super::agreement`] over them —
//! overall, per item kind and per model —, how far apart their Overalls are on the answers both
//! judged (with a bootstrap interval), and the items they disagree on, largest gap first. What
//! `repoprobe judges` prints and the site's agreement table shows: one core, one result.

use super::agreement::{PairFigures, figures};
use super::bootstrap::{Resamples, interval};
use super::index::Index;
use crate::dataset::Dataset;
use crate::model::{ItemKind, Judgment};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Which pairs to compare, and the bootstrap of the bias.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgesOptions {
    /// Judge A of every pair; `None`: any judge.
    pub a: Option<String>,
    /// Judge B (the reference of the F1) of every pair; `None`: any judge.
    pub b: Option<String>,
    /// Bootstrap resamples of the bias interval (0: no interval).
    pub bootstrap: u32,
    pub seed: u64,
}

impl Default for JudgesOptions {
    fn default() -> Self {
        JudgesOptions {
            a: None,
            b: None,
            bootstrap: 1000,
            seed: 0,
        }
    }
}

/// A judge named in `--a`/`--b` that judged nothing in the files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("no checklist judgment by judge {name:?} in the files; judges there: {known}")]
pub struct UnknownJudge {
    pub name: String,
    /// The judges the files hold, quoted and joined (or "none").
    pub known: String,
}

/// What `repoprobe judges` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgesReport {
    /// Every judge with checklist judgments, by name.
    pub judges: Vec<JudgeCount>,
    pub pairs: Vec<JudgePair>,
    pub bootstrap: u32,
    pub seed: u64,
}

/// A judge and how much it judged in its run 0 (the run agreement reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeCount {
    pub judge: String,
    /// Answers it judged in run 0.
    pub answers: usize,
}

/// Two judges compared on the items both scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgePair {
    pub a: String,
    pub b: String,
    /// Over every unit.
    #[serde(flatten)]
    pub overall: PairFigures,
    /// Over the units of each item kind (`knowledge`, `clarity`) that has any.
    pub by_kind: BTreeMap<String, PairFigures>,
    /// Over the units of each answering model.
    pub by_model: BTreeMap<String, PairFigures>,
    /// Answers both judged (in run 0).
    pub answers: usize,
    /// A's Overall minus B's on those answers, in percentage points.
    pub bias_pp: Option<f64>,
    /// The 95 % percentile bootstrap interval of `bias_pp`, questions resampled.
    pub bias_ci95: Option<[f64; 2]>,
    /// The units where the attainments differ, largest gap first.
    pub disagreements: Vec<Disagreement>,
}

/// One item of one answer that two judges scored differently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub question_id: String,
    pub model: String,
    pub attempt: u32,
    pub item_id: String,
    pub kind: ItemKind,
    pub weight: u32,
    pub score_a: u32,
    pub score_b: u32,
    /// |attainment A − attainment B|.
    pub gap: f64,
    pub rationale_a: String,
    pub rationale_b: String,
}

/// An answer's key among one judge's run-0 judgments: question (by index), model, attempt.
type AnswerAt<'d> = (u32, &'d str, u32);

/// Each judge's run-0 judgments by answer; the first one of a key wins (the loader reports the
/// rest as duplicates).
fn run_zero<'d>(
    ds: &'d Dataset,
    index: &Index<'d>,
) -> BTreeMap<&'d str, BTreeMap<AnswerAt<'d>, &'d Judgment>> {
    let mut out: BTreeMap<&str, BTreeMap<AnswerAt, &Judgment>> = BTreeMap::new();
    for j in ds.judgments.iter().filter(|j| j.judge_run == 0) {
        if let Some(&qi) = index.by_id.get(j.question_id.as_str()) {
            out.entry(j.judge.as_str())
                .or_default()
                .entry((qi, j.model.as_str(), j.attempt))
                .or_insert(j);
        }
    }
    out
}

/// The pairs asked for, each (A, B). With neither name: every two judges, the one that is
/// people's (`human:…`) as B when only one is, else in name order. With one name: that judge on
/// its side against every other judge.
fn pairs_asked<'j>(
    judges: &[&'j str],
    opts: &JudgesOptions,
) -> Result<Vec<(&'j str, &'j str)>, UnknownJudge> {
    let find = |name: &Option<String>| -> Result<Option<&'j str>, UnknownJudge> {
        let Some(name) = name else { return Ok(None) };
        judges
            .iter()
            .find(|j| **j == name.as_str())
            .map(|j| Some(*j))
            .ok_or_else(|| UnknownJudge {
                name: name.clone(),
                known: if judges.is_empty() {
                    "none".into()
                } else {
                    judges
                        .iter()
                        .map(|j| format!("{j:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    };
    let (a, b) = (find(&opts.a)?, find(&opts.b)?);
    let human = |j: &str| j.starts_with("human:");
    Ok(match (a, b) {
        (Some(a), Some(b)) => vec![(a, b)],
        (Some(a), None) => judges
            .iter()
            .filter(|j| **j != a)
            .map(|j| (a, *j))
            .collect(),
        (None, Some(b)) => judges
            .iter()
            .filter(|j| **j != b)
            .map(|j| (*j, b))
            .collect(),
        (None, None) => {
            let mut out = Vec::new();
            for (n, x) in judges.iter().enumerate() {
                for y in &judges[n + 1..] {
                    out.push(if human(x) && !human(y) {
                        (*y, *x)
                    } else {
                        (*x, *y)
                    });
                }
            }
            out
        }
    })
}

/// Agreement of every pair of judges asked for (docs/metrics.md#agreement-between-judges).
pub fn judges(ds: &Dataset, opts: &JudgesOptions) -> Result<JudgesReport, UnknownJudge> {
    let index = Index::new(ds);
    let by_judge = run_zero(ds, &index);
    let names: Vec<&str> = by_judge.keys().copied().collect();
    let resamples = Resamples::new(index.questions.len(), opts.bootstrap, opts.seed);
    let pairs = pairs_asked(&names, opts)?
        .into_iter()
        .map(|(a, b)| pair(a, b, &by_judge[a], &by_judge[b], &index, resamples.as_ref()))
        .collect();
    Ok(JudgesReport {
        judges: by_judge
            .iter()
            .map(|(j, answers)| JudgeCount {
                judge: j.to_string(),
                answers: answers.len(),
            })
            .collect(),
        pairs,
        bootstrap: opts.bootstrap,
        seed: opts.seed,
    })
}

/// One unit's attainments and where it belongs.
struct Unit<'d> {
    kind: ItemKind,
    model: &'d str,
    a: f64,
    b: f64,
}

fn pair<'d>(
    a: &'d str,
    b: &'d str,
    ja: &BTreeMap<AnswerAt<'d>, &'d Judgment>,
    jb: &BTreeMap<AnswerAt<'d>, &'d Judgment>,
    index: &Index<'d>,
    resamples: Option<&Resamples>,
) -> JudgePair {
    let mut units: Vec<Unit> = Vec::new();
    let mut disagreements = Vec::new();
    // Per question: answers both judged and the sum of s_A − s_B over them.
    let mut per_q: Vec<(u64, i64)> = vec![(0, 0); index.questions.len()];
    for (&(qi, model, attempt), x) in ja {
        let Some(y) = jb.get(&(qi, model, attempt)) else {
            continue;
        };
        let slot = &mut per_q[qi as usize];
        slot.0 += 1;
        slot.1 += i64::from(x.total()) - i64::from(y.total());
        for item in &index.questions[qi as usize].checklist {
            let (Some(sa), Some(sb)) = (
                x.items.iter().find(|s| s.id == item.id),
                y.items.iter().find(|s| s.id == item.id),
            ) else {
                continue;
            };
            if item.weight == 0 {
                continue; // no attainment to speak of
            }
            let w = f64::from(item.weight);
            let (ta, tb) = (f64::from(sa.score) / w, f64::from(sb.score) / w);
            units.push(Unit {
                kind: item.kind,
                model,
                a: ta,
                b: tb,
            });
            if ta != tb {
                disagreements.push(Disagreement {
                    question_id: x.question_id.clone(),
                    model: model.to_string(),
                    attempt,
                    item_id: item.id.clone(),
                    kind: item.kind,
                    weight: item.weight,
                    score_a: sa.score,
                    score_b: sb.score,
                    gap: (ta - tb).abs(),
                    rationale_a: sa.rationale.clone(),
                    rationale_b: sb.rationale.clone(),
                });
            }
        }
    }
    // Largest gap first; the units' own order (question id, model, attempt, checklist) after.
    disagreements.sort_by(|p, q| q.gap.total_cmp(&p.gap));
    let over = |keep: &dyn Fn(&Unit) -> bool| {
        let v: Vec<(f64, f64)> = units
            .iter()
            .filter(|u| keep(u))
            .map(|u| (u.a, u.b))
            .collect();
        figures(&v)
    };
    let kinds: BTreeSet<ItemKind> = units.iter().map(|u| u.kind).collect();
    let models: BTreeSet<&str> = units.iter().map(|u| u.model).collect();
    let answers: u64 = per_q.iter().map(|s| s.0).sum();
    JudgePair {
        a: a.to_string(),
        b: b.to_string(),
        overall: over(&|_| true),
        by_kind: kinds
            .into_iter()
            .map(|k| (k.as_str().to_string(), over(&|u| u.kind == k)))
            .collect(),
        by_model: models
            .into_iter()
            .map(|m| (m.to_string(), over(&|u| u.model == m)))
            .collect(),
        answers: answers as usize,
        bias_pp: bias(per_q.iter()),
        bias_ci95: resamples.and_then(|r| {
            let mut values: Vec<f64> = r
                .each()
                .filter_map(|s| bias(s.iter().map(|&q| &per_q[q as usize])))
                .collect();
            (!values.is_empty())
                .then(|| interval(&mut values))
                .flatten()
        }),
        disagreements,
    }
}

/// 100 · Σ(s_A − s_B) / (10 · answers): A's Overall minus B's in points; `None` with no answer.
/// Sums of whole scores, one division: exact, in any order.
fn bias<'a>(per_q: impl Iterator<Item = &'a (u64, i64)>) -> Option<f64> {
    let (n, d) = per_q.fold((0u64, 0i64), |(n, d), &(m, e)| (n + m, d + e));
    (n > 0).then(|| 100.0 * d as f64 / (f64::from(crate::model::FULL_SCORE) * n as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChecklistItem, ItemScore, RubricTier};

    fn item(id: &str, kind: ItemKind, weight: u32) -> ChecklistItem {
        ChecklistItem {
            id: id.into(),
            kind,
            key_point: format!("point {id}"),
            weight,
            rubric: (0..=weight)
                .map(|score| RubricTier {
                    score,
                    criterion: String::new(),
                })
                .collect(),
            evidence: Vec::new(),
        }
    }

    fn judgment(q: &str, model: &str, judge: &str, run: u32, scores: &[(&str, u32)]) -> Judgment {
        Judgment {
            question_id: q.into(),
            model: model.into(),
            attempt: 0,
            judge: judge.into(),
            judge_run: run,
            items: scores
                .iter()
                .map(|&(id, score)| ItemScore {
                    id: id.into(),
                    rationale: format!("{judge} on {id}"),
                    score,
                })
                .collect(),
        }
    }

    fn dataset() -> Dataset {
        let mut q1 = crate::fixtures::question();
        q1.checklist = vec![
            item("k1", ItemKind::Knowledge, 5),
            item("k2", ItemKind::Knowledge, 4),
            item("c", ItemKind::Clarity, 1),
        ];
        let mut q2 = q1.clone();
        q2.id = "q2".into();
        Dataset {
            questions: vec![q1, q2],
            judgments: vec![
                judgment("q1", "m", "j", 0, &[("k1", 5), ("k2", 4), ("c", 1)]),
                judgment("q1", "m", "human:ann", 0, &[("k1", 3), ("k2", 4), ("c", 0)]),
                judgment("q2", "m", "j", 0, &[("k1", 0), ("k2", 2), ("c", 1)]),
                judgment("q2", "m", "human:ann", 0, &[("k1", 0), ("k2", 2), ("c", 1)]),
                // Another run of j, and an answer only j judged: neither is a unit.
                judgment("q2", "m", "j", 1, &[("k1", 5), ("k2", 4), ("c", 1)]),
                judgment("q1", "n", "j", 0, &[("k1", 5), ("k2", 4), ("c", 1)]),
            ],
            ..Dataset::default()
        }
    }

    #[test]
    fn units_are_run_zero_items_both_judges_scored() {
        let r = judges(&dataset(), &JudgesOptions::default()).unwrap();
        assert_eq!(r.pairs.len(), 1);
        let p = &r.pairs[0];
        // People are the reference: B.
        assert_eq!((p.a.as_str(), p.b.as_str()), ("j", "human:ann"));
        assert_eq!(p.overall.items, 6);
        assert_eq!(p.overall.exact, Some(4.0 / 6.0));
        assert_eq!(p.by_kind["knowledge"].items, 4);
        assert_eq!(p.by_kind["clarity"].items, 2);
        assert_eq!(p.by_model["m"].items, 6);
        assert_eq!(p.answers, 2);
        // s: j 10 and 3, ann 7 and 3: (10 − 7 + 0) / 2 answers = 1.5 points of s = 15 pp.
        assert_eq!(p.bias_pp, Some(15.0));
        let gaps: Vec<(&str, f64)> = p
            .disagreements
            .iter()
            .map(|d| (d.item_id.as_str(), d.gap))
            .collect();
        assert_eq!(gaps, vec![("c", 1.0), ("k1", 0.4)]);
        assert_eq!(p.disagreements[0].rationale_b, "human:ann on c");
    }

    #[test]
    fn a_named_judge_that_judged_nothing_is_an_error_naming_the_others() {
        let e = judges(
            &dataset(),
            &JudgesOptions {
                a: Some("nobody".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.name, "nobody");
        assert!(e.known.contains("\"human:ann\""), "{e}");
    }

    #[test]
    fn the_bias_interval_holds_the_bias_when_every_question_agrees_on_it() {
        let mut ds = dataset();
        // Make q2 as biased as q1: every resample then has the same bias.
        ds.judgments[3].items[1].score = 0;
        ds.judgments[3].items[2].score = 0;
        let r = judges(&ds, &JudgesOptions::default()).unwrap();
        let p = &r.pairs[0];
        assert_eq!(p.bias_pp, Some(30.0));
        assert_eq!(p.bias_ci95, Some([30.0, 30.0]));
        let none = judges(
            &ds,
            &JudgesOptions {
                bootstrap: 0,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(none.pairs[0].bias_ci95, None);
    }
}
