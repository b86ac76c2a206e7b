//! The closing line of a long run and its exit code.

use super::tally::Tally;
use crate::exit::Exit;
use crate::shard::Shard;
use repoprobe_llm::price::Price;
use std::time::{Duration, Instant};

/// The closing line of a long run.
pub struct Summary<'a> {
    pub command: &'a str,
    pub verb: &'a str,
    pub already_done: usize,
    pub skipped: &'a [String],
    pub failures: &'a std::path::Path,
    pub shard: Option<Shard>,
    pub price: Option<Price>,
    pub started: Instant,
}

impl Summary<'_> {
    /// Prints the summary and returns the exit code: 0 when every key is done, 1 when some
    /// failed or input records were left out.
    pub fn print(&self, tally: &Tally, input_issues: bool) -> Exit {
        eprintln!("{}", self.line(tally, self.started.elapsed()));
        if let Some(stopped) = tally.stopped {
            eprintln!("{}: {}", self.command, stopped.line());
            return Exit::Requeue;
        }
        if tally.failed > 0 || input_issues {
            Exit::InvalidRecords
        } else {
            Exit::Ok
        }
    }

    /// The summary's one line, for a run that took `elapsed`.
    pub fn line(&self, tally: &Tally, elapsed: Duration) -> String {
        let mut skipped: String = self.skipped.iter().map(|s| format!(", {s}")).collect();
        if let Some(shard) = self.shard {
            skipped.push_str(&format!(
                ", {} left to the other shards (this is shard {shard})",
                tally.other_shards
            ));
        }
        let unreported = match tally.without_usage {
            0 => String::new(),
            n => format!(
                " ({n} call(s) whose reply reported no usage: their tokens are not counted, \
                 nor their cost)"
            ),
        };
        let cost = match self.price {
            Some(p) => format!("; ≈${:.2} estimated", p.cost(tally.tokens)),
            None => String::new(),
        };
        format!(
            "{}: {} {}, {} already done{skipped}, {} failed{}; \
             {} retries ({} HTTP, {} re-asks); {} calls; tokens {} in, {} out{unreported}{cost}; \
             {:.1} s",
            self.command,
            tally.done,
            self.verb,
            self.already_done,
            tally.failed,
            if tally.failed > 0 {
                format!(
                    " ({}see {}; a rerun tries them again)",
                    could_not_run(tally),
                    self.failures.display()
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
            elapsed.as_secs_f64(),
        )
    }
}

/// "3 could not run: 2 authentication, 1 quota or rate limit; " (empty when none did).
pub fn could_not_run(tally: &Tally) -> String {
    let n: usize = tally.could_not_run.values().sum();
    if n == 0 {
        return String::new();
    }
    let by: Vec<String> = tally
        .could_not_run
        .iter()
        .map(|(cause, k)| format!("{k} {}", cause.describe()))
        .collect();
    format!("{n} could not run: {}; ", by.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_llm::Tokens;
    use std::path::Path;

    fn summary<'a>(
        skipped: &'a [String],
        shard: Option<Shard>,
        price: Option<Price>,
    ) -> Summary<'a> {
        Summary {
            command: "judge",
            verb: "judged",
            already_done: 3,
            skipped,
            failures: Path::new("runs/judgments.failures.ndjson"),
            shard,
            price,
            started: Instant::now(),
        }
    }

    fn tally(failed: usize) -> Tally {
        Tally {
            done: 40,
            failed,
            http_retries: 2,
            reasks: 5,
            calls: 47,
            tokens: Tokens {
                input_tokens: 123_456,
                output_tokens: 7_890,
            },
            without_usage: 0,
            other_shards: 9,
            stopped: None,
            could_not_run: Default::default(),
        }
    }

    #[test]
    fn the_summary_says_how_many_calls_reported_no_usage() {
        let s = summary(&[], None, None);
        let mut t = tally(0);
        let line = s.line(&t, Duration::from_millis(600));
        assert!(!line.contains("reported no usage"), "{line}");
        t.without_usage = 3;
        let line = s.line(&t, Duration::from_millis(600));
        assert!(
            line.contains(
                "tokens 123456 in, 7890 out (3 call(s) whose reply reported no usage: their \
                 tokens are not counted, nor their cost)"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_summary_of_a_clean_run() {
        let s = summary(&[], None, None);
        insta::assert_snapshot!(s.line(&tally(0), Duration::from_millis(12_345)));
    }

    #[test]
    fn the_summary_of_a_shard_with_failures_skips_and_a_price() {
        let skipped = ["2 answers without a checklist".to_string()];
        let s = summary(
            &skipped,
            Some("1/4".parse().unwrap()),
            Some(Price {
                input: 3.0,
                output: 15.0,
            }),
        );
        insta::assert_snapshot!(s.line(&tally(2), Duration::from_millis(600)));
    }

    #[test]
    fn the_summary_says_why_runs_could_not_run_by_cause() {
        use repoprobe_core::model::failure::Cause;
        let s = summary(&[], None, None);
        let mut t = tally(4);
        t.could_not_run = [(Cause::RateLimit, 1), (Cause::Auth, 2)].into();
        let line = s.line(&t, Duration::from_millis(600));
        assert!(
            line.contains(
                "4 failed (3 could not run: 2 authentication, 1 quota or rate limit; see \
                 runs/judgments.failures.ndjson; a rerun tries them again)"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_exit_code_says_whether_every_key_is_done() {
        let s = summary(&[], None, None);
        assert_eq!(s.print(&tally(0), false), Exit::Ok);
        assert_eq!(s.print(&tally(0), true), Exit::InvalidRecords);
        assert_eq!(s.print(&tally(1), false), Exit::InvalidRecords);
    }
}
