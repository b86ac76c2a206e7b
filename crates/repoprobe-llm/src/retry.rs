//! The one retry policy of our HTTP clients (the judge models', `crate::Client::exchange`, and
//! GitHub's): which statuses are worth another attempt ([`retryable`]), the backoff schedule
//! ([`Backoff`]: exponential, capped, with jitter where the caller wants it), the server's asked
//! wait ([`retry_after`]), and the attempts loop ([`run`]), the only place that counts attempts
//! and sleeps between them.
//!
//! Each client decides what one attempt came to, because it knows its API (a quota message in a
//! 429, a rate limit in a 200, a gateway's 502 to hand back): it returns an [`Attempt`], and
//! [`run`] tries again or stops. Must not send requests, read bodies or know a provider.

use reqwest::header::HeaderMap;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Statuses another attempt may fix: 408 (the server timed out), 409 (a conflict of the
/// moment), 429 (a rate limit) and every 5xx (Anthropic's 529 "overloaded" among them).
pub fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// A backoff schedule: before the `n`th backoff (from 0) a wait of `base × 2ⁿ`, at most `max`;
/// with `jitter`, a uniform wait in [d/2, d] of that d, so that clients that failed together do
/// not come back together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
    pub jitter: bool,
}

impl Backoff {
    /// The wait before backoff `n` (0 for the first).
    pub fn delay(&self, n: u32) -> Duration {
        let d = self.base.saturating_mul(1u32 << n.min(16)).min(self.max);
        if !self.jitter {
            return d;
        }
        let d = d.as_secs_f64();
        Duration::from_secs_f64(d / 2.0 + d / 2.0 * unit_random())
    }
}

/// A number in [0, 1) from the std's randomly seeded hasher: enough for jitter, no extra crate.
fn unit_random() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// What a server asked for in `retry-after-ms` or `retry-after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// A wait: milliseconds from `retry-after-ms`, else seconds from `retry-after` (fractions
    /// read; a wait too long for a `Duration` is `Duration::MAX`, for the caller's cap).
    Wait(Duration),
    /// A `retry-after` that is not a number of seconds (an HTTP date, which we do not read):
    /// the caller's own wait applies.
    Unread,
}

/// The server's asked wait: `retry-after-ms` (more precise, OpenAI's) first, then
/// `retry-after`; `None` when neither is there.
pub fn retry_after(h: &HeaderMap) -> Option<RetryAfter> {
    let text = |name: &str| h.get(name).map(|v| v.to_str().unwrap_or("").trim());
    let number = |v: &str| v.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    let wait =
        |secs: f64| RetryAfter::Wait(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
    if let Some(ms) = text("retry-after-ms").and_then(number) {
        return Some(wait(ms / 1000.0));
    }
    let v = text("retry-after")?;
    Some(number(v).map_or(RetryAfter::Unread, wait))
}

/// How many times to try again, how to back off, and the longest wait of all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Attempts after the first.
    pub retries: u32,
    /// The wait of an attempt that asked for none.
    pub backoff: Backoff,
    /// Every wait is capped here, the server's asks included.
    pub max_wait: Duration,
}

/// What one attempt came to.
#[derive(Debug)]
pub enum Attempt<T, E> {
    Done(T),
    /// No other attempt would fix it.
    Fail(E),
    /// Worth another attempt, after `wait` (`None`: the policy's next backoff); `why`, in a few
    /// words, is for whoever is told of the wait; `error` is what the call ends with when no
    /// attempt is left.
    Retry {
        wait: Option<Duration>,
        why: String,
        error: E,
    },
}

/// A retry about to be waited for, as [`run`] tells its caller.
#[derive(Debug, Clone, Copy)]
pub struct Retrying<'a> {
    /// Which retry this is (1 for the first).
    pub retry: u32,
    pub wait: Duration,
    pub why: &'a str,
}

