//! The `agent` block of an answer record (docs/format.md#answer), typed once: `repoprobe answer`
//! builds an [`AgentBlock`] and the site and the evidence metrics read one, so what the runner
//! writes is what the viewer shows.
//!
//! The record keeps the block as it was given (`Answer::agent` is free-form JSON: other runners
//! write other fields, and a record is never refused for them). [`AgentBlock::of`] reads it
//! leniently: a known field of another type reads as absent, never as a lost record, and every
//! field it does not know stays in [`AgentBlock::other`].

use super::Answer;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// What ran the model and what it did to the repository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentBlock {
    /// `builtin`, `claude-code`, `codex`, `gemini`, `command`, or another runner's name.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub name: Option<String>,
    /// The agent's version (`repoprobe 0.1.0`, a CLI's `--version`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub version: Option<String>,
    /// The model as its API names it, when the record's `model` is another name (a table's:
    /// `repoprobe answer --name`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub model: Option<String>,
    /// The answer prompt's version (`answer-v1`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub prompt_version: Option<String>,
    /// The model API's wire format (`openai`, `anthropic`) for the built-in agent.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub provider: Option<String>,
    /// Model responses the agent took (one per reply of the model, whatever the agent), as
    /// counted from its trajectory.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub turns: Option<u64>,
    /// The repository (`owner/name`) and the commit the agent saw.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub repo: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub commit: Option<String>,
    /// True when the question pinned no commit and the clone's HEAD was used.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub from_head: Option<bool>,
    /// What confined the agent (a description, e.g. `bwrap …; network: …`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub sandbox: Option<String>,
    /// Whether the agent left the worktree different from the pinned commit: the evidence of
    /// edit bias.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub worktree_changed: Option<bool>,
    /// What it changed.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub changes: Option<Changes>,
    /// Tool calls by kind (`read`, `search`, `list`, `shell`, `edit`, `other`), derived from
    /// the trajectory (`crate::trajectory::facts`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub tool_calls: Option<std::collections::BTreeMap<String, u64>>,
    /// The repository paths (normalised, [`super::repo_path`]) whose contents the agent saw:
    /// a read tool's file, or a file a shell command printed. Absent: not known; empty: it
    /// read nothing. Listing a directory is not reading.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub files_read: Option<Vec<String>>,
    /// Paths that came back in the agent's search results, kept apart from what it read.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub files_searched: Option<Vec<String>>,
    /// The transcript's file, relative to the answers file's directory.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub transcript: Option<String>,
    /// Where `usage.cost_usd` came from: reported by the agent, estimated from list prices, or
    /// unknown.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub cost_source: Option<String>,
    /// Why the built-in agent stopped, whether its last reply was cut at the token limit, and
    /// the HTTP retries its calls took.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub stop_reason: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub cut_at_token_limit: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub http_retries: Option<u64>,
    /// An agent CLI's exit code (absent when it was killed), whether it ran out of time, its
    /// cached-prompt tokens and what else its event stream reported.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub exit_code: Option<i64>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub timed_out: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub cache_read_tokens: Option<u64>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub cache_creation_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "crate::skip::none")]
    pub meta: Option<Value>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl AgentBlock {
    /// The block of an answer; `None` when the record has none (or one that is not an object).
    pub fn of(a: &Answer) -> Option<&AgentBlock> {
        a.agent.as_deref()
    }

    /// The block as the record's JSON value. Keys come out in the order every JSON object of
    /// the project has (serde_json's sorted map), so a record's bytes do not depend on the
    /// field order above.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The paths of the files the agent changed, in the order given.
    pub fn changed_paths(&self) -> Vec<String> {
        self.changes
            .as_ref()
            .map(|c| c.files.iter().map(|f| f.path.clone()).collect())
            .unwrap_or_default()
    }
}

