//! What a plan's stages spent, read back from their outputs: the records' `usage` (answers:
//! tokens, turns and the cost the run recorded; judgments: calls and tokens) and the failure
//! records' beside them (a failed call is paid for too). Set beside the estimate when the plan
//! ends, and the ground of `--calibrate`.

use crate::live::estimate::Estimate;
use repoprobe_llm::price::Price;
use serde_json::Value;
use std::path::Path;

/// The spending of one stage output.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Spent {
    /// Records read (finished keys and failure records).
    pub records: u64,
    pub used: Estimate,
    /// Dollars the records say they cost (answers), else tokens × price.
    pub usd: Option<f64>,
}

impl Spent {
    /// Both spendings together (the shards of one stage).
    pub fn plus(self, o: Spent) -> Spent {
        Spent {
            records: self.records + o.records,
            used: Estimate {
                calls: self.used.calls + o.used.calls,
                tokens: repoprobe_llm::Tokens {
                    input_tokens: self.used.tokens.input_tokens + o.used.tokens.input_tokens,
                    output_tokens: self.used.tokens.output_tokens + o.used.tokens.output_tokens,
                },
            },
            usd: self.usd.zip(o.usd).map(|(a, b)| a + b),
        }
    }
}

/// What `out` and its failures journal spent; `price` values tokens whose record has no cost.
pub fn of_output(out: &Path, price: Option<Price>) -> Spent {
    let mut s = Spent::default();
    let mut recorded_usd = 0.0;
    let mut priced_tokens = repoprobe_llm::Tokens::default();
    for path in [out.to_path_buf(), crate::output::failures_path(out)] {
        let Ok(records) = crate::input::read_json_records(&path) else {
            continue;
        };
        for v in records.into_iter().filter_map(|(_, r)| r.ok()) {
            s.records += 1;
            let (calls, tokens, usd) = usage(&v);
            s.used.calls += calls;
            s.used.tokens.input_tokens += tokens.input_tokens;
            s.used.tokens.output_tokens += tokens.output_tokens;
            match usd {
                Some(d) => recorded_usd += d,
                None => {
                    priced_tokens.input_tokens += tokens.input_tokens;
                    priced_tokens.output_tokens += tokens.output_tokens;
                }
            }
        }
    }
    let rest = match (priced_tokens == repoprobe_llm::Tokens::default(), price) {
        (true, _) => Some(0.0),
        (false, Some(p)) => Some(p.cost(priced_tokens)),
        (false, None) => None,
    };
    s.usd = rest.map(|r| r + recorded_usd);
    s
}

/// One record's calls, tokens and recorded cost: an answer's turns and `usage`, a judgment's
/// `usage.calls`.
pub fn usage(v: &Value) -> (u64, repoprobe_llm::Tokens, Option<f64>) {
    let u = &v["usage"];
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let calls = u["calls"]
        .as_u64()
        .or(v["agent"]["turns"].as_u64())
        .unwrap_or(0);
    let tokens = repoprobe_llm::Tokens {
        input_tokens: n(&u["input_tokens"]),
        output_tokens: n(&u["output_tokens"]),
    };
    (
        calls,
        tokens,
        u["cost_usd"]
            .as_f64()
            .filter(|d| d.is_finite() && *d >= 0.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_count_their_turns_and_cost_judgments_their_calls() {
        let a = json!({"question_id": "q", "model": "m", "answer": "x", "agent": {"turns": 7},
            "usage": {"input_tokens": 1000, "output_tokens": 50, "cost_usd": 0.25}});
        let j = json!({"question_id": "q", "items": [], "usage": {"calls": 2, "input_tokens": 10,
            "output_tokens": 5, "retries": 1}});
        assert_eq!(
            usage(&a),
            (
                7,
                repoprobe_llm::Tokens {
                    input_tokens: 1000,
                    output_tokens: 50
                },
                Some(0.25)
            )
        );
        assert_eq!(
            usage(&j),
            (
                2,
                repoprobe_llm::Tokens {
                    input_tokens: 10,
                    output_tokens: 5
                },
                None
            )
        );
        // Nonsense is zero, never a panic.
        assert_eq!(
            usage(&json!({"usage": {"cost_usd": -1, "calls": "x"}})).0,
            0
        );
    }
}
