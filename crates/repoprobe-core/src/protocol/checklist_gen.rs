//! The checklist generator (paper §3.2, §4.1), pure: from a source record `{id, repo, category,
//! question, reference_answer}` to a full benchmark question whose checklist obeys every rule of
//! docs/format.md#question. The versioned prompt, the reply schema and the reply check live here; the rules
//! themselves are [`crate::validate::question`]'s, so a generated question is valid exactly when
//! `repoprobe validate` says so.
//!
//! Since `make-checklist-v2` every item of a reply carries `evidence`, the repository paths the
//! reference answer names for its fact: checked here one by one (a path, normalised, whose file
//! name the reference answer contains) and written as the item's evidence. They are not
//! checked against the repository: this protocol never sees it (`repoprobe evidence` does).

use super::prompt::{reask_with, reply_format, repo_line, sections};
use super::reply::extract_object_of;
use super::{JudgePrompt, Protocol};
use crate::cited::split_lines;
use crate::model::repo_path::normalise;
use crate::model::{ChecklistItem, EvidencePath, ItemKind, Question, Repo, RubricTier};
use crate::text::quote;
use crate::validate;
use serde_json::Value;

/// Version of the prompt below; every generated question carries it.
/// The `source` of the evidence entries written from a reply, too.
pub const PROMPT_VERSION: &str = "make-checklist-v2";

/// The prompt template (`crates/repoprobe-core/prompts/make-checklist-v2.md`; v1, without
/// evidence, is kept beside it as the record of what earlier checklists were made with).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/make-checklist-v2.md");

/// Name of the reply schema (OpenAI `json_schema.name`) and of the forced tool (Anthropic).
pub const REPLY_NAME: &str = "checklist";

/// A source record: a question without its checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub id: String,
    pub repo: Repo,
    pub category: String,
    pub question: String,
    pub reference_answer: String,
    pub external_context: bool,
}

/// Reads a source record. `repo` is an object as in docs/format.md#question or just the repository's name.
/// Every problem is its own message; the rules of §2.1 that do not concern the checklist
/// (category, ids, repository name) are checked here, so that a reply is only blamed for its
/// checklist.
pub fn parse_source(v: &Value) -> Result<Source, Vec<String>> {
    let mut errs = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(vec!["a source record must be a JSON object".to_string()]);
    };
    let mut text = |key: &str| match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => {
            errs.push(format!("`{key}` is empty"));
            String::new()
        }
        None | Some(Value::Null) => {
            errs.push(format!("`{key}` is missing"));
            String::new()
        }
        Some(_) => {
            errs.push(format!("`{key}` must be a string"));
            String::new()
        }
    };
    let (id, category, question, reference_answer) = (
        text("id"),
        text("category"),
        text("question"),
        text("reference_answer"),
    );
    let repo = match obj.get("repo") {
        Some(Value::String(name)) => Some(Repo {
            name: name.clone(),
            url: String::new(),
            commit: String::new(),
            language: String::new(),
            theme: String::new(),
        }),
        Some(r @ Value::Object(_)) => match serde_json::from_value::<Repo>(r.clone()) {
            Ok(r) => Some(r),
            Err(e) => {
                errs.push(format!("`repo` is not a repository: {e}"));
                None
            }
        },
        _ => {
            errs.push("`repo` is missing: give the repository's name or object".to_string());
            None
        }
    };
    let external_context = match obj.get("external_context") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            errs.push("`external_context` must be true or false".to_string());
            false
        }
    };
    let (Some(repo), true) = (repo, errs.is_empty()) else {
        return Err(errs);
    };
    let source = Source {
        id,
        repo,
        category,
        question,
        reference_answer,
        external_context,
    };
    // The question's own rules, with a checklist that obeys every rule.
    let tier = |score| RubricTier {
        score,
        criterion: "-".into(),
    };
    let placeholder = vec![
        item("k1", ItemKind::Knowledge, 9, vec![tier(9), tier(0)]),
        item("clarity", ItemKind::Clarity, 1, vec![tier(1), tier(0)]),
    ];
    let errs = messages(validate::question(&with_checklist(&source, placeholder)));
    if errs.is_empty() {
        Ok(source)
    } else {
        Err(errs)
    }
}

