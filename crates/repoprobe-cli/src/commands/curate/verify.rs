//! `repoprobe curate verify`: the quality check of paper §3.2 (Figure 2) on `make-checklist`'s
//! output, per question (docs/curate.md#curate-verify):
//!
//! 1. **Links** (no model call): a question with `external_context` needs every link
//!    `curate enhance` judged relevant read, and at least one (`curate::verify::links_unresolved`).
//! 2. **Answerability**: the built-in read-only agent, in a worktree at the question's pinned
//!    commit, is given `curate-verify-v1` and ends with one JSON object grounding each knowledge
//!    item; an invalid object is sent back (`builtin::run_checked`). Every evidence path is then
//!    asked of the commit's tree (`RepoSource::tree`, as `repoprobe evidence` does) and its lines
//!    of the file: an entry that does not hold grounds nothing (`curate::verify::ground`).
//!
//! A question that passes is a candidate (`--out`): a benchmark question with the verified
//! evidence and its `curation` block (`verify` set, `make-checklist`'s provenance moved into
//! `checklist`). One that fails is excluded (`links-unresolved`, `unanswerable`) with the
//! verdict in its reason. A key that could not be decided (checkout, model API, limits, a reply
//! still invalid) is a failure record, tried again by a rerun. The rules are the core's; this
//! module reads, checks out, runs, asks the tree and writes.

use super::{exclude, open_journals};
use crate::exit::Exit;
use crate::live::agent::{self, AgentCommand, Estimated, Execute, Settled};
use crate::live::events::{Event, Reporter};
use crate::live::task::{Failed, Outcome};
use crate::live::{ApiArgs, RunArgs};
use crate::output::{Journal, text};
use crate::repos::RepoArgs;
use crate::run_files::Layout;
use crate::run_files::manifest::RunSpec;
use anyhow::{Context, bail};
use repoprobe_agent::builtin::Limits;
use repoprobe_agent::run::{self, Agent, Cause, CouldNotRun, Request, RunIds, Verdict};
use repoprobe_agent::tools::Sandbox;
use repoprobe_agent::workspace::{RepoSource, RepoTree, Worktree};
use repoprobe_core::model::EvidencePath;
use repoprobe_core::text::terminal_safe_lines;
use repoprobe_core::{Question, validate};
use repoprobe_curate::protocol::verify::{parse_reply, prompt, reask_message};
use repoprobe_curate::verify::{
    Grounding, PROMPT_VERSION, Verification, candidate, checklist_provenance, ground,
    links_unresolved,
};
use repoprobe_curate::{Curation, Rule, Stage};
use repoprobe_llm::Client;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The questions with their checklists (`make-checklist`'s output, each with its
    /// `curation` block).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    #[command(flatten)]
    api: ApiArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    repo: RepoArgs,
    /// Where the worktrees are made [default: <repos>/worktrees].
    #[arg(long)]
    worktrees: Option<PathBuf>,
    /// Wall-clock limit of one question's agent run in seconds.
    #[arg(long, default_value_t = 900.0)]
    agent_timeout_s: f64,
    /// Most model turns of one question's run (re-asks included).
    #[arg(long, default_value_t = 40)]
    max_turns: u32,
    /// Most tokens of one question's run, input and output over all turns.
    #[arg(long, default_value_t = 2_000_000)]
    max_run_tokens: u64,
    /// Re-asks after an invalid final reply (the violations are sent back in the same
    /// conversation), before the key fails.
    #[arg(long, default_value_t = 2)]
    max_retries: u32,
    /// Print the agent runs this would make, their tokens and cost under the assumptions it
    /// names (--estimate-turns), and exit: no agent runs, nothing is sent or written, no key is
    /// read.
    #[arg(long)]
    estimate: bool,
    /// The model turns a run is assumed to take, for --estimate.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    estimate_turns: u32,
}

/// A question to verify, as read.
struct Job {
    raw: Map<String, Value>,
    question: Arc<Question>,
    curation: Curation,
}

/// What every run shares.
struct Ctx {
    agent: Agent,
    source: RepoSource,
    worktrees: PathBuf,
    transcripts: PathBuf,
    max_reasks: u32,
    model: String,
}

/// What was decided of a question whose agent ran.
enum Decision {
    /// The candidate record.
    Kept(Value),
    /// The question's repository and the excluded record's reason.
    Unanswerable { repo: String, reason: String },
}

