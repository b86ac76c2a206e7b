//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`. Structured output by
//! `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}` or by a
//! forced function call; in prompt mode no schema field is sent. The request types here are
//! the one wire format of this API: structured calls build them from a [`Request`], the built-in
//! agent's chats (`chat.rs`) from its conversation.

use super::{Message, Reply, Request, Settings, Structured, Tokens};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
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
struct Response {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ResponseMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Deserialize)]
struct ToolCall {
    function: CalledFunction,
}

#[derive(Deserialize)]
struct CalledFunction {
    #[serde(default)]
    arguments: String,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// The reply of a 2xx body; `Err` when the body is not a Chat Completions response.
pub fn reply(bytes: &[u8], structured: Structured) -> Result<Reply, String> {
    let r: Response = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let choice = r.choices.into_iter().next().ok_or("`choices` is empty")?;
    let from_tool = choice
        .message
        .tool_calls
        .and_then(|c| c.into_iter().next())
        .map(|c| c.function.arguments);
    let text = match structured {
        Structured::Tool => from_tool.or(choice.message.content),
        _ => choice.message.content.or(from_tool),
    }
    .unwrap_or_default();
    let note = if let Some(refusal) = choice.message.refusal.filter(|r| !r.is_empty()) {
        Some(format!("the model refused: {refusal}"))
    } else if choice.finish_reason.as_deref() == Some("length") {
        Some("the reply was cut at the token limit (finish_reason \"length\")".to_string())
    } else {
        None
    };
    let tokens = r
        .usage
        .map(|u| Tokens {
            input_tokens: u.prompt_tokens,
            output_tokens: u.completion_tokens,
        })
        .unwrap_or_default();
    Ok(Reply { text, tokens, note })
}
