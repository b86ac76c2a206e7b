//! The SWE-QA-style scalar judge (paper §5.3, the baseline of Table 5), pure: the versioned
//! prompt, the JSON Schema of the reply and its complete check.
//!
//! One call grades one answer on five integer dimensions, each from 1 to the scale's maximum
//! (`--scale 10`: 1–10, total 50; `--scale 20`: 1–20, total 100; SWE-QA used both). The reply
//! is one flat object `{"rationale": ..., "correctness": n, "completeness": n, "relevance": n,
//! "clarity": n, "reasoning": n}`, the rationale first. The record (docs/format.md#scalar-judgment) carries the scale
//! as `max_per_dimension`.

use super::prompt::{reask_with, reply_format, repo_line, sections};
use super::reply::{Entries, extract_object_of, flat_reply, integer};
use super::{JudgePrompt, Protocol};
use crate::model::Question;
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of the prompt below; every scalar judgment record carries it.
pub const PROMPT_VERSION: &str = "scalar-judge-v1";

/// The prompt template (`crates/repoprobe-core/prompts/scalar-judge-v1.md`).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/scalar-judge-v1.md");

/// Name of the reply schema (OpenAI `json_schema.name`) and of the forced tool (Anthropic).
pub const REPLY_NAME: &str = "scalar_judgment";

/// The five dimensions of SWE-QA, in reply order, with what each grades.
pub const DIMENSIONS: [(&str, &str); 5] = [
    (
        "correctness",
        "the technical claims are true of the repository and agree with the reference answer",
    ),
    (
        "completeness",
        "every part of the question is answered; nothing the reference answer needs is left out",
    ),
    (
        "relevance",
        "the answer addresses the question asked and stays on it",
    ),
    (
        "clarity",
        "the answer is well organised, precise and easy to follow",
    ),
    (
        "reasoning",
        "the explanation is logically sound and its conclusions follow from the evidence given",
    ),
];

/// The scales SWE-QA used: 1–10 per dimension (total 50) and 1–20 (total 100).
pub const SCALES: [u32; 2] = [10, 20];

/// A checked scalar reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalarScores {
    pub dimensions: BTreeMap<String, u32>,
    pub rationale: String,
}