/// The counts of the closing line.
#[derive(Default)]
struct Counts {
    kept: usize,
    links: usize,
    unanswerable: usize,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    agent::run_agent(a)
}

impl AgentCommand for Args {
    const NAME: &'static str = "curate verify";
    type Plan = VerifyRun;

    agent::flags!();

    fn check(&self) -> anyhow::Result<()> {
        if self.input == self.run.out {
            bail!("the input FILE and --out are the same file");
        }
        Ok(())
    }

    /// `--estimate`: each question of this shard not yet decided (kept or excluded), and whose
    /// links are resolved, is one agent run of the verify prompt, modelled as `answer --estimate`
    /// models a run (`live::estimate::agent_run_of`).
    fn estimate(&self, turns: u64) -> anyhow::Result<Estimated> {
        use crate::live::estimate::{Estimate, agent_run_of};
        let layout = self.run.layout()?;
        let (jobs, _) = read_jobs(&self.input)?;
        let out = crate::output::done_keys(&layout.out, |v| text(v, "id"))?;
        let excluded =
            crate::output::done_keys(&super::excluded_path(&layout.out), super::excluded_key)?;
        let (mut e, mut already) = (Estimate::default(), 0);
        for job in jobs
            .iter()
            .filter(|j| layout.shard.is_none_or(|s| s.owns(&j.question.id)))
        {
            let q = &job.question;
            if out.contains(&q.id) || excluded.contains(&q.id) {
                already += 1;
                continue;
            }
            if links_unresolved(q, &job.curation.enhance).is_some() {
                continue;
            }
            let p = prompt(&Verification { question: q });
            e += agent_run_of(p.system.len() + p.user.len(), turns);
        }
        Ok(Estimated {
            runs: e,
            done: already,
            input: "the verify prompt's bytes / 4 a turn, and the conversation so far, assumed below",
            not_counted: "re-asks not counted",
        })
    }

    fn settle(self, settled: Settled) -> anyhow::Result<VerifyRun> {
        let (settings, key) = self.api.settings(None)?;
        let spec = RunSpec::new(crate::run_files::kind::RunKind::CurateVerify)
            .input("in", &self.input)
            .set("prompt_version", PROMPT_VERSION)
            .set("model", self.api.model())
            .set("max_turns", self.max_turns)
            .set("max_retries", self.max_retries);
        Ok(VerifyRun {
            concurrency: settled.concurrency,
            price: settled.price,
            limits: settled.limits,
            source: settled.source,
            worktrees: settled.worktrees,
            max_reasks: self.max_retries,
            input: self.input,
            layout: settled.layout,
            settings,
            key,
            spec,
        })
    }
}

/// `curate verify`'s flags settled once, before any question is read or any agent runs: this
/// shard's files, the model's client settings and the run's limits, the manifest's spec. What
/// follows reads this, never the flags.
pub(crate) struct VerifyRun {
    input: PathBuf,
    layout: Layout,
    /// Keys worked on at once, and what the keys in flight get after SIGTERM.
    concurrency: (usize, Duration),
    price: Option<repoprobe_llm::price::Price>,
    settings: repoprobe_llm::Settings,
    key: repoprobe_llm::ApiKey,
    limits: Limits,
    source: RepoSource,
    worktrees: PathBuf,
    max_reasks: u32,
    spec: RunSpec,
}

