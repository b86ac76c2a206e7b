//! `--batch`: the run loop of [`super`] over the providers' batch APIs. Each round submits
//! every key still to do as one batch, polls it until it ends, downloads the results and checks
//! each reply with the core exactly as a live call does: a valid reply is written, an invalid one
//! is asked again in the next round with the violations (up to `--max-retries`), a request the
//! provider could not serve is retried in the next round (up to `--max-http-retries`).
//!
//! The batch in flight is recorded in `<out>.batch.json` as soon as it is submitted, so a run
//! stopped while it waits (the batch may take hours) resumes by polling the same batch instead of
//! paying for it twice; the file is removed once its results are merged.

use super::events::{Event, Reporter};
use super::run::Live;
use super::tally::Tally;
use super::task::{Failed, Outcome, Provenance, Task};
use crate::output::Journal;
use anyhow::{Context, bail};
use repoprobe_core::model::failure::{Cause, CouldNotRun};
use repoprobe_llm::batch::{BatchRequest, BatchResult, BatchResults, ResultError};
use repoprobe_llm::{Client, Message, Request, Role, Tokens};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `<out>.batch.json` holds: the batch whose results are not merged yet.
#[derive(Debug, Serialize, Deserialize)]
struct InFlight {
    batch_id: String,
    provider: String,
    model: String,
    requests: usize,
}

/// `J.jsonl` → `J.batch.json`.
pub fn state_path(out: &Path) -> PathBuf {
    crate::output::beside(out, "batch.json")
}

/// A key still to do, with its conversation so far.
struct Entry<T: Task> {
    task: T,
    system: String,
    schema: Box<RawValue>,
    messages: Vec<Message>,
    reasks: u32,
    errors: u32,
    calls: u32,
    tokens: Tokens,
}

/// The batch id of a key: stable across runs (so a resumed batch's results find their keys).
fn custom_id(key: &impl Display) -> String {
    format!("k{:016x}", crate::shard::fnv1a(key.to_string().as_bytes()))
}

