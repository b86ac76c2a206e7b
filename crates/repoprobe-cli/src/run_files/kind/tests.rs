//! Every run kind's run, written as its command writes it, read back by `status`: the keys done,
//! failed and left counted, nothing unreadable, every record in the shard that wrote it.

use super::*;
use crate::live::Provenance;
use crate::live::task::{Failed, UsageOut};
use crate::output::Journal;
use crate::run_files::keys::{AnswerKey, JudgmentKey};
use crate::run_files::manifest::{self, ManifestError, RunSpec};
use crate::run_files::state::read_run;
use crate::run_files::{Layout, enlist};
use crate::shard::Shard;
use repoprobe_core::model::failure::{Cause, CouldNotRun};
use repoprobe_core::synth::{SynthOptions, generate};
use repoprobe_curate::{
    Answer, AnsweredRule, ClassifiedThread, Enhancement, Excluded, Pair, PinnedCommit,
    RepoProvenance, Repository, Rule, Stage, StageVerdict, Thread, ThreadProvenance,
};
use serde_json::json;
use std::path::Path;

/// One key of a run: as its command prints it (what it shards by), the record its command
/// writes when the key is done, and the key's fields as its failure record carries them.
struct Key {
    shown: String,
    record: Value,
    failure: Value,
}

/// A run of `kind` over `keys`: the first `done` written as records, the next `failed` as
/// failure records (could-not-run and failed in turn), the rest left; `excluded` (keys past
/// those) dropped into the excluded journal. Its status read back must say exactly that.
struct Case {
    kind: RunKind,
    keys: Vec<Key>,
    done: usize,
    failed: usize,
    excluded: Vec<(String, Excluded)>,
}

const SHARDS: u32 = 2;

impl Case {
    fn check(self) {
        let dir = tempfile::tempdir().unwrap();
        let template = dir.path().join("out-{shard}.jsonl");
        let layouts: Vec<Layout> = (0..SHARDS)
            .map(|index| {
                let shard = Shard {
                    index,
                    count: SHARDS,
                };
                Layout::new(&template, None, Some(shard)).unwrap()
            })
            .collect();
        let shown: Vec<&String> = self
            .keys
            .iter()
            .map(|k| &k.shown)
            .chain(self.excluded.iter().map(|(s, _)| s))
            .collect();
        for l in &layouts {
            enlist(l, &RunSpec::new(self.kind), shown.iter().copied()).unwrap();
        }
        self.write(&layouts);
        let run = read_run(&layouts[0].manifest).unwrap();
        assert_eq!(run.manifest.command, self.kind);
        let (mut done, mut failed, mut left, mut records) = (0, 0, 0, 0);
        for s in &run.shards {
            let odd = (s.unreadable, s.elsewhere, s.duplicates);
            assert_eq!(odd, (0, 0, 0), "{}: {}", self.kind, s.out.display());
            (done, failed, left) = (done + s.done, failed + s.failed, left + s.left());
            records += s.records.len() + s.excluded.len();
        }
        let decided = self.done + self.excluded.len();
        let all = shown.len();
        assert!(self.done > 0 && self.failed > 0 && all > decided + self.failed);
        assert_eq!(
            (done as usize, failed as usize, left as usize, records),
            (decided, self.failed, all - decided - self.failed, decided),
            "{}: done, failed, left, records",
            self.kind
        );
    }

    /// Each record into the journal of the shard its key belongs to, through the journals'
    /// own writer.
    fn write(&self, layouts: &[Layout]) {
        let of = |shown: &String| &layouts[Shard::index_of(shown, SHARDS) as usize];
        let open = |p: &Path| Journal::<String>::open(p, |_| None).unwrap();
        for (i, k) in self.keys.iter().enumerate() {
            let l = of(&k.shown);
            if i < self.done {
                open(&l.out).append(&k.record).unwrap();
            } else if i < self.done + self.failed {
                let f = if i % 2 == 0 {
                    Failed::could_not_run(CouldNotRun::new(Cause::Auth, "HTTP 401"))
                } else {
                    Failed::refused("the reply was no JSON")
                };
                open(&l.failures)
                    .append(&f.record(&k.failure, "v1"))
                    .unwrap();
            }
        }
        for (shown, e) in &self.excluded {
            let path = crate::output::beside(&of(shown).out, "excluded.ndjson");
            open(&path).append(e).unwrap();
        }
    }
}

