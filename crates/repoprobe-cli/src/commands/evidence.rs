//! `repoprobe evidence B --clone-cache DIR --out B2.jsonl`: the checklist items' evidence
//! filled from the paths the checklist and the reference answer cite that exist at the
//! question's pinned commit (docs/live-runs.md#repoprobe-evidence). Which item gets which path
//! is the core's rule (`repoprobe_core::cited_evidence`); the repository's tree comes from the
//! clone cache of `answer` (`RepoSource::tree`); this module reads, asks, reports and writes.
//!
//! The output is the benchmark's questions as written (unknown fields and key order kept), one
//! a line, the new entries appended to their items' `evidence`. A question whose repository
//! cannot be read is written unchanged and reported (exit 1).

use crate::exit::Exit;
use crate::input::{load_paths, print_issues, write_atomically};
use anyhow::{Context, bail};
use repoprobe_agent::workspace::{RepoSource, RepoTree};
use repoprobe_core::LoadOptions;
use repoprobe_core::cited_evidence::{self, Assignment};
use repoprobe_core::text::{terminal_safe, terminal_safe_lines};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark (questions with their repository and pinned commit): files or
    /// directories.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// The repositories (the clone cache `answer` uses, local clones).
    #[command(flatten)]
    repo: crate::repos::RepoArgs,
    /// Where the benchmark with its evidence is written (JSONL; may be the benchmark itself:
    /// the file is replaced whole, atomically, once everything is read).
    #[arg(long)]
    out: PathBuf,
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
    if loaded.has_unusable_input() {
        bail!(
            "{} could not be read (see above)",
            crate::input::listed(&a.files)
        );
    }
    let ds = &loaded.dataset;
    if ds.questions.is_empty() {
        bail!("no valid question in {}", crate::input::listed(&a.files));
    }
    let raw = ds.raw.as_ref().context("the loader kept no record texts")?;
    let others = ds.answers.len()
        + ds.judgments.len()
        + ds.scalar_judgments.len()
        + ds.failure_labels.len()
        + ds.reported.len();
    if others > 0 {
        eprintln!(
            "note: {others} record(s) of {} are not questions and are not written: the output holds the questions only",
            crate::input::listed(&a.files)
        );
    }
    let source = a.repo.source()?;
    let mut totals = Totals::default();
    let done = rewrite_all(ds, raw, &source, &mut totals)?;
    let mut text = String::new();
    for (record, line) in &done {
        text.push_str(record);
        text.push('\n');
        eprintln!("  {line}");
    }
    write_atomically(&a.out, text.as_bytes())
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    eprintln!(
        "evidence: wrote {}: {} question(s), {} given evidence ({} item(s), {} entr{}), {} cited path(s) not at their commit, {} path(s) cited by reference answers only{}",
        a.out.display(),
        ds.questions.len(),
        totals.questions,
        totals.items,
        totals.entries,
        if totals.entries == 1 { "y" } else { "ies" },
        totals.missing,
        totals.answer_only,
        match totals.unread {
            0 => String::new(),
            n => format!(", {n} question(s) whose repository could not be read"),
        }
    );
    Ok(match Exit::of(&loaded) {
        Exit::Ok if totals.unread > 0 => Exit::InvalidRecords,
        e => e,
    })
}

/// Each question's record rewritten with its cited evidence, and its report line, in the
/// benchmark's order. Questions are taken by repository and commit, so that each tree is read
/// once and only one is held at a time (a large repository's tree is megabytes).
fn rewrite_all(
    ds: &repoprobe_core::Dataset,
    raw: &repoprobe_core::dataset::RawRecords,
    source: &RepoSource,
    totals: &mut Totals,
) -> anyhow::Result<Vec<(String, String)>> {
    let key = |i: usize| {
        let r = &ds.questions[i].repo;
        (r.name.as_str(), r.commit.trim())
    };
    let mut order: Vec<usize> = (0..ds.questions.len()).collect();
    order.sort_by_key(|&i| key(i));
    let mut done: Vec<(String, String)> = vec![Default::default(); ds.questions.len()];
    // The tree of one repository and commit at a time, or why it could not be read.
    let mut held: Option<((&str, &str), Result<RepoTree, _>)> = None;
    for i in order {
        let (q, record) = (&ds.questions[i], &raw.questions[i]);
        if held.as_ref().is_some_and(|(k, _)| *k != key(i)) {
            held = None; // the last tree let go before the next is read
        }
        let (_, tree) = held.get_or_insert_with(|| (key(i), source.tree(&q.repo)));
        let id = terminal_safe(&q.id);
        done[i] = match tree {
            Ok(tree) => {
                let assigned = cited_evidence::assign(q, |p| tree.contains(p));
                totals.add(&assigned);
                (
                    cited_evidence::rewrite(record.get(), &assigned)?,
                    report_line(&id, tree, &assigned),
                )
            }
            Err(e) => {
                totals.unread += 1;
                (
                    cited_evidence::one_line(record.get()),
                    format!(
                        "{id}: written unchanged, its repository could not be read: {}",
                        terminal_safe_lines(&e.to_string())
                    ),
                )
            }
        };
    }
    Ok(done)
}

/// The counts of the closing line.
#[derive(Default)]
struct Totals {
    questions: usize,
    items: usize,
    entries: usize,
    missing: usize,
    answer_only: usize,
    unread: usize,
}

impl Totals {
    fn add(&mut self, assigned: &Assignment) {
        self.questions += usize::from(!assigned.items.is_empty());
        self.items += assigned.items.len();
        self.entries += assigned.items.iter().map(|i| i.added.len()).sum::<usize>();
        self.missing += assigned.missing.len();
        self.answer_only += assigned.answer_only.len();
    }
}

/// A question's line: the items given evidence, the paths found, and what was cited but not
/// found or given to no item (every name from the file, made safe for the terminal).
fn report_line(id: &str, tree: &RepoTree, assigned: &Assignment) -> String {
    let list = |paths: &[String]| {
        paths
            .iter()
            .map(|p| terminal_safe(p).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let short = tree.commit.get(..12).unwrap_or(&tree.commit);
    let at = if tree.from_head {
        format!("HEAD {short} (unpinned)")
    } else {
        short.to_string()
    };
    let items = if assigned.items.is_empty() {
        "no item given evidence".to_string()
    } else {
        let each: Vec<String> = assigned
            .items
            .iter()
            .map(|i| format!("{} +{}", terminal_safe(&i.id), i.added.len()))
            .collect();
        format!(
            "{} item(s) given evidence ({})",
            assigned.items.len(),
            each.join(", ")
        )
    };
    let mut line = format!(
        "{id}: {items}; {} cited path(s) found at {at}",
        assigned.found.len()
    );
    if !assigned.missing.is_empty() {
        line.push_str(&format!("; not at the commit: {}", list(&assigned.missing)));
    }
    if !assigned.answer_only.is_empty() {
        line.push_str(&format!(
            "; cited by the reference answer only, given to no item: {}",
            list(&assigned.answer_only)
        ));
    }
    line
}
