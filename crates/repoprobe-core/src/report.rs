//! Text forms of a [`ScoreReport`]: an aligned terminal table like the paper's Table 3, CSV,
//! Markdown and a LaTeX booktabs table. The site's exports call the same functions, so a table
//! copied from either is the same text.

use crate::metrics::{ScoreReport, Stratum};
use crate::model::FailureMode;
use std::fmt::Write as _;

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
            let mut values: Vec<f64> = self
                .rows
                .iter()
                .filter_map(|r| r[c].text.parse::<f64>().ok())
                .collect();
            values.sort_unstable_by(|a, b| b.total_cmp(a));
            values.dedup();
            let (best, second) = (values.first().copied(), values.get(1).copied());
            for r in &mut self.rows {
                let v = r[c].text.parse::<f64>().ok();
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

fn plain(cells: Vec<String>) -> Vec<Cell> {
    cells.into_iter().map(Cell::from).collect()
}

/// Table 3: one row per (model, judge), sorted by Overall, best bold and second underlined.
pub fn models_table(r: &ScoreReport) -> Table {
    let mut models: Vec<_> = r.models.iter().collect();
    models.sort_unstable_by(|a, b| {
        b.overall
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.overall.unwrap_or(f64::NEG_INFINITY))
            .then_with(|| a.model.cmp(&b.model))
            .then_with(|| a.judge.cmp(&b.judge))
    });
    let with_ci = r.models.iter().any(|m| m.ci95.is_some());
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
        headers.push("95% CI".into());
    }
    let rows = models
        .iter()
        .map(|m| {
            let mut row: Vec<Cell> = vec![
                m.model.clone().into(),
                m.judge.clone().into(),
                num(m.overall),
                num(m.knowledge),
                num(m.clarity),
                num(m.perfect),
                num(m.coverage.map(|c| 100.0 * c)),
            ];
            if with_ci {
                row.push(
                    m.ci95
                        .map_or("—".to_string(), |[lo, hi]| format!("{lo:.1}–{hi:.1}"))
                        .into(),
                );
            }
            row
        })
        .collect();
    let mut numeric = vec![false, false, true, true, true, true, true];
    if with_ci {
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
    let ci = if r.policy.bootstrap > 0 {
        format!(
            "; 95% CI: percentile bootstrap over questions, B = {}, seed {}",
            r.policy.bootstrap, r.policy.seed
        )
    } else {
        String::new()
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

/// The paper's Table 3 as reported (SPEC §2.7), marked like the paper (best bold, second
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

/// Table 4 for one axis: mean (std) over models of Overall and Perfect per stratum.
pub fn strata_table(r: &ScoreReport, axis: Stratum) -> Option<Table> {
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

/// Table 5: checklist and scalar Overall across judge runs.
pub fn reliability_table(r: &ScoreReport) -> Option<Table> {
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

/// Table 7: failure-mode shares per model and their average.
pub fn failure_table(r: &ScoreReport) -> Option<Table> {
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

/// Paired comparison, as a one-row table.
pub fn paired_table(r: &ScoreReport) -> Option<Table> {
    let p = r.paired.as_ref()?;
    Some(Table {
        title: format!("Paired comparison — {} vs {} (judge {})", p.a, p.b, p.judge),
        headers: [
            "A",
            "B",
            "Questions",
            "Mean diff (pp)",
            "95% CI",
            "A better in (%)",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, true, true, true, true],
        rows: vec![vec![
            Cell::from(p.a.clone()),
            Cell::from(p.b.clone()),
            Cell::from(p.questions.to_string()),
            num(p.mean_diff),
            Cell::from(
                p.ci95
                    .map_or("—".into(), |[lo, hi]| format!("{lo:.1}–{hi:.1}")),
            ),
            num(p.a_better_pct),
        ]],
        note: Some("per-question difference of mean scores; bootstrap over questions".into()),
    })
}

/// The audit findings of reported tables.
pub fn audit_table(r: &ScoreReport) -> Option<Table> {
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

/// Whether a character may not reach a terminal, a spreadsheet or a TeX file as itself: C0
/// and C1 controls (ESC starts ANSI/OSC sequences that recolour, retitle or rewrite the
/// screen), DEL, Unicode's line and paragraph separators, and the bidirectional overrides
/// and isolates that make text read otherwise than it is stored.
fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Untrusted text (model, judge and stratum names, messages) as one inert terminal line: every
/// control, separator or bidi character is shown escaped (`\u{1b}`, `\n`), everything else as
/// it is. Borrowed when there is nothing to escape, which is nearly always.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_char(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`terminal_safe`] for text of several lines (a progress message, an error): each line is
/// made inert on its own and the line breaks are kept.
pub fn terminal_safe_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| terminal_safe(l.strip_suffix('\r').unwrap_or(l)).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Renders an aligned terminal table; `ansi` turns on bold/underline for the marks. Every
/// text is passed through [`terminal_safe`]: a model name cannot move the cursor or retitle
/// the window.
pub fn render_text(t: &Table, ansi: bool) -> String {
    let width = |s: &str| s.chars().count();
    let safe = |s: &str| terminal_safe(s).into_owned();
    let headers: Vec<String> = t.headers.iter().map(|h| safe(h)).collect();
    let rows: Vec<Vec<Cell>> = t
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| Cell {
                    text: safe(&c.text),
                    ..c.clone()
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for r in &rows {
        for (i, Cell { text: c, .. }) in r.iter().enumerate() {
            widths[i] = widths[i].max(width(c));
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "{}", safe(&t.title));
    let line = |cells: Vec<Cell>, out: &mut String| {
        let mut parts = Vec::new();
        for (i, Cell { text: c, mark, .. }) in cells.into_iter().enumerate() {
            let pad = " ".repeat(widths[i].saturating_sub(width(&c)));
            let shown = match (ansi, mark) {
                (true, Mark::Best) => format!("\x1b[1m{c}\x1b[0m"),
                (true, Mark::Second) => format!("\x1b[4m{c}\x1b[0m"),
                _ => c,
            };
            parts.push(if t.numeric[i] {
                format!("{pad}{shown}")
            } else {
                format!("{shown}{pad}")
            });
        }
        let _ = writeln!(out, "{}", parts.join("  ").trim_end());
    };
    line(plain(headers), &mut out);
    let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    let _ = writeln!(out, "{}", "─".repeat(total));
    for r in rows {
        line(r, &mut out);
    }
    if let Some(n) = &t.note {
        let _ = writeln!(out, "{}", terminal_safe(n));
    }
    out
}

/// GitHub-flavoured Markdown; best in bold, second underlined (`<u>`).
pub fn render_markdown(t: &Table) -> String {
    let esc = |s: &str| {
        s.replace(is_unsafe_char, " ")
            .replace('\\', "\\\\")
            .replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('*', "\\*")
            .replace('_', "\\_")
    };
    let mut out = format!("**{}**\n\n", esc(&t.title));
    let _ = writeln!(
        out,
        "| {} |",
        t.headers
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        out,
        "|{}|",
        t.numeric
            .iter()
            .map(|&n| if n { "---:" } else { ":---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .map(
                |Cell {
                     text: c, mark: m, ..
                 }| match m {
                    Mark::Best => format!("**{}**", esc(c)),
                    Mark::Second => format!("<u>{}</u>", esc(c)),
                    Mark::None => esc(c),
                },
            )
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if let Some(n) = &t.note {
        let _ = write!(out, "\n_{}_\n", esc(n));
    }
    out
}

/// Escapes LaTeX's special characters in untrusted text. Controls and line or paragraph
/// separators become spaces: no line break of any kind reaches the file, so escaped text can
/// stand in a `%` comment too and never ends one.
pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if is_unsafe_char(c) => out.push(' '),
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '−' => out.push_str("$-$"),
            '×' => out.push_str("$\\times$"),
            _ => out.push(c),
        }
    }
    out
}

/// A booktabs table (`\usepackage{booktabs}`), best in bold and second underlined.
pub fn render_latex(t: &Table) -> String {
    let spec: String = t
        .numeric
        .iter()
        .map(|&n| if n { 'r' } else { 'l' })
        .collect();
    let mut out = String::new();
    let _ = writeln!(out, "% {}", latex_escape(&t.title));
    let _ = writeln!(out, "\\begin{{table}}[t]\n\\centering");
    let _ = writeln!(out, "\\caption{{{}}}", latex_escape(&t.title));
    let _ = writeln!(out, "\\begin{{tabular}}{{{spec}}}\n\\toprule");
    let head: Vec<String> = t.headers.iter().map(|h| latex_escape(h)).collect();
    let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .map(
                |Cell {
                     text: c, mark: m, ..
                 }| match m {
                    Mark::Best => format!("\\textbf{{{}}}", latex_escape(c)),
                    Mark::Second => format!("\\underline{{{}}}", latex_escape(c)),
                    Mark::None => latex_escape(c),
                },
            )
            .collect();
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
    }
    let _ = writeln!(out, "\\bottomrule\n\\end{{tabular}}");
    if let Some(n) = &t.note {
        let _ = writeln!(
            out,
            "\\par\\smallskip{{\\footnotesize {}}}",
            latex_escape(n)
        );
    }
    let _ = writeln!(out, "\\end{{table}}");
    out
}

/// CSV (RFC 4180) of the models table with unrounded values, for spreadsheets and scripts.
pub fn models_csv(r: &ScoreReport) -> String {
    let num = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let mut out = String::from(
        "model,judge,questions,judgments,coverage,overall,knowledge,clarity,perfect,ci95_lo,ci95_hi\n",
    );
    for m in &r.models {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&m.model),
            csv_field(&m.judge),
            m.questions,
            m.judgments,
            num(m.coverage),
            num(m.overall),
            num(m.knowledge),
            num(m.clarity),
            num(m.perfect),
            num(m.ci95.map(|c| c[0])),
            num(m.ci95.map(|c| c[1])),
        );
    }
    out
}

/// CSV of one strata axis with unrounded values.
pub fn strata_csv(r: &ScoreReport, axis: Stratum) -> String {
    let num = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let mut out = String::from("axis,stratum,questions,mean,std,perfect_mean,perfect_std\n");
    for s in r.strata.get(axis.as_str()).into_iter().flatten() {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{}",
            axis.as_str(),
            csv_field(&s.stratum),
            s.questions,
            num(s.mean),
            num(s.std),
            num(s.perfect_mean),
            num(s.perfect_std)
        );
    }
    out
}

/// Quotes a CSV field when needed; a leading `=`, `+`, `-`, `@`, tab or carriage return is
/// prefixed with `'` (OWASP's advice) so that a model name cannot become a spreadsheet formula.
pub fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pct_rounds_to_one_decimal_and_marks_undefined() {
        assert_eq!(pct(Some(62.74)), "62.7");
        assert_eq!(pct(Some(26.0)), "26.0");
        assert_eq!(pct(None), "—");
    }

    /// A name with every kind of character that can act on a reader's tools.
    const HOSTILE: &str =
        "=HYPERLINK(\"x\")\u{1b}]0;pwned\u{7}\u{1b}[2J\r\n\u{2028}\u{202E}evil\u{85}%\\end{table}";

    fn hostile_table() -> Table {
        Table {
            title: format!("Title {HOSTILE}"),
            headers: vec!["Model".into(), "Overall".into()],
            numeric: vec![false, true],
            rows: vec![vec![Cell::from(HOSTILE), Cell::from("1.0")]],
            note: Some(format!("note {HOSTILE}")),
        }
    }

    #[test]
    fn terminal_text_carries_no_control_or_bidi_character() {
        let out = render_text(&hostile_table(), false);
        let bad: Vec<char> = out
            .chars()
            .filter(|&c| c != '\n' && is_unsafe_char(c))
            .collect();
        assert!(bad.is_empty(), "{bad:?} in {out}");
        assert!(out.contains("\\u{1b}]0;pwned\\u{7}"), "{out}");
        assert!(out.contains("\\r\\n\\u{2028}\\u{202e}evil"), "{out}");
        // Title, header rule, header, one row, note: no line added by the name.
        assert_eq!(out.lines().count(), 5, "{out}");
        assert_eq!(terminal_safe("plain name"), "plain name");
        assert_eq!(terminal_safe_lines("a\u{1b}\nb"), "a\\u{1b}\nb");
    }

    #[test]
    fn latex_has_no_line_break_inside_any_text() {
        let out = render_latex(&hostile_table());
        // The comment line is one line: everything after `% ` is the escaped title.
        let first = out.lines().next().unwrap();
        assert!(first.starts_with("% Title =HYPERLINK"), "{first}");
        assert!(
            first.ends_with("\\%\\textbackslash{}end\\{table\\}"),
            "{first}"
        );
        assert!(
            !out.chars().any(|c| c != '\n' && is_unsafe_char(c)),
            "{out}"
        );
        // Only the renderer's own lines: comment, begin, centering, caption, tabular, toprule,
        // header, midrule, one row, bottomrule, end tabular, note, end table.
        assert_eq!(out.lines().count(), 13, "{out}");
        assert!(!out.contains("\\end{table}\n\\begin"), "{out}");
    }

    #[test]
    fn markdown_rows_stay_one_line() {
        let out = render_markdown(&hostile_table());
        assert!(
            !out.chars().any(|c| c != '\n' && is_unsafe_char(c)),
            "{out}"
        );
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 3, "{out}");
    }

    #[test]
    fn csv_neutralises_every_formula_start() {
        for lead in ['=', '+', '-', '@', '\t', '\r'] {
            let f = csv_field(&format!("{lead}1+1"));
            assert!(
                f.starts_with('\'') || f.starts_with("\"'"),
                "{lead:?}: {f:?}"
            );
        }
        assert_eq!(csv_field("\tx"), "'\tx");
        assert_eq!(csv_field("\rx"), "\"'\rx\"");
        assert_eq!(csv_field("gpt-5"), "gpt-5");
    }

    #[test]
    fn latex_and_csv_escape_untrusted_names() {
        assert_eq!(latex_escape("a_b&c%"), "a\\_b\\&c\\%");
        assert_eq!(csv_field("x,\"y\""), "\"x,\"\"y\"\"\"");
        assert_eq!(csv_field("=cmd()"), "'=cmd()");
    }

    #[test]
    fn best_is_bold_and_second_underlined_with_ties_sharing() {
        let mut t = Table {
            title: "t".into(),
            headers: vec!["m".into(), "v".into()],
            numeric: vec![false, true],
            rows: vec![
                plain(vec!["a".into(), "50.0".into()]),
                plain(vec!["b".into(), "60.0".into()]),
                plain(vec!["c".into(), "60.0".into()]),
                plain(vec!["d".into(), "40.0".into()]),
            ],
            note: None,
        };
        t.mark_best(&[1]);
        let marks: Vec<Mark> = t.rows.iter().map(|r| r[1].mark).collect();
        assert_eq!(
            marks,
            vec![Mark::Second, Mark::Best, Mark::Best, Mark::None]
        );
        let text = render_text(&t, true);
        assert!(text.contains("\x1b[1m60.0\x1b[0m"));
        assert!(text.contains("\x1b[4m50.0\x1b[0m"));
        assert!(!render_text(&t, false).contains('\x1b'));
    }
}
