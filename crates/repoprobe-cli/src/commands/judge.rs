//! `repoprobe judge`: the checklist judge of paper §4.2, live. One call per (question, answer,
//! judge run) scores every item of the question at once; every reply is checked by
//! `repoprobe_core::judge::parse_reply`, and a reply that breaks a rule is sent back with the
//! violations until it is valid or `--max-retries` re-asks are spent.
//!
//! Output is an append-only JSONL journal, one line per finished key, written as soon as the key
//! finishes. Judgments go to `--out` (SPEC §2.3 records plus `prompt_version`, `provider`,
//! `structured`, `usage` and `raw_reply`); keys that could not be judged go to a separate
//! failures journal (`<out>.failures.ndjson` unless `--failures` names another) as
//! `"status": "failed"` lines with the reason. The failures never enter `--out`, so `score` never
//! sees them (and `.ndjson` is not read when a directory is given to `score`). On start both
//! journals are read back: a torn last line (a kill mid-write) is cut away and reported, keys
//! already in `--out` are skipped, and failed keys are tried again.

use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use crate::llm::{
    ApiKey, CallError, Client, Message, Provider, Request, Role, Settings, Structured, Tokens,
};
use anyhow::{Context, bail};
use repoprobe_core::judge::{self, PROMPT_VERSION, REPLY_NAME};
use repoprobe_core::{ItemScore, LoadOptions, Question};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The benchmark (questions with their checklists).
    #[arg(long)]
    benchmark: PathBuf,
    /// The answers to judge; answers with `error` set are skipped.
    #[arg(long)]
    answers: PathBuf,
    /// The judgments journal (JSONL, appended to; a rerun skips the keys already in it).
    #[arg(long)]
    out: PathBuf,
    /// Where keys that could not be judged are recorded [default: <out>.failures.ndjson].
    #[arg(long)]
    failures: Option<PathBuf>,
    /// API family; the key is read from OPENAI_API_KEY or ANTHROPIC_API_KEY.
    #[arg(long, value_enum)]
    provider: Provider,
    /// The judge model, as the API names it; also the `judge` of every record.
    #[arg(long)]
    model: String,
    /// API base URL [default: https://api.openai.com/v1 or https://api.anthropic.com].
    #[arg(long)]
    base_url: Option<String>,
    /// Judge runs per answer (`judge_run` 0..N-1, for the reliability table).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    /// Re-asks after an invalid reply (the violations are sent back), before the key fails.
    #[arg(long, default_value_t = 2)]
    max_retries: u32,
    /// Retries of one call after a transient HTTP failure (408, 409, 429, 5xx, 529, network).
    #[arg(long, default_value_t = 6)]
    max_http_retries: u32,
    /// First backoff delay in milliseconds; it doubles with each retry (up to 60 s), with
    /// jitter, unless the server sends `retry-after(-ms)`.
    #[arg(long, default_value_t = 1000)]
    backoff_ms: u64,
    /// Sampling temperature (omitted from requests when not given).
    #[arg(long)]
    temperature: Option<f64>,
    /// Sampling seed, for APIs that take one (OpenAI-compatible).
    #[arg(long)]
    seed: Option<u64>,
    /// Output token limit [default: the API's; 4096 for Anthropic, which requires one].
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 300.0)]
    timeout_s: f64,
    /// How the reply shape is imposed [default: schema for openai, tool for anthropic].
    #[arg(long, value_enum)]
    structured: Option<Structured>,
}

/// The key of a judgment (SPEC §2.3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    question_id: String,
    model: String,
    attempt: u32,
    judge: String,
    judge_run: u32,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / attempt {} / run {}",
            self.question_id, self.model, self.attempt, self.judge_run
        )
    }
}

/// One call to make.
struct Job {
    key: Key,
    question: Arc<Question>,
    answer: Arc<str>,
}

/// How a job ended.
struct Outcome {
    key: Key,
    result: Result<Judged, Failed>,
    http_retries: u32,
    reasks: u32,
    calls: u32,
    tokens: Tokens,
}

struct Judged {
    items: Vec<ItemScore>,
    raw_reply: String,
}

struct Failed {
    reason: String,
    violations: Vec<String>,
    raw_reply: Option<String>,
}

#[derive(Serialize)]
struct UsageOut {
    input_tokens: u64,
    output_tokens: u64,
    calls: u32,
    retries: u32,
}

/// A line of `--out`: SPEC §2.3 plus provenance.
#[derive(Serialize)]
struct JudgmentRecord<'a> {
    question_id: &'a str,
    model: &'a str,
    attempt: u32,
    judge: &'a str,
    judge_run: u32,
    items: &'a [ItemScore],
    prompt_version: &'a str,
    provider: &'a str,
    structured: &'a str,
    usage: UsageOut,
    raw_reply: &'a str,
}