/// A record of a live call: the command's own fields, then the call's provenance.
fn with_provenance(body: impl Serialize) -> Value {
    #[derive(Serialize)]
    struct Record<'a, T> {
        #[serde(flatten)]
        body: T,
        #[serde(flatten)]
        provenance: Provenance<'a>,
    }
    let usage = UsageOut {
        input_tokens: 10,
        output_tokens: 2,
        calls: 1,
        retries: 0,
        calls_without_usage: 0,
    };
    let provenance = Provenance {
        prompt_version: "v1",
        provider: "openai",
        structured: "json-schema",
        usage,
        raw_reply: "{}",
    };
    serde_json::to_value(Record { body, provenance }).unwrap()
}

fn value(v: impl Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

fn bundle() -> repoprobe_core::ResultsBundle {
    generate(SynthOptions {
        models: 2,
        questions: 6,
        runs: 1,
        seed: 7,
    })
}

fn judgment_key(question_id: &str, model: &str, attempt: u32, judge: &str, run: u32) -> Key {
    let key = JudgmentKey {
        question_id: question_id.into(),
        model: model.into(),
        attempt,
        judge: judge.into(),
        judge_run: run,
    };
    Key {
        shown: key.to_string(),
        record: Value::Null,
        failure: value(&key),
    }
}

#[test]
fn status_reads_a_judge_run() {
    let keys = bundle()
        .judgments
        .iter()
        .map(|j| Key {
            record: with_provenance(j),
            ..judgment_key(&j.question_id, &j.model, j.attempt, &j.judge, j.judge_run)
        })
        .collect();
    let case = Case {
        kind: RunKind::Judge,
        keys,
        done: 5,
        failed: 2,
        excluded: Vec::new(),
    };
    case.check();
}

#[test]
fn status_reads_a_judge_scalar_run() {
    let keys = bundle()
        .scalar_judgments
        .iter()
        .map(|j| Key {
            record: with_provenance(j),
            ..judgment_key(&j.question_id, &j.model, j.attempt, &j.judge, j.judge_run)
        })
        .collect();
    let case = Case {
        kind: RunKind::JudgeScalar,
        keys,
        done: 5,
        failed: 2,
        excluded: Vec::new(),
    };
    case.check();
}

#[test]
fn status_reads_an_answer_run() {
    let keys = bundle()
        .answers
        .iter()
        .map(|a| {
            let key = AnswerKey::new(&a.question_id, &a.model, a.attempt);
            Key {
                shown: key.to_string(),
                record: value(a),
                failure: value(&key),
            }
        })
        .collect();
    let case = Case {
        kind: RunKind::Answer,
        keys,
        done: 5,
        failed: 2,
        excluded: Vec::new(),
    };
    case.check();
}

#[test]
fn status_reads_a_classify_failures_run() {
    let keys: Vec<Key> = bundle()
        .failure_modes
        .iter()
        .map(|l| {
            let mut record = with_provenance(l);
            record["checklist_judge"] = json!("synth-judge");
            record["checklist_score"] = json!(0.4);
            Key {
                shown: AnswerKey::new(&l.question_id, &l.model, l.attempt).to_string(),
                record,
                failure: json!({
                    "question_id": l.question_id,
                    "model": l.model,
                    "attempt": l.attempt,
                    "classifier": l.classifier,
                }),
            }
        })
        .collect();
    let case = Case {
        kind: RunKind::ClassifyFailures,
        done: keys.len() / 2,
        failed: 1,
        keys,
        excluded: Vec::new(),
    };
    case.check();
}

#[test]
fn status_reads_a_make_checklist_run() {
    let keys = bundle()
        .benchmark
        .iter()
        .map(|q| Key {
            shown: q.id.clone(),
            record: with_provenance(q),
            failure: json!({ "id": q.id }),
        })
        .collect();
    let case = Case {
        kind: RunKind::MakeChecklist,
        keys,
        done: 3,
        failed: 1,
        excluded: Vec::new(),
    };
    case.check();
}

fn verdict() -> StageVerdict {
    StageVerdict {
        prompt_version: "v1".into(),
        model: "m".into(),
        passed: true,
        rationale: "about the code".into(),
    }
}

/// A harvested thread, `curate classify`'s input.
fn thread(n: u64) -> Thread {
    let repo = "acme/widgets";
    let at = "2025-01-01T00:00:00Z";
    let url = format!("https://github.com/{repo}/discussions/{n}");
    Thread {
        key: Thread::key_of(repo, n),
        repo: repo.into(),
        category: "Q&A".into(),
        number: n,
        url: url.clone(),
        title: format!("How does part {n} work?"),
        body: "I read the code and wonder.".into(),
        author: Some("ann".into()),
        created_at: at.into(),
        upvotes: 1,
        answer: Answer {
            body: "It works so.".into(),
            author: Some("bob".into()),
            author_association: "MEMBER".into(),
            chosen_at: at.into(),
            url: format!("{url}#answer"),
        },
        commit: PinnedCommit {
            oid: "0".repeat(40),
            committed_at: at.into(),
            branch: "main".into(),
        },
        language: "Rust".into(),
        theme: String::new(),
        provenance: ThreadProvenance {
            source_url: url,
            api_url: "https://api.github.com/graphql".into(),
            harvested_at: at.into(),
            repository_id: "R_1".into(),
            category_id: "C_1".into(),
            discussion_id: format!("D_{n}"),
            answer_id: format!("DC_{n}"),
        },
    }
}

fn classified(n: u64) -> ClassifiedThread {
    ClassifiedThread {
        thread: thread(n),
        question_category: "Project Architecture".into(),
        classify: verdict(),
    }
}

#[test]
fn status_reads_a_curate_classify_run_with_its_excluded_threads() {
    let keys = (1..=6)
        .map(|n| {
            let c = classified(n);
            Key {
                shown: c.thread.key.clone(),
                failure: json!({ "key": c.thread.key }),
                record: with_provenance(&c),
            }
        })
        .collect();
    let excluded = (7..=8)
        .map(|n| {
            let t = thread(n);
            let e = Excluded {
                stage: Stage::Classify,
                key: t.key.clone(),
                repo: t.repo.clone(),
                rule: Rule::NotCodeUnderstanding,
                reason: "not about the code".into(),
            };
            (t.key, e)
        })
        .collect();
    let case = Case {
        kind: RunKind::CurateClassify,
        keys,
        done: 3,
        failed: 1,
        excluded,
    };
    case.check();
}

#[test]
fn status_reads_a_curate_enhance_run() {
    let keys = (1..=6)
        .map(|n| {
            let c = classified(n);
            let (q, a) = (c.thread.title.clone(), c.thread.answer.body.clone());
            let pair = Pair::of(&c, q, a, Enhancement::default());
            Key {
                shown: pair.id.clone(),
                failure: json!({ "id": pair.id }),
                record: with_provenance(&pair),
            }
        })
        .collect();
    let case = Case {
        kind: RunKind::CurateEnhance,
        keys,
        done: 3,
        failed: 2,
        excluded: Vec::new(),
    };
    case.check();
}

/// A repository `curate repos` kept, and `curate themes` gave a theme.
fn themed(n: u64) -> Repository {
    let repo = format!("acme/lib{n}");
    Repository {
        url: format!("https://github.com/{repo}"),
        repo,
        id: format!("R_{n}"),
        stars: 1000,
        created_at: "2020-01-01T00:00:00Z".into(),
        default_branch: Some("main".into()),
        categories: Vec::new(),
        answered_rule: AnsweredRule::Together,
        language: Some("Rust".into()),
        theme: Some(repoprobe_curate::THEMES[0].into()),
        theme_by: Some(verdict()),
        description: Some("A library.".into()),
        topics: Vec::new(),
        kept_because: "Q&A with 12 answered threads".into(),
        provenance: RepoProvenance {
            source: "list".into(),
            query: None,
            api_url: "https://api.github.com/graphql".into(),
            seen_at: "2025-01-01T00:00:00Z".into(),
        },
    }
}

#[test]
fn status_reads_a_curate_themes_run() {
    let keys = (1..=6)
        .map(|n| {
            let r = themed(n);
            Key {
                shown: r.repo.clone(),
                failure: json!({ "repo": r.repo }),
                // The first repository's theme was the user's: no call, no provenance.
                record: if n == 1 {
                    value(&r)
                } else {
                    with_provenance(&r)
                },
            }
        })
        .collect();
    let case = Case {
        kind: RunKind::CurateThemes,
        keys,
        done: 3,
        failed: 1,
        excluded: Vec::new(),
    };
    case.check();
}

#[test]
fn status_reads_a_curate_verify_run_with_its_unanswerable_questions() {
    const CANDIDATES: &str = include_str!("../../../../../testdata/reviews/candidates.jsonl");
    let questions: Vec<(repoprobe_core::Question, Value)> = CANDIDATES
        .lines()
        .map(|l| {
            (
                serde_json::from_str(l).unwrap(),
                serde_json::from_str(l).unwrap(),
            )
        })
        .collect();
    let (kept, dropped) = questions.split_at(8);
    let keys = kept
        .iter()
        .map(|(q, candidate)| Key {
            shown: q.id.clone(),
            record: candidate.clone(),
            failure: json!({ "id": q.id }),
        })
        .collect();
    let excluded = dropped
        .iter()
        .map(|(q, _)| {
            let e = Excluded {
                stage: Stage::Verify,
                key: q.id.clone(),
                repo: q.repo.name.clone(),
                rule: Rule::Unanswerable,
                reason: "the repository does not answer it".into(),
            };
            (q.id.clone(), e)
        })
        .collect();
    let case = Case {
        kind: RunKind::CurateVerify,
        keys,
        done: 4,
        failed: 2,
        excluded,
    };
    case.check();
}

#[test]
fn each_kind_reads_back_from_its_name_and_make_checklist_also_as_a_curate_stage() {
    for kind in RunKind::ALL {
        assert_eq!(RunKind::named(kind.name()), Some(kind));
        let written = value(kind);
        assert_eq!(written, json!(kind.name()));
        assert_eq!(serde_json::from_value::<RunKind>(written).unwrap(), kind);
    }
    assert_eq!(
        RunKind::named("curate make-checklist"),
        Some(RunKind::MakeChecklist)
    );
    assert_eq!(value(RunKind::MakeChecklist), json!("make-checklist"));
    assert_eq!(RunKind::named("curate repos"), None);
}

/// A manifest as a run of `command` leaves it.
fn manifest_of(dir: &Path, command: &str) -> std::path::PathBuf {
    let path = dir.join("run.manifest");
    let l = Layout::new(
        &dir.join("out-{shard}.jsonl"),
        None,
        Some(Shard { index: 0, count: 1 }),
    )
    .unwrap();
    enlist(
        &l,
        &RunSpec::new(RunKind::MakeChecklist),
        std::iter::empty::<&String>(),
    )
    .unwrap();
    let mut m: Value = serde_json::from_slice(&std::fs::read(&l.manifest).unwrap()).unwrap();
    m["command"] = json!(command);
    crate::input::write_atomically(&path, m.to_string().as_bytes()).unwrap();
    path
}

#[test]
fn a_manifest_of_an_unknown_command_is_refused_naming_the_file_and_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest_of(dir.path(), "curate wizardry");
    let e = manifest::read(&path).unwrap_err();
    assert!(
        matches!(&e, ManifestError::UnknownCommand { path: p, command } if *p == path && command == "curate wizardry"),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("\"curate wizardry\""), "{text}");
    assert!(text.contains("curate themes"), "{text}");
    // `status` says the same.
    let e = read_run(&path).err().unwrap().to_string();
    assert!(e.contains("\"curate wizardry\""), "{e}");
    // A run written as `curate make-checklist` reads as make-checklist's.
    let path = manifest_of(dir.path(), "curate make-checklist");
    assert_eq!(
        manifest::read(&path).unwrap().command,
        RunKind::MakeChecklist
    );
}
