//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
//! Structured output by a forced tool (`tool_choice: {type: "tool", name}`) whose input schema is
//! the reply schema, or by `output_config.format` (JSON schema); in prompt mode neither is sent.
//! The request types here are the one wire format of this API: structured calls build them from
//! a [`Request`], the built-in agent's chats (`chat.rs`) from its conversation.

use super::{Reply, Request, Settings, Structured, Tokens};
use crate::conversation::{ToolCall, Turn};
use crate::reply::{Loose, Parsed, ReplyError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The API version header sent with every request.
pub const VERSION: &str = "2023-06-01";

/// `max_tokens` is required by the Messages API; this is used when `--max-tokens` is not given
/// (by structured calls and the built-in agent's chat alike).
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

pub fn url(base: &str) -> String {
    format!("{}/v1/messages", base.trim_end_matches('/'))
}

/// A request body; `M` is the type of the messages, `P` of the tools' input schemas.
#[derive(Serialize)]
pub(crate) struct Body<'a, M: Serialize, P: Serialize + ?Sized> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: &'a [M],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<Vec<Tool<'a, P>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<OutputConfig<'a>>,
}

impl<'a, M: Serialize, P: Serialize + ?Sized> Body<'a, M, P> {
    /// A body with the settings' model, output limit (required here) and sampling, no tools.
    pub(crate) fn new(s: &'a Settings, system: &'a str, messages: &'a [M]) -> Body<'a, M, P> {
        Body {
            model: &s.model,
            max_tokens: s.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            system,
            messages,
            temperature: s.temperature,
            tools: None,
            tool_choice: None,
            output_config: None,
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Tool<'a, P: Serialize + ?Sized> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) input_schema: &'a P,
}

/// A message of a chat: plain text, or content blocks.
#[derive(Serialize)]
pub(crate) struct Msg<'a> {
    pub(crate) role: &'a str,
    pub(crate) content: Content<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<BlockOut<'a>>),
}

/// A content block we send: text, the assistant's tool call, a tool's result.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockOut<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a serde_json::Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

#[derive(Serialize)]
struct OutputConfig<'a> {
    format: Format<'a>,
}

#[derive(Serialize)]
struct Format<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    schema: &'a RawValue,
}

/// The request body.
pub fn body(s: &Settings, req: Request<'_>) -> serde_json::Result<Vec<u8>> {
    let mut b = Body::new(s, req.system, req.messages);
    match s.structured {
        Structured::Tool => {
            b.tools = Some(vec![Tool {
                name: req.schema_name,
                description: req.tool_description,
                input_schema: req.schema,
            }]);
            b.tool_choice = Some(serde_json::json!({"type": "tool", "name": req.schema_name}));
        }
        Structured::Schema => {
            b.output_config = Some(OutputConfig {
                format: Format {
                    kind: "json_schema",
                    schema: req.schema,
                },
            });
        }
        Structured::Prompt => {}
    }
    serde_json::to_vec(&b)
}

#[derive(Deserialize)]
struct Response<'a> {
    /// Blocks of another shape are skipped, like thinking blocks.
    #[serde(borrow)]
    content: Vec<Loose<Block<'a>>>,
    #[serde(default)]
    stop_reason: Loose<String>,
    #[serde(default)]
    usage: Loose<Usage>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", default)]
    kind: Loose<String>,
    #[serde(default)]
    text: Loose<String>,
    #[serde(default)]
    id: Loose<String>,
    #[serde(default)]
    name: Loose<String>,
    /// Kept as written: a structured call's reply is this text, key order included.
    #[serde(borrow, default)]
    input: Loose<&'a RawValue>,
}

/// Token usage as Messages replies report it.
#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: Loose<u64>,
    #[serde(default)]
    output_tokens: Loose<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Loose<u64>,
    #[serde(default)]
    cache_read_input_tokens: Loose<u64>,
}

impl Usage {
    /// Our counts: input includes the tokens written to and read from the prompt cache (they
    /// are input the model read, billed at other rates).
    fn tokens(&self) -> Tokens {
        Tokens {
            input_tokens: self.input_tokens.count()
                + self.cache_creation_input_tokens.count()
                + self.cache_read_input_tokens.count(),
            output_tokens: self.output_tokens.count(),
        }
    }
}

/// Reads a 2xx body, for a structured call and a chat alike; `Err` when it is not a Messages
/// response (no `content` list). A tool call whose input is not an object is not an `Err`: see
/// [`ToolCall::invalid`].
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, ReplyError> {
    let r: Response<'_> = serde_json::from_slice(bytes).map_err(ReplyError::Shape)?;
    let mut texts = Vec::new();
    let mut tool_text = None;
    let mut first_tool = true;
    let mut tool_calls = Vec::new();
    for (i, b) in r.content.into_iter().enumerate() {
        let Some(b) = b.into_option() else { continue };
        match b.kind.into_option().as_deref() {
            Some("text") => texts.extend(b.text.into_option()),
            Some("tool_use") => {
                let raw = b.input.into_option();
                if std::mem::take(&mut first_tool) {
                    tool_text = raw
                        .filter(|r| r.get() != "null")
                        .map(|r| r.get().to_string());
                }
                let name = b.name.into_option().unwrap_or_default();
                let input = raw.map_or_else(
                    || json!({}),
                    |r| serde_json::from_str(r.get()).unwrap_or(Value::Null),
                );
                let invalid = if name.is_empty() {
                    Some("the call names no tool".to_string())
                } else if !input.is_object() {
                    Some("the input is not a JSON object".to_string())
                } else {
                    None
                };
                tool_calls.push(ToolCall {
                    id: ToolCall::id_or_made_up(b.id.into_option(), i),
                    name,
                    input,
                    invalid,
                });
            }
            // Thinking and other blocks are not part of the answer.
            _ => {}
        }
    }
    let text = texts.join("\n");
    let stop_reason = r.stop_reason.into_option();
    let note = match stop_reason.as_deref() {
        Some("max_tokens") => {
            Some("the reply was cut at the token limit (stop_reason \"max_tokens\")".to_string())
        }
        Some("refusal") => Some("the model refused (stop_reason \"refusal\")".to_string()),
        _ => None,
    };
    Ok(Parsed {
        content: (!text.is_empty()).then(|| text.clone()),
        turn: Turn {
            text,
            tool_calls,
            tokens: r
                .usage
                .into_option()
                .map(|u| u.tokens())
                .unwrap_or_default(),
            stop_reason,
        },
        tool_text,
        note,
    })
}

/// The reply of a structured call in a 2xx body: the forced tool's input as written (key order
/// kept), else the text blocks joined; `Err` when the body is not a Messages response.
pub fn reply(bytes: &[u8], structured: Structured) -> Result<Reply, ReplyError> {
    parse(bytes).map(|p| p.into_reply(structured))
}
