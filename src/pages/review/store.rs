//! The Review view's decisions as data, apart from the browser (natively tested): one [`Entry`]
//! per (role, candidate) — the four criteria, the note, and once accepted or rejected the
//! review record itself — what is kept in `localStorage` ([`Decisions::to_json`] /
//! [`Decisions::from_json`], under [`storage_key`]), and the export, `reviews.jsonl`
//! ([`Decisions::export`]: one record per (question, reviewer, role), docs/format.md#review).
//! No clock here: the time of a decision is given.

use repoprobe_core::model::{Review, ReviewCriteria, ReviewDecision, ReviewRole};
use repoprobe_core::sort::SharedSort;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `localStorage` key of the reviewer's name (asked once, for every candidates file).
pub const REVIEWER_KEY: &str = "repoprobe-review:reviewer";

/// The `localStorage` key of the decisions on a candidates file: named by the SHA-256 of the
/// file(s) holding the candidates (as the Data view lists them), sorted and joined by `+`, so the
/// same file loaded again (dropped, picked, `?data=`, under any name) finds its decisions.
pub fn storage_key(hashes: &[String]) -> String {
    let mut h = hashes.to_vec();
    h.shared_sort();
    h.dedup();
    format!("repoprobe-review:v1:{}", h.join("+"))
}

/// What one person has said of one candidate in one role, decided or not yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The four criteria, in the order of `ReviewCriteria::NAMES`; each passes until toggled.
    pub criteria: [bool; 4],
    #[serde(default)]
    pub note: String,
    /// The record, once accepted or rejected (kept up to date with later toggles and notes).
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub review: Option<Review>,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            criteria: [true; 4],
            note: String::new(),
            review: None,
        }
    }
}

/// Every entry of one candidates file, and whether some decision was made or changed since the
/// last export (the page warns before such decisions could be lost).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decisions {
    /// By [`entry_key`] (role, then question id).
    #[serde(default)]
    pub entries: BTreeMap<String, Entry>,
    #[serde(default)]
    pub unexported: bool,
}

/// The key of a (role, question) entry: the role's name, a `/`, the id (roles hold no `/`).
pub fn entry_key(role: ReviewRole, id: &str) -> String {
    format!("{}/{id}", role.as_str())
}

impl Decisions {
    /// What was kept, or nothing when it cannot be read (another version, edited by hand).
    pub fn from_json(text: &str) -> Decisions {
        serde_json::from_str(text).unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The entry of `id` in `role` (a fresh one when none was made).
    pub fn entry(&self, role: ReviewRole, id: &str) -> Entry {
        self.entries
            .get(&entry_key(role, id))
            .cloned()
            .unwrap_or_default()
    }

    /// The decision made on `id` in `role`, if any.
    pub fn decision(&self, role: ReviewRole, id: &str) -> Option<ReviewDecision> {
        self.entries
            .get(&entry_key(role, id))
            .and_then(|e| e.review.as_ref())
            .map(|r| r.decision)
    }

    /// How many of `ids` have a decision in `role`.
    pub fn decided<'a>(&self, role: ReviewRole, ids: impl IntoIterator<Item = &'a str>) -> usize {
        ids.into_iter()
            .filter(|id| self.decision(role, id).is_some())
            .count()
    }

    fn edit(&mut self, role: ReviewRole, id: &str, at: &str, f: impl FnOnce(&mut Entry)) {
        let e = self.entries.entry(entry_key(role, id)).or_default();
        f(e);
        if let Some(r) = e.review.as_mut() {
            r.criteria = criteria(e.criteria);
            r.note = note(&e.note);
            r.reviewed_at = at.to_string();
            self.unexported = true;
        }
    }

    /// Criterion `n` (0–3) of `id` flipped.
    pub fn toggle(&mut self, role: ReviewRole, id: &str, n: usize, at: &str) {
        self.edit(role, id, at, |e| {
            if let Some(c) = e.criteria.get_mut(n) {
                *c = !*c;
            }
        });
    }

    /// The note of `id` set.
    pub fn set_note(&mut self, role: ReviewRole, id: &str, text: &str, at: &str) {
        self.edit(role, id, at, |e| e.note = text.to_string());
    }

    /// `id` accepted or rejected by `reviewer` in `role` at `at` (RFC 3339, UTC).
    pub fn decide(
        &mut self,
        role: ReviewRole,
        id: &str,
        reviewer: &str,
        decision: ReviewDecision,
        at: &str,
    ) {
        let e = self.entries.entry(entry_key(role, id)).or_default();
        e.review = Some(Review {
            question_id: id.to_string(),
            reviewer: reviewer.to_string(),
            role,
            criteria: criteria(e.criteria),
            decision,
            note: note(&e.note),
            reviewed_at: at.to_string(),
        });
        self.unexported = true;
    }