/// What the agent left different from the pinned commit, as `repoprobe answer` found it with
/// git after the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Files that differ from the pinned commit (modified, added, deleted, untracked or
    /// ignored) in git's order, whether the agent committed them or not.
    pub files: Vec<Change>,
    /// The new HEAD when the agent moved it (a commit, a checkout).
    #[serde(skip_serializing_if = "crate::skip::none")]
    pub head_moved_to: Option<String>,
    /// Git configuration planted in the clone cache, found after the run. None of it was run;
    /// the next run refuses the cache.
    #[serde(skip_serializing_if = "crate::skip::empty")]
    pub cache_tampered: Vec<String>,
}

impl Changes {
    /// True when the worktree is exactly the pinned commit.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.head_moved_to.is_none()
    }
}

/// One changed path, relative to the worktree's root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    /// Absent in records of older runners, which gave paths only.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub kind: Option<ChangeKind>,
    /// For a rename or copy: the path it came from.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "crate::skip::none"
    )]
    pub from: Option<String>,
}

/// What happened to a path (from `git status --porcelain` codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Modified,
    Added,
    Deleted,
    Renamed,
    Copied,
    TypeChanged,
    Unmerged,
    /// A new file git does not know about.
    Untracked,
    /// A new file (or directory) matching an ignore pattern: build output, caches.
    Ignored,
}

/// `changes` as written (an object) or as older runners and hand-made files give it: an array
/// of paths, or of objects with a `path`. Entries that are neither are skipped.
impl<'de> Deserialize<'de> for Changes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Written {
            #[serde(default)]
            files: Vec<Value>,
            #[serde(default, deserialize_with = "lenient")]
            head_moved_to: Option<String>,
            #[serde(default, deserialize_with = "lenient")]
            cache_tampered: Option<Vec<String>>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Written(Written),
            List(Vec<Value>),
        }
        let entry = |v: Value| match v {
            Value::String(path) => Some(Change {
                path,
                kind: None,
                from: None,
            }),
            v @ Value::Object(_) => serde_json::from_value(v).ok(),
            _ => None,
        };
        Ok(match Given::deserialize(d)? {
            Given::Written(w) => Changes {
                files: w.files.into_iter().filter_map(entry).collect(),
                head_moved_to: w.head_moved_to,
                cache_tampered: w.cache_tampered.unwrap_or_default(),
            },
            Given::List(list) => Changes {
                files: list.into_iter().filter_map(entry).collect(),
                ..Changes::default()
            },
        })
    }
}

/// An answer's `agent`, read once: an object as a block (each field leniently, below); `null`,
/// or a value that is no object, as none. The block is evidence shown beside a score, never a
/// reason to refuse the record.
pub(crate) fn block<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<AgentBlock>>, D::Error> {
    if !d.is_human_readable() {
        // By position (the site's messages): the block as its JSON text (`json_text`).
        return crate::json_text::deserialize(d);
    }
    Ok(match Option::<Value>::deserialize(d)? {
        Some(v @ Value::Object(_)) => serde_json::from_value(v).ok(),
        _ => None,
    })
}

