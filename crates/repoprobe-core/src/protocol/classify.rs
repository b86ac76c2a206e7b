//! The failure-mode classifier of paper §5.4 (Table 7), pure: which answers to classify, the
//! versioned prompt, the reply schema (the mode an enum of the five modes) and the reply check.
//!
//! An answer is classified when its checklist score — the mean of s/10 over the judge runs of
//! the judge in force — is below 60 %. The judge in force follows the rule of `score`: the one
//! named, else the judge with the most valid judgments (ties to the name that sorts first).

use super::prompt::{reask_with, reply_format, repo_line, sections};
use super::reply::{extract_object_of, flat_reply};
use super::{JudgePrompt, Protocol};
use crate::dataset::Dataset;
use crate::model::{Answer, FULL_SCORE, FailureMode, Judgment, KeyRef, Keyed, Question};
use crate::sort::CollectTree;
use crate::sort::SharedSort;
use crate::text::quote;
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of the prompt below; every label record carries it.
pub const PROMPT_VERSION: &str = "classify-failures-v1";

/// The prompt template (`crates/repoprobe-core/prompts/classify-failures-v1.md`).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/classify-failures-v1.md");

/// Name of the reply schema (OpenAI `json_schema.name`) and of the forced tool (Anthropic).
pub const REPLY_NAME: &str = "failure_mode";

/// Answers whose checklist score is below this share are failures (paper §5.4): a metric's
/// definition, so the metrics' (which must not import a protocol).
pub use crate::metrics::grid::FAILURE_THRESHOLD as THRESHOLD;

/// An answer to classify: its question, the answer record, the judge's judgments of it (judge
/// runs in order) and its checklist score (0–1).
#[derive(Debug, Clone)]
pub struct Candidate<'d> {
    pub question: &'d Question,
    pub answer: &'d Answer,
    pub judgments: Vec<&'d Judgment>,
    pub score: f64,
}

/// The answers judged by `judge` whose checklist score is below [`THRESHOLD`], sorted by
/// (question, model, attempt). Judgments whose answer is not in `ds` (or is a failed run) are
/// counted in the second value: there is no answer text to classify.
pub fn candidates<'d>(ds: &'d Dataset, judge: &str) -> (Vec<Candidate<'d>>, usize) {
    let mut groups: BTreeMap<KeyRef, Vec<&Judgment>> = BTreeMap::new();
    for j in ds.judgments.iter().filter(|j| j.judge == judge) {
        groups.entry(j.key()).or_default().push(j);
    }
    let answers: BTreeMap<KeyRef, &Answer> = ds
        .answers
        .iter()
        .filter(|a| a.error.is_none() && a.answer.is_some())
        .map(|a| (a.key(), a))
        .collect_map();
    let (mut out, mut without_answer) = (Vec::new(), 0);
    for (key, mut judgments) in groups {
        let Some(question) = ds.question(key.question_id) else {
            continue;
        };
        judgments.shared_sort_by_key(|j| j.judge_run);
        let total: u64 = judgments
            .iter()
            .flat_map(|j| &j.items)
            .map(|i| u64::from(i.score))
            .sum();
        let score = total as f64 / (judgments.len() as f64 * f64::from(FULL_SCORE));
        if score >= THRESHOLD {
            continue;
        }
        match answers.get(&key) {
            Some(&answer) => out.push(Candidate {
                question,
                answer,
                judgments,
                score,
            }),
            None => without_answer += 1,
        }
    }
    (out, without_answer)
}

