//! The checklist judge's protocol (paper §4.2), shared by every caller of a judge model: the
//! versioned prompt, the JSON Schema of the reply and the complete check of a reply.
//!
//! One inference scores all items of a question: the reply is one JSON object keyed by item id,
//! each value `{"rationale": ..., "score": ...}` with the rationale first and the score taken from
//! the item's allowed set. Providers that enforce a schema get [`reply_schema`]; for those that
//! don't (`--structured prompt`) [`parse_reply`] is the only guard, so it checks every rule.
//!
//! Pure: no I/O, no clock, no network; the HTTP calls live in the CLI.

use super::prompt::{reask_with, sections};
use super::reply::{Entries, Object, extract_object_of, integer};
use super::{JudgePrompt, Protocol};
use crate::model::{ChecklistItem, ItemKind, ItemScore, Question};
use crate::sort::SharedSort;
use crate::text::quote;
use serde_json::Value;
use std::collections::BTreeSet;

/// Version of the prompt below; every judgment record carries it.
pub const PROMPT_VERSION: &str = "checklist-judge-v1";

/// The prompt template (`crates/repoprobe-core/prompts/checklist-judge-v1.md`).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/checklist-judge-v1.md");

/// Name of the reply schema (OpenAI `json_schema.name`) and of the forced tool (Anthropic).
pub const REPLY_NAME: &str = "checklist_judgment";

