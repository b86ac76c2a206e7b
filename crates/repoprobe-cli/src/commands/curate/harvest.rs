//! `repoprobe curate harvest`: every answered discussion of the kept categories of each
//! repository (`curate repos`' output), oldest first, a page at a time, each written as a
//! thread record with the commit it is pinned to — the default branch's last commit when the
//! answer was chosen (`history(first: 1, until: answerChosenAt)`).
//!
//! **Resumable without asking twice.** Each page of discussions is written, as GitHub gave it,
//! to the pages journal (`<out>.pages.ndjson`) before any of its threads is worked on; each
//! thread is written to `--out` (or the excluded journal) as soon as its commit is known. A
//! rerun after a kill — even `kill -9` — reads the recorded pages back, pins only the threads
//! not yet written, and asks for the page after the last one recorded: what was answered before
//! the kill is never asked for again (only a request in flight at the kill is).

use super::{GitHubArgs, block_on, exclude, now_rfc3339, open_journals, read_records};
use crate::exit::Exit;
use crate::output::{Journal, text};
use anyhow::{Context, bail};
use repoprobe_curate::{
    Answer, Category, PinnedCommit, Repository, Rule, Stage, Thread, ThreadProvenance,
};
use repoprobe_github::GitHub;
use repoprobe_github::queries::{DiscussionNode, discussion};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The repositories to harvest (`curate repos`' or `curate themes`' output).
    #[arg(value_name = "FILE")]
    repos: PathBuf,
    /// Discussions per page (at most 100; halved after a 502/504, as GitHub answers a query
    /// too slow to finish).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=100))]
    page_size: u32,
    /// The threads (JSONL, appended to; a rerun resumes); dropped threads go to
    /// <out>.excluded.ndjson, the pages read to <out>.pages.ndjson.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    github: GitHubArgs,
}

/// A line of the pages journal: one page of a category's answered discussions, as asked for
/// (`after`) and as answered.
#[derive(Debug, Serialize, Deserialize)]
struct PageRecord {
    repo: String,
    category_id: String,
    after: Option<String>,
    end_cursor: Option<String>,
    has_next: bool,
    total_count: u64,
    fetched_at: String,
    nodes: Vec<Value>,
}

fn page_key(v: &Value) -> Option<String> {
    v.get("nodes")?;
    Some(format!(
        "{}\n{}\n{}",
        text(v, "repo")?,
        text(v, "category_id")?,
        text(v, "after").unwrap_or_default()
    ))
}

/// What a run did.
#[derive(Default)]
struct Counts {
    written: usize,
    excluded: usize,
    pages: usize,
    pages_read_back: usize,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let (repos, bad) = read_records::<Repository>(&a.repos, "repository")?;
    if repos.is_empty() {
        bail!("no repository record in {} (see above)", a.repos.display());
    }
    let mut gh = a.github.client()?;
    let (mut out, mut excluded) = open_journals(
        &a.out,
        |v| {
            v.get("answer")?;
            text(v, "key")
        },
        "thread",
    )?;
    let pages_path = crate::output::beside(&a.out, "pages.ndjson");
    let mut pages = Journal::open_beside(&pages_path, page_key)?;
    pages.report("page");
    let mut recorded = read_pages(&pages_path)?;
    let before = out.done.len();
    let mut pins = written_pins(&a.out);
    let mut counts = Counts::default();
    let mut page_size = a.page_size;
    let stopped = block_on(async {
        // In the runtime: the signal stream needs its reactor.
        let mut term = crate::run_files::stop::terminate().context("cannot watch for SIGTERM")?;
        let work = async {
            for (_, repo) in &repos {
                for cat in repo.kept_categories() {
                    let mut h = Harvest {
                        gh: &mut gh,
                        out: &mut out,
                        excluded: &mut excluded,
                        repo,
                        cat,
                        counts: &mut counts,
                        pins: &mut pins,
                    };
                    let done = recorded
                        .remove(&(repo.repo.clone(), cat.id.clone()))
                        .unwrap_or_default();
                    h.category(done, &mut pages, &mut page_size).await?;
                }
            }
            anyhow::Ok(())
        };
        // SIGTERM (a cluster's preemption) drops the work at its next await: every record is
        // written whole between two awaits, so a rerun resumes where this one stopped.
        tokio::select! {
            r = work => r.map(|()| false),
            _ = term.recv() => Ok(true),
        }
    })??;
    eprintln!(
        "curate harvest: {} thread(s) written{}, {} excluded ({}); {} page(s) asked for, {} read \
         back from {}; {} requests, {} points",
        counts.written,
        if before > 0 {
            format!(" ({before} before)")
        } else {
            String::new()
        },
        counts.excluded,
        excluded.path.display(),
        counts.pages,
        counts.pages_read_back,
        pages_path.display(),
        gh.stats.requests,
        gh.stats.cost
    );
    if stopped {
        eprintln!(
            "curate harvest: stopped by SIGTERM; everything written is whole: exit {} asks for \
             this task to be run again, which resumes here",
            Exit::Requeue as u8
        );
        return Ok(Exit::Requeue);
    }
    Ok(if bad > 0 {
        Exit::InvalidRecords
    } else {
        Exit::Ok
    })
}

/// The pages recorded so far, by (repository, category), in the order written.
fn read_pages(
    path: &std::path::Path,
) -> anyhow::Result<HashMap<(String, String), Vec<PageRecord>>> {
    let mut by = HashMap::<(String, String), Vec<PageRecord>>::new();
    let text = match crate::input::read_text_if_present(path)
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        Some(t) => t,
        None => return Ok(by),
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // An unreadable line was reported on opening; its page is asked for again.
        if let Ok(p) = serde_json::from_str::<PageRecord>(line) {
            by.entry((p.repo.clone(), p.category_id.clone()))
                .or_default()
                .push(p);
        }
    }
    Ok(by)
}

