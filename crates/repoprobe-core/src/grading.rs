//! People grading a judge's work by hand (docs/site.md#the-grade-view): which answers a grader
//! scores — a seeded sample stratified by model, or answer keys given — and the grades as
//! ordinary checklist judgments by the judge `human:NAME`, so that every table, filter and
//! export (and `repoprobe judge-agreement`) reads them. Pure: the seed and the grades are given.

use crate::dataset::Dataset;
use crate::model::{AnswerKey, ItemScore, Judgment, Question};
use crate::seeded::shuffle;
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The judge name of a grader's judgments.
pub const HUMAN_PREFIX: &str = "human:";

/// Which answers to grade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sample {
    /// Up to `per_model` answers of each model, drawn with `seed` from those `judge` judged.
    Drawn { per_model: usize, seed: u64 },
    /// These answers, in this order (those `judge` judged; the rest are reported).
    Given(Vec<AnswerKey>),
}

/// The answers to grade, in the order to grade them, and the keys given that the judge never
/// judged (a typo, or another dataset's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    pub answers: Vec<AnswerKey>,
    pub unknown: Vec<AnswerKey>,
}

/// The answers of `sample` among those `judge` judged in run 0 (questions of the benchmark).
/// Drawn: each model's answers in key order, shuffled by a ChaCha8 stream of the seed and the
/// model's name, the first `per_model` kept; then all of them shuffled together (so a grader
/// does not see one model's answers in a row). The same data, judge and seed give the same
/// sample on every platform (32-bit draws).
pub fn sample(ds: &Dataset, judge: &str, sample: &Sample) -> Drawn {
    let questions: BTreeMap<&str, &Question> = ds
        .questions
        .iter()
        .map(|q| (q.id.as_str(), q))
        .collect_map();
    let mut judged: BTreeMap<&str, Vec<AnswerKey>> = BTreeMap::new();
    for j in &ds.judgments {
        if j.judge == judge && j.judge_run == 0 && questions.contains_key(j.question_id.as_str()) {
            judged.entry(j.model.as_str()).or_default().push(AnswerKey {
                question_id: j.question_id.clone(),
                model: j.model.clone(),
                attempt: j.attempt,
            });
        }
    }
    for v in judged.values_mut() {
        v.shared_sort();
        v.dedup();
    }
    match sample {
        Sample::Given(keys) => {
            let (answers, unknown) = keys
                .iter()
                .cloned()
                .partition(|k| judged.get(k.model.as_str()).is_some_and(|v| v.contains(k)));
            Drawn { answers, unknown }
        }
        Sample::Drawn { per_model, seed } => {
            let mut answers = Vec::new();
            for (model, mut keys) in judged {
                shuffle(&mut keys, *seed, model);
                keys.truncate(*per_model);
                answers.extend(keys);
            }
            shuffle(&mut answers, *seed, "");
            Drawn {
                answers,
                unknown: Vec::new(),
            }
        }
    }
}

/// A grader's score of one item, with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    pub score: u32,
    #[serde(default)]
    pub rationale: String,
}

/// A grader's name made a judge's: `human:NAME`, the name trimmed; `None` when empty or holding
/// a control character (it goes into every record and every table).
pub fn human_judge(name: &str) -> Option<String> {
    let n = name.trim();
    (!n.is_empty() && !n.chars().any(char::is_control)).then(|| format!("{HUMAN_PREFIX}{n}"))
}

/// The grades given, by answer then item id.
pub type Grades = BTreeMap<AnswerKey, BTreeMap<String, Grade>>;

/// The grades as checklist judgments of `judge` (`human:NAME`, run 0), one per answer whose
/// every checklist item is graded with a score its rubric allows, items in checklist order; and
/// how many graded answers are not complete yet (they are not exported: a judgment scores every
/// item).
pub fn judgments(grades: &Grades, questions: &[Question], judge: &str) -> (Vec<Judgment>, usize) {
    let by_id: BTreeMap<&str, &Question> =
        questions.iter().map(|q| (q.id.as_str(), q)).collect_map();
    let (mut out, mut incomplete) = (Vec::new(), 0);
    for (at, items) in grades {
        let Some(q) = by_id.get(at.question_id.as_str()) else {
            incomplete += 1;
            continue;
        };
        let scored: Option<Vec<ItemScore>> = q
            .checklist
            .iter()
            .map(|c| {
                let g = items.get(&c.id)?;
                c.rubric
                    .iter()
                    .any(|t| t.score == g.score)
                    .then(|| ItemScore {
                        id: c.id.clone(),
                        rationale: g.rationale.clone(),
                        score: g.score,
                    })
            })
            .collect();
        match scored {
            Some(items) => out.push(Judgment {
                question_id: at.question_id.clone(),
                model: at.model.clone(),
                attempt: at.attempt,
                judge: judge.to_string(),
                judge_run: 0,
                items,
            }),
            None => incomplete += 1,
        }
    }
    (out, incomplete)
}

/// Judgments as a JSONL file (docs/format.md#checklist-judgment), one a line.
pub fn jsonl(judgments: &[Judgment]) -> String {
    judgments
        .iter()
        .filter_map(|j| serde_json::to_string(j).ok())
        .map(|l| l + "\n")
        .collect()
}