/// A line of the failures journal: the key, `"status": "failed"` and why. Never a judgment.
#[derive(Serialize)]
struct FailureRecord<'a> {
    question_id: &'a str,
    model: &'a str,
    attempt: u32,
    judge: &'a str,
    judge_run: u32,
    status: &'a str,
    reason: &'a str,
    violations: &'a [String],
    prompt_version: &'a str,
    provider: &'a str,
    structured: &'a str,
    usage: UsageOut,
    raw_reply: Option<&'a str>,
}

#[derive(Default)]
struct Tally {
    judged: usize,
    failed: usize,
    http_retries: u64,
    reasks: u64,
    calls: u64,
    tokens: Tokens,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let key_env = a.provider.key_env();
    let Some(key) = ApiKey::from_env(key_env) else {
        bail!(
            "{key_env} is not set: the {} key is read from that environment variable only",
            a.provider.as_str()
        );
    };
    if !(a.timeout_s.is_finite() && a.timeout_s > 0.0) {
        bail!("--timeout-s must be a positive number of seconds");
    }
    if a.temperature.is_some_and(|t| !t.is_finite() || t < 0.0) {
        bail!("--temperature must be a non-negative number");
    }
    let structured = a
        .structured
        .unwrap_or_else(|| a.provider.default_structured());
    let settings = Settings {
        provider: a.provider,
        base_url: a
            .base_url
            .clone()
            .unwrap_or_else(|| a.provider.default_base_url().to_string()),
        model: a.model.clone(),
        structured,
        temperature: a.temperature,
        seed: a.seed,
        max_tokens: a.max_tokens,
        max_http_retries: a.max_http_retries,
        backoff: Duration::from_millis(a.backoff_ms),
        timeout: Duration::from_secs_f64(a.timeout_s),
    };

    let loaded = load_paths(
        &[a.benchmark.clone(), a.answers.clone()],
        LoadOptions::default(),
    );
    print_issues(&loaded);
    if loaded.has_unusable_input() {
        bail!("the benchmark or the answers could not be read (see above)");
    }
    let input_issues = !loaded.issues.is_empty();
    let ds = loaded.dataset;
    if ds.questions.is_empty() {
        bail!("no valid question in {}", a.benchmark.display());
    }
    let questions: HashMap<&str, Arc<Question>> = ds
        .questions
        .iter()
        .map(|q| (q.id.as_str(), Arc::new(q.clone())))
        .collect();

    let failures_path = a.failures.clone().unwrap_or_else(|| failures_path(&a.out));
    let mut out = Journal::open(&a.out)?;
    let mut failures = Journal::open(&failures_path)?;
    for j in [&out, &failures] {
        if let Some(n) = j.torn_bytes {
            eprintln!(
                "note: {}: the last line was cut off ({n} bytes, an interrupted write): removed; its key is judged again",
                j.path.display()
            );
        }
        if !j.unreadable.is_empty() {
            eprintln!(
                "warning: {}: line(s) {:?} are not judgment records: left as they are",
                j.path.display(),
                j.unreadable
            );
        }
    }

    let mut jobs = Vec::new();
    let (mut skipped_error, mut already_done) = (0usize, 0usize);
    for ans in &ds.answers {
        let text = match (&ans.error, &ans.answer) {
            (None, Some(t)) => t,
            _ => {
                skipped_error += 1;
                continue;
            }
        };
        let Some(q) = questions.get(ans.question_id.as_str()) else {
            continue; // reported by the loader as an answer to an unknown question
        };
        let answer: Arc<str> = Arc::from(text.as_str());
        for judge_run in 0..a.runs {
            let key = Key {
                question_id: ans.question_id.clone(),
                model: ans.model.clone(),
                attempt: ans.attempt,
                judge: a.model.clone(),
                judge_run,
            };
            if out.done.contains(&key) {
                already_done += 1;
            } else {
                jobs.push(Job {
                    key,
                    question: Arc::clone(q),
                    answer: Arc::clone(&answer),
                });
            }
        }
    }

    let client = Arc::new(Client::new(settings, key)?);
    let started = Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let to_do = jobs.len();
    let tally = runtime.block_on(judge_all(
        Arc::clone(&client),
        jobs,
        a.concurrency as usize,
        a.max_retries,
        &mut out,
        &mut failures,
    ))?;

    eprintln!(
        "judge: {} judged, {} already done, {} answer(s) skipped (error set), {} failed{}; \
         {} retries ({} HTTP, {} re-asks); {} calls; tokens {} in, {} out; {:.1} s",
        tally.judged,
        already_done,
        skipped_error,
        tally.failed,
        if tally.failed > 0 {
            format!(
                " (see {}; a rerun tries them again)",
                failures_path.display()
            )
        } else {
            String::new()
        },
        tally.http_retries + tally.reasks,
        tally.http_retries,
        tally.reasks,
        tally.calls,
        tally.tokens.input_tokens,
        tally.tokens.output_tokens,
        started.elapsed().as_secs_f64(),
    );
    debug_assert_eq!(tally.judged + tally.failed, to_do);
    Ok(if tally.failed > 0 || input_issues {
        Exit::InvalidRecords
    } else {
        Exit::Ok
    })
}

