//! `repoprobe curate enhance`: a classified thread's external links are found (the core's
//! `curate::links`: internal references left out), fetched by the hostile-input-safe fetcher
//! (`repoprobe_fetch`: every address checked after DNS and each redirect, caps, text only), and
//! the model judges each page, summarises the relevant ones and rewrites question and answer so
//! that they stand alone (the core's `protocol::curate_enhance`). Each line written is a pair
//! `make-checklist` reads, with its `curation` block.
//!
//! Threads without a link to fetch, and threads none of whose links gave a page, pass with
//! their texts as harvested and no model call. Every page fetched is journaled in
//! `<out>.pages.ndjson` before it is used: a rerun fetches nothing twice. The model calls run on
//! the loop of every live call (`crate::live`).

use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task};
use crate::output::{Journal, text};
use crate::run_files::keys::PairKey;
use crate::run_files::manifest::RunSpec;
use anyhow::{Context, bail};
use repoprobe_curate::links::thread_links;
use repoprobe_curate::pair::question_text;
use repoprobe_curate::protocol::enhance::{Enhanced, PROMPT_VERSION, Page, ThreadWithPages};
use repoprobe_curate::{ClassifiedThread, Enhancement, LinkSource, Pair, SkippedLink};
use repoprobe_fetch::{FetchLimits, Fetched, Fetcher, HostPort, allowed};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The classified threads (`curate classify`'s output).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    /// The only way past the fetcher's address check (loopback, private, link-local and
    /// metadata addresses are refused): exactly this host and port, for tests. Repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    allow_host: Vec<HostPort>,
    /// Links fetched per thread at most (in order of appearance; the rest are recorded as
    /// skipped).
    #[arg(long, default_value_t = 5)]
    max_links: usize,
    /// Pages fetched at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    fetch_concurrency: u32,
    /// Seconds one page may take (connecting, redirects and body).
    #[arg(long, default_value_t = 20.0)]
    fetch_timeout_s: f64,
    /// Bytes of a page's body read at most; a larger page gives no text.
    #[arg(long, default_value_t = 2 * 1024 * 1024)]
    max_page_bytes: u64,
    #[command(flatten)]
    live: LiveArgs,
}

/// A line of `<out>.pages.ndjson`: a link as fetched, with the page's text.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PageRecord {
    source: LinkSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

fn page_key(v: &serde_json::Value) -> Option<String> {
    text(v.get("source")?, "url")
}

/// A thread on its way: its links, and what was left out.
struct Planned {
    thread: ClassifiedThread,
    urls: Vec<String>,
    skipped: Vec<SkippedLink>,
}

struct EnhanceJob {
    key: PairKey,
    thread: ClassifiedThread,
    ask: ThreadWithPages,
    /// Every link's record, in order; the pages asked about are those with text.
    sources: Vec<LinkSource>,
    skipped: Vec<SkippedLink>,
    model: String,
}

impl Task for EnhanceJob {
    type Key = PairKey;
    type Value = Pair;
    type Protocol<'a> = &'a ThreadWithPages;
    fn key(&self) -> &PairKey {
        &self.key
    }
    fn protocol(&self) -> &ThreadWithPages {
        &self.ask
    }
    fn value(&self, e: Enhanced) -> Pair {
        enhanced_pair(self, &e)
    }
    /// A verdict per page, and the question and answer written again.
    fn expected_output_tokens(&self) -> u64 {
        1200
    }
}

/// A line of `--out`: the pair, then the call's provenance (when a model was asked).
#[derive(Serialize)]
struct PairRecord<'a> {
    #[serde(flatten)]
    pair: &'a Pair,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    provenance: Option<Provenance<'a>>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    check_flags(&a)?;
    if a.live.estimate {
        return estimate(&a);
    }
    let settings = a.live.settings()?;
    let (threads, bad) = super::read_records::<ClassifiedThread>(&a.input, "classified thread")?;
    if threads.is_empty() && bad == 0 {
        bail!("no classified thread in {}", a.input.display());
    }
    let model = a.live.model().to_string();
    let mut live = a.live.start(
        settings,
        PairKey::of,
        "pair",
        PROMPT_VERSION,
        RunSpec::new(crate::run_files::kind::RunKind::CurateEnhance).input("in", &a.input),
    )?;
    let mut pages = Journal::open_beside(
        &crate::output::beside(&live.out.path, "pages.ndjson"),
        page_key,
    )?;
    pages.report("page");
    // The threads to do, each key once, with the links to fetch.
    let (mut planned, mut already_done, mut seen) = (Vec::new(), 0usize, HashSet::new());
    for (_, thread) in threads {
        let key = PairKey {
            id: thread.thread.key.clone(),
        };
        if !seen.insert(key.clone()) {
            continue;
        }
        if live.is_done(&key) {
            already_done += 1;
            continue;
        }
        planned.push(plan(thread, a.max_links, &a.allow_host));
    }
    let known = fetch_pages(&a, &planned, &mut pages)?;
    // Threads with no page pass as harvested; the others are asked.
    let (mut jobs, mut unchanged) = (Vec::new(), 0usize);
    for p in planned {
        match job(p, &known, &model) {
            Ok(job) => jobs.push(job),
            Err(unchanged_pair) => {
                let (key, pair) = *unchanged_pair;
                live.out.append(&PairRecord {
                    pair: &pair,
                    provenance: None,
                })?;
                live.out.done.insert(key);
                unchanged += 1;
            }
        }
    }
    let tally = live.run(jobs, |out, key, pair, provenance| {
        out.append(&PairRecord {
            pair: &pair,
            provenance: Some(provenance),
        })?;
        out.done.insert(key.clone());
        Ok(())
    })?;
    if unchanged > 0 {
        eprintln!(
            "curate enhance: {unchanged} thread(s) with no page to merge written as harvested"
        );
    }
    Ok(live.finish(
        "curate enhance",
        "enhanced",
        already_done,
        &[],
        &tally,
        bad > 0,
    ))
}