/// Renders the classifier's prompt for one candidate.
pub fn prompt(c: &Candidate<'_>, describe_schema: bool) -> JudgePrompt {
    let (system, user) = sections(PROMPT_TEMPLATE);
    let modes = FailureMode::ALL
        .iter()
        .map(|m| format!("- `{}` ({}): {}", m.as_str(), m.label(), definition(*m)))
        .collect::<Vec<_>>()
        .join("\n");
    let reply_format = reply_format(
        describe_schema,
        &reply_schema_json(),
        "`rationale` (a string, written first), then `mode`, one of the five mode names",
    );
    let repo = repo_line(c.question);
    let answer = c.answer.answer.as_deref().unwrap_or("");
    let score = format!(
        "{:.1} % (mean over {} judge run(s))",
        100.0 * c.score,
        c.judgments.len()
    );
    let verdicts = verdicts(c);
    let vars: [(&str, &str); 8] = [
        ("repo", &repo),
        ("question", &c.question.question),
        ("reference_answer", &c.question.reference_answer),
        ("candidate_answer", answer),
        ("checklist_score", &score),
        ("verdicts", &verdicts),
        ("modes", &modes),
        ("reply_format", &reply_format),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// What each mode means (paper §5.4, Table 7).
pub fn definition(m: FailureMode) -> &'static str {
    match m {
        FailureMode::EditBias => {
            "the question asks about the existing design and the model writes new code or \
             configuration instead: it proposes edits, patches or new features where an \
             explanation of how the repository already works was asked for"
        }
        FailureMode::ShallowExplanation => {
            "the answer stays vague or incomplete: it names the right area but lacks the \
             technical details (mechanism, files, conditions) the question needs"
        }
        FailureMode::Misinterpretation => {
            "the answer finds the relevant code but analyses it incorrectly, or answers a \
             different question than the one asked"
        }
        FailureMode::ContextMiss => {
            "the answer fails to retrieve the relevant files or components of the repository, \
             so the facts the question depends on are absent"
        }
        FailureMode::Hallucination => {
            "the answer references entities that do not exist in the repository (files, \
             functions, options, APIs) or states behaviour the code does not have"
        }
    }
}

/// The checklist with the judge's scores and rationales, one block per item.
fn verdicts(c: &Candidate<'_>) -> String {
    let mut s = String::new();
    for item in &c.question.checklist {
        s.push_str(&format!(
            "- `{}` (weight {}): {}\n",
            item.id, item.weight, item.key_point
        ));
        for j in &c.judgments {
            if let Some(v) = j.items.iter().find(|i| i.id == item.id) {
                s.push_str(&format!(
                    "  - run {}: score {}/{}: {}\n",
                    j.judge_run, v.score, item.weight, v.rationale
                ));
            }
        }
    }
    s.trim_end().to_string()
}

/// The reply schema as JSON text: `rationale` (string) first, then `mode` (enum of the five
/// mode names); both required, nothing else.
pub fn reply_schema_json() -> String {
    let modes = FailureMode::ALL
        .iter()
        .map(|m| format!("\"{}\"", m.as_str()))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"{{"type":"object","properties":{{"rationale":{{"type":"string"}},"mode":{{"type":"string","enum":[{modes}]}}}},"required":["rationale","mode"],"additionalProperties":false}}"#
    )
}

/// The message sent back after an invalid reply.
pub fn reask_message(violations: &[String]) -> String {
    reask_with(
        violations,
        &format!(
            "Reply again with the JSON object: `rationale` first, then `mode`, one of {}.",
            mode_names()
        ),
    )
}

