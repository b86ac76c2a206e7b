//! The renderers of a [`Table`] (aligned terminal text, Markdown, LaTeX booktabs) and the CSVs of
//! a [`ScoreReport`]; untrusted text in them made inert by [`crate::text`].

use super::tables::{Cell, Mark, Table, plain};
use crate::metrics::{ScoreReport, Stratum};
use crate::text::{is_unsafe_char, terminal_safe};
use std::fmt::Write as _;

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
            '±' => out.push_str("$\\pm$"),
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
        "model,judge,questions,judgments,coverage,overall,knowledge,clarity,perfect,ci95_lo,ci95_hi,\
         se,knowledge_se,clarity_se,perfect_se,clusters,rank_lo,rank_hi\n",
    );
    let whole = |x: Option<usize>| x.map_or(String::new(), |v| v.to_string());
    for m in &r.models {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
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
            num(m.se),
            num(m.knowledge_se),
            num(m.clarity_se),
            num(m.perfect_se),
            m.clusters,
            whole(m.rank.map(|r| r[0])),
            whole(m.rank.map(|r| r[1])),
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

/// CSV of the retrieval rows with unrounded values, one column per field of the JSON report's
/// `retrieval` rows (an empty field where the value is undefined); the header alone when no
/// question has evidence.
pub fn retrieval_csv(r: &ScoreReport) -> String {
    let num = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let count = |x: Option<usize>| x.map_or(String::new(), |v| v.to_string());
    let mut out = String::from(
        "model,judge,runs,evidence_recall,read_precision,items_retrieved,attainment_retrieved,\
         attainment_not_retrieved,failures,failures_not_retrieved,labelled_failures,context_miss,\
         context_miss_not_retrieved\n",
    );
    for x in &r.retrieval {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&x.model),
            csv_field(x.judge.as_deref().unwrap_or_default()),
            x.runs,
            num(x.evidence_recall),
            num(x.read_precision),
            num(x.items_retrieved),
            num(x.attainment_retrieved),
            num(x.attainment_not_retrieved),
            x.failures,
            num(x.failures_not_retrieved),
            count(x.labelled_failures),
            count(x.context_miss),
            count(x.context_miss_not_retrieved),
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
