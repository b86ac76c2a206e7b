//! A live call's run: the client, the two journals and the loop's limits ([`Live`]); the one
//! run loop of every long run ([`run_jobs`]) and the ask–check–re-ask of one key.

use super::events::{Event, Reporter};
use super::summary::Summary;
use super::tally::Tally;
use super::task::{Failed, FailureRecord, Outcome, Provenance, Task, UsageOut};
use crate::exit::Exit;
use crate::output::Journal;
use crate::run_files::Layout;
use crate::run_files::manifest::RunSpec;
use crate::run_files::stop::{self, Ended, Stopped};
use anyhow::{Context, bail};
use repoprobe_agent::verdict::cause_of;
use repoprobe_core::model::failure::CouldNotRun;
use repoprobe_llm::price::Price;
use repoprobe_llm::{CallError, Client, Message, Role, Structured};
use serde::Serialize;
use serde_json::value::RawValue;
use std::fmt::Display;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A live call about to run: the client, the two journals and the loop's limits.
pub struct Live<K> {
    pub(super) client: Arc<Client>,
    pub out: Journal<K>,
    pub(super) failures: Journal<K>,
    pub(super) concurrency: usize,
    pub(super) max_retries: u32,
    pub(super) prompt_version: &'static str,
    pub(super) started: Instant,
    /// This shard's files and the run it joins (`runs`).
    pub(super) layout: Layout,
    pub(super) spec: RunSpec,
    /// What the keys in flight get after SIGTERM.
    pub(super) grace: Duration,
    pub(super) price: Option<Price>,
    /// `--batch`: the poll interval.
    pub(super) batch: Option<Duration>,
}

