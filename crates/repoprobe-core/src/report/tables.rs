//! The report's tables: each table of the paper (and the additions) built from a
//! [`ScoreReport`] as a [`Table`] of cells, whatever it is rendered as.

use crate::metrics::{ScoreReport, Stratum};
use crate::model::FailureMode;
use crate::sort::SharedSort;

/// Displays a percentage as the paper does: one decimal; `—` where undefined.
pub fn pct(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.1}"),
        _ => "—".to_string(),
    }
}

/// Best and second-best marks of a table column (§5.2, Table 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    None,
    Best,
    Second,
}

/// One cell: the text shown, its mark, and for numbers the unrounded value behind the text (the
/// site puts it in a `data-value` attribute, so tests can compare it with the CLI's JSON to the
/// last digit).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub mark: Mark,
    pub value: Option<f64>,
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell {
            text,
            mark: Mark::None,
            value: None,
        }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::from(text.to_string())
    }
}

/// A percentage cell: one decimal shown, the unrounded value kept.
pub fn num(x: Option<f64>) -> Cell {
    Cell {
        text: pct(x),
        mark: Mark::None,
        value: x.filter(|v| v.is_finite()),
    }
}

/// An agreement figure (κ, α, F1: at most 1) with three decimals, the unrounded value kept;
/// `—` where undefined.
pub fn three(x: Option<f64>) -> Cell {
    Cell {
        text: match x {
            Some(v) if v.is_finite() => format!("{v:.3}"),
            _ => "—".to_string(),
        },
        mark: Mark::None,
        value: x.filter(|v| v.is_finite()),
    }
}

/// A table in a form every renderer takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    /// Per column: right-align (numbers) or not.
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<Cell>>,
    pub note: Option<String>,
}

impl Table {
    /// Marks the highest displayed value of each listed column bold and the second underlined
    /// (ties share a mark, since they print the same).
    pub fn mark_best(&mut self, columns: &[usize]) {
        for &c in columns {
            let mut values: Vec<f64> = self.rows.iter().filter_map(|r| shown(&r[c])).collect();
            values.shared_sort_by(|a, b| b.total_cmp(a));
            values.dedup();
            let (best, second) = (values.first().copied(), values.get(1).copied());
            for r in &mut self.rows {
                let v = shown(&r[c]);
                r[c].mark = if v.is_some() && v == best {
                    Mark::Best
                } else if v.is_some() && v == second {
                    Mark::Second
                } else {
                    Mark::None
                };
            }
        }
    }
}

/// The number a cell shows, its interval's half-width left aside ("62.3 ± 1.8" shows 62.3).
fn shown(c: &Cell) -> Option<f64> {
    c.text.split(" ± ").next()?.parse::<f64>().ok()
}

pub(super) fn plain(cells: Vec<String>) -> Vec<Cell> {
    cells.into_iter().map(Cell::from).collect()
}

/// Table 3: one row per (model, judge), sorted by Overall, best bold and second underlined.
pub fn models_table(r: &ScoreReport) -> Table {
    let mut models: Vec<_> = r.models.iter().collect();
    models.shared_sort_by(|a, b| {
        b.overall
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.overall.unwrap_or(f64::NEG_INFINITY))
            .then_with(|| a.model.cmp(&b.model))
            .then_with(|| a.judge.cmp(&b.judge))
    });
    let with_ci = r.models.iter().any(|m| m.ci95.is_some() || m.se.is_some());
    let with_rank = r.models.iter().any(|m| m.rank.is_some());
    let mut headers: Vec<String> = [
        "Model",
        "Judge",
        "Overall",
        "Knowledge",
        "Clarity",
        "Perfect",
        "Coverage",
    ]
    .map(String::from)
    .to_vec();
    if with_ci {
        headers.extend(["SE".into(), "95% CI".into()]);
    }
    if with_rank {
        headers.push("Rank".into());
    }
    let rows = models
        .iter()
        .map(|m| {
            let mut row: Vec<Cell> = vec![
                m.model.clone().into(),
                m.judge.clone().into(),
                plus_minus(m.overall, m.ci95),
                num(m.knowledge),
                num(m.clarity),
                num(m.perfect),
                num(m.coverage.map(|c| 100.0 * c)),
            ];
            if with_ci {
                row.push(num(m.se));
                row.push(interval(m.ci95));
            }
            if with_rank {
                row.push(rank(m.rank));
            }
            row
        })
        .collect();
    let mut numeric = vec![false, false, true, true, true, true, true];
    numeric.extend(std::iter::repeat_n(true, 2 * usize::from(with_ci)));
    if with_rank {
        numeric.push(true);
    }
    let mut t = Table {
        title: "Table 3 — overall performance (%)".into(),
        headers,
        numeric,
        rows,
        note: Some(policy_note(r)),
    };
    t.mark_best(&[2, 3, 4, 5]);
    in_window(r, t)
}

