//! Estimated cost of a run: tokens × price. Prices come from `--price-in` / `--price-out`
//! (USD per million tokens) or a plan's `price`, or, failing those, from the list below: every
//! model the RepoProbe paper evaluates or judges with, and the usual judges. Prices change and
//! gateways charge differently: the figure is an estimate, labelled as such wherever it is shown.
//!
//! A model name finds its list entry only when it is that entry's name or that name followed by
//! a snapshot tag (a date, `preview`, `latest`): `claude-opus-4-6` never takes
//! `claude-opus-4`'s price, nor `gpt-5-pro` `gpt-5`'s. A model the list does not know has no
//! price, never a neighbour's.

use super::Tokens;

/// USD per million input and output tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// One entry of the list: the model as its provider's API names it, its price, and where the
/// price was published.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Listed {
    pub model: &'static str,
    pub price: Price,
    /// The provider's pricing page.
    pub source: &'static str,
    /// When the figure was recorded from that page (prices change: check it before a large run).
    pub as_of: &'static str,
}

const ANTHROPIC: &str = "https://docs.anthropic.com/en/docs/about-claude/pricing";
const OPENAI: &str = "https://openai.com/api/pricing/";
const GOOGLE: &str = "https://ai.google.dev/gemini-api/docs/pricing";
const XAI: &str = "https://docs.x.ai/docs/models";
const QWEN: &str = "https://www.alibabacloud.com/help/en/model-studio/models";
const BYTEPLUS: &str = "https://docs.byteplus.com/en/docs/ModelArk/1544106";
const DEEPSEEK: &str = "https://api-docs.deepseek.com/quick_start/pricing";
const MINIMAX: &str = "https://platform.minimax.io/docs/guides/pricing";
const ZAI: &str = "https://docs.z.ai/guides/overview/pricing";
const MOONSHOT: &str = "https://platform.moonshot.ai/docs/pricing/chat";

const fn at(
    model: &'static str,
    input: f64,
    output: f64,
    source: &'static str,
    as_of: &'static str,
) -> Listed {
    Listed {
        model,
        price: Price { input, output },
        source,
        as_of,
    }
}

