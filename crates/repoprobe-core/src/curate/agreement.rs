//! How far the human reviewers of the candidates agree (docs/review.md#agreement): per
//! criterion and for the decision, percent agreement, Cohen's κ (two reviewers) and
//! Krippendorff's α (nominal, any number of reviewers, gaps allowed), and the questions they
//! disagree on, for the adjudicator. The statistics take any nominal values
//! ([`percent_agreement`], [`cohen_kappa`], [`krippendorff_alpha`]); [`agreement`] applies them
//! to review records. Pure: the CLI's `curate agreement` and the site call the same function.

use crate::model::{Review, ReviewCriteria, ReviewRole};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The agreement figures of one criterion (or of the decision); `None` where undefined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Percent agreement, 0–100 ([`percent_agreement`]).
    pub percent: Option<f64>,
    /// Cohen's κ: only with exactly two reviewers ([`cohen_kappa`]).
    pub kappa: Option<f64>,
    /// Krippendorff's α, nominal ([`krippendorff_alpha`]).
    pub alpha: Option<f64>,
}

/// The figures of every criterion and of the decision, in the record's order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ByCriterion {
    pub qa_consistency: Figures,
    pub checklist_quality: Figures,
    pub task_validity: Figures,
    pub code_relevance: Figures,
    pub decision: Figures,
}

impl ByCriterion {
    /// (name, figures), the four criteria then `decision`.
    pub fn rows(&self) -> [(&'static str, Figures); 5] {
        [
            (ReviewCriteria::NAMES[0], self.qa_consistency),
            (ReviewCriteria::NAMES[1], self.checklist_quality),
            (ReviewCriteria::NAMES[2], self.task_validity),
            (ReviewCriteria::NAMES[3], self.code_relevance),
            ("decision", self.decision),
        ]
    }
}

/// What `curate agreement` reports (docs/review.md#agreement).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Every reviewer (role `reviewer`) of the records, in name order.
    pub reviewers: Vec<String>,
    /// Questions rated by at least two reviewers: those the figures are computed over.
    pub items: usize,
    pub criteria: ByCriterion,
    /// Questions (ids, in order) whose reviewers differ on the decision or on any criterion.
    pub disagreements: Vec<String>,
}

/// The agreement of the reviewers (role `reviewer`; adjudicators are left out) over the
/// questions rated by at least two of them. A second record of the same question and reviewer
/// is ignored (the loader has reported it).
pub fn agreement(reviews: &[Review]) -> Agreement {
    let mut by_question: BTreeMap<&str, BTreeMap<&str, &Review>> = BTreeMap::new();
    for r in reviews.iter().filter(|r| r.role == ReviewRole::Reviewer) {
        by_question
            .entry(r.question_id.as_str())
            .or_default()
            .entry(r.reviewer.as_str())
            .or_insert(r);
    }
    let reviewers: BTreeSet<&str> = by_question
        .values()
        .flat_map(|m| m.keys().copied())
        .collect();
    let rated: Vec<(&str, &BTreeMap<&str, &Review>)> = by_question
        .iter()
        .filter(|(_, m)| m.len() >= 2)
        .map(|(q, m)| (*q, m))
        .collect();
    // One value per question and reviewer, for each of the five ratings.
    let value = |r: &Review, n: usize| -> bool {
        match n {
            4 => r.decision == crate::model::ReviewDecision::Accept,
            n => r.criteria.values()[n],
        }
    };
    let figures = |n: usize| -> Figures {
        let units: Vec<Vec<bool>> = rated
            .iter()
            .map(|(_, m)| m.values().map(|r| value(r, n)).collect())
            .collect();
        let kappa = match reviewers.iter().collect::<Vec<_>>()[..] {
            [a, b] => {
                let pairs: Vec<(bool, bool)> = rated
                    .iter()
                    .filter_map(|(_, m)| Some((value(m.get(a)?, n), value(m.get(b)?, n))))
                    .collect();
                cohen_kappa(&pairs)
            }
            _ => None,
        };
        Figures {
            percent: percent_agreement(&units),
            kappa,
            alpha: krippendorff_alpha(&units),
        }
    };
    let disagreements = rated
        .iter()
        .filter(|(_, m)| {
            (0..5).any(|n| {
                let mut v = m.values().map(|r| value(r, n));
                let first = v.next();
                v.any(|x| Some(x) != first)
            })
        })
        .map(|(q, _)| q.to_string())
        .collect();
    Agreement {
        reviewers: reviewers.iter().map(|s| s.to_string()).collect(),
        items: rated.len(),
        criteria: ByCriterion {
            qa_consistency: figures(0),
            checklist_quality: figures(1),
            task_validity: figures(2),
            code_relevance: figures(3),
            decision: figures(4),
        },
        disagreements,
    }
}

