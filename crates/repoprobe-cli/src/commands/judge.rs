//! `repoprobe judge`: the checklist judge of paper §4.2, live. One call per (question, answer,
//! judge run) scores every item of the question at once; every reply is checked by
//! `repoprobe_core::protocol::judge::parse_reply`, and a reply that breaks a rule is sent back with the
//! violations until it is valid or `--max-retries` re-asks are spent.
//!
//! The run loop, the journals and the flags are shared with the other live calls
//! (`crate::live`, `crate::output`). Output is an append-only JSONL journal, one line per
//! finished key, written as soon as the key finishes. Judgments go to `--out` (docs/format.md#checklist-judgment records plus `prompt_version`, `provider`,
//! `structured`, `usage` and `raw_reply`); keys that could not be judged go to a separate
//! failures journal (`<out>.failures.ndjson` unless `--failures` names another) as
//! `"status": "failed"` lines with the reason. The failures never enter `--out`, so `score` never
//! sees them (and `.ndjson` is not read when a directory is given to `score`). On start both
//! journals are read back: a torn last line (a kill mid-write) is cut away and reported, keys
//! already in `--out` are skipped, and failed keys are tried again.

use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task, load_inputs};
use crate::output::{Journal, KeyOf};
use crate::run_files::keys::JudgmentKey;
use crate::run_files::manifest::RunSpec;
use anyhow::bail;
use repoprobe_core::protocol::judge::{ChecklistJudge, PROMPT_VERSION, item_order};
use repoprobe_core::{Dataset, ItemScore, Question, RecordKind};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) inputs: AnswerInputs,
    /// Present each answer's checklist items in an order drawn from SEED and the answer's key
    /// (recorded as `item_order` on each judgment, whose items stay in checklist order). The
    /// judge is then named `MODEL@shuffled-SEED`, so that `repoprobe judge-agreement` compares it with
    /// the same model's unshuffled run: the items' order bias.
    #[arg(long, value_name = "SEED")]
    shuffle_items: Option<u64>,
    #[command(flatten)]
    pub(crate) live: LiveArgs,
}

/// The inputs of the judges (`judge`, `judge-scalar`): answers to a benchmark, judged N times.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct AnswerInputs {
    /// The benchmark (questions with their checklists) and the answers to judge, in any order
    /// (files or directories; answers with `error` set are skipped).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Judge runs per answer (`judge_run` 0..N-1, for the reliability table).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
}

/// One answer to judge once: its key, question and text.
pub struct AnswerJob {
    pub key: JudgmentKey,
    pub question: Arc<Question>,
    pub answer: Arc<str>,
}

/// A checklist judge's job: the answer, and with `--shuffle-items` the question as presented
/// (its items reordered) and the ids in that order.
pub struct ChecklistJob {
    job: AnswerJob,
    shuffled: Option<(Arc<Question>, Vec<String>)>,
}

impl ChecklistJob {
    fn new(job: AnswerJob, seed: Option<u64>) -> ChecklistJob {
        let shuffled = seed.map(|seed| {
            let k = &job.key;
            let key = format!(
                "{}\u{1f}{}\u{1f}{}\u{1f}{}",
                k.question_id, k.model, k.attempt, k.judge_run
            );
            let order = item_order(seed, &key, job.question.checklist.len());
            let mut q = (*job.question).clone();
            q.checklist = order
                .iter()
                .map(|&i| job.question.checklist[i].clone())
                .collect();
            let ids = q.checklist.iter().map(|i| i.id.clone()).collect();
            (Arc::new(q), ids)
        });
        ChecklistJob { job, shuffled }
    }
}

/// The keys to judge: every (answer, judge run) not yet done, in input order.
pub struct AnswerJobs {
    pub jobs: Vec<AnswerJob>,
    pub already_done: usize,
    pub skipped_error: usize,
}

impl AnswerInputs {
    /// Loads the benchmark and answers; returns the dataset and whether records were left out.
    pub fn load(&self) -> anyhow::Result<(Dataset, bool)> {
        let (ds, issues) = load_inputs(&self.files)?;
        if ds.questions.is_empty() {
            bail!("no valid question in {}", crate::input::listed(&self.files));
        }
        Ok((ds, issues))
    }

