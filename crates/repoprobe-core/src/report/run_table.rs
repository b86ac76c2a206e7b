//! The runs (docs/metrics.md#runs) as a [`Table`] and as CSV: the CLI's `repoprobe list-runs` and
//! the site's Runs view show each run's cells as [`run_cells`] writes them.

use super::render::csv_field;
use super::tables::{Cell, Mark, Table, num};
use crate::metrics::runs::{RunRow, Runs};
use std::fmt::Write as _;

/// The columns of [`run_cells`], in order.
pub const RUN_HEADERS: [&str; 17] = [
    "Question",
    "Model",
    "Attempt",
    "Category",
    "Verdict",
    "Score (%)",
    "Evidence recall (%)",
    "Evidence read",
    "Evidence missed",
    "Files read",
    "Turns",
    "Tool calls",
    "Edit attempts",
    "Worktree changed",
    "Tokens",
    "Cost (USD)",
    "Duration (s)",
];

const NUMERIC: [bool; 17] = [
    false, false, true, false, false, true, true, false, false, true, true, false, true, false,
    true, true, true,
];

fn count(x: Option<u64>) -> Cell {
    Cell {
        text: x.map_or("—".to_string(), |v| v.to_string()),
        mark: Mark::None,
        value: x.map(|v| v as f64),
    }
}

fn fixed(x: Option<f64>, digits: usize) -> Cell {
    let x = x.filter(|v| v.is_finite());
    Cell {
        text: x.map_or("—".to_string(), |v| format!("{v:.digits$}")),
        mark: Mark::None,
        value: x,
    }
}

fn paths(p: &Option<Vec<String>>) -> Cell {
    Cell::from(match p {
        None => "—".to_string(),
        Some(p) if p.is_empty() => "none".to_string(),
        Some(p) => p.join(" "),
    })
}

/// One run's cells, under [`RUN_HEADERS`]; a fact not recorded is `—`.
pub fn run_cells(r: &RunRow) -> Vec<Cell> {
    let calls = r.tool_calls.as_ref().map_or("—".to_string(), |c| {
        c.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    vec![
        Cell::from(r.question_id.as_str()),
        Cell::from(r.model.as_str()),
        count(Some(u64::from(r.attempt))),
        Cell::from(r.category.as_str()),
        Cell::from(r.verdict.label()),
        num(r.score),
        num(r.evidence_recall),
        paths(&r.evidence_read),
        paths(&r.evidence_missed),
        count(r.files_read.map(|n| n as u64)),
        count(r.turns),
        Cell::from(calls),
        count(r.edit_attempts),
        Cell::from(match r.worktree_changed {
            Some(true) => "yes",
            Some(false) => "no",
            None => "—",
        }),
        count(r.tokens()),
        fixed(r.cost_usd, 4),
        fixed(r.duration_s, 1),
    ]
}

/// The runs at `picked` (positions into `runs.rows`) as a table; `kept`: how many the filter
/// kept (more than `picked` when the list was cut short).
pub fn runs_table(runs: &Runs, picked: &[usize], kept: usize) -> Table {
    let shown = if picked.len() < kept {
        format!(", the first {} shown", picked.len())
    } else {
        String::new()
    };
    Table {
        title: format!(
            "Runs — {kept} of {}{shown}{}",
            runs.rows.len(),
            runs.judge
                .as_deref()
                .map_or(String::new(), |j| format!(", judge {j}"))
        ),
        headers: RUN_HEADERS.map(String::from).to_vec(),
        numeric: NUMERIC.to_vec(),
        rows: picked
            .iter()
            .filter_map(|&i| runs.rows.get(i))
            .map(run_cells)
            .collect(),
        note: Some(
            "score = mean Overall over the judge's runs on the answer; evidence = the question's \
             knowledge items' evidence paths; edit attempts = edit tool calls, refused or not \
             (docs/metrics.md#runs)"
                .into(),
        ),
    }
}

/// CSV of the runs at `picked`, unrounded, one column per field of `repoprobe list-runs --format
/// json`'s rows (paths joined by spaces, tool calls as `kind:n` joined by spaces; an empty field
/// where a fact is not recorded).
pub fn runs_csv(runs: &Runs, picked: &[usize]) -> String {
    let f = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let n = |x: Option<u64>| x.map_or(String::new(), |v| v.to_string());
    let p = |x: &Option<Vec<String>>| x.as_ref().map_or(String::new(), |v| v.join(" "));
    let mut out = String::from(
        "question_id,model,attempt,category,verdict,score,judge_runs,failure_mode,evidence_recall,\
         evidence_read,evidence_missed,files_read,turns,tool_calls,edit_attempts,worktree_changed,\
         input_tokens,output_tokens,cost_usd,duration_s\n",
    );
    for r in picked.iter().filter_map(|&i| runs.rows.get(i)) {
        let calls = r.tool_calls.as_ref().map_or(String::new(), |c| {
            c.iter()
                .map(|(k, n)| format!("{k}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        });
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.question_id),
            csv_field(&r.model),
            r.attempt,
            csv_field(&r.category),
            r.verdict.as_str(),
            f(r.score),
            r.judge_runs,
            r.failure_mode.map_or("", |m| m.as_str()),
            f(r.evidence_recall),
            csv_field(&p(&r.evidence_read)),
            csv_field(&p(&r.evidence_missed)),
            n(r.files_read.map(|v| v as u64)),
            n(r.turns),
            csv_field(&calls),
            n(r.edit_attempts),
            r.worktree_changed.map_or(String::new(), |b| b.to_string()),
            n(r.input_tokens),
            n(r.output_tokens),
            f(r.cost_usd),
            f(r.duration_s),
        );
    }
    out
}