impl Execute for VerifyRun {
    /// Reads the questions, joins the run, excludes by the links rule, runs the agent on every
    /// other question not yet decided that is this shard's, and prints the closing line.
    fn execute(self) -> anyhow::Result<Exit> {
        let model = self.settings.model.clone();
        let client = Arc::new(Client::new(self.settings, self.key)?);
        let (jobs, bad) = read_jobs(&self.input)?;
        let jobs = this_shards(&self.layout, &self.spec, jobs)?;
        let (mut out, mut excluded) = open_journals(
            &self.layout.out,
            |v| {
                v.get("curation")?;
                text(v, "id")
            },
            "candidate",
        )?;
        let mut failures: Journal<String> =
            Journal::open_beside(&self.layout.failures, |v| text(v, "id"))?;
        failures.report("failure");
        let ctx = Arc::new(Ctx {
            agent: Agent::Builtin {
                client: Arc::clone(&client),
                limits: self.limits,
            },
            source: self.source,
            worktrees: self.worktrees,
            transcripts: crate::output::beside(&self.layout.out, "transcripts"),
            max_reasks: self.max_reasks,
            model,
        });
        crate::input::create_dir_all(&ctx.transcripts)
            .with_context(|| format!("cannot create {}", ctx.transcripts.display()))?;
        let started = Instant::now();
        let mut counts = Counts::default();
        let (todo, already_done) = links_first(jobs, &out, &mut excluded, &mut counts)?;
        let futures = todo
            .into_iter()
            .map(|job| verify_one(Arc::clone(&ctx), job));
        let tally = agent::run_keys(
            self.concurrency,
            (self.price, 0),
            move || client.limiter().paused(),
            futures,
            |o, reporter| {
                let journals = (&mut out, &mut excluded, &mut failures);
                record(o, journals, &mut counts, reporter)
            },
        )?;
        let closing = Closing {
            counts: &counts,
            already_done,
            excluded: &excluded.path,
            failures: &failures.path,
            price: self.price,
        };
        eprintln!("{}", closing.line(&tally, started.elapsed()));
        if let Some(stopped) = &tally.stopped {
            eprintln!("curate verify: {}", stopped.line());
            return Ok(Exit::Requeue);
        }
        if bad > 0 {
            eprintln!(
                "{bad} record(s) of {} left out (see above)",
                self.input.display()
            );
        }
        Ok(if tally.failed > 0 || bad > 0 {
            Exit::InvalidRecords
        } else {
            Exit::Ok
        })
    }
}

/// This shard's questions (all of them without `--shard`), once this shard has joined the run:
/// its manifest counts every shard's keys, and each shard takes its own questions by the hash
/// every live command shards by.
fn this_shards(layout: &Layout, spec: &RunSpec, jobs: Vec<Job>) -> anyhow::Result<Vec<Job>> {
    let ids: Vec<String> = jobs.iter().map(|j| j.question.id.clone()).collect();
    crate::run_files::enlist(layout, spec, ids.iter())?;
    let (jobs, elsewhere): (Vec<Job>, Vec<Job>) = jobs
        .into_iter()
        .partition(|j| layout.shard.is_none_or(|s| s.owns(&j.question.id)));
    if !elsewhere.is_empty() {
        eprintln!(
            "curate verify: {} question(s) belong to the other shards",
            elsewhere.len()
        );
    }
    Ok(jobs)
}

/// The questions not yet decided, after the links rule (no model call) excluded those whose
/// relevant links were not read; and how many were decided already.
fn links_first(
    jobs: Vec<Job>,
    out: &Journal<String>,
    excluded: &mut Journal<String>,
    counts: &mut Counts,
) -> anyhow::Result<(Vec<Job>, usize)> {
    let (mut todo, mut already_done) = (Vec::new(), 0);
    for job in jobs {
        let q = &job.question;
        if out.done.contains(&q.id) || excluded.done.contains(&q.id) {
            already_done += 1;
        } else if let Some(why) = links_unresolved(q, &job.curation.enhance) {
            exclude(
                excluded,
                Stage::Verify,
                &q.id,
                &q.repo.name,
                Rule::LinksUnresolved,
                format!("{}: {why}", q.id),
            )?;
            counts.links += 1;
        } else {
            todo.push(job);
        }
    }
    Ok((todo, already_done))
}

/// What the closing line of a run says besides its tally.
struct Closing<'a> {
    counts: &'a Counts,
    already_done: usize,
    excluded: &'a Path,
    failures: &'a Path,
    price: Option<repoprobe_llm::price::Price>,
}

impl Closing<'_> {
    fn line(&self, tally: &crate::live::Tally, elapsed: Duration) -> String {
        let c = self.counts;
        let failed = if tally.failed > 0 {
            format!(
                " ({}see {}; a rerun tries them again)",
                crate::live::could_not_run(tally),
                self.failures.display()
            )
        } else {
            String::new()
        };
        let cost = self.price.map_or(String::new(), |p| {
            format!("; ≈${:.2} estimated", p.cost(tally.tokens))
        });
        format!(
            "curate verify: {} kept, {} dropped ({} links-unresolved, {} unanswerable; {}), \
             {} failed{failed}, {} already done; {} calls, {} re-asks, tokens {} in, {} out{cost}; \
             {:.1} s",
            c.kept,
            c.links + c.unanswerable,
            c.links,
            c.unanswerable,
            self.excluded.display(),
            tally.failed,
            self.already_done,
            tally.calls,
            tally.reasks,
            tally.tokens.input_tokens,
            tally.tokens.output_tokens,
            elapsed.as_secs_f64(),
        )
    }
}

