//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`. Structured output by
//! `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}` or by a
//! forced function call; in prompt mode no schema field is sent. The request types here are
//! the one wire format of this API: structured calls build them from a [`Request`], the built-in
//! agent's chats (`chat.rs`) from its conversation.

use super::{Message, Reply, Request, Settings, Structured, Tokens};
use crate::conversation::{ToolCall, Turn};
use crate::reply::{Content, Loose, Parsed, ReplyError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;

pub fn url(base: &str) -> String {
    format!("{}/chat/completions", base.trim_end_matches('/'))
}

/// A request body; `P` is the type of the tools' parameter schemas.
#[derive(Serialize)]
pub(crate) struct Body<'a, P: Serialize + ?Sized> {
    pub(crate) model: &'a str,
    pub(crate) messages: Vec<Msg<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<Vec<Tool<'a, P>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
}

impl<'a, P: Serialize + ?Sized> Body<'a, P> {
    /// A body with the settings' model and sampling, the system message first, no tools.
    pub(crate) fn new(s: &'a Settings, system: &'a str) -> Body<'a, P> {
        Body {
            model: &s.model,
            messages: vec![Msg::text("system", system)],
            temperature: s.temperature,
            seed: s.seed,
            max_completion_tokens: s.max_tokens,
            response_format: None,
            tools: None,
            tool_choice: None,
        }
    }
}

/// A message: text (`null` for an assistant that only called tools), the assistant's tool
/// calls, or a tool's result (`role: "tool"`).
#[derive(Serialize)]
pub(crate) struct Msg<'a> {
    pub(crate) role: &'a str,
    pub(crate) content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tool_calls: Vec<CallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_call_id: Option<&'a str>,
}

impl<'a> Msg<'a> {
    pub(crate) fn text(role: &'a str, content: &'a str) -> Msg<'a> {
        Msg {
            role,
            content: Some(Cow::Borrowed(content)),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool call of an assistant message, as sent back: the arguments as a JSON string.
#[derive(Serialize)]
pub(crate) struct CallOut<'a> {
    pub(crate) id: &'a str,
    #[serde(rename = "type")]
    pub(crate) kind: &'a str,
    pub(crate) function: CalledOut<'a>,
}

#[derive(Serialize)]
pub(crate) struct CalledOut<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: String,
}

#[derive(Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    json_schema: JsonSchema<'a>,
}

#[derive(Serialize)]
struct JsonSchema<'a> {
    name: &'a str,
    strict: bool,
    schema: &'a RawValue,
}

#[derive(Serialize)]
pub(crate) struct Tool<'a, P: Serialize + ?Sized> {
    #[serde(rename = "type")]
    kind: &'a str,
    function: Function<'a, P>,
}

impl<'a, P: Serialize + ?Sized> Tool<'a, P> {
    /// A function tool; `strict` (the schema enforced) for a structured call's.
    pub(crate) fn function(
        name: &'a str,
        description: &'a str,
        strict: bool,
        parameters: &'a P,
    ) -> Tool<'a, P> {
        Tool {
            kind: "function",
            function: Function {
                name,
                description,
                strict: strict.then_some(true),
                parameters,
            },
        }
    }
}

#[derive(Serialize)]
struct Function<'a, P: Serialize + ?Sized> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
    parameters: &'a P,
}

/// The request body.
pub fn body(s: &Settings, req: Request<'_>) -> serde_json::Result<Vec<u8>> {
    let mut b = Body::<RawValue>::new(s, req.system);
    b.messages.extend(req.messages.iter().map(|m: &Message| {
        let role = match m.role {
            super::Role::User => "user",
            super::Role::Assistant => "assistant",
        };
        Msg::text(role, &m.content)
    }));
    let (response_format, tools, tool_choice) = match s.structured {
        Structured::Schema => (
            Some(ResponseFormat {
                kind: "json_schema",
                json_schema: JsonSchema {
                    name: req.schema_name,
                    strict: true,
                    schema: req.schema,
                },
            }),
            None,
            None,
        ),
        Structured::Tool => (
            None,
            Some(vec![Tool::function(
                req.schema_name,
                req.tool_description,
                true,
                req.schema,
            )]),
            Some(serde_json::json!({"type": "function", "function": {"name": req.schema_name}})),
        ),
        Structured::Prompt => (None, None, None),
    };
    b.response_format = response_format;
    b.tools = tools;
    b.tool_choice = tool_choice;
    serde_json::to_vec(&b)
}

#[derive(Deserialize)]
struct Response<'a> {
    /// Only the first choice is read.
    #[serde(borrow)]
    choices: Vec<&'a RawValue>,
    #[serde(default)]
    usage: Loose<Usage>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow)]
    message: ResponseMessage<'a>,
    #[serde(default)]
    finish_reason: Loose<String>,
}

#[derive(Deserialize)]
struct ResponseMessage<'a> {
    #[serde(default)]
    content: Content,
    #[serde(default)]
    refusal: Loose<String>,
    /// A reasoning model's thinking, apart from its reply (vLLM and DeepSeek
    /// `reasoning_content`, llama.cpp and others `reasoning`): never taken as the reply.
    #[serde(default)]
    reasoning_content: Loose<String>,
    #[serde(default)]
    reasoning: Loose<String>,
    /// Every element is a call, a malformed one included (it is answered with an error).
    #[serde(borrow, default)]
    tool_calls: Loose<Vec<Loose<CallIn<'a>>>>,
}