impl<K: Clone + Display + Serialize + Send + Eq + std::hash::Hash + 'static> Live<K> {
    /// Whether `key` is already in `--out`.
    pub fn is_done(&self, key: &K) -> bool {
        self.out.done.contains(key)
    }

    /// Runs every task as live calls, at most `--concurrency` in flight; `write` appends the
    /// record of a key whose reply was valid (its value, then the provenance to flatten into it).
    pub(super) fn run_calls<T, W>(&mut self, tasks: Vec<T>, mut write: W) -> anyhow::Result<Tally>
    where
        T: Task<Key = K>,
        W: FnMut(&mut Journal<K>, &K, T::Value, Provenance<'_>) -> anyhow::Result<()>,
    {
        let (tasks, other_shards) = self.mine(tasks)?;
        let mut reporter = self.reporter(other_shards);
        let client = Arc::clone(&self.client);
        let max_retries = self.max_retries;
        // Made as they are started: a run holds the futures in flight only.
        let jobs = tasks
            .into_iter()
            .map(|task| ask(Arc::clone(&client), task, max_retries));
        let ended = run_jobs(
            (self.concurrency, self.grace),
            jobs,
            &mut reporter,
            |o, reporter| self.record(o, &mut write, reporter),
        )?;
        let mut tally = reporter.into_tally();
        tally.stopped = ended.stopped;
        Ok(tally)
    }

    /// The reporter of this run: the bar shows the client's rate-limit waits.
    pub(super) fn reporter(&self, other_shards: usize) -> Reporter {
        let client = Arc::clone(&self.client);
        Reporter::new(self.price, other_shards, move || client.limiter().paused())
    }

    /// Writes how a key ended: its record to `--out` or a failure record, and reports it.
    pub(super) fn record<V, W>(
        &mut self,
        o: Outcome<K, (V, String)>,
        write: &mut W,
        reporter: &mut Reporter,
    ) -> anyhow::Result<()>
    where
        W: FnMut(&mut Journal<K>, &K, V, Provenance<'_>) -> anyhow::Result<()>,
    {
        let s = self.client.settings();
        let (provider, structured) = (s.provider.as_str(), s.structured.as_str());
        reporter.on(o.spent());
        let usage = UsageOut {
            input_tokens: o.tokens.input_tokens,
            output_tokens: o.tokens.output_tokens,
            calls: o.calls,
            retries: o.http_retries + o.reasks,
            calls_without_usage: o.without_usage,
        };
        match o.result {
            Ok((value, raw_reply)) => {
                let p = Provenance {
                    prompt_version: self.prompt_version,
                    provider,
                    structured,
                    usage,
                    raw_reply: &raw_reply,
                };
                write(&mut self.out, &o.key, value, p)?;
                reporter.on(Event::Done {
                    key: &o.key,
                    note: None,
                });
            }
            Err(f) => {
                self.failures.append(&FailureRecord {
                    provider: Some(provider),
                    structured: Some(structured),
                    usage: Some(usage),
                    ..f.record(&o.key, self.prompt_version)
                })?;
                reporter.on(f.event(&o.key));
            }
        }
        Ok(())
    }

    /// This shard's tasks (all of them without `--shard`) and how many were left to the others,
    /// once this shard has joined its run (`tasks` are the keys not yet done here).
    pub(super) fn mine<T: Task<Key = K>>(
        &mut self,
        tasks: Vec<T>,
    ) -> anyhow::Result<(Vec<T>, usize)> {
        let keys = tasks.iter().map(Task::key).chain(self.out.done.iter());
        if let Err(e) = crate::run_files::enlist(&self.layout, &self.spec, keys) {
            self.out.discard_if_new();
            return Err(e);
        }
        let shard = self.layout.shard;
        let (mine, others): (Vec<T>, Vec<T>) = tasks
            .into_iter()
            .partition(|t| shard.is_none_or(|s| s.owns(t.key())));
        Ok((mine, others.len()))
    }

    /// Prints the one-line summary and returns the exit code: 0 when every key is done, 1 when
    /// some failed or input records were left out. `skipped` lists extra counts
    /// ("1 answer(s) skipped (error set)").
    pub fn finish(
        &self,
        command: &str,
        verb: &str,
        already_done: usize,
        skipped: &[String],
        tally: &Tally,
        input_issues: bool,
    ) -> Exit {
        Summary {
            command,
            verb,
            already_done,
            skipped,
            failures: &self.failures.path,
            shard: self.layout.shard,
            price: self.price,
            started: self.started,
        }
        .print(tally, input_issues)
    }
}

/// The run loop of every long run (`judge` and the other live calls, `answer`): `jobs` with at
/// most `concurrency` in flight, each outcome handed to `record` (which writes it and reports
/// it) as soon as it is ready; the start, the waits and the end reported to `reporter`. On
/// SIGTERM no new job starts and those in flight get `grace` (`run_files::stop`).
pub fn run_jobs<F, O>(
    (concurrency, grace): (usize, Duration),
    jobs: impl ExactSizeIterator<Item = F>,
    reporter: &mut Reporter,
    mut record: impl FnMut(O, &mut Reporter) -> anyhow::Result<()>,
) -> anyhow::Result<Ended>
where
    F: std::future::Future<Output = O> + Send + 'static,
    O: Send + 'static,
{
    reporter.on(Event::Started { total: jobs.len() });
    let ran = drive(concurrency, grace, jobs, |tick| match tick {
        Tick::Done(o) => record(o, reporter),
        Tick::Idle => {
            reporter.on(Event::Waiting);
            Ok(())
        }
        Tick::Stopping { in_flight } => {
            reporter.on(Event::Message(&format!(
                "SIGTERM: no new key; {in_flight} in flight get {:.0} s to finish",
                grace.as_secs_f64()
            )));
            Ok(())
        }
    });
    reporter.on(Event::Finished);
    ran
}

/// What [`drive`] tells its caller.
enum Tick<O> {
    /// A job finished.
    Done(O),
    /// Nothing finished for half a second.
    Idle,
    /// SIGTERM came: no job starts from now on.
    Stopping { in_flight: usize },
}

/// Runs `jobs` with at most `concurrency` in flight on one current-thread runtime, handing each
/// result to `finished` as soon as it is ready, and [`Tick::Idle`] every half second while none
/// is (for redrawing progress); the first error from `finished` stops the run. On SIGTERM it
/// starts nothing more, waits up to `grace` for the jobs in flight, then drops the rest (a
/// dropped job kills its processes). [`run_jobs`]'s engine.
fn drive<F, O>(
    concurrency: usize,
    grace: Duration,
    jobs: impl IntoIterator<Item = F>,
    mut finished: impl FnMut(Tick<O>) -> anyhow::Result<()>,
) -> anyhow::Result<Ended>
where
    F: std::future::Future<Output = O> + Send + 'static,
    O: Send + 'static,
{
    let runtime = runtime()?;
    let ended = runtime.block_on(async {
        let mut term = stop::terminate().context("cannot watch for SIGTERM")?;
        let mut pending = jobs.into_iter();
        let mut running = tokio::task::JoinSet::new();
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            while deadline.is_none() && running.len() < concurrency.max(1) {
                let Some(job) = pending.next() else { break };
                running.spawn(job);
            }
            let joined = tokio::select! {
                j = running.join_next() => j,
                _ = term.recv(), if deadline.is_none() => {
                    deadline = Some(tokio::time::Instant::now() + grace);
                    finished(Tick::Stopping { in_flight: running.len() })?;
                    continue;
                }
                () = tokio::time::sleep(Duration::from_millis(500)) => {
                    if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                        let abandoned = running.len();
                        running.shutdown().await;
                        return Ok(Ended { stopped: Some(Stopped {
                            abandoned,
                            not_started: pending.count(),
                        })});
                    }
                    finished(Tick::Idle)?;
                    continue;
                }
            };
            match joined {
                None if deadline.is_some() => {
                    return Ok(Ended {
                        stopped: Some(Stopped {
                            abandoned: 0,
                            not_started: pending.count(),
                        }),
                    });
                }
                None => return Ok(Ended::default()),
                Some(Ok(o)) => finished(Tick::Done(o))?,
                Some(Err(e)) => bail!("a task stopped unexpectedly: {e}"),
            }
        }
    });
    if ended.as_ref().is_ok_and(|e| e.stopped.is_some()) {
        // Work handed to blocking threads (a git command) is not waited for: its process
        // group goes with us.
        runtime.shutdown_timeout(Duration::from_secs(1));
    }
    ended
}

