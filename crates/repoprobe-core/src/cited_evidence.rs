//! Which checklist item gets which cited path as its evidence (`repoprobe evidence`,
//! docs/live-runs.md#repoprobe-evidence), and the question record rewritten with it.
//!
//! The rule, deterministic and the same for every question:
//!
//! 1. A knowledge item gets every path its own key point or rubric criteria cite
//!    ([`crate::cited`]).
//! 2. A path the reference answer cites goes to each knowledge item whose key point or criteria
//!    name its file (the last part, with its extension: `llm_flow.py`) as a word — the item
//!    speaks of that file without writing its path. A file name the answer cites under two
//!    paths (`a/mod.rs`, `b/mod.rs`) names neither: which one the item means is not ours to
//!    guess. A directory is given only by rule 1.
//! 3. Only paths that exist at the question's commit count (the caller says which do, from the
//!    repository's tree); the others are reported, never written.
//! 4. One entry per path and item, with the lines of its first citation there (the item's own
//!    texts before the answer); a path the item's evidence already has is not added again, and
//!    the evidence it had stays as written.
//!
//! Paths of the reference answer that rule 2 gives to no item, and that no item's evidence
//! already has, are reported as the answer's only (`answer_only`), for a person to place:
//! nothing is assigned by guess.
//!
//! Pure: the tree is a predicate, the record is text in and text out.

use crate::cited::{Cited, cited};
use crate::model::{EvidencePath, ItemKind, Question};
use crate::sort::CollectTree;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The `source` of every entry added here: the checklist or the reference answer names the path.
pub const SOURCE: &str = "cited";

/// What one question's texts cite and who gets what.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    /// The items given new entries, in checklist order (none without new entries).
    pub items: Vec<ItemAdditions>,
    /// The distinct cited paths that exist at the commit, wherever cited, sorted.
    pub found: Vec<String>,
    /// The distinct cited paths that do not exist at the commit, sorted.
    pub missing: Vec<String>,
    /// Existing paths cited only by the reference answer and given to no item, sorted.
    pub answer_only: Vec<String>,
}

/// The new entries of one checklist item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemAdditions {
    /// The item's place in the checklist.
    pub index: usize,
    pub id: String,
    pub added: Vec<EvidencePath>,
}

/// Applies the module's rule to `q`; `exists` says whether a (normalised) path is a file or a
/// directory of the repository at the question's commit.
pub fn assign(q: &Question, exists: impl Fn(&str) -> bool) -> Assignment {
    let mut found = BTreeSet::new();
    let mut missing = BTreeSet::new();
    let mut keep = |c: &Cited| {
        if exists(&c.path) {
            found.insert(c.path.clone());
            true
        } else {
            missing.insert(c.path.clone());
            false
        }
    };
    let own: Vec<Vec<Cited>> = q
        .checklist
        .iter()
        .map(|item| match item.kind {
            ItemKind::Knowledge => texts_of(item).flat_map(cited).filter(&mut keep).collect(),
            ItemKind::Clarity => Vec::new(),
        })
        .collect();
    let answer: Vec<Cited> = cited(&q.reference_answer)
        .into_iter()
        .filter(&mut keep)
        .collect();
    // File names the answer cites under exactly one path.
    let mut by_name: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in &answer {
        if let Some(name) = file_name(&c.path) {
            by_name.entry(name).or_default().insert(&c.path);
        }
    }
    // Placed already: a path some item's evidence has is no answer-only path.
    let mut given: BTreeSet<String> = q
        .checklist
        .iter()
        .flat_map(|item| item.evidence.iter().map(|e| e.path.clone()))
        .collect_set();
    let mut items = Vec::new();
    for (index, item) in q.checklist.iter().enumerate() {
        if item.kind != ItemKind::Knowledge {
            continue;
        }
        let named: Vec<&Cited> = answer
            .iter()
            .filter(|c| {
                file_name(&c.path).is_some_and(|name| {
                    by_name.get(name).is_some_and(|paths| paths.len() == 1)
                        && texts_of(item).any(|t| names_word(t, name))
                })
            })
            .collect();
        let mut seen: BTreeSet<&str> = item.evidence.iter().map(|e| e.path.as_str()).collect_set();
        let mut added = Vec::new();
        for c in own[index].iter().chain(named) {
            given.insert(c.path.clone());
            if seen.insert(&c.path) {
                added.push(EvidencePath {
                    path: c.path.clone(),
                    lines: c.lines,
                    source: Some(SOURCE.to_string()),
                    unreadable: None,
                });
            }
        }
        if !added.is_empty() {
            items.push(ItemAdditions {
                index,
                id: item.id.clone(),
                added,
            });
        }
    }
    let answer_only = answer
        .iter()
        .map(|c| c.path.clone())
        .filter(|p| !given.contains(p))
        .collect_set();
    Assignment {
        items,
        found: found.into_iter().collect(),
        missing: missing.into_iter().collect(),
        answer_only: answer_only.into_iter().collect(),
    }
}

