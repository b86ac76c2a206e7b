//! `repoprobe curate <stage>`: benchmark questions made from GitHub Discussions (paper §3.2,
//! Figure 2; docs/curate.md). One subcommand per stage, each reading the previous stage's JSONL
//! and writing its own, with what it dropped and why in an `excluded` journal beside its
//! `--out` (`X.jsonl` → `X.excluded.ndjson`): `repos`, `harvest`, `filter`, `classify`,
//! `enhance`, `make-checklist`, `verify`, and after the human review
//! `agreement` and `finalize`; `report` counts the funnel at any point.
//!
//! Every output is an append-only journal (`crate::output::Journal`): a rerun skips what is
//! written, and secrets of our environment (`GITHUB_TOKEN` among them) are scrubbed from every
//! line. The records' types and the rules that need no network are the core's
//! (`repoprobe_curate`).

mod agreement;
mod classify;
mod enhance;
mod filter;
mod finalize;
mod harvest;
mod report;
mod repos;
mod themes;
mod verify;

use crate::exit::Exit;
use crate::output::{Journal, text};
use anyhow::{Context, bail};
use repoprobe_curate::{Excluded, Rule, Stage};
use repoprobe_github::{DEFAULT_API_URL, GITHUB_TOKEN, GitHub};
use repoprobe_llm::ApiKey;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    stage: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Find repositories whose Discussions have answerable Q&A/Help categories with enough
    /// answered threads (GitHub search, split by creation date), or check the ones given.
    Repos(repos::Args),
    /// The model gives each kept repository one of the paper's eight themes (Table 4); a theme
    /// given to `curate repos --theme` is kept. Harvest reads its output as it reads repos'.
    Themes(themes::Args),
    /// Every answered discussion of the kept categories, with the commit of the default branch
    /// at the time its answer was chosen; resumable.
    Harvest(harvest::Args),
    /// Drop threads whose question or accepted answer relies on images.
    Filter(filter::Args),
    /// The model keeps the threads about understanding the repository's code and names each
    /// one's category (Project Architecture, Business Logic, Implementation Details).
    Classify(classify::Args),
    /// External links fetched (hostile-input safe), judged and summarised by the model, and
    /// merged into question and answer so that they stand alone: the pairs make-checklist reads.
    Enhance(Box<enhance::Args>),
    /// Write the checklists of the enhanced pairs (or any questions) from their reference
    /// answers (paper §3.2): the questions verify reads.
    MakeChecklist(crate::commands::make_checklist::Args),
    /// The funnel so far: repositories seen and kept, threads harvested and after each stage,
    /// per repository.
    Report(report::Args),
    /// The quality check of the checklisted questions: links that matter resolved, and every
    /// knowledge item grounded in the code at the pinned commit by the built-in agent; writes
    /// the candidates.
    Verify(Box<verify::Args>),
    /// How far the reviewers of the candidates agree, per criterion and for the decision
    /// (percent, Cohen's κ, Krippendorff's α), and the questions they disagree on.
    Agreement(agreement::Args),
    /// The release: the candidates the review kept (the rest excluded with why) and the
    /// release manifest beside them.
    Finalize(Box<finalize::Args>),
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    match a.stage {
        Command::Repos(a) => repos::run(a),
        Command::Themes(a) => themes::run(a),
        Command::Harvest(a) => harvest::run(a),
        Command::Filter(a) => filter::run(a),
        Command::Classify(a) => classify::run(a),
        Command::Enhance(a) => enhance::run(*a),
        Command::MakeChecklist(a) => crate::commands::make_checklist::run(a),
        Command::Report(a) => report::run(a),
        Command::Verify(a) => verify::run(*a),
        Command::Agreement(a) => agreement::run(a),
        Command::Finalize(a) => finalize::run(*a),
    }
}

/// The flags of the stages that ask GitHub.
#[derive(Debug, clap::Args)]
struct GitHubArgs {
    /// The GraphQL endpoint (GitHub Enterprise: https://HOST/api/graphql); the token is read
    /// from GITHUB_TOKEN only.
    #[arg(long, default_value = DEFAULT_API_URL)]
    github_api_url: String,
    /// Seconds one request may take.
    #[arg(long, default_value_t = 120.0)]
    github_timeout_s: f64,
}

