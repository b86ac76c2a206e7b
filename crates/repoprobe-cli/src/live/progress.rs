//! The progress line of a long run (indicatif): done/total, rate, ETA, retries, failures,
//! tokens and estimated cost, and why requests wait when a rate limit holds them. Drawn only
//! when stderr is a terminal (indicatif hides it otherwise, so logs and CI stay clean); the
//! summary at the end is printed either way.

use super::tally::Tally;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use repoprobe_llm::price::Price;

pub struct Meter {
    bar: ProgressBar,
    price: Option<Price>,
}

impl Meter {
    pub fn new(total: usize, price: Option<Price>) -> Meter {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} {per_sec} ETA {eta} {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Meter { bar, price }
    }

    /// Redraws with the run's counts so far.
    pub fn update(&self, t: &Tally, paused: Option<&str>) {
        self.bar.set_position((t.done + t.failed) as u64);
        self.bar.set_message(status(t, self.price, paused));
    }

    /// Prints a line above the bar without tearing it. The line carries text from files and
    /// model replies (model names, error bodies): its control characters are shown escaped.
    pub fn println(&self, line: &str) {
        let line = repoprobe_core::text::terminal_safe_lines(line);
        self.bar.suspend(|| eprintln!("{line}"));
    }

    /// Whether the bar is drawn (stderr a terminal); where it is not, a quiet run says it is
    /// alive in lines of its own ([`super::events::Reporter`]).
    pub fn is_hidden(&self) -> bool {
        self.bar.is_hidden()
    }

    /// Keys finished (done or failed) and in all.
    pub fn counts(&self) -> (u64, u64) {
        (self.bar.position(), self.bar.length().unwrap_or(0))
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The counts after the bar: `3 failed · 12 retries · 1.2M in / 80k out tok · ≈$4.10`.
pub fn status(t: &Tally, price: Option<Price>, paused: Option<&str>) -> String {
    let mut s = format!(
        "{} failed · {} retries · {} in / {} out tok",
        t.failed,
        t.http_retries + t.reasks,
        short(t.tokens.input_tokens),
        short(t.tokens.output_tokens)
    );
    if let Some(p) = price {
        s.push_str(&format!(" · ≈${:.2}", p.cost(t.tokens)));
    }
    if let Some(what) = paused {
        s.push_str(&format!(" · waiting: {what} limit"));
    }
    s
}

fn short(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_llm::Tokens;

    #[test]
    fn the_status_says_counts_tokens_and_cost() {
        let t = Tally {
            done: 5,
            failed: 1,
            http_retries: 2,
            reasks: 1,
            tokens: Tokens {
                input_tokens: 1_234_567,
                output_tokens: 80_000,
            },
            ..Tally::default()
        };
        let p = Price {
            input: 3.0,
            output: 15.0,
        };
        assert_eq!(
            status(&t, Some(p), Some("tokens")),
            "1 failed · 3 retries · 1.23M in / 80.0k out tok · ≈$4.90 · waiting: tokens limit"
        );
        assert_eq!(
            status(&Tally::default(), None, None),
            "0 failed · 0 retries · 0 in / 0 out tok"
        );
    }
}
