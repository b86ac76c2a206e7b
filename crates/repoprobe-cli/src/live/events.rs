//! Events between a run and what reports it (nextest's runner/reporter split): every run loop —
//! live calls ([`super::Live::run`], `--batch`) and `answer` — says what happened as an
//! [`Event`]; the one [`Reporter`] turns them into the progress bar, the lines above it and the
//! counts the summary prints. No run loop prints or counts by itself.

use super::progress::Meter;
use super::tally::Tally;
use repoprobe_core::model::failure::Cause;
use repoprobe_llm::Tokens;
use repoprobe_llm::price::Price;
use std::fmt::Display;
use std::time::{Duration, Instant};

/// How long a run may go without a word where no progress bar is drawn (a log, CI, a cluster
/// job's output) before it says it is still waiting: a slow server is never silence.
const QUIET: Duration = Duration::from_secs(30);

/// What happened in a run.
pub enum Event<'a> {
    /// The run starts with `total` keys to do (this shard's, not yet done).
    Started { total: usize },
    /// What one key spent: calls, their HTTP retries and re-asks, tokens.
    Spent {
        calls: u32,
        http_retries: u32,
        reasks: u32,
        tokens: Tokens,
        /// Of `calls`, those whose reply reported no usage.
        without_usage: u32,
    },
    /// HTTP retries made for the run rather than for a key (a batch's own calls).
    Retried { http_retries: u32 },
    /// A key's record is written; `note` says what it records as gone wrong, if anything (an
    /// agent that gave no answer).
    Done {
        key: &'a dyn Display,
        note: Option<&'a str>,
    },
    /// A key failed (`cause` is `None`) or could not run (`cause` says why): its failure
    /// record is written.
    Failed {
        key: &'a dyn Display,
        cause: Option<Cause>,
        reason: &'a str,
        violations: &'a [String],
    },
    /// Nothing finished for a while: the bar is redrawn.
    Waiting,
    /// A line for the user (a batch submitted, a result line skipped).
    Message(&'a str),
    /// The run is over.
    Finished,
}

/// Turns events into the progress bar and the lines above it, and counts the run.
pub struct Reporter {
    meter: Option<Meter>,
    price: Option<Price>,
    tally: Tally,
    /// The rate limit requests are waiting for, if any (shown on the bar).
    limit: Box<dyn Fn() -> Option<&'static str>>,
    /// When the run started and when it last said something (a line or a key finished).
    started: Instant,
    spoke: Instant,
}

impl Reporter {
    /// A reporter for a run that left `other_shards` keys to the other shards; `limit` says
    /// which rate limit holds requests back (`|| None` when none applies).
    pub fn new(
        price: Option<Price>,
        other_shards: usize,
        limit: impl Fn() -> Option<&'static str> + 'static,
    ) -> Reporter {
        Reporter {
            meter: None,
            price,
            tally: Tally {
                other_shards,
                ..Tally::default()
            },
            limit: Box::new(limit),
            started: Instant::now(),
            spoke: Instant::now(),
        }
    }

    pub fn on(&mut self, event: Event<'_>) {
        let speaks = !matches!(
            event,
            Event::Waiting | Event::Spent { .. } | Event::Retried { .. }
        );
        if speaks {
            self.spoke = Instant::now();
        }
        let t = &mut self.tally;
        match event {
            Event::Started { total } => {
                self.meter = Some(Meter::new(total, self.price));
                self.started = Instant::now();
                self.spoke = Instant::now();
            }
            Event::Spent {
                calls,
                http_retries,
                reasks,
                tokens,
                without_usage,
            } => {
                t.without_usage += u64::from(without_usage);
                t.calls += u64::from(calls);
                t.http_retries += u64::from(http_retries);
                t.reasks += u64::from(reasks);
                t.tokens += tokens;
            }
            Event::Retried { http_retries } => t.http_retries += u64::from(http_retries),
            Event::Done { key, note } => {
                if let Some(e) = note {
                    self.println(&format!("no answer: {key}: {e}"));
                }
                self.tally.done += 1;
                self.redraw();
            }
            Event::Failed {
                key,
                cause,
                reason,
                violations,
            } => {
                let mut msg = match cause {
                    Some(c) => format!("could not run ({}): {key}: {reason}", c.describe()),
                    None => format!("failed: {key}: {reason}"),
                };
                for v in violations {
                    msg.push_str(&format!("\n  - {v}"));
                }
                self.println(&msg);
                self.tally.failed += 1;
                if let Some(c) = cause {
                    *self.tally.could_not_run.entry(c).or_default() += 1;
                }
                self.redraw();
            }
            Event::Waiting => {
                self.redraw();
                if let Some(line) = self.still_waiting(self.spoke.elapsed()) {
                    self.println(&line);
                    self.spoke = Instant::now();
                }
            }
            Event::Message(line) => self.println(line),
            Event::Finished => {
                if let Some(m) = &self.meter {
                    m.finish();
                }
            }
        }
    }

