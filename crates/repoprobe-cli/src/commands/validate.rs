//! `repoprobe validate FILE...`: what each file holds and every issue with its location.

use crate::exit::Exit;
use crate::input::load_paths;
use repoprobe_core::{LoadOptions, Loaded, RecordKind};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// `text` for people, `json` for machines.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    Table,
    Json,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let loaded = load_paths(&a.files, LoadOptions::default());
    let exit = Exit::of(&loaded);
    let unpinned = unpinned(&loaded.dataset.questions);
    let out = match a.format {
        Format::Json => serde_json::to_string_pretty(&as_json(&loaded, exit, &unpinned))? + "\n",
        Format::Table => as_text(&loaded, &unpinned)?,
    };
    crate::stdout::write(out.as_bytes())?;
    Ok(exit)
}

/// The load as `--format json` writes it: validity, files, counts by kind, pinned questions,
/// issues and notes.
fn as_json(loaded: &Loaded, exit: Exit, unpinned: &[String]) -> Value {
    let counts: BTreeMap<&str, usize> = RecordKind::ALL
        .iter()
        .map(|&k| (k.bundle_key(), loaded.dataset.count(k)))
        .collect();
    let questions = loaded.dataset.questions.len();
    // The location in words, as the text output and the score report give it; the kind by
    // its name (docs/cli.md).
    let issues: Vec<Value> = loaded
        .issues
        .iter()
        .map(|i| {
            json!({"file": i.file, "location": i.location.to_string(), "kind": i.kind,
                "message": i.message, "severity": i.severity})
        })
        .collect();
    json!({
        "valid": exit == Exit::Ok,
        "files": loaded.files,
        "counts": counts,
        "pinned": {"questions": questions, "pinned": questions - unpinned.len(),
            "not_pinned": unpinned},
        "issues": issues,
        "notes": loaded.notes,
    })
}

/// The load in words: each file, what is valid, the pinned questions, notes and issues, every
/// untrusted text made terminal-safe.
fn as_text(loaded: &Loaded, unpinned: &[String]) -> Result<String, std::fmt::Error> {
    use repoprobe_core::text::terminal_safe_lines as safe;
    use std::fmt::Write as _;
    let mut text = String::new();
    for f in &loaded.files {
        writeln!(
            text,
            "{}: {} ({} bytes), {} record(s) read",
            safe(&f.name),
            f.shape,
            f.bytes,
            f.records
        )?;
    }
    let valid: Vec<String> = RecordKind::ALL
        .iter()
        .filter(|&&k| loaded.dataset.count(k) > 0)
        .map(|&k| {
            let n = loaded.dataset.count(k);
            format!("{n} {}", plural(k.noun(), n))
        })
        .collect();
    let valid = if valid.is_empty() {
        "nothing".to_string()
    } else {
        valid.join(", ")
    };
    writeln!(text, "valid: {valid}")?;
    let questions = loaded.dataset.questions.len();
    if questions > 0 {
        let not = if unpinned.is_empty() {
            String::new()
        } else {
            format!(
                " (not: {}; `answer` needs --allow-unpinned or --repo-map for them)",
                safe(&unpinned.join(", "))
            )
        };
        writeln!(
            text,
            "pinned: {} of {questions} question(s) at a full commit of a repository with a URL{not}",
            questions - unpinned.len(),
        )?;
    }
    for n in &loaded.notes {
        writeln!(text, "note: {}", safe(n))?;
    }
    if loaded.issues.is_empty() {
        writeln!(text, "no issues")?;
        return Ok(text);
    }
    writeln!(text, "{} issue(s):", loaded.issues.len())?;
    for i in &loaded.issues {
        // A warning leaves no record out (docs/cli.md#output): said so.
        let warning = i.severity == repoprobe_core::Severity::Warning;
        writeln!(
            text,
            "  {}: {}: {}{}",
            safe(&i.file),
            safe(&i.location.to_string()),
            if warning { "warning: " } else { "" },
            safe(&i.message)
        )?;
    }
    Ok(text)
}

/// The ids of the questions `repoprobe answer` cannot check out as they stand: no full 40-hex
/// commit, or no repository URL.
fn unpinned(questions: &[repoprobe_core::Question]) -> Vec<String> {
    questions
        .iter()
        .filter(|q| {
            let c = &q.repo.commit;
            !(c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
                || q.repo.url.trim().is_empty()
        })
        .map(|q| q.id.clone())
        .collect()
}

fn plural(noun: &str, n: usize) -> String {
    if n == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}