/// The flags no run can go with.
fn check_flags(a: &Args) -> anyhow::Result<()> {
    if a.input == a.live.run.out {
        bail!("the input FILE and --out are the same file");
    }
    if !(a.fetch_timeout_s.is_finite() && a.fetch_timeout_s > 0.0) {
        bail!("--fetch-timeout-s must be a positive number of seconds");
    }
    Ok(())
}

/// The text assumed of a page not fetched yet, for `--estimate` (bytes; at most
/// `--max-page-bytes`).
const ESTIMATE_PAGE_BYTES: usize = 12_000;

/// `--estimate`: each thread not yet done with a link to fetch is one call, its pages those
/// already journaled in `<out>.pages.ndjson` or, for a link not fetched yet, a page of
/// [`ESTIMATE_PAGE_BYTES`] (every link assumed to give one: an upper bound); the prompt is the
/// very one the run would send. Nothing is fetched, sent or written, and no key is read.
fn estimate(a: &Args) -> anyhow::Result<Exit> {
    let (threads, _) = super::read_records::<ClassifiedThread>(&a.input, "classified thread")?;
    let done = a.live.done_keys(PairKey::of)?;
    let out = a.live.run.layout()?.out;
    let mut known = read_pages(&crate::output::beside(&out, "pages.ndjson"))?;
    let assumed = "x".repeat(ESTIMATE_PAGE_BYTES.min(a.max_page_bytes as usize));
    let (mut jobs, mut already, mut seen) = (Vec::new(), 0, HashSet::new());
    for (_, thread) in threads {
        let key = PairKey {
            id: thread.thread.key.clone(),
        };
        if !seen.insert(key.clone()) {
            continue;
        }
        if done.contains(&key) {
            already += 1;
            continue;
        }
        let p = plan(thread, a.max_links, &a.allow_host);
        for u in &p.urls {
            known.entry(u.clone()).or_insert_with(|| PageRecord {
                source: LinkSource {
                    url: u.clone(),
                    final_url: None,
                    fetched_at: String::new(),
                    status: None,
                    content_type: None,
                    bytes: None,
                    sha256: None,
                    error: None,
                    relevant: None,
                    summary: None,
                },
                text: Some(assumed.clone()),
            });
        }
        if let Ok(job) = job(p, &known, a.live.model()) {
            jobs.push(job);
        }
    }
    a.live.print_estimate("curate enhance", &jobs, already)?;
    let note = format!(
        "  assumed: every link not fetched yet gives a page of {} bytes of text (an upper \
         bound: threads whose links give no page pass with no call)\n",
        assumed.len()
    );
    crate::stdout::write(note.as_bytes())?;
    Ok(Exit::Ok)
}

/// Every page of the planned links, by URL: those journaled by earlier runs, and every other
/// link fetched now, each page journaled as it comes.
fn fetch_pages(
    a: &Args,
    planned: &[Planned],
    pages: &mut Journal<String>,
) -> anyhow::Result<HashMap<String, PageRecord>> {
    let mut known: HashMap<String, PageRecord> = read_pages(&pages.path)?;
    let wanted: Vec<String> = planned
        .iter()
        .flat_map(|p| p.urls.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|u| !known.contains_key(u))
        .collect();
    if wanted.is_empty() {
        return Ok(known);
    }
    let limits = FetchLimits {
        max_bytes: a.max_page_bytes,
        timeout: Duration::from_secs_f64(a.fetch_timeout_s),
        ..FetchLimits::default()
    };
    let fetcher = Arc::new(Fetcher::new(limits, a.allow_host.clone())?);
    eprintln!("curate enhance: fetching {} page(s)", wanted.len());
    fetch_all(&fetcher, wanted, a.fetch_concurrency as usize, |f| {
        let record = page_record(f);
        pages.append(&record)?;
        pages.done.insert(record.source.url.clone());
        known.insert(record.source.url.clone(), record);
        Ok(())
    })?;
    Ok(known)
}