    /// The (answer, judge run) keys of `judge` that `is_done` does not know.
    pub fn jobs(
        &self,
        ds: &Dataset,
        judge: &str,
        is_done: impl Fn(&JudgmentKey) -> bool,
    ) -> AnswerJobs {
        let questions: HashMap<&str, Arc<Question>> = ds
            .questions
            .iter()
            .map(|q| (q.id.as_str(), Arc::new(q.clone())))
            .collect();
        let mut out = AnswerJobs {
            jobs: Vec::new(),
            already_done: 0,
            skipped_error: 0,
        };
        for ans in &ds.answers {
            let text = match (&ans.error, &ans.answer) {
                (None, Some(t)) => t,
                _ => {
                    out.skipped_error += 1;
                    continue;
                }
            };
            let Some(q) = questions.get(ans.question_id.as_str()) else {
                continue; // reported by the loader as an answer to an unknown question
            };
            let answer: Arc<str> = Arc::from(text.as_str());
            for judge_run in 0..self.runs {
                let key = JudgmentKey {
                    question_id: ans.question_id.clone(),
                    model: ans.model.clone(),
                    attempt: ans.attempt,
                    judge: judge.to_string(),
                    judge_run,
                };
                if is_done(&key) {
                    out.already_done += 1;
                } else {
                    out.jobs.push(AnswerJob {
                        key,
                        question: Arc::clone(q),
                        answer: Arc::clone(&answer),
                    });
                }
            }
        }
        out
    }
}

/// A line of `--out`: docs/format.md#checklist-judgment plus provenance.
#[derive(Serialize)]
struct JudgmentRecord<'a> {
    #[serde(flatten)]
    key: &'a JudgmentKey,
    items: &'a [ItemScore],
    /// The item ids in the order the judge saw them (with `--shuffle-items`).
    #[serde(skip_serializing_if = "Option::is_none")]
    item_order: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shuffle_items: Option<u64>,
    #[serde(flatten)]
    provenance: Provenance<'a>,
}

/// A judge's scores of the items, in checklist order, and the order it saw them in.
pub struct Scored {
    items: Vec<ItemScore>,
    order: Option<Vec<String>>,
}

impl Task for ChecklistJob {
    type Key = JudgmentKey;
    type Value = Scored;
    type Protocol<'a> = ChecklistJudge<'a>;
    fn key(&self) -> &JudgmentKey {
        &self.job.key
    }
    fn protocol(&self) -> ChecklistJudge<'_> {
        ChecklistJudge {
            question: self.shuffled.as_ref().map_or(&self.job.question, |s| &s.0),
            answer: &self.job.answer,
        }
    }
    /// The items back in checklist order, whatever order they were presented and replied in.
    fn value(&self, mut items: Vec<ItemScore>) -> Scored {
        let position = |id: &str| self.job.question.checklist.iter().position(|c| c.id == id);
        items.sort_by_key(|i| position(&i.id));
        Scored {
            items,
            order: self.shuffled.as_ref().map(|s| s.1.clone()),
        }
    }
    /// A rationale of about a hundred words per checklist item, and the JSON around them.
    fn expected_output_tokens(&self) -> u64 {
        100 + 150 * self.job.question.checklist.len() as u64
    }
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.live.api.model.len() > 1 {
        return several(&a);
    }
    one(&a.inputs, &a.live, a.shuffle_items)
}