/// Renders the prompt for one answer to `q` on the scale 1..=`max`.
pub fn prompt(
    q: &Question,
    candidate_answer: &str,
    max: u32,
    describe_schema: bool,
) -> JudgePrompt {
    let (system, user) = sections(PROMPT_TEMPLATE);
    let dimensions = DIMENSIONS
        .iter()
        .map(|(name, what)| format!("- `{name}` (1–{max}): {what}."))
        .collect::<Vec<_>>()
        .join("\n");
    let (max_text, total) = (max.to_string(), (max * DIMENSIONS.len() as u32).to_string());
    let reply_format = reply_format(
        describe_schema,
        &reply_schema_json(max),
        &format!(
            "`rationale` (a string, written first), then one integer from 1 to {max} for each \
             of {}",
            names()
        ),
    );
    let repo = repo_line(q);
    let vars: [(&str, &str); 8] = [
        ("repo", &repo),
        ("question", &q.question),
        ("reference_answer", &q.reference_answer),
        ("candidate_answer", candidate_answer),
        ("dimensions", &dimensions),
        ("max", &max_text),
        ("total", &total),
        ("reply_format", &reply_format),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// `` `correctness`, `completeness`, ... `` for messages.
fn names() -> String {
    DIMENSIONS
        .iter()
        .map(|(n, _)| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reply schema as JSON text, `rationale` first, then the dimensions in SWE-QA's order,
/// each an integer in [1, max]; everything required, nothing else.
pub fn reply_schema_json(max: u32) -> String {
    let mut props = vec![r#""rationale":{"type":"string"}"#.to_string()];
    for (name, _) in DIMENSIONS {
        props.push(format!(
            r#""{name}":{{"type":"integer","minimum":1,"maximum":{max}}}"#
        ));
    }
    let required = std::iter::once("\"rationale\"".to_string())
        .chain(DIMENSIONS.iter().map(|(n, _)| format!("\"{n}\"")))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"{{"type":"object","properties":{{{}}},"required":[{required}],"additionalProperties":false}}"#,
        props.join(",")
    )
}

/// The message sent back after an invalid reply.
pub fn reask_message(violations: &[String], max: u32) -> String {
    reask_with(
        violations,
        &format!(
            "Reply again with the complete JSON object: `rationale` first, then an integer \
             from 1 to {max} for each of {}.",
            names()
        ),
    )
}

/// Checks a scalar reply on the scale 1..=`max`: every dimension present once as an integer in
/// range, a non-empty `rationale` written first, no other key. Every violation its own message.
pub fn parse_reply(text: &str, max: u32) -> Result<ScalarScores, Vec<String>> {
    let top = extract_object_of(
        text,
        "a JSON object with `rationale` and the five dimensions",
    )
    .map_err(|e| vec![e])?;
    let fields: Vec<&str> = DIMENSIONS.iter().map(|(n, _)| *n).collect();
    let mut errs = Vec::new();
    let (rationale, values) = flat_reply(&top, &fields, &mut errs);
    let mut dimensions = BTreeMap::new();
    for (name, value) in fields.iter().zip(values) {
        let Some(value) = value else { continue };
        match value {
            Value::Number(n) => match integer(n) {
                Some(v) if (1..=i64::from(max)).contains(&v) => {
                    dimensions.insert(name.to_string(), v as u32);
                }
                Some(v) => errs.push(format!(
                    "`{name}` is {v}: it must be an integer from 1 to {max}"
                )),
                None => errs.push(format!(
                    "`{name}` is {n}, not an integer: it must be an integer from 1 to {max}"
                )),
            },
            other => errs.push(format!(
                "`{name}` must be an integer from 1 to {max}, not {}",
                Entries::Leaf(other.clone()).kind()
            )),
        }
    }
    match rationale {
        Some(rationale) if errs.is_empty() => Ok(ScalarScores {
            dimensions,
            rationale,
        }),
        _ => Err(errs),
    }
}

/// One call of the scalar judge: an answer to grade on the scale 1..=`max`.
#[derive(Debug, Clone, Copy)]
pub struct ScalarJudge<'a> {
    pub question: &'a Question,
    pub answer: &'a str,
    pub max: u32,
}

impl Protocol for ScalarJudge<'_> {
    type Reply = ScalarScores;
    const VERSION: &'static str = PROMPT_VERSION;
    const TEMPLATE: &'static str = PROMPT_TEMPLATE;
    const REPLY_NAME: &'static str = REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str =
        "Record the grading of the answer on each of the five dimensions.";
    fn prompt(&self, describe_schema: bool) -> JudgePrompt {
        prompt(self.question, self.answer, self.max, describe_schema)
    }
    fn reply_schema_json(&self) -> String {
        reply_schema_json(self.max)
    }
    fn reask_message(&self, violations: &[String]) -> String {
        reask_message(violations, self.max)
    }
    fn parse_reply(&self, text: &str) -> Result<ScalarScores, Vec<String>> {
        parse_reply(text, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::one_knowledge_item_question as question;

    const GOOD: &str = r#"{"rationale": "mostly right", "correctness": 7, "completeness": 6,
        "relevance": 9, "clarity": 8, "reasoning": 7}"#;

    fn errors(text: &str, max: u32) -> Vec<String> {
        parse_reply(text, max).expect_err("the reply must be rejected")
    }

    #[test]
    fn a_good_reply_gives_the_five_dimensions() {
        let s = parse_reply(GOOD, 10).expect("valid");
        assert_eq!(s.rationale, "mostly right");
        assert_eq!(s.dimensions.len(), 5);
        assert_eq!(s.dimensions["relevance"], 9);
        let fenced = format!("Scores:\n```json\n{GOOD}\n```");
        assert!(parse_reply(&fenced, 10).is_ok());
    }

    #[test]
    fn scores_outside_the_scale_are_reported() {
        let text = GOOD.replace("\"relevance\": 9", "\"relevance\": 11");
        assert_eq!(
            errors(&text, 10),
            ["`relevance` is 11: it must be an integer from 1 to 10"]
        );
        assert!(parse_reply(&text, 20).is_ok());
        let text = GOOD.replace("\"clarity\": 8", "\"clarity\": 0");
        assert_eq!(
            errors(&text, 20),
            ["`clarity` is 0: it must be an integer from 1 to 20"]
        );
        let text = GOOD.replace("\"clarity\": 8", "\"clarity\": 7.5");
        assert_eq!(
            errors(&text, 10),
            ["`clarity` is 7.5, not an integer: it must be an integer from 1 to 10"]
        );
        let text = GOOD.replace("\"clarity\": 8", "\"clarity\": \"8\"");
        assert_eq!(
            errors(&text, 10),
            ["`clarity` must be an integer from 1 to 10, not a string"]
        );
    }

    #[test]
    fn missing_extra_and_repeated_keys_are_reported() {
        let text = GOOD.replace("\"reasoning\": 7", "\"depth\": 7");
        assert_eq!(
            errors(&text, 10),
            [
                "unexpected key \"depth\": the reply has exactly the keys `rationale`, \
                 `correctness`, `completeness`, `relevance`, `clarity`, `reasoning`",
                "`reasoning` is missing"
            ]
        );
        let text = GOOD.replace("\"reasoning\": 7", "\"reasoning\": 7, \"clarity\": 8");
        assert_eq!(errors(&text, 10), ["`clarity` is given twice"]);
    }

    #[test]
    fn the_rationale_must_be_first_and_not_empty() {
        let text = r#"{"correctness": 7, "completeness": 6, "relevance": 9, "clarity": 8,
            "reasoning": 7, "rationale": "late"}"#;
        assert_eq!(errors(text, 10).len(), 5);
        assert!(errors(text, 10)[0].contains("comes before `rationale`"));
        let text = GOOD.replace("mostly right", " ");
        assert_eq!(errors(&text, 10), ["`rationale` is empty"]);
        let text = GOOD.replace(r#""rationale": "mostly right", "#, "");
        assert_eq!(errors(&text, 10), ["`rationale` is missing"]);
        assert!(errors("not json", 10)[0].starts_with("the reply is not valid JSON"));
        assert_eq!(
            errors("[1]", 10),
            ["the reply is an array, not a JSON object with `rationale` and the five dimensions"]
        );
    }

    #[test]
    fn the_schema_bounds_every_dimension_by_the_scale() {
        let s: Value = serde_json::from_str(&reply_schema_json(20)).unwrap();
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"][0], "rationale");
        assert_eq!(s["required"].as_array().unwrap().len(), 6);
        for (name, _) in DIMENSIONS {
            assert_eq!(s["properties"][name]["minimum"], 1);
            assert_eq!(s["properties"][name]["maximum"], 20);
        }
        let text = reply_schema_json(10);
        assert!(text.find("rationale").unwrap() < text.find("correctness").unwrap());
    }

    #[test]
    fn the_prompt_holds_the_texts_and_the_scale() {
        let p = prompt(&question(), "The candidate says Y.", 20, false);
        for needle in [
            "Why does X happen?",
            "Because of Y.",
            "The candidate says Y.",
            "o/r (commit abc)",
            "`correctness` (1–20)",
            "`reasoning` (1–20)",
            "100",
        ] {
            assert!(p.user.contains(needle), "{needle:?} not in:\n{}", p.user);
        }
        assert!(!p.user.contains("{{") && !p.system.contains("{{"));
        assert!(
            !p.user.contains("names Y"),
            "the scalar judge sees no checklist"
        );
        let p = prompt(&question(), "x", 10, true);
        assert!(p.user.contains(&reply_schema_json(10)));
        assert!(reask_message(&["a".into()], 10).contains("- a\n"));
    }
}