/// List prices in USD per million tokens: standard tier, no caching, no batch discount, the
/// shortest-context tier where a provider has several (Gemini's Pro models and Qwen charge more
/// for long prompts; an agent's turn or a judge's prompt stays under their first threshold, so a
/// run with longer prompts is underestimated). Names use `-` where providers write `4.5` or
/// `4-5` alike ([`normalize`]).
pub const LIST: &[Listed] = &[
    // Anthropic: the paper's closed-weight models, its judge (Sonnet 4.5) and verifier (Opus 4.5).
    at("claude-opus-4-6", 5.0, 25.0, ANTHROPIC, "2026-02"),
    at("claude-opus-4-5", 5.0, 25.0, ANTHROPIC, "2025-11"),
    at("claude-opus-4-1", 15.0, 75.0, ANTHROPIC, "2025-08"),
    at("claude-opus-4", 15.0, 75.0, ANTHROPIC, "2025-05"),
    at("claude-opus-4-0", 15.0, 75.0, ANTHROPIC, "2025-05"),
    at("claude-sonnet-4-6", 3.0, 15.0, ANTHROPIC, "2026-02"),
    at("claude-sonnet-4-5", 3.0, 15.0, ANTHROPIC, "2025-09"),
    at("claude-sonnet-4", 3.0, 15.0, ANTHROPIC, "2025-05"),
    at("claude-sonnet-4-0", 3.0, 15.0, ANTHROPIC, "2025-05"),
    at("claude-haiku-4-5", 1.0, 5.0, ANTHROPIC, "2025-10"),
    at("claude-3-5-haiku", 0.8, 4.0, ANTHROPIC, "2024-11"),
    // OpenAI.
    at("gpt-5-4", 2.5, 15.0, OPENAI, "2026-03"),
    at("gpt-5-2", 1.75, 14.0, OPENAI, "2025-12"),
    at("gpt-5-1", 1.25, 10.0, OPENAI, "2025-11"),
    at("gpt-5", 1.25, 10.0, OPENAI, "2025-08"),
    at("gpt-5-mini", 0.25, 2.0, OPENAI, "2025-08"),
    at("gpt-5-nano", 0.05, 0.4, OPENAI, "2025-08"),
    at("gpt-4-1", 2.0, 8.0, OPENAI, "2025-04"),
    at("gpt-4-1-mini", 0.4, 1.6, OPENAI, "2025-04"),
    at("gpt-4-1-nano", 0.1, 0.4, OPENAI, "2025-04"),
    at("gpt-4o", 2.5, 10.0, OPENAI, "2024-08"),
    at("gpt-4o-mini", 0.15, 0.6, OPENAI, "2024-07"),
    // Google: the paper's Gemini models and its failure-mode classifier (Gemini 3 Flash).
    at("gemini-3-1-pro", 2.0, 12.0, GOOGLE, "2026-02"),
    at("gemini-3-pro", 2.0, 12.0, GOOGLE, "2025-11"),
    at("gemini-3-flash", 0.5, 3.0, GOOGLE, "2025-12"),
    at("gemini-2-5-pro", 1.25, 10.0, GOOGLE, "2025-06"),
    at("gemini-2-5-flash", 0.3, 2.5, GOOGLE, "2025-06"),
    at("gemini-2-5-flash-lite", 0.1, 0.4, GOOGLE, "2025-07"),
    // xAI.
    at("grok-4-20", 2.0, 6.0, XAI, "2026-02"),
    at("grok-4", 3.0, 15.0, XAI, "2025-07"),
    // Alibaba Cloud Model Studio (international), first input tier.
    at("qwen3-max", 1.2, 6.0, QWEN, "2025-09"),
    at("qwen3-5-plus", 0.4, 2.4, QWEN, "2026-02"),
    // ByteDance (BytePlus ModelArk), first input tier.
    at("doubao-seed-1-8", 0.25, 2.0, BYTEPLUS, "2025-12"),
    at("doubao-seed-2-0", 0.47, 2.37, BYTEPLUS, "2026-02"),
    // Open-weight models at their makers' own APIs.
    at("deepseek-v3-2", 0.28, 0.42, DEEPSEEK, "2025-12"),
    at("deepseek-chat", 0.28, 0.42, DEEPSEEK, "2025-12"),
    at("deepseek-reasoner", 0.28, 0.42, DEEPSEEK, "2025-12"),
    at("minimax-m2-1", 0.3, 1.2, MINIMAX, "2025-12"),
    at("minimax-m2-5", 0.3, 1.2, MINIMAX, "2026-02"),
    at("glm-4-7", 0.6, 2.2, ZAI, "2025-12"),
    at("glm-5", 1.0, 3.2, ZAI, "2026-02"),
    at("kimi-k2", 0.6, 2.5, MOONSHOT, "2025-09"),
    at("kimi-k2-5", 0.6, 3.0, MOONSHOT, "2026-01"),
];

/// A model name as the list spells it: lower case, without a router's `vendor/` prefix, and with
/// `.` and `_` written `-` (`anthropic/claude-opus-4.5` → `claude-opus-4-5`); a Vertex-style
/// `@date` becomes `-date`.
pub fn normalize(model: &str) -> String {
    let name = model.trim().rsplit('/').next().unwrap_or_default();
    name.to_ascii_lowercase()
        .chars()
        .map(|c| if matches!(c, '.' | '_' | '@') { '-' } else { c })
        .collect()
}

/// Whether what follows a list name in a model name is only a snapshot tag: a date or build
/// (`20250929`, `2025-09-23`, `0905`, `251228`) or `preview` / `latest` / `exp`, so it names the
/// same model. A short number first (`-6`, `-20`) is a newer version, and a word (`-mini`,
/// `-pro`) another model.
fn snapshot_tag(rest: &str) -> bool {
    let Some(rest) = rest.strip_prefix('-') else {
        return false;
    };
    let word = |t: &str| matches!(t, "preview" | "latest" | "exp" | "thinking-preview");
    let mut tokens = rest.split('-');
    let first = tokens.next().unwrap_or_default();
    let first_ok = word(first) || (first.len() >= 4 && first.bytes().all(|b| b.is_ascii_digit()));
    first_ok && tokens.all(|t| word(t) || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())))
}

