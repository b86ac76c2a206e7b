//! Agreement between judges over a dataset (docs/metrics.md#agreement-between-judges): which
//! checklist items two judges both scored, the figures of [`super::agreement`] over them —
//! overall, per item kind and per model —, how far apart their Overalls are on the answers both
//! judged, the 95 % intervals of κ, α, F1 and the bias from one bootstrap over whole clusters
//! (repositories by default), and the items they disagree on, largest gap first. What
//! `repoprobe judge-agreement` prints and the site's agreement table shows: one core, one result.

use super::agreement::{Categories, PairFigures, Sums, figures};
use super::bootstrap::{Resamples, interval};
use super::cluster::{Cluster, Clusters};
use super::index::Index;
use crate::dataset::Dataset;
use crate::model::{ItemKind, Judgment};
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Fewer units than this in a pair and its intervals say little: the text report and the site
/// say the sample is too small to say instead of showing them (the JSON still has them, with
/// [`JudgePair::too_small`]).
pub const MIN_UNITS: usize = 30;

/// Which pairs to compare, and the bootstrap of the intervals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgesOptions {
    /// Judge A of every pair; `None`: any judge.
    pub a: Option<String>,
    /// Judge B (the reference of the F1) of every pair; `None`: any judge.
    pub b: Option<String>,
    /// Bootstrap resamples of the intervals (0: no interval).
    pub bootstrap: u32,
    pub seed: u64,
    /// What the bootstrap resamples whole: the questions of a repository together by default.
    #[serde(default)]
    pub cluster: Cluster,
}

impl Default for JudgesOptions {
    fn default() -> Self {
        JudgesOptions {
            a: None,
            b: None,
            bootstrap: 1000,
            seed: 0,
            cluster: Cluster::Repo,
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

/// What `repoprobe judge-agreement` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgesReport {
    /// Every judge with checklist judgments, by name.
    pub judges: Vec<JudgeCount>,
    pub pairs: Vec<JudgePair>,
    pub bootstrap: u32,
    pub seed: u64,
    /// What the bootstrap resampled whole (`repo`, `question`, or `none`: each answer).
    pub cluster: Cluster,
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
    /// The 95 % percentile bootstrap intervals of the overall κ, α and F1 (whole clusters
    /// resampled, see [`JudgesReport::cluster`]); `None` without a bootstrap, below two
    /// clusters, or when no resample has the figure.
    pub kappa_ci95: Option<[f64; 2]>,
    pub alpha_interval_ci95: Option<[f64; 2]>,
    pub f1_full_credit_ci95: Option<[f64; 2]>,
    /// The clusters holding an answer both judged: what the bootstrap resamples.
    pub clusters: usize,
    /// Fewer than [`MIN_UNITS`] units: too few to say; the text and the site show no interval.
    pub too_small: bool,
    /// Over the units of each item kind (`knowledge`, `clarity`) that has any.
    pub by_kind: BTreeMap<String, PairFigures>,
    /// Over the units of each answering model.
    pub by_model: BTreeMap<String, PairFigures>,
    /// Answers both judged (in run 0).
    pub answers: usize,
    /// A's Overall minus B's on those answers, in percentage points.
    pub bias_pp: Option<f64>,
    /// The 95 % percentile bootstrap interval of `bias_pp`, from the same resamples as
    /// `kappa_ci95`'s.
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
    let clusters = Clusters::new(&index.questions, opts.cluster);
    let pairs = pairs_asked(&names, opts)?
        .into_iter()
        .map(|(a, b)| {
            let mut p = pair(a, b, &by_judge[a], &by_judge[b], &index);
            p.intervals(&clusters, opts);
            p.into_pair()
        })
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
        cluster: opts.cluster,
    })
}

/// One unit's attainments and where it belongs.
struct Unit<'d> {
    kind: ItemKind,
    model: &'d str,
    /// The question's index and the ordinal of the answer among those both judged.
    question: u32,
    answer: u32,
    a: f64,
    b: f64,
}

/// One answer both judged: its question, and s_A − s_B.
struct Answer {
    question: u32,
    diff: i64,
}

/// A pair's figures with what its bootstrap draws from.
struct Pairing<'d> {
    pair: JudgePair,
    units: Vec<Unit<'d>>,
    answers: Vec<Answer>,
}

