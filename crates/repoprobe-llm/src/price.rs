//! Estimated cost of a run: tokens × price. Prices come from `--price-in` / `--price-out`
//! (USD per million tokens) or, failing those, from a small table of list prices matched by the
//! longest model-name prefix. Prices change and gateways charge differently: the figure is an
//! estimate, labelled as such wherever it is shown.

use super::Tokens;

/// USD per million input and output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// List prices (USD per million tokens, standard tier, no caching) as published in late 2025.
/// Gemini's Pro models charge more for prompts over 200k tokens; the table has the price of
/// shorter prompts (an agent's turn or a judge's prompt stays well under), so a run with longer
/// prompts is underestimated.
const LIST: &[(&str, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus-4", 15.0, 75.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("gpt-5-nano", 0.05, 0.4),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5", 1.25, 10.0),
    ("gpt-4.1-nano", 0.1, 0.4),
    ("gpt-4.1-mini", 0.4, 1.6),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4o", 2.5, 10.0),
    ("gemini-3-pro", 2.0, 12.0),
    ("gemini-2.5-pro", 1.25, 10.0),
    ("gemini-2.5-flash-lite", 0.1, 0.4),
    ("gemini-2.5-flash", 0.3, 2.5),
];

impl Price {
    /// The price in force: both flags, else the table's entry for `model`, else none. One flag
    /// alone takes the other side from the table (or 0).
    pub fn of(model: &str, input: Option<f64>, output: Option<f64>) -> Option<Price> {
        let listed = LIST
            .iter()
            .filter(|(prefix, ..)| model.starts_with(prefix))
            .max_by_key(|(prefix, ..)| prefix.len())
            .map(|&(_, i, o)| Price {
                input: i,
                output: o,
            });
        match (input, output, listed) {
            (None, None, listed) => listed,
            (i, o, listed) => Some(Price {
                input: i.or(listed.map(|p| p.input)).unwrap_or(0.0),
                output: o.or(listed.map(|p| p.output)).unwrap_or(0.0),
            }),
        }
    }

    /// Half the price (the batch APIs' discount).
    pub fn halved(self) -> Price {
        Price {
            input: self.input / 2.0,
            output: self.output / 2.0,
        }
    }

    /// The estimated cost of `tokens` in USD.
    pub fn cost(&self, tokens: Tokens) -> f64 {
        (tokens.input_tokens as f64 * self.input + tokens.output_tokens as f64 * self.output) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_flags_override() {
        assert_eq!(
            Price::of("gpt-5-mini-2025-08-07", None, None)
                .unwrap()
                .input,
            0.25
        );
        assert_eq!(Price::of("gpt-5", None, None).unwrap().input, 1.25);
        assert_eq!(
            Price::of("claude-sonnet-4-5-20250929", None, None)
                .unwrap()
                .output,
            15.0
        );
        assert_eq!(Price::of("my-local-model", None, None), None);
        // Gemini (the `gemini` agent's default model): the longest prefix wins.
        assert_eq!(
            Price::of("gemini-2.5-flash-lite", None, None)
                .unwrap()
                .output,
            0.4
        );
        assert_eq!(Price::of("gemini-2.5-pro", None, None).unwrap().input, 1.25);
        assert_eq!(
            Price::of("my-local-model", Some(1.0), None),
            Some(Price {
                input: 1.0,
                output: 0.0
            })
        );
        let p = Price::of("gpt-5", Some(2.0), Some(4.0)).unwrap();
        let t = Tokens {
            input_tokens: 1_000_000,
            output_tokens: 500_000,
        };
        assert!((p.cost(t) - 4.0).abs() < 1e-12);
    }
}