/// The problems' words: what the model is told back.
fn messages(problems: Vec<crate::issue::Problem>) -> Vec<String> {
    problems.into_iter().map(|p| p.message).collect()
}

fn item(id: &str, kind: ItemKind, weight: u32, rubric: Vec<RubricTier>) -> ChecklistItem {
    ChecklistItem {
        id: id.into(),
        kind,
        key_point: "-".into(),
        weight,
        rubric,
        evidence: Vec::new(),
    }
}

fn with_checklist(s: &Source, checklist: Vec<ChecklistItem>) -> Question {
    Question {
        id: s.id.clone(),
        repo: s.repo.clone(),
        category: s.category.clone(),
        question: s.question.clone(),
        reference_answer: s.reference_answer.clone(),
        external_context: s.external_context,
        curation: None,
        checklist,
    }
}

/// Renders the generator's prompt for one source record.
pub fn prompt(s: &Source, describe_schema: bool) -> JudgePrompt {
    let (system, user) = sections(PROMPT_TEMPLATE);
    let reply_format = reply_format(
        describe_schema,
        &reply_schema_json(),
        "`checklist`, an array of items, each with `id`, `kind`, `key_point`, `weight`, \
         `rubric` (an array of `{score, criterion}` tiers) and `evidence` (an array of the \
         repository paths the reference answer names for the item's fact, possibly empty)",
    );
    let q = with_checklist(s, Vec::new());
    let repo = repo_line(&q);
    let vars: [(&str, &str); 5] = [
        ("repo", &repo),
        ("category", &s.category),
        ("question", &s.question),
        ("reference_answer", &s.reference_answer),
        ("reply_format", &reply_format),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// The reply schema as JSON text: `{"checklist": [item, ...]}` with 2–5 items, each
/// `{id, kind (knowledge|clarity), key_point, weight (1–9), rubric: [{score (0–9), criterion}],
/// evidence: [path]}`, everything required (strict structured outputs require every field;
/// [`parse_reply`] still reads a reply without `evidence` as one without paths), nothing else.
/// The sums and sets of docs/format.md#question cannot be said in a schema: [`parse_reply`]
/// checks them.
pub fn reply_schema_json() -> String {
    let tier = r#"{"type":"object","properties":{"score":{"type":"integer","minimum":0,"maximum":9},"criterion":{"type":"string"}},"required":["score","criterion"],"additionalProperties":false}"#;
    let item = format!(
        r#"{{"type":"object","properties":{{"id":{{"type":"string"}},"kind":{{"type":"string","enum":["knowledge","clarity"]}},"key_point":{{"type":"string"}},"weight":{{"type":"integer","minimum":1,"maximum":9}},"rubric":{{"type":"array","minItems":2,"items":{tier}}},"evidence":{{"type":"array","items":{{"type":"string"}}}}}},"required":["id","kind","key_point","weight","rubric","evidence"],"additionalProperties":false}}"#
    );
    format!(
        r#"{{"type":"object","properties":{{"checklist":{{"type":"array","minItems":2,"maxItems":5,"items":{item}}}}},"required":["checklist"],"additionalProperties":false}}"#
    )
}

/// The message sent back after an invalid reply: the violations, then the rules again.
pub fn reask_message(violations: &[String]) -> String {
    reask_with(
        violations,
        "Reply again with the complete JSON object `{\"checklist\": [...]}`: 1 to 4 knowledge \
         items whose integer weights sum to 9, then exactly one clarity item of weight 1 with \
         the scores 1 and 0; every rubric lists distinct scores from 0 to the item's weight, \
         including both 0 and the weight; item ids are unique; `evidence` lists only \
         repository paths the reference answer names (relative to the root, no `..`), and is \
         empty for the clarity item.",
    )
}

/// Checks a generator's reply and returns the full question, or every violation: the reply's
/// shape (an object with only `checklist`, an array of items with the fields of docs/format.md#question,
/// non-empty texts), each item's `evidence` (`evidence_of`) and every rule of
/// [`validate::question`].
pub fn parse_reply(s: &Source, text: &str) -> Result<Question, Vec<String>> {
    let top = extract_object_of(text, "a JSON object with `checklist`").map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    for (k, _) in &top.0 {
        if k != "checklist" {
            errs.push(format!(
                "unexpected key {}: the reply has only `checklist`",
                quote(k)
            ));
        }
    }
    if top.0.iter().filter(|(k, _)| k == "checklist").count() > 1 {
        errs.push("`checklist` is given twice".to_string());
    }
    let Some((_, list)) = top.0.into_iter().find(|(k, _)| k == "checklist") else {
        errs.push("`checklist` is missing".to_string());
        return Err(errs);
    };
    let Value::Array(entries) = list.into_value() else {
        errs.push("`checklist` must be an array of items".to_string());
        return Err(errs);
    };
    let mut checklist = Vec::with_capacity(entries.len());
    for (n, mut entry) in entries.into_iter().enumerate() {
        let name = entry
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{}", n + 1), quote);
        if let Some(extra) = entry.as_object().and_then(|o| {
            o.keys().find(|k| {
                !["id", "kind", "key_point", "weight", "rubric", "evidence"].contains(&k.as_str())
            })
        }) {
            errs.push(format!(
                "item {name} has an unexpected field {}",
                quote(extra)
            ));
        }
        let evidence = entry
            .as_object_mut()
            .and_then(|o| o.remove("evidence"))
            .map(|v| evidence_of(&name, v, &s.reference_answer, &mut errs))
            .unwrap_or_default();
        match serde_json::from_value::<ChecklistItem>(entry) {
            Ok(mut item) => {
                if item.kind == ItemKind::Clarity && !evidence.is_empty() {
                    errs.push(format!(
                        "item {name} is the clarity item: its `evidence` must be empty \
                         (clarity is not read from the repository)"
                    ));
                }
                item.evidence = evidence;
                if item.key_point.trim().is_empty() {
                    errs.push(format!("item {name} has an empty `key_point`"));
                }
                if item.rubric.iter().any(|t| t.criterion.trim().is_empty()) {
                    errs.push(format!("item {name} has a rubric tier without a criterion"));
                }
                checklist.push(item);
            }
            Err(e) => errs.push(format!("item {name} is not a checklist item: {e}")),
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let q = with_checklist(s, checklist);
    let errs = messages(validate::question(&q));
    if errs.is_empty() { Ok(q) } else { Err(errs) }
}

/// An item's `evidence` as the reply gives it: each entry a repository path, lines after it
/// split off (`src/a.rs:12-40`), [normalised](normalise), whose file name (its last part) the
/// reference answer contains — a path the answer does not name is the model's guess, and
/// evidence is where the answer's fact can be read. One message per entry that is not; a path
/// given twice is kept once. `null` is no paths.
fn evidence_of(
    name: &str,
    v: Value,
    reference_answer: &str,
    errs: &mut Vec<String>,
) -> Vec<EvidencePath> {
    let entries = match v {
        Value::Null => return Vec::new(),
        Value::Array(entries) => entries,
        _ => {
            errs.push(format!(
                "item {name} has an `evidence` that is not an array of paths"
            ));
            return Vec::new();
        }
    };
    let mut out: Vec<EvidencePath> = Vec::new();
    for (n, entry) in entries.into_iter().enumerate() {
        let Value::String(text) = entry else {
            errs.push(format!(
                "item {name}'s evidence #{} is not a path (a string)",
                n + 1
            ));
            continue;
        };
        let (path, lines) = split_lines(text.trim());
        let path = match normalise(path) {
            Ok(p) => p,
            Err(problem) => {
                errs.push(format!("item {name}'s evidence {} {problem}", quote(&text)));
                continue;
            }
        };
        let file = path.rsplit('/').next().unwrap_or(&path);
        if !reference_answer.contains(file) {
            errs.push(format!(
                "item {name}'s evidence {} is not named by the reference answer: give only \
                 paths it names",
                quote(&text)
            ));
            continue;
        }
        if out.iter().all(|e| e.path != path) {
            out.push(EvidencePath {
                path,
                lines,
                source: Some(PROMPT_VERSION.to_string()),
                unreadable: None,
            });
        }
    }
    out
}

/// One call of the checklist writer: a source record to give a checklist.
impl Protocol for Source {
    type Reply = Question;
    const VERSION: &'static str = PROMPT_VERSION;
    const TEMPLATE: &'static str = PROMPT_TEMPLATE;
    const REPLY_NAME: &'static str = REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str = "Record the checklist of the question.";
    fn prompt(&self, describe_schema: bool) -> JudgePrompt {
        prompt(self, describe_schema)
    }
    fn reply_schema_json(&self) -> String {
        reply_schema_json()
    }
    fn reask_message(&self, violations: &[String]) -> String {
        reask_message(violations)
    }
    fn parse_reply(&self, text: &str) -> Result<Question, Vec<String>> {
        parse_reply(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source() -> Source {
        parse_source(
            &json!({"id": "q1", "repo": "o/r", "category": "Business Logic",
            "question": "Why does X happen?", "reference_answer": "Because of Y and Z."}),
        )
        .expect("valid source")
    }

    const GOOD: &str = r#"{"checklist": [
        {"id": "k1", "kind": "knowledge", "key_point": "names Y", "weight": 5,
         "rubric": [{"score": 5, "criterion": "Y and why"}, {"score": 3, "criterion": "Y"},
                    {"score": 0, "criterion": "neither"}]},
        {"id": "k2", "kind": "knowledge", "key_point": "names Z", "weight": 4,
         "rubric": [{"score": 4, "criterion": "Z"}, {"score": 0, "criterion": "no Z"}]},
        {"id": "clarity", "kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
         "rubric": [{"score": 1, "criterion": "clear"}, {"score": 0, "criterion": "not"}]}]}"#;

    #[test]
    fn a_good_reply_makes_a_valid_question() {
        let q = parse_reply(&source(), GOOD).expect("valid");
        assert_eq!(q.id, "q1");
        assert_eq!(q.repo.name, "o/r");
        assert_eq!(q.checklist.len(), 3);
        assert!(validate::question(&q).is_empty());
    }

    #[test]
    fn every_rule_of_the_spec_is_a_violation_of_the_reply() {
        let weights = GOOD.replace(r#""weight": 4"#, r#""weight": 3"#);
        let e = parse_reply(&source(), &weights).unwrap_err();
        assert!(e.iter().any(|m| m.contains("sum to 9")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("k2")), "{e:?}");
        let no_zero = GOOD.replace(
            r#"{"score": 0, "criterion": "no Z"}"#,
            r#"{"score": 2, "criterion": "half"}"#,
        );
        let e = parse_reply(&source(), &no_zero).unwrap_err();
        assert!(e.iter().any(|m| m.contains("0")), "{e:?}");
        let twice = GOOD.replace(r#""id": "k2""#, r#""id": "k1""#);
        assert!(!parse_reply(&source(), &twice).unwrap_err().is_empty());
    }

    #[test]
    fn shape_errors_are_reported_one_message_each() {
        let e = parse_reply(&source(), r#"{"checklist": [], "notes": "x"}"#).unwrap_err();
        assert_eq!(
            e,
            ["unexpected key \"notes\": the reply has only `checklist`"]
        );
        let e = parse_reply(&source(), r#"{"items": []}"#).unwrap_err();
        assert_eq!(
            e,
            [
                "unexpected key \"items\": the reply has only `checklist`",
                "`checklist` is missing"
            ]
        );
        let e = parse_reply(&source(), r#"{"checklist": 3}"#).unwrap_err();
        assert_eq!(e, ["`checklist` must be an array of items"]);
        let bad = GOOD.replace(
            r#""key_point": "names Y", "#,
            r#""key_point": " ", "confidence": 1, "#,
        );
        let e = parse_reply(&source(), &bad).unwrap_err();
        assert_eq!(
            e,
            [
                "item \"k1\" has an unexpected field \"confidence\"",
                "item \"k1\" has an empty `key_point`"
            ]
        );
        let bad = GOOD.replace(
            r#""kind": "knowledge", "key_point": "names Z""#,
            r#""kind": "fact", "key_point": "names Z""#,
        );
        let e = parse_reply(&source(), &bad).unwrap_err();
        assert!(
            e[0].starts_with("item \"k2\" is not a checklist item"),
            "{e:?}"
        );
        let e = parse_reply(&source(), "no JSON here").unwrap_err();
        assert!(e[0].starts_with("the reply is not valid JSON"));
    }

    #[test]
    fn evidence_the_reference_answer_names_is_written_normalised_and_the_rest_refused() {
        let mut src = source();
        src.reference_answer = "Y is in src/y.rs:10-20 and Z in lib/z.py.".into();
        let with = |k1: &str, clarity: &str| {
            GOOD.replace(
                r#""key_point": "names Y", "#,
                &format!(r#""key_point": "names Y", "evidence": {k1}, "#),
            )
            .replace(
                r#""key_point": "Clarity & Organization", "#,
                &format!(r#""key_point": "Clarity & Organization", "evidence": {clarity}, "#),
            )
        };
        let q = parse_reply(
            &src,
            &with(r#"["./src/y.rs:10-20", "src/y.rs", "lib/z.py"]"#, "[]"),
        )
        .expect("valid");
        let e = &q.checklist[0].evidence;
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            (e[0].path.as_str(), e[0].lines),
            ("src/y.rs", Some([10, 20]))
        );
        assert_eq!((e[1].path.as_str(), e[1].lines), ("lib/z.py", None));
        assert!(
            e.iter()
                .all(|x| x.source.as_deref() == Some(PROMPT_VERSION))
        );
        assert!(q.checklist[1].evidence.is_empty(), "no `evidence` is none");
        assert!(parse_reply(&src, &with("null", "null")).is_ok());

        let e = parse_reply(
            &src,
            &with(
                r#"["/etc/y.rs", "src/../y.rs", "src/invented.rs", 3]"#,
                r#"["src/y.rs"]"#,
            ),
        )
        .unwrap_err();
        assert_eq!(
            e,
            [
                "item \"k1\"'s evidence \"/etc/y.rs\" is absolute (a repository path is relative to its root)",
                "item \"k1\"'s evidence \"src/../y.rs\" has a `..` part (it could leave the repository)",
                "item \"k1\"'s evidence \"src/invented.rs\" is not named by the reference answer: give only paths it names",
                "item \"k1\"'s evidence #4 is not a path (a string)",
                "item \"clarity\" is the clarity item: its `evidence` must be empty (clarity is not read from the repository)",
            ]
        );
        let e = parse_reply(&src, &with(r#""src/y.rs""#, "[]")).unwrap_err();
        assert_eq!(
            e,
            ["item \"k1\" has an `evidence` that is not an array of paths"]
        );
    }

    #[test]
    fn bad_sources_are_reported() {
        let e = parse_source(&json!({"id": "", "repo": 3, "category": "Misc",
            "question": "q", "reference_answer": "r"}))
        .unwrap_err();
        assert_eq!(
            e,
            [
                "`id` is empty",
                "`repo` is missing: give the repository's name or object"
            ]
        );
        let e = parse_source(
            &json!({"id": "q", "repo": {"name": "o/r"}, "category": "Misc",
            "question": "q", "reference_answer": "r"}),
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].contains("`category`"), "{e:?}");
        assert!(parse_source(&json!([1])).is_err());
    }

    #[test]
    fn the_prompt_and_schema() {
        let p = prompt(&source(), false);
        for needle in [
            "Why does X happen?",
            "Because of Y and Z.",
            "o/r",
            "Business Logic",
        ] {
            assert!(p.user.contains(needle), "{needle:?} not in:\n{}", p.user);
        }
        assert!(p.system.contains("sum to 9"));
        assert!(!p.user.contains("{{") && !p.system.contains("{{"));
        assert!(prompt(&source(), true).user.contains(&reply_schema_json()));
        let s: Value = serde_json::from_str(&reply_schema_json()).unwrap();
        assert_eq!(s["required"], json!(["checklist"]));
        let item = &s["properties"]["checklist"]["items"];
        assert_eq!(
            item["properties"]["kind"]["enum"],
            json!(["knowledge", "clarity"])
        );
        assert_eq!(item["additionalProperties"], false);
        assert_eq!(item["properties"]["evidence"]["items"]["type"], "string");
        assert!(
            item["required"]
                .as_array()
                .unwrap()
                .contains(&json!("evidence"))
        );
        assert!(prompt(&source(), false).system.contains("`evidence`"));
        assert!(reask_message(&["x".into()]).contains("- x\n"));
    }
}
