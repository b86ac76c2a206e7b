//! Why a record does not fit its type, as an [`IssueKind`]. serde's derived code says which of
//! its errors it meets (a missing field, a wrong type, a duplicate field, …) by calling one of
//! [`de::Error`]'s methods, and serde_json folds every one into a message. So a record that failed
//! to parse (the rare path) is read again into a [`Tree`] that keeps every key, duplicates
//! included, and deserialized from it with [`Kinded`], an error type that keeps which method was
//! called. Its messages are serde_json's own words for the same errors.
//!
//! Only the tests' now: it is the oracle of `path_at`, which reads the same paths from the
//! text and serde_json's error position without a second copy of every record type's
//! deserializer (issue 56); [`where_and_why`] is the loader's former reading.

use crate::issue::IssueKind;
use serde::de::value::{MapAccessDeserializer, MapDeserializer, SeqDeserializer};
use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, Visitor};
use std::fmt;

/// A deserialization error with its kind.
#[derive(Debug)]
pub(super) struct Kinded {
    pub(super) kind: IssueKind,
    pub(super) message: String,
}

impl Kinded {
    fn new(kind: IssueKind, message: String) -> Kinded {
        Kinded { kind, message }
    }
}

impl fmt::Display for Kinded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Kinded {}

impl de::Error for Kinded {
    fn custom<M: fmt::Display>(msg: M) -> Kinded {
        Kinded::new(IssueKind::ValueNotAllowed, msg.to_string())
    }

    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Kinded {
        let message = format!("invalid type: {}, expected {exp}", JsonUnexpected(unexp));
        Kinded::new(IssueKind::WrongType, message)
    }

    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Kinded {
        let message = format!("invalid value: {}, expected {exp}", JsonUnexpected(unexp));
        Kinded::new(IssueKind::ValueNotAllowed, message)
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Kinded {
        let message = format!("invalid length {len}, expected {exp}");
        Kinded::new(IssueKind::ValueNotAllowed, message)
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Kinded {
        let message = unknown("variant", variant, expected, "variants");
        Kinded::new(IssueKind::ValueNotAllowed, message)
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Kinded {
        let message = unknown("field", field, expected, "fields");
        Kinded::new(IssueKind::ValueNotAllowed, message)
    }

    fn missing_field(field: &'static str) -> Kinded {
        Kinded::new(IssueKind::MissingField, format!("missing field `{field}`"))
    }

    fn duplicate_field(field: &'static str) -> Kinded {
        Kinded::new(
            IssueKind::DuplicateKey,
            format!("duplicate field `{field}`"),
        )
    }
}

/// An unknown variant or field, as serde words it: `` unknown field `x`, expected `a` or `b` ``.
fn unknown(what: &str, name: &str, expected: &[&str], plural: &str) -> String {
    if expected.is_empty() {
        format!("unknown {what} `{name}`, there are no {plural}")
    } else {
        format!("unknown {what} `{name}`, expected {}", one_of(expected))
    }
}

/// serde's list of names, as serde words it: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
fn one_of(names: &[&str]) -> String {
    match names {
        [a] => format!("`{a}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        _ => {
            let all: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("one of {}", all.join(", "))
        }
    }
}

/// An unexpected value as serde_json words it: `null` for unit, floats as JSON writes them.
struct JsonUnexpected<'a>(de::Unexpected<'a>);

impl fmt::Display for JsonUnexpected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            de::Unexpected::Unit => f.write_str("null"),
            de::Unexpected::Float(v) => match serde_json::Number::from_f64(v) {
                Some(n) => write!(f, "floating point `{n}`"),
                None => write!(f, "floating point `{v}`"),
            },
            other => fmt::Display::fmt(&other, f),
        }
    }
}

