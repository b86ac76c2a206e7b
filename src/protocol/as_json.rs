//! The one message field that travels as JSON text inside a postcard message as a whole: the
//! judges' report (`Reply::Judges`), whose pairs `flatten` their figures into the CLI's JSON,
//! which a reader by position cannot follow. (The core's free-form fields go as JSON text on
//! their own, `repoprobe_core::json_text`, and the types around them by position.)

use repoprobe_core::json_text::{from_text, to_text};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;

/// A `Result` whose value travels as JSON text and whose error, a protocol type, by position:
/// `#[serde(with = "as_json::ok")]`. The errors are the protocol's own (`error.rs`), read by
/// position everywhere else too, so they are not read a second way.
pub mod ok {
    use super::*;

    pub fn serialize<T, E, R, S>(v: &R, s: S) -> Result<S::Ok, S::Error>
    where
        T: Serialize,
        E: Serialize,
        R: Borrow<Result<T, E>>,
        S: Serializer,
    {
        match v.borrow() {
            Ok(t) => {
                let text = to_text(t).map_err(serde::ser::Error::custom)?;
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
            Ok(text) => Ok(from_text(text).map_err(D::Error::custom)?),
            Err(e) => Err(e),
        };
        Ok(R::from(r))
    }
}
