//! Re-weighting checklist items (beyond the paper): "would the ranking hold if this key point
//! weighed less?" A reader gives rules `QUESTION/ITEM=W`; every metric is then computed with
//! those weights in place of the checklist's own.
//!
//! What a judge gave is never rescored: an item's attainment is its score over its own weight
//! (2 of 4 is half), and a cell's Overall is the attainment weighted by the new weights,
//! Σ w′·score/w ÷ Σ w′ (the paper's s/10 when w′ = w); Knowledge the same over the knowledge
//! items; Clarity stays the clarity item's attainment; a perfect solve is every item of non-zero
//! new weight at its full weight. Each cell is one division of exact integers (over the least
//! common multiple of the question's weights), so the checklist's own weights, or all of a
//! question's weights scaled alike, give back the unweighted numbers bit for bit.

use super::index::Index;
use crate::model::{ItemKind, Question};
use std::fmt;

/// Which items of a question a rule names: one by id, or every item of a kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemSelector {
    Id(String),
    Kind(ItemKind),
}

/// One rule: the weight of `item` in `question` (`None`: in every question).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WeightRule {
    pub question: Option<String>,
    pub item: ItemSelector,
    pub weight: u32,
}

/// Why a weight rule (`QUESTION/ITEM=WEIGHT`) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("weight rule {text:?}{why}")]
pub struct WeightRuleError {
    pub text: String,
    pub why: BadRule,
}

/// What is wrong with a weight rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadRule {
    #[error(" has no '=': {FORM}")]
    NoEquals,
    #[error(" has no '/': {FORM}")]
    NoSlash,
    #[error(" misses its question or item: {FORM}")]
    NoQuestionOrItem,
    #[error(": the weight {0:?} is not a whole number from 0 to {max}", max = WeightRule::MAX)]
    NotAWeight(String),
    #[error(": the weight {0} is above {max}", max = WeightRule::MAX)]
    TooHeavy(u32),
    #[error(": {0:?} is no item kind (@knowledge or @clarity)")]
    NoItemKind(String),
}

/// Why rules that each read well cannot be applied to this benchmark.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightsError {
    #[error(
        "the weights leave question {question:?} no knowledge item of non-zero weight; drop the question instead"
    )]
    NoKnowledgeLeft { question: String },
    #[error("weight rule {rule}: there is no question {question:?} in the benchmark")]
    NoSuchQuestion { rule: String, question: String },
    #[error("weight rule {rule}: question {question:?} has no such item (its items: {items})")]
    NoSuchItem {
        rule: String,
        question: String,
        items: String,
    },
    #[error("weight rule {rule}: no question has such an item")]
    NoItemMatches { rule: String },
}

const FORM: &str = "write QUESTION/ITEM=WEIGHT, e.g. q1/k2=0, */@clarity=2 or */@knowledge=1";

impl WeightRule {
    /// The largest weight a rule may give: enough for any emphasis, small enough that a cell's
    /// integer sums cannot overflow.
    pub const MAX: u32 = 1000;

    /// Parses `QUESTION/ITEM=W`: `*` for every question, `@knowledge` / `@clarity` for every
    /// item of that kind (`*/@knowledge=1`: every knowledge item counts alike). The last `/`
    /// before the last `=` separates question and item.
    pub fn parse(text: &str) -> Result<WeightRule, WeightRuleError> {
        let bad = |why| WeightRuleError {
            text: text.to_string(),
            why,
        };
        let (lhs, w) = text
            .rsplit_once('=')
            .ok_or_else(|| bad(BadRule::NoEquals))?;
        let (q, item) = lhs.rsplit_once('/').ok_or_else(|| bad(BadRule::NoSlash))?;
        let (q, item, w) = (q.trim(), item.trim(), w.trim());
        if q.is_empty() || item.is_empty() {
            return Err(bad(BadRule::NoQuestionOrItem));
        }
        let weight: u32 = w
            .parse()
            .map_err(|_| bad(BadRule::NotAWeight(w.to_string())))?;
        if weight > Self::MAX {
            return Err(bad(BadRule::TooHeavy(weight)));
        }
        let item = match item {
            "@knowledge" => ItemSelector::Kind(ItemKind::Knowledge),
            "@clarity" => ItemSelector::Kind(ItemKind::Clarity),
            s if s.starts_with('@') => {
                return Err(bad(BadRule::NoItemKind(s.to_string())));
            }
            s => ItemSelector::Id(s.to_string()),
        };
        Ok(WeightRule {
            question: (q != "*").then(|| q.to_string()),
            item,
            weight,
        })
    }