impl<K: Clone + Display + Serialize + Send + Eq + std::hash::Hash + 'static> Live<K> {
    /// Runs every task through the provider's batch API, polling every `poll`.
    pub fn run_batch<T, W>(
        &mut self,
        tasks: Vec<T>,
        mut write: W,
        poll: Duration,
    ) -> anyhow::Result<Tally>
    where
        T: Task<Key = K>,
        W: FnMut(&mut Journal<K>, &K, T::Value, Provenance<'_>) -> anyhow::Result<()>,
    {
        let runtime = crate::live::runtime()?;
        let (tasks, other_shards) = self.mine(tasks)?;
        let mut reporter = self.reporter(other_shards);
        reporter.on(Event::Started { total: tasks.len() });
        let describe = self.client.settings().structured == repoprobe_llm::Structured::Prompt;
        let mut entries = entries(tasks, describe)?;
        let state = state_path(&self.out.path);
        let mut in_flight = read_in_flight(&state)?;
        let client = std::sync::Arc::clone(&self.client);
        let ran: anyhow::Result<()> = runtime.block_on(async {
            while !entries.is_empty() || in_flight.is_some() {
                let mut http = 0u32;
                let batch = match in_flight.take() {
                    Some(b) => {
                        reporter.on(Event::Message(&format!(
                            "batch {}: resuming (submitted earlier with {} requests)",
                            b.batch_id, b.requests
                        )));
                        b
                    }
                    None => submit(&client, &entries, &state, &mut http, &mut reporter).await?,
                };
                let results = collect(&client, &batch, poll, &mut http).await?;
                reporter.on(Event::Retried { http_retries: http });
                for why in &results.unreadable {
                    reporter.on(Event::Message(&format!(
                        "warning: a batch result line is unreadable ({why}): skipped"
                    )));
                }
                self.merge(results.results, &mut entries, &mut write, &mut reporter)?;
                crate::input::remove_file(&state)
                    .with_context(|| format!("cannot remove {}", state.display()))?;
            }
            Ok(())
        });
        reporter.on(Event::Finished);
        ran.map(|()| reporter.into_tally())
    }

    /// Settles the keys one ended batch reported on (a key reported twice counts once) and
    /// retries, or fails past `--max-http-retries`, those it said nothing about.
    fn merge<T, W>(
        &mut self,
        results: Vec<BatchResult>,
        entries: &mut HashMap<String, Entry<T>>,
        write: &mut W,
        reporter: &mut Reporter,
    ) -> anyhow::Result<()>
    where
        T: Task<Key = K>,
        W: FnMut(&mut Journal<K>, &K, T::Value, Provenance<'_>) -> anyhow::Result<()>,
    {
        let mut answered = HashSet::new();
        for r in results {
            if !answered.insert(r.custom_id.clone()) {
                continue;
            }
            let Some(e) = entries.remove(&r.custom_id) else {
                continue; // done by an earlier run, or not this run's key
            };
            let reply = r.outcome.and_then(|bytes| Ok(self.client.reply(&bytes)?));
            match self.settle(e, reply) {
                Settled::Again(e) => {
                    entries.insert(r.custom_id, e);
                }
                Settled::Done(outcome) => self.record(outcome, write, reporter)?,
            }
        }
        // Keys of this batch the provider said nothing about are tried again.
        let silent: Vec<String> = entries
            .keys()
            .filter(|id| !answered.contains(*id))
            .cloned()
            .collect();
        for id in silent {
            let Some(e) = entries.get_mut(&id) else {
                continue;
            };
            e.errors += 1;
            if e.errors > self.max_http_retries() {
                let Some(e) = entries.remove(&id) else {
                    continue;
                };
                let o = failed(
                    e,
                    Failed::could_not_run(CouldNotRun::new(
                        Cause::Api,
                        "the batch returned no result for it",
                    )),
                );
                self.record(o, write, reporter)?;
            }
        }
        Ok(())
    }

    /// What one key's result in an ended batch comes to: its outcome, or the key again in the
    /// next round (a failed request within `--max-http-retries`, an invalid reply within
    /// `--max-retries`, re-asked with its violations).
    fn settle<T: Task<Key = K>>(
        &self,
        mut e: Entry<T>,
        reply: Result<repoprobe_llm::Reply, ResultError>,
    ) -> Settled<T> {
        let reply = match reply {
            Err(why) => {
                e.errors += 1;
                if e.errors <= self.max_http_retries() {
                    return Settled::Again(e);
                }
                let reason = format!("the batch request failed: {why}");
                let f = Failed::could_not_run(CouldNotRun::new(Cause::Api, reason));
                return Settled::Done(failed(e, f));
            }
            Ok(reply) => reply,
        };
        e.calls += 1;
        e.tokens += reply.tokens;
        let mut violations = match e.task.check(&reply.text) {
            Ok(value) => {
                return Settled::Done(Outcome {
                    key: e.task.key().clone(),
                    result: Ok((value, reply.text)),
                    http_retries: e.errors,
                    reasks: e.reasks,
                    calls: e.calls,
                    tokens: e.tokens,
                    // The providers' batch APIs report usage with every result.
                    without_usage: 0,
                });
            }
            Err(violations) => violations,
        };
        violations.extend(reply.note);
        if e.reasks < self.max_retries {
            e.reasks += 1;
            let said = if reply.text.trim().is_empty() {
                "(an empty reply)".to_string()
            } else {
                reply.text.clone()
            };
            e.messages.push(Message {
                role: Role::Assistant,
                content: said,
            });
            e.messages.push(Message {
                role: Role::User,
                content: e.task.reask(&violations),
            });
            return Settled::Again(e);
        }
        let reason = format!(
            "the reply was still invalid after {} re-ask(s)",
            self.max_retries
        );
        let f = Failed {
            violations,
            raw_reply: Some(reply.text),
            ..Failed::refused(reason)
        };
        Settled::Done(failed(e, f))
    }

    fn max_http_retries(&self) -> u32 {
        self.client.settings().max_http_retries
    }
}

/// How a key's result in a batch ended: asked again next round, or settled.
enum Settled<T: Task> {
    Again(Entry<T>),
    Done(Outcome<T::Key, (T::Value, String)>),
}

/// Every task as a key still to do, by its batch id.
fn entries<T: Task>(tasks: Vec<T>, describe: bool) -> anyhow::Result<HashMap<String, Entry<T>>> {
    let mut entries: HashMap<String, Entry<T>> = HashMap::new();
    for task in tasks {
        let id = custom_id(task.key());
        let (system, user) = task.prompt(describe);
        let schema =
            RawValue::from_string(task.schema().1).context("a reply schema is not JSON")?;
        let e = Entry {
            task,
            system,
            schema,
            messages: vec![Message {
                role: Role::User,
                content: user,
            }],
            reasks: 0,
            errors: 0,
            calls: 0,
            tokens: Tokens::default(),
        };
        if entries.insert(id.clone(), e).is_some() {
            bail!("two keys share the batch id {id}: run them without --batch");
        }
    }
    Ok(entries)
}

/// The batch an earlier run submitted and did not merge, if any.
fn read_in_flight(state: &Path) -> anyhow::Result<Option<InFlight>> {
    let Some(bytes) = crate::input::read_if_present(state)
        .with_context(|| format!("cannot read {}", state.display()))?
    else {
        return Ok(None);
    };
    Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a batch record: remove it to start anew",
            state.display()
        )
    })?))
}

