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

/// A streamed OpenAI Responses API reply (`POST /v1/responses` with `"stream": true`, as the
/// Codex CLI sends it) as server-sent events: `response.created`, `response.output_item.added`
/// and `.done` for each of `items` (a `message` with `output_text` parts, or a `function_call`
/// with `call_id`, `name` and JSON-text `arguments`), then `response.completed` with `usage`.
/// The shapes Codex 0.171.0 reads were checked by running it against this server.
pub fn responses_sse(id: &str, model: &str, items: &[Value], usage: Value) -> String {
    let mut events = vec![json!({"type": "response.created", "response": {"id": id,
        "object": "response", "model": model, "status": "in_progress", "output": []}})];
    for (i, item) in items.iter().enumerate() {
        events.push(json!({"type": "response.output_item.added", "output_index": i, "item": item}));
        events.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
    }
    events.push(json!({"type": "response.completed", "response": {"id": id,
        "object": "response", "model": model, "status": "completed", "output": items,
        "usage": usage}}));
    events
        .iter()
        .enumerate()
        .map(|(n, e)| {
            let mut e = e.clone();
            e["sequence_number"] = json!(n);
            format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))
        })
        .collect()
}

/// The Responses API's `usage` object.
pub fn responses_usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + output})
}

/// A Gemini API `GenerateContentResponse` (`generateContent`, or one chunk of
/// `streamGenerateContent`): one candidate whose content holds `parts` (`{"text": …}` or
/// `{"functionCall": {"name", "args"}}`), and `usageMetadata`.
pub fn gemini_response(
    model: &str,
    parts: Vec<Value>,
    prompt: u64,
    cached: u64,
    out: u64,
) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "cachedContentTokenCount": cached,
            "candidatesTokenCount": out, "totalTokenCount": prompt + out},
        "modelVersion": model,
        "responseId": "gemini-e2e"
    })
}

/// `streamGenerateContent?alt=sse`: each chunk as one `data:` event.
pub fn gemini_sse(chunks: &[Value]) -> String {
    chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect()
}
