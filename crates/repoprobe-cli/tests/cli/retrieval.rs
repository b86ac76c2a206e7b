//! `score`'s retrieval rows on `testdata/golden/retrieval` against values computed by hand
//! (the arithmetic beside each, the fixture described in its README.md), and the
//! `--table retrieval` renderings.

use crate::common::repoprobe;
use serde_json::{Value, json};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/golden/retrieval"
);

/// The rows as computed by hand. E: r1 = {src/a.py, src/b.py, src/c.py} (k1: a, b; k2: c),
/// r2 = {lib/x.go} (k1; k2's `/etc/passwd` and the clarity item's entry are ignored), r3 none.
///
/// Counted runs of A: r1#0 (R = {src/a.py, docs/readme.md}: the `./` twin once, `/abs/path`
/// and `../up.py` dropped) and r2#0 (R = {}); r3#0 has no evidence, r1#1 failed.
/// Counted runs of B: r2#0 (R = {lib/x.go, main.go}) and r1#1 (R = {src/c.py, src/b.py});
/// r1#0 says nothing of what it read.
fn expected() -> Value {
    json!([
        {"model": "A", "judge": "J", "runs": 2,
         // (1/3 + 0/1) / 2
         "evidence_recall": 100.0 / 6.0,
         // only r1#0 read something: 1/2
         "read_precision": 50.0,
         // r1#0: k1 yes, k2 no; r2#0: k1 no → 1 of 3
         "items_retrieved": 100.0 / 3.0,
         // J's judgments of counted runs: r1#0 run 0 (5,0,1), run 1 (3,0,0), r2#0 (0,4,1).
         // read: k1 5/5, 3/5 → 0.8; not read: k2 0/4, 0/4, r2 k1 0/5 → 0
         "attainment_retrieved": 80.0,
         "attainment_not_retrieved": 0.0,
         // s = 6 (60 %: not below), 3, 5 → 2 failures, r2#0's read nothing of E → 1 of 2
         "failures": 2,
         "failures_not_retrieved": 50.0,
         // classifier C (4 labels; D has 1): r2#0 and r1#0 context_miss, r2#0 read none
         "labelled_failures": 2, "context_miss": 2, "context_miss_not_retrieved": 1},
        {"model": "B", "judge": "J", "runs": 2,
         // (1/1 + 2/3) / 2
         "evidence_recall": 500.0 / 6.0,
         // (1/2 + 2/2) / 2
         "read_precision": 75.0,
         // r2#0: k1 yes; r1#1: k1 yes (b), k2 yes (c) → 3 of 3
         "items_retrieved": 100.0,
         // r2#0 (5,4,1): k1 1; r1#1 (3,2,0): k1 0.6, k2 0.5 → 2.1 / 3
         "attainment_retrieved": 70.0,
         "attainment_not_retrieved": null,
         // r2#0 s = 10; r1#1 s = 5, which read 2 of E; r1#0's judgment is no counted run's
         "failures": 1,
         "failures_not_retrieved": 0.0,
         // r1#1 shallow_explanation; r1#0's context_miss is no counted run's
         "labelled_failures": 1, "context_miss": 0, "context_miss_not_retrieved": 0}
    ])
}

fn files() -> Vec<String> {
    [
        "answers.jsonl",
        "benchmark.jsonl",
        "failure_modes.jsonl",
        "judgments.jsonl",
    ]
    .iter()
    .map(|f| format!("{DIR}/{f}"))
    .collect()
}

fn score(extra: &[&str]) -> crate::common::Ran {
    let files = files();
    let mut args: Vec<&str> = vec!["score", "--bootstrap", "0"];
    args.extend(files.iter().map(String::as_str));
    args.extend(extra);
    let r = repoprobe(&args);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    r
}

