//! What the question view shows, derived from the data and the address alone (no browser, no
//! signal): natively tested, and the components of `pages::question` only lay it out.

use crate::external_href;
use crate::markdown::Md;
use crate::options::weights_in_force;
use crate::protocol::{QuestionData, TrajectoryKey};
use repoprobe_core::metrics::retrieval::{files_read, item_retrieved};
use repoprobe_core::model::Repo;
use repoprobe_core::model::agent::AgentBlock;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{Answer, ChecklistItem, Judgment, Question};
use std::collections::{BTreeMap, BTreeSet};

/// The parameters of the address the view reads (`?id=…&model=…&item=…&att=…`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Address {
    pub model: Option<String>,
    pub item: Option<String>,
    pub att: Option<String>,
}

/// One judge run's score of an item, with why: (attempt, judge run, score, rationale).
pub type Rationale = (u32, u32, u32, String);

#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub question: Question,
    /// The judge in force.
    pub judge: String,
    /// Judgments of this question by the judge in force, per model, in (attempt, run) order.
    pub by_model: BTreeMap<String, Vec<Judgment>>,
    /// Each answer with its Markdown tree (parsed by the worker).
    pub answers: Vec<(Answer, Option<Md>)>,
    pub reference_md: Option<Md>,
    /// Why some texts could not be read back from the files.
    pub texts_error: Option<String>,
    /// The question's answers and judgments are still being read.
    pub loading: bool,
    /// The commit's page: a link only to an http(s) URL, else the URL as text.
    pub commit_link: Option<CommitLink>,
    /// Each checklist item's weight in force, and whether any differs from the checklist's.
    pub in_force: Vec<u32>,
    pub reweighted: bool,
    /// Every model with an answer or a judgment.
    pub models: Vec<String>,
    pub model: Option<String>,
    /// The chosen model's attempts, and the one shown.
    pub attempts: Vec<u32>,
    pub attempt: Option<u32>,
    /// The chosen answer's judge runs, in run order.
    pub runs: Vec<Judgment>,
    pub chosen: Option<(Answer, Option<Md>)>,
    /// The chosen model and item, and each run's score of it: only once the question's
    /// judgments are here (before, an empty list would read as "no judgment of this item").
    pub rationale: Option<(String, String, Vec<Rationale>)>,
    /// The chosen answer's run, when a trajectories file given holds its trajectory.
    pub trajectory: Option<TrajectoryKey>,
    /// The paths the chosen answer's run read (`agent.files_read`, normalised as retrieval
    /// reads them); `None` when it does not say.
    pub files_read: Option<BTreeSet<String>>,
    /// Per checklist item: whether the chosen run retrieved it (the core's
    /// `retrieval::item_retrieved`), `None` for an item without evidence or a run that does not
    /// say what it read.
    pub retrieved: Vec<Option<bool>>,
}

impl Shown {
    /// The checklist's heading, which says whose answer it is judged on.
    pub fn checklist_heading(&self) -> String {
        match (&self.model, self.attempt) {
            // An answer no judgment (of the judge in force) is about: said, not a sentence that
            // stops at "by".
            (Some(m), Some(a)) if self.runs.is_empty() || self.judge.is_empty() => {
                let by = if self.judge.is_empty() {
                    String::new()
                } else {
                    format!(" by {}", self.judge)
                };
                format!("Checklist ({m}'s answer, attempt {a}: not judged{by})")
            }
            (Some(m), Some(a)) => format!(
                "Checklist, judged on {m}'s answer (attempt {a}) by {}",
                self.judge
            ),
            (Some(m), None) => format!("Checklist ({m}: no answer or judgment)"),
            _ => "Checklist".to_string(),
        }
    }
}

