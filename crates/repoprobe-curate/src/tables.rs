//! The curation's tables, in the core's `Table` so that every renderer (text, Markdown, CSV,
//! the site's) shows them as it shows the score's: the reviewers' agreement (`curate
//! agreement`, the Review view) and a release's funnel (the Data view).

use crate::agreement::Agreement;
use crate::funnel::Funnel;
use crate::record::Stage;
use repoprobe_core::report::{Cell, Mark, Table, num, three};

/// `curate agreement`'s table (docs/review.md#agreement): a row per criterion and one for the
/// decision; percent agreement with one decimal, κ and α with three; `—` where undefined.
pub fn agreement_table(a: &Agreement) -> Table {
    let rows = a
        .criteria
        .rows()
        .into_iter()
        .map(|(name, f)| {
            vec![
                Cell::from(name),
                num(f.percent),
                three(f.kappa),
                three(f.alpha),
            ]
        })
        .collect();
    Table {
        title: format!(
            "Agreement of {} reviewer(s) ({}) over {} question(s) rated by at least two",
            a.reviewers.len(),
            a.reviewers.join(", "),
            a.items
        ),
        headers: ["criterion", "agreement %", "Cohen's κ", "Krippendorff's α"]
            .map(String::from)
            .to_vec(),
        numeric: vec![false, true, true, true],
        rows,
        note: Some(format!(
            "κ with exactly two reviewers only; {} question(s) with a disagreement{}",
            a.disagreements.len(),
            if a.disagreements.is_empty() {
                String::new()
            } else {
                format!(": {}", a.disagreements.join(", "))
            }
        )),
    }
}

/// A release's funnel as a table (the site's Data view, beside its chart): each step with what
/// it kept, its share of the threads harvested, and what was dropped there by rule.
pub fn funnel_table(f: &Funnel) -> Table {
    let harvested = f.threads_harvested;
    let dropped_at = |step: &str| -> String {
        let stage = match step {
            "harvested" => Some(Stage::Harvest),
            "kept" => Some(Stage::Review),
            s => f.dropped.keys().copied().find(|k| k.as_str() == s),
        };
        stage
            .and_then(|s| f.dropped.get(&s))
            .map(|rules| {
                rules
                    .iter()
                    .map(|(rule, n)| {
                        let name = serde_json::to_value(rule)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        format!("{n} {name}")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let rows = f
        .steps()
        .into_iter()
        .map(|(step, kept)| {
            let dropped = dropped_at(&step);
            vec![
                Cell::from(step),
                Cell {
                    text: kept.to_string(),
                    mark: Mark::None,
                    value: Some(kept as f64),
                },
                num((harvested > 0).then(|| 100.0 * kept as f64 / harvested as f64)),
                Cell::from(dropped),
            ]
        })
        .collect();
    Table {
        title: "Funnel — what each stage kept".into(),
        headers: ["stage", "kept", "% of harvested", "dropped there"]
            .map(String::from)
            .to_vec(),
        numeric: vec![false, true, true, false],
        rows,
        note: Some(format!(
            "repositories: {} seen, {} kept; counted from the stages' records and excluded journals",
            f.repositories_seen, f.repositories_kept
        )),
    }
}