impl GitHubArgs {
    /// Checks the flags and the token, and makes the client (which tells of its waits on
    /// stderr).
    fn client(&self) -> anyhow::Result<GitHub> {
        if !(self.github_api_url.starts_with("https://")
            || self.github_api_url.starts_with("http://"))
        {
            bail!(
                "--github-api-url must be an http(s) URL, not {}",
                repoprobe_core::text::quote(&self.github_api_url)
            );
        }
        if !(self.github_timeout_s.is_finite() && self.github_timeout_s > 0.0) {
            bail!("--github-timeout-s must be a positive number of seconds");
        }
        let Some(token) = ApiKey::from_env(GITHUB_TOKEN) else {
            bail!(
                "{GITHUB_TOKEN} is not set: the GitHub token is read from that environment \
                 variable only (a classic token with no scope reads public repositories)"
            );
        };
        let mut gh = GitHub::new(
            &self.github_api_url,
            token,
            Duration::from_secs_f64(self.github_timeout_s),
        )?;
        gh.on_wait = Box::new(|w| {
            eprintln!(
                "note: GitHub {}: {}: waiting {:.0} s",
                w.op,
                w.why,
                w.wait.as_secs_f64().ceil()
            );
        });
        Ok(gh)
    }
}

/// One current-thread runtime: the requests go one at a time.
fn block_on<T>(f: impl std::future::Future<Output = T>) -> anyhow::Result<T> {
    let rt = crate::live::runtime()?;
    Ok(rt.block_on(f))
}

/// `X.jsonl` → `X.excluded.ndjson` (`.ndjson`, so that a directory's `*.jsonl` never holds it).
fn excluded_path(out: &Path) -> PathBuf {
    crate::output::beside(out, "excluded.ndjson")
}

/// The key of an excluded record.
fn excluded_key(v: &serde_json::Value) -> Option<String> {
    v.get("rule")?;
    v.get("stage")?;
    text(v, "key")
}

/// Opens a stage's output (locked) and its excluded journal beside it, creating the directory.
fn open_journals(
    out: &Path,
    key_of: crate::output::KeyOf<String>,
    kind: &str,
) -> anyhow::Result<(Journal<String>, Journal<String>)> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::input::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let journal = Journal::open(out, key_of)?;
    journal.report(kind);
    let excluded = Journal::open_beside(&excluded_path(out), excluded_key)?;
    excluded.report("excluded");
    Ok((journal, excluded))
}

/// Writes an excluded record and marks its key done.
fn exclude(
    journal: &mut Journal<String>,
    stage: Stage,
    key: &str,
    repo: &str,
    rule: Rule,
    reason: String,
) -> anyhow::Result<()> {
    journal.append(&Excluded {
        stage,
        key: key.to_string(),
        repo: repo.to_string(),
        rule,
        reason,
    })?;
    journal.done.insert(key.to_string());
    Ok(())
}

/// Now, as the records write times.
fn now_rfc3339() -> String {
    repoprobe_core::date::format_utc(repoprobe_github::unix_now())
}

/// Reads a JSONL file of records of type `T`, each with its line; a line that is not one is
/// printed (file, line, why) and counted.
fn read_records<T: serde::de::DeserializeOwned>(
    path: &Path,
    kind: &str,
) -> anyhow::Result<(Vec<(serde_json::Value, T)>, usize)> {
    let records = crate::input::read_json_records(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    let mut bad = 0;
    for (location, record) in records {
        let parsed = record.map_err(|e| e.to_string()).and_then(|v| {
            serde_json::from_value::<T>(v.clone())
                .map(|t| (v, t))
                .map_err(|e| format!("not a {kind} record: {e}"))
        });
        match parsed {
            Ok(r) => out.push(r),
            Err(e) => {
                bad += 1;
                eprintln!(
                    "  {}: {location}: {}",
                    path.display(),
                    repoprobe_core::text::terminal_safe_lines(&e)
                );
            }
        }
    }
    Ok((out, bad))
}