/// Does one key: ask, check, re-ask with the violations, up to `max_retries` re-asks.
async fn ask<T: Task>(
    client: Arc<Client>,
    task: T,
    max_retries: u32,
) -> Outcome<T::Key, (T::Value, String)> {
    let (system, user) = task.prompt(client.settings().structured == Structured::Prompt);
    let (schema_name, schema) = task.schema();
    let schema = RawValue::from_string(schema).expect("a reply schema is valid JSON");
    let mut messages = vec![Message {
        role: Role::User,
        content: user,
    }];
    let mut o = Outcome::begun(task.key().clone());
    for asked in 0..=max_retries {
        let req = repoprobe_llm::Request {
            system: &system,
            messages: &messages,
            schema_name,
            schema: &schema,
            tool_description: task.tool_description(),
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
                    CallError::TooLong(_) => e.to_string(),
                    _ => format!("the call failed: {e}"),
                };
                o.result = Err(Failed::could_not_run(CouldNotRun::new(
                    cause_of(&e),
                    reason,
                )));
                return o;
            }
        };
        o.calls += 1;
        o.tokens += reply.tokens;
        // A reply always costs some prompt: none at all is a server that did not say.
        if reply.tokens == repoprobe_llm::Tokens::default() {
            o.without_usage += 1;
        }
        match task.check(&reply.text) {
            Ok(value) => {
                o.result = Ok((value, reply.text));
                return o;
            }
            Err(mut violations) => {
                violations.extend(reply.note);
                if asked < max_retries {
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
                        content: task.reask(&violations),
                    });
                }
                o.result = Err(Failed {
                    violations,
                    raw_reply: Some(reply.text),
                    ..Failed::refused(format!(
                        "the reply was still invalid after {max_retries} re-ask(s)"
                    ))
                });
            }
        }
    }
    o
}

/// The one async runtime of the CLI: a current thread with I/O and timers (every live call is
/// I/O bound, and one thread keeps the run loop's order simple).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
