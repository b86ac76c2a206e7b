//! Untrusted input: hostile names and huge records stay inert and load.

use super::*;

#[test]
fn a_model_named_like_a_script_tag_loads_scores_and_is_printed_verbatim() {
    let name = "<script>alert(1)</script>";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judgments.jsonl");
    std::fs::write(&path, format!("{}\n", full_marks_on_q1(name, "r"))).unwrap();
    let bench = golden_file("benchmark.jsonl");

    run(&["validate", &bench, path_str(&path)]).expect_code(0);
    let r = run(&[
        "score",
        &bench,
        path_str(&path),
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    r.expect_code(0);
    assert!(r.stdout.contains(name), "{}", r.stdout);
    let v = r.json();
    let row = model_row(&v, name, "J");
    close(&row["overall"], 100.0 / 3.0);
}

#[test]
fn a_jsonl_record_with_a_two_megabyte_rationale_loads_and_scores() {
    let rationale = "why ".repeat(512 * 1024);
    assert_eq!(rationale.len(), 2 * 1024 * 1024);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("judgments.jsonl");
    std::fs::write(&path, format!("{}\n", full_marks_on_q1("M", &rationale))).unwrap();
    let bench = golden_file("benchmark.jsonl");

    let v = run(&["validate", &bench, path_str(&path), "--format", "json"]);
    v.expect_code(0);
    assert_eq!(v.json()["counts"]["judgments"], 1);
    let r = run(&[
        "score",
        &bench,
        path_str(&path),
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]);
    r.expect_code(0);
    let v = r.json();
    // q1 scores 10 of 10; q2 and q3 are missing and count 0.
    close(&model_row(&v, "M", "J")["overall"], 100.0 / 3.0);
}

/// Characters that act on a terminal (OSC retitle, clear screen, bell), a spreadsheet
/// (formula), TeX (a line break ending a `%` comment, `\end`) or a reader (bidi override).
const HOSTILE_NAME: &str =
    "=HYPERLINK(\"http://x\")\u{1b}]0;pwned\u{7}\u{1b}[2J\r\n\u{2028}\u{202E}%\n\\end{table}";

#[test]
fn hostile_model_names_stay_inert_in_every_export_format() {
    let hostile = golden_with_extra_model(HOSTILE_NAME);
    let plain = golden_with_extra_model("C");
    for format in ["table", "markdown", "latex"] {
        let h = run(&["score", path_str(hostile.path()), "--format", format]);
        let p = run(&["score", path_str(plain.path()), "--format", format]);
        h.expect_code(0);
        for (what, text) in [("stdout", &h.stdout), ("stderr", &h.stderr)] {
            let bad: Vec<char> = text
                .chars()
                .filter(|&c| {
                    (c.is_control() && c != '\n')
                        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}')
                })
                .collect();
            assert!(bad.is_empty(), "{format} {what}: {bad:?}\n{text}");
        }
        // The name adds no line anywhere: the same layout as with a plain name.
        assert_eq!(
            h.stdout.lines().count(),
            p.stdout.lines().count(),
            "{format}:\n{}",
            h.stdout
        );
        assert_eq!(
            h.stderr.lines().count(),
            p.stderr.lines().count(),
            "{}",
            h.stderr
        );
    }
    // The terminal shows the escapes themselves.
    let t = run(&["score", path_str(hostile.path())]);
    assert!(t.stdout.contains("\\u{1b}]0;pwned\\u{7}"), "{}", t.stdout);
    assert!(t.stderr.contains("\\u{1b}]0;pwned"), "{}", t.stderr);
    // LaTeX: the name's `\end{table}` is text, not a command.
    let l = run(&["score", path_str(hostile.path()), "--format", "latex"]);
    assert!(
        l.stdout.contains("\\textbackslash{}end\\{table\\}"),
        "{}",
        l.stdout
    );

    // CSV: the formula is neutralised, the field is quoted as RFC 4180 wants.
    let c = run(&["score", path_str(hostile.path()), "--format", "csv"]);
    assert!(
        c.stdout.contains("\"'=HYPERLINK(\"\"http://x\"\")"),
        "{}",
        c.stdout
    );
    for lead in ["+1", "-1", "@SUM(A1)", "\tx", "\rx"] {
        let d = golden_with_extra_model(lead);
        let c = run(&["score", path_str(d.path()), "--format", "csv"]);
        let rows: Vec<&str> = c
            .stdout
            .split('\n')
            .skip(1)
            .filter(|l| !l.is_empty() && !l.starts_with("A,") && !l.starts_with("B,"))
            .collect();
        assert_eq!(rows.len(), 1, "{lead:?}:\n{}", c.stdout);
        let row = rows[0];
        assert!(
            row.starts_with('\'') || row.starts_with("\"'"),
            "{lead:?}: {row:?}"
        );
    }
    // JSON keeps the name exactly (it is data, escaped by JSON itself).
    let j = run(&["score", path_str(hostile.path()), "--format", "json"]).json();
    assert!(
        j["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["model"] == HOSTILE_NAME)
    );
}