/// Numbers equal to 1e-9, everything else exactly.
fn same(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Number(g), Value::Number(w)) => {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            assert!((g - w).abs() < 1e-9, "{at}: {g} != {w}");
        }
        (Value::Object(g), Value::Object(w)) => {
            let (gk, wk): (Vec<_>, Vec<_>) = (g.keys().collect(), w.keys().collect());
            assert_eq!(gk, wk, "{at}: the fields");
            for (k, w) in w {
                same(&g[k], w, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{at}: {got:#}");
            for (n, (g, w)) in g.iter().zip(w).enumerate() {
                same(g, w, &format!("{at}[{n}]"));
            }
        }
        _ => assert_eq!(got, want, "{at}"),
    }
}

#[test]
fn score_json_gives_the_hand_computed_retrieval_rows() {
    let r = score(&["--format", "json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    same(&v["retrieval"], &expected(), "retrieval");
    // The two ignored evidence entries are warnings of the benchmark, located in its line 2.
    let warnings: Vec<&str> = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        // (not B's never-answered note: B has no answer to r3)
        .filter(|i| i["file"] != "")
        .map(|i| i["location"].as_str().unwrap())
        .collect();
    assert_eq!(
        warnings,
        [
            "line 2, checklist[1].evidence[0]",
            "line 2, checklist[2].evidence"
        ]
    );
    assert!(
        r.stderr.contains("warning: question \"r2\""),
        "{}",
        r.stderr
    );
}

#[test]
fn score_table_retrieval_prints_the_table_in_every_format() {
    let text = score(&["--table", "retrieval"]).stdout;
    assert!(text.starts_with("Retrieval — "), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("A ") || l.starts_with("B "))
            .count(),
        2
    );
    let md = score(&["--table", "retrieval", "--format", "markdown"]).stdout;
    assert!(
        md.contains("| A | 2 | 16.7 | 50.0 | 33.3 | 80.0 | 0.0 | 2 | 50.0 | 2 | 2 | 1 |"),
        "{md}"
    );
    assert!(
        md.contains("| B | 2 | 83.3 | 75.0 | 100.0 | 70.0 | — | 1 | 0.0 | 1 | 0 | 0 |"),
        "{md}"
    );
    let tex = score(&["--table", "retrieval", "--format", "latex"]).stdout;
    assert!(tex.contains("\\begin{tabular}"), "{tex}");
    let csv = score(&["--table", "retrieval", "--format", "csv"]).stdout;
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "model,judge,runs,evidence_recall,read_precision,items_retrieved,attainment_retrieved,\
             attainment_not_retrieved,failures,failures_not_retrieved,labelled_failures,\
             context_miss,context_miss_not_retrieved"
        )
    );
    assert_eq!(
        lines.nth(1),
        Some("B,J,2,83.33333333333333,75,100,70,,1,0,1,0,0")
    );
}

#[test]
fn score_without_any_evidence_has_no_retrieval_rows_and_says_so_for_the_table() {
    let golden = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden");
    let r = repoprobe(&["score", "--bootstrap", "0", "--format", "json", golden]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["retrieval"], json!([]));
    let r = repoprobe(&["score", "--bootstrap", "0", "--table", "retrieval", golden]);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("no question has evidence"),
        "{}",
        r.stderr
    );
    let r = repoprobe(&["score", "--table", "retrieval", "--by", "theme", golden]);
    assert_eq!(r.code, 2, "--table and --by conflict: {}", r.stderr);
}

#[test]
fn validate_with_warnings_only_is_valid_and_says_which_are_warnings() {
    let files = files();
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let r = repoprobe(&args);
    assert_eq!(r.code, 0, "warnings leave no record out: {}", r.stdout);
    assert!(
        r.stdout
            .contains("line 2, checklist[1].evidence[0]: warning: question \"r2\", item \"k2\""),
        "{}",
        r.stdout
    );
    args.extend(["--format", "json"]);
    let v: Value = serde_json::from_str(&repoprobe(&args).stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["issues"][0]["severity"], "warning");
}