/// An item's key point and criteria.
fn texts_of(item: &crate::model::ChecklistItem) -> impl Iterator<Item = &str> {
    std::iter::once(item.key_point.as_str()).chain(item.rubric.iter().map(|t| t.criterion.as_str()))
}

/// The last part of a file's path when it has an extension (`a/b.rs` → `b.rs`).
fn file_name(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        .then_some(name)
}

/// Whether `text` has `name` as a word: not inside a longer name or path.
fn names_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        // A sentence's full stop after the name is not part of it.
        let after_ok = match after {
            Some('.') => !text[at + name.len() + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric()),
            Some(c) => !word(c),
            None => true,
        };
        !before.is_some_and(word) && after_ok
    })
}

/// Why a question's record could not be rewritten (it is no JSON object, or its checklist no
/// array of objects): not a record the loader kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the question's record cannot be rewritten: {0}")]
pub struct RewriteError(String);

/// The question's record as written (`raw`, every field and key order kept) with the assignment's
/// entries appended to its items' `evidence` (the field added at the item's end when it had
/// none), on one line.
pub fn rewrite(raw: &str, assigned: &Assignment) -> Result<String, RewriteError> {
    let bad = |e: serde_json::Error| RewriteError(e.to_string());
    if assigned.items.is_empty() {
        return Ok(one_line(raw));
    }
    let mut record: Fields = serde_json::from_str(raw).map_err(bad)?;
    let Some(slot) = record.0.iter_mut().rev().find(|(k, _)| k == "checklist") else {
        return Err(RewriteError("it has no `checklist`".into()));
    };
    let mut checklist: Vec<Fields> = serde_json::from_str(slot.1.get()).map_err(bad)?;
    for item in &assigned.items {
        let Some(fields) = checklist.get_mut(item.index) else {
            return Err(RewriteError(format!("it has no item {}", item.index + 1)));
        };
        let new = item
            .added
            .iter()
            .map(|e| serde_json::to_string(e).map_err(bad))
            .collect::<Result<Vec<_>, _>>()?;
        match fields.0.iter_mut().rev().find(|(k, _)| k == "evidence") {
            Some((_, value)) => {
                let mut entries: Vec<String> =
                    serde_json::from_str::<Option<Vec<Box<RawValue>>>>(value.get())
                        .map_err(bad)?
                        .unwrap_or_default()
                        .into_iter()
                        .map(|e| e.get().to_string())
                        .collect();
                entries.extend(new);
                *value = raw_value(format!("[{}]", entries.join(",")))?;
            }
            None => fields.0.push((
                "evidence".into(),
                raw_value(format!("[{}]", new.join(",")))?,
            )),
        }
    }
    let items = checklist
        .iter()
        .map(Fields::to_json)
        .collect::<Result<Vec<_>, _>>()?;
    slot.1 = raw_value(format!("[{}]", items.join(",")))?;
    Ok(one_line(&record.to_json()?))
}

fn raw_value(text: String) -> Result<Box<RawValue>, RewriteError> {
    RawValue::from_string(text).map_err(|e| RewriteError(e.to_string()))
}