/// One category of one repository being harvested.
struct Harvest<'a> {
    gh: &'a mut GitHub,
    out: &'a mut Journal<String>,
    excluded: &'a mut Journal<String>,
    repo: &'a Repository,
    cat: &'a Category,
    counts: &'a mut Counts,
    pins: &'a mut Pins,
}

/// Commits known by (repository, time): threads whose answers were chosen at the same second
/// share one question to GitHub, in this run and after a resume.
type Pins = HashMap<(String, String), PinnedCommit>;

/// The commits of the threads already written.
fn written_pins(out: &std::path::Path) -> Pins {
    let text = crate::input::read_text_if_present(out)
        .ok()
        .flatten()
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Thread>(l).ok())
        .map(|t| ((t.repo, t.answer.chosen_at), t.commit))
        .collect()
}

impl Harvest<'_> {
    /// The pages recorded before, then the pages after them.
    async fn category(
        &mut self,
        recorded: Vec<PageRecord>,
        pages: &mut Journal<String>,
        page_size: &mut u32,
    ) -> anyhow::Result<()> {
        let (mut after, mut more) = match recorded.last() {
            Some(p) => (p.end_cursor.clone(), p.has_next),
            None => (None, true),
        };
        for p in &recorded {
            self.counts.pages_read_back += 1;
            for node in &p.nodes {
                let d = discussion(node)?;
                self.thread(d).await?;
            }
        }
        while more {
            let page = self
                .gh
                .discussions(&self.repo.repo, &self.cat.id, page_size, after.as_deref())
                .await?;
            // Every node is read before the page is recorded: a page recorded is one a rerun
            // can work from.
            let nodes: Vec<DiscussionNode> = page
                .nodes
                .iter()
                .map(discussion)
                .collect::<Result<_, _>>()?;
            if page.page.has_next_page
                && (page.page.end_cursor.is_none() || page.page.end_cursor == after)
            {
                bail!(
                    "{}: the discussions of category {:?} do not advance past cursor {:?}",
                    self.repo.repo,
                    self.cat.name,
                    after
                );
            }
            pages.append(&PageRecord {
                repo: self.repo.repo.clone(),
                category_id: self.cat.id.clone(),
                after: after.clone(),
                end_cursor: page.page.end_cursor.clone(),
                has_next: page.page.has_next_page,
                total_count: page.total_count,
                fetched_at: now_rfc3339(),
                nodes: page.nodes,
            })?;
            self.counts.pages += 1;
            for d in nodes {
                self.thread(d).await?;
            }
            more = page.page.has_next_page;
            after = page.page.end_cursor;
        }
        Ok(())
    }

    /// A discussion: pinned and written, or excluded with why; nothing when written before.
    async fn thread(&mut self, d: DiscussionNode) -> anyhow::Result<()> {
        let repo = &self.repo.repo;
        let key = Thread::key_of(repo, d.number);
        if self.out.done.contains(&key) || self.excluded.done.contains(&key) {
            return Ok(());
        }
        let (Some(answer), Some(chosen_at)) = (d.answer, d.answer_chosen_at) else {
            self.counts.excluded += 1;
            return exclude(
                self.excluded,
                Stage::Harvest,
                &key,
                repo,
                Rule::NoAnswer,
                format!(
                    "{key} is listed as answered but its accepted answer is not there \
                     (deleted, or hidden from the token)"
                ),
            );
        };
        let known = self.pins.get(&(repo.clone(), chosen_at.clone())).cloned();
        let pinned = match known {
            Some(p) => Some(p),
            None => self
                .gh
                .pinned_commit(repo, &chosen_at)
                .await?
                .map(|p| PinnedCommit {
                    oid: p.oid,
                    committed_at: p.committed_at,
                    branch: p.branch,
                }),
        };
        let Some(pinned) = pinned else {
            self.counts.excluded += 1;
            return exclude(
                self.excluded,
                Stage::Harvest,
                &key,
                repo,
                Rule::NoCommit,
                format!(
                    "{key}: the default branch has no commit at {chosen_at}, when the answer \
                     was chosen"
                ),
            );
        };
        self.pins
            .insert((repo.clone(), chosen_at.clone()), pinned.clone());
        let thread = Thread {
            key: key.clone(),
            repo: repo.clone(),
            category: d.category.map_or_else(|| self.cat.name.clone(), |c| c.name),
            number: d.number,
            url: d.url.clone(),
            title: d.title,
            body: d.body,
            author: d.author.map(|a| a.login),
            created_at: d.created_at,
            upvotes: d.upvote_count,
            answer: Answer {
                body: answer.body,
                author: answer.author.map(|a| a.login),
                author_association: answer.author_association,
                chosen_at,
                url: answer.url,
            },
            commit: pinned,
            language: self.repo.language.clone().unwrap_or_default(),
            theme: self.repo.theme.clone().unwrap_or_default(),
            provenance: ThreadProvenance {
                source_url: d.url,
                api_url: self.gh.url().to_string(),
                harvested_at: now_rfc3339(),
                repository_id: self.repo.id.clone(),
                category_id: self.cat.id.clone(),
                discussion_id: d.id,
                answer_id: answer.id,
            },
        };
        self.out.append(&thread)?;
        self.out.done.insert(key);
        self.counts.written += 1;
        Ok(())
    }
}
