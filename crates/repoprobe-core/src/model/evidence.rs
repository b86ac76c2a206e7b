//! A checklist item's evidence (docs/format.md#question): the repository paths where the fact
//! it checks can be read. Each entry is a path or `{"path", "lines"?, "source"?}`.
//!
//! Entries are read one by one and never cost their question: an entry of another shape is kept
//! here with why ([`EvidencePath::unreadable`]), for the assembler to report as a warning of its
//! file and drop (`crate::validate::evidence`), so a typo in an optional list never loses a
//! question and is never silent either.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// One evidence entry: a path inside the repository at the question's pinned commit. (Its
/// `Deserialize` is for a reader by position, the site's messages; JSON is read by
/// [`read_entries`].)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidencePath {
    /// Normalised by the loader ([`super::repo_path::normalise`]).
    pub path: String,
    /// The lines the fact is on, `[start, end]`, 1-based and inclusive.
    #[serde(skip_serializing_if = "crate::skip::none")]
    pub lines: Option<[u32; 2]>,
    /// How the entry was found, free text (`"cited"`: the reference answer names the file).
    #[serde(skip_serializing_if = "crate::skip::none")]
    pub source: Option<String>,
    /// Why the entry could not be read (it is neither a string nor such an object). Set only
    /// between parsing and assembly, which reports the entry and drops it: a loaded question
    /// never holds one.
    #[serde(skip)]
    pub unreadable: Option<String>,
}

impl EvidencePath {
    /// An entry of just a path.
    pub fn new(path: impl Into<String>) -> EvidencePath {
        EvidencePath {
            path: path.into(),
            ..EvidencePath::default()
        }
    }
}

/// The two shapes an entry may be written in: what the schema says and what is read.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
#[serde(untagged)]
pub enum EvidenceEntry {
    /// A path relative to the repository's root.
    Path(String),
    /// A path with the lines the fact is on (`[start, end]`, 1-based, inclusive) and how it was
    /// found.
    Located {
        path: String,
        #[serde(default)]
        lines: Option<[u32; 2]>,
        #[serde(default)]
        source: Option<String>,
    },
}

/// The list of entries, each read on its own (see the module's comment); `null` is no list.
pub fn read_entries<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<EvidencePath>, D::Error> {
    if !d.is_human_readable() {
        // By position (the site's messages): entries as written, already read once.
        return Vec::deserialize(d);
    }
    let entries: Option<Vec<Value>> = Option::deserialize(d)?;
    Ok(entries.unwrap_or_default().into_iter().map(entry).collect())
}

fn entry(v: Value) -> EvidencePath {
    match EvidenceEntry::deserialize(&v) {
        Ok(EvidenceEntry::Path(path)) => EvidencePath::new(path),
        Ok(EvidenceEntry::Located {
            path,
            lines,
            source,
        }) => EvidencePath {
            path,
            lines,
            source,
            unreadable: None,
        },
        Err(_) => EvidencePath {
            unreadable: Some(format!(
                "is {}: an entry is a path or {{\"path\": \"...\", \"lines\": [start, end]}}",
                shape(&v)
            )),
            ..EvidencePath::default()
        },
    }
}

/// What a value is, for a message.
fn shape(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(o) if !o.get("path").is_some_and(Value::is_string) => {
            "an object without a string `path`"
        }
        Value::Object(_) => {
            "an object whose `lines` is not two whole numbers or whose `source` is not a string"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Vec<EvidencePath> {
        read_entries(v).unwrap()
    }

    #[test]
    fn both_shapes_are_read() {
        let e = read(json!(["src/a.rs", {"path": "src/b.rs", "lines": [3, 9], "source": "cited"}]));
        assert_eq!(e[0], EvidencePath::new("src/a.rs"));
        assert_eq!(e[1].lines, Some([3, 9]));
        assert_eq!(e[1].source.as_deref(), Some("cited"));
        assert!(e.iter().all(|x| x.unreadable.is_none()));
    }

    #[test]
    fn an_entry_of_another_shape_is_kept_with_why_and_costs_nothing_else() {
        let e = read(json!([7, {"lines": [1, 2]}, {"path": "a", "lines": [1]}, "ok.rs"]));
        assert_eq!(e.len(), 4);
        assert!(
            e[0].unreadable
                .as_deref()
                .unwrap()
                .starts_with("is a number")
        );
        assert!(
            e[1].unreadable
                .as_deref()
                .unwrap()
                .contains("without a string `path`")
        );
        assert!(e[2].unreadable.as_deref().unwrap().contains("`lines`"));
        assert_eq!(e[3], EvidencePath::new("ok.rs"));
        assert!(read(Value::Null).is_empty());
    }

    #[test]
    fn an_entry_writes_back_without_its_empty_parts() {
        let v = serde_json::to_value(vec![EvidencePath::new("a.rs")]).unwrap();
        assert_eq!(v, json!([{"path": "a.rs"}]));
    }
}
