//! Snapshots of every renderer of `report` (terminal text with and without colour, Markdown,
//! LaTeX, CSV by model and by stratum, the JSON report) on `testdata/golden` with the paper's
//! reported values: a change in any byte of any table shows up as a diff to review
//! (`cargo insta review`, or `INSTA_UPDATE=always` and `git diff`).

use repoprobe_core::report::{
    models_csv, render_latex, render_markdown, render_text, retrieval_csv, retrieval_table,
    strata_csv, tables,
};
use repoprobe_core::{LoadOptions, ScoreOptions, ScoreReport, Stratum, load, score};

mod common;

/// The paper's reported tables, so that Table 3 as reported and the audit are rendered too.
const REPORTED: (&str, &[u8]) = (
    "repoprobe-paper.json",
    include_bytes!("../../../public-data/reported/repoprobe-paper.json"),
);

/// The golden report with every table the renderers know: strata, reliability, failure modes,
/// the paired comparison, Table 3 as reported and its audit.
fn report() -> ScoreReport {
    let loaded = load(&common::golden_with(&[REPORTED]), LoadOptions::default());
    let mut models: Vec<String> = loaded
        .dataset
        .answers
        .iter()
        .map(|a| a.model.clone())
        .collect();
    models.sort();
    models.dedup();
    let opts = ScoreOptions {
        bootstrap: 200,
        compare: Some((models[0].clone(), models[1].clone())),
        ..ScoreOptions::default()
    };
    score(&loaded.dataset, &loaded.issues, &opts).unwrap()
}

/// Every table of the report rendered by `render`, as `repoprobe score` joins them.
fn all(by: Option<Stratum>, render: impl Fn(&repoprobe_core::report::Table) -> String) -> String {
    tables(&report(), by)
        .iter()
        .map(render)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn terminal_text_plain() {
    insta::assert_snapshot!(all(None, |t| render_text(t, false)));
}

#[test]
fn terminal_text_in_colour() {
    insta::assert_snapshot!(all(None, |t| render_text(t, true)));
}

#[test]
fn terminal_text_by_category() {
    insta::assert_snapshot!(all(Some(Stratum::Category), |t| render_text(t, false)));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(all(None, render_markdown));
}

#[test]
fn latex() {
    insta::assert_snapshot!(all(None, render_latex));
}

#[test]
fn csv_by_model() {
    insta::assert_snapshot!(models_csv(&report()));
}

#[test]
fn csv_by_stratum() {
    let r = report();
    let out: Vec<String> = Stratum::ALL.iter().map(|&s| strata_csv(&r, s)).collect();
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn json_report() {
    insta::assert_snapshot!(serde_json::to_string_pretty(&report()).unwrap());
}

/// `testdata/golden/retrieval` (its README): evidence on two of three questions, runs that say
/// what they read and runs that do not.
fn retrieval_report() -> ScoreReport {
    let files = [
        (
            "benchmark.jsonl",
            &include_bytes!("../../../testdata/golden/retrieval/benchmark.jsonl")[..],
        ),
        (
            "answers.jsonl",
            include_bytes!("../../../testdata/golden/retrieval/answers.jsonl"),
        ),
        (
            "judgments.jsonl",
            include_bytes!("../../../testdata/golden/retrieval/judgments.jsonl"),
        ),
        (
            "failure_modes.jsonl",
            include_bytes!("../../../testdata/golden/retrieval/failure_modes.jsonl"),
        ),
    ]
    .map(|(name, bytes)| repoprobe_core::SourceFile { name, bytes });
    let loaded = load(&files, LoadOptions::default());
    let opts = ScoreOptions {
        bootstrap: 0,
        ..ScoreOptions::default()
    };
    score(&loaded.dataset, &loaded.issues, &opts).unwrap()
}

#[test]
fn retrieval_table_in_every_format() {
    let r = retrieval_report();
    let t = retrieval_table(&r).expect("the fixture has evidence");
    insta::assert_snapshot!(
        [
            render_text(&t, false),
            render_markdown(&t),
            render_latex(&t),
            retrieval_csv(&r),
        ]
        .join("\n")
    );
}
