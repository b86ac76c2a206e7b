//! A field that travels as JSON text inside a postcard message: for the core's types whose
//! serde attributes only a self-describing reader can follow (`flatten`, a `serde_json::Value`),
//! which are the file formats' and the CLI's JSON and stay as they are. `#[serde(with =
//! "as_json")]` on the field. The text is the types' own JSON, empty fields left out
//! (`skip::whole(false, …)` inside a message written whole).

use repoprobe_core::skip;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub fn serialize<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    let text =
        skip::whole(false, || serde_json::to_string(v)).map_err(serde::ser::Error::custom)?;
    s.serialize_str(&text)
}

pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    let text = <&str>::deserialize(d)?;
    serde_json::from_str(text).map_err(D::Error::custom)
}

/// A `Result` whose value travels as JSON text and whose error, a protocol type, by position:
/// `#[serde(with = "as_json::ok")]`. The errors are the protocol's own (`error.rs`), read by
/// position everywhere else too, so they are not read a second way.
pub mod ok {
    use super::*;
    use std::borrow::Borrow;

    pub fn serialize<T, E, R, S>(v: &R, s: S) -> Result<S::Ok, S::Error>
    where
        T: Serialize,
        E: Serialize,
        R: Borrow<Result<T, E>>,
        S: Serializer,
    {
        match v.borrow() {
            Ok(t) => {
                let text = skip::whole(false, || serde_json::to_string(t))
                    .map_err(serde::ser::Error::custom)?;
                Ok::<_, &E>(text).serialize(s)
            }
            Err(e) => Err::<String, _>(e).serialize(s),
        }
    }

    pub fn deserialize<'de, T, E, R, D>(d: D) -> Result<R, D::Error>
    where
        T: DeserializeOwned,
        E: Deserialize<'de>,
        R: From<Result<T, E>>,
        D: Deserializer<'de>,
    {
        let r = match Result::<&str, E>::deserialize(d)? {
            Ok(text) => Ok(serde_json::from_str(text).map_err(D::Error::custom)?),
            Err(e) => Err(e),
        };
        Ok(R::from(r))
    }
}