impl Listed {
    /// The list's entry for `model`: its own name, or its name and a snapshot tag.
    pub fn find(model: &str) -> Option<Listed> {
        let name = normalize(model);
        LIST.iter()
            .filter(|l| {
                name.strip_prefix(l.model)
                    .is_some_and(|rest| rest.is_empty() || snapshot_tag(rest))
            })
            .max_by_key(|l| l.model.len())
            .copied()
    }
}

impl Price {
    /// The price in force: both flags, else the list's entry for `model`, else none. One flag
    /// alone takes the other side from the list (or 0).
    pub fn of(model: &str, input: Option<f64>, output: Option<f64>) -> Option<Price> {
        let listed = Listed::find(model).map(|l| l.price);
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

    #[test]
    fn a_newer_version_or_another_tier_never_takes_a_neighbours_price() {
        // Opus 4.6 is not Opus 4 (the old prefix match gave it $15/$75).
        assert_eq!(
            Listed::find("claude-opus-4-6").unwrap().model,
            "claude-opus-4-6"
        );
        assert_eq!(Price::of("claude-opus-4-6", None, None).unwrap().input, 5.0);
        assert_eq!(
            Price::of("claude-opus-4-20250514", None, None)
                .unwrap()
                .input,
            15.0
        );
        // Snapshot tags keep the model; versions and tiers do not.
        assert_eq!(
            Listed::find("claude-sonnet-4-5-20250929").unwrap().model,
            "claude-sonnet-4-5"
        );
        assert_eq!(
            Listed::find("gemini-3-pro-preview").unwrap().model,
            "gemini-3-pro"
        );
        assert_eq!(
            Listed::find("kimi-k2-0905-preview").unwrap().model,
            "kimi-k2"
        );
        assert_eq!(
            Listed::find("qwen3-max-2025-09-23").unwrap().model,
            "qwen3-max"
        );
        assert_eq!(
            Listed::find("anthropic/claude-opus-4.5").unwrap().model,
            "claude-opus-4-5"
        );
        assert_eq!(Listed::find("GPT-5.2").unwrap().model, "gpt-5-2");
        assert_eq!(Listed::find("z-ai/glm-4.7").unwrap().model, "glm-4-7");
        assert_eq!(
            Listed::find("claude-opus-4-5@20251101").unwrap().model,
            "claude-opus-4-5"
        );
        for unknown in [
            "gpt-5-pro",
            "grok-4-1-fast",
            "claude-opus-4-7",
            "kimi-k2-6",
            "gpt-5-2-codex-max",
        ] {
            assert_eq!(Listed::find(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn every_model_the_paper_evaluates_or_judges_with_has_a_price_and_a_source() {
        // §5.1.2's twenty models, the judge of §5.1.3 and the classifier of §5.4, by API name.
        let paper = [
            "gpt-5.2",
            "gpt-5.4",
            "claude-opus-4-5",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "gemini-3-flash-preview",
            "gemini-3-pro-preview",
            "gemini-3.1-pro-preview",
            "grok-4.20",
            "qwen3-max",
            "qwen3.5-plus",
            "doubao-seed-1.8",
            "doubao-seed-2.0",
            "deepseek-v3.2",
            "minimax-m2.1",
            "minimax-m2.5",
            "glm-4.7",
            "glm-5",
            "kimi-k2",
            "kimi-k2.5",
            "claude-sonnet-4-5",
        ];
        for m in paper {
            let l = Listed::find(m).unwrap_or_else(|| panic!("{m} has no price"));
            assert!(l.source.starts_with("https://"), "{m}");
            assert!(
                l.price.input > 0.0 && l.price.output >= l.price.input,
                "{m}"
            );
        }
        // One entry per name: a duplicate would make the longest match ambiguous.
        let mut names: Vec<_> = LIST.iter().map(|l| l.model).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), LIST.len());
        assert!(LIST.iter().all(|l| normalize(l.model) == l.model));
    }
}