/// Submits every key still to do as one batch and records it in `state` before anything else,
/// so that a run stopped from here on resumes it instead of paying twice.
async fn submit<T: Task>(
    client: &Client,
    entries: &HashMap<String, Entry<T>>,
    state: &Path,
    http: &mut u32,
    reporter: &mut Reporter,
) -> anyhow::Result<InFlight> {
    let mut requests = Vec::with_capacity(entries.len());
    for (id, e) in entries {
        let req = Request {
            system: &e.system,
            messages: &e.messages,
            schema_name: e.task.schema().0,
            schema: &e.schema,
            tool_description: e.task.tool_description(),
        };
        requests.push(BatchRequest {
            custom_id: id.clone(),
            body: client.body(req)?,
        });
    }
    let batch_id = client
        .batch_submit(&requests, http)
        .await
        .context("the batch could not be submitted (a rerun tries again)")?;
    let b = InFlight {
        batch_id,
        provider: client.settings().provider.as_str().into(),
        model: client.settings().model.clone(),
        requests: requests.len(),
    };
    // Atomically: a crash while writing leaves no half record, which a rerun would refuse (or
    // no record at all of a batch already paid for).
    crate::input::write_atomically(state, &serde_json::to_vec_pretty(&b)?)
        .with_context(|| format!("cannot write {}", state.display()))?;
    reporter.on(Event::Message(&format!(
        "batch {}: submitted {} requests (recorded in {})",
        b.batch_id,
        b.requests,
        state.display()
    )));
    Ok(b)
}

/// Polls the batch every `poll` until the provider says it ended, then downloads its results.
/// No deadline of its own: a provider may take up to a day, and a stopped run resumes it.
async fn collect(
    client: &Client,
    batch: &InFlight,
    poll: Duration,
    http: &mut u32,
) -> anyhow::Result<BatchResults> {
    let ended = loop {
        let st = client
            .batch_poll(&batch.batch_id, http)
            .await
            .with_context(|| format!("cannot poll batch {}", batch.batch_id))?;
        if st.ended {
            break st;
        }
        tokio::time::sleep(poll).await;
    };
    client
        .batch_results(&ended, http)
        .await
        .with_context(|| format!("cannot download batch {}", batch.batch_id))
}

fn failed<T: Task>(e: Entry<T>, f: Failed) -> Outcome<T::Key, (T::Value, String)> {
    Outcome {
        key: e.task.key().clone(),
        result: Err(f),
        http_retries: e.errors,
        reasks: e.reasks,
        calls: e.calls,
        tokens: e.tokens,
        without_usage: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_record_sits_beside_the_output_and_ids_are_stable() {
        assert_eq!(
            state_path(Path::new("out/j.jsonl")),
            Path::new("out/j.batch.json")
        );
        assert_eq!(
            custom_id(&"q1 / A / attempt 0 / run 0"),
            custom_id(&"q1 / A / attempt 0 / run 0")
        );
        assert_ne!(
            custom_id(&"q1 / A / attempt 0 / run 0"),
            custom_id(&"q1 / A / attempt 0 / run 1")
        );
        let id = custom_id(&"x");
        assert!(id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
