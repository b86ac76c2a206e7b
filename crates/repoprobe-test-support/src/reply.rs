//! A model's reply as each API family wraps it.

use serde_json::{Value, json};

/// The API family a reply is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Openai,
    Anthropic,
}

/// How the reply's shape was imposed (Anthropic's tool mode answers with a `tool_use` block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Schema,
    Tool,
    Prompt,
}

/// A 2xx body holding `reply` (the model's text, or in Anthropic's tool mode the tool's input,
/// kept as written) from model `model`, with fixed token usage (100 in, 20 out).
pub fn envelope(api: Api, mode: Mode, model: &str, reply: &str) -> String {
    match (api, mode) {
        (Api::Openai, _) => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        }),
        (Api::Anthropic, Mode::Tool) => {
            // The tool input goes in as written: a `Value` would sort its keys, and the order
            // (rationale first) is checked.
            let input = match serde_json::from_str::<Value>(reply) {
                Ok(_) => reply.to_string(),
                Err(_) => json!({"text": reply}).to_string(),
            };
            return json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "checklist_judgment",
                             "input": "@INPUT@"}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 100, "output_tokens": 20}
            })
            .to_string()
            .replace("\"@INPUT@\"", &input);
        }
        (Api::Anthropic, _) => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": reply}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": 20}
        }),
    }
    .to_string()
}

/// A Chat Completions body whose assistant message is `message` (text or tool calls).
pub fn openai_message(message: Value) -> String {
    json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10}})
    .to_string()
}