/// `--model` given several times: each judge in turn, into its own journal (`{model}` in
/// `--out`, and in `--failures` when given), as separate runs of one judge would be. A run
/// stopped by SIGTERM ends the command at once (exit 75: run it again, the judges done are
/// skipped key by key); otherwise the exit is the worst of the judges'.
fn several(a: &Args) -> anyhow::Result<Exit> {
    const HOLE: &str = "{model}";
    let models = &a.live.api.model;
    if let Some(m) = models
        .iter()
        .enumerate()
        .find_map(|(n, m)| models[..n].contains(m).then_some(m))
    {
        bail!("--model {m:?} is given twice");
    }
    let with = |p: &std::path::Path, m: &str| -> anyhow::Result<PathBuf> {
        let text = p.to_str().filter(|t| t.contains(HOLE)).ok_or_else(|| {
            anyhow::anyhow!(
                "--model is given {} times: {} must hold {HOLE}, replaced by each judge's name \
                 (e.g. --out 'judgments.{HOLE}.jsonl'), so that each judge has its own journal",
                models.len(),
                p.display()
            )
        })?;
        Ok(PathBuf::from(
            text.replace(HOLE, &crate::output::file_name_part(m)),
        ))
    };
    // Every path checked before any judge starts.
    let mut runs = Vec::with_capacity(models.len());
    for m in models {
        let mut live = a.live.clone();
        live.api.model = vec![m.clone()];
        live.run.out = with(&a.live.run.out, m)?;
        live.run.failures = a
            .live
            .run
            .failures
            .as_deref()
            .map(|f| with(f, m))
            .transpose()?;
        runs.push(live);
    }
    let mut worst = Exit::Ok;
    for (n, live) in runs.iter().enumerate() {
        eprintln!(
            "judge {} of {}: {} into {}",
            n + 1,
            runs.len(),
            repoprobe_core::text::terminal_safe(live.model()),
            live.run.out.display()
        );
        match one(&a.inputs, live, a.shuffle_items)? {
            Exit::Requeue => return Ok(Exit::Requeue),
            e if (e as u8) > (worst as u8) => worst = e,
            _ => {}
        }
    }
    Ok(worst)
}

/// One judge's run.
fn one(inputs: &AnswerInputs, live: &LiveArgs, seed: Option<u64>) -> anyhow::Result<Exit> {
    let judge = match seed {
        Some(s) => format!("{}@shuffled-{s}", live.model()),
        None => live.model().to_string(),
    };
    judge_answers(
        inputs,
        live,
        JUDGE_RECORDS,
        RunSpec::new(crate::run_files::kind::RunKind::Judge).scope("shuffle_items", seed),
        &judge,
        |job| ChecklistJob::new(job, seed),
        |out, key, scored, provenance| {
            out.append(&JudgmentRecord {
                key,
                items: &scored.items,
                item_order: scored.order.as_deref(),
                shuffle_items: seed,
                provenance,
            })
        },
    )
}

/// What a judge's records are: how to read their key, their name, the prompt version.
pub struct JudgeRecords {
    pub command: &'static str,
    pub key_of: KeyOf<JudgmentKey>,
    pub name: &'static str,
    pub prompt_version: &'static str,
}

const JUDGE_RECORDS: JudgeRecords = JudgeRecords {
    command: "judge",
    key_of: |v| JudgmentKey::of(v, RecordKind::Judgment),
    name: "judgment",
    prompt_version: PROMPT_VERSION,
};

/// The run of a judge of answers (`judge`, `judge-scalar`): load, skip the keys done, ask
/// `task(job)` for every other (answer, judge run) of the judge named `judge`, write with
/// `write`, summarise.
pub fn judge_answers<T, W>(
    inputs: &AnswerInputs,
    live_args: &LiveArgs,
    kind: JudgeRecords,
    spec: RunSpec,
    judge: &str,
    task: impl Fn(AnswerJob) -> T,
    write: W,
) -> anyhow::Result<Exit>
where
    T: Task<Key = JudgmentKey>,
    W: FnMut(
        &mut Journal<JudgmentKey>,
        &JudgmentKey,
        T::Value,
        Provenance<'_>,
    ) -> anyhow::Result<()>,
{
    if live_args.estimate {
        let (ds, _) = inputs.load()?;
        let done = live_args.done_keys(kind.key_of)?;
        let todo = inputs.jobs(&ds, judge, |k| done.contains(k));
        let tasks: Vec<T> = todo.jobs.into_iter().map(task).collect();
        live_args.print_estimate(kind.command, &tasks, todo.already_done)?;
        return Ok(Exit::Ok);
    }
    let settings = live_args.settings()?;
    let (ds, input_issues) = inputs.load()?;
    let spec = spec.files(&inputs.files).scope("runs", inputs.runs);
    let mut live = live_args.start(settings, kind.key_of, kind.name, kind.prompt_version, spec)?;
    let todo = inputs.jobs(&ds, judge, |k| live.is_done(k));
    let tasks = todo.jobs.into_iter().map(task).collect();
    let tally = live.run(tasks, write)?;
    Ok(live.finish(
        kind.command,
        "judged",
        todo.already_done,
        &[format!(
            "{} answer(s) skipped (error set)",
            todo.skipped_error
        )],
        &tally,
        input_issues,
    ))
}