/// What to show of `question` given its data (if here), the judge in force, the address and the
/// URL's weight rules.
pub fn derive(
    question: Question,
    data: Option<&QuestionData>,
    judge: String,
    at: Address,
    rules: &[String],
) -> Shown {
    let by_model = judgments_by_model(data, &judge);
    let answers: Vec<(Answer, Option<Md>)> = data
        .iter()
        .flat_map(|d| {
            d.answers
                .iter()
                .enumerate()
                .map(|(i, a)| (a.clone(), d.answers_md.get(i).cloned()))
        })
        .collect();
    let commit_link = commit_link(&question.repo);
    let in_force = weights_in_force(rules, &question);
    let reweighted = question
        .checklist
        .iter()
        .zip(&in_force)
        .any(|(it, w)| *w != it.weight);
    let mut models: Vec<String> = answers
        .iter()
        .map(|(a, _)| a.model.clone())
        .chain(by_model.keys().cloned())
        .collect();
    models.shared_sort();
    models.dedup();
    let (attempts, attempt) = attempts(&answers, &by_model, at.model.as_ref(), at.att.as_deref());
    let runs = runs_of(&by_model, at.model.as_ref(), attempt);
    let chosen = at.model.as_ref().and_then(|m| {
        answers
            .iter()
            .find(|(a, _)| &a.model == m && Some(a.attempt) == attempt)
            .cloned()
    });
    let rationale = at
        .model
        .as_ref()
        .zip(at.item.as_ref())
        .filter(|_| data.is_some())
        .map(|(m, it)| (m.clone(), it.clone(), rationales(by_model.get(m), it)));
    let trajectory = chosen.as_ref().and_then(|(a, _)| trajectory_of(data?, a));
    let read = chosen
        .as_ref()
        .and_then(|(a, _)| AgentBlock::of(a))
        .and_then(files_read);
    let retrieved = question
        .checklist
        .iter()
        .map(|it| read.as_ref().and_then(|r| item_retrieved(it, r)))
        .collect();
    Shown {
        trajectory,
        files_read: read,
        retrieved,
        judge,
        reference_md: data.and_then(|d| d.reference_md.clone()),
        texts_error: data.and_then(|d| d.texts_error.clone()),
        loading: data.is_none(),
        commit_link,
        in_force,
        reweighted,
        models,
        model: at.model,
        attempts,
        attempt,
        runs,
        chosen,
        rationale,
        by_model,
        answers,
        question,
    }
}

/// The repository's page at the pinned commit, as shown.
#[derive(Debug, Clone, PartialEq)]
pub enum CommitLink {
    /// An http(s) URL: a link.
    Link(String),
    /// Any other address: shown as text, never a link.
    Text(String),
}

/// The repository at the pinned commit: a link, or the address that is not one.
fn commit_link(repo: &Repo) -> Option<CommitLink> {
    (!repo.url.is_empty() && !repo.commit.is_empty()).then(|| {
        let url = format!("{}/tree/{}", repo.url.trim_end_matches('/'), repo.commit);
        external_href(&url).map_or(CommitLink::Text(url), CommitLink::Link)
    })
}

