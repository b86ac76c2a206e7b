//! A tool-calling conversation, provider-neutral: the messages (user text, assistant text with
//! tool calls, tool results), the request body of OpenAI Chat Completions and of Anthropic
//! Messages for it, and the reading of a reply into a [`Turn`] (by the provider's one reply
//! parser, shared with structured calls).
//!
//! Wire shapes. OpenAI: `tools: [{type: "function", function: {name, description, parameters}}]`;
//! the assistant's `tool_calls: [{id, type: "function", function: {name, arguments}}]` with
//! `arguments` a JSON *string*; each result a `{role: "tool", tool_call_id, content}` message.
//! Anthropic: `tools: [{name, description, input_schema}]`; the assistant's `tool_use` blocks
//! `{id, name, input}`; results as `tool_result` blocks `{tool_use_id, content, is_error}` in the
//! next user message; `max_tokens` is required.
//!
//! Nothing here sends anything ([`super::Client::send`] does) or runs a tool. A tool call whose
//! arguments are not a JSON object is kept with [`ToolCall::invalid`] set, so the caller can
//! tell the model rather than fail the run.

use super::{Provider, Settings, anthropic, openai};
use crate::reply::ReplyError;
use serde_json::{Value, json};
use std::borrow::Cow;

pub use crate::conversation::{ChatMessage, ToolCall, ToolDef, ToolResult, Turn};

/// The request body for `s.provider`.
pub fn body(
    s: &Settings,
    system: &str,
    tools: &[ToolDef],
    messages: &[ChatMessage],
) -> serde_json::Result<Vec<u8>> {
    match s.provider {
        Provider::Openai => serde_json::to_vec(&openai_request(s, system, tools, messages)),
        Provider::Anthropic => anthropic_bytes(s, system, tools, messages),
    }
}

/// Reads a 2xx body of `provider` with that provider's one reply parser (the one structured
/// calls use); `Err` when it is not that API's response (the client retries those). Malformed
/// tool arguments are not an `Err`: see [`ToolCall::invalid`].
pub fn parse(provider: Provider, bytes: &[u8]) -> Result<Turn, ReplyError> {
    match provider {
        Provider::Openai => openai::parse(bytes),
        Provider::Anthropic => anthropic::parse(bytes),
    }
    .map(|p| p.turn)
}

/// An OpenAI Chat Completions request, in `openai.rs`' types.
fn openai_request<'a>(
    s: &'a Settings,
    system: &'a str,
    tools: &'a [ToolDef],
    messages: &'a [ChatMessage],
) -> openai::Body<'a, Value> {
    let mut b = openai::Body::new(s, system);
    for m in messages {
        match m {
            ChatMessage::User { text } => b.messages.push(openai::Msg::text("user", text)),
            ChatMessage::Assistant { text, tool_calls } => b.messages.push(openai::Msg {
                role: "assistant",
                content: (!text.is_empty()).then_some(Cow::Borrowed(text.as_str())),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| openai::CallOut {
                        id: &c.id,
                        kind: "function",
                        function: openai::CalledOut {
                            name: &c.name,
                            arguments: match (&c.invalid, &c.input) {
                                (Some(_), Value::String(raw)) => raw.clone(),
                                _ => c.input.to_string(),
                            },
                        },
                    })
                    .collect(),
                tool_call_id: None,
            }),
            // No error flag in this API: the text says it.
            ChatMessage::ToolResults { results } => {
                b.messages.extend(results.iter().map(|r| openai::Msg {
                    role: "tool",
                    content: Some(if r.is_error {
                        Cow::Owned(format!("error: {}", r.content))
                    } else {
                        Cow::Borrowed(r.content.as_str())
                    }),
                    tool_calls: Vec::new(),
                    tool_call_id: Some(&r.id),
                }))
            }
        }
    }
    if !tools.is_empty() {
        b.tools = Some(
            tools
                .iter()
                .map(|t| openai::Tool::function(&t.name, &t.description, false, &t.input_schema))
                .collect(),
        );
    }
    b
}

/// [`openai_request`] as a JSON value (for tests).
#[cfg(test)]
fn openai_body(s: &Settings, system: &str, tools: &[ToolDef], messages: &[ChatMessage]) -> Value {
    serde_json::to_value(openai_request(s, system, tools, messages)).unwrap()
}