#[derive(Deserialize, Default)]
struct CallIn<'a> {
    #[serde(default)]
    id: Loose<String>,
    #[serde(borrow, default)]
    function: Loose<FunctionIn<'a>>,
}

#[derive(Deserialize, Default)]
struct FunctionIn<'a> {
    #[serde(default)]
    name: Loose<String>,
    /// A JSON string as the API defines it; Ollama and some vLLM parsers send the object itself.
    #[serde(borrow, default)]
    arguments: Loose<&'a RawValue>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Loose<u64>,
    #[serde(default)]
    completion_tokens: Loose<u64>,
}

/// Reads a 2xx body, for a structured call and a chat alike; `Err` when it is not a Chat
/// Completions response (no first choice with a message). Malformed tool arguments are not an
/// `Err`: see [`ToolCall::invalid`].
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, ReplyError> {
    let r: Response<'_> = serde_json::from_slice(bytes).map_err(ReplyError::Shape)?;
    let first = r.choices.first().ok_or(ReplyError::NoChoice)?;
    let choice: Choice<'_> = serde_json::from_str(first.get()).map_err(ReplyError::NotAChoice)?;
    let message = choice.message;
    let mut tool_text = None;
    let mut tool_calls = Vec::new();
    for (i, call) in message
        .tool_calls
        .into_option()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let call = call.into_option().unwrap_or_default();
        let f = call.function.into_option().unwrap_or_default();
        let raw = f.arguments.into_option();
        let arguments = raw.map(|r| serde_json::from_str::<Value>(r.get()).unwrap_or(Value::Null));
        if i == 0 {
            // A structured call's reply: the arguments' text as the model wrote it.
            tool_text = Some(match (&arguments, raw) {
                (Some(Value::String(s)), _) => s.clone(),
                (Some(v), Some(r)) if !v.is_null() => r.get().to_string(),
                _ => String::new(),
            });
        }
        let name = f.name.into_option().unwrap_or_default();
        let (input, invalid) = arguments_input(arguments);
        let invalid = if name.is_empty() {
            Some("the call names no function".to_string())
        } else {
            invalid
        };
        tool_calls.push(ToolCall {
            id: ToolCall::id_or_made_up(call.id.into_option(), i),
            name,
            input,
            invalid,
        });
    }
    let refusal = message.refusal.into_option().filter(|r| !r.is_empty());
    let stop_reason = choice.finish_reason.into_option();
    let thought = [message.reasoning_content, message.reasoning]
        .into_iter()
        .filter_map(Loose::into_option)
        .any(|r| !r.trim().is_empty());
    let replied = message
        .content
        .0
        .as_deref()
        .is_some_and(|c| !c.trim().is_empty())
        || !tool_calls.is_empty();
    let cut = stop_reason.as_deref() == Some("length");
    let note = if let Some(refusal) = refusal {
        Some(format!("the model refused: {refusal}"))
    } else if thought && !replied {
        Some(format!(
            "the reply is all reasoning (`reasoning_content`/`reasoning`) and no content{}: \
             raise --max-tokens, or turn the model's thinking off",
            if cut { ", cut at the token limit" } else { "" }
        ))
    } else if cut {
        Some("the reply was cut at the token limit (finish_reason \"length\")".to_string())
    } else {
        None
    };
    let usage = r.usage.into_option();
    let count = |f: fn(&Usage) -> &Loose<u64>| usage.as_ref().map_or(0, |u| f(u).count());
    Ok(Parsed {
        turn: Turn {
            text: message.content.0.clone().unwrap_or_default(),
            tool_calls,
            tokens: Tokens {
                input_tokens: count(|u| &u.prompt_tokens),
                output_tokens: count(|u| &u.completion_tokens),
            },
            stop_reason,
        },
        content: message.content.0,
        tool_text,
        note,
    })
}

/// A call's input from its `arguments`, with why it is unusable: missing, `null` or blank is
/// no parameters; a string must hold a JSON object (kept as sent when it does not).
fn arguments_input(arguments: Option<Value>) -> (Value, Option<String>) {
    match arguments {
        None | Some(Value::Null) => (json!({}), None),
        Some(Value::String(raw)) if raw.trim().is_empty() => (json!({}), None),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(&raw) {
            Ok(obj @ Value::Object(_)) => (obj, None),
            Ok(_) => (
                Value::String(raw),
                Some("the arguments are JSON but not an object".to_string()),
            ),
            Err(e) => (
                Value::String(raw),
                Some(format!("the arguments are not valid JSON ({e})")),
            ),
        },
        Some(obj @ Value::Object(_)) => (obj, None),
        Some(other) => (
            other,
            Some("the arguments are neither a JSON string nor an object".to_string()),
        ),
    }
}

/// The reply of a structured call in a 2xx body; `Err` when the body is not a Chat Completions
/// response.
pub fn reply(bytes: &[u8], structured: Structured) -> Result<Reply, ReplyError> {
    parse(bytes).map(|p| p.into_reply(structured))
}
