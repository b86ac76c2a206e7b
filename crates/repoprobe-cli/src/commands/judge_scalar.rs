//! `repoprobe judge-scalar`: the SWE-QA-style scalar judge, the baseline of paper §5.3
//! (Table 5), live. One call per (question, answer, judge run) grades the answer on five integer
//! dimensions from 1 to `--scale` (10: total 50; 20: total 100). Every reply is checked by
//! `repoprobe_core::protocol::scalar::parse_reply` and re-asked with the violations, like `judge`; the
//! run loop, journals, resume and failure records are `judge`'s (`crate::live`).
//!
//! Records are docs/format.md#scalar-judgment scalar judgments (`max_per_dimension` = the scale) plus
//! `prompt_version`, `provider`, `structured`, `usage` and `raw_reply`.

use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task};
use crate::run_files::keys::JudgmentKey;
use crate::run_files::manifest::RunSpec;
use repoprobe_core::RecordKind;
use repoprobe_core::protocol::scalar::{self, PROMPT_VERSION, ScalarJudge, ScalarScores};
use serde::Serialize;
use std::collections::BTreeMap;

use super::judge::{AnswerInputs, AnswerJob, JudgeRecords, judge_answers};

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) inputs: AnswerInputs,
    /// Points per dimension: 10 (1–10 each, total 50) or 20 (1–20 each, total 100); SWE-QA
    /// used both. Recorded on every record as `max_per_dimension`.
    #[arg(long, default_value_t = 10, value_parser = scale)]
    scale: u32,
    #[command(flatten)]
    pub(crate) live: LiveArgs,
}

fn scale(s: &str) -> Result<u32, NotAScale> {
    match s.parse::<u32>() {
        Ok(v) if scalar::SCALES.contains(&v) => Ok(v),
        _ => Err(NotAScale(s.to_string())),
    }
}

/// `--scale`'s value is none of the scales SWE-QA used.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a scale: use 10 or 20")]
struct NotAScale(String);

/// One answer to grade once on the scale.
struct ScalarJob {
    job: AnswerJob,
    max: u32,
}

/// A line of `--out`: docs/format.md#scalar-judgment plus provenance.
#[derive(Serialize)]
struct ScalarRecord<'a> {
    #[serde(flatten)]
    key: &'a JudgmentKey,
    dimensions: &'a BTreeMap<String, u32>,
    max_per_dimension: u32,
    rationale: &'a str,
    #[serde(flatten)]
    provenance: Provenance<'a>,
}

impl Task for ScalarJob {
    type Key = JudgmentKey;
    type Value = ScalarScores;
    type Protocol<'a> = ScalarJudge<'a>;
    fn key(&self) -> &JudgmentKey {
        &self.job.key
    }
    fn protocol(&self) -> ScalarJudge<'_> {
        ScalarJudge {
            question: &self.job.question,
            answer: &self.job.answer,
            max: self.max,
        }
    }
    fn value(&self, scores: ScalarScores) -> ScalarScores {
        scores
    }
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let max = a.scale;
    let kind = JudgeRecords {
        command: "judge-scalar",
        key_of: |v| JudgmentKey::of(v, RecordKind::ScalarJudgment),
        name: "scalar judgment",
        prompt_version: PROMPT_VERSION,
    };
    let task = |job| ScalarJob { job, max };
    let spec = RunSpec::new(crate::run_files::kind::RunKind::JudgeScalar).set("scale", max);
    judge_answers(
        &a.inputs,
        &a.live,
        kind,
        spec,
        a.live.model(),
        task,
        |out, key, s, provenance| {
            out.append(&ScalarRecord {
                key,
                dimensions: &s.dimensions,
                max_per_dimension: max,
                rationale: &s.rationale,
                provenance,
            })
        },
    )
}
