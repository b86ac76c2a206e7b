//! A loopback Anthropic-compatible server for the real Claude Code CLI (`repoprobe answer
//! --agent claude-code`): it serves `POST /v1/messages` (streamed as SSE when asked, as Claude
//! Code always does) with a scripted conversation — Glob, then Read of the first path Glob found,
//! then a final text quoting what Read returned (and the key it was sent, which must be scrubbed).
//! With `endless` it asks for Glob forever, so the CLI must stop at `--max-turns`.

use repoprobe_test_support::{FakeServer, Request, Response};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What only the Read tool can see.
pub const FILE_CONTENT: &str = "the flux capacitor needs 1.21 gigawatts (token zq-7781)";
pub const KEY: &str = "sk-ant-e2e-test-key-5f0c9a";

/// The Claude Code CLI (`tools/` or `REPOPROBE_CLAUDE`); `None` (SKIPPED) where it is missing,
/// a failure under `CI=true`.
pub fn claude_binary() -> Option<PathBuf> {
    super::agent_cli::installed("claude", "REPOPROBE_CLAUDE")
}

/// One recorded request: path, x-api-key header, JSON body.
pub type Seen = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// Starts the tests' fake server answering POST /v1/messages: a Glob tool call, then a Read of
/// the first path Glob found, then a final text quoting the Read result (and the key it was
/// sent, which the parse must scrub). Streams SSE when asked (Claude Code always asks).
pub fn start(seen: Seen, endless: bool) -> FakeServer {
    FakeServer::start(move |req| handle(req, &seen, endless))
}

fn handle(req: &Request, seen: &Seen, endless: bool) -> Response {
    let path = req.path.clone();
    let key = req.header("x-api-key").map(str::to_string);
    let body = req.json();
    seen.lock()
        .unwrap()
        .push((path.clone(), key.clone(), body.clone()));
    if !path.starts_with("/v1/messages") || path.starts_with("/v1/messages/count_tokens") {
        return Response::json(
            404,
            r#"{"type":"error","error":{"type":"not_found_error","message":"not here"}}"#,
        );
    }
    let (blocks, stop) = if endless {
        // Never done: the CLI must stop at --max-turns.
        (
            vec![
                json!({"type": "tool_use", "id": format!("toolu_{}", seen.lock().unwrap().len()),
            "name": "Glob", "input": {"pattern": "**/*"}}),
            ],
            "tool_use",
        )
    } else {
        reply(&body, key.as_deref().unwrap_or(""))
    };
    let stream_it = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    if stream_it {
        Response::new(200, sse(&blocks, stop)).header("content-type", "text/event-stream")
    } else {
        let msg = json!({"id": "msg_e2e", "type": "message", "role": "assistant",
            "model": body["model"], "content": blocks, "stop_reason": stop,
            "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 20}});
        Response::json(200, msg.to_string())
    }
}

/// The scripted conversation, decided by the last tool result in the request.
fn reply(body: &Value, key: &str) -> (Vec<Value>, &'static str) {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    let result = last["content"]
        .as_array()
        .and_then(|c| c.iter().rev().find(|b| b["type"] == "tool_result"))
        .cloned();
    let text_of = |r: &Value| match &r["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    match result {
        None => (
            vec![
                json!({"type": "tool_use", "id": "toolu_glob", "name": "Glob", "input": {"pattern": "**/*.txt"}}),
            ],
            "tool_use",
        ),
        Some(r) if r["tool_use_id"] == "toolu_glob" => {
            let found = text_of(&r);
            let first = found.lines().next().unwrap_or("").trim().to_string();
            (
                vec![
                    json!({"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": first}}),
                ],
                "tool_use",
            )
        }
        Some(r) => (
            vec![
                json!({"type": "text", "text": format!("Read returned: {} (my key is {key})", text_of(&r))}),
            ],
            "end_turn",
        ),
    }
}

fn sse(blocks: &[Value], stop: &str) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg_e2e", "type": "message",
        "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    ];
    for (i, b) in blocks.iter().enumerate() {
        if b["type"] == "text" {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
            events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}));
        } else {
            events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}));
            events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": b["input"].to_string()}}));
        }
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 20}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}
