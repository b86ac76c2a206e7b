//! `--estimate`: what a live run would cost before a cent is spent — its calls, the tokens they
//! would send and get back, and the dollars at the price in force — printed from the very
//! prompts the run would send, with nothing sent, no key read and no file written.
//!
//! Input tokens are the prompts' bytes / 4 (the client's own reckoning for `--tpm`); output
//! tokens are each protocol's expectation ([`Task::expected_output_tokens`]), an assumption said
//! as such. Re-asks, retries and the keys a batch API would discount are not counted.

use super::Task;
use repoprobe_llm::Tokens;
use repoprobe_llm::price::Price;
use std::fmt::Write;

/// What a run would ask.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    pub calls: u64,
    pub tokens: Tokens,
}

/// Estimates add up: an estimate of many runs is the sum of each one's.
impl std::ops::AddAssign for Estimate {
    fn add_assign(&mut self, e: Estimate) {
        self.calls += e.calls;
        self.tokens += e.tokens;
    }
}

/// The calls of `tasks`, one each, with their prompts as the run would send them.
pub fn of_tasks<T: Task>(tasks: &[T], describe_schema: bool) -> Estimate {
    let mut e = Estimate::default();
    for t in tasks {
        let (system, user) = t.prompt(describe_schema);
        let (_, schema) = t.schema();
        e.calls += 1;
        e.tokens.input_tokens += (system.len() + user.len() + schema.len()) as u64 / 4;
        e.tokens.output_tokens += t.expected_output_tokens();
    }
    e
}

/// What each tool result is assumed to add to the conversation, for `--estimate`.
pub const ESTIMATE_RESULT_TOKENS: u64 = 1_500;
/// What each model turn is assumed to write, for `--estimate`.
pub const ESTIMATE_TURN_OUTPUT_TOKENS: u64 = 300;

/// One agent run on `q` as the estimate models it: `turns` model calls, each re-sending the
/// prompt and the conversation so far, every tool result adding [`ESTIMATE_RESULT_TOKENS`] and
/// every turn writing [`ESTIMATE_TURN_OUTPUT_TOKENS`] (`repoprobe run --estimate` uses it too).
pub fn agent_run(q: &repoprobe_core::Question, turns: u64) -> Estimate {
    agent_run_of(
        repoprobe_core::protocol::answer::single_prompt(q, &q.repo.commit).len(),
        turns,
    )
}

/// [`agent_run`] for a run whose prompt is `prompt_bytes` long (`curate verify`'s, say).
pub fn agent_run_of(prompt_bytes: usize, turns: u64) -> Estimate {
    let prompt_tokens = prompt_bytes as u64 / 4;
    Estimate {
        calls: turns,
        tokens: Tokens {
            input_tokens: turns * prompt_tokens
                + ESTIMATE_RESULT_TOKENS * turns * turns.saturating_sub(1) / 2,
            output_tokens: turns * ESTIMATE_TURN_OUTPUT_TOKENS,
        },
    }
}

/// What the input tokens of a judge's estimate are.
pub const PROMPT_BYTES: &str = "the prompts' bytes / 4";

/// The estimate in words: `command` on `model`, `done` keys already in the output, `price` in
/// force (`None`: not in the table and not given), `input` saying where the input tokens come
/// from.
pub fn render(
    command: &str,
    model: &str,
    e: Estimate,
    done: usize,
    price: Option<Price>,
    input: &str,
) -> String {
    let mut s = String::new();
    let per_call = e.tokens.output_tokens.checked_div(e.calls).unwrap_or(0);
    let _ = writeln!(
        s,
        "{command} --estimate (nothing sent): {} call(s) to {model}, {done} key(s) already done",
        e.calls
    );
    let _ = writeln!(s, "  input  ≈ {} tokens ({input})", e.tokens.input_tokens);
    let _ = writeln!(
        s,
        "  output ≈ {} tokens (≈ {per_call} a call, assumed)",
        e.tokens.output_tokens
    );
    match price {
        Some(p) => {
            let _ = writeln!(
                s,
                "  cost   ≈ ${:.2} at ${} / ${} per million input / output tokens (--price-in, --price-out to change); re-asks and retries not counted",
                p.cost(e.tokens),
                p.input,
                p.output
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  cost   unknown: {model} is not in the price table; give --price-in and --price-out"
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_says_calls_tokens_and_dollars_or_why_not() {
        let e = Estimate {
            calls: 4,
            tokens: Tokens {
                input_tokens: 2_000_000,
                output_tokens: 400_000,
            },
        };
        let price = Price::of("gpt-5", None, None);
        let text = render("judge", "gpt-5", e, 2, price, PROMPT_BYTES);
        assert!(
            text.contains("4 call(s) to gpt-5, 2 key(s) already done"),
            "{text}"
        );
        assert!(text.contains("≈ 100000 a call"), "{text}");
        // 2 M × $1.25 + 0.4 M × $10 = $6.50.
        assert!(text.contains("≈ $6.50 at $1.25 / $10"), "{text}");
        let text = render("judge", "my-model", e, 0, None, PROMPT_BYTES);
        assert!(text.contains("not in the price table"), "{text}");
    }
}