/// A field of the wrong type reads as absent: the block is evidence shown beside a score,
/// never a reason to refuse the record.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(agent: Value) -> Answer {
        serde_json::from_value(json!({"question_id": "q", "model": "m", "agent": agent})).unwrap()
    }

    #[test]
    fn what_answer_writes_reads_back_with_the_files_it_changed() {
        let block = AgentBlock {
            name: Some("codex".into()),
            turns: Some(4),
            worktree_changed: Some(true),
            changes: Some(Changes {
                files: vec![
                    Change {
                        path: "src/a.rs".into(),
                        kind: Some(ChangeKind::Modified),
                        from: None,
                    },
                    Change {
                        path: "b.rs".into(),
                        kind: Some(ChangeKind::Renamed),
                        from: Some("old.rs".into()),
                    },
                ],
                head_moved_to: Some("abc".into()),
                cache_tampered: vec![],
            }),
            ..AgentBlock::default()
        };
        let v = block.to_value();
        assert_eq!(
            v["changes"],
            json!({"files": [{"path": "src/a.rs", "kind": "modified"},
                {"path": "b.rs", "kind": "renamed", "from": "old.rs"}], "head_moved_to": "abc"})
        );
        let back = AgentBlock::of(&answer(v)).unwrap().clone();
        assert_eq!(back, block);
        assert_eq!(back.changed_paths(), ["src/a.rs", "b.rs"]);
    }

    /// Every known field: of its type it reads and writes back as given; of another, it reads
    /// as absent and is not kept among the unknown fields either.
    #[test]
    fn each_field_reads_of_its_type_and_is_absent_of_another() {
        let fields = [
            ("name", json!("codex"), json!(1)),
            ("version", json!("1.0"), json!(["1"])),
            ("model", json!("m"), json!(null)),
            ("prompt_version", json!("answer-v1"), json!(true)),
            ("provider", json!("openai"), json!({})),
            ("turns", json!(4), json!(4.5)),
            ("repo", json!("o/r"), json!(2)),
            ("commit", json!("abc"), json!([])),
            ("from_head", json!(true), json!("true")),
            ("sandbox", json!("bwrap"), json!(0)),
            ("worktree_changed", json!(false), json!(0)),
            (
                "changes",
                json!({"files": [{"path": "a.rs", "kind": "added"}]}),
                json!(7),
            ),
            (
                "tool_calls",
                json!({"read": 3, "shell": 0}),
                json!({"read": -1}),
            ),
            ("files_read", json!(["a.rs", "b.rs"]), json!(["a.rs", 2])),
            ("files_searched", json!([]), json!("a.rs")),
            ("transcript", json!("t.jsonl"), json!(1)),
            ("cost_source", json!("tokens"), json!(1)),
            ("stop_reason", json!("end_turn"), json!(1)),
            ("cut_at_token_limit", json!(true), json!(1)),
            ("http_retries", json!(2), json!(-2)),
            ("exit_code", json!(-9), json!(1.5)),
            ("timed_out", json!(false), json!("no")),
            ("cache_read_tokens", json!(10), json!("10")),
            ("cache_creation_tokens", json!(0), json!(u64::MAX as f64)),
            ("meta", json!({"any": [1, null]}), json!(null)),
        ];
        for (key, right, wrong) in fields {
            let read = |v: &Value| AgentBlock::of(&answer(json!({ key: v }))).unwrap().clone();
            assert_eq!(read(&right).to_value(), json!({ key: right }), "{key}");
            let absent = read(&wrong);
            assert_eq!(absent, AgentBlock::default(), "{key}: {wrong}");
        }
        let all: Map<String, Value> = [("gpu", json!("a100")), ("turns", json!(2))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let b = AgentBlock::of(&answer(Value::Object(all))).unwrap().clone();
        assert_eq!((b.turns, b.other.len()), (Some(2), 1));
    }

    #[test]
    fn older_lists_of_paths_or_objects_still_read() {
        let a = answer(
            json!({"changes": ["x.rs", {"path": "y.rs", "status": "M"}, 3, {"no": "path"}]}),
        );
        let b = AgentBlock::of(&a).unwrap();
        assert_eq!(b.changed_paths(), ["x.rs", "y.rs"]);
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent_and_unknown_fields_stay() {
        let a = answer(json!({"turns": "three", "worktree_changed": 1,
            "name": "mine", "gpu": "a100", "changes": {"files": [{"path": "a", "kind": "exploded"}]}}));
        let b = AgentBlock::of(&a).unwrap().clone();
        assert_eq!(b.turns, None);
        assert_eq!(b.worktree_changed, None);
        assert_eq!(b.name.as_deref(), Some("mine"));
        assert_eq!(b.other["gpu"], json!("a100"));
        assert_eq!(b.changes.unwrap().files[0].kind, None);
        assert_eq!(AgentBlock::of(&answer(json!("a string"))), None);
    }
}
