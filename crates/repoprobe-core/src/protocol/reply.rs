//! What every reply check shares: finding the reply's JSON object (whole, fenced or amid
//! text) with its keys in the order written and duplicates kept, integers that JSON writes as
//! floats, and the check of a flat `{"rationale": ..., <field>: ...}` object.

use crate::text::quote;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// A JSON number's integer value, if it has one (`2` and `2.0` do, `2.5` does not).
pub fn integer(n: &serde_json::Number) -> Option<i64> {
    if let Some(v) = n.as_i64() {
        return Some(v);
    }
    if n.is_u64() {
        return Some(i64::MAX); // above every allowed score
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1e15).then_some(f as i64)
}

/// Finds the reply's JSON object: the whole text, else the first ```` ``` ```` fenced block that
/// holds one, else the span from the first `{` to the last `}`; `what` names the object
/// expected, for the message.
pub fn extract_object_of(text: &str, what: &str) -> Result<Object, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the reply is empty: expected one JSON object".to_string());
    }
    let whole = serde_json::from_str::<Entries>(trimmed);
    let mut candidates: Vec<&str> = fenced_blocks(trimmed);
    if let (Some(a), Some(b)) = (trimmed.find('{'), trimmed.rfind('}'))
        && a < b
    {
        candidates.push(&trimmed[a..=b]);
    }
    let parsed = match whole {
        Ok(v) => Ok(v),
        Err(e) => candidates
            .into_iter()
            .find_map(|c| serde_json::from_str::<Entries>(c).ok())
            .ok_or(e),
    };
    match parsed {
        Ok(Entries::Object(fields)) => Ok(Object(fields)),
        Ok(other) => Err(format!("the reply is {}, not {what}", other.kind())),
        Err(e) => Err(format!(
            "the reply is not valid JSON ({e}); it begins {}",
            quote(trimmed)
        )),
    }
}

/// Contents of ```` ``` ```` fenced blocks (an info string such as `json` is skipped).
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => break,
        }
    }
    out
}

/// The top-level object of a reply, keys in the order written, duplicates kept.
pub struct Object(pub Vec<(String, Entries)>);

/// A JSON value whose objects keep their keys in the order written and keep duplicate keys, so
/// that "rationale before score" and "no item twice" can be checked (a `serde_json::Map` loses
/// both).
#[derive(Debug)]
pub enum Entries {
    Object(Vec<(String, Entries)>),
    Leaf(Value),
}

impl Entries {
    pub fn as_object(&self) -> Option<&Vec<(String, Entries)>> {
        match self {
            Entries::Object(f) => Some(f),
            Entries::Leaf(_) => None,
        }
    }

    /// The value as a plain `serde_json::Value` (a key given twice keeps its last value).
    pub fn into_value(self) -> Value {
        match self {
            Entries::Leaf(v) => v,
            Entries::Object(fields) => Value::Object(
                fields
                    .into_iter()
                    .map(|(k, v)| (k, v.into_value()))
                    .collect(),
            ),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Entries::Object(_) => "an object",
            Entries::Leaf(Value::Null) => "null",
            Entries::Leaf(Value::Bool(_)) => "a boolean",
            Entries::Leaf(Value::Number(_)) => "a number",
            Entries::Leaf(Value::String(_)) => "a string",
            Entries::Leaf(Value::Array(_)) => "an array",
            Entries::Leaf(Value::Object(_)) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut fields = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    fields.push((k, map.next_value::<Entries>()?));
                }
                Ok(Entries::Object(fields))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Entries, A::Error> {
                Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Entries::Leaf)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Entries, E> {
                Ok(Entries::Leaf(
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::String(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Entries, E> {
                Ok(Entries::Leaf(Value::Null))
            }
        }
        d.deserialize_any(V)
    }
}

/// Checks a flat reply object `{"rationale": "...", <field>: <value>, ...}`: no key other than
/// `rationale` and `fields`, none twice, none missing, the rationale a non-empty string written
/// before every other field. Returns the rationale and each field's value (`None` when missing
/// or not a plain value), pushing one message per violation. Shared by the one-object replies
/// (scalar judge, failure classifier).
pub fn flat_reply<'a>(
    top: &'a Object,
    fields: &[&str],
    errs: &mut Vec<String>,
) -> (Option<String>, Vec<Option<&'a Value>>) {
    let allowed = || {
        std::iter::once("`rationale`".to_string())
            .chain(fields.iter().map(|f| format!("`{f}`")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, (key, _)) in top.0.iter().enumerate() {
        if key != "rationale" && !fields.contains(&key.as_str()) {
            errs.push(format!(
                "unexpected key {}: the reply has exactly the keys {}",
                quote(key),
                allowed()
            ));
        } else if top.0[..i].iter().any(|(k, _)| k == key) {
            errs.push(format!("`{key}` is given twice"));
        }
    }
    let find = |name: &str| top.0.iter().position(|(k, _)| k == name);
    let rationale_at = find("rationale");
    let rationale = match rationale_at.map(|i| &top.0[i].1) {
        None => {
            errs.push("`rationale` is missing".to_string());
            None
        }
        Some(Entries::Leaf(Value::String(s))) if s.trim().is_empty() => {
            errs.push("`rationale` is empty".to_string());
            None
        }
        Some(Entries::Leaf(Value::String(s))) => Some(s.clone()),
        Some(other) => {
            errs.push(format!(
                "`rationale` must be a string, not {}",
                other.kind()
            ));
            None
        }
    };
    let mut values = Vec::with_capacity(fields.len());
    for &name in fields {
        let Some(at) = find(name) else {
            errs.push(format!("`{name}` is missing"));
            values.push(None);
            continue;
        };
        if rationale_at.is_some_and(|r| at < r) {
            errs.push(format!(
                "`{name}` comes before `rationale`: write the rationale first"
            ));
        }
        match &top.0[at].1 {
            Entries::Leaf(v) => values.push(Some(v)),
            Entries::Object(_) => {
                errs.push(format!("`{name}` must be a plain value, not an object"));
                values.push(None);
            }
        }
    }
    (rationale, values)
}
