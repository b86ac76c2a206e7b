//! The known quirks of OpenAI-compatible servers (vLLM, llama.cpp, Ollama, SGLang, gateways),
//! each played by a loopback server where the real one in `local_model.rs` cannot show it:
//! the real binary, a cleared environment, `--no-key` as for a server one runs oneself.

use crate::common::*;
use repoprobe_test_support::{FakeServer, Response};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The golden q1 (items k1 5/3/0, k2 4/2/0, clarity 1/0) answered once.
fn one_answer(dir: &Path) -> PathBuf {
    let p = dir.join("answers.jsonl");
    let a = json!({"question_id": "q1", "model": "A", "attempt": 0,
                   "answer": "It is defined in src/flows/llm_flow.py."});
    std::fs::write(&p, format!("{a}\n")).unwrap();
    p
}

const GOOD: &str = r#"{"k1": {"rationale": "covered", "score": 3}, "k2": {"rationale": "covered", "score": 2}, "clarity": {"rationale": "clear", "score": 1}}"#;

/// `repoprobe judge` of [`one_answer`] against `server`, without a key, one re-ask at most.
fn judge(server: &FakeServer, dir: &Path, extra: &[&str]) -> (Ran, Vec<Value>, Vec<Value>) {
    let out = dir.join("j.jsonl");
    let answers = one_answer(dir);
    let r = ran(Command::new(BIN)
        .env_clear()
        .args(["judge", BENCHMARK])
        .arg(&answers)
        .arg("--out")
        .arg(&out)
        .args(["--provider", "openai", "--no-key", "--model", "local-judge"])
        .arg("--base-url")
        .arg(format!("{}/v1", server.origin()))
        .args([
            "--max-retries",
            "1",
            "--max-http-retries",
            "2",
            "--backoff-s",
            "0.001",
        ])
        .args(extra)
        .output()
        .unwrap());
    let read = |p: &Path| if p.exists() { records(p) } else { Vec::new() };
    let failures = read(&out.with_extension("failures.ndjson"));
    (r, read(&out), failures)
}

