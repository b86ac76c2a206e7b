//! `repoprobe curate report`: the funnel so far (the core's `curate::Funnel`), from the stages'
//! outputs and the excluded journals beside them: repositories seen and kept, threads
//! harvested and after each later stage given, what was dropped by rule, per repository. The
//! table goes to stdout, the JSON to `--out`.

use super::{excluded_path, read_records};
use crate::exit::Exit;
use crate::input::write_atomically;
use anyhow::{Context, bail};
use repoprobe_core::curate::{Excluded, Funnel, Repository, StageOutput, Thread};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `curate repos`' output (its excluded journal beside it is read too).
    #[arg(long)]
    repos: Option<PathBuf>,
    /// `curate harvest`'s output (and its excluded journal).
    #[arg(long)]
    threads: Option<PathBuf>,
    /// `curate filter`'s output (and its excluded journal).
    #[arg(long)]
    filtered: Option<PathBuf>,
    /// `curate classify`'s output (and its excluded journal).
    #[arg(long)]
    classified: Option<PathBuf>,
    /// `curate enhance`'s output: the pairs.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// `make-checklist`'s output on the pairs: the questions.
    #[arg(long)]
    questions: Option<PathBuf>,
    /// `curate verify`'s output: the candidates (and its excluded journal).
    #[arg(long)]
    candidates: Option<PathBuf>,
    /// The funnel as JSON (written atomically) [default: only the table on stdout].
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let later = [
        ("filter", &a.filtered),
        ("classify", &a.classified),
        ("enhance", &a.pairs),
        ("make-checklist", &a.questions),
        ("verify", &a.candidates),
    ];
    if a.repos.is_none() && a.threads.is_none() && later.iter().all(|(_, p)| p.is_none()) {
        bail!(
            "give at least one of --repos, --threads, --filtered, --classified, --pairs, \
             --questions, --candidates"
        );
    }
    let mut bad = 0;
    let mut excluded = Vec::new();
    let mut read_excluded = |path: &Path, bad: &mut usize| -> anyhow::Result<()> {
        let ex = excluded_path(path);
        if ex.exists() {
            let (records, b) = read_records::<Excluded>(&ex, "excluded")?;
            *bad += b;
            excluded.extend(records.into_iter().map(|(_, e)| e));
        }
        Ok(())
    };
    let mut repos = Vec::new();
    if let Some(p) = &a.repos {
        let (r, b) = read_records::<Repository>(p, "repository")?;
        bad += b;
        repos = r.into_iter().map(|(_, r)| r).collect();
        read_excluded(p, &mut bad)?;
    }
    let mut harvested = Vec::new();
    if let Some(p) = &a.threads {
        let (t, b) = read_records::<Thread>(p, "thread")?;
        bad += b;
        read_excluded(p, &mut bad)?;
        harvested = t.into_iter().map(|(_, t)| t).collect();
    }
    let mut outputs = Vec::new();
    for (stage, path) in later {
        let Some(p) = path else { continue };
        let (records, b) = read_records::<serde_json::Value>(p, "record")?;
        let mut keyed = Vec::new();
        let mut unkeyed = 0;
        for (v, _) in records {
            match key_and_repo(&v) {
                Some(k) => keyed.push(k),
                None => unkeyed += 1,
            }
        }
        if unkeyed > 0 {
            eprintln!(
                "  {}: {unkeyed} record(s) without a key (`key` or `id`) and a repository: not counted",
                p.display()
            );
        }
        bad += b + unkeyed;
        read_excluded(p, &mut bad)?;
        outputs.push(StageOutput {
            stage: stage.to_string(),
            records: keyed,
        });
    }
    let funnel = Funnel::of(&repos, &harvested, &outputs, &excluded);
    crate::stdout::write(
        repoprobe_core::report::terminal_safe_lines(&funnel.render_text()).as_bytes(),
    )?;
    if let Some(out) = &a.out {
        let mut json = serde_json::to_string_pretty(&funnel)?;
        json.push('\n');
        write_atomically(out, json.as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(if bad > 0 {
        Exit::InvalidRecords
    } else {
        Exit::Ok
    })
}

/// A later stage's record's key and repository: threads write `key` and `repo` (a name),
/// questions `id` and `repo.name`.
fn key_and_repo(v: &serde_json::Value) -> Option<(String, String)> {
    let key = v.get("key").or_else(|| v.get("id"))?.as_str()?;
    let repo = match v.get("repo")? {
        serde_json::Value::String(s) => s.as_str(),
        r => r.get("name")?.as_str()?,
    };
    Some((key.to_string(), repo.to_string()))
}
