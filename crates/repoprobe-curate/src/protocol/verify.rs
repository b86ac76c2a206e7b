//! The answerability check of `repoprobe curate verify` (paper §3.2, Figure 2), pure: the
//! versioned prompt the built-in agent is given in the repository at the question's pinned
//! commit, the schema of its final message, and the check of that message (every knowledge
//! item exactly once, each grounded one with evidence, paths written as repository paths,
//! lines that are lines, a reason for each).
//!
//! The items are the question's knowledge items, numbered from 1 in checklist order (the
//! clarity item is not read from the repository). Whether an evidence path exists at the
//! commit is not this module's to know: the command asks the repository, and
//! `crate::verify` decides with both. The question, the checked items, the prompt's
//! version and the evidence source are defined there (curate verify's data, which must not
//! import this module).

use repoprobe_core::cited::split_lines;
use repoprobe_core::model::repo_path::normalise;
use repoprobe_core::model::{ChecklistItem, EvidencePath};
use repoprobe_core::protocol::prompt::{reask_with, repo_line, sections};
use repoprobe_core::protocol::reply::{Entries, extract_object_of, integer};
use repoprobe_core::protocol::{JudgePrompt, Protocol};
use repoprobe_core::text::quote;
use serde_json::{Map, Value};

use crate::verify::{ItemCheck, PROMPT_VERSION, Verification};

/// The prompt template (`crates/repoprobe-curate/prompts/curate-verify-v1.md`).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/curate-verify-v1.md");

/// Name of the reply schema.
pub const REPLY_NAME: &str = "verification";