/// A Chat Completions reply with `message` and `extra` fields beside `choices`.
fn completion(message: Value, finish: &str, extra: Value) -> Response {
    let mut body = json!({"id": "c1", "object": "chat.completion",
                          "choices": [{"index": 0, "finish_reason": finish, "message": message}]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    Response::json(200, body.to_string())
}

fn usage() -> Value {
    json!({"usage": {"prompt_tokens": 900, "completion_tokens": 40}})
}

/// Every side endpoint (models, props, tokenize) unknown, as on many servers.
fn chat_only(req: &repoprobe_test_support::Request) -> Option<Response> {
    (!req.path.ends_with("/chat/completions")).then(|| Response::json(404, "{}"))
}

/// A server that accepts `response_format: json_schema` and ignores it (Ollama before its
/// structured outputs, gateways in front of models without them): a score outside the rubric
/// is re-asked, then a failure, never a judgment.
#[test]
fn a_schema_accepted_but_not_enforced_is_checked_all_the_same() {
    let server = FakeServer::start(|req| {
        chat_only(req).unwrap_or_else(|| {
            let out = r#"{"k1": {"rationale": "all of it", "score": 4}, "k2": {"rationale": "x", "score": 2}, "clarity": {"rationale": "x", "score": 1}}"#;
            completion(json!({"role": "assistant", "content": out}), "stop", usage())
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, failed) = judge(&server, dir.path(), &["--structured", "schema"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(judged.is_empty(), "{judged:?}");
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["violations"][0]
            .as_str()
            .unwrap()
            .contains("score 4 is not allowed"),
        "{}",
        failed[0]
    );
    // GET /v1/models and /props once (this server says no context), then the first ask and
    // one re-ask; no HTTP retry of a reply that arrived.
    assert_eq!(server.hits(), 2 + 2);
}

/// vLLM refuses prompt + max_tokens over its context with a 400 and its words: one request,
/// not retried, a "could not run" with the server's message.
#[test]
fn a_400_for_a_prompt_over_the_context_fails_once_with_the_servers_words() {
    let chats = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&chats);
    let server = FakeServer::start(move |req| {
        chat_only(req).unwrap_or_else(|| {
            *seen.lock().unwrap() += 1;
            Response::json(400, r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2200 tokens (1000 in the messages, 1200 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#)
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, failed) = judge(&server, dir.path(), &["--max-tokens", "1200"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(judged.is_empty());
    assert_eq!(*chats.lock().unwrap(), 1, "a 400 is not retried");
    let f = &failed[0];
    assert_eq!(
        (&f["status"], &f["cause"]),
        (&json!("could_not_run"), &json!("config")),
        "{f}"
    );
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("maximum context length is 2048 tokens"),
        "{f}"
    );
}

/// A reply cut at `max_tokens` (`finish_reason: length`): re-asked with the cause named, and a
/// failure that says it, never a judgment from half a reply.
#[test]
fn a_reply_cut_at_the_token_limit_is_a_failure_that_says_so() {
    let server = FakeServer::start(|req| {
        chat_only(req).unwrap_or_else(|| {
            completion(
                json!({"role": "assistant", "content": "{\"k1\": {\"rationale\": \"the answer"}),
                "length",
                usage(),
            )
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, failed) = judge(&server, dir.path(), &["--max-tokens", "20"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(judged.is_empty());
    let f = failed[0].to_string();
    assert!(f.contains("cut at the token limit"), "{f}");
}

/// Reasoning models on vLLM (`reasoning_content`) and llama.cpp (`reasoning`): the thinking
/// is not the reply; the content is judged. A reply that is thinking only fails saying so.
#[test]
fn a_reasoning_models_thinking_is_left_out_and_its_content_judged() {
    let server = FakeServer::start(|req| {
        chat_only(req).unwrap_or_else(|| {
            completion(
                json!({"role": "assistant", "reasoning_content": "k1 could be 5, {\"k1\": 5}",
                       "reasoning": "or 0", "content": GOOD}),
                "stop",
                usage(),
            )
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, _) = judge(&server, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(judged[0]["items"][0]["score"], 3, "{}", judged[0]);
    assert!(
        !judged[0].to_string().contains("could be 5"),
        "{}",
        judged[0]
    );

    let thinking = FakeServer::start(|req| {
        chat_only(req).unwrap_or_else(|| {
            completion(
                json!({"role": "assistant", "reasoning_content": "Let me weigh k1 against",
                              "content": ""}),
                "length",
                usage(),
            )
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, failed) = judge(&thinking, dir.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(judged.is_empty());
    assert!(
        failed[0].to_string().contains("all reasoning"),
        "{}",
        failed[0]
    );
}

/// Servers that send usage only in a stream asked for it (`stream_options.include_usage`), or
/// never: we never stream, and a reply without usage is counted as such, never as 0 tokens
/// silently — the record and the closing line say how many calls did not report it.
#[test]
fn a_reply_without_usage_is_said_to_be_unreported_not_counted_as_zero() {
    let streamed = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&streamed);
    let server = FakeServer::start(move |req| {
        chat_only(req).unwrap_or_else(|| {
            seen.lock().unwrap().push(req.json()["stream"].clone());
            completion(
                json!({"role": "assistant", "content": GOOD}),
                "stop",
                json!({}),
            )
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, _) = judge(&server, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        *streamed.lock().unwrap(),
        [Value::Null],
        "no stream is asked for"
    );
    assert_eq!(
        judged[0]["usage"]["calls_without_usage"], 1,
        "{}",
        judged[0]
    );
    assert!(
        r.stderr
            .contains("(1 call(s) whose reply reported no usage: their tokens are not counted"),
        "{}",
        r.stderr
    );
    // A reply with usage: nothing said.
    let counted = FakeServer::start(|req| {
        chat_only(req).unwrap_or_else(|| {
            completion(
                json!({"role": "assistant", "content": GOOD}),
                "stop",
                usage(),
            )
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let (r, judged, _) = judge(&counted, dir.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        judged[0]["usage"].get("calls_without_usage").is_none(),
        "{}",
        judged[0]
    );
    assert!(r.stderr.contains("tokens 900 in, 40 out;"), "{}", r.stderr);
}

/// llama.cpp and Ollama send a tool call's `arguments` as a JSON object, not the string the
/// OpenAI API sends: the built-in agent runs the call all the same, and the tool's real result
/// goes back to the server.
#[test]
fn tool_call_arguments_sent_as_an_object_are_run_like_a_string() {
    let results = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&results);
    let server = FakeServer::start(move |req| {
        if let Some(r) = chat_only(req) {
            return r;
        }
        let body = req.json();
        let tool: Vec<String> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect();
        if tool.is_empty() {
            completion(
                json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": {"path": "src/lib.rs"}}}]}),
                "tool_calls",
                usage(),
            )
        } else {
            seen.lock().unwrap().extend(tool);
            completion(
                json!({"role": "assistant", "content": "It starts in src/lib.rs."}),
                "stop",
                usage(),
            )
        }
    });
    let c = crate::answer::case(None);
    let r = ran(c
        .cmd()
        .args([
            "--agent",
            "builtin",
            "--provider",
            "openai",
            "--no-key",
            "--model",
            "m1",
        ])
        .arg("--base-url")
        .arg(format!("{}/v1", server.origin()))
        .args(["--question", "q1", "--max-http-retries", "0"])
        .output()
        .unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = results.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("marker_alpha"),
        "the file's real text: {got:?}"
    );
    let a = &records(&c.out)[0];
    assert_eq!(a["agent"]["tool_calls"]["read"], 1, "{a}");
    assert_eq!(a["answer"], "It starts in src/lib.rs.");
}