fn pair<'d>(
    a: &'d str,
    b: &'d str,
    ja: &BTreeMap<AnswerAt<'d>, &'d Judgment>,
    jb: &BTreeMap<AnswerAt<'d>, &'d Judgment>,
    index: &Index<'d>,
) -> Pairing<'d> {
    let mut units: Vec<Unit> = Vec::new();
    let mut disagreements = Vec::new();
    let mut answers: Vec<Answer> = Vec::new();
    for (&(qi, model, attempt), x) in ja {
        let Some(y) = jb.get(&(qi, model, attempt)) else {
            continue;
        };
        let answer = answers.len() as u32;
        answers.push(Answer {
            question: qi,
            diff: i64::from(x.total()) - i64::from(y.total()),
        });
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
                question: qi,
                answer,
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
    disagreements.shared_sort_by(|p, q| q.gap.total_cmp(&p.gap));
    let over = |keep: &dyn Fn(&Unit) -> bool| {
        let v: Vec<(f64, f64)> = units
            .iter()
            .filter(|u| keep(u))
            .map(|u| (u.a, u.b))
            .collect();
        figures(&v)
    };
    let kinds: BTreeSet<ItemKind> = units.iter().map(|u| u.kind).collect_set();
    let models: BTreeSet<&str> = units.iter().map(|u| u.model).collect_set();
    let overall = over(&|_| true);
    let pair = JudgePair {
        a: a.to_string(),
        b: b.to_string(),
        overall,
        kappa_ci95: None,
        alpha_interval_ci95: None,
        f1_full_credit_ci95: None,
        clusters: 0,
        too_small: overall.items < MIN_UNITS,
        by_kind: kinds
            .into_iter()
            .map(|k| (k.as_str().to_string(), over(&|u| u.kind == k)))
            .collect_map(),
        by_model: models
            .into_iter()
            .map(|m| (m.to_string(), over(&|u| u.model == m)))
            .collect_map(),
        answers: answers.len(),
        bias_pp: bias(answers.iter().map(|x| (1, x.diff))),
        bias_ci95: None,
        disagreements,
    };
    Pairing {
        pair,
        units,
        answers,
    }
}

/// One cluster of a pair: its units' [`Sums`], and its answers both judged with Σ(s_A − s_B).
struct Drawn {
    sums: Sums,
    answers: u64,
    diff: i64,
}

impl Pairing<'_> {
    /// The pair's 95 % intervals from `opts.bootstrap` resamples of its clusters (`clusters`'
    /// ids of the questions with an answer both judged; each answer alone under
    /// [`Cluster::None`]), drawn from `opts.seed`: every resample holds each cluster drawn with
    /// all its units and answers, as many times as drawn, and gives κ, α, F1 and the bias —
    /// the same draws for the four (and for every pair over as many clusters). A figure
    /// undefined in a resample leaves that resample out of its interval.
    fn intervals(&mut self, clusters: &Clusters, opts: &JudgesOptions) {
        // The pair's clusters, in order of their ids.
        let key = |question: u32, answer: u32| match opts.cluster {
            Cluster::None => answer,
            Cluster::Repo | Cluster::Question => clusters.of[question as usize],
        };
        let mut ids: BTreeMap<u32, usize> = BTreeMap::new();
        for (n, x) in self.answers.iter().enumerate() {
            ids.insert(key(x.question, n as u32), 0);
        }
        for (slot, n) in ids.values_mut().zip(0..) {
            *slot = n;
        }
        self.pair.clusters = ids.len();
        let Some(resamples) = (ids.len() >= 2)
            .then(|| Resamples::new(ids.len(), opts.bootstrap, opts.seed))
            .flatten()
        else {
            return;
        };
        let all: Vec<(f64, f64)> = self.units.iter().map(|u| (u.a, u.b)).collect();
        let cats = Categories::of(&all);
        let mut units: Vec<Vec<(f64, f64)>> = vec![Vec::new(); ids.len()];
        let mut biases: Vec<(u64, i64)> = vec![(0, 0); ids.len()];
        for (n, x) in self.answers.iter().enumerate() {
            let c = &mut biases[ids[&key(x.question, n as u32)]];
            c.0 += 1;
            c.1 += x.diff;
        }
        for u in &self.units {
            units[ids[&key(u.question, u.answer)]].push((u.a, u.b));
        }
        let drawn: Vec<Drawn> = units
            .iter()
            .zip(biases)
            .map(|(units, (answers, diff))| Drawn {
                sums: Sums::of(units, &cats),
                answers,
                diff,
            })
            .collect();
        let mut values: [Vec<f64>; 4] = Default::default();
        let mut total = cats.total();
        for s in resamples.each() {
            total.clear();
            s.iter().for_each(|&c| total.add(&drawn[c as usize].sums));
            let f = total.figures();
            let b = bias(s.iter().map(|&c| {
                let d = &drawn[c as usize];
                (d.answers, d.diff)
            }));
            for (v, x) in values
                .iter_mut()
                .zip([f.kappa, f.alpha_interval, f.f1_full_credit, b])
            {
                v.extend(x);
            }
        }
        let [k, a, f, b] = values.map(|mut v| interval(&mut v));
        let p = &mut self.pair;
        (
            p.kappa_ci95,
            p.alpha_interval_ci95,
            p.f1_full_credit_ci95,
            p.bias_ci95,
        ) = (k, a, f, b);
    }

    fn into_pair(self) -> JudgePair {
        self.pair
    }
}