/// Renders the prompt. The agent's final message has no structured-output mode, so the schema
/// is always spelled out.
pub fn prompt(v: &Verification<'_>) -> JudgePrompt {
    let (system, user) = sections(PROMPT_TEMPLATE);
    let items = v.items();
    let listed = items
        .iter()
        .enumerate()
        .map(|(n, item)| render_item(n + 1, item))
        .collect::<Vec<_>>()
        .join("\n\n");
    let repo = repo_line(v.question);
    let count = items.len().to_string();
    let schema = reply_schema_json(items.len());
    let vars: [(&str, &str); 6] = [
        ("repo", &repo),
        ("question", &v.question.question),
        ("reference_answer", &v.question.reference_answer),
        ("items", &listed),
        ("count", &count),
        ("reply_format", &schema),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// One item as the prompt lists it: its number, id and weight, its key point, and the paths
/// the checklist writer suggested.
fn render_item(n: usize, item: &ChecklistItem) -> String {
    let mut s = format!(
        "### Item {n} (`{}`, weight {})\n<item>\n{}\n</item>",
        item.id,
        item.weight,
        item.key_point.trim()
    );
    if !item.evidence.is_empty() {
        let paths: Vec<String> = item
            .evidence
            .iter()
            .map(|e| match e.lines {
                Some([a, b]) => format!("`{}:{a}-{b}`", e.path),
                None => format!("`{}`", e.path),
            })
            .collect();
        s.push_str(&format!(
            "\nSuggested paths (not checked): {}",
            paths.join(", ")
        ));
    }
    s
}

/// The reply schema as JSON text: `{"items": [{item, grounded, evidence: [{path, lines?}],
/// reason}]}` with exactly `count` entries numbered 1 to `count`. That each number comes once,
/// and that a grounded item has evidence, no schema says: [`parse_reply`] checks them.
pub fn reply_schema_json(count: usize) -> String {
    let entry = r#"{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"array","items":{"type":"integer","minimum":1},"minItems":2,"maxItems":2}},"required":["path"],"additionalProperties":false}"#;
    format!(
        r#"{{"type":"object","properties":{{"items":{{"type":"array","minItems":{count},"maxItems":{count},"items":{{"type":"object","properties":{{"item":{{"type":"integer","minimum":1,"maximum":{count}}},"grounded":{{"type":"boolean"}},"evidence":{{"type":"array","items":{entry}}},"reason":{{"type":"string"}}}},"required":["item","grounded","evidence","reason"],"additionalProperties":false}}}}}},"required":["items"],"additionalProperties":false}}"#
    )
}

/// The message sent back after an invalid final reply.
pub fn reask_message(count: usize, violations: &[String]) -> String {
    reask_with(
        violations,
        &format!(
            "Reply again with the complete JSON object `{{\"items\": [...]}}` and nothing else: \
             exactly one entry for each item 1 to {count}, each with `item`, `grounded`, \
             `evidence` (at least one `{{\"path\", \"lines\"}}` entry when grounded; paths \
             relative to the repository's root, no `..`) and a non-empty `reason`. You may use \
             the tools again before you reply."
        ),
    )
}

/// Checks the agent's final message: one entry per item, each once; `grounded` a boolean;
/// `evidence` an array of `{path, lines?}` (or `"path:12-40"` strings), every path a
/// repository path, lines two whole numbers from 1, the first not after the last; a grounded
/// item with at least one entry; a non-empty `reason`. The entries come back in item order.
pub fn parse_reply(v: &Verification<'_>, text: &str) -> Result<Vec<ItemCheck>, Vec<String>> {
    let items = v.items();
    let top = extract_object_of(text, "a JSON object with `items`").map_err(|e| vec![e])?;
    let mut errs = Vec::new();
    for (k, _) in &top.0 {
        if k != "items" {
            errs.push(format!(
                "unexpected key {}: the reply has only `items`",
                quote(k)
            ));
        }
    }
    if top.0.iter().filter(|(k, _)| k == "items").count() > 1 {
        errs.push("`items` is given twice".to_string());
    }
    let Some((_, list)) = top.0.into_iter().find(|(k, _)| k == "items") else {
        errs.push("`items` is missing".to_string());
        return Err(errs);
    };
    let Value::Array(entries) = Entries::into_value(list) else {
        errs.push("`items` must be an array with one entry per item".to_string());
        return Err(errs);
    };
    // An entry whose number was read counts as that item's answer, valid or not, so that a
    // broken entry is blamed once and not also as a missing item.
    let mut seen = vec![false; items.len()];
    let mut found: Vec<Option<ItemCheck>> = vec![None; items.len()];
    for (at, entry) in entries.iter().enumerate() {
        let (number, check) = entry_of(at, entry, &items, &mut errs);
        let Some(n) = number else { continue };
        if seen[n - 1] {
            errs.push(format!("item {n} is given twice: give each item once"));
            continue;
        }
        seen[n - 1] = true;
        found[n - 1] = check;
    }
    for (n, seen) in seen.iter().enumerate() {
        if !seen {
            errs.push(format!(
                "item {} (`{}`) is missing: every item is answered once",
                n + 1,
                items[n].id
            ));
        }
    }
    if errs.is_empty() {
        Ok(found.into_iter().flatten().collect())
    } else {
        Err(errs)
    }
}

/// One entry of `items` (at position `at`, 0-based), checked: the item number it gives, if
/// one can be read, and the check when the entry is valid (its violations pushed otherwise).
fn entry_of(
    at: usize,
    entry: &Value,
    items: &[&ChecklistItem],
    errs: &mut Vec<String>,
) -> (Option<usize>, Option<ItemCheck>) {
    let place = format!("entry {} of `items`", at + 1);
    let Some(obj) = entry.as_object() else {
        errs.push(format!("{place} must be an object"));
        return (None, None);
    };
    for k in obj.keys() {
        if !["item", "grounded", "evidence", "reason"].contains(&k.as_str()) {
            errs.push(format!(
                "{place} has an unexpected key {}: an entry has `item`, `grounded`, \
                 `evidence` and `reason`",
                quote(k)
            ));
        }
    }
    let number = number_of(obj, &place, items.len(), errs);
    let name = number.map_or(place.clone(), |n| format!("item {n}"));
    let grounded = grounded_of(obj, &name, errs);
    let reason = reason_of(obj, &name, errs);
    let before = errs.len();
    let evidence = evidence_of(obj, &name, errs);
    if grounded == Some(true) && evidence.is_empty() && errs.len() == before {
        errs.push(format!(
            "{name} is grounded but gives no evidence: name the file(s) where its fact is read"
        ));
    }
    let check = match (number, grounded, reason) {
        (Some(number), Some(grounded), Some(reason)) if errs.len() == before => Some(ItemCheck {
            number,
            id: items[number - 1].id.clone(),
            grounded,
            evidence,
            reason,
        }),
        _ => None,
    };
    (number, check)
}

/// The entry's `item`: a number from 1 to `items`.
fn number_of(
    obj: &Map<String, Value>,
    place: &str,
    items: usize,
    errs: &mut Vec<String>,
) -> Option<usize> {
    match obj.get("item") {
        None => {
            errs.push(format!("{place} has no `item` number"));
            None
        }
        Some(Value::Number(n)) => match integer(n) {
            Some(i) if i >= 1 && (i as usize) <= items => Some(i as usize),
            _ => {
                errs.push(format!(
                    "{place}: `item` is {n}: the items are numbered 1 to {items}"
                ));
                None
            }
        },
        Some(other) => {
            errs.push(format!(
                "{place}: `item` must be a number, not {}",
                Entries::Leaf(other.clone()).kind()
            ));
            None
        }
    }
}

/// The entry's `grounded`: true or false.
fn grounded_of(obj: &Map<String, Value>, name: &str, errs: &mut Vec<String>) -> Option<bool> {
    match obj.get("grounded") {
        Some(Value::Bool(b)) => Some(*b),
        None => {
            errs.push(format!("{name} has no `grounded`"));
            None
        }
        Some(other) => {
            errs.push(format!(
                "{name}: `grounded` must be true or false, not {}",
                Entries::Leaf(other.clone()).kind()
            ));
            None
        }
    }
}

/// The entry's `reason`: a string, not blank (trimmed).
fn reason_of(obj: &Map<String, Value>, name: &str, errs: &mut Vec<String>) -> Option<String> {
    match obj.get("reason") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::String(_)) => {
            errs.push(format!("{name} has an empty `reason`"));
            None
        }
        None => {
            errs.push(format!("{name} has no `reason`"));
            None
        }
        Some(other) => {
            errs.push(format!(
                "{name}: `reason` must be a string, not {}",
                Entries::Leaf(other.clone()).kind()
            ));
            None
        }
    }
}