fn mode_names() -> String {
    FailureMode::ALL
        .iter()
        .map(|m| quote(m.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a classifier's reply: a non-empty `rationale` first, then a `mode` that is one of the
/// five names, nothing else. Every violation its own message.
pub fn parse_reply(text: &str) -> Result<(FailureMode, String), Vec<String>> {
    let top = extract_object_of(text, "a JSON object with `rationale` and `mode`")
        .map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    let (rationale, values) = flat_reply(&top, &["mode"], &mut errs);
    let mode = match values[0] {
        None => None,
        Some(Value::String(s)) => {
            let m = FailureMode::ALL.iter().copied().find(|m| m.as_str() == s);
            if m.is_none() {
                errs.push(format!(
                    "`mode` is {}: it must be one of {}",
                    quote(s),
                    mode_names()
                ));
            }
            m
        }
        Some(other) => {
            errs.push(format!(
                "`mode` must be a string, one of {}, not {}",
                mode_names(),
                super::reply::Entries::Leaf(other.clone()).kind()
            ));
            None
        }
    };
    match (mode, rationale) {
        (Some(m), Some(r)) if errs.is_empty() => Ok((m, r)),
        _ => Err(errs),
    }
}

/// One call of the classifier: a failed answer to label.
impl Protocol for Candidate<'_> {
    type Reply = (FailureMode, String);
    const VERSION: &'static str = PROMPT_VERSION;
    const TEMPLATE: &'static str = PROMPT_TEMPLATE;
    const REPLY_NAME: &'static str = REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str = "Record the failure mode of the answer.";
    fn prompt(&self, describe_schema: bool) -> JudgePrompt {
        prompt(self, describe_schema)
    }
    fn reply_schema_json(&self) -> String {
        reply_schema_json()
    }
    fn reask_message(&self, violations: &[String]) -> String {
        reask_message(violations)
    }
    fn parse_reply(&self, text: &str) -> Result<(FailureMode, String), Vec<String>> {
        parse_reply(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemScore;

    fn dataset() -> Dataset {
        let q = crate::fixtures::one_knowledge_item_question();
        let judgment = |model: &str, judge: &str, run: u32, k1: u32| Judgment {
            question_id: "q1".into(),
            model: model.into(),
            attempt: 0,
            judge: judge.into(),
            judge_run: run,
            items: vec![
                ItemScore {
                    id: "k1".into(),
                    rationale: format!("run {run} of {model}"),
                    score: k1,
                },
                ItemScore {
                    id: "clarity".into(),
                    rationale: "clear".into(),
                    score: 1,
                },
            ],
        };
        let answer = |model: &str| Answer {
            question_id: "q1".into(),
            model: model.into(),
            attempt: 0,
            answer: Some(format!("{model}'s answer")),
            agent: None,
            usage: None,
            duration_s: None,
            error: None,
        };
        Dataset {
            questions: vec![q],
            answers: vec![answer("A"), answer("B")],
            judgments: vec![
                // A: 10 and 1 → mean 55 % < 60 %: a failure.
                judgment("A", "J", 0, 9),
                judgment("A", "J", 1, 0),
                // B: 10 and 10: not a failure.
                judgment("B", "J", 0, 9),
                judgment("B", "J", 1, 9),
                // C: no answer text.
                judgment("C", "J", 0, 0),
                // Another judge with fewer judgments.
                judgment("B", "K", 0, 0),
            ],
            ..Dataset::default()
        }
    }

    #[test]
    fn failures_are_answers_below_60_percent_under_the_judge_in_force() {
        let ds = dataset();
        use crate::metrics::judge_in_force;
        assert_eq!(judge_in_force(&ds, None).unwrap().as_deref(), Some("J"));
        assert_eq!(
            judge_in_force(&ds, Some("K")).unwrap().as_deref(),
            Some("K")
        );
        assert_eq!(
            judge_in_force(&ds, Some("Z")).unwrap_err().to_string(),
            "judge \"Z\" has no valid judgments; judges present: \"J\", \"K\""
        );
        let (c, without_answer) = candidates(&ds, "J");
        assert_eq!(without_answer, 1);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].answer.model, "A");
        assert!((c[0].score - 0.55).abs() < 1e-12);
        let (c, _) = candidates(&ds, "K");
        assert_eq!(c[0].answer.model, "B");
    }

    #[test]
    fn the_prompt_defines_the_five_modes_and_shows_the_verdicts() {
        let ds = dataset();
        let (c, _) = candidates(&ds, "J");
        let p = prompt(&c[0], false);
        for needle in [
            "Why does X happen?",
            "A's answer",
            "55.0 % (mean over 2 judge run(s))",
            "run 1 of A",
            "`edit_bias` (Edit Bias): the question asks about the existing design and the \
             model writes new code or configuration instead",
            "`hallucination` (Hallucination)",
        ] {
            assert!(p.user.contains(needle), "{needle:?} not in:\n{}", p.user);
        }
        assert!(!p.user.contains("{{") && !p.system.contains("{{"));
        assert!(prompt(&c[0], true).user.contains(&reply_schema_json()));
    }

    #[test]
    fn a_good_reply_gives_the_mode_and_rationale() {
        let (m, r) =
            parse_reply(r#"{"rationale": "writes a patch", "mode": "edit_bias"}"#).unwrap();
        assert_eq!((m, r.as_str()), (FailureMode::EditBias, "writes a patch"));
    }

    #[test]
    fn bad_replies_are_reported_one_message_per_violation() {
        let e = parse_reply(r#"{"rationale": "r", "mode": "laziness"}"#).unwrap_err();
        assert_eq!(
            e,
            [
                "`mode` is \"laziness\": it must be one of \"edit_bias\", \"shallow_explanation\", \
              \"misinterpretation\", \"context_miss\", \"hallucination\""
            ]
        );
        let e = parse_reply(r#"{"mode": "edit_bias", "rationale": "r"}"#).unwrap_err();
        assert_eq!(
            e,
            ["`mode` comes before `rationale`: write the rationale first"]
        );
        let e = parse_reply(r#"{"rationale": "", "mode": 3, "confidence": 1}"#).unwrap_err();
        assert_eq!(e.len(), 3, "{e:?}");
        let e = parse_reply(r#"{"rationale": "r"}"#).unwrap_err();
        assert_eq!(e, ["`mode` is missing"]);
    }

    #[test]
    fn the_schema_is_an_enum_of_the_five_modes() {
        let s: Value = serde_json::from_str(&reply_schema_json()).unwrap();
        assert_eq!(s["properties"]["mode"]["enum"].as_array().unwrap().len(), 5);
        assert_eq!(s["required"], serde_json::json!(["rationale", "mode"]));
        assert_eq!(s["additionalProperties"], false);
    }
}
