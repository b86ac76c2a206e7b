//! A loopback Anthropic-compatible server for the real Claude Code CLI (`repoprobe answer
//! --agent claude-code`): it serves `POST /v1/messages` (streamed as SSE when asked, as Claude
//! Code always does) with a scripted conversation — Glob, then Read of the first path Glob found,
//! then a final text quoting what Read returned (and the key it was sent, which must be scrubbed).
//! With `endless` it asks for Glob forever, so the CLI must stop at `--max-turns`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What only the Read tool can see.
pub const FILE_CONTENT: &str = "the flux capacitor needs 1.21 gigawatts (token zq-7781)";
pub const KEY: &str = "sk-ant-e2e-test-key-5f0c9a";

pub fn claude_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REPOPROBE_CLAUDE") {
        return Some(PathBuf::from(p));
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/node_modules/.bin/claude");
    p.exists().then_some(p)
}

/// One recorded request: path, x-api-key header, JSON body.
pub type Seen = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// Serves POST /v1/messages: a Glob tool call, then a Read of the first path Glob found,
/// then a final text quoting the Read result (and the key it was sent, which the parse
/// must scrub). Streams SSE when asked (Claude Code always asks).
pub fn serve(listener: TcpListener, seen: Seen, endless: bool) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { return };
        let seen = seen.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &seen, endless);
        });
    }
}

fn handle(mut stream: TcpStream, seen: &Seen, endless: bool) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    let mut key = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse().unwrap_or(0),
                "x-api-key" => key = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock()
        .unwrap()
        .push((path.clone(), key.clone(), body.clone()));
    if !path.starts_with("/v1/messages") || path.starts_with("/v1/messages/count_tokens") {
        let msg = b"{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"not here\"}}";
        write!(
            stream,
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            msg.len()
        )?;
        return stream.write_all(msg);
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
    let (ctype, payload) = if stream_it {
        ("text/event-stream", sse(&blocks, stop))
    } else {
        let msg = json!({"id": "msg_e2e", "type": "message", "role": "assistant",
            "model": body["model"], "content": blocks, "stop_reason": stop,
            "stop_sequence": null, "usage": {"input_tokens": 100, "output_tokens": 20}});
        ("application/json", msg.to_string())
    };
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    )?;
    stream.write_all(payload.as_bytes())?;
    stream.flush()
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
