//! `repoprobe classify-failures`: the failure-mode classifier of paper §5.4 (Table 7), live.
//! For every answer whose checklist score (the mean over the judge runs of the judge in force)
//! is below 60 %, one call names one of the five modes of docs/format.md#failure-mode-label with a rationale; the mode
//! is an enum in the reply schema and checked by `repoprobe_core::protocol::classify::parse_reply`. The
//! run loop, journals, resume and failure records are `judge`'s (`crate::live`).
//!
//! Records are docs/format.md#failure-mode-label labels (`classifier` = `--model`) plus `checklist_judge`,
//! `checklist_score` (0–1), `prompt_version`, `provider`, `structured`, `usage` and `raw_reply`.

use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task, load_inputs};
use crate::run_files::keys::LabelKey;
use crate::run_files::manifest::RunSpec;
use anyhow::bail;
use repoprobe_core::protocol::classify::{self, Candidate, PROMPT_VERSION};
use repoprobe_core::{Answer, FailureMode, Judgment, Question};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    /// The benchmark (questions with their checklists), the answers that were judged (their
    /// texts are what is classified) and the checklist judgments, in any order (files or
    /// directories).
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// The judge whose scores decide what failed [default: the one with the most valid
    /// judgments, as in `score`].
    #[arg(long)]
    pub(crate) judge: Option<String>,
    #[command(flatten)]
    pub(crate) live: LiveArgs,
}

/// One failed answer to classify: the candidate's records, owned (a candidate borrows the
/// dataset; a job outlives it).
struct LabelJob {
    key: LabelKey,
    question: Question,
    answer: Answer,
    judgments: Vec<Judgment>,
    score: f64,
}

/// A line of `--out`: docs/format.md#failure-mode-label plus the score that made it a failure, and provenance.
#[derive(Serialize)]
struct LabelRecord<'a> {
    #[serde(flatten)]
    key: &'a LabelKey,
    mode: FailureMode,
    rationale: &'a str,
    checklist_judge: &'a str,
    checklist_score: f64,
    #[serde(flatten)]
    provenance: Provenance<'a>,
}

impl Task for LabelJob {
    type Key = LabelKey;
    type Value = (FailureMode, String, f64);
    type Protocol<'a> = Candidate<'a>;
    fn key(&self) -> &LabelKey {
        &self.key
    }
    fn protocol(&self) -> Candidate<'_> {
        Candidate {
            question: &self.question,
            answer: &self.answer,
            judgments: self.judgments.iter().collect(),
            score: self.score,
        }
    }
    fn value(&self, (mode, rationale): (FailureMode, String)) -> (FailureMode, String, f64) {
        (mode, rationale, self.score)
    }
    /// A mode and a rationale of a few sentences.
    fn expected_output_tokens(&self) -> u64 {
        250
    }
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    // Under --estimate no key is needed: nothing is sent.
    let settings = if a.live.estimate {
        None
    } else {
        Some(a.live.settings()?)
    };
    let (ds, input_issues) = load_inputs(&a.files)?;
    let judge = match repoprobe_core::metrics::judge_in_force(&ds, a.judge.as_deref()) {
        Ok(Some(j)) => j,
        Ok(None) => bail!("no valid judgment in {}", crate::input::listed(&a.files)),
        Err(e) => bail!("{e}"),
    };
    let (candidates, without_answer) = classify::candidates(&ds, &judge);
    let Some(settings) = settings else {
        let done = a.live.done_keys(LabelKey::of)?;
        let (jobs, already_done) = jobs(&a, &candidates, |k| done.contains(k));
        a.live
            .print_estimate("classify-failures", &jobs, already_done)?;
        return Ok(Exit::Ok);
    };
    let mut live = a.live.start(
        settings,
        LabelKey::of,
        "failure label",
        PROMPT_VERSION,
        RunSpec::new(crate::run_files::kind::RunKind::ClassifyFailures)
            .files(&a.files)
            .set("judge", &judge),
    )?;
    let (jobs, already_done) = jobs(&a, &candidates, |k| live.is_done(k));
    eprintln!(
        "classify-failures: judge {judge:?}: {} answer(s) below {:.0} %",
        candidates.len() + without_answer,
        100.0 * classify::THRESHOLD
    );
    let tally = live.run(jobs, |out, key, (mode, rationale, score), provenance| {
        out.append(&LabelRecord {
            key,
            mode,
            rationale: &rationale,
            checklist_judge: &judge,
            checklist_score: score,
            provenance,
        })
    })?;
    Ok(live.finish(
        "classify-failures",
        "classified",
        already_done,
        &[format!("{without_answer} skipped (no answer text)")],
        &tally,
        input_issues,
    ))
}

/// The labels to ask for: a job per candidate `is_done` does not know, and how many it knew.
fn jobs(
    a: &Args,
    candidates: &[classify::Candidate<'_>],
    is_done: impl Fn(&LabelKey) -> bool,
) -> (Vec<LabelJob>, usize) {
    let (mut jobs, mut already_done) = (Vec::new(), 0);
    for c in candidates {
        let key = LabelKey {
            question_id: c.question.id.clone(),
            model: c.answer.model.clone(),
            attempt: c.answer.attempt,
            classifier: a.live.model().to_string(),
        };
        if is_done(&key) {
            already_done += 1;
            continue;
        }
        jobs.push(LabelJob {
            key,
            question: c.question.clone(),
            answer: c.answer.clone(),
            judgments: c.judgments.iter().map(|&j| j.clone()).collect(),
            score: c.score,
        });
    }
    (jobs, already_done)
}
