//! What the two providers' reply parsers share. Each provider has one typed parser
//! (`openai::parse`, `anthropic::parse`) that reads a 2xx body into a `Parsed`; a structured
//! call takes its [`Reply`] from it and a chat its [`Turn`], so both paths accept the same
//! shapes. Servers differ in the details (content as text or as parts, counts missing or null,
//! ids left out), so the fields a reply can do without are `Loose`: read when they have the
//! expected shape, ignored otherwise. Only a body that is not the API's response at all is an
//! `Err`, a [`ReplyError`] (the client retries those).

use crate::conversation::Turn;
use crate::{Reply, Structured};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A 2xx body that is not the API's response (a gateway's HTML page, a cut body, another
/// server's shape): the client retries it, and past the retries says so with the body's start.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    /// Not JSON, or JSON of another shape than the response's (serde's words say which field).
    #[error("{0}")]
    Shape(serde_json::Error),
    /// Not JSON at all (a batch endpoint's reply).
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    /// A Chat Completions response without a choice.
    #[error("`choices` is empty")]
    NoChoice,
    /// A Chat Completions response whose first choice has no message.
    #[error("`choices[0]` is not a choice with a message: {0}")]
    NotAChoice(serde_json::Error),
    /// A reply without a field the endpoint always sends (a batch's `id`, its `status`).
    #[error("no `{field}` in {body}")]
    NoField { field: &'static str, body: String },
}

/// A field read when it has the expected shape, `None` when it is missing or has another one.
/// Only for bodies read with `serde_json` (it goes through the field's raw text, so a borrowed
/// [`RawValue`] inside still keeps the model's bytes).
pub(crate) struct Loose<T>(pub(crate) Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Loose<T> {
        Loose(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Loose<T>, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        Ok(Loose(serde_json::from_str(raw.get()).ok()))
    }
}

impl<T> Loose<T> {
    pub(crate) fn into_option(self) -> Option<T> {
        self.0
    }
}

impl Loose<u64> {
    /// A token count: 0 when the server did not send one.
    pub(crate) fn count(&self) -> u64 {
        self.0.unwrap_or(0)
    }
}

/// The text of a message's `content` as servers send it: a string, or a list of parts whose
/// `text` strings are joined by newlines (parts without one are skipped); `None` for anything
/// else (`null`, a number). Agent CLIs' event streams use the same two shapes.
pub fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// A `content` field read with [`content_text`].
#[derive(Default)]
pub(crate) struct Content(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        Ok(Content(content_text(&Value::deserialize(d)?)))
    }
}

/// Everything one reply said, for either use.
pub(crate) struct Parsed {
    /// The reply as a chat turn: its text, every tool call, tokens and stop reason.
    pub(crate) turn: Turn,
    /// The reply's text when it has one (OpenAI: `content` not `null`; Anthropic: text blocks
    /// with some text); a structured call prefers it outside tool mode.
    pub(crate) content: Option<String>,
    /// The first tool call's input as the model wrote it (its key order kept); a structured
    /// call in tool mode prefers it.
    pub(crate) tool_text: Option<String>,
    /// What a structured call adds to a rejection (cut at the token limit, a refusal).
    pub(crate) note: Option<String>,
}