/// A JSON value whose objects keep every key in order, duplicates included (serde_json's
/// `Value` keeps the last, which would hide a duplicate field).
#[derive(Debug)]
pub(super) enum Tree {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_none<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        Tree::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
        Ok(Tree::Number(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Tree, E> {
        serde_json::Number::from_f64(v)
            .map(Tree::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Tree, E> {
        Ok(Tree::String(v))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Tree::Array(out))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = map.next_entry()? {
            out.push(entry);
        }
        Ok(Tree::Object(out))
    }
}

impl<'de> IntoDeserializer<'de, Kinded> for Tree {
    type Deserializer = Tree;
    fn into_deserializer(self) -> Tree {
        self
    }
}

impl<'de> Deserializer<'de> for Tree {
    type Error = Kinded;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Kinded> {
        match self {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(b) => visitor.visit_bool(b),
            Tree::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Tree::String(s) => visitor.visit_string(s),
            Tree::Array(items) => {
                let mut seq = SeqDeserializer::new(items.into_iter());
                let v = visitor.visit_seq(&mut seq)?;
                seq.end()?;
                Ok(v)
            }
            Tree::Object(entries) => {
                let mut map = MapDeserializer::new(entries.into_iter());
                let v = visitor.visit_map(&mut map)?;
                map.end()?;
                Ok(v)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Kinded> {
        match self {
            Tree::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Kinded> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Kinded> {
        match self {
            Tree::String(s) => visitor.visit_enum(s.into_deserializer()),
            Tree::Object(entries) => visitor.visit_enum(MapAccessDeserializer::new(
                MapDeserializer::new(entries.into_iter()),
            )),
            other => other.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// Why `text` (valid JSON) is no `T`, with where inside it (a serde path) and the kind; `None`
/// when it is one (a difference between this reading and serde_json's, which the caller words
/// from serde_json's error).
pub(super) fn why_not<T: de::DeserializeOwned>(text: &str) -> Option<(String, Kinded)> {
    why_not_in::<T>(tree(text).ok()?)
}

/// [`why_not`] of a text already read as a tree.
pub(super) fn why_not_in<T: de::DeserializeOwned>(tree: Tree) -> Option<(String, Kinded)> {
    match serde_path_to_error::deserialize::<_, T>(tree) {
        Ok(_) => None,
        Err(e) => Some((e.path().to_string(), e.into_inner())),
    }
}

/// Where a text's JSON breaks: the serde path as far as it reads (empty when the value is whole
/// and what follows it is the fault), and serde_json's error.
pub(super) struct Broken {
    pub(super) path: String,
    pub(super) error: serde_json::Error,
}

/// `text` read as a tree, or where and why its JSON breaks; the whole text must be one value.
pub(super) fn tree(text: &str) -> Result<Tree, Broken> {
    let mut de = serde_json::Deserializer::from_str(text);
    let tree = serde_path_to_error::deserialize::<_, Tree>(&mut de).map_err(|e| Broken {
        path: e.path().to_string(),
        error: e.into_inner(),
    })?;
    de.end().map_err(|error| Broken {
        path: String::new(),
        error,
    })?;
    Ok(tree)
}

/// Where and why `text` is no `T` (path, kind, message), as the loader said it before
/// `path_at`: the text read again as a [`Tree`] and `T` read from that tree with
/// `serde_path_to_error`. `None` when `text` is a `T`.
pub(super) fn where_and_why<T: de::DeserializeOwned>(
    text: &str,
) -> Option<(String, IssueKind, String)> {
    use super::visitors::{json_error_kind, not_a_json_number, strip_position};
    let e = serde_json::from_str::<T>(text).err()?;
    let syntax = |path: String, e: &serde_json::Error| {
        let message = format!(
            "invalid JSON: {}{}",
            strip_position(e),
            not_a_json_number(text.as_bytes(), e)
        );
        Some((path, json_error_kind(e, text.as_bytes()), message))
    };
    let tree = match tree(text) {
        Ok(tree) => tree,
        Err(b) if b.error.is_syntax() || b.error.is_eof() => return syntax(b.path, &b.error),
        Err(_) => return syntax(String::new(), &e),
    };
    if e.is_syntax() || e.is_eof() {
        return syntax(String::new(), &e);
    }
    let (path, kind) = why_not_in::<T>(tree)
        .map_or((String::new(), IssueKind::ValueNotAllowed), |(path, k)| {
            (path, k.kind)
        });
    Some((path, kind, strip_position(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct R {
        id: String,
        n: u32,
        x: Option<f64>,
        #[serde(default)]
        v: Vec<Mode>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Alpha,
        Beta,
    }

    /// Each kind of mismatch is told apart, in serde_json's words for it, with its path.
    #[test]
    fn each_mismatch_has_its_kind_and_serde_jsons_words() {
        let cases = [
            (r#"{"n": 1}"#, IssueKind::MissingField, "."),
            (r#"{"id": "a", "n": "one"}"#, IssueKind::WrongType, "n"),
            (r#"{"id": "a", "n": -1}"#, IssueKind::ValueNotAllowed, "n"),
            (r#"{"id": "a", "n": 1.5}"#, IssueKind::WrongType, "n"),
            (r#"{"id": null, "n": 1}"#, IssueKind::WrongType, "id"),
            (
                r#"{"id": "a", "id": "b", "n": 1}"#,
                IssueKind::DuplicateKey,
                ".",
            ),
            (
                r#"{"id": "a", "n": 1, "v": ["gamma"]}"#,
                IssueKind::ValueNotAllowed,
                "v[0]",
            ),
        ];
        for (text, kind, path) in cases {
            let (at, e) = why_not::<R>(text).expect(text);
            assert_eq!((e.kind, at.as_str()), (kind, path), "{text}: {e}");
            let theirs = serde_json::from_str::<R>(text).unwrap_err().to_string();
            assert!(
                theirs.starts_with(&e.message),
                "{text}: ours {:?}, serde_json's {theirs:?}",
                e.message
            );
        }
        assert!(why_not::<R>(r#"{"id": "a", "n": 1}"#).is_none());
    }
}
