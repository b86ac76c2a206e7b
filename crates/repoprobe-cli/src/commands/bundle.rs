//! `repoprobe bundle FILE... --out results.json`: one validated bundle from many files. Only
//! valid records go in, each with its unknown fields as written; the issues go to stderr.

use crate::exit::Exit;
use crate::input::{load_paths, print_issues, write_atomically};
use anyhow::Context;
use repoprobe_core::{BUNDLE_FORMAT, FORMAT_VERSION, LoadOptions};
use serde::Serialize;
use serde_json::value::RawValue;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Serialize)]
struct Out<'a> {
    format: &'a str,
    version: u32,
    meta: serde_json::Value,
    benchmark: &'a [Box<RawValue>],
    answers: &'a [Box<RawValue>],
    judgments: &'a [Box<RawValue>],
    scalar_judgments: &'a [Box<RawValue>],
    failure_modes: &'a [Box<RawValue>],
    reported: &'a [Box<RawValue>],
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let loaded = load_paths(
        &a.files,
        LoadOptions {
            keep_raw: true,
            ..Default::default()
        },
    );
    print_issues(&loaded);
    let raw = loaded.dataset.raw.clone().unwrap_or_default();
    let sources: Vec<serde_json::Value> = loaded
        .files
        .iter()
        .map(|f| serde_json::json!({"file": f.name, "records": f.records, "meta": f.meta}))
        .collect();
    let out = Out {
        format: BUNDLE_FORMAT,
        version: FORMAT_VERSION,
        meta: serde_json::json!({"created_by": "repoprobe bundle", "sources": sources, "issues_left_out": loaded.issues.len()}),
        benchmark: &raw.questions,
        answers: &raw.answers,
        judgments: &raw.judgments,
        scalar_judgments: &raw.scalar_judgments,
        failure_modes: &raw.failure_labels,
        reported: &raw.reported,
    };
    let text = serde_json::to_vec(&out)?;
    write_atomically(&a.out, &text).with_context(|| format!("cannot write {}", a.out.display()))?;
    eprintln!(
        "wrote {}: {} questions, {} answers, {} judgments, {} scalar judgments, {} failure-mode labels, {} reported values",
        a.out.display(),
        raw.questions.len(),
        raw.answers.len(),
        raw.judgments.len(),
        raw.scalar_judgments.len(),
        raw.failure_labels.len(),
        raw.reported.len()
    );
    Ok(Exit::of(&loaded))
}
