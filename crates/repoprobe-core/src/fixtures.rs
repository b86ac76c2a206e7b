//! Test fixtures the unit tests share (they were copied between the protocols' modules).

use crate::model::{ChecklistItem, ItemKind, Question, Repo, RubricTier};

/// An item whose rubric has the tiers `scores`, each criterion naming its score and item.
pub fn item(id: &str, kind: ItemKind, weight: u32, scores: &[u32]) -> ChecklistItem {
    ChecklistItem {
        id: id.into(),
        kind,
        key_point: format!("key point of {id}"),
        weight,
        rubric: scores
            .iter()
            .map(|&s| RubricTier {
                score: s,
                criterion: format!("criterion {s} of {id}"),
            })
            .collect(),
        evidence: Vec::new(),
    }
}

/// A question with two knowledge items (weights 5 and 4, tiers 5/3/0 and 4/0) and clarity.
pub fn question() -> Question {
    Question {
        id: "q1".into(),
        repo: Repo {
            name: "o/r".into(),
            url: String::new(),
            commit: "abc".into(),
            language: "Rust".into(),
            theme: "T".into(),
        },
        category: "Business Logic".into(),
        question: "Why does X happen?".into(),
        reference_answer: "Because of Y.".into(),
        external_context: false,
        curation: None,
        checklist: vec![
            item("k1", ItemKind::Knowledge, 5, &[5, 3, 0]),
            item("k2", ItemKind::Knowledge, 4, &[4, 0]),
            item("clarity", ItemKind::Clarity, 1, &[1, 0]),
        ],
    }
}

/// A question with one knowledge item of weight 9 (tiers 9/0) and clarity.
pub fn one_knowledge_item_question() -> Question {
    let tier = |s| RubricTier {
        score: s,
        criterion: format!("criterion {s}"),
    };
    Question {
        id: "q1".into(),
        repo: Repo {
            name: "o/r".into(),
            url: String::new(),
            commit: "abc".into(),
            language: "Rust".into(),
            theme: "T".into(),
        },
        category: "Business Logic".into(),
        question: "Why does X happen?".into(),
        reference_answer: "Because of Y.".into(),
        external_context: false,
        curation: None,
        checklist: vec![
            ChecklistItem {
                id: "k1".into(),
                kind: ItemKind::Knowledge,
                key_point: "names Y".into(),
                weight: 9,
                rubric: vec![tier(9), tier(0)],
                evidence: Vec::new(),
            },
            ChecklistItem {
                id: "clarity".into(),
                kind: ItemKind::Clarity,
                key_point: "Clarity & Organization".into(),
                weight: 1,
                rubric: vec![tier(1), tier(0)],
                evidence: Vec::new(),
            },
        ],
    }
}
