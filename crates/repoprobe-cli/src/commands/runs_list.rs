//! `repoprobe list-runs FILE...`: one row per run (question × model × attempt) — verdict, score,
//! evidence read and missed, files read, turns, tool calls, edit attempts, tokens, cost,
//! duration — filtered and ordered by the core's `metrics::runs` (the site's Runs view applies
//! the same filter, so `--count` equals the number of rows it shows).

use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use anyhow::Context;
use repoprobe_core::metrics::runs::{self, Order, RunFilter, Verdict};
use repoprobe_core::model::FailureMode;
use repoprobe_core::{LoadOptions, ScoreOptions, report};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them; the benchmark must be among them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// How to print the rows: table (the terminal), json, csv or markdown.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Print only how many runs the filter keeps.
    #[arg(long)]
    count: bool,
    /// The judge whose judgments give the verdicts (default: the one with most judgments).
    #[arg(long)]
    judge: Option<String>,
    /// Weight rules, as `score --weight`.
    #[arg(long = "weight", value_name = "RULE", value_parser = repoprobe_core::WeightRule::parse)]
    weights: Vec<repoprobe_core::WeightRule>,
    /// Leave this question out, as `score --drop-question`; repeatable.
    #[arg(long = "drop-question", value_name = "ID")]
    drop_questions: Vec<String>,
    /// Only the questions created on or after DATE, as `score --created-after`.
    #[arg(long, value_name = "DATE")]
    created_after: Option<String>,
    /// Only this model's runs.
    #[arg(long)]
    model: Option<String>,
    /// Only the runs of this question (its id).
    #[arg(long)]
    question: Option<String>,
    /// Only the questions of this category.
    #[arg(long)]
    category: Option<String>,
    /// Only the runs with this verdict: perfect, partial (judged, 60 % or more), failure
    /// (below 60 %), not_judged, error (the run failed).
    #[arg(long, value_parser = parse_verdict)]
    verdict: Option<Verdict>,
    /// Only the runs the classifier in force labelled with this failure mode.
    #[arg(long, value_parser = parse_mode)]
    failure_mode: Option<FailureMode>,
    /// Only the runs that read none of their question's evidence (both recorded).
    #[arg(long)]
    read_no_evidence: bool,
    /// Only the runs that attempted an edit (an edit tool call, refused or not).
    #[arg(long)]
    attempted_edit: bool,
    /// Only the runs scoring at least this (percent).
    #[arg(long, value_name = "PCT")]
    min_score: Option<f64>,
    /// Only the runs scoring at most this (percent).
    #[arg(long, value_name = "PCT")]
    max_score: Option<f64>,
    /// Order by a column, `COLUMN` or `COLUMN:desc` (question, model, attempt, category,
    /// verdict, score, evidence_recall, files_read, turns, tool_calls, edit_attempts, tokens,
    /// cost, duration); runs without a value last.
    #[arg(long, value_parser = Order::parse)]
    sort: Option<Order>,
    /// Print at most N runs (after the order).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
    Markdown,
}

fn parse_verdict(s: &str) -> Result<Verdict, FilterValueError> {
    Verdict::parse(s).ok_or_else(|| FilterValueError::NotAVerdict {
        given: s.to_string(),
    })
}

fn parse_mode(s: &str) -> Result<FailureMode, FilterValueError> {
    FailureMode::parse(s).ok_or_else(|| FilterValueError::NotAFailureMode {
        given: s.to_string(),
    })
}

/// A filter's value that is none of its names (`--verdict`, `--failure-mode`); the message
/// lists them.
#[derive(Debug, thiserror::Error)]
enum FilterValueError {
    #[error(
        "not a verdict: {given:?} (one of: {})",
        names(Verdict::ALL.iter().map(|v| v.as_str()))
    )]
    NotAVerdict { given: String },
    #[error(
        "not a failure mode: {given:?} (one of: {})",
        names(FailureMode::ALL.iter().map(|m| m.as_str()))
    )]
    NotAFailureMode { given: String },
}

fn names<'a>(all: impl Iterator<Item = &'a str>) -> String {
    all.collect::<Vec<_>>().join(", ")
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    // Runs never read rationales or answers' texts.
    let loaded = load_paths(
        &a.files,
        LoadOptions {
            skip_text: true,
            ..Default::default()
        },
    );
    print_issues(&loaded);
    if loaded.dataset.questions.is_empty() {
        anyhow::bail!(
            "no valid benchmark questions were loaded: give the benchmark file (or a bundle with one)"
        );
    }
    let opts = ScoreOptions {
        judge: a.judge.clone(),
        weights: a.weights.clone(),
        drop_questions: a.drop_questions.iter().cloned().collect(),
        created_after: a.created_after.clone(),
        ..ScoreOptions::default()
    };
    let all = match runs::runs(&loaded.dataset, &opts) {
        Err(repoprobe_core::metrics::ScoreError::Window(why)) => {
            anyhow::bail!("--created-after: {why}")
        }
        r => r.context("cannot list the runs")?,
    };
    let mut picked = runs::select(&all.rows, &filter(&a), a.sort);
    if a.count {
        crate::stdout::write(format!("{}\n", picked.len()).as_bytes())?;
        return Ok(Exit::Ok);
    }
    let kept = picked.len();
    if let Some(n) = a.limit {
        picked.truncate(n);
    }
    let out = match a.format {
        Format::Json => {
            let rows: Vec<_> = picked.iter().map(|&i| &all.rows[i]).collect();
            serde_json::to_string_pretty(&serde_json::json!({
                "judge": all.judge,
                "classifier": all.classifier,
                "runs": all.rows.len(),
                "kept": kept,
                "shown": rows.len(),
                "rows": rows,
            }))? + "\n"
        }
        Format::Csv => report::runs_csv(&all, &picked),
        Format::Table => {
            let ansi = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            report::render_text(&report::runs_table(&all, &picked, kept), ansi)
        }
        Format::Markdown => report::render_markdown(&report::runs_table(&all, &picked, kept)),
    };
    crate::stdout::write(out.as_bytes())?;
    std::mem::forget(loaded);
    Ok(Exit::Ok)
}

fn filter(a: &Args) -> RunFilter {
    RunFilter {
        model: a.model.clone(),
        question: a.question.clone(),
        category: a.category.clone(),
        verdict: a.verdict,
        failure_mode: a.failure_mode,
        read_no_evidence: a.read_no_evidence,
        attempted_edit: a.attempted_edit,
        min_score: a.min_score,
        max_score: a.max_score,
    }
}
