//! The Grade view's grades as data, apart from the browser (natively tested): the grades of
//! checklist items by answer (the core's `grading::Grades`), what is kept in `localStorage`
//! ([`Graded::to_json`] / [`Graded::from_json`], under [`storage_key`]), the order a grader goes
//! through them ([`units`]), the keys that pick a score ([`score_keys`]) and the export
//! (`grades-human-NAME.jsonl`, the core's `grading::jsonl` of `grading::judgments`).

use repoprobe_core::grading::{Grade, Grades, Sample, jsonl, judgments};
use repoprobe_core::sort::CollectTree;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{AnswerKey, Question};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Answers per model drawn when the address says none.
pub const DEFAULT_N: usize = 5;

/// The `localStorage` key of the grader's name (asked once, for every dataset).
pub const GRADER_KEY: &str = "repoprobe-grade:grader";

/// The `localStorage` key of the grades of a dataset: named by the SHA-256 of the files holding
/// the questions and answers graded, sorted and joined by `+` (grades are of answers, whichever
/// judge is compared: judgment files loaded beside them do not change it).
pub fn storage_key(hashes: &[String]) -> String {
    let mut h = hashes.to_vec();
    h.shared_sort();
    h.dedup();
    format!("repoprobe-grade:v1:{}", h.join("+"))
}

/// The grades of one dataset, and whether some were given or changed since the last export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graded {
    pub grades: Grades,
    pub unexported: bool,
}

/// [`Graded`] as kept: the grades as a list (a JSON object's keys are strings).
#[derive(Serialize, Deserialize, Default)]
struct Kept {
    #[serde(default)]
    grades: Vec<(AnswerKey, BTreeMap<String, Grade>)>,
    #[serde(default)]
    unexported: bool,
}

impl Graded {
    /// What was kept, or nothing when it cannot be read (another version, edited by hand).
    pub fn from_json(text: &str) -> Graded {
        let k: Kept = serde_json::from_str(text).unwrap_or_default();
        Graded {
            grades: k.grades.into_iter().collect_map(),
            unexported: k.unexported,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(&Kept {
            grades: self
                .grades
                .iter()
                .map(|(a, g)| (a.clone(), g.clone()))
                .collect(),
            unexported: self.unexported,
        })
        .unwrap_or_default()
    }

    /// The grade of item `item` of answer `at`, if given.
    pub fn get(&self, at: &AnswerKey, item: &str) -> Option<&Grade> {
        self.grades.get(at).and_then(|g| g.get(item))
    }

    /// Item `item` of `at` graded (again).
    pub fn grade(&mut self, at: &AnswerKey, item: &str, grade: Grade) {
        self.grades
            .entry(at.clone())
            .or_default()
            .insert(item.to_string(), grade);
        self.unexported = true;
    }

    /// Grades taken from a file of the grader's judgments: each replaces the one kept of its
    /// item. How many items were new or changed.
    pub fn take(&mut self, from: Grades) -> usize {
        let mut changed = 0;
        for (at, items) in from {
            let mine = self.grades.entry(at).or_default();
            for (id, g) in items {
                if mine.get(&id) != Some(&g) {
                    mine.insert(id, g);
                    changed += 1;
                }
            }
        }
        changed
    }

    /// How many items of `units` are graded.
    pub fn graded(&self, units: &[Unit]) -> usize {
        units
            .iter()
            .filter(|u| self.get(&u.at, &u.item).is_some())
            .count()
    }

    /// The export: the JSONL of the complete answers' judgments by `judge`, how many answers it
    /// holds, and how many graded answers are incomplete (left out).
    pub fn export(&self, questions: &[Question], judge: &str) -> (String, usize, usize) {
        let (made, incomplete) = judgments(&self.grades, questions, judge);
        (jsonl(&made), made.len(), incomplete)
    }
}

/// One thing to grade: an item of an answer (`answer` its place in the sample, `n` the item's
/// in its checklist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub at: AnswerKey,
    pub answer: usize,
    pub item: String,
    pub n: usize,
    /// Items in the answer's checklist.
    pub items: usize,
}

