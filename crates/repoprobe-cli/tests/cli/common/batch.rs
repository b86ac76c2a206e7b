//! The batch APIs of the fake server: OpenAI's Files + Batches and Anthropic's Message Batches.
//! Each request of a submitted batch is answered by [`super::respond`], so it gets exactly the
//! checks and faults of a live call; the results are served once the batch has been polled
//! `polls_before_end` times (or never, while `hold` is set).

use super::{State, respond};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct Batches {
    /// Uploaded files by id.
    files: HashMap<String, String>,
    /// Result lines of each batch, by batch id.
    results: HashMap<String, Vec<String>>,
    /// Polls each batch has had.
    polls: HashMap<String, usize>,
    /// Batches created.
    pub created: usize,
    /// Requests across all batches.
    pub requests: usize,
    /// Polls a batch needs before it ends.
    pub polls_before_end: usize,
    /// While set, no batch ends.
    pub hold: bool,
}

type Response = (u16, String, String);

fn ok(v: Value) -> Option<Response> {
    Some((200, String::new(), v.to_string()))
}

/// Serves a batch endpoint; `None` for any other path.
pub fn route(
    state: &Mutex<State>,
    method: &str,
    path: &str,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> Option<Response> {
    let key_ok = header("authorization") == Some(format!("Bearer {}", super::KEY))
        || header("x-api-key").as_deref() == Some(super::KEY);
    let is_batch = path.starts_with("/v1/files")
        || path.starts_with("/v1/batches")
        || path.starts_with("/v1/messages/batches");
    if !is_batch {
        return None;
    }
    if !key_ok {
        state
            .lock()
            .unwrap()
            .violations
            .push(format!("{method} {path} without the key"));
        return Some((401, String::new(), "{}".into()));
    }
    match (method, path) {
        ("POST", "/v1/files") => upload(state, body),
        ("POST", "/v1/batches") => create_openai(state, header, body),
        ("POST", "/v1/messages/batches") => create_anthropic(state, header, body),
        ("GET", p) => get(state, p),
        _ => Some((404, String::new(), "{}".into())),
    }
}

/// OpenAI's `POST /v1/files`: keeps the uploaded JSONL of requests under a new file id.
fn upload(state: &Mutex<State>, body: &[u8]) -> Option<Response> {
    let text = String::from_utf8_lossy(body).into_owned();
    let mut s = state.lock().unwrap();
    if !text.contains("name=\"purpose\"\r\n\r\nbatch") {
        s.violations
            .push("a file upload without purpose=batch".into());
    }
    let Some(start) = text
        .find("filename=\"")
        .and_then(|i| text[i..].find("\r\n\r\n").map(|j| i + j + 4))
    else {
        s.violations
            .push("a file upload without a file part".into());
        return Some((400, String::new(), "{}".into()));
    };
    let end = text[start..]
        .find("\r\n--")
        .map_or(text.len(), |e| start + e);
    let id = format!("file-{}", s.batch.files.len());
    s.batch
        .files
        .insert(id.clone(), text[start..end].to_string());
    ok(json!({"id": id, "object": "file", "purpose": "batch"}))
}

/// OpenAI's `POST /v1/batches`: answers every line of the uploaded file at once.
fn create_openai(
    state: &Mutex<State>,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> Option<Response> {
    let req: Value = serde_json::from_slice(body).unwrap_or_default();
    let file = {
        let s = state.lock().unwrap();
        s.batch
            .files
            .get(req["input_file_id"].as_str().unwrap_or(""))
            .cloned()
    };
    if req["endpoint"] != "/v1/chat/completions" || req["completion_window"] != "24h" {
        state
            .lock()
            .unwrap()
            .violations
            .push(format!("batch create {req}"));
    }
    let Some(file) = file else {
        return Some((
            400,
            String::new(),
            json!({"error": "no such file"}).to_string(),
        ));
    };
    let mut lines = Vec::new();
    for line in file.lines().filter(|l| !l.is_empty()) {
        let r: Value = serde_json::from_str(line).unwrap_or_default();
        if r["method"] != "POST" || r["url"] != "/v1/chat/completions" {
            state
                .lock()
                .unwrap()
                .violations
                .push(format!("batch line {line}"));
        }
        let b = serde_json::to_vec(&r["body"]).unwrap();
        let (status, _, resp) = respond(state, "/v1/chat/completions", header, &b);
        let body: Value = serde_json::from_str(&resp).unwrap_or(json!(resp));
        lines.push(
            json!({"id": "r", "custom_id": r["custom_id"],
                "response": {"status_code": status, "body": body}, "error": null})
            .to_string(),
        );
    }
    ok(json!({"id": created(state, lines), "status": "validating"}))
}

/// Anthropic's `POST /v1/messages/batches`: answers every inline request at once.
fn create_anthropic(
    state: &Mutex<State>,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> Option<Response> {
    let req: Value = serde_json::from_slice(body).unwrap_or_default();
    let mut lines = Vec::new();
    for r in req["requests"].as_array().cloned().unwrap_or_default() {
        let b = serde_json::to_vec(&r["params"]).unwrap();
        let (status, _, resp) = respond(state, "/v1/messages", header, &b);
        let result = if status == 200 {
            json!({"type": "succeeded", "message": serde_json::from_str::<Value>(&resp).unwrap()})
        } else {
            json!({"type": "errored", "error": {"type": "error", "error": {"message": resp}}})
        };
        lines.push(json!({"custom_id": r["custom_id"], "result": result}).to_string());
    }
    ok(json!({"id": created(state, lines), "processing_status": "in_progress"}))
}

/// The GET routes: a batch's results, or its status (ended once polled enough, unless held).
fn get(state: &Mutex<State>, p: &str) -> Option<Response> {
    let mut s = state.lock().unwrap();
    let origin = s.origin.clone();
    if let Some(id) = p
        .strip_prefix("/v1/files/")
        .and_then(|r| r.strip_suffix("/content"))
    {
        let lines = s
            .batch
            .results
            .get(id.trim_start_matches("out-"))
            .cloned()?;
        return Some((200, String::new(), lines.join("\n") + "\n"));
    }
    if let Some(id) = p
        .strip_prefix("/v1/messages/batches/")
        .and_then(|r| r.strip_suffix("/results"))
    {
        let lines = s.batch.results.get(id).cloned()?;
        return Some((200, String::new(), lines.join("\n") + "\n"));
    }
    let (anthropic, id) = match p.strip_prefix("/v1/batches/") {
        Some(id) => (false, id.to_string()),
        None => (true, p.strip_prefix("/v1/messages/batches/")?.to_string()),
    };
    if !s.batch.results.contains_key(&id) {
        return Some((
            404,
            String::new(),
            json!({"error": "no such batch"}).to_string(),
        ));
    }
    let polls = {
        let n = s.batch.polls.entry(id.clone()).or_default();
        *n += 1;
        *n
    };
    let ended = !s.batch.hold && polls > s.batch.polls_before_end;
    let status = match (anthropic, ended) {
        (false, false) => json!({"id": id, "status": "in_progress"}),
        (false, true) => json!({"id": id, "status": "completed",
            "output_file_id": format!("out-{id}"), "error_file_id": null}),
        (true, false) => json!({"id": id, "processing_status": "in_progress",
            "results_url": null}),
        (true, true) => json!({"id": id, "processing_status": "ended",
            "results_url": format!("{origin}/v1/messages/batches/{id}/results")}),
    };
    ok(status)
}

fn created(state: &Mutex<State>, lines: Vec<String>) -> String {
    let mut s = state.lock().unwrap();
    s.batch.created += 1;
    s.batch.requests += lines.len();
    let id = format!("batch_{}", s.batch.created);
    s.batch.results.insert(id.clone(), lines);
    id
}