/// The entry's `evidence` (none when absent or null): its valid entries, each once.
fn evidence_of(obj: &Map<String, Value>, name: &str, errs: &mut Vec<String>) -> Vec<EvidencePath> {
    match obj.get("evidence") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .filter_map(|(j, e)| evidence_entry(name, j, e, errs))
            .fold(Vec::new(), |mut out: Vec<EvidencePath>, e| {
                if !out.contains(&e) {
                    out.push(e);
                }
                out
            }),
        Some(_) => {
            errs.push(format!(
                "{name}: `evidence` must be an array of `{{\"path\", \"lines\"}}` entries"
            ));
            Vec::new()
        }
    }
}

/// One evidence entry: `{"path", "lines"?}` or a string `path` (`path:12-40` read as lines).
fn evidence_entry(name: &str, j: usize, e: &Value, errs: &mut Vec<String>) -> Option<EvidencePath> {
    let place = format!("{name}'s evidence #{}", j + 1);
    let (text, lines_given) = match e {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => {
            if let Some(k) = o.keys().find(|k| !["path", "lines"].contains(&k.as_str())) {
                errs.push(format!(
                    "{place} has an unexpected key {}: an entry has `path` and `lines`",
                    quote(k)
                ));
            }
            let Some(Value::String(p)) = o.get("path") else {
                errs.push(format!("{place} has no `path` string"));
                return None;
            };
            (p.as_str(), o.get("lines").filter(|l| !l.is_null()))
        }
        _ => {
            errs.push(format!(
                "{place} must be an object `{{\"path\", \"lines\"}}`"
            ));
            return None;
        }
    };
    let (path, split) = split_lines(text.trim());
    let path = match normalise(path) {
        Ok(p) => p,
        Err(problem) => {
            errs.push(format!("{place}: the path {} {problem}", quote(text)));
            return None;
        }
    };
    let lines = match lines_given {
        None => split,
        Some(l) => Some(lines_of(&place, l, errs)?),
    };
    Some(EvidencePath {
        path,
        lines,
        source: None,
        unreadable: None,
    })
}

/// `[first, last]`: two whole numbers from 1, the first not after the last.
fn lines_of(place: &str, v: &Value, errs: &mut Vec<String>) -> Option<[u32; 2]> {
    let bad = |errs: &mut Vec<String>| {
        errs.push(format!(
            "{place}: `lines` must be [first, last], two line numbers from 1 with the first \
             not after the last, not {}",
            quote(&v.to_string())
        ));
        None
    };
    let Value::Array(pair) = v else {
        return bad(errs);
    };
    let nums: Vec<Option<i64>> = pair
        .iter()
        .map(|n| n.as_number().and_then(integer))
        .collect();
    match nums.as_slice() {
        [Some(a), Some(b)] if *a >= 1 && a <= b && *b <= i64::from(u32::MAX) => {
            Some([*a as u32, *b as u32])
        }
        _ => bad(errs),
    }
}