/// `t` with the contamination window in force said at the end of its note (one line: a note
/// prints as text): every table of a report windowed by `created_after` says how many
/// questions its numbers are over.
pub fn in_window(r: &ScoreReport, mut t: Table) -> Table {
    if let Some(w) = &r.created_after {
        t.note = Some(match t.note.take() {
            Some(n) => format!("{n}; {}", w.sentence()),
            None => w.sentence(),
        });
    }
    t
}

fn policy_note(r: &ScoreReport) -> String {
    let missing = match r.policy.missing {
        crate::MissingPolicy::Zero => {
            "a question without a valid judgment counts as 0 (missing = zero)"
        }
        crate::MissingPolicy::Exclude => {
            "questions without a valid judgment are left out (missing = exclude)"
        }
    };
    let ci = if r.models.iter().any(|m| m.se.is_some()) {
        let c = r.models.iter().map(|m| m.clusters).max().unwrap_or(0);
        format!(
            "; ± and 95% CI: {} ({c} clusters); rank: range among the models of one judge, \
             from clustered paired 95% CIs, no multiple-comparison correction",
            interval_method(r)
        )
    } else {
        "; no interval: fewer than two clusters".to_string()
    };
    let dropped = match r.policy.dropped_questions.as_slice() {
        [] => String::new(),
        ids => format!(
            "; WITHOUT {} question(s) dropped by the reader: {}",
            ids.len(),
            ids.join(", ")
        ),
    };
    let weights = match r.policy.weights.as_slice() {
        [] => String::new(),
        rules => format!(
            "; RE-WEIGHTED by the reader (not the checklists' own weights): {}",
            rules.join(", ")
        ),
    };
    format!(
        "{missing}; coverage = judged cells / (questions × attempts × judge runs){ci}{dropped}{weights}"
    )
}

/// A mean with the half-width of its interval, "62.3 ± 1.8" (the value kept is the mean's);
/// the mean alone where there is no interval.
pub fn plus_minus(x: Option<f64>, ci95: Option<[f64; 2]>) -> Cell {
    let mut c = num(x);
    if let (Some(_), Some([lo, hi])) = (c.value, ci95) {
        c.text = format!("{} ± {:.1}", c.text, (hi - lo) / 2.0);
    }
    c
}

/// An interval "lo–hi" with one decimal, "—" where there is none.
pub fn interval(ci95: Option<[f64; 2]>) -> Cell {
    Cell::from(ci95.map_or("—".into(), |[lo, hi]| format!("{lo:.1}–{hi:.1}")))
}

/// A rank range: "3" when sure, "1–2" when not, "—" where there is none.
pub fn rank(r: Option<[usize; 2]>) -> Cell {
    Cell::from(match r {
        Some([a, b]) if a == b => a.to_string(),
        Some([a, b]) => format!("{a}–{b}"),
        None => "—".into(),
    })
}

/// How the intervals were made, as a note says it: "mean ± 1.96 × SE clustered by repository".
pub fn interval_method(r: &ScoreReport) -> String {
    use crate::metrics::cluster::{CiMethod, Cluster};
    let by = match r.policy.cluster {
        Cluster::Repo => "clustered by repository",
        Cluster::Question => "clustered by question",
        Cluster::None => "every cell independent (no clustering)",
    };
    match r.policy.ci {
        CiMethod::Clt => format!("mean ± 1.96 × SE, {by}"),
        CiMethod::Bootstrap => format!(
            "percentile bootstrap of whole clusters ({by}), B = {}, seed {}",
            r.policy.bootstrap, r.policy.seed
        ),
    }
}

