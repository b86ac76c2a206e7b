//! How far the human reviewers of the candidates agree (docs/review.md#agreement): per
//! criterion and for the decision, percent agreement, Cohen's κ (two reviewers) and
//! Krippendorff's α (nominal, any number of reviewers, gaps allowed), and the questions they
//! disagree on, for the adjudicator. The statistics are the core's (`metrics::nominal`, any
//! nominal values); [`agreement`] applies them to review records. Pure: the CLI's `curate agreement` and the site call the same function.

use repoprobe_core::metrics::nominal::{cohen_kappa, krippendorff_alpha, percent_agreement};
use repoprobe_core::model::{Review, ReviewCriteria, ReviewRole};
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
            4 => r.decision == repoprobe_core::model::ReviewDecision::Accept,
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

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::model::ReviewDecision;

    fn close(got: Option<f64>, want: f64) {
        let g = got.expect("a value");
        assert!((g - want).abs() < 1e-12, "{g} vs {want}");
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