impl Parsed {
    /// The reply of a structured call in mode `structured`.
    pub(crate) fn into_reply(self, structured: Structured) -> Reply {
        let text = match structured {
            Structured::Tool => self.tool_text.or(self.content),
            _ => self.content.or(self.tool_text),
        }
        .unwrap_or_default();
        Reply {
            text,
            tokens: self.turn.tokens,
            note: self.note,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Provider, Structured, Tokens, anthropic, chat, openai};

    fn reply(provider: Provider, body: &str, structured: Structured) -> String {
        match provider {
            Provider::Openai => openai::reply(body.as_bytes(), structured),
            Provider::Anthropic => anthropic::reply(body.as_bytes(), structured),
        }
        .unwrap()
        .text
    }

    /// Shapes only one of the two old parsers took: content parts, a null count, arguments sent
    /// as an object, a block without a type. A structured call and a chat now read them alike.
    #[test]
    fn structured_calls_and_chats_accept_the_same_shapes() {
        let openai = r#"{"choices": [{"finish_reason": null, "message": {
            "content": [{"type": "text", "text": "a"}, 5, {"type": "text", "text": "b"}],
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"z": 1, "a": 2}}}]}}],
            "usage": {"prompt_tokens": null, "completion_tokens": 3}}"#;
        assert_eq!(reply(Provider::Openai, openai, Structured::Schema), "a\nb");
        assert_eq!(
            reply(Provider::Openai, openai, Structured::Tool),
            r#"{"z": 1, "a": 2}"#
        );
        let turn = chat::parse(Provider::Openai, openai.as_bytes()).unwrap();
        assert_eq!(turn.text, "a\nb");
        assert_eq!(turn.tool_calls[0].input["a"], 2);
        assert_eq!(
            turn.tokens,
            Tokens {
                input_tokens: 0,
                output_tokens: 3
            }
        );
        let anthropic = r#"{"content": [{"text": "no type"}, "junk",
            {"type": "tool_use", "id": "t", "name": "f", "input": {"z": 1, "a": [2]}},
            {"type": "text", "text": 7}], "stop_reason": "tool_use",
            "usage": {"input_tokens": 4, "output_tokens": "x", "cache_read_input_tokens": 1}}"#;
        assert_eq!(
            reply(Provider::Anthropic, anthropic, Structured::Tool),
            r#"{"z": 1, "a": [2]}"#
        );
        assert_eq!(
            reply(Provider::Anthropic, anthropic, Structured::Schema),
            r#"{"z": 1, "a": [2]}"#
        );
        let turn = chat::parse(Provider::Anthropic, anthropic.as_bytes()).unwrap();
        assert_eq!((turn.text.as_str(), turn.tool_calls.len()), ("", 1));
        assert_eq!(
            turn.tokens,
            Tokens {
                input_tokens: 5,
                output_tokens: 0
            }
        );
        for provider in [Provider::Openai, Provider::Anthropic] {
            for body in ["<html>", r#"{"type": "error"}"#, r#"{"choices": []}"#] {
                assert!(chat::parse(provider, body.as_bytes()).is_err(), "{body}");
                let structured = match provider {
                    Provider::Openai => openai::reply(body.as_bytes(), Structured::Schema),
                    Provider::Anthropic => anthropic::reply(body.as_bytes(), Structured::Schema),
                };
                assert!(structured.is_err(), "{body}");
            }
        }
    }

    #[test]
    fn a_refusal_and_a_cut_are_noted_for_structured_calls() {
        let refused = r#"{"choices": [{"message": {"content": null, "refusal": "no"}}]}"#;
        let r = openai::reply(refused.as_bytes(), Structured::Schema).unwrap();
        assert_eq!(
            (r.text.as_str(), r.note.as_deref()),
            ("", Some("the model refused: no"))
        );
        let cut = r#"{"content": [{"type": "text", "text": "{"}], "stop_reason": "max_tokens"}"#;
        let r = anthropic::reply(cut.as_bytes(), Structured::Tool).unwrap();
        assert_eq!(r.text, "{");
        assert!(r.note.unwrap().contains("token limit"));
    }

    /// vLLM's `reasoning_content` and llama.cpp's `reasoning`: the thinking is never the reply;
    /// a reply that is thinking only says so (and whether it was cut), for the re-ask and the
    /// failure record.
    #[test]
    fn a_reasoning_models_thinking_is_never_taken_for_its_reply() {
        let both = r#"{"choices": [{"finish_reason": "stop", "message": {
            "reasoning_content": "Let me think: {\"k1\": 9}", "content": "{\"k1\": 1}"}}]}"#;
        let r = openai::reply(both.as_bytes(), Structured::Schema).unwrap();
        assert_eq!((r.text.as_str(), r.note), (r#"{"k1": 1}"#, None));
        for field in ["reasoning_content", "reasoning"] {
            let only = format!(
                r#"{{"choices": [{{"finish_reason": "length", "message": {{
                "{field}": "I should score k1 as", "content": null}}}}]}}"#
            );
            let r = openai::reply(only.as_bytes(), Structured::Schema).unwrap();
            assert_eq!(r.text, "", "{field}");
            let note = r.note.unwrap();
            assert!(
                note.contains("all reasoning") && note.contains("cut at the token limit"),
                "{note}"
            );
            let turn = chat::parse(Provider::Openai, only.as_bytes()).unwrap();
            assert_eq!(turn.text, "", "{field}");
        }
    }
}
