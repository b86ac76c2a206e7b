//! Reading a model's tool input: one JSON object of the tool's parameters, unknown ones refused,
//! integers also taken when written as strings (some models do). Every failure is a message the
//! model can act on.

use super::ToolError;
use serde::Deserialize;
use serde_json::{Value, json};

pub(super) fn parse<T: serde::de::DeserializeOwned>(
    tool: &'static str,
    input: &Value,
) -> Result<T, ToolError> {
    let input = match input {
        Value::Null => json!({}),
        Value::Object(_) => input.clone(),
        other => {
            return Err(ToolError::NotAnObject {
                tool,
                given: other.to_string(),
            });
        }
    };
    serde_json::from_value(input).map_err(|error| ToolError::Input { tool, error })
}

/// Accepts an integer also when written as a string (`"10"`), which some models do.
pub(super) fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a positive integer, got {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected a positive integer, got {s:?}"))),
        Some(other) => Err(D::Error::custom(format!(
            "expected a positive integer, got {other}"
        ))),
    }
}