    /// How strongly it binds: a question's own rule beats a rule for every question, and an
    /// item named by id beats a kind.
    fn rank(&self) -> u8 {
        u8::from(self.question.is_some()) * 2 + u8::from(matches!(self.item, ItemSelector::Id(_)))
    }

    fn selects(&self, q: &Question, i: usize) -> bool {
        let it = &q.checklist[i];
        self.question.as_deref().is_none_or(|id| id == q.id)
            && match &self.item {
                ItemSelector::Id(id) => *id == it.id,
                ItemSelector::Kind(k) => *k == it.kind,
            }
    }
}

impl fmt::Display for WeightRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let item = match &self.item {
            ItemSelector::Id(id) => id.as_str(),
            ItemSelector::Kind(ItemKind::Knowledge) => "@knowledge",
            ItemSelector::Kind(ItemKind::Clarity) => "@clarity",
        };
        write!(
            f,
            "{}/{item}={}",
            self.question.as_deref().unwrap_or("*"),
            self.weight
        )
    }
}

/// The weights in force, per question (by [`Index`] position): `None` where no rule applies.
#[derive(Debug, Default)]
pub struct Resolved {
    per_question: Vec<Option<Vec<u32>>>,
}

impl Resolved {
    /// Applies `rules` to every question of `index`; of the rules that select an item, the one of
    /// highest rank wins, and the last given among equals. Weights that leave a question no
    /// knowledge are an error, and with `every_rule_used` so is a rule that selects nothing (a
    /// typo must not pass silently; off where questions were dropped after the check).
    pub fn new(
        rules: &[WeightRule],
        index: &Index<'_>,
        every_rule_used: bool,
    ) -> Result<Resolved, WeightsError> {
        let mut per_question = vec![None; index.questions.len()];
        if rules.is_empty() {
            return Ok(Resolved { per_question });
        }
        for (qi, q) in index.questions.iter().enumerate() {
            let mut weights: Vec<u32> = q.checklist.iter().map(|c| c.weight).collect();
            let mut changed = false;
            for (w, winner) in weights.iter_mut().zip(winners(rules, q)) {
                if let Some(r) = winner {
                    changed |= *w != rules[r].weight;
                    *w = rules[r].weight;
                }
            }
            if !changed {
                continue;
            }
            let knowledge: u32 = q
                .checklist
                .iter()
                .zip(&weights)
                .filter(|(c, _)| c.kind == ItemKind::Knowledge)
                .map(|(_, w)| w)
                .sum();
            if knowledge == 0 {
                return Err(WeightsError::NoKnowledgeLeft {
                    question: q.id.clone(),
                });
            }
            per_question[qi] = Some(weights);
        }
        let selects_nothing = |rule: &WeightRule| {
            !index
                .questions
                .iter()
                .any(|q| (0..q.checklist.len()).any(|i| rule.selects(q, i)))
        };
        if let Some(rule) = rules.iter().find(|r| every_rule_used && selects_nothing(r)) {
            let rule_text = rule.to_string();
            return Err(match &rule.question {
                Some(id) if !index.by_id.contains_key(id.as_str()) => {
                    WeightsError::NoSuchQuestion {
                        rule: rule_text,
                        question: id.clone(),
                    }
                }
                Some(id) => {
                    let q = index.questions[index.by_id[id.as_str()] as usize];
                    let ids: Vec<&str> = q.checklist.iter().map(|c| c.id.as_str()).collect();
                    WeightsError::NoSuchItem {
                        rule: rule_text,
                        question: id.clone(),
                        items: ids.join(", "),
                    }
                }
                None => WeightsError::NoItemMatches { rule: rule_text },
            });
        }
        Ok(Resolved { per_question })
    }

    /// The new weights of question `q` (checklist order), if any rule changed them.
    pub fn of(&self, q: u32) -> Option<&[u32]> {
        self.per_question.get(q as usize)?.as_deref()
    }
}

/// For each checklist item of `q`, the rule that sets its weight (an index into `rules`): of
/// those that select it, the one of highest rank, the last given among equals.
pub fn winners(rules: &[WeightRule], q: &Question) -> Vec<Option<usize>> {
    (0..q.checklist.len())
        .map(|i| {
            let mut best: Option<(u8, usize)> = None;
            for (r, rule) in rules.iter().enumerate() {
                if rule.selects(q, i) && best.is_none_or(|(rank, _)| rule.rank() >= rank) {
                    best = Some((rule.rank(), r));
                }
            }
            best.map(|(_, r)| r)
        })
        .collect()
}

