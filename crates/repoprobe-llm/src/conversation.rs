//! The conversation of the built-in agent as data: the tools offered, the model's tool calls,
//! their results, the messages and one reply (`Turn`). Every provider's module reads and writes
//! these; this module names no provider, so the arrows run from `chat` and the providers to here.

use super::Tokens;
use serde::Serialize;
use serde_json::Value;

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// JSON Schema of the tool's input (an object).
    pub input_schema: Value,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The provider's id of the call (made up as `call_<n>` when a server sends none).
    pub id: String,
    pub name: String,
    /// The arguments: a JSON object, or, when [`ToolCall::invalid`] is set, the text as sent.
    pub input: Value,
    /// Why the arguments are unusable (not JSON, not an object); the call must not be run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

impl ToolCall {
    /// The provider's id of a call, or `call_<i>` (its place in the reply) when a server sends
    /// none or an empty one: results are matched to calls by it.
    pub(crate) fn id_or_made_up(id: Option<String>, i: usize) -> String {
        id.filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("call_{i}"))
    }
}

/// The result of one tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// The [`ToolCall::id`] answered.
    pub id: String,
    pub content: String,
    pub is_error: bool,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    User {
        text: String,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    /// The results of every call of the assistant message before, in its order.
    ToolResults {
        results: Vec<ToolResult>,
    },
}

/// One reply of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    /// The text blocks joined (empty when the model only called tools).
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub tokens: Tokens,
    /// `finish_reason` (OpenAI) or `stop_reason` (Anthropic) as sent.
    pub stop_reason: Option<String>,
}

impl Turn {
    /// The reply was cut at the token limit.
    pub fn cut_at_token_limit(&self) -> bool {
        matches!(self.stop_reason.as_deref(), Some("length" | "max_tokens"))
    }

    /// This turn as the assistant message that continues the conversation.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::Assistant {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}