/// `J.jsonl` → `J.failures.ndjson`.
fn failures_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "judgments".into());
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    out.with_file_name(format!("{stem}.failures.ndjson"))
}

/// Runs every job with at most `concurrency` in flight and writes each outcome as it arrives.
async fn judge_all(
    client: Arc<Client>,
    jobs: Vec<Job>,
    concurrency: usize,
    max_retries: u32,
    out: &mut Journal,
    failures: &mut Journal,
) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    let mut pending = jobs.into_iter();
    let mut running = tokio::task::JoinSet::new();
    let s = client.settings();
    let (provider, structured, judge) =
        (s.provider.as_str(), s.structured.as_str(), s.model.clone());
    loop {
        while running.len() < concurrency {
            let Some(job) = pending.next() else { break };
            running.spawn(judge_one(Arc::clone(&client), job, max_retries));
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let o = match joined {
            Ok(o) => o,
            Err(e) => bail!("a judging task stopped unexpectedly: {e}"),
        };
        tally.http_retries += u64::from(o.http_retries);
        tally.reasks += u64::from(o.reasks);
        tally.calls += u64::from(o.calls);
        tally.tokens += o.tokens;
        let usage = UsageOut {
            input_tokens: o.tokens.input_tokens,
            output_tokens: o.tokens.output_tokens,
            calls: o.calls,
            retries: o.http_retries + o.reasks,
        };
        let k = &o.key;
        debug_assert_eq!(k.judge, judge);
        match &o.result {
            Ok(j) => {
                out.append(&JudgmentRecord {
                    question_id: &k.question_id,
                    model: &k.model,
                    attempt: k.attempt,
                    judge: &k.judge,
                    judge_run: k.judge_run,
                    items: &j.items,
                    prompt_version: PROMPT_VERSION,
                    provider,
                    structured,
                    usage,
                    raw_reply: &j.raw_reply,
                })?;
                tally.judged += 1;
            }
            Err(f) => {
                eprintln!("failed: {k}: {}", f.reason);
                for v in &f.violations {
                    eprintln!("  - {v}");
                }
                failures.append(&FailureRecord {
                    question_id: &k.question_id,
                    model: &k.model,
                    attempt: k.attempt,
                    judge: &k.judge,
                    judge_run: k.judge_run,
                    status: "failed",
                    reason: &f.reason,
                    violations: &f.violations,
                    prompt_version: PROMPT_VERSION,
                    provider,
                    structured,
                    usage,
                    raw_reply: f.raw_reply.as_deref(),
                })?;
                tally.failed += 1;
            }
        }
    }
    Ok(tally)
}

/// Judges one key: ask, check, re-ask with the violations, up to `max_retries` re-asks.
async fn judge_one(client: Arc<Client>, job: Job, max_retries: u32) -> Outcome {
    let q = &job.question;
    let structured = client.settings().structured;
    let prompt = judge::prompt(q, &job.answer, structured == Structured::Prompt);
    let schema =
        RawValue::from_string(judge::reply_schema_json(q)).expect("the reply schema is valid JSON");
    let mut messages = vec![Message {
        role: Role::User,
        content: prompt.user,
    }];
    let mut o = Outcome {
        key: job.key,
        result: Err(Failed {
            reason: String::new(),
            violations: Vec::new(),
            raw_reply: None,
        }),
        http_retries: 0,
        reasks: 0,
        calls: 0,
        tokens: Tokens::default(),
    };
    for ask in 0..=max_retries {
        let req = Request {
            system: &prompt.system,
            messages: &messages,
            schema_name: REPLY_NAME,
            schema: &schema,
        };
        let mut retries = 0;
        let called = client.call(req, &mut retries).await;
        o.http_retries += retries;
        let reply = match called {
            Ok(r) => r,
            Err(e) => {
                let reason = match &e {
                    CallError::Status { status, .. } if (400..500).contains(status) => {
                        format!("the API refused the request: {e}")
                    }
                    _ => format!("the call failed: {e}"),
                };
                o.result = Err(Failed {
                    reason,
                    violations: Vec::new(),
                    raw_reply: None,
                });
                return o;
            }
        };
        o.calls += 1;
        o.tokens += reply.tokens;
        match judge::parse_reply(q, &reply.text) {
            Ok(items) => {
                o.result = Ok(Judged {
                    items,
                    raw_reply: reply.text,
                });
                return o;
            }
            Err(mut violations) => {
                violations.extend(reply.note);
                if ask < max_retries {
                    o.reasks += 1;
                    let said = if reply.text.trim().is_empty() {
                        "(an empty reply)".to_string()
                    } else {
                        reply.text.clone()
                    };
                    messages.push(Message {
                        role: Role::Assistant,
                        content: said,
                    });
                    messages.push(Message {
                        role: Role::User,
                        content: judge::reask_message(&violations),
                    });
                }
                o.result = Err(Failed {
                    reason: format!("the reply was still invalid after {max_retries} re-ask(s)"),
                    violations,
                    raw_reply: Some(reply.text),
                });
            }
        }
    }
    o
}