/// A planned thread's call to the model with its pages; or, when none of its links gave a page,
/// its key and the pair as harvested (`Err`).
fn job(
    p: Planned,
    known: &HashMap<String, PageRecord>,
    model: &str,
) -> Result<EnhanceJob, Box<(PairKey, Pair)>> {
    let sources: Vec<LinkSource> = p
        .urls
        .iter()
        .filter_map(|u| known.get(u).map(|r| r.source.clone()))
        .collect();
    let texts: Vec<Page> = p
        .urls
        .iter()
        .filter_map(|u| {
            let r = known.get(u)?;
            Some(Page {
                url: u.clone(),
                text: r.text.clone()?,
            })
        })
        .collect();
    let key = PairKey {
        id: p.thread.thread.key.clone(),
    };
    let question = question_text(&p.thread.thread);
    let answer = p.thread.thread.answer.body.trim().to_string();
    if texts.is_empty() {
        let enhancement = Enhancement {
            original_question: question,
            original_answer: answer,
            sources,
            skipped: p.skipped,
            prompt_version: None,
            model: None,
        };
        return Err(Box::new((key, Pair::unchanged(&p.thread, enhancement))));
    }
    Ok(EnhanceJob {
        key,
        ask: ThreadWithPages {
            repo: p.thread.thread.repo.clone(),
            category: p.thread.question_category.clone(),
            question,
            answer,
            pages: texts,
        },
        thread: p.thread,
        sources,
        skipped: p.skipped,
        model: model.to_string(),
    })
}

/// The links of a thread to fetch (question, then answer, each once, at most `max`), and
/// those left out with why. A link left out as internal whose host and port `--allow-host`
/// names is fetched (the tests' page servers are on loopback).
fn plan(thread: ClassifiedThread, max: usize, allow: &[HostPort]) -> Planned {
    let links = thread_links(&thread.thread);
    let (mut urls, mut skipped) = (Vec::new(), Vec::new());
    let mut candidates: Vec<String> = links.fetch.into_iter().map(|l| l.url).collect();
    for l in links.left_out {
        match allowed(&l.url, allow) {
            Some(url) if !candidates.contains(&url) => candidates.push(url),
            Some(_) => {}
            None => skipped.push(SkippedLink {
                url: l.url,
                reason: l.reason,
            }),
        }
    }
    for url in candidates {
        if urls.len() >= max {
            skipped.push(SkippedLink {
                url,
                reason: format!("over --max-links {max}"),
            });
        } else {
            urls.push(url);
        }
    }
    Planned {
        thread,
        urls,
        skipped,
    }
}

/// The pair of a thread whose pages the model judged.
fn enhanced_pair(job: &EnhanceJob, e: &Enhanced) -> Pair {
    let mut sources = job.sources.clone();
    for (page, verdict) in job.ask.pages.iter().zip(&e.pages) {
        if let Some(s) = sources.iter_mut().find(|s| s.url == page.url) {
            s.relevant = Some(verdict.relevant);
            s.summary = verdict.summary.clone();
        }
    }
    let enhancement = Enhancement {
        original_question: job.ask.question.clone(),
        original_answer: job.ask.answer.clone(),
        sources,
        skipped: job.skipped.clone(),
        prompt_version: Some(PROMPT_VERSION.to_string()),
        model: Some(job.model.clone()),
    };
    Pair::of(
        &job.thread,
        e.question.clone(),
        e.answer.clone(),
        enhancement,
    )
}

/// The pages journaled by earlier runs, by URL.
fn read_pages(path: &std::path::Path) -> anyhow::Result<HashMap<String, PageRecord>> {
    let mut out = HashMap::new();
    let text = match crate::input::read_text_if_present(path)
        .with_context(|| format!("cannot read {}", path.display()))?
    {
        Some(t) => t,
        None => return Ok(out),
    };
    for line in text.lines() {
        // A torn last line was cut when the journal opened; anything else unreadable is
        // fetched again.
        if let Ok(r) = serde_json::from_str::<PageRecord>(line) {
            out.insert(r.source.url.clone(), r);
        }
    }
    Ok(out)
}

/// A fetch as the pages journal keeps it.
fn page_record(f: Fetched) -> PageRecord {
    PageRecord {
        source: LinkSource {
            url: f.url,
            final_url: f.final_url,
            fetched_at: super::now_rfc3339(),
            status: f.status,
            content_type: f.content_type,
            bytes: f.bytes,
            sha256: f.sha256,
            error: f.error,
            relevant: None,
            summary: None,
        },
        text: f.text,
    }
}

/// Fetches every URL, at most `concurrency` at once, handing each result to `done` as it
/// comes (on this thread).
fn fetch_all(
    fetcher: &Arc<Fetcher>,
    urls: Vec<String>,
    concurrency: usize,
    mut done: impl FnMut(Fetched) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    super::block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let mut urls = urls.into_iter();
        loop {
            while set.len() < concurrency {
                let Some(url) = urls.next() else { break };
                let f = Arc::clone(fetcher);
                set.spawn(async move { f.fetch(&url).await });
            }
            let Some(joined) = set.join_next().await else {
                return Ok(());
            };
            done(joined.context("a fetch stopped unexpectedly")?)?;
        }
    })?
}