/// The questions of `path`, each a valid benchmark question with a valid `curation` block whose
/// commit is the question's; every other record is printed (file, line, why) and counted.
fn read_jobs(path: &Path) -> anyhow::Result<(Vec<Job>, usize)> {
    let records = crate::input::read_json_records(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let (mut jobs, mut bad) = (Vec::new(), 0);
    let mut seen = HashSet::new();
    for (location, record) in records {
        let parsed = record
            .map_err(|e| e.to_string())
            .and_then(|v| job_of(v).map_err(|e| e.join("; ")));
        let why = match parsed {
            Ok(job) if seen.insert(job.question.id.clone()) => {
                jobs.push(job);
                continue;
            }
            Ok(job) => format!(
                "question id {} is used twice: the first is kept",
                repoprobe_core::text::quote(&job.question.id)
            ),
            Err(e) => e,
        };
        bad += 1;
        eprintln!(
            "  {}: {location}: {}",
            path.display(),
            terminal_safe_lines(&why)
        );
    }
    Ok((jobs, bad))
}

fn job_of(v: Value) -> Result<Job, Vec<String>> {
    let Value::Object(raw) = v else {
        return Err(vec!["not a JSON object".into()]);
    };
    let mut q: Question = serde_json::from_value(Value::Object(raw.clone()))
        .map_err(|e| vec![format!("not a benchmark question: {e}")])?;
    let errs = validate::question(&q);
    if !errs.is_empty() {
        return Err(errs.into_iter().map(|p| p.message).collect());
    }
    // Unusable evidence entries are left out of the candidate, as the loader would.
    for (at, why) in validate::evidence(&mut q) {
        eprintln!(
            "  note: {at}: {}",
            terminal_safe_lines(&why.replace("the entry is ignored", "left out"))
        );
    }
    let curation = match raw.get("curation") {
        None | Some(Value::Null) => {
            return Err(vec![format!(
                "question {}: no `curation` block (a question made by `curate enhance` and \
                 `make-checklist` carries one)",
                repoprobe_core::text::quote(&q.id)
            )]);
        }
        Some(c) => serde_json::from_value::<Curation>(c.clone()).map_err(|e| {
            vec![format!(
                "question {}: the `curation` block is not one: {e}",
                repoprobe_core::text::quote(&q.id)
            )]
        })?,
    };
    if curation.commit.oid != q.repo.commit.trim() {
        return Err(vec![format!(
            "question {}: repo.commit {} is not curation.commit.oid {}",
            repoprobe_core::text::quote(&q.id),
            repoprobe_core::text::quote(&q.repo.commit),
            repoprobe_core::text::quote(&curation.commit.oid)
        )]);
    }
    Ok(Job {
        raw,
        question: Arc::new(q),
        curation,
    })
}

/// Does one key: the tree and a worktree at the pinned commit, the agent crate's one run with
/// the final reply checked (and sent back), its trajectory kept, then the decision from the
/// run's verdict: a run that could not happen is a failure to retry; an agent that gave no
/// reply (a limit) found no grounding, so the question is unanswerable by it; a reply is
/// checked, its evidence asked of the tree and the files, and the worktree removed.
async fn verify_one(ctx: Arc<Ctx>, job: Job) -> Outcome<String, Decision> {
    let q = Arc::clone(&job.question);
    let mut o = Outcome::begun(q.id.clone());
    let name = format!("verify__{}", crate::output::file_name_part(&q.id));
    let tree = {
        let (source, repo) = (ctx.source.clone(), q.repo.clone());
        tokio::task::spawn_blocking(move || source.tree(&repo)).await
    };
    let tree = match tree {
        Ok(Ok(tree)) => tree,
        Ok(Err(e)) => {
            let why = format!("the repository could not be checked out: {e}");
            o.result = Err(Failed::could_not_run(CouldNotRun::new(
                Cause::Checkout,
                why,
            )));
            return o;
        }
        Err(e) => {
            let why = format!("the checkout stopped unexpectedly: {e}");
            o.result = Err(Failed::could_not_run(CouldNotRun::new(
                Cause::Environment,
                why,
            )));
            return o;
        }
    };
    let wt = match run::checkout(&ctx.source, &q.repo, &ctx.worktrees.join(&name)).await {
        Ok(wt) => wt,
        Err(c) => {
            o.result = Err(Failed::could_not_run(c));
            return o;
        }
    };
    let v = Verification { question: &q };
    let count = v.items().len();
    let check = |text: &str| {
        parse_reply(&v, text)
            .map(|_| ())
            .map_err(|e| reask_message(count, &e))
    };
    let req = Request {
        question: &q,
        prompt: prompt(&v),
        prompt_version: PROMPT_VERSION,
        check: Some(&check),
        max_reasks: ctx.max_reasks,
        keep_worktree: true,
        ids: RunIds {
            question_id: &q.id,
            model: &ctx.model,
            attempt: 0,
        },
    };
    let scratch = ctx.worktrees.join(format!("{name}.scratch"));
    let mut run = run::answer(&ctx.agent, &req, wt, &scratch).await;
    (o.tokens, o.http_retries, o.calls, o.reasks) =
        (run.tokens, run.http_retries, run.turns, run.reasks);
    if let Err(c) = agent::write_files(&ctx.transcripts, &name, &run) {
        // The trajectory is for a reviewer to see what a verdict rests on: said, not fatal.
        eprintln!("warning: {}", terminal_safe_lines(&c.why));
    }
    let wt = run.worktree.take();
    o.result = match (run.verdict, &wt) {
        (Verdict::CouldNotRun(c), _) => Err(Failed::could_not_run(c)),
        (Verdict::AgentFailed(why), _) => Ok(Decision::Unanswerable {
            repo: q.repo.name.clone(),
            reason: format!(
                "{}: unanswerable at {} ({PROMPT_VERSION}, model {}): the agent gave no reply: {why}",
                q.id,
                short(&tree.commit),
                ctx.model
            ),
        }),
        (Verdict::Answered(text), Some(wt)) => {
            grounded(&ctx, &job, &tree, &v, wt, text, run.reasks)
        }
        (Verdict::Answered(_), None) => Err(Failed::could_not_run(CouldNotRun::new(
            Cause::Environment,
            "the worktree was not kept for the evidence check",
        ))),
    };
    if let Some(wt) = wt {
        remove(wt).await;
    }
    o
}

/// The decision on a question whose agent replied `text` after `reasks` re-asks: a reply
/// still invalid fails the key; a valid one is grounded in the tree and the worktree's files.
fn grounded(
    ctx: &Ctx,
    job: &Job,
    tree: &RepoTree,
    v: &Verification<'_>,
    wt: &Worktree,
    text: String,
    reasks: u32,
) -> Result<Decision, Failed> {
    let checks = match parse_reply(v, &text) {
        Ok(checks) => checks,
        Err(violations) => {
            return Err(Failed {
                violations,
                raw_reply: Some(text),
                ..Failed::refused(format!(
                    "the final reply was still invalid after {reasks} re-ask(s)"
                ))
            });
        }
    };
    let sandbox = Sandbox::new(&wt.path).map_err(|e| {
        Failed::could_not_run(CouldNotRun::new(
            Cause::Environment,
            format!("cannot open the worktree {}: {e}", wt.path.display()),
        ))
    })?;
    let g = ground(v, checks, |e| holds(tree, &sandbox, e));
    decide(ctx, job, tree, g)
}

/// The decision on a question whose reply was checked and grounded.
fn decide(ctx: &Ctx, job: &Job, tree: &RepoTree, g: Grounding) -> Result<Decision, Failed> {
    let q = &job.question;
    let verdict = g.verdict(&ctx.model);
    if !verdict.passed {
        return Ok(Decision::Unanswerable {
            repo: q.repo.name.clone(),
            reason: format!(
                "{}: unanswerable at {} ({PROMPT_VERSION}, model {}): {}",
                q.id,
                short(&tree.commit),
                ctx.model,
                g.unanswerable_reason()
            ),
        });
    }
    let mut curation = job.curation.clone();
    curation.verify = Some(verdict);
    if curation.checklist.is_none() {
        curation.checklist = checklist_provenance(&job.raw);
    }
    candidate(&job.raw, q, &g, &curation)
        .map(Decision::Kept)
        .map_err(|e| Failed::refused(format!("the candidate record could not be written: {e}")))
}

/// Whether an evidence entry holds at the commit: its path is in the commit's tree, and its
/// lines (when given) are lines of that file as checked out.
fn holds(tree: &RepoTree, sandbox: &Sandbox, e: &EvidencePath) -> Result<(), NotThere> {
    let at = short(&tree.commit).to_string();
    if !tree.contains(&e.path) {
        return Err(NotThere::Missing { at });
    }
    let Some([first, last]) = e.lines else {
        return Ok(());
    };
    // A path the tools refuse (a link out of the worktree) is in the tree: its lines are not
    // ours to read, and the path stands.
    let Ok(resolved) = sandbox.resolve(&e.path) else {
        return Ok(());
    };
    if resolved.path.is_dir() {
        return Err(NotThere::Directory { at, first, last });
    }
    match line_count(&resolved.path) {
        Some(n) if u64::from(last) > n => Err(NotThere::PastTheEnd {
            at,
            lines: n,
            first,
            last,
        }),
        _ => Ok(()),
    }
}

/// Why an evidence entry does not hold at the pinned commit (`at`, its first 12 digits): the
/// entry is refused, the item grounded by its other entries only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotThere {
    #[error("does not exist at {at}")]
    Missing { at: String },
    #[error("is a directory at {at}: lines {first}-{last} name no file's lines")]
    Directory { at: String, first: u32, last: u32 },
    #[error("has {lines} line(s) at {at}: lines {first}-{last} are past its end")]
    PastTheEnd {
        at: String,
        lines: u64,
        first: u32,
        last: u32,
    },
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Most bytes of a file whose lines are counted; a larger file's lines are taken as given.
const MAX_COUNTED_BYTES: u64 = 32 << 20;

fn line_count(path: &Path) -> Option<u64> {
    if crate::input::file_len(path).ok()? > MAX_COUNTED_BYTES {
        return None;
    }
    let bytes = crate::input::read(path).ok()?;
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    Some(newlines + u64::from(bytes.last().is_some_and(|&b| b != b'\n')))
}

/// Removes a worktree off the runtime's thread, telling why it could not be.
async fn remove(wt: repoprobe_agent::workspace::Worktree) {
    match tokio::task::spawn_blocking(move || wt.remove()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("warning: {}", terminal_safe_lines(&e.to_string())),
        Err(e) => eprintln!("warning: the worktree's removal stopped unexpectedly: {e}"),
    }
}

/// Writes how a key ended and counts it: a candidate to `--out`, an unanswerable question to
/// the excluded journal, a failure to the failures journal.
fn record(
    o: Outcome<String, Decision>,
    (out, excluded, failures): (
        &mut Journal<String>,
        &mut Journal<String>,
        &mut Journal<String>,
    ),
    counts: &mut Counts,
    reporter: &mut Reporter,
) -> anyhow::Result<()> {
    let written = |key: &String, decision: Decision, reporter: &mut Reporter| {
        match decision {
            Decision::Kept(record) => {
                out.append(&record)?;
                out.done.insert(key.clone());
                counts.kept += 1;
            }
            Decision::Unanswerable { repo, reason } => {
                exclude(
                    excluded,
                    Stage::Verify,
                    key,
                    &repo,
                    Rule::Unanswerable,
                    reason,
                )?;
                counts.unanswerable += 1;
                reporter.on(Event::Message(&format!("dropped: {key}: unanswerable")));
            }
        }
        reporter.on(Event::Done { key, note: None });
        Ok(())
    };
    let failure_key = |id: &String| IdKey { id: id.clone() };
    agent::record(o, failures, failure_key, PROMPT_VERSION, reporter, written)
}

/// A failure record's key: the question's id.
#[derive(Serialize)]
struct IdKey {
    id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_as_an_editor_numbers_them() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        for (text, n) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\n\n", 2)] {
            std::fs::write(&p, text).unwrap();
            assert_eq!(line_count(&p), Some(n), "{text:?}");
        }
    }
}