/// JSON text on one line: a line break in JSON text can only be whitespace between tokens (a
/// string holds it escaped), so it becomes a space.
pub fn one_line(json: &str) -> String {
    json.replace(['\n', '\r'], " ")
}

/// An object's fields in the order written, each value as written.
struct Fields(Vec<(String, Box<RawValue>)>);

impl Fields {
    fn to_json(&self) -> Result<String, RewriteError> {
        let mut out = String::from("{");
        for (n, (k, v)) in self.0.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(k).map_err(|e| RewriteError(e.to_string()))?);
            out.push(':');
            out.push_str(v.get());
        }
        out.push('}');
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Fields, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChecklistItem, Repo, RubricTier};

    fn item(id: &str, kind: ItemKind, key_point: &str, criteria: &[&str]) -> ChecklistItem {
        ChecklistItem {
            id: id.into(),
            kind,
            key_point: key_point.into(),
            weight: 1,
            rubric: criteria
                .iter()
                .enumerate()
                .map(|(n, c)| RubricTier {
                    score: n as u32,
                    criterion: (*c).into(),
                })
                .collect(),
            evidence: Vec::new(),
        }
    }

    fn question(answer: &str, checklist: Vec<ChecklistItem>) -> Question {
        Question {
            id: "q1".into(),
            repo: Repo {
                name: "o/r".into(),
                url: String::new(),
                commit: "c".into(),
                language: String::new(),
                theme: String::new(),
            },
            category: "Business Logic".into(),
            question: "?".into(),
            reference_answer: answer.into(),
            external_context: false,
            curation: None,
            checklist,
        }
    }

    const TREE: [&str; 6] = [
        "src",
        "src/runner.py",
        "src/flows",
        "src/flows/llm_flow.py",
        "src/a/mod.rs",
        "src/b/mod.rs",
    ];

    fn exists(p: &str) -> bool {
        TREE.contains(&p)
    }

    fn added(assigned: &Assignment, id: &str) -> Vec<(String, Option<[u32; 2]>)> {
        assigned
            .items
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.added.iter().map(|e| (e.path.clone(), e.lines)).collect())
            .unwrap_or_default()
    }

    #[test]
    fn an_item_gets_what_its_own_texts_cite_that_exists() {
        let q = question(
            "",
            vec![
                item(
                    "k1",
                    ItemKind::Knowledge,
                    "Names src/runner.py:12-40 and src/gone.py",
                    &["mentions src/flows/", "src/runner.py:50 again"],
                ),
                item("clarity", ItemKind::Clarity, "see src/runner.py", &["x"]),
            ],
        );
        let p = assign(&q, exists);
        assert_eq!(
            added(&p, "k1"),
            [
                ("src/runner.py".to_string(), Some([12, 40])),
                ("src/flows".to_string(), None)
            ]
        );
        assert_eq!(p.items.len(), 1, "clarity gets nothing");
        assert!(
            p.items[0]
                .added
                .iter()
                .all(|e| e.source.as_deref() == Some(SOURCE))
        );
        assert_eq!(p.found, ["src/flows", "src/runner.py"]);
        assert_eq!(p.missing, ["src/gone.py"]);
        assert!(p.answer_only.is_empty());
    }

    #[test]
    fn answer_paths_go_to_items_naming_their_file_and_the_rest_are_reported() {
        let q = question(
            "The loop is in src/flows/llm_flow.py:210-264; see src/runner.py, src/a/mod.rs and \
             src/b/mod.rs, and src/never.rs.",
            vec![
                item(
                    "k1",
                    ItemKind::Knowledge,
                    "Says llm_flow.py retries.",
                    &["ok"],
                ),
                item(
                    "k2",
                    ItemKind::Knowledge,
                    "Names mod.rs and my_runner.py",
                    &["x"],
                ),
                item("k3", ItemKind::Knowledge, "Nothing cited", &["y"]),
            ],
        );
        let p = assign(&q, exists);
        assert_eq!(
            added(&p, "k1"),
            [("src/flows/llm_flow.py".to_string(), Some([210, 264]))]
        );
        assert!(
            added(&p, "k2").is_empty(),
            "mod.rs is ambiguous, my_runner.py another word"
        );
        assert!(added(&p, "k3").is_empty());
        assert_eq!(
            p.answer_only,
            ["src/a/mod.rs", "src/b/mod.rs", "src/runner.py"]
        );
        assert_eq!(p.missing, ["src/never.rs"]);
    }

    #[test]
    fn evidence_an_item_has_is_kept_and_not_repeated() {
        let mut k1 = item(
            "k1",
            ItemKind::Knowledge,
            "src/runner.py and src/flows/llm_flow.py",
            &["src/runner.py:3"],
        );
        k1.evidence = vec![EvidencePath::new("src/runner.py")];
        let p = assign(&question("", vec![k1.clone()]), exists);
        assert_eq!(
            added(&p, "k1"),
            [("src/flows/llm_flow.py".to_string(), None)]
        );
        k1.evidence.push(EvidencePath::new("src/flows/llm_flow.py"));
        assert!(
            assign(&question("", vec![k1.clone()]), exists)
                .items
                .is_empty()
        );
        // A path of the answer an item's evidence has is placed, not the answer's only.
        let p = assign(
            &question("See src/runner.py and src/flows/", vec![k1]),
            exists,
        );
        assert_eq!(p.answer_only, ["src/flows"]);
    }

    #[test]
    fn names_are_words() {
        assert!(names_word("see llm_flow.py.", "llm_flow.py"));
        assert!(names_word("(llm_flow.py)", "llm_flow.py"));
        assert!(!names_word("my_llm_flow.py", "llm_flow.py"));
        assert!(!names_word("llm_flow.pyc", "llm_flow.py"));
        assert!(!names_word("x/llm_flow.py", "llm_flow.py"));
        assert!(!names_word("llm_flow.py.bak", "llm_flow.py"));
        assert_eq!(file_name("src/flows"), None);
        assert_eq!(file_name("a/.gitignore"), None);
    }

    #[test]
    fn the_record_keeps_every_field_and_order_and_gains_its_entries() {
        let raw = "{\"z\": 1, \"id\": \"q1\",\n \"checklist\": [{\"id\": \"k1\", \"x\": [1, 2]},\
                   {\"id\": \"k2\", \"evidence\": [\"a.rs\", 7]}, {\"id\": \"k3\", \"evidence\": null}],\
                   \"unknown\": {\"b\": 2, \"a\": 1}}";
        let entry = |p: &str, lines| EvidencePath {
            path: p.into(),
            lines,
            source: Some(SOURCE.into()),
            unreadable: None,
        };
        let assigned = Assignment {
            items: vec![
                ItemAdditions {
                    index: 0,
                    id: "k1".into(),
                    added: vec![entry("src/a.rs", Some([3, 4]))],
                },
                ItemAdditions {
                    index: 1,
                    id: "k2".into(),
                    added: vec![entry("b", None)],
                },
                ItemAdditions {
                    index: 2,
                    id: "k3".into(),
                    added: vec![entry("c", None)],
                },
            ],
            ..Assignment::default()
        };
        let out = rewrite(raw, &assigned).unwrap();
        assert_eq!(
            out,
            "{\"z\":1,\"id\":\"q1\",\"checklist\":[{\"id\":\"k1\",\"x\":[1, 2],\
             \"evidence\":[{\"path\":\"src/a.rs\",\"lines\":[3,4],\"source\":\"cited\"}]},\
             {\"id\":\"k2\",\"evidence\":[\"a.rs\",7,{\"path\":\"b\",\"source\":\"cited\"}]},\
             {\"id\":\"k3\",\"evidence\":[{\"path\":\"c\",\"source\":\"cited\"}]}],\
             \"unknown\":{\"b\": 2, \"a\": 1}}"
        );
        assert_eq!(rewrite(raw, &Assignment::default()).unwrap(), one_line(raw));
        assert!(!one_line(raw).contains('\n'));
        assert!(rewrite("[1]", &assigned).is_err());
        assert!(rewrite("{\"checklist\": [1]}", &assigned).is_err());
        assert!(rewrite("{\"checklist\": []}", &assigned).is_err());
    }
}