    /// The counts, once the run is over.
    pub fn into_tally(self) -> Tally {
        self.tally
    }

    /// The line a run without a drawn bar prints after [`QUIET`] without a word.
    fn still_waiting(&self, quiet: Duration) -> Option<String> {
        let m = self.meter.as_ref().filter(|m| m.is_hidden())?;
        if quiet < QUIET {
            return None;
        }
        let (finished, total) = m.counts();
        Some(format!(
            "still waiting: {finished} of {total} key(s) finished after {:.0} s, none in the last \
             {:.0} s (each request ends by --timeout-s)",
            self.started.elapsed().as_secs_f64(),
            quiet.as_secs_f64()
        ))
    }

    fn redraw(&self) {
        if let Some(m) = &self.meter {
            m.update(&self.tally, (self.limit)());
        }
    }

    fn println(&self, line: &str) {
        match &self.meter {
            Some(m) => m.println(line),
            None => eprintln!("{}", repoprobe_core::text::terminal_safe_lines(line)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_run_without_a_bar_says_it_is_still_waiting() {
        let mut r = Reporter::new(None, 0, || None);
        r.on(Event::Started { total: 3 });
        r.on(Event::Done {
            key: &"q1",
            note: None,
        });
        assert_eq!(r.still_waiting(QUIET - Duration::from_secs(1)), None);
        let line = r.still_waiting(QUIET).unwrap();
        assert!(
            line.starts_with("still waiting: 1 of 3 key(s) finished after"),
            "{line}"
        );
        assert!(line.contains("none in the last 30 s"), "{line}");
    }

    #[test]
    fn the_reporter_counts_what_the_events_say() {
        let mut r = Reporter::new(None, 3, || Some("requests"));
        r.on(Event::Started { total: 4 });
        let spent = |calls, http_retries, reasks| Event::Spent {
            calls,
            http_retries,
            reasks,
            tokens: Tokens {
                input_tokens: 10,
                output_tokens: 2,
            },
            without_usage: 0,
        };
        r.on(spent(2, 1, 1));
        r.on(Event::Done {
            key: &"q1",
            note: None,
        });
        r.on(spent(1, 0, 0));
        r.on(Event::Done {
            key: &"q2",
            note: Some("the agent timed out"),
        });
        r.on(spent(3, 2, 2));
        r.on(Event::Failed {
            key: &"q3",
            cause: None,
            reason: "invalid",
            violations: &["`k1` is missing".to_string()],
        });
        r.on(Event::Failed {
            key: &"q4",
            cause: Some(Cause::Auth),
            reason: "HTTP 401",
            violations: &[],
        });
        r.on(Event::Retried { http_retries: 4 });
        r.on(Event::Waiting);
        r.on(Event::Message("batch b1: submitted 3 requests"));
        r.on(Event::Finished);
        let t = r.into_tally();
        assert_eq!((t.done, t.failed, t.other_shards), (2, 2, 3));
        assert_eq!(
            t.could_not_run.into_iter().collect::<Vec<_>>(),
            [(Cause::Auth, 1)]
        );
        assert_eq!((t.calls, t.http_retries, t.reasks), (6, 7, 3));
        assert_eq!((t.tokens.input_tokens, t.tokens.output_tokens), (30, 6));
    }
}
