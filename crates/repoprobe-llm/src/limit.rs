//! Rate limits of a long run: our own requests- and tokens-per-minute budgets (`--rpm`,
//! `--tpm`), and the server's word on what is left (`x-ratelimit-*` from OpenAI and compatible
//! servers, `anthropic-ratelimit-*` from Anthropic). Every request waits here before it is sent,
//! so a run of thousands of keys spreads itself over the minute instead of hitting a wall of
//! 429s and sleeping through backoffs.
//!
//! The budgets are token buckets that refill continuously (a full minute's worth at most). The
//! tokens of a request are not known before the reply, so a request takes an estimate (its body's
//! bytes / 4 plus the output limit) and the difference is settled when the usage comes back.
//! When the server says a budget is spent (remaining 0 requests, or fewer tokens than a request
//! takes), every request waits until the reset time it gives.

use reqwest::header::HeaderMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};
// tokio's clock, so that tests can run it paused.
use tokio::time::Instant;

/// The longest pause a server's reset time can impose; a later reset is capped.
const MAX_PAUSE: Duration = Duration::from_secs(120);

/// A shared limiter: one per client, consulted by every call in flight.
#[derive(Debug)]
pub struct Limiter {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    requests: Option<Bucket>,
    tokens: Option<Bucket>,
    /// No request starts before this (the server said a budget is spent).
    paused_until: Option<Instant>,
    /// Why, for the progress line.
    pause_reason: Option<&'static str>,
    /// The estimate of the last request, to judge whether the server's remaining tokens suffice.
    last_estimate: u64,
}

/// A token bucket refilled at `per_minute`, holding at most a minute's worth.
#[derive(Debug)]
struct Bucket {
    per_minute: f64,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn new(per_minute: u64, now: Instant) -> Bucket {
        Bucket {
            per_minute: per_minute as f64,
            level: per_minute as f64,
            at: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.at).as_secs_f64();
        self.level = (self.level + dt * self.per_minute / 60.0).min(self.per_minute);
        self.at = now;
    }

    /// How long until `n` is available (n is capped at the bucket's size, so a request larger
    /// than a minute's budget still goes, alone, when the bucket is full).
    fn wait_for(&self, n: f64) -> Duration {
        let n = n.min(self.per_minute);
        if self.level >= n {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((n - self.level) * 60.0 / self.per_minute)
        }
    }
}

/// What the server's headers say is left of one budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Remaining {
    pub remaining: u64,
    /// Until the budget is full again.
    pub reset: Option<Duration>,
}