/// The judge runs of `model`'s `attempt`.
fn runs_of(
    by_model: &BTreeMap<String, Vec<Judgment>>,
    model: Option<&String>,
    attempt: Option<u32>,
) -> Vec<Judgment> {
    model
        .and_then(|m| by_model.get(m))
        .map(|js| {
            js.iter()
                .filter(|j| Some(j.attempt) == attempt)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The judge's judgments of the question, by model, each model's by (attempt, judge run).
fn judgments_by_model(data: Option<&QuestionData>, judge: &str) -> BTreeMap<String, Vec<Judgment>> {
    let mut by_model: BTreeMap<String, Vec<Judgment>> = BTreeMap::new();
    for j in data
        .iter()
        .flat_map(|d| d.judgments.iter())
        .filter(|j| j.judge == judge)
    {
        by_model.entry(j.model.clone()).or_default().push(j.clone());
    }
    for v in by_model.values_mut() {
        v.shared_sort_by_key(|j| (j.attempt, j.judge_run));
    }
    by_model
}

/// The run of answer `a`, if a trajectories file holds it.
fn trajectory_of(data: &QuestionData, a: &Answer) -> Option<TrajectoryKey> {
    data.trajectories
        .iter()
        .any(|(m, n)| *m == a.model && *n == a.attempt)
        .then(|| TrajectoryKey {
            question_id: a.question_id.clone(),
            model: a.model.clone(),
            attempt: a.attempt,
        })
}

/// The attempts of `model` (answered or judged), sorted, and the one shown: the address's if it
/// is one of them, else the first.
fn attempts(
    answers: &[(Answer, Option<Md>)],
    by_model: &BTreeMap<String, Vec<Judgment>>,
    model: Option<&String>,
    att: Option<&str>,
) -> (Vec<u32>, Option<u32>) {
    let mut attempts: Vec<u32> = model
        .iter()
        .flat_map(|m| {
            answers
                .iter()
                .filter(move |(a, _)| &a.model == *m)
                .map(|(a, _)| a.attempt)
                .chain(by_model.get(*m).into_iter().flatten().map(|j| j.attempt))
        })
        .collect();
    attempts.shared_sort();
    attempts.dedup();
    let attempt = att
        .and_then(|a| a.parse::<u32>().ok())
        .filter(|a| attempts.contains(a))
        .or_else(|| attempts.first().copied());
    (attempts, attempt)
}

/// Each judge run's score of item `item`, with its rationale.
fn rationales(judgments: Option<&Vec<Judgment>>, item: &str) -> Vec<Rationale> {
    judgments
        .into_iter()
        .flatten()
        .filter_map(|j| {
            j.items
                .iter()
                .find(|x| x.id == item)
                .map(|x| (j.attempt, j.judge_run, x.score, x.rationale.clone()))
        })
        .collect()
}

/// The questions before and after `id` in id order.
pub fn neighbours(ids: &[&str], id: &str) -> (Option<String>, Option<String>) {
    let mut ids = ids.to_vec();
    ids.shared_sort();
    let pos = ids.iter().position(|x| *x == id);
    let prev = pos
        .and_then(|p| p.checked_sub(1))
        .and_then(|p| ids.get(p))
        .map(|s| s.to_string());
    let next = pos.and_then(|p| ids.get(p + 1)).map(|s| s.to_string());
    (prev, next)
}

/// The entry after (or before) `current` in `list`, wrapping around; the first when there is no
/// current one.
pub fn step(list: &[String], current: Option<String>, forward: bool) -> Option<String> {
    let n = list.len();
    if n == 0 {
        return None;
    }
    let pos = current.and_then(|c| list.iter().position(|x| *x == c));
    let i = match (pos, forward) {
        (None, _) => 0,
        (Some(p), true) => (p + 1) % n,
        (Some(p), false) => (p + n - 1) % n,
    };
    Some(list[i].clone())
}

/// One checklist item as the judge runs of a chosen answer scored it: what the item's card
/// shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemScores {
    /// Each run that scored it: (judge run, score, rationale), in the runs' order.
    pub scored: Vec<(u32, u32, String)>,
    /// The scores given, each once, ascending.
    pub distinct: Vec<u32>,
    /// The rubric tier each score reached (the highest tier at or below it).
    pub reached: Vec<u32>,
}

impl ItemScores {
    /// Item `it` as `runs` scored it.
    pub fn of(it: &ChecklistItem, runs: &[Judgment]) -> ItemScores {
        let scored: Vec<(u32, u32, String)> = runs
            .iter()
            .filter_map(|j| {
                j.items
                    .iter()
                    .find(|x| x.id == it.id)
                    .map(|x| (j.judge_run, x.score, x.rationale.clone()))
            })
            .collect();
        let mut distinct: Vec<u32> = scored.iter().map(|s| s.1).collect();
        distinct.shared_sort();
        distinct.dedup();
        let tier = |score: u32| {
            it.rubric
                .iter()
                .filter(|t| t.score <= score)
                .max_by_key(|t| t.score)
                .map(|t| t.score)
        };
        let reached = scored.iter().filter_map(|s| tier(s.1)).collect();
        ItemScores {
            scored,
            distinct,
            reached,
        }
    }

    /// Whether the judge runs gave it different scores.
    pub fn disagree(&self) -> bool {
        self.distinct.len() > 1
    }

    /// How many runs gave it `score`.
    pub fn runs_giving(&self, score: u32) -> usize {
        self.scored.iter().filter(|s| s.1 == score).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;

    fn shown(id: &str, data: bool, at: Address, rules: &[String]) -> Shown {
        let l = golden();
        let q = l
            .dataset
            .questions
            .iter()
            .find(|q| q.id == id)
            .unwrap()
            .clone();
        let d = QuestionData::of(&l.dataset, id);
        derive(q, data.then_some(&d), "J".into(), at, rules)
    }

    #[test]
    fn an_items_scores_say_each_run_its_tier_and_whether_runs_disagree() {
        let l = golden();
        let q = &l.dataset.questions[0];
        let it = &q.checklist[0];
        let mut runs: Vec<Judgment> = l
            .dataset
            .judgments
            .iter()
            .filter(|j| j.question_id == q.id && j.items.iter().any(|x| x.id == it.id))
            .take(1)
            .cloned()
            .collect();
        assert_eq!(runs.len(), 1, "the golden data judges {}", it.id);
        let one = ItemScores::of(it, &runs);
        let score = one.scored[0].1;
        assert_eq!(one.distinct, [score]);
        assert!(!one.disagree());
        // A second run scoring it otherwise: they disagree, each score counted once.
        let mut other = runs[0].clone();
        other.judge_run += 1;
        let item = other.items.iter_mut().find(|x| x.id == it.id).unwrap();
        item.score = if score == 0 { 1 } else { 0 };
        runs.push(other);
        let two = ItemScores::of(it, &runs);
        assert!(two.disagree());
        assert_eq!(two.scored.len(), 2);
        assert_eq!(two.runs_giving(score), 1);
        // A tier reached is one of the rubric's, at or below the score.
        for (r, s) in two.reached.iter().zip(&two.scored) {
            assert!(*r <= s.1 && it.rubric.iter().any(|t| t.score == *r));
        }
        assert_eq!(ItemScores::of(it, &[]), ItemScores::default());
    }

    #[test]
    fn with_no_model_chosen_the_checklist_stands_alone() {
        let s = shown("q1", true, Address::default(), &[]);
        assert_eq!(s.checklist_heading(), "Checklist");
        assert!(!s.loading && s.chosen.is_none() && s.runs.is_empty() && s.rationale.is_none());
        assert!(s.models.contains(&"A".to_string()));
        assert!(
            s.by_model
                .values()
                .all(|js| js.iter().all(|j| j.judge == "J"))
        );
        assert!(!s.reweighted);
        // Before its data is here: loading, and no rationale that would read as "no judgment".
        let at = Address {
            model: Some("A".into()),
            item: Some("k1".into()),
            att: None,
        };
        let s = shown("q1", false, at, &[]);
        assert!(s.loading && s.rationale.is_none() && s.models.is_empty());
    }

    #[test]
    fn a_chosen_model_shows_its_answer_runs_and_rationales() {
        let at = Address {
            model: Some("A".into()),
            item: Some("k1".into()),
            att: Some("not a number".into()),
        };
        let s = shown("q1", true, at, &[]);
        assert_eq!(s.attempt, s.attempts.first().copied());
        assert!(
            s.checklist_heading()
                .starts_with("Checklist, judged on A's answer (attempt ")
        );
        // Answers but no judgment: the heading says so instead of stopping at "by".
        let mut unjudged = s.clone();
        unjudged.runs.clear();
        unjudged.judge.clear();
        let a = s.attempt.unwrap();
        assert_eq!(
            unjudged.checklist_heading(),
            format!("Checklist (A's answer, attempt {a}: not judged)")
        );
        unjudged.judge = "J".into();
        assert_eq!(
            unjudged.checklist_heading(),
            format!("Checklist (A's answer, attempt {a}: not judged by J)")
        );
        assert!(
            s.runs
                .iter()
                .all(|j| j.model == "A" && Some(j.attempt) == s.attempt)
        );
        let (m, item, rows) = s.rationale.clone().unwrap();
        assert_eq!((m.as_str(), item.as_str()), ("A", "k1"));
        assert_eq!(rows.len(), s.by_model["A"].len());
        // Re-weighted by the URL: the weights in force say so.
        let s = shown("q1", true, Address::default(), &["q1/k1=0".to_string()]);
        assert!(s.reweighted);
        assert_eq!(s.in_force[0], 0);
    }

    #[test]
    fn an_answer_with_a_trajectory_and_files_read_says_what_it_retrieved() {
        let l = golden();
        let mut q = l
            .dataset
            .questions
            .iter()
            .find(|q| q.id == "q1")
            .unwrap()
            .clone();
        q.checklist[0].evidence = vec![repoprobe_core::EvidencePath::new("src/lib.rs")];
        let mut d = QuestionData::of(&l.dataset, "q1");
        let a = &mut d.answers[0];
        let (model, attempt) = (a.model.clone(), a.attempt);
        a.agent = Some(Box::new(AgentBlock {
            files_read: Some(vec!["./src/lib.rs".into()]),
            ..AgentBlock::default()
        }));
        d.trajectories = vec![(model.clone(), attempt)];
        let at = Address {
            model: Some(model.clone()),
            att: Some(attempt.to_string()),
            item: None,
        };
        let s = derive(q.clone(), Some(&d), "J".into(), at.clone(), &[]);
        assert_eq!(
            s.trajectory.as_ref().map(|k| k.model.as_str()),
            Some(model.as_str())
        );
        assert_eq!(
            s.retrieved[0],
            Some(true),
            "normalised as retrieval reads it"
        );
        assert!(
            s.retrieved[1..].iter().all(Option::is_none),
            "no evidence: no mark"
        );
        d.answers[0].agent = Some(Box::new(AgentBlock {
            files_read: Some(vec!["README.md".into()]),
            ..AgentBlock::default()
        }));
        d.trajectories.clear();
        let s = derive(q.clone(), Some(&d), "J".into(), at.clone(), &[]);
        assert_eq!(s.retrieved[0], Some(false));
        assert!(s.trajectory.is_none());
        // A run that does not say what it read: no mark at all.
        d.answers[0].agent = None;
        let s = derive(q, Some(&d), "J".into(), at, &[]);
        assert!(s.retrieved.iter().all(Option::is_none) && s.files_read.is_none());
    }

    #[test]
    fn keys_step_through_questions_items_and_models() {
        assert_eq!(
            neighbours(&["q2", "q1", "q3"], "q2"),
            (Some("q1".into()), Some("q3".into()))
        );
        assert_eq!(neighbours(&["q1"], "q1"), (None, None));
        assert_eq!(neighbours(&["q1"], "x"), (None, None));
        let list = ["a".to_string(), "b".to_string()];
        assert_eq!(step(&list, None, false).as_deref(), Some("a"));
        assert_eq!(step(&list, Some("b".into()), true).as_deref(), Some("a"));
        assert_eq!(step(&list, Some("a".into()), false).as_deref(), Some("b"));
        assert_eq!(step(&[], Some("a".into()), true), None);
    }
}
