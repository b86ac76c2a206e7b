//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`. Structured output by
//! `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}` or by a
//! forced function call; in prompt mode no schema field is sent.

use super::{Message, Reply, Request, Settings, Structured, Tokens};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub fn url(base: &str) -> String {
    format!("{}/chat/completions", base.trim_end_matches('/'))
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Msg<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[Tool<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'a str,
    content: &'a str,
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
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    strict: bool,
    parameters: &'a RawValue,
}

/// The request body.
pub fn body(s: &Settings, req: Request<'_>) -> serde_json::Result<Vec<u8>> {
    let mut messages = vec![Msg {
        role: "system",
        content: req.system,
    }];
    messages.extend(req.messages.iter().map(|m: &Message| Msg {
        role: match m.role {
            super::Role::User => "user",
            super::Role::Assistant => "assistant",
        },
        content: &m.content,
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
            Some([Tool {
                kind: "function",
                function: Function {
                    name: req.schema_name,
                    description: req.tool_description,
                    strict: true,
                    parameters: req.schema,
                },
            }]),
            Some(serde_json::json!({"type": "function", "function": {"name": req.schema_name}})),
        ),
        Structured::Prompt => (None, None, None),
    };
    serde_json::to_vec(&Body {
        model: &s.model,
        messages,
        temperature: s.temperature,
        seed: s.seed,
        max_completion_tokens: s.max_tokens,
        response_format,
        tools,
        tool_choice,
    })
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