/// The weight each checklist item of `q` has under `rules`: the winning rule's (see
/// [`winners`]), else the checklist's own. What the site shows beside a question's items.
pub fn in_force(rules: &[WeightRule], q: &Question) -> Vec<u32> {
    winners(rules, q)
        .into_iter()
        .zip(&q.checklist)
        .map(|(w, c)| w.map_or(c.weight, |r| rules[r].weight))
        .collect()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The sums of one re-weighted cell on the unweighted scale (s of 10, kn of 9, cl of 1), each
/// one exact division, and whether it is a perfect solve. `scores[i]` is the judge's score for
/// checklist item i.
pub fn weighted_sums(q: &Question, new: &[u32], scores: &[u32]) -> (f64, f64, f64, bool) {
    // L = lcm of the items' own weights: score·L/w is then an integer for every item.
    let l = q
        .checklist
        .iter()
        .map(|c| u64::from(c.weight.max(1)))
        .fold(1u64, |l, w| l / gcd(l, w) * w);
    let (mut all_num, mut all_den, mut kn_num, mut kn_den) = (0u64, 0u64, 0u64, 0u64);
    let (mut cl, mut perfect) = (0.0, true);
    for ((c, &w2), &score) in q.checklist.iter().zip(new).zip(scores) {
        let w = u64::from(c.weight.max(1));
        let part = u64::from(w2) * u64::from(score) * (l / w);
        all_num += part;
        all_den += u64::from(w2);
        match c.kind {
            ItemKind::Knowledge => {
                kn_num += part;
                kn_den += u64::from(w2);
            }
            ItemKind::Clarity => cl = f64::from(score) / w as f64,
        }
        perfect &= w2 == 0 || u64::from(score) >= w;
    }
    let frac = |num: u64, den: u64, scale: u32| {
        if den == 0 {
            0.0
        } else {
            (u128::from(num) * u128::from(scale)) as f64 / (u128::from(den) * u128::from(l)) as f64
        }
    };
    (
        frac(all_num, all_den, crate::model::FULL_SCORE),
        frac(kn_num, kn_den, crate::model::KNOWLEDGE_WEIGHT),
        cl,
        perfect,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_print_back() {
        for text in ["q1/k2=0", "*/@clarity=2", "*/@knowledge=1", "a/b/c/k1=7"] {
            assert_eq!(WeightRule::parse(text).unwrap().to_string(), text);
        }
        let r = WeightRule::parse("a/b/c/k1=7").unwrap();
        assert_eq!(r.question.as_deref(), Some("a/b/c"));
        assert_eq!(r.item, ItemSelector::Id("k1".into()));
        assert_eq!(
            WeightRule::parse(" q1 / k2 = 3 ").unwrap().to_string(),
            "q1/k2=3"
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (text, why, says) in [
            ("q1/k2", BadRule::NoEquals, "no '='"),
            ("k2=1", BadRule::NoSlash, "no '/'"),
            ("/k2=1", BadRule::NoQuestionOrItem, "misses"),
            ("q1/k2=-1", BadRule::NotAWeight("-1".into()), "whole number"),
            (
                "q1/k2=1.5",
                BadRule::NotAWeight("1.5".into()),
                "whole number",
            ),
            ("q1/k2=1001", BadRule::TooHeavy(1001), "above 1000"),
            (
                "*/@style=1",
                BadRule::NoItemKind("@style".into()),
                "no item kind",
            ),
        ] {
            let e = WeightRule::parse(text).unwrap_err();
            assert_eq!(e.why, why, "{text}");
            let words = e.to_string();
            assert!(
                words.contains(says) && words.contains(text),
                "{text}: {words}"
            );
        }
    }

    #[test]
    fn ranks_order_the_rules() {
        let r = |t| WeightRule::parse(t).unwrap().rank();
        assert!(r("q/k1=1") > r("q/@knowledge=1"));
        assert!(r("q/@knowledge=1") > r("*/k1=1"));
        assert!(r("*/k1=1") > r("*/@knowledge=1"));
    }

    #[test]
    fn weights_in_force_are_the_winners_or_the_checklists_own() {
        let q = crate::fixtures::question();
        let rules: Vec<WeightRule> = ["*/@clarity=0", "q1/k1=2"]
            .iter()
            .map(|r| WeightRule::parse(r).unwrap())
            .collect();
        let own: Vec<u32> = q.checklist.iter().map(|c| c.weight).collect();
        assert_eq!(in_force(&[], &q), own);
        let got = in_force(&rules, &q);
        for (i, c) in q.checklist.iter().enumerate() {
            let want = match (c.id.as_str(), c.kind) {
                ("k1", _) => 2,
                (_, crate::model::ItemKind::Clarity) => 0,
                _ => c.weight,
            };
            assert_eq!(got[i], want, "{}", c.id);
        }
    }
}
