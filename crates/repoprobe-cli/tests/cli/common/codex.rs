//! The fake OpenAI Responses API the real Codex CLI (`repoprobe answer --agent codex`) runs
//! against: `POST /v1/responses`, streamed as server-sent events (Codex 0.171.0 asks for
//! `text/event-stream` and sends nothing else to the server). The scripted model drives Codex's
//! own tool, `exec_command` (the shell, confined by Codex's read-only sandbox): list the files,
//! search them, read the one found, try to write one, then answer quoting what the tools returned (and the key it
//! was sent, which the run must scrub).

use super::agent_cli::Seen;
use repoprobe_test_support::reply::{responses_sse, responses_usage};
use repoprobe_test_support::{FakeServer, Request, Response};
use serde_json::{Value, json};

pub const KEY: &str = "sk-codex-e2e-key-7d1e04";
pub const MODEL: &str = "gpt-5-codex";

/// The commands the model runs, in order: list, search, read, and a write that Codex's
/// read-only sandbox must refuse.
pub const COMMANDS: [&str; 4] = [
    "ls -R",
    "grep -rn flux .",
    "cat docs/notes.txt",
    "echo planted > docs/planted.txt",
];

/// Tokens each response reports (input, cached, output).
pub const USAGE: (u64, u64, u64) = (1000, 200, 50);

/// How the server answers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// The three tool calls, then the answer.
    Answer,
    /// The first call answered; from the second on, one 429 and then 500 for good.
    FailMidRun,
}

pub fn start(seen: Seen, script: Script) -> FakeServer {
    FakeServer::start(move |req| handle(req, &seen, script))
}

fn handle(req: &Request, seen: &Seen, script: Script) -> Response {
    let n = {
        let mut s = seen.lock().unwrap();
        s.push(req.clone());
        s.len()
    };
    if req.method != "POST" || req.path != "/v1/responses" {
        return Response::json(404, r#"{"error":{"message":"not here"}}"#);
    }
    if req.header("authorization") != Some(&format!("Bearer {KEY}")) {
        return Response::json(401, r#"{"error":{"message":"bad key"}}"#);
    }
    let body = req.json();
    if script == Script::FailMidRun && n >= 2 {
        return if n == 2 {
            Response::json(
                429,
                r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
            )
            .header("retry-after", "1")
        } else {
            Response::json(
                500,
                r#"{"error":{"message":"upstream exploded","type":"server_error"}}"#,
            )
        };
    }
    let outputs: Vec<&Value> = body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|i| i["type"] == "function_call_output")
                .collect()
        })
        .unwrap_or_default();
    let k = outputs.len();
    let item = if k < COMMANDS.len() {
        json!({"type": "function_call", "id": format!("fc_{k}"), "call_id": format!("call_{k}"),
            "name": "exec_command", "arguments": json!({"cmd": COMMANDS[k]}).to_string(),
            "status": "completed"})
    } else {
        let said: Vec<String> = outputs.iter().map(|o| output_text(&o["output"])).collect();
        let text = format!(
            "The tools returned:\n{}\n(my key is {KEY})",
            said.join("\n---\n")
        );
        json!({"type": "message", "id": "msg_answer", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    let (i, c, o) = USAGE;
    let body = responses_sse(
        &format!("resp_{n}"),
        MODEL,
        &[item],
        responses_usage(i, c, o),
    );
    Response::new(200, body).header("content-type", "text/event-stream")
}

/// A `function_call_output`'s output: a string, or content parts.
fn output_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