/// One agent run of the check: a question to ground.
impl Protocol for Verification<'_> {
    type Reply = Vec<ItemCheck>;
    const VERSION: &'static str = PROMPT_VERSION;
    const TEMPLATE: &'static str = PROMPT_TEMPLATE;
    const REPLY_NAME: &'static str = REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str =
        "Record, for every checklist item, whether the code grounds it and where.";
    /// The schema is spelled out whatever `describe_schema` says (see [`prompt`]).
    fn prompt(&self, _describe_schema: bool) -> JudgePrompt {
        prompt(self)
    }
    fn reply_schema_json(&self) -> String {
        reply_schema_json(self.items().len())
    }
    fn reask_message(&self, violations: &[String]) -> String {
        reask_message(self.items().len(), violations)
    }
    fn parse_reply(&self, text: &str) -> Result<Vec<ItemCheck>, Vec<String>> {
        parse_reply(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::fixtures;
    use repoprobe_core::model::{ItemKind, Question};

    fn question() -> Question {
        let mut q = fixtures::question();
        q.checklist[0].evidence = vec![EvidencePath {
            path: "src/flows/llm_flow.py".into(),
            lines: Some([210, 264]),
            source: Some("make-checklist-v2".into()),
            unreadable: None,
        }];
        q
    }

    fn ok(v: &Verification<'_>, text: &str) -> Vec<ItemCheck> {
        parse_reply(v, text).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn err(v: &Verification<'_>, text: &str) -> Vec<String> {
        parse_reply(v, text).expect_err("an invalid reply")
    }

    #[test]
    fn the_prompt_numbers_the_knowledge_items_and_spells_out_the_schema() {
        let q = question();
        let v = Verification { question: &q };
        let items = v.items();
        assert!(items.len() >= 2, "the fixture has several knowledge items");
        assert!(items.iter().all(|i| i.kind == ItemKind::Knowledge));
        let p = prompt(&v);
        for (n, item) in items.iter().enumerate() {
            let head = format!("### Item {} (`{}`, weight {})", n + 1, item.id, item.weight);
            assert!(p.user.contains(&head), "{head:?} not in:\n{}", p.user);
            assert!(p.user.contains(item.key_point.trim()));
        }
        let clarity = q
            .checklist
            .iter()
            .find(|i| i.kind == ItemKind::Clarity)
            .unwrap();
        assert!(!p.user.contains(&format!("(`{}`", clarity.id)));
        assert!(p.user.contains(&q.question) && p.user.contains(&q.reference_answer));
        assert!(
            p.user
                .contains(&format!("## Checklist items ({})", items.len()))
        );
        assert!(
            p.user
                .contains("Suggested paths (not checked): `src/flows/llm_flow.py:210-264`")
        );
        assert!(p.user.contains(&reply_schema_json(items.len())));
        assert!(p.system.contains("read-only") && p.system.contains("never from memory"));
        assert!(!p.user.contains("{{") && !p.system.contains("{{"));
        let s: Value = serde_json::from_str(&reply_schema_json(3)).unwrap();
        assert_eq!(s["properties"]["items"]["maxItems"], 3);
        assert_eq!(
            s["properties"]["items"]["items"]["properties"]["item"]["maximum"],
            3
        );
    }

    #[test]
    fn a_good_reply_gives_each_item_in_order_with_normalised_evidence() {
        let q = question();
        let v = Verification { question: &q };
        let n = v.items().len();
        let mut entries = Vec::new();
        for i in (1..=n).rev() {
            entries.push(format!(
                r#"{{"item": {i}, "grounded": {}, "evidence": [{{"path": "./src/a.py", "lines": [3, 9]}}, "src//b.py:12-14", {{"path": "src/a.py", "lines": [3, 9]}}], "reason": "seen in a.py"}}"#,
                i != n
            ));
        }
        let text = format!(
            "Done.\n```json\n{{\"items\": [{}]}}\n```",
            entries.join(",")
        );
        let checks = ok(&v, &text);
        assert_eq!(checks.len(), n);
        assert_eq!(checks[0].number, 1);
        assert_eq!(checks[0].id, v.items()[0].id);
        assert!(checks[0].grounded && !checks[n - 1].grounded);
        assert_eq!(
            checks[0].evidence,
            vec![
                EvidencePath {
                    path: "src/a.py".into(),
                    lines: Some([3, 9]),
                    ..EvidencePath::default()
                },
                EvidencePath {
                    path: "src/b.py".into(),
                    lines: Some([12, 14]),
                    ..EvidencePath::default()
                }
            ]
        );
        assert_eq!(checks[0].reason, "seen in a.py");
        // Not grounded needs no evidence.
        let mut text = String::from(r#"{"items": ["#);
        for i in 1..=n {
            text.push_str(&format!(
                r#"{}{{"item": {i}, "grounded": false, "evidence": [], "reason": "not there"}}"#,
                if i > 1 { "," } else { "" }
            ));
        }
        text.push_str("]}");
        assert!(ok(&v, &text).iter().all(|c| !c.grounded));
    }

    #[test]
    fn each_violation_of_the_reply_is_its_own_message() {
        let q = question();
        let v = Verification { question: &q };
        assert_eq!(
            v.items().len(),
            2,
            "the cases below are written for two items"
        );
        let e = err(
            &v,
            r#"{"items": [{"item": 1, "grounded": true, "evidence": [], "reason": "r"}], "notes": 1}"#,
        );
        assert_eq!(
            e,
            [
                "unexpected key \"notes\": the reply has only `items`",
                "item 1 is grounded but gives no evidence: name the file(s) where its fact is read",
                "item 2 (`k2`) is missing: every item is answered once",
            ]
        );
        let e = err(
            &v,
            r#"{"items": [
                {"item": 1, "grounded": true, "evidence": [{"path": "/etc/passwd"}, {"path": "a/../../b"}], "reason": "r"},
                {"item": 1, "grounded": false, "evidence": [], "reason": "r"},
                {"item": 3, "grounded": "yes", "evidence": [], "reason": ""}
            ]}"#,
        );
        assert_eq!(
            e,
            [
                "item 1's evidence #1: the path \"/etc/passwd\" is absolute (a repository path is relative to its root)",
                "item 1's evidence #2: the path \"a/../../b\" has a `..` part (it could leave the repository)",
                "item 1 is given twice: give each item once",
                "entry 3 of `items`: `item` is 3: the items are numbered 1 to 2",
                "entry 3 of `items`: `grounded` must be true or false, not a string",
                "entry 3 of `items` has an empty `reason`",
                "item 2 (`k2`) is missing: every item is answered once",
            ]
        );
        let e = err(
            &v,
            r#"{"items": [
                {"item": 1, "grounded": true, "evidence": [{"path": "a.py", "lines": [9, 3]}, {"path": "b.py", "lines": [0, 1]}, {"path": "c.py", "lines": 4, "why": 1}], "reason": "r"},
                {"item": 2.0, "grounded": false, "reason": "r", "confidence": 0.5}
            ]}"#,
        );
        assert_eq!(
            e,
            [
                "item 1's evidence #1: `lines` must be [first, last], two line numbers from 1 with the first not after the last, not \"[9,3]\"",
                "item 1's evidence #2: `lines` must be [first, last], two line numbers from 1 with the first not after the last, not \"[0,1]\"",
                "item 1's evidence #3 has an unexpected key \"why\": an entry has `path` and `lines`",
                "item 1's evidence #3: `lines` must be [first, last], two line numbers from 1 with the first not after the last, not \"4\"",
                "entry 2 of `items` has an unexpected key \"confidence\": an entry has `item`, `grounded`, `evidence` and `reason`",
            ]
        );
        assert_eq!(
            err(&v, "I could not find it."),
            [
                "the reply is not valid JSON (expected value at line 1 column 1); it begins \"I could not find it.\""
            ]
        );
        assert_eq!(
            err(&v, r#"{"items": 3}"#),
            ["`items` must be an array with one entry per item"]
        );
        assert_eq!(
            err(&v, r#"{"item": []}"#).last().unwrap(),
            "`items` is missing"
        );
    }

    #[test]
    fn the_reask_names_the_violations_and_the_count() {
        let m = reask_message(3, &["item 2 is missing".into()]);
        assert!(m.starts_with("Your reply cannot be accepted."));
        assert!(m.contains("- item 2 is missing\n"));
        assert!(m.contains("each item 1 to 3"));
    }
}
