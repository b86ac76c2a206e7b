//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
//! Structured output by a forced tool (`tool_choice: {type: "tool", name}`) whose input schema is
//! the reply schema, or by `output_config.format` (JSON schema); in prompt mode neither is sent.
//! The request types here are the one wire format of this API: structured calls build them from
//! a [`Request`], the built-in agent's chats (`chat.rs`) from its conversation.

use super::{Reply, Request, Settings, Structured, Tokens};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

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
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// Token usage as Messages replies report it.
#[derive(Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub(crate) input_tokens: u64,
    #[serde(default)]
    pub(crate) output_tokens: u64,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Option<u64>,
}

impl Usage {
    /// Our counts: input includes the tokens written to and read from the prompt cache (they
    /// are input the model read, billed at other rates).
    pub(crate) fn tokens(&self) -> Tokens {
        Tokens {
            input_tokens: self.input_tokens
                + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0),
            output_tokens: self.output_tokens,
        }
    }
}

/// The reply of a 2xx body: the forced tool's input as written (key order kept), else the text
/// blocks joined; `Err` when the body is not a Messages response.
pub fn reply(bytes: &[u8], structured: Structured) -> Result<Reply, String> {
    let r: Response<'_> = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let tool_input = r
        .content
        .iter()
        .find(|b| b.kind == "tool_use")
        .and_then(|b| b.input)
        .map(|raw| raw.get().to_string());
    let text: String = r
        .content
        .iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n");
    let text = match structured {
        Structured::Tool => tool_input.unwrap_or(text),
        _ => tool_input.filter(|_| text.is_empty()).unwrap_or(text),
    };
    let note = match r.stop_reason.as_deref() {
        Some("max_tokens") => {
            Some("the reply was cut at the token limit (stop_reason \"max_tokens\")".to_string())
        }
        Some("refusal") => Some("the model refused (stop_reason \"refusal\")".to_string()),
        _ => None,
    };
    let tokens = r.usage.map(|u| u.tokens()).unwrap_or_default();
    Ok(Reply { text, tokens, note })
}
