//! A field that travels as JSON text inside a postcard message: for the core's types whose
//! serde attributes only a self-describing reader can follow (a field left out when empty,
//! `flatten`, a `serde_json::Value`), which are the file formats' and the CLI's JSON and stay
//! as they are. `#[serde(with = "as_json")]` on the field.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub fn serialize<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    let text = serde_json::to_string(v).map_err(serde::ser::Error::custom)?;
    s.serialize_str(&text)
}

pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let text = <&str>::deserialize(d)?;
    serde_json::from_str(text).map_err(D::Error::custom)
}