/// The paper's Table 3 as reported (docs/format.md#reported-values), marked like the paper (best bold, second
/// underlined), with the audit's finding beside each row it flags.
pub fn reported_table3(r: &ScoreReport, values: &[crate::model::ReportedValue]) -> Option<Table> {
    let mut rows: Vec<(&str, [Option<f64>; 4])> = Vec::new();
    const COLS: [&str; 4] = ["overall", "knowledge", "clarity", "perfect"];
    for v in values.iter().filter(|v| v.table == "3") {
        let Some(c) = COLS.iter().position(|c| *c == v.column) else {
            continue;
        };
        match rows.iter_mut().find(|(m, _)| *m == v.row) {
            Some((_, cells)) => cells[c] = Some(v.value),
            None => {
                let mut cells = [None; 4];
                cells[c] = Some(v.value);
                rows.push((&v.row, cells));
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut t = Table {
        title: "Table 3 as reported in the paper (%)".into(),
        headers: [
            "Model",
            "Overall",
            "Knowledge",
            "Clarity",
            "Perfect",
            "Audit",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, false],
        rows: rows
            .iter()
            .map(|(m, cells)| {
                let audit: Vec<&str> = r
                    .audit
                    .iter()
                    .filter(|f| f.table == "3" && f.row == *m)
                    .map(|f| f.message.as_str())
                    .collect();
                let mut row: Vec<Cell> = vec![m.to_string().into()];
                row.extend(cells.iter().map(|c| num(*c)));
                row.push(audit.join("; ").into());
                row
            })
            .collect(),
        note: Some("as printed; never mixed with recomputed numbers".into()),
    };
    t.mark_best(&[1, 2, 3, 4]);
    Some(t)
}

fn strata_table_of(r: &ScoreReport, axis: Stratum) -> Option<Table> {
    let rows = r.strata.get(axis.as_str())?;
    let judge = r.judge.clone().unwrap_or_default();
    Some(Table {
        title: format!(
            "Table 4 — by {} (mean and sample std over models, judge {judge})",
            axis.as_str()
        ),
        headers: ["Stratum", "Questions", "Overall", "Std", "Perfect", "Std"]
            .map(String::from)
            .to_vec(),
        numeric: vec![false, true, true, true, true, true],
        rows: rows
            .iter()
            .map(|s| {
                vec![
                    Cell::from(s.stratum.clone()),
                    Cell::from(s.questions.to_string()),
                    num(s.mean),
                    num(s.std),
                    num(s.perfect_mean),
                    num(s.perfect_std),
                ]
            })
            .collect(),
        note: Some("std is the sample standard deviation (n − 1) of the per-model values".into()),
    })
}

fn reliability_table_of(r: &ScoreReport) -> Option<Table> {
    if r.reliability
        .iter()
        .all(|x| x.runs < 2 && x.scalar.is_none())
    {
        return None;
    }
    Some(Table {
        title: format!(
            "Table 5 — reliability across judge runs (judge {})",
            r.judge.clone().unwrap_or_default()
        ),
        headers: [
            "Model",
            "Runs",
            "Scalar",
            "Std",
            "Range",
            "Checklist",
            "Std",
            "Range",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, true, true],
        rows: r
            .reliability
            .iter()
            .map(|x| {
                let s = x.scalar.as_ref();
                vec![
                    Cell::from(x.model.clone()),
                    Cell::from(x.runs.to_string()),
                    num(s.and_then(|s| s.mean)),
                    num(s.and_then(|s| s.std)),
                    num(s.and_then(|s| s.range)),
                    num(x.checklist.mean),
                    num(x.checklist.std),
                    num(x.checklist.range),
                ]
            })
            .collect(),
        note: Some("mean, sample std and range (max − min) of Overall over judge runs".into()),
    })
}

fn failure_table_of(r: &ScoreReport) -> Option<Table> {
    if r.failure_modes.is_empty() {
        return None;
    }
    let mut headers = vec!["Failure mode".to_string()];
    headers.extend(r.failure_modes.iter().map(|f| f.model.clone()));
    headers.push("Average".into());
    let mut rows: Vec<Vec<Cell>> = FailureMode::ALL
        .iter()
        .map(|m| {
            let mut row: Vec<Cell> = vec![m.label().into()];
            row.extend(
                r.failure_modes
                    .iter()
                    .map(|f| num(f.shares.get(m.as_str()).copied())),
            );
            row.push(num(r.failure_mode_average.get(m.as_str()).copied()));
            row
        })
        .collect();
    let mut count = vec!["Failures (labels)".to_string()];
    count.extend(r.failure_modes.iter().map(|f| f.failures.to_string()));
    count.push(String::new());
    rows.push(plain(count));
    let n = headers.len();
    Some(Table {
        title: format!(
            "Table 7 — failure modes (%), classifier {}",
            r.classifier.clone().unwrap_or_default()
        ),
        headers,
        numeric: std::iter::once(false)
            .chain(std::iter::repeat_n(true, n - 1))
            .collect(),
        rows,
        note: Some("shares over the labels given to answers scoring below 60%".into()),
    })
}

fn paired_table_of(r: &ScoreReport) -> Option<Table> {
    let p = r.paired.as_ref()?;
    Some(Table {
        title: format!("Paired comparison — {} vs {} (judge {})", p.a, p.b, p.judge),
        headers: [
            "A",
            "B",
            "Questions",
            "Mean diff (pp)",
            "SE",
            "95% CI",
            "p",
            "Correlation",
            "MDE80 (pp)",
            "A better in (%)",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, true, true, true, true, true, true, true, true],
        rows: vec![vec![
            Cell::from(p.a.clone()),
            Cell::from(p.b.clone()),
            Cell::from(p.questions.to_string()),
            num(p.mean_diff),
            num(p.se),
            interval(p.ci95),
            three(p.p_value),
            three(p.correlation),
            num(p.mde80),
            num(p.a_better_pct),
        ]],
        note: Some(format!(
            "per-question difference of mean scores over {} cluster(s); 95% CI: {}; p: two-sided, \
             normal approximation; MDE80: the smallest true difference detected 4 times in 5",
            p.clusters,
            interval_method(r)
        )),
    })
}

fn audit_table_of(r: &ScoreReport) -> Option<Table> {
    if r.audit.is_empty() {
        return None;
    }
    Some(Table {
        title: "Audit of reported tables".into(),
        headers: ["Table", "Row", "Column", "Printed", "Implied", "Finding"]
            .map(String::from)
            .to_vec(),
        numeric: vec![false, false, false, true, true, false],
        rows: r
            .audit
            .iter()
            .map(|f| {
                let row = if f.group.is_empty() {
                    f.row.clone()
                } else {
                    format!("{} / {}", f.group, f.row)
                };
                plain(vec![
                    f.table.clone(),
                    row,
                    f.column.clone(),
                    format!("{:.1}", f.reported),
                    format!("{:.2}", f.expected),
                    f.message.clone(),
                ])
            })
            .collect(),
        note: None,
    })
}

/// Table 4 for one axis: mean (std) over models of Overall and Perfect per stratum.
pub fn strata_table(r: &ScoreReport, axis: Stratum) -> Option<Table> {
    strata_table_of(r, axis).map(|t| in_window(r, t))
}

/// Table 5: checklist and scalar Overall across judge runs.
pub fn reliability_table(r: &ScoreReport) -> Option<Table> {
    reliability_table_of(r).map(|t| in_window(r, t))
}

/// Table 7: failure-mode shares per model and their average.
pub fn failure_table(r: &ScoreReport) -> Option<Table> {
    failure_table_of(r).map(|t| in_window(r, t))
}

/// Paired comparison, as a one-row table.
pub fn paired_table(r: &ScoreReport) -> Option<Table> {
    paired_table_of(r).map(|t| in_window(r, t))
}

/// The audit findings of reported tables.
pub fn audit_table(r: &ScoreReport) -> Option<Table> {
    audit_table_of(r).map(|t| in_window(r, t))
}

/// The tables a full report shows, in order: Table 3, then Table 4 for `by`, 5, 7, paired, audit.
pub fn tables(r: &ScoreReport, by: Option<Stratum>) -> Vec<Table> {
    let mut out = Vec::new();
    // Reported tables alone (no benchmark) have nothing to rank: only the audit is shown.
    if !r.models.is_empty() {
        out.push(models_table(r));
    }
    out.extend(by.and_then(|b| strata_table(r, b)));
    out.extend(reliability_table(r));
    out.extend(failure_table(r));
    out.extend(paired_table(r));
    out.extend(audit_table(r));
    out
}

/// The evidence of the runs per model (mean cost, tokens, turns and seconds per answer, share of
/// runs that edited the repository and of those that attempted an edit), or `None` when no answer carries any.
pub fn evidence_table(e: &[crate::metrics::evidence::ModelEvidence]) -> Option<Table> {
    if !e.iter().any(|m| m.any()) {
        return None;
    }
    let fixed = |x: Option<f64>, digits: usize| Cell {
        text: x
            .filter(|v| v.is_finite())
            .map_or("—".to_string(), |v| format!("{v:.digits$}")),
        mark: Mark::None,
        value: x.filter(|v| v.is_finite()),
    };
    let rows = e
        .iter()
        .map(|m| {
            vec![
                m.model.clone().into(),
                Cell {
                    text: m.answers.to_string(),
                    mark: Mark::None,
                    value: Some(m.answers as f64),
                },
                fixed(m.mean_cost_usd, 4),
                fixed(m.mean_input_tokens, 0),
                fixed(m.mean_output_tokens, 0),
                fixed(m.mean_turns, 1),
                fixed(m.mean_duration_s, 1),
                num(m.edited_pct),
                num(m.attempted_edit_pct),
            ]
        })
        .collect();
    Some(Table {
        title: "Evidence of the runs — means per answer".into(),
        headers: [
            "Model",
            "Answers",
            "Cost (USD)",
            "Input tokens",
            "Output tokens",
            "Turns",
            "Duration (s)",
            "Edited repo (%)",
            "Attempted an edit (%)",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, true, true, true],
        rows,
        note: Some(
            "each mean is over the answers that carry the field (failed runs included); edited repo = share of runs whose agent left the worktree changed (edit bias); attempted an edit = share of runs recording their tool calls with at least one edit call, refused or not".into(),
        ),
    })
}

/// The retrieval table (docs/metrics.md#retrieval): per model, how much of the questions'
/// evidence its runs read and how the verdicts went with it; `None` when no question has
/// evidence (the report then has no retrieval rows).
pub fn retrieval_table(r: &ScoreReport) -> Option<Table> {
    retrieval_rows_table(&r.retrieval, r.judge.as_deref()).map(|t| in_window(r, t))
}

/// The evidence table of a report scored with `ScoreOptions::evidence`: over the questions in
/// force, saying so; `None` when the report has none or no answer carries any.
pub fn report_evidence_table(r: &ScoreReport) -> Option<Table> {
    evidence_table(r.evidence.as_deref()?).map(|t| in_window(r, t))
}

/// The retrieval table of some rows (one model's, on its page) under `judge`; `None` for none.
pub fn retrieval_rows_table(
    rows: &[crate::metrics::RetrievalRow],
    judge: Option<&str>,
) -> Option<Table> {
    if rows.is_empty() {
        return None;
    }
    let count = |n: Option<usize>| Cell {
        text: n.map_or("—".to_string(), |n| n.to_string()),
        mark: Mark::None,
        value: n.map(|n| n as f64),
    };
    let rows = rows
        .iter()
        .map(|x| {
            vec![
                x.model.clone().into(),
                count(Some(x.runs)),
                num(x.evidence_recall),
                num(x.read_precision),
                num(x.items_retrieved),
                num(x.attainment_retrieved),
                num(x.attainment_not_retrieved),
                count(Some(x.failures)),
                num(x.failures_not_retrieved),
                count(x.labelled_failures),
                count(x.context_miss),
                count(x.context_miss_not_retrieved),
            ]
        })
        .collect();
    Some(Table {
        title: format!(
            "Retrieval — the questions' evidence read per model (judge {})",
            judge.unwrap_or_default()
        ),
        headers: [
            "Model",
            "Runs",
            "Evidence recall",
            "Read precision",
            "Items retrieved",
            "Attainment, read",
            "Attainment, not read",
            "Failures",
            "Failures, none read",
            "Labelled",
            "Context miss",
            "Context miss, none read",
        ]
        .map(String::from)
        .to_vec(),
        numeric: std::iter::once(false)
            .chain(std::iter::repeat_n(true, 11))
            .collect(),
        rows,
        note: Some(
            "Runs, Failures, Labelled and Context miss are counts, the rest percentages; runs = \
             answers without error that say what they read (agent.files_read), of questions with \
             evidence; failures = judgments below 60%; labelled = failure-mode labels of the \
             classifier in force; — = nothing to average"
                .into(),
        ),
    })
}