/// An Anthropic Messages request, in `anthropic.rs`' types, as bytes.
fn anthropic_bytes(
    s: &Settings,
    system: &str,
    tools: &[ToolDef],
    messages: &[ChatMessage],
) -> serde_json::Result<Vec<u8>> {
    // The API takes only an object as a call's input; what the model wrote is in the error result.
    let empty = json!({});
    let msgs: Vec<anthropic::Msg<'_>> = messages
        .iter()
        .map(|m| match m {
            ChatMessage::User { text } => anthropic::Msg {
                role: "user",
                content: anthropic::Content::Text(text),
            },
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(anthropic::BlockOut::Text { text });
                }
                blocks.extend(tool_calls.iter().map(|c| anthropic::BlockOut::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: if c.input.is_object() {
                        &c.input
                    } else {
                        &empty
                    },
                }));
                anthropic::Msg {
                    role: "assistant",
                    content: anthropic::Content::Blocks(blocks),
                }
            }
            ChatMessage::ToolResults { results } => anthropic::Msg {
                role: "user",
                content: anthropic::Content::Blocks(
                    results
                        .iter()
                        .map(|r| anthropic::BlockOut::ToolResult {
                            tool_use_id: &r.id,
                            content: &r.content,
                            is_error: r.is_error,
                        })
                        .collect(),
                ),
            },
        })
        .collect();
    let mut b = anthropic::Body::new(s, system, &msgs);
    if !tools.is_empty() {
        b.tools = Some(
            tools
                .iter()
                .map(|t| anthropic::Tool {
                    name: &t.name,
                    description: &t.description,
                    input_schema: &t.input_schema,
                })
                .collect(),
        );
    }
    serde_json::to_vec(&b)
}