impl Limiter {
    /// A limiter with the given budgets per minute (`None`: no limit of ours).
    pub fn new(rpm: Option<u64>, tpm: Option<u64>) -> Limiter {
        let now = Instant::now();
        Limiter {
            state: Mutex::new(State {
                requests: rpm.map(|n| Bucket::new(n, now)),
                tokens: tpm.map(|n| Bucket::new(n, now)),
                paused_until: None,
                pause_reason: None,
                last_estimate: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the numbers are still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a request estimated at `tokens` may start, then takes it from the budgets.
    pub async fn acquire(&self, tokens: u64) {
        loop {
            let wait = {
                let mut s = self.lock();
                let now = Instant::now();
                s.last_estimate = tokens;
                let mut wait = s
                    .paused_until
                    .map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
                if wait.is_zero() {
                    s.paused_until = None;
                    s.pause_reason = None;
                }
                if let Some(b) = s.requests.as_mut() {
                    b.refill(now);
                    wait = wait.max(b.wait_for(1.0));
                }
                if let Some(b) = s.tokens.as_mut() {
                    b.refill(now);
                    wait = wait.max(b.wait_for(tokens as f64));
                }
                if wait.is_zero() {
                    if let Some(b) = s.requests.as_mut() {
                        b.level -= 1.0;
                    }
                    if let Some(b) = s.tokens.as_mut() {
                        b.level -= (tokens as f64).min(b.per_minute);
                    }
                    return;
                }
                wait
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Corrects the token budget once a reply says what a request really used.
    pub fn settle(&self, estimated: u64, used: u64) {
        let mut s = self.lock();
        if let Some(b) = s.tokens.as_mut() {
            b.level -= used as f64 - estimated as f64;
            b.level = b.level.max(-b.per_minute);
        }
    }

    /// Reads the server's rate-limit headers and pauses every request until the reset of a
    /// budget that is spent.
    pub fn observe(&self, headers: &HeaderMap) {
        let (requests, tokens) = server_budgets(headers, SystemTime::now());
        let mut s = self.lock();
        let need = s.last_estimate.max(1);
        let spent = [
            (requests.filter(|r| r.remaining == 0), "requests"),
            (tokens.filter(|t| t.remaining < need), "tokens"),
        ];
        for (budget, what) in spent {
            let Some(Remaining {
                reset: Some(reset), ..
            }) = budget
            else {
                continue;
            };
            let until = Instant::now() + reset.min(MAX_PAUSE);
            if s.paused_until.is_none_or(|t| t < until) {
                s.paused_until = Some(until);
                s.pause_reason = Some(what);
            }
        }
    }

    /// Why requests are held back now, if they are (for the progress line).
    pub fn paused(&self) -> Option<&'static str> {
        let s = self.lock();
        s.paused_until
            .filter(|t| *t > Instant::now())
            .and(s.pause_reason)
    }
}

/// The requests and tokens budgets the server reports, whichever family of headers it sends.
/// For tokens, the tightest of Anthropic's `tokens`, `input-tokens` and `output-tokens`.
pub fn server_budgets(h: &HeaderMap, now: SystemTime) -> (Option<Remaining>, Option<Remaining>) {
    let openai = |what: &str| {
        let remaining = number(h, &format!("x-ratelimit-remaining-{what}"))?;
        let reset = text(h, &format!("x-ratelimit-reset-{what}")).and_then(|v| duration(&v));
        Some(Remaining { remaining, reset })
    };
    let anthropic = |what: &str| {
        let remaining = number(h, &format!("anthropic-ratelimit-{what}-remaining"))?;
        let reset = text(h, &format!("anthropic-ratelimit-{what}-reset")).and_then(|v| {
            let at = humantime::parse_rfc3339_weak(v.trim()).ok()?;
            Some(at.duration_since(now).unwrap_or(Duration::ZERO))
        });
        Some(Remaining { remaining, reset })
    };
    let requests = openai("requests").or_else(|| anthropic("requests"));
    let tokens = openai("tokens").or_else(|| {
        ["tokens", "input-tokens", "output-tokens"]
            .into_iter()
            .filter_map(anthropic)
            .min_by_key(|r| r.remaining)
    });
    (requests, tokens)
}

fn text(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)?.to_str().ok().map(str::to_string)
}

fn number(h: &HeaderMap, name: &str) -> Option<u64> {
    text(h, name)?.trim().parse().ok()
}

/// OpenAI's reset durations: `1s`, `6m0s`, `20ms`, `1h2m3.5s`.
fn duration(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(d) = humantime::parse_duration(v) {
        return Some(d);
    }
    // humantime takes no fractions ("3.5s"): read the units by hand.
    let mut total = 0.0;
    let mut rest = v;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..end].parse().ok()?;
        rest = &rest[end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        total += n * match &rest[..unit_end] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        rest = &rest[unit_end..];
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn openai_reset_durations_are_read() {
        assert_eq!(duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(duration("1h2m3.5s"), Some(Duration::from_secs_f64(3723.5)));
        assert_eq!(duration("soon"), None);
    }

    #[test]
    fn both_header_families_are_read() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600); // 2026-01-01
        let (r, t) = server_budgets(
            &headers(&[
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "1.5s"),
                ("x-ratelimit-remaining-tokens", "900"),
            ]),
            now,
        );
        assert_eq!(
            r,
            Some(Remaining {
                remaining: 0,
                reset: Some(Duration::from_millis(1500))
            })
        );
        assert_eq!(
            t,
            Some(Remaining {
                remaining: 900,
                reset: None
            })
        );
        let (r, t) = server_budgets(
            &headers(&[
                ("anthropic-ratelimit-requests-remaining", "7"),
                ("anthropic-ratelimit-requests-reset", "2026-01-01T00:00:10Z"),
                ("anthropic-ratelimit-input-tokens-remaining", "5000"),
                ("anthropic-ratelimit-output-tokens-remaining", "40"),
                (
                    "anthropic-ratelimit-output-tokens-reset",
                    "2026-01-01T00:00:02Z",
                ),
            ]),
            now,
        );
        assert_eq!(
            r,
            Some(Remaining {
                remaining: 7,
                reset: Some(Duration::from_secs(10))
            })
        );
        assert_eq!(
            t,
            Some(Remaining {
                remaining: 40,
                reset: Some(Duration::from_secs(2))
            })
        );
        assert_eq!(server_budgets(&HeaderMap::new(), now), (None, None));
    }

    #[tokio::test(start_paused = true)]
    async fn requests_per_minute_spread_the_requests() {
        let l = Limiter::new(Some(120), None); // 2 per second once the first minute's are used
        let start = Instant::now();
        for _ in 0..120 {
            l.acquire(0).await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "a minute's budget is there at once"
        );
        for _ in 0..10 {
            l.acquire(0).await;
        }
        let waited = start.elapsed().as_secs_f64();
        assert!(
            (waited - 5.0).abs() < 0.01,
            "10 more take 5 s at 2/s, took {waited}"
        );
    }

    #[test]
    fn a_spent_budget_pauses_until_its_reset() {
        let l = Limiter::new(None, None);
        assert_eq!(l.paused(), None);
        l.observe(&headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "30s"),
        ]));
        assert_eq!(l.paused(), Some("requests"));
        let l = Limiter::new(None, None);
        l.observe(&headers(&[
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "30s"),
        ]));
        assert_eq!(l.paused(), None, "budget left: no pause");
    }

    #[test]
    fn the_token_bucket_waits_and_settles() {
        let now = Instant::now();
        let mut b = Bucket::new(600, now); // 10 tokens a second
        b.level = 0.0;
        assert_eq!(b.wait_for(20.0), Duration::from_secs(2));
        assert_eq!(
            b.wait_for(10_000.0),
            Duration::from_secs(60),
            "capped at a minute's worth"
        );
        b.refill(now + Duration::from_secs(1));
        assert!((b.level - 10.0).abs() < 1e-9);
        let l = Limiter::new(None, Some(600));
        l.settle(100, 300);
        let s = l.lock();
        assert!((s.tokens.as_ref().unwrap().level - 400.0).abs() < 1.0);
    }
}