/// Renders the judge prompt for one answer to `q`. With `describe_schema` (prompt-only JSON
/// mode) the reply schema is written out in full in the prompt; otherwise the provider enforces
/// it and the prompt only names the shape.
pub fn prompt(q: &Question, candidate_answer: &str, describe_schema: bool) -> JudgePrompt {
    let (system, user) = template_sections();
    let checklist = render_checklist(q);
    let item_ids = q
        .checklist
        .iter()
        .map(|i| format!("`{}`", i.id))
        .collect::<Vec<_>>()
        .join(", ");
    let reply_format = if describe_schema {
        format!(
            "## Reply format\n\nReply with one JSON object and nothing else (no prose, no code \
             fences). It must validate against this JSON Schema: one key per checklist item id, \
             each an object with `rationale` (a string, written first) and `score` (an integer \
             from that item's allowed scores); no other keys.\n\n{}\n",
            reply_schema_json(q)
        )
    } else {
        "## Reply format\n\nReply with the structured output provided: one key per checklist \
         item id, each with `rationale` (written first) and then `score` (one of that item's \
         allowed scores).\n"
            .to_string()
    };
    let repo = if q.repo.commit.is_empty() {
        q.repo.name.clone()
    } else {
        format!("{} (commit {})", q.repo.name, q.repo.commit)
    };
    let vars: [(&str, &str); 7] = [
        ("repo", &repo),
        ("question", &q.question),
        ("reference_answer", &q.reference_answer),
        ("candidate_answer", candidate_answer),
        ("checklist", &checklist),
        ("item_ids", &item_ids),
        ("reply_format", &reply_format),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// The order a judge run with `--shuffle-items SEED` presents a question's items in, for one
/// answer: a permutation of `0..n` drawn from the seed and the answer's key (question, model,
/// attempt, judge run — joined as text by the caller), so every answer gets its own order and
/// a rerun the same one, on every platform ([`crate::seeded::shuffle`]).
pub fn item_order(seed: u64, key: &str, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    crate::seeded::shuffle(&mut order, seed, key);
    order
}

/// The message sent back to the model when its reply broke rules: every violation, one a line.
pub fn reask_message(violations: &[String]) -> String {
    reask_with(
        violations,
        "Reply again with the complete JSON object for every checklist item: for each, the \
         `rationale` first, then a `score` taken from that item's allowed scores.",
    )
}

/// The template's system and user sections (the text before the system marker is
/// documentation).
fn template_sections() -> (&'static str, &'static str) {
    sections(PROMPT_TEMPLATE)
}

fn render_checklist(q: &Question) -> String {
    let mut s = String::new();
    for item in &q.checklist {
        let kind = match item.kind {
            ItemKind::Knowledge => "knowledge",
            ItemKind::Clarity => "clarity",
        };
        s.push_str(&format!(
            "### Item `{}` ({kind}, weight {})\nKey point: {}\nAllowed scores: {}\n",
            item.id,
            item.weight,
            item.key_point,
            allowed_list(item)
        ));
        let mut tiers: Vec<_> = item.rubric.iter().collect();
        tiers.shared_sort_by_key(|t| std::cmp::Reverse(t.score));
        for t in tiers {
            s.push_str(&format!("- score {}: {}\n", t.score, t.criterion));
        }
        s.push('\n');
    }
    s.trim_end().to_string()
}

fn allowed_list(item: &ChecklistItem) -> String {
    let mut scores = item.allowed_scores();
    scores.reverse();
    scores
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The JSON Schema of a reply to `q`: an object keyed by item id, each
/// `{"rationale": string, "score": integer from the allowed set}`, everything required, no
/// additional properties. See [`reply_schema_json`] for the text with keys in checklist order.
pub fn reply_schema(q: &Question) -> Value {
    serde_json::from_str(&reply_schema_json(q)).expect("the schema text is valid JSON")
}

/// [`reply_schema`] as JSON text whose keys are in a fixed order: items in checklist order and,
/// in each item, `rationale` before `score` (structured-output decoders generate properties in
/// schema order, so this order is what makes the model write the rationale first). A
/// `serde_json::Value` cannot promise this order without the `preserve_order` feature.
pub fn reply_schema_json(q: &Question) -> String {
    let s = |v: &str| serde_json::to_string(v).expect("a string serialises");
    let mut props = Vec::with_capacity(q.checklist.len());
    for item in &q.checklist {
        let allowed = item
            .allowed_scores()
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        props.push(format!(
            "{}:{{\"type\":\"object\",\"properties\":{{\"rationale\":{{\"type\":\"string\"}},\
             \"score\":{{\"type\":\"integer\",\"enum\":[{allowed}]}}}},\
             \"required\":[\"rationale\",\"score\"],\"additionalProperties\":false}}",
            s(&item.id)
        ));
    }
    let required = q
        .checklist
        .iter()
        .map(|i| s(&i.id))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "{{\"type\":\"object\",\"properties\":{{{}}},\"required\":[{required}],\"additionalProperties\":false}}",
        props.join(",")
    )
}

/// Checks a judge's reply against `q`'s checklist and returns the item scores in checklist order,
/// or every violation, each its own message.
///
/// The reply is the JSON object of [`reply_schema`]; in prompt-only mode models often wrap it in
/// a ```` ```json ```` fence or put text around it, so the object is also looked for there. Rules:
/// every item present, no other key, each item an object with a non-empty string `rationale`
/// written before an integer `score` from the item's allowed set, and nothing else; no key twice.
pub fn parse_reply(q: &Question, text: &str) -> Result<Vec<ItemScore>, Vec<String>> {
    let top = extract_object(text).map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    let ids: Vec<&str> = q.checklist.iter().map(|i| i.id.as_str()).collect();

    let mut seen = BTreeSet::new();
    for (key, _) in &top.0 {
        if !ids.contains(&key.as_str()) {
            errs.push(format!(
                "unexpected key {}: the checklist items are {}",
                quote(key),
                ids.iter().map(|i| quote(i)).collect::<Vec<_>>().join(", ")
            ));
        } else if !seen.insert(key.as_str()) {
            errs.push(format!("item {} is given twice", quote(key)));
        }
    }

    let mut out = Vec::with_capacity(q.checklist.len());
    for item in &q.checklist {
        let Some((_, value)) = top.0.iter().find(|(k, _)| *k == item.id) else {
            errs.push(format!("item {} is missing", quote(&item.id)));
            continue;
        };
        match check_item(item, value) {
            Ok(score) => out.push(score),
            Err(mut e) => errs.append(&mut e),
        }
    }
    if errs.is_empty() { Ok(out) } else { Err(errs) }
}

fn check_item(item: &ChecklistItem, value: &Entries) -> Result<ItemScore, Vec<String>> {
    let name = quote(&item.id);
    let Some(fields) = value.as_object() else {
        return Err(vec![format!(
            "item {name} must be an object with `rationale` and `score`, not {}",
            value.kind()
        )]);
    };
    let mut errs = Vec::new();
    for (k, _) in fields {
        if k != "rationale" && k != "score" {
            errs.push(format!(
                "item {name} has an unexpected field {}: only `rationale` and `score` are allowed",
                quote(k)
            ));
        }
    }
    let pos = |key: &str| fields.iter().position(|(k, _)| k == key);
    let (rationale_at, score_at) = (pos("rationale"), pos("score"));
    for key in ["rationale", "score"] {
        if fields.iter().filter(|(k, _)| k == key).count() > 1 {
            errs.push(format!("item {name} gives `{key}` twice"));
        }
    }

    let rationale = rationale_of(&name, rationale_at.map(|i| &fields[i].1), &mut errs);
    let score = score_of(item, &name, score_at.map(|i| &fields[i].1), &mut errs);

    if let (Some(r), Some(s)) = (rationale_at, score_at)
        && s < r
    {
        errs.push(format!(
            "item {name}: `score` comes before `rationale`: write the rationale first, then the score"
        ));
    }

    match (rationale, score) {
        (Some(rationale), Some(score)) if errs.is_empty() => Ok(ItemScore {
            id: item.id.clone(),
            rationale,
            score,
        }),
        _ => Err(errs),
    }
}

/// An item's `rationale`: a non-empty string, else why not (in `errs`).
fn rationale_of(name: &str, value: Option<&Entries>, errs: &mut Vec<String>) -> Option<String> {
    match value {
        None => {
            errs.push(format!("item {name} has no `rationale`"));
            None
        }
        Some(Entries::Leaf(Value::String(s))) if s.trim().is_empty() => {
            errs.push(format!("item {name} has an empty `rationale`"));
            None
        }
        Some(Entries::Leaf(Value::String(s))) => Some(s.clone()),
        Some(other) => {
            errs.push(format!(
                "item {name}: `rationale` must be a string, not {}",
                other.kind()
            ));
            None
        }
    }
}

/// An item's `score`: an integer its rubric allows, else why not (in `errs`).
fn score_of(
    item: &ChecklistItem,
    name: &str,
    value: Option<&Entries>,
    errs: &mut Vec<String>,
) -> Option<u32> {
    match value {
        None => {
            errs.push(format!("item {name} has no `score`"));
            None
        }
        Some(Entries::Leaf(Value::Number(n))) => match integer(n) {
            None => {
                errs.push(format!(
                    "item {name}: score {n} is not an integer: the rubric allows {}",
                    allowed_list(item)
                ));
                None
            }
            Some(v) => match u32::try_from(v).ok().filter(|&s| item.allows(s)) {
                Some(s) => Some(s),
                None => {
                    errs.push(format!(
                        "item {name}: score {v} is not allowed: the rubric allows {}",
                        allowed_list(item)
                    ));
                    None
                }
            },
        },
        Some(other) => {
            errs.push(format!(
                "item {name}: `score` must be an integer, not {}",
                other.kind()
            ));
            None
        }
    }
}

/// Finds the reply's JSON object: the whole text, else the first ```` ``` ```` fenced block that
/// holds one, else the span from the first `{` to the last `}`.
fn extract_object(text: &str) -> Result<Object, String> {
    extract_object_of(text, "a JSON object keyed by checklist item id")
}

/// One call of the checklist judge: an answer to grade against its question's checklist.
#[derive(Debug, Clone, Copy)]
pub struct ChecklistJudge<'a> {
    pub question: &'a Question,
    pub answer: &'a str,
}

impl Protocol for ChecklistJudge<'_> {
    type Reply = Vec<ItemScore>;
    const VERSION: &'static str = PROMPT_VERSION;
    const TEMPLATE: &'static str = PROMPT_TEMPLATE;
    const REPLY_NAME: &'static str = REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str = "Record the grading of every checklist item.";
    fn prompt(&self, describe_schema: bool) -> JudgePrompt {
        prompt(self.question, self.answer, describe_schema)
    }
    fn reply_schema_json(&self) -> String {
        reply_schema_json(self.question)
    }
    fn reask_message(&self, violations: &[String]) -> String {
        reask_message(violations)
    }
    fn parse_reply(&self, text: &str) -> Result<Vec<ItemScore>, Vec<String>> {
        parse_reply(self.question, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::question;

    #[test]
    fn an_item_order_is_a_permutation_fixed_by_seed_and_key() {
        for n in [0, 1, 2, 5, 9] {
            let mut o = item_order(7, "q1\u{1f}m\u{1f}0\u{1f}0", n);
            assert_eq!(o, item_order(7, "q1\u{1f}m\u{1f}0\u{1f}0", n));
            o.shared_sort();
            assert_eq!(o, (0..n).collect::<Vec<_>>());
        }
        // Over many keys, five items take more than a few orders, and the seed changes them.
        let orders: std::collections::BTreeSet<Vec<usize>> =
            (0..200).map(|k| item_order(1, &k.to_string(), 5)).collect();
        assert!(orders.len() > 50, "{}", orders.len());
        let moved = (0..50)
            .filter(|k| item_order(1, &k.to_string(), 5) != item_order(2, &k.to_string(), 5))
            .count();
        assert!(moved > 40, "{moved}");
    }

    const GOOD: &str = r#"{"k1": {"rationale": "names Y", "score": 3},
        "k2": {"rationale": "misses Z", "score": 0},
        "clarity": {"rationale": "clear", "score": 1}}"#;

    fn errors(text: &str) -> String {
        parse_reply(&question(), text)
            .expect_err("the reply must be rejected")
            .join("\n")
    }

    #[test]
    fn a_good_reply_gives_items_in_checklist_order() {
        let reversed = r#"{"clarity": {"rationale": "clear", "score": 1},
            "k2": {"rationale": "misses Z", "score": 0},
            "k1": {"rationale": "names Y", "score": 3}}"#;
        for text in [GOOD, reversed] {
            let items = parse_reply(&question(), text).expect("valid");
            let got: Vec<(&str, u32)> = items.iter().map(|i| (i.id.as_str(), i.score)).collect();
            assert_eq!(got, [("k1", 3), ("k2", 0), ("clarity", 1)]);
            assert_eq!(items[0].rationale, "names Y");
        }
    }

    #[test]
    fn a_fenced_reply_or_one_with_text_around_is_accepted() {
        let fenced = format!("Here is my grading:\n```json\n{GOOD}\n```\nDone.");
        assert!(parse_reply(&question(), &fenced).is_ok());
        let around = format!("Sure. {GOOD} Hope this helps.");
        assert!(parse_reply(&question(), &around).is_ok());
        assert!(parse_reply(&question(), "2.0").is_err());
    }

    #[test]
    fn integral_float_scores_are_integers() {
        let text = GOOD.replace("\"score\": 3", "\"score\": 3.0");
        assert_eq!(parse_reply(&question(), &text).expect("valid")[0].score, 3);
    }

    #[test]
    fn a_missing_item_is_reported() {
        let text =
            r#"{"k1": {"rationale": "r", "score": 3}, "clarity": {"rationale": "r", "score": 1}}"#;
        assert_eq!(errors(text), "item \"k2\" is missing");
    }

    #[test]
    fn an_extra_item_is_reported() {
        let text = GOOD.replacen('{', r#"{"k9": {"rationale": "r", "score": 1},"#, 1);
        let e = errors(&text);
        assert!(e.starts_with("unexpected key \"k9\""), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }

    #[test]
    fn an_item_given_twice_is_reported() {
        let text = GOOD.replacen('{', r#"{"k1": {"rationale": "r", "score": 5},"#, 1);
        assert_eq!(errors(&text), "item \"k1\" is given twice");
    }

    #[test]
    fn a_score_outside_the_allowed_set_is_reported() {
        let text = GOOD.replace("\"score\": 3", "\"score\": 4");
        assert_eq!(
            errors(&text),
            "item \"k1\": score 4 is not allowed: the rubric allows 5, 3, 0"
        );
        let text = GOOD.replace("\"score\": 3", "\"score\": -3");
        assert!(errors(&text).contains("score -3 is not allowed"));
        let text = GOOD.replace("\"score\": 3", "\"score\": 18446744073709551615");
        assert!(errors(&text).contains("is not allowed"));
    }

    #[test]
    fn a_non_integer_score_is_reported() {
        let text = GOOD.replace("\"score\": 3", "\"score\": 2.5");
        assert!(errors(&text).contains("score 2.5 is not an integer"));
        let text = GOOD.replace("\"score\": 3", "\"score\": \"3\"");
        assert_eq!(
            errors(&text),
            "item \"k1\": `score` must be an integer, not a string"
        );
    }

    #[test]
    fn a_missing_or_empty_rationale_is_reported() {
        let text = GOOD.replace(r#""rationale": "names Y", "#, "");
        assert_eq!(errors(&text), "item \"k1\" has no `rationale`");
        let text = GOOD.replace("names Y", "  ");
        assert_eq!(errors(&text), "item \"k1\" has an empty `rationale`");
        let text = GOOD.replace("\"names Y\"", "7");
        assert!(errors(&text).contains("`rationale` must be a string, not a number"));
    }

    #[test]
    fn a_missing_score_is_reported() {
        let text = GOOD.replace(r#", "score": 3"#, "");
        assert_eq!(errors(&text), "item \"k1\" has no `score`");
    }

    #[test]
    fn a_score_before_its_rationale_is_reported() {
        let text = GOOD.replace(
            r#"{"rationale": "names Y", "score": 3}"#,
            r#"{"score": 3, "rationale": "names Y"}"#,
        );
        assert!(errors(&text).contains("`score` comes before `rationale`"));
    }

    #[test]
    fn an_extra_field_in_an_item_is_reported() {
        let text = GOOD.replace(r#""score": 3}"#, r#""score": 3, "confidence": 0.9}"#);
        assert!(errors(&text).contains("unexpected field \"confidence\""));
    }

    #[test]
    fn an_item_that_is_not_an_object_is_reported() {
        let text = GOOD.replace(r#"{"rationale": "names Y", "score": 3}"#, "3");
        assert_eq!(
            errors(&text),
            "item \"k1\" must be an object with `rationale` and `score`, not a number"
        );
    }

    #[test]
    fn non_json_and_non_object_replies_are_reported() {
        assert!(errors("I think the answer is good.").starts_with("the reply is not valid JSON"));
        assert!(errors("").contains("the reply is empty"));
        assert!(errors("[1, 2]").contains("is an array, not a JSON object"));
    }

    #[test]
    fn every_violation_has_its_own_message() {
        let text = r#"{"k1": {"rationale": "r", "score": 4}, "zz": {}, "clarity": {"score": 1.5}}"#;
        let errs = parse_reply(&question(), text).expect_err("invalid");
        assert_eq!(errs.len(), 5, "{errs:#?}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_reply(&question(), &text).is_err());
    }

    #[test]
    fn the_schema_lists_items_in_checklist_order_with_their_allowed_scores() {
        let q = question();
        let text = reply_schema_json(&q);
        let (k1, k2, cl) = (
            text.find("\"k1\"").unwrap(),
            text.find("\"k2\"").unwrap(),
            text.find("\"clarity\"").unwrap(),
        );
        assert!(k1 < k2 && k2 < cl, "{text}");
        let s = reply_schema(&q);
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], serde_json::json!(["k1", "k2", "clarity"]));
        let k1 = &s["properties"]["k1"];
        assert_eq!(k1["additionalProperties"], false);
        assert_eq!(k1["required"], serde_json::json!(["rationale", "score"]));
        assert_eq!(k1["properties"]["rationale"]["type"], "string");
        assert_eq!(k1["properties"]["score"]["type"], "integer");
        assert_eq!(
            k1["properties"]["score"]["enum"],
            serde_json::json!([0, 3, 5])
        );
        assert_eq!(
            s["properties"]["k2"]["properties"]["score"]["enum"],
            serde_json::json!([0, 4])
        );
        assert_eq!(s["properties"].as_object().unwrap().len(), 3);
    }

    #[test]
    fn the_prompt_holds_question_answers_and_every_rubric_tier() {
        let q = question();
        let p = prompt(&q, "The candidate says Y.", false);
        for needle in [
            "Why does X happen?",
            "Because of Y.",
            "The candidate says Y.",
            "o/r (commit abc)",
            "### Item `k1` (knowledge, weight 5)",
            "Allowed scores: 5, 3, 0",
            "- score 3: criterion 3 of k1",
            "### Item `clarity` (clarity, weight 1)",
            "`k1`, `k2`, `clarity`",
        ] {
            assert!(p.user.contains(needle), "{needle:?} not in:\n{}", p.user);
        }
        assert!(p.user.find("rationale").unwrap() < p.user.find("`score`").unwrap());
        assert!(p.system.contains("rationale") && !p.system.contains("{{"));
        assert!(!p.user.contains("{{") && !p.user.contains("<!--"));
        assert!(!p.user.contains("\"enum\""));
        let p = prompt(&q, "x", true);
        assert!(p.user.contains(&reply_schema_json(&q)));
    }

    #[test]
    fn placeholders_inside_inserted_text_are_not_expanded() {
        let p = prompt(&question(), "see {{reference_answer}} and {{", false);
        assert!(p.user.contains("see {{reference_answer}} and {{"));
    }

    #[test]
    fn the_reask_message_lists_every_violation() {
        let m = reask_message(&["a".into(), "b".into()]);
        assert!(m.contains("- a\n- b\n"));
    }
}