/// 100 · Σ(s_A − s_B) / (10 · answers) over (answers, Σ(s_A − s_B)) parts: A's Overall minus
/// B's in points; `None` with no answer. Sums of whole scores, one division: exact, in any order.
fn bias(parts: impl Iterator<Item = (u64, i64)>) -> Option<f64> {
    let (n, d) = parts.fold((0u64, 0i64), |(n, d), (m, e)| (n + m, d + e));
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
        let by_question = JudgesOptions {
            cluster: Cluster::Question,
            ..Default::default()
        };
        let r = judges(&ds, &by_question).unwrap();
        let p = &r.pairs[0];
        assert_eq!(p.bias_pp, Some(30.0));
        assert_eq!(p.bias_ci95, Some([30.0, 30.0]));
        let none = judges(
            &ds,
            &JudgesOptions {
                bootstrap: 0,
                ..by_question
            },
        )
        .unwrap();
        assert_eq!(none.pairs[0].bias_ci95, None);
        assert_eq!(none.pairs[0].kappa_ci95, None);
    }

    /// Both questions are of one repository: one cluster, no interval to draw.
    #[test]
    fn fewer_than_two_clusters_give_no_interval() {
        let r = judges(&dataset(), &JudgesOptions::default()).unwrap();
        assert_eq!(r.cluster, Cluster::Repo);
        let p = &r.pairs[0];
        assert_eq!(p.clusters, 1);
        assert_eq!(
            (
                p.kappa_ci95,
                p.alpha_interval_ci95,
                p.f1_full_credit_ci95,
                p.bias_ci95
            ),
            (None, None, None, None)
        );
        // Six units: too few to say, whatever the intervals.
        assert!(p.too_small);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["pairs"][0]["kappa_ci95"].is_null(), "{json}");
        assert_eq!(json["cluster"], "repo");
        // By question, the two questions are two clusters.
        let q = judges(
            &dataset(),
            &JudgesOptions {
                cluster: Cluster::Question,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(q.pairs[0].clusters, 2);
        assert!(q.pairs[0].bias_ci95.is_some());
    }

    /// Twelve questions in four repositories (q0…q11, repository q mod 4), two models, two
    /// judges whose scores differ in a pattern of the question, model and item; some answers
    /// judged by one judge only.
    fn clustered() -> Dataset {
        let mut questions = Vec::new();
        let mut judgments = Vec::new();
        for n in 0..12u32 {
            let mut q = crate::fixtures::question();
            q.id = format!("q{n:02}");
            q.repo.name = format!("o/r{}", n % 4);
            q.checklist = vec![
                item("k1", ItemKind::Knowledge, 5),
                item("k2", ItemKind::Knowledge, 4),
                item("c", ItemKind::Clarity, 1),
            ];
            for (m, model) in ["m", "n"].into_iter().enumerate() {
                let m = m as u32;
                let x = |k: u32, w: u32| (n * 7 + m * 3 + k * 5) % (w + 1);
                let y = |k: u32, w: u32| (n * 3 + m * 5 + k * 2 + n % 3) % (w + 1);
                judgments.push(judgment(
                    &q.id,
                    model,
                    "j",
                    0,
                    &[("k1", x(1, 5)), ("k2", x(2, 4)), ("c", x(3, 1))],
                ));
                if (n + m) % 5 != 4 {
                    judgments.push(judgment(
                        &q.id,
                        model,
                        "human:ann",
                        0,
                        &[("k1", y(1, 5)), ("k2", y(2, 4)), ("c", y(3, 1))],
                    ));
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

    /// The intervals by their definition, computed apart: the clusters with an answer both
    /// judged, in order of their ids; `Resamples` over them; each resample's units and answers
    /// gathered from the judgments afresh and their figures computed by `figures` and the bias
    /// formula.
    fn recomputed(ds: &Dataset, kind: Cluster, b: u32, seed: u64) -> [Option<[f64; 2]>; 4] {
        let index = Index::new(ds);
        let clusters = Clusters::new(&index.questions, kind);
        let judged = |judge: &str, q: &str, model: &str| {
            ds.judgments
                .iter()
                .find(|j| j.judge == judge && j.question_id == q && j.model == model)
        };
        // Every answer both judged: (cluster key, its units, s_A − s_B).
        type Units = Vec<(f64, f64)>;
        let mut answers: Vec<(u32, Units, i64)> = Vec::new();
        for (qi, q) in index.questions.iter().enumerate() {
            for model in ["m", "n"] {
                let (Some(x), Some(y)) =
                    (judged("j", &q.id, model), judged("human:ann", &q.id, model))
                else {
                    continue;
                };
                let units = q
                    .checklist
                    .iter()
                    .map(|i| {
                        let s = |j: &Judgment| {
                            let score = j.items.iter().find(|s| s.id == i.id).unwrap().score;
                            f64::from(score) / f64::from(i.weight)
                        };
                        (s(x), s(y))
                    })
                    .collect();
                let key = match kind {
                    Cluster::None => answers.len() as u32,
                    _ => clusters.of[qi],
                };
                answers.push((key, units, i64::from(x.total()) - i64::from(y.total())));
            }
        }
        let keys: Vec<u32> = answers
            .iter()
            .map(|a| a.0)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let r = Resamples::new(keys.len(), b, seed).unwrap();
        let mut values: [Vec<f64>; 4] = Default::default();
        for s in r.each() {
            let (mut units, mut n, mut d) = (Vec::new(), 0u64, 0i64);
            for &c in s {
                for a in answers.iter().filter(|a| a.0 == keys[c as usize]) {
                    units.extend(&a.1);
                    n += 1;
                    d += a.2;
                }
            }
            let f = figures(&units);
            let bias = (n > 0).then(|| 100.0 * d as f64 / (10.0 * n as f64));
            for (v, x) in values
                .iter_mut()
                .zip([f.kappa, f.alpha_interval, f.f1_full_credit, bias])
            {
                v.extend(x);
            }
        }
        values.map(|mut v| interval(&mut v))
    }

    #[test]
    fn the_clustered_bootstrap_is_that_of_the_definitions() {
        let ds = clustered();
        for (kind, clusters) in [
            (Cluster::Repo, 4),
            // Each question its own cluster: the twelve, each with an answer both judged.
            (Cluster::Question, 12),
            // Each answer both judged: 24 less the four judged by j alone.
            (Cluster::None, 20),
        ] {
            let opts = JudgesOptions {
                bootstrap: 300,
                seed: 5,
                cluster: kind,
                ..Default::default()
            };
            let r = judges(&ds, &opts).unwrap();
            assert_eq!(r.cluster, kind);
            let p = &r.pairs[0];
            assert_eq!((p.a.as_str(), p.b.as_str()), ("j", "human:ann"));
            assert_eq!(p.clusters, clusters, "{kind:?}");
            assert_eq!(p.overall.items, 3 * 20);
            assert!(!p.too_small);
            let [k, a, f, b] = recomputed(&ds, kind, 300, 5);
            // κ, F1 and the bias are sums of whole numbers: to the bit; α to rounding.
            assert_eq!(p.kappa_ci95, k, "{kind:?}");
            assert_eq!(p.f1_full_credit_ci95, f, "{kind:?}");
            assert_eq!(p.bias_ci95, b, "{kind:?}");
            let (got, want) = (p.alpha_interval_ci95.unwrap(), a.unwrap());
            for i in 0..2 {
                assert!(
                    (got[i] - want[i]).abs() < 1e-12,
                    "{kind:?}: {got:?} vs {want:?}"
                );
            }
            // Intervals, not points: the resamples differ.
            assert!(k.unwrap()[0] < k.unwrap()[1], "{kind:?}: {k:?}");
            // The same seed, the same intervals; the panel of `score` reads them alike.
            assert_eq!(judges(&ds, &opts).unwrap(), r);
        }
    }
}
