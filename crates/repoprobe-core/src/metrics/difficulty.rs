//! How hard each question was: the mean attainment all models got on it, its items weighted by
//! the weights in force (the checklist's own unless re-weighted). The site sorts its question
//! list by it ("hardest first"); it lives here, beside the other metrics, so that it has one
//! definition and is tested without a browser.

use super::items::ItemRow;
use super::weights::{WeightRule, in_force};
use crate::model::Question;
use crate::sort::CollectTree;
use std::collections::BTreeMap;

/// Mean attainment (percent) per question id over `items` (the per-item rows of a score report,
/// for the judge in force), each item weighted by its weight under `rules`. An item whose
/// question or checklist entry is not in `questions` keeps the row's own weight; an item with no
/// attainment (never judged) is left out, and so is a question whose counted weights sum to 0.
pub fn by_question(
    items: &[ItemRow],
    questions: &[Question],
    rules: &[WeightRule],
) -> BTreeMap<String, f64> {
    let mut weights: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
    let mut sums: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for i in items {
        let Some(attainment) = i.attainment else {
            continue;
        };
        let w = weights
            .entry(i.question_id.as_str())
            .or_insert_with(|| {
                questions
                    .iter()
                    .find(|q| q.id == i.question_id)
                    .map(|q| {
                        q.checklist
                            .iter()
                            .map(|c| c.id.as_str())
                            .zip(in_force(rules, q))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .iter()
            .find(|(id, _)| *id == i.item_id)
            .map_or(i.weight, |(_, w)| *w);
        let e = sums.entry(i.question_id.as_str()).or_default();
        e.0 += attainment * f64::from(w);
        e.1 += f64::from(w);
    }
    sums.into_iter()
        .filter(|(_, (_, total))| *total > 0.0)
        .map(|(q, (sum, total))| (q.to_string(), sum / total))
        .collect_map()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemKind;

    fn row(q: &str, item: &str, weight: u32, attainment: Option<f64>) -> ItemRow {
        ItemRow {
            question_id: q.into(),
            item_id: item.into(),
            kind: ItemKind::Knowledge,
            weight,
            judgments: 1,
            attainment,
            per_model: BTreeMap::new(),
            agreement_pairs: 0,
            agreement: None,
        }
    }

    fn question(id: &str, items: &[(&str, u32)]) -> Question {
        let checklist: Vec<serde_json::Value> = items
            .iter()
            .map(|(id, w)| {
                serde_json::json!({"id": id, "kind": "knowledge", "weight": w, "key_point": "k",
                    "rubric": [{"score": 0, "criterion": "no"}, {"score": w, "criterion": "yes"}]})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "id": id, "category": "c", "question": "?", "reference_answer": "r",
            "repo": {"name": "n", "url": "", "commit": "", "language": "l", "theme": "t"},
            "checklist": checklist,
        }))
        .expect("a question")
    }

    #[test]
    fn items_weigh_by_the_weights_in_force() {
        let questions = [question("q1", &[("k1", 3), ("k2", 1)])];
        let items = [
            row("q1", "k1", 3, Some(100.0)),
            row("q1", "k2", 1, Some(0.0)),
            // A question the rows know and the questions do not: the rows' own weights.
            row("q9", "k1", 1, Some(50.0)),
            row("q9", "k2", 3, Some(10.0)),
            // Never judged: left out.
            row("q8", "k1", 2, None),
        ];
        let d = by_question(&items, &questions, &[]);
        assert_eq!(d.get("q1"), Some(&75.0));
        assert_eq!(d.get("q9"), Some(&20.0));
        assert!(!d.contains_key("q8"));
        // Re-weighted: k2 counts as much as k1; a rule weighing every item 0 leaves no mean.
        let rules = [WeightRule::parse("q1/k2=3").expect("a rule")];
        assert_eq!(
            by_question(&items, &questions, &rules).get("q1"),
            Some(&50.0)
        );
        let zero = [WeightRule::parse("*/@knowledge=0").expect("a rule")];
        assert!(!by_question(&items, &questions, &zero).contains_key("q1"));
    }
}
