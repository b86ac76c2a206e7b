//! Text forms of a [`ScoreReport`](crate::ScoreReport): an aligned terminal table like the paper's Table 3, CSV,
//! Markdown and a LaTeX booktabs table. The site's exports call the same functions, so a table
//! copied from either is the same text.

mod judges;
mod render;
mod run_table;
mod tables;

pub use judges::*;
pub use render::*;
pub use run_table::*;
pub use tables::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{is_unsafe_char, terminal_safe, terminal_safe_lines};

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