/// Every item of every answer of `answers`, answers in the sample's order, items in checklist
/// order (an answer whose question is not loaded has none).
pub fn units(answers: &[AnswerKey], questions: &[Question]) -> Vec<Unit> {
    let by_id: BTreeMap<&str, &Question> =
        questions.iter().map(|q| (q.id.as_str(), q)).collect_map();
    let mut out = Vec::new();
    for (i, at) in answers.iter().enumerate() {
        let Some(q) = by_id.get(at.question_id.as_str()) else {
            continue;
        };
        for (n, c) in q.checklist.iter().enumerate() {
            out.push(Unit {
                at: at.clone(),
                answer: i,
                item: c.id.clone(),
                n,
                items: q.checklist.len(),
            });
        }
    }
    out
}

/// The key that picks each of an item's allowed scores (in the rubric's order): the score's own
/// digit when every score is one digit; else `1`–`9` then `0` by place; more than ten scores:
/// none (↑ / ↓ move among them).
pub fn score_keys(scores: &[u32]) -> Vec<Option<char>> {
    if scores.iter().all(|s| *s <= 9) {
        return scores.iter().map(|s| char::from_digit(*s, 10)).collect();
    }
    if scores.len() <= 10 {
        return (0..scores.len())
            .map(|i| char::from_digit(((i + 1) % 10) as u32, 10))
            .collect();
    }
    vec![None; scores.len()]
}

/// The sample the address asks for: the answer keys of `&keys=` (comma-separated
/// `QUESTION|MODEL|ATTEMPT`; those not read so are returned), else up to `&n=` (5) answers per
/// model drawn with `&seed=` (0).
pub fn sample_of(keys: Option<&str>, n: Option<&str>, seed: Option<&str>) -> (Sample, Vec<String>) {
    if let Some(keys) = keys.filter(|k| !k.trim().is_empty()) {
        let (mut given, mut unread) = (Vec::new(), Vec::new());
        for k in keys.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            match AnswerKey::from_param(k) {
                Some(at) => given.push(at),
                None => unread.push(k.to_string()),
            }
        }
        return (Sample::Given(given), unread);
    }
    let per_model = n.and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_N);
    let seed = seed.and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    (Sample::Drawn { per_model, seed }, Vec::new())
}

/// How a grade compares with the judge's score: "agree", or "differs by X".
pub fn compared(mine: u32, judge: u32) -> String {
    if mine == judge {
        "agree".into()
    } else {
        format!("differs by {}", mine.abs_diff(judge))
    }
}