/// [`anthropic_bytes`] as a JSON value (for tests).
#[cfg(test)]
fn anthropic_body(
    s: &Settings,
    system: &str,
    tools: &[ToolDef],
    messages: &[ChatMessage],
) -> Value {
    serde_json::from_slice(&anthropic_bytes(s, system, tools, messages).unwrap()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Structured, Tokens};
    use std::time::Duration;

    fn settings(provider: Provider) -> Settings {
        Settings {
            provider,
            base_url: String::new(),
            model: "m-1".into(),
            structured: Structured::Prompt,
            temperature: Some(0.0),
            seed: Some(7),
            max_tokens: None,
            max_http_retries: 0,
            backoff: Duration::from_millis(1),
            timeout: Duration::from_secs(1),
            rpm: None,
            tpm: None,
        }
    }

    fn tools() -> Vec<ToolDef> {
        vec![ToolDef {
            name: "read_file".into(),
            description: "Read a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}),
        }]
    }

    fn conversation() -> Vec<ChatMessage> {
        vec![
            ChatMessage::User {
                text: "Where is main?".into(),
            },
            ChatMessage::Assistant {
                text: "Let me look.".into(),
                tool_calls: vec![
                    ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        input: json!({"path": "src/main.rs"}),
                        invalid: None,
                    },
                    ToolCall {
                        id: "c2".into(),
                        name: "read_file".into(),
                        input: json!("{\"path\": "),
                        invalid: Some("the arguments are not valid JSON".into()),
                    },
                ],
            },
            ChatMessage::ToolResults {
                results: vec![
                    ToolResult {
                        id: "c1".into(),
                        content: "1\tfn main() {}".into(),
                        is_error: false,
                    },
                    ToolResult {
                        id: "c2".into(),
                        content: "the arguments are not valid JSON".into(),
                        is_error: true,
                    },
                ],
            },
        ]
    }

    #[test]
    fn openai_body_has_function_tools_string_arguments_and_tool_messages() {
        let b = openai_body(
            &settings(Provider::Openai),
            "sys",
            &tools(),
            &conversation(),
        );
        assert_eq!(
            b,
            json!({
                "model": "m-1",
                "temperature": 0.0,
                "seed": 7,
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "Where is main?"},
                    {"role": "assistant", "content": "Let me look.", "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"src/main.rs\"}"}},
                        {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}
                    ]},
                    {"role": "tool", "tool_call_id": "c1", "content": "1\tfn main() {}"},
                    {"role": "tool", "tool_call_id": "c2", "content": "error: the arguments are not valid JSON"}
                ],
                "tools": [{"type": "function", "function": {
                    "name": "read_file", "description": "Read a file.",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}
                }}]
            })
        );
        let mut s = settings(Provider::Openai);
        s.max_tokens = Some(100);
        s.temperature = None;
        s.seed = None;
        let b = openai_body(&s, "sys", &[], &conversation()[..1]);
        assert_eq!(b["max_completion_tokens"], 100);
        assert!(
            b.get("tools").is_none() && b.get("temperature").is_none() && b.get("seed").is_none()
        );
    }

    #[test]
    fn anthropic_body_has_tool_use_and_tool_result_blocks_and_max_tokens() {
        let b = anthropic_body(
            &settings(Provider::Anthropic),
            "sys",
            &tools(),
            &conversation(),
        );
        assert_eq!(
            b,
            json!({
                "model": "m-1",
                "max_tokens": 4096,
                "system": "sys",
                "temperature": 0.0,
                "messages": [
                    {"role": "user", "content": "Where is main?"},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "src/main.rs"}},
                        {"type": "tool_use", "id": "c2", "name": "read_file", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "c1", "content": "1\tfn main() {}"},
                        {"type": "tool_result", "tool_use_id": "c2", "content": "the arguments are not valid JSON", "is_error": true}
                    ]}
                ],
                "tools": [{"name": "read_file", "description": "Read a file.",
                    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}}]
            })
        );
        // The body is bytes of that JSON; no seed field exists in this API.
        let bytes = body(
            &settings(Provider::Anthropic),
            "sys",
            &tools(),
            &conversation(),
        )
        .unwrap();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v, b);
        assert!(v.get("seed").is_none());
    }

    #[test]
    fn openai_reply_with_tool_calls_is_parsed_and_bad_arguments_are_kept() {
        let reply = json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "search", "arguments": "{\"pattern\":\"fn main\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": src"}},
                    {"type": "function", "function": {"name": "list_dir", "arguments": {"path": "."}}},
                    {"id": "call_d", "type": "function", "function": {"name": "list_dir", "arguments": ""}}
                ]
            }}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
        });
        let t = parse(Provider::Openai, reply.to_string().as_bytes()).unwrap();
        assert_eq!(t.text, "");
        assert_eq!(t.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            t.tokens,
            Tokens {
                input_tokens: 120,
                output_tokens: 30
            }
        );
        assert_eq!(t.tool_calls.len(), 4);
        assert_eq!(
            t.tool_calls[0],
            ToolCall {
                id: "call_a".into(),
                name: "search".into(),
                input: json!({"pattern": "fn main"}),
                invalid: None
            }
        );
        assert_eq!(t.tool_calls[1].input, json!("{\"path\": src"));
        assert!(
            t.tool_calls[1]
                .invalid
                .as_deref()
                .unwrap()
                .starts_with("the arguments are not valid JSON")
        );
        assert_eq!(t.tool_calls[2].id, "call_2");
        assert_eq!(t.tool_calls[2].input, json!({"path": "."}));
        assert_eq!(t.tool_calls[3].input, json!({}));
        assert!(t.tool_calls[3].invalid.is_none());
        // Round trip: the turn goes back as the assistant message with the raw bad arguments.
        let b = openai_body(&settings(Provider::Openai), "s", &[], &[t.to_message()]);
        assert_eq!(
            b["messages"][1]["tool_calls"][1]["function"]["arguments"],
            "{\"path\": src"
        );
        assert_eq!(b["messages"][1]["content"], Value::Null);
    }

    #[test]
    fn openai_final_answer_and_non_api_bodies() {
        let reply = json!({"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "It is in src/main.rs."}}]});
        let t = parse(Provider::Openai, reply.to_string().as_bytes()).unwrap();
        assert_eq!(t.text, "It is in src/main.rs.");
        assert!(t.tool_calls.is_empty() && !t.cut_at_token_limit());
        assert_eq!(t.tokens, Tokens::default());
        assert!(parse(Provider::Openai, b"<html>bad gateway</html>").is_err());
        assert!(parse(Provider::Openai, b"{\"choices\": []}").is_err());
        let cut =
            json!({"choices": [{"finish_reason": "length", "message": {"content": "It is"}}]});
        assert!(
            parse(Provider::Openai, cut.to_string().as_bytes())
                .unwrap()
                .cut_at_token_limit()
        );
    }

    #[test]
    fn anthropic_reply_with_tool_use_is_parsed() {
        let reply = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m-1",
            "content": [
                {"type": "text", "text": "I'll search."},
                {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"pattern": "fn main"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": "oops"}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 5}
        });
        let t = parse(Provider::Anthropic, reply.to_string().as_bytes()).unwrap();
        assert_eq!(t.text, "I'll search.");
        assert_eq!(t.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            t.tokens,
            Tokens {
                input_tokens: 105,
                output_tokens: 20
            }
        );
        assert_eq!(
            t.tool_calls[0],
            ToolCall {
                id: "toolu_1".into(),
                name: "search".into(),
                input: json!({"pattern": "fn main"}),
                invalid: None
            }
        );
        assert!(t.tool_calls[1].invalid.is_some());
        let b = anthropic_body(&settings(Provider::Anthropic), "s", &[], &[t.to_message()]);
        assert_eq!(
            b["messages"][0]["content"][1],
            json!({"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"pattern": "fn main"}})
        );
        let done =
            json!({"content": [{"type": "text", "text": "Done."}], "stop_reason": "max_tokens"});
        let t = parse(Provider::Anthropic, done.to_string().as_bytes()).unwrap();
        assert_eq!(t.text, "Done.");
        assert!(t.cut_at_token_limit());
        assert!(parse(Provider::Anthropic, b"{\"type\": \"error\"}").is_err());
    }
}
