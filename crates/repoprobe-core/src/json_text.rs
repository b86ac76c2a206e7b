//! A field that a reader by position cannot follow (free-form JSON, a block with a `flatten`),
//! written as itself in JSON and as JSON text in a format that is not human-readable.
//!
//! The site's page–worker messages are postcard, read by position: a `serde_json::Value` asks
//! its reader what comes next (`deserialize_any`), which postcard cannot say. With
//! `#[serde(with = "crate::json_text")]` such a field goes there as the text of its JSON, and
//! the type around it by position; the file formats and the CLI's JSON (serde_json, which is
//! human-readable) do not change.

use crate::skip;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub fn serialize<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        v.serialize(s)
    } else {
        s.serialize_str(&to_text(v).map_err(serde::ser::Error::custom)?)
    }
}

pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    if d.is_human_readable() {
        T::deserialize(d)
    } else {
        from_text(<&str>::deserialize(d)?).map_err(D::Error::custom)
    }
}

/// `v`'s JSON as the file formats write it: empty fields left out, also inside a message
/// written whole ([`skip::whole`]).
pub fn to_text<T: Serialize>(v: &T) -> serde_json::Result<String> {
    skip::whole(false, || serde_json::to_string(v))
}

pub fn from_text<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        n: u8,
        #[serde(default, with = "crate::json_text")]
        free: Option<Value>,
    }

    #[test]
    fn free_json_is_itself_in_json_and_text_by_position() {
        let row = Row {
            n: 3,
            free: Some(json!({"a": [1, null, "x"]})),
        };
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(json, r#"{"n":3,"free":{"a":[1,null,"x"]}}"#);
        assert_eq!(serde_json::from_str::<Row>(&json).unwrap(), row);
        let bytes = postcard::to_allocvec(&row).unwrap();
        assert!(
            bytes.windows(5).any(|w| w == b"{\"a\":"),
            "as text: {bytes:?}"
        );
        assert_eq!(postcard::from_bytes::<Row>(&bytes).unwrap(), row);
    }
}