/// The export's file name: `grades-human-NAME.jsonl`, characters a file name should not hold
/// made `_`.
pub fn file_name(name: &str) -> String {
    let safe: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("grades-human-{safe}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::grading::human_judge;

    fn question(id: &str) -> Question {
        let text = r#"{"id": "ID", "repo": {"name": "o/r", "url": "", "commit": "", "language": "Rust", "theme": "T"}, "category": "C", "question": "q?", "reference_answer": "a.", "external_context": false, "checklist": [{"id": "k1", "kind": "knowledge", "key_point": "p1", "weight": 2, "rubric": [{"score": 2, "criterion": "all"}, {"score": 0, "criterion": "none"}]}, {"id": "clarity", "kind": "clarity", "key_point": "Clarity", "weight": 1, "rubric": [{"score": 1, "criterion": ""}, {"score": 0, "criterion": ""}]}]}"#;
        serde_json::from_str(&text.replace("ID", id)).unwrap()
    }

    fn at(q: &str, m: &str) -> AnswerKey {
        AnswerKey {
            question_id: q.into(),
            model: m.into(),
            attempt: 0,
        }
    }

    fn g(score: u32, why: &str) -> Grade {
        Grade {
            score,
            rationale: why.into(),
        }
    }

    #[test]
    fn units_go_item_by_item_answer_by_answer_in_the_samples_order() {
        let qs = [question("q1"), question("q2")];
        let u = units(&[at("q2", "m"), at("q9", "m"), at("q1", "m|x")], &qs);
        let got: Vec<(usize, &str, usize, usize)> = u
            .iter()
            .map(|u| (u.answer, u.item.as_str(), u.n, u.items))
            .collect();
        assert_eq!(
            got,
            [
                (0, "k1", 0, 2),
                (0, "clarity", 1, 2),
                (2, "k1", 0, 2),
                (2, "clarity", 1, 2)
            ]
        );
        assert_eq!(u[2].at, at("q1", "m|x"));
    }

    #[test]
    fn grades_are_kept_read_back_and_export_only_complete_answers() {
        let qs = [question("q1"), question("q2")];
        let mut d = Graded::default();
        d.grade(&at("q1", "m"), "k1", g(2, "<img src=x onerror=alert(7)>"));
        d.grade(&at("q1", "m"), "clarity", g(0, ""));
        d.grade(&at("q2", "m"), "k1", g(0, "half"));
        assert!(d.unexported);
        let back = Graded::from_json(&d.to_json());
        assert_eq!(back, d);
        assert_eq!(Graded::from_json("not json"), Graded::default());
        assert_eq!(d.graded(&units(&[at("q1", "m"), at("q2", "m")], &qs)), 3);
        let judge = human_judge("ann").unwrap();
        let (text, answers, incomplete) = d.export(&qs, &judge);
        assert_eq!((answers, incomplete), (1, 1));
        let j: repoprobe_core::Judgment = serde_json::from_str(text.trim()).unwrap();
        assert_eq!((j.judge.as_str(), j.judge_run), ("human:ann", 0));
        assert_eq!(j.items[0].rationale, "<img src=x onerror=alert(7)>");
        // Taken from a file: new and changed items count, the same grade does not.
        let mut from = Grades::new();
        from.entry(at("q1", "m"))
            .or_default()
            .insert("k1".into(), g(2, "<img src=x onerror=alert(7)>"));
        from.entry(at("q2", "m"))
            .or_default()
            .insert("clarity".into(), g(1, "clear"));
        from.entry(at("q2", "m"))
            .or_default()
            .insert("k1".into(), g(2, "all"));
        assert_eq!(d.take(from), 2);
        assert_eq!(d.get(&at("q2", "m"), "k1"), Some(&g(2, "all")));
        assert_eq!(d.export(&qs, &judge).1, 2);
    }

    #[test]
    fn scores_are_picked_by_their_digit_by_place_or_by_arrows() {
        assert_eq!(score_keys(&[6, 2, 0]), [Some('6'), Some('2'), Some('0')]);
        assert_eq!(score_keys(&[12, 5, 0]), [Some('1'), Some('2'), Some('3')]);
        let ten: Vec<u32> = (0..10).map(|s| s * 2).collect();
        assert_eq!(score_keys(&ten)[9], Some('0'));
        let digits: Vec<u32> = (0..10).collect();
        assert_eq!(score_keys(&digits)[7], Some('7'), "each its digit");
        let big: Vec<u32> = (0..11).map(|s| s + 5).collect();
        assert!(score_keys(&big).iter().all(Option::is_none));
        assert_eq!(
            sample_of(None, None, None),
            (
                Sample::Drawn {
                    per_model: 5,
                    seed: 0
                },
                Vec::new()
            )
        );
        assert_eq!(
            sample_of(Some(""), Some("2"), Some(" 3")).0,
            Sample::Drawn {
                per_model: 2,
                seed: 3
            }
        );
        let (s, unread) = sample_of(Some("q1|m|x|0, nope,q2|m|1"), Some("2"), None);
        assert_eq!(
            s,
            Sample::Given(vec![at("q1", "m|x"), {
                let mut a = at("q2", "m");
                a.attempt = 1;
                a
            }])
        );
        assert_eq!(unread, ["nope"]);
        assert_eq!(compared(2, 2), "agree");
        assert_eq!(compared(0, 6), "differs by 6");
        assert_eq!(file_name(" Ann B/<x> "), "grades-human-Ann_B__x_.jsonl");
        assert_eq!(
            storage_key(&["b".into(), "a".into()]),
            "repoprobe-grade:v1:a+b"
        );
    }
}