/// The grades held in `judgments` of `judge` (a file of them loaded again): each run-0
/// judgment's items, by answer.
pub fn grades_of(judgments: &[Judgment], judge: &str) -> Grades {
    let mut out = Grades::new();
    for j in judgments
        .iter()
        .filter(|j| j.judge == judge && j.judge_run == 0)
    {
        let at = AnswerKey {
            question_id: j.question_id.clone(),
            model: j.model.clone(),
            attempt: j.attempt,
        };
        let e = out.entry(at).or_default();
        for i in &j.items {
            e.insert(
                i.id.clone(),
                Grade {
                    score: i.score,
                    rationale: i.rationale.clone(),
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::question;

    fn dataset() -> Dataset {
        let q = question();
        let mut judgments = Vec::new();
        let mut questions = Vec::new();
        for n in 0..12 {
            let mut q = q.clone();
            q.id = format!("q{n:02}");
            for model in ["m1", "m2", "m3"] {
                for (judge, run) in [("j", 0), ("j", 1), ("other", 0)] {
                    judgments.push(Judgment {
                        question_id: q.id.clone(),
                        model: model.into(),
                        attempt: 0,
                        judge: judge.into(),
                        judge_run: run,
                        items: q
                            .checklist
                            .iter()
                            .map(|c| ItemScore {
                                id: c.id.clone(),
                                rationale: String::new(),
                                score: c.weight,
                            })
                            .collect(),
                    });
                }
            }
            questions.push(q);
        }
        Dataset {
            questions,
            judgments,
            ..Dataset::default()
        }
    }

    #[test]
    fn a_drawn_sample_takes_as_many_of_each_model_and_the_seed_fixes_it() {
        let ds = dataset();
        let draw = |seed| sample(&ds, "j", &Sample::Drawn { per_model: 4, seed });
        let a = draw(1);
        assert_eq!(a.answers.len(), 12);
        for m in ["m1", "m2", "m3"] {
            assert_eq!(a.answers.iter().filter(|k| k.model == m).count(), 4, "{m}");
        }
        let mut unique = a.answers.clone();
        unique.shared_sort();
        unique.dedup();
        assert_eq!(unique.len(), 12, "no answer twice");
        assert_eq!(draw(1), a, "the same seed, the same sample");
        assert_ne!(draw(2).answers, a.answers, "another seed, another sample");
        // Models are mixed, not one after the other.
        let firsts: Vec<&str> = a.answers[..4].iter().map(|k| k.model.as_str()).collect();
        assert!(firsts.iter().any(|m| *m != firsts[0]), "{firsts:?}");
        // More than a model has: all of them.
        let all = sample(
            &ds,
            "j",
            &Sample::Drawn {
                per_model: 99,
                seed: 0,
            },
        );
        assert_eq!(all.answers.len(), 36);
    }

    #[test]
    fn given_keys_are_kept_in_order_and_unknown_ones_said() {
        let ds = dataset();
        let keys: Vec<AnswerKey> = ["q03|m2|0", "q99|m1|0", "q01|m1|0", "q01|m|x|0"]
            .iter()
            .filter_map(|k| AnswerKey::from_param(k))
            .collect();
        assert_eq!(keys[3].model, "m|x", "a model may hold |");
        let d = sample(&ds, "j", &Sample::Given(keys));
        let got: Vec<String> = d.answers.iter().map(AnswerKey::to_param).collect();
        assert_eq!(got, ["q03|m2|0", "q01|m1|0"]);
        assert_eq!(d.unknown.len(), 2);
        assert_eq!(AnswerKey::from_param("q1|m|zero"), None);
    }

    #[test]
    fn complete_grades_export_as_judgments_that_load_back_as_the_same_grades() {
        let ds = dataset();
        let q = &ds.questions[0];
        let at = AnswerKey {
            question_id: q.id.clone(),
            model: "m1".into(),
            attempt: 0,
        };
        let mut grades = Grades::new();
        let judge = human_judge("  Ann ").unwrap();
        assert_eq!(judge, "human:Ann");
        assert_eq!(human_judge(" \n"), None);
        assert_eq!(human_judge("a\u{1b}b"), None);
        // Two of three items graded: not exported yet.
        for c in &q.checklist[..2] {
            grades.entry(at.clone()).or_default().insert(
                c.id.clone(),
                Grade {
                    score: 0,
                    rationale: format!("<b>{}</b> missed", c.id),
                },
            );
        }
        assert_eq!(judgments(&grades, &ds.questions, &judge), (Vec::new(), 1));
        let last = q.checklist.last().unwrap();
        grades.entry(at.clone()).or_default().insert(
            last.id.clone(),
            Grade {
                score: last.weight,
                rationale: String::new(),
            },
        );
        let (made, incomplete) = judgments(&grades, &ds.questions, &judge);
        assert_eq!((made.len(), incomplete), (1, 0));
        let text = jsonl(&made);
        // The file loads as valid judgments of the benchmark, as any judge's.
        let mut bench = String::new();
        for q in &ds.questions {
            bench.push_str(&serde_json::to_string(q).unwrap());
            bench.push('\n');
        }
        let loaded = crate::load(
            &[
                crate::SourceFile {
                    name: "benchmark.jsonl",
                    bytes: bench.as_bytes(),
                },
                crate::SourceFile {
                    name: "grades.jsonl",
                    bytes: text.as_bytes(),
                },
            ],
            crate::LoadOptions::default(),
        );
        assert!(loaded.issues.is_empty(), "{:?}", loaded.issues);
        assert_eq!(loaded.dataset.judgments, made);
        assert_eq!(grades_of(&loaded.dataset.judgments, &judge), grades);
        // A score the rubric does not allow is no grade.
        grades
            .get_mut(&at)
            .unwrap()
            .get_mut(&last.id)
            .unwrap()
            .score = 99;
        assert_eq!(judgments(&grades, &ds.questions, &judge).1, 1);
    }
}