    /// The decision on `id` in `role` taken back (its criteria and note kept).
    pub fn undecide(&mut self, role: ReviewRole, id: &str) {
        if let Some(e) = self.entries.get_mut(&entry_key(role, id))
            && e.review.take().is_some()
        {
            self.unexported = true;
        }
    }

    /// Every decided record, in (question, reviewer, role) order.
    pub fn records(&self) -> Vec<&Review> {
        let mut r: Vec<&Review> = self
            .entries
            .values()
            .filter_map(|e| e.review.as_ref())
            .collect();
        r.shared_sort_by(|a, b| {
            (&a.question_id, &a.reviewer, a.role).cmp(&(&b.question_id, &b.reviewer, b.role))
        });
        r
    }

    /// `reviews.jsonl`: one record per line, each (question, reviewer, role) once.
    pub fn export(&self) -> String {
        let mut out = String::new();
        let mut seen = std::collections::BTreeSet::new();
        for r in self.records() {
            if seen.insert((&r.question_id, &r.reviewer, r.role)) {
                out += &serde_json::to_string(r).unwrap_or_default();
                out.push('\n');
            }
        }
        out
    }
}

fn criteria(c: [bool; 4]) -> ReviewCriteria {
    ReviewCriteria {
        qa_consistency: c[0],
        checklist_quality: c[1],
        task_validity: c[2],
        code_relevance: c[3],
    }
}

fn note(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// An ISO time as `Date.toISOString` writes it (`2026-03-01T12:00:00.123Z`) in whole seconds:
/// `2026-03-01T12:00:00Z`.
pub fn whole_seconds(iso: &str) -> String {
    match iso.split_once('.') {
        Some((head, _)) if iso.ends_with('Z') => format!("{head}Z"),
        _ => iso.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: &str = "2026-03-01T12:00:00Z";

    #[test]
    fn a_decision_exports_as_a_review_record_the_core_loads() {
        let mut d = Decisions::default();
        d.toggle(ReviewRole::Reviewer, "c02", 1, AT);
        d.set_note(ReviewRole::Reviewer, "c02", "  k2 is vague ", AT);
        d.decide(
            ReviewRole::Reviewer,
            "c02",
            "ann",
            ReviewDecision::Reject,
            AT,
        );
        d.decide(
            ReviewRole::Reviewer,
            "c01",
            "ann",
            ReviewDecision::Accept,
            AT,
        );
        d.decide(
            ReviewRole::Adjudicator,
            "c01",
            "ann",
            ReviewDecision::Reject,
            AT,
        );
        let text = d.export();
        assert_eq!(text.lines().count(), 3);
        let loaded = repoprobe_core::load(
            &[repoprobe_core::SourceFile {
                name: "reviews.jsonl",
                bytes: text.as_bytes(),
            }],
            repoprobe_core::LoadOptions::default(),
        );
        assert!(loaded.issues.is_empty(), "{:?}", loaded.issues);
        let r = &loaded.dataset.reviews;
        assert_eq!(r.len(), 3);
        let c02 = r.iter().find(|r| r.question_id == "c02").unwrap();
        assert!(!c02.criteria.checklist_quality && c02.criteria.qa_consistency);
        assert_eq!(c02.note.as_deref(), Some("k2 is vague"));
        assert!(
            r.iter()
                .any(|r| r.role == ReviewRole::Adjudicator && r.decision == ReviewDecision::Reject)
        );
    }

    #[test]
    fn kept_decisions_read_back_and_a_change_after_export_is_unexported() {
        let mut d = Decisions::default();
        d.decide(
            ReviewRole::Reviewer,
            "c01",
            "ann",
            ReviewDecision::Accept,
            AT,
        );
        d.unexported = false;
        let back = Decisions::from_json(&d.to_json());
        assert_eq!(back, d);
        let mut back = back;
        back.toggle(ReviewRole::Reviewer, "c01", 3, AT);
        assert!(back.unexported, "a decided record changed");
        assert!(
            !back.records()[0].criteria.code_relevance,
            "the record follows"
        );
        assert_eq!(Decisions::from_json("not json"), Decisions::default());
        assert_eq!(
            back.decided(ReviewRole::Reviewer, ["c01", "c02"]),
            1,
            "one of two"
        );
        back.undecide(ReviewRole::Reviewer, "c01");
        assert_eq!(back.decision(ReviewRole::Reviewer, "c01"), None);
    }

    #[test]
    fn the_key_is_the_candidates_hashes_in_order_and_times_are_whole_seconds() {
        assert_eq!(
            storage_key(&["b".into(), "a".into()]),
            "repoprobe-review:v1:a+b"
        );
        assert_eq!(whole_seconds("2026-03-01T12:00:00.123Z"), AT);
        assert_eq!(whole_seconds(AT), AT);
    }
}