/// Percent agreement over the units with at least two values: for each such unit, the share
/// of its pairs of values (each unordered pair of raters once) that are equal; the mean of those
/// shares over the units, × 100. `None` when no unit has two values.
pub fn percent_agreement<T: Eq>(units: &[Vec<T>]) -> Option<f64> {
    let shares: Vec<f64> = units
        .iter()
        .filter(|u| u.len() >= 2)
        .map(|u| {
            let (mut pairs, mut same) = (0u64, 0u64);
            for (i, a) in u.iter().enumerate() {
                for b in &u[i + 1..] {
                    pairs += 1;
                    same += u64::from(a == b);
                }
            }
            same as f64 / pairs as f64
        })
        .collect();
    if shares.is_empty() {
        return None;
    }
    Some(100.0 * shares.iter().sum::<f64>() / shares.len() as f64)
}

/// Cohen's κ of two raters over the items both rated, one (first rater's, second rater's)
/// pair each: (p_o − p_e) / (1 − p_e), p_o the share of equal pairs, p_e Σ_c p₁(c)·p₂(c) from
/// each rater's own shares. `None` with no item, or when p_e is 1 (both raters gave one and the
/// same value throughout: κ is 0/0).
pub fn cohen_kappa<T: Ord>(pairs: &[(T, T)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let mut first: BTreeMap<&T, f64> = BTreeMap::new();
    let mut second: BTreeMap<&T, f64> = BTreeMap::new();
    let mut same = 0.0;
    for (a, b) in pairs {
        *first.entry(a).or_default() += 1.0;
        *second.entry(b).or_default() += 1.0;
        if a == b {
            same += 1.0;
        }
    }
    let p_o = same / n;
    let p_e: f64 = first
        .iter()
        .map(|(c, k)| k * second.get(c).copied().unwrap_or(0.0))
        .sum::<f64>()
        / (n * n);
    if p_e >= 1.0 {
        return None;
    }
    Some((p_o - p_e) / (1.0 - p_e))
}

/// Krippendorff's α for nominal data, from the coincidence matrix (Krippendorff, "Computing
/// Krippendorff's Alpha-Reliability", 2011): each unit holds the values its raters gave (a
/// rater who did not rate it is simply absent); units with fewer than two values are left out.
/// A unit of m values adds, for each ordered pair of its values (c, k) from two different
/// raters, 1/(m − 1) to o_ck; n_c = Σ_k o_ck, n = Σ_c n_c; then
/// α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k. `None` when no two values are pairable
/// or every pairable value is the same (the expected disagreement is 0: α is 0/0).
pub fn krippendorff_alpha<T: Ord>(units: &[Vec<T>]) -> Option<f64> {
    // o_ck over the values' distinct categories.
    let mut o: BTreeMap<(&T, &T), f64> = BTreeMap::new();
    for u in units.iter().filter(|u| u.len() >= 2) {
        let mut counts: BTreeMap<&T, f64> = BTreeMap::new();
        for v in u {
            *counts.entry(v).or_default() += 1.0;
        }
        let m = u.len() as f64;
        for (c, nc) in &counts {
            for (k, nk) in &counts {
                let pairs = if c == k { nc * (nc - 1.0) } else { nc * nk };
                if pairs > 0.0 {
                    *o.entry((*c, *k)).or_default() += pairs / (m - 1.0);
                }
            }
        }
    }
    let mut n_c: BTreeMap<&T, f64> = BTreeMap::new();
    for ((c, _), v) in &o {
        *n_c.entry(*c).or_default() += v;
    }
    let n: f64 = n_c.values().sum();
    let observed: f64 = o.iter().filter(|((c, k), _)| c != k).map(|(_, v)| v).sum();
    let expected: f64 = n_c.values().map(|a| a * (n - a)).sum();
    if n < 2.0 || expected <= 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * observed / expected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ReviewDecision;

    fn close(got: Option<f64>, want: f64) {
        let g = got.expect("a value");
        assert!((g - want).abs() < 1e-12, "{g} vs {want}");
    }

    #[test]
    fn perfect_agreement_is_100_percent_and_1_for_kappa_and_alpha() {
        let units = vec![vec![true, true], vec![false, false], vec![true, true]];
        close(percent_agreement(&units), 100.0);
        close(krippendorff_alpha(&units), 1.0);
        let pairs = [(true, true), (false, false), (true, true)];
        close(cohen_kappa(&pairs), 1.0);
    }

    /// The example of Cohen's κ on Wikipedia ("Cohen's kappa", simple example): 50 proposals,
    /// both yes 20, A yes B no 5, A no B yes 10, both no 15: p_o = 0.7, p_e = 0.5, κ = 0.4.
    #[test]
    fn kappa_of_the_textbook_example_is_0_4() {
        let mut pairs = Vec::new();
        pairs.extend(std::iter::repeat_n(("yes", "yes"), 20));
        pairs.extend(std::iter::repeat_n(("yes", "no"), 5));
        pairs.extend(std::iter::repeat_n(("no", "yes"), 10));
        pairs.extend(std::iter::repeat_n(("no", "no"), 15));
        close(cohen_kappa(&pairs), 0.4);
    }

    #[test]
    fn kappa_and_alpha_are_undefined_when_everyone_gives_one_value() {
        assert_eq!(cohen_kappa(&[(1, 1), (1, 1)]), None);
        assert_eq!(cohen_kappa::<u8>(&[]), None);
        assert_eq!(krippendorff_alpha(&[vec![1, 1], vec![1, 1, 1]]), None);
        assert_eq!(krippendorff_alpha(&[vec![1], vec![2]]), None);
        assert_eq!(percent_agreement(&[vec![1], vec![2]]), None);
    }

    /// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
    /// observers, twelve units, values 1–5, with missing data; α nominal is published as
    /// 0.743. By hand from its coincidence matrix: n_c = (9, 13, 10, 5, 3), n = 40, the
    /// off-diagonal coincidences sum to 8, Σ_{c≠k} n_c·n_k = 40² − 384 = 1216, so
    /// α = 1 − 39 · 8 / 1216 = 113/152 = 0.74342…
    #[test]
    fn alpha_of_krippendorffs_example_with_missing_data_is_0_743() {
        // Rows: observers A, B, C, D; columns: units 1..12; 0 is "not rated".
        let data: [[u8; 12]; 4] = [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3],
            [0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0],
        ];
        let units: Vec<Vec<u8>> = (0..12)
            .map(|u| data.iter().map(|row| row[u]).filter(|&v| v != 0).collect())
            .collect();
        let alpha = krippendorff_alpha(&units).unwrap();
        assert!((alpha - 0.743).abs() < 5e-4, "{alpha}");
        close(Some(alpha), 113.0 / 152.0);
    }

    fn review(q: &str, who: &str, criteria: [bool; 4], accept: bool) -> Review {
        Review {
            question_id: q.into(),
            reviewer: who.into(),
            role: ReviewRole::Reviewer,
            criteria: ReviewCriteria {
                qa_consistency: criteria[0],
                checklist_quality: criteria[1],
                task_validity: criteria[2],
                code_relevance: criteria[3],
            },
            decision: if accept {
                ReviewDecision::Accept
            } else {
                ReviewDecision::Reject
            },
            note: None,
            reviewed_at: "2026-03-01T12:00:00Z".into(),
        }
    }

    #[test]
    fn agreement_of_review_records_counts_questions_rated_twice_and_lists_disagreements() {
        let t = [true; 4];
        let mut f = [true; 4];
        f[1] = false;
        let mut reviews = vec![
            review("q1", "ann", t, true),
            review("q1", "bob", t, true),
            review("q2", "ann", f, true),
            review("q2", "bob", t, true),
            review("q3", "ann", t, false),
            review("q3", "bob", t, true),
            review("q4", "ann", t, true),
            // Only one reviewer: not an item.
            review("q5", "bob", f, false),
        ];
        let mut adj = review("q3", "cy", t, true);
        adj.role = ReviewRole::Adjudicator;
        reviews.push(adj);
        let a = agreement(&reviews);
        assert_eq!(a.reviewers, ["ann", "bob"]);
        assert_eq!(a.items, 3);
        assert_eq!(a.disagreements, ["q2", "q3"]);
        close(a.criteria.qa_consistency.percent, 100.0);
        assert_eq!(
            a.criteria.qa_consistency.kappa, None,
            "one value throughout"
        );
        assert_eq!(a.criteria.qa_consistency.alpha, None);
        close(a.criteria.checklist_quality.percent, 200.0 / 3.0);
        close(a.criteria.decision.percent, 200.0 / 3.0);
        // ann: accept, accept, reject; bob: accept ×3 → p_o 2/3, p_e 2/3 · 1 = 2/3: κ 0.
        close(a.criteria.decision.kappa, 0.0);
        let json = serde_json::to_value(&a).unwrap();
        assert!(json["criteria"]["qa_consistency"]["kappa"].is_null());
        assert_eq!(json["items"], 3);
    }

    #[test]
    fn kappa_is_left_out_with_three_reviewers() {
        let t = [true; 4];
        let reviews = vec![
            review("q1", "a", t, true),
            review("q1", "b", t, false),
            review("q2", "c", t, true),
            review("q2", "a", t, true),
        ];
        let a = agreement(&reviews);
        assert_eq!(a.reviewers.len(), 3);
        assert_eq!(a.criteria.decision.kappa, None);
        close(a.criteria.decision.percent, 50.0);
        assert!(a.criteria.decision.alpha.is_some());
    }
}