/// Calls `attempt` (with the number of retries made so far) until it is done or fails, or the
/// policy's retries are spent (then the last attempt's error). Before each wait, `on_retry` is
/// told of it. The backoff counts only the attempts that asked for no wait of their own: a
/// server's `retry-after` or reset time does not lengthen the next backoff.
///
/// `attempt` returns a future that owns or shares what it uses (not an `async` closure
/// borrowing its own state: a caller's future must stay `Send` to be spawned, which an
/// `AsyncFnMut`'s future cannot yet be shown to be); state an attempt changes goes in a `Cell`.
pub async fn run<T, E, F>(
    policy: &Policy,
    mut attempt: impl FnMut(u32) -> F,
    mut on_retry: impl FnMut(&Retrying<'_>),
) -> Result<T, E>
where
    F: Future<Output = Attempt<T, E>>,
{
    let mut made = 0u32;
    let mut backoffs = 0u32;
    loop {
        let (wait, why, error) = match attempt(made).await {
            Attempt::Done(reply) => return Ok(reply),
            Attempt::Fail(error) => return Err(error),
            Attempt::Retry { wait, why, error } => (wait, why, error),
        };
        if made >= policy.retries {
            return Err(error);
        }
        let wait = wait
            .unwrap_or_else(|| {
                backoffs += 1;
                policy.backoff.delay(backoffs - 1)
            })
            .min(policy.max_wait);
        made += 1;
        on_retry(&Retrying {
            retry: made,
            wait,
            why: &why,
        });
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let b = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(60),
            jitter: true,
        };
        for n in 0..4 {
            let d = b.delay(n);
            let full = b.base * (1 << n);
            assert!(d >= full / 2 && d <= full, "{d:?} for n = {n}");
        }
        assert!(b.delay(40) <= b.max);
    }

    #[test]
    fn backoff_without_jitter_is_the_schedule_itself() {
        let b = Backoff {
            base: Duration::from_secs(60),
            max: Duration::from_secs(960),
            jitter: false,
        };
        let waits: Vec<u64> = (0..6).map(|n| b.delay(n).as_secs()).collect();
        assert_eq!(waits, [60, 120, 240, 480, 960, 960]);
    }

    #[test]
    fn retry_after_headers_are_read_in_order_of_precision() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(
            retry_after(&h),
            Some(RetryAfter::Wait(Duration::from_secs(2)))
        );
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(
            retry_after(&h),
            Some(RetryAfter::Wait(Duration::from_millis(250)))
        );
        h.clear();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(RetryAfter::Unread));
        h.insert("retry-after", "1e300".parse().unwrap());
        assert_eq!(retry_after(&h), Some(RetryAfter::Wait(Duration::MAX)));
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap()
    }

    #[test]
    fn the_loop_retries_until_done_and_tells_each_wait() {
        let policy = Policy {
            retries: 5,
            backoff: Backoff {
                base: Duration::from_secs(1),
                max: Duration::from_secs(60),
                jitter: false,
            },
            max_wait: Duration::from_secs(30),
        };
        let mut told = Vec::new();
        let asked = [None, Some(Duration::from_secs(100)), None];
        let got: Result<u32, ()> = rt().block_on(run(
            &policy,
            |n| {
                let outcome = match asked.get(n as usize) {
                    Some(wait) => Attempt::Retry {
                        wait: *wait,
                        why: format!("try {n}"),
                        error: (),
                    },
                    None => Attempt::Done(n),
                };
                std::future::ready(outcome)
            },
            |r| told.push((r.retry, r.wait.as_secs(), r.why.to_string())),
        ));
        assert_eq!(got, Ok(3));
        // The server's wait is capped and does not count as a backoff.
        assert_eq!(
            told,
            [
                (1, 1, "try 0".to_string()),
                (2, 30, "try 1".to_string()),
                (3, 2, "try 2".to_string())
            ]
        );
    }

    #[test]
    fn the_loop_stops_at_a_failure_or_with_the_last_error() {
        let policy = Policy {
            retries: 2,
            backoff: Backoff {
                base: Duration::from_millis(1),
                max: Duration::from_millis(1),
                jitter: false,
            },
            max_wait: Duration::from_secs(1),
        };
        let mut calls = 0;
        let got: Result<(), u32> = rt().block_on(run(
            &policy,
            |n| {
                calls += 1;
                std::future::ready(Attempt::Retry {
                    wait: None,
                    why: String::new(),
                    error: n,
                })
            },
            |_| {},
        ));
        assert_eq!((got, calls), (Err(2), 3));
        let got: Result<(), &str> = rt().block_on(run(
            &policy,
            |_| std::future::ready(Attempt::Fail("final")),
            |_| {},
        ));
        assert_eq!(got, Err("final"));
    }
}
