//! `repoprobe curate classify`: the model keeps the threads about understanding the repository's
//! code and names each one's category (the core's `protocol::curate_classify`); the others go to
//! the excluded journal with the model's rationale. On the run loop of every live call
//! (`crate::live`): `--concurrency`, `--rpm`/`--tpm`, re-asks, the failures journal, `--shard`,
//! SIGTERM → exit 75, `--batch`, `--estimate`.

use super::{excluded_key, excluded_path};
use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task};
use crate::output::Journal;
use crate::run_files::keys::ThreadKey;
use crate::run_files::manifest::RunSpec;
use anyhow::bail;
use repoprobe_curate::protocol::classify::{Classified, PROMPT_VERSION, ThreadToClassify};
use repoprobe_curate::{ClassifiedThread, Excluded, Rule, Stage, StageVerdict, Thread};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The threads to classify (`curate filter`'s output).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    #[command(flatten)]
    live: LiveArgs,
}

struct ClassifyJob {
    key: ThreadKey,
    thread: Thread,
}

impl Task for ClassifyJob {
    type Key = ThreadKey;
    type Value = (Thread, Classified);
    type Protocol<'a> = ThreadToClassify<'a>;
    fn key(&self) -> &ThreadKey {
        &self.key
    }
    fn protocol(&self) -> ThreadToClassify<'_> {
        ThreadToClassify {
            thread: &self.thread,
        }
    }
    fn value(&self, c: Classified) -> (Thread, Classified) {
        (self.thread.clone(), c)
    }
    /// A verdict and a rationale of a few sentences.
    fn expected_output_tokens(&self) -> u64 {
        200
    }
}

/// A line of `--out`: the thread, its category and verdict, then the call's provenance.
#[derive(Serialize)]
struct ClassifiedRecord<'a> {
    #[serde(flatten)]
    thread: &'a ClassifiedThread,
    #[serde(flatten)]
    provenance: Provenance<'a>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.input == a.live.run.out {
        bail!("the input FILE and --out are the same file");
    }
    let settings = if a.live.estimate {
        None
    } else {
        Some(a.live.settings()?)
    };
    let (threads, bad) = super::read_records::<Thread>(&a.input, "thread")?;
    if threads.is_empty() && bad == 0 {
        bail!("no thread in {}", a.input.display());
    }
    let Some(settings) = settings else {
        let done = a.live.done_keys(ThreadKey::of)?;
        let excluded =
            crate::output::done_keys(&excluded_path(&a.live.run.layout()?.out), excluded_key)?;
        let (jobs, already) = jobs(threads, |k| done.contains(k) || excluded.contains(&k.key));
        a.live.print_estimate("curate classify", &jobs, already)?;
        return Ok(Exit::Ok);
    };
    let model = a.live.model().to_string();
    let mut live = a.live.start(
        settings,
        ThreadKey::of,
        "thread",
        PROMPT_VERSION,
        RunSpec::new(crate::run_files::kind::RunKind::CurateClassify).input("in", &a.input),
    )?;
    let mut excluded = Journal::open_beside(&excluded_path(&live.out.path), excluded_key)?;
    excluded.report("excluded");
    let (jobs, already_done) = jobs(threads, |k| {
        live.is_done(k) || excluded.done.contains(&k.key)
    });
    let mut dropped = 0usize;
    let tally = live.run(jobs, |out, key, (thread, c), provenance| {
        let verdict = StageVerdict {
            prompt_version: PROMPT_VERSION.to_string(),
            model: model.clone(),
            passed: c.code_understanding,
            rationale: c.rationale,
        };
        match c.category {
            Some(category) => {
                let record = ClassifiedThread {
                    thread,
                    question_category: category,
                    classify: verdict,
                };
                out.append(&ClassifiedRecord {
                    thread: &record,
                    provenance,
                })?;
                out.done.insert(key.clone());
            }
            None => {
                excluded.append(&Excluded {
                    stage: Stage::Classify,
                    key: key.key.clone(),
                    repo: thread.repo.clone(),
                    rule: Rule::NotCodeUnderstanding,
                    reason: format!(
                        "{}: not about the repository's code ({model}): {}",
                        key.key, verdict.rationale
                    ),
                })?;
                excluded.done.insert(key.key.clone());
                dropped += 1;
            }
        }
        Ok(())
    })?;
    if dropped > 0 {
        eprintln!(
            "curate classify: {dropped} thread(s) not about code understanding ({})",
            excluded.path.display()
        );
    }
    Ok(live.finish(
        "curate classify",
        "classified",
        already_done,
        &[],
        &tally,
        bad > 0,
    ))
}

/// The jobs of the threads not `done` (each key once: a second line of a key is left out), and
/// how many were.
fn jobs(
    threads: Vec<(serde_json::Value, Thread)>,
    done: impl Fn(&ThreadKey) -> bool,
) -> (Vec<ClassifyJob>, usize) {
    let (mut jobs, mut already) = (Vec::new(), 0);
    let mut seen = std::collections::HashSet::new();
    for (_, thread) in threads {
        let key = ThreadKey {
            key: thread.key.clone(),
        };
        if !seen.insert(key.clone()) {
            continue;
        }
        if done(&key) {
            already += 1;
        } else {
            jobs.push(ClassifyJob { key, thread });
        }
    }
    (jobs, already)
}
