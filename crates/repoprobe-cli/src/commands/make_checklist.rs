//! `repoprobe make-checklist`: the checklist generator of paper §3.2 and §4.1, live. From source
//! records `{id, repo, category, question, reference_answer}` (JSONL or a JSON array) to full
//! benchmark questions (docs/format.md#question). Every reply is checked by
//! `repoprobe_core::protocol::checklist_gen::parse_reply`, which applies every rule of
//! `repoprobe_core::validate::question`; a violating reply is sent back with the violations
//! listed. The run loop, journals, resume and failure records are `judge`'s
//! (`crate::live`).
//!
//! Records are benchmark questions (the source's other fields kept) plus `prompt_version`,
//! `provider`, `structured`, `usage` and `raw_reply`; the key is the question id.

use crate::exit::Exit;
use crate::input::{NotJson, read_json_records};
use crate::live::{LiveArgs, Provenance, Task};
use crate::run_files::keys::QuestionKey;
use crate::run_files::manifest::RunSpec;
use anyhow::{Context, bail};
use repoprobe_core::Question;
use repoprobe_core::protocol::checklist_gen::{self, PROMPT_VERSION, Source};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The source records `{id, repo, category, question, reference_answer}` (JSONL or a JSON
    /// array); `repo` is the object of docs/format.md#question or just the repository's name.
    #[arg(value_name = "FILE")]
    questions: PathBuf,
    #[command(flatten)]
    live: LiveArgs,
}

/// One source record to give a checklist.
struct ChecklistJob {
    key: QuestionKey,
    source: Source,
    /// The source's fields that are not a question's, kept on the output.
    extra: Map<String, Value>,
}

/// A line of `--out`: a docs/format.md#question question, the source's other fields, provenance.
#[derive(Serialize)]
struct QuestionRecord<'a> {
    #[serde(flatten)]
    question: &'a Question,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
    #[serde(flatten)]
    provenance: Provenance<'a>,
}

impl Task for ChecklistJob {
    type Key = QuestionKey;
    type Value = (Question, Map<String, Value>);
    type Protocol<'a> = &'a Source;
    fn key(&self) -> &QuestionKey {
        &self.key
    }
    fn protocol(&self) -> &Source {
        &self.source
    }
    fn value(&self, q: Question) -> Self::Value {
        (q, self.extra.clone())
    }
}

/// Fields of a question (and of our provenance) that a source's extra fields may not repeat.
const OWN_FIELDS: [&str; 12] = [
    "id",
    "repo",
    "category",
    "question",
    "reference_answer",
    "external_context",
    "checklist",
    "prompt_version",
    "provider",
    "structured",
    "usage",
    "raw_reply",
];

pub fn run(a: Args) -> anyhow::Result<Exit> {
    // Under --estimate no key is read and no journal opened: nothing is sent or written.
    let settings = if a.live.estimate {
        None
    } else {
        Some(a.live.settings()?)
    };
    let records = read_json_records(&a.questions)
        .with_context(|| format!("cannot read {}", a.questions.display()))?;
    let Some(settings) = settings else {
        let done = a.live.done_keys(QuestionKey::of)?;
        let s = sources(&a.questions, records, |k| done.contains(k))?;
        a.live
            .print_estimate("curate make-checklist", &s.jobs, s.already_done)?;
        return Ok(Exit::Ok);
    };
    let mut live = a.live.start(
        settings,
        QuestionKey::of,
        "question",
        PROMPT_VERSION,
        RunSpec::new(crate::run_files::kind::RunKind::MakeChecklist)
            .input("questions", &a.questions),
    )?;
    let s = sources(&a.questions, records, |k| live.is_done(k))?;
    let tally = live.run(s.jobs, |out, _key, (question, extra), provenance| {
        out.append(&QuestionRecord {
            question: &question,
            extra: &extra,
            provenance,
        })
    })?;
    Ok(live.finish(
        "curate make-checklist",
        "made",
        s.already_done,
        &[],
        &tally,
        s.bad > 0,
    ))
}

/// The source records read: a job per valid one `is_done` does not know.
struct Sources {
    jobs: Vec<ChecklistJob>,
    already_done: usize,
    /// Records left out (unreadable, invalid, an id used again), each reported.
    bad: usize,
}

/// The jobs of the source records of `path` (`records`, as read), each invalid record reported;
/// none valid is an error.
fn sources(
    path: &Path,
    records: Vec<(String, Result<Value, NotJson>)>,
    is_done: impl Fn(&QuestionKey) -> bool,
) -> anyhow::Result<Sources> {
    let (mut jobs, mut already_done, mut bad) = (Vec::new(), 0, 0);
    let mut seen = HashSet::new();
    let name = path.display();
    for (location, record) in records {
        let parsed = record.map_err(|e| vec![e.to_string()]).and_then(|v| {
            let source = checklist_gen::parse_source(&v)?;
            let extra: Map<String, Value> = v
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !OWN_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok((source, extra))
        });
        let (source, extra) = match parsed {
            Ok(s) => s,
            Err(errs) => {
                for e in errs {
                    eprintln!(
                        "  {name}: {location}: {}",
                        repoprobe_core::text::terminal_safe_lines(&e.to_string())
                    );
                }
                bad += 1;
                continue;
            }
        };
        if !seen.insert(source.id.clone()) {
            eprintln!(
                "  {name}: {location}: question id {:?} is used twice: the first is kept",
                source.id
            );
            bad += 1;
            continue;
        }
        let key = QuestionKey {
            id: source.id.clone(),
        };
        if is_done(&key) {
            already_done += 1;
        } else {
            jobs.push(ChecklistJob { key, source, extra });
        }
    }
    if bad > 0 {
        eprintln!("{bad} source record(s) left out (see above)");
    }
    if jobs.is_empty() && already_done == 0 {
        bail!("no valid source record in {name}");
    }
    Ok(Sources {
        jobs,
        already_done,
        bad,
    })
}