/// An append-only JSONL file, one record per line, each line written whole and at once.
struct Journal {
    path: PathBuf,
    /// Opened in append mode: every write goes to the end, whatever else happened to the file.
    file: Option<File>,
    /// Keys of the judgment records already in the file.
    done: HashSet<Key>,
    /// Bytes of a torn last line that were cut away on opening.
    torn_bytes: Option<usize>,
    /// 1-based numbers of complete lines that are not judgment or failure records.
    unreadable: Vec<usize>,
}

impl Journal {
    /// Opens the journal, repairs a torn last line and reads the keys already done. A journal
    /// that does not exist is created by the first [`Journal::append`], not before.
    fn open(path: &Path) -> anyhow::Result<Journal> {
        let mut j = Journal {
            path: path.to_path_buf(),
            file: None,
            done: HashSet::new(),
            torn_bytes: None,
            unreadable: Vec::new(),
        };
        if !path.exists() {
            return Ok(j);
        }
        let mut file = j.open_file()?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let tail = &bytes[complete..];
        let mut body = &bytes[..complete];
        if tail.iter().all(u8::is_ascii_whitespace) {
            if !tail.is_empty() {
                file.set_len(complete as u64)?;
            }
        } else if serde_json::from_slice::<Value>(tail).is_ok_and(|v| v.is_object()) {
            // The record is whole and only its newline is missing: keep it.
            file.write_all(b"\n")?;
            body = &bytes[..];
        } else {
            file.set_len(complete as u64)
                .with_context(|| format!("cannot repair {}", path.display()))?;
            j.torn_bytes = Some(tail.len());
        }
        for (n, line) in body.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(line) {
                Ok(v) if v.get("status").is_some_and(|s| s == "failed") => {}
                Ok(v) => match key_of(&v) {
                    Some(k) => {
                        j.done.insert(k);
                    }
                    None => j.unreadable.push(n + 1),
                },
                Err(_) => j.unreadable.push(n + 1),
            }
        }
        j.file = Some(file);
        Ok(j)
    }

    fn open_file(&self) -> anyhow::Result<File> {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))
    }

    /// Writes one record as one line and hands it to the OS at once.
    fn append<T: Serialize>(&mut self, record: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        if self.file.is_none() {
            self.file = Some(self.open_file()?);
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(&line)
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write to {}", self.path.display()))
    }
}

/// The key of a judgment record (one with `items`), `None` for anything else.
fn key_of(v: &Value) -> Option<Key> {
    let s = |k: &str| v.get(k)?.as_str().map(str::to_string);
    let n = |k: &str| match v.get(k) {
        None | Some(Value::Null) => Some(0),
        Some(x) => x.as_u64().and_then(|x| u32::try_from(x).ok()),
    };
    v.get("items")?.as_array()?;
    Some(Key {
        question_id: s("question_id")?,
        model: s("model")?,
        attempt: n("attempt")?,
        judge: s("judge")?,
        judge_run: n("judge_run")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failures_journal_sits_beside_the_output() {
        assert_eq!(
            failures_path(Path::new("out/j.jsonl")),
            Path::new("out/j.failures.ndjson")
        );
        assert_eq!(
            failures_path(Path::new("j.json")),
            Path::new("j.json.failures.ndjson")
        );
    }

    #[test]
    fn a_torn_last_line_is_cut_and_whole_lines_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.jsonl");
        let line =
            r#"{"question_id":"q1","model":"A","attempt":0,"judge":"J","judge_run":0,"items":[]}"#;
        std::fs::write(&p, format!("{line}\n{}", &line[..30])).unwrap();
        let mut j = Journal::open(&p).unwrap();
        assert_eq!(j.torn_bytes, Some(30));
        assert_eq!(j.done.len(), 1);
        j.append(&serde_json::json!({"x": 1})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{line}\n{{\"x\":1}}\n")
        );
        // A whole record without its newline is kept, not cut.
        std::fs::write(&p, line).unwrap();
        let j = Journal::open(&p).unwrap();
        assert_eq!((j.torn_bytes, j.done.len()), (None, 1));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{line}\n"));
    }
}
