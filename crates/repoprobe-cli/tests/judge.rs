//! End-to-end tests of `repoprobe judge`: the real binary, with a cleared environment, against a
//! real HTTP server on 127.0.0.1 that each test starts.
//!
//! The server is a small HTTP/1.1 server on `std::net` (a thread per connection, one request
//! per connection, `Connection: close`) rather than axum or hyper: it needs no extra
//! dependency or async runtime in the tests, and it gives byte-level control over what goes back
//! (status, `retry-after`, a body that is not JSON), which is the point of fault injection. It
//! checks every request (path, key header, model, schema with the allowed scores as enums,
//! rationale before score) and records each violation; tests assert there are none.

use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BENCHMARK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/golden/benchmark.jsonl"
);
const BIN: &str = env!("CARGO_BIN_EXE_repoprobe");
const KEY: &str = "sk-test-Zq81SECRETkey0042";
const JUDGE: &str = "judge-model";

/// A fault the server injects into the next request it receives.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// 429 with `Retry-After: 1`.
    RateLimited,
    /// 500.
    ServerError,
    /// 429 saying the quota is exhausted: waiting does not help.
    QuotaExhausted,
    /// 200 whose HTTP body is an HTML page, not the API's JSON.
    HtmlBody,
    /// 200 with a reply text that is not JSON.
    NotJsonReply,
    /// 200 with a reply whose first item's score is outside its enum.
    ScoreOutsideEnum,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Api {
    Openai,
    Anthropic,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Schema,
    Tool,
    Prompt,
}

struct State {
    api: Api,
    mode: Mode,
    questions: Vec<Value>,
    faults: VecDeque<Fault>,
    /// Questions (by id) whose replies always score item 0 outside its enum.
    always_invalid: Vec<String>,
    /// Questions (by id) refused with a 400 whose body echoes the key.
    refused_echoing_key: Vec<String>,
    /// Delay before each response.
    latency: Duration,
    /// Wrap replies in a ```json fence with prose around it.
    fenced: bool,
    requests: usize,
    reasks: usize,
    violations: Vec<String>,
}

struct FakeApi {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl FakeApi {
    fn start(api: Api, mode: Mode) -> FakeApi {
        let questions = std::fs::read_to_string(BENCHMARK)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let state = Arc::new(Mutex::new(State {
            api,
            mode,
            questions,
            faults: VecDeque::new(),
            always_invalid: Vec::new(),
            refused_echoing_key: Vec::new(),
            latency: Duration::ZERO,
            fenced: false,
            requests: 0,
            reasks: 0,
            violations: Vec::new(),
        }));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let st = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let st = Arc::clone(&st);
                std::thread::spawn(move || serve(conn, &st));
            }
        });
        FakeApi { addr, state }
    }

    fn base_url(&self) -> String {
        match self.state.lock().unwrap().api {
            Api::Openai => format!("http://{}/v1", self.addr),
            Api::Anthropic => format!("http://{}", self.addr),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    fn assert_no_violations(&self) {
        let v = self.with(|s| s.violations.clone());
        assert!(
            v.is_empty(),
            "requests broke the protocol:\n{}",
            v.join("\n")
        );
    }
}

fn serve(mut conn: TcpStream, state: &Mutex<State>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let len: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    let latency = state.lock().unwrap().latency;
    let (status, extra, response) = respond(state, &path, &header, &body);
    std::thread::sleep(latency);
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        _ => "Error",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
        response.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(response.as_bytes());
}

/// Checks one request and decides the response: (status, extra header lines, body).
fn respond(
    state: &Mutex<State>,
    path: &str,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> (u16, String, String) {
    let mut s = state.lock().unwrap();
    s.requests += 1;
    let mut bad = Vec::new();
    let (want_path, key_ok) = match s.api {
        Api::Openai => (
            "/v1/chat/completions",
            header("authorization") == Some(format!("Bearer {KEY}")),
        ),
        Api::Anthropic => {
            if header("anthropic-version").as_deref() != Some("2023-06-01") {
                bad.push("no anthropic-version: 2023-06-01 header".to_string());
            }
            ("/v1/messages", header("x-api-key").as_deref() == Some(KEY))
        }
    };
    if path != want_path {
        bad.push(format!("path {path}, expected {want_path}"));
    }
    if !key_ok {
        bad.push("the key is not in the expected header".to_string());
    }
    let req: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            s.violations.push(format!("request body is not JSON: {e}"));
            return (400, String::new(), "{}".into());
        }
    };
    if req["model"] != JUDGE {
        bad.push(format!("model {}", req["model"]));
    }
    // The conversation: the first user message is the prompt; later ones are re-asks.
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let users: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let prompt = users.first().copied().unwrap_or("");
    let Some(q) = s
        .questions
        .iter()
        .find(|q| prompt.contains(q["question"].as_str().unwrap()))
        .cloned()
    else {
        s.violations
            .push("the prompt names no benchmark question".into());
        return (400, String::new(), "{}".into());
    };
    if users.len() > 1 {
        s.reasks += 1;
        let last = users.last().unwrap();
        if !last.contains("cannot be accepted") || msgs[msgs.len() - 2]["role"] != "assistant" {
            bad.push("a re-ask without the previous reply and the errors".into());
        }
    }
    for item in q["checklist"].as_array().unwrap() {
        for tier in item["rubric"].as_array().unwrap() {
            if !prompt.contains(tier["criterion"].as_str().unwrap()) {
                bad.push(format!("rubric tier {tier} missing from the prompt"));
            }
        }
    }
    let system = match s.api {
        Api::Openai => msgs
            .first()
            .and_then(|m| m["content"].as_str())
            .unwrap_or(""),
        Api::Anthropic => req["system"].as_str().unwrap_or(""),
    };
    if !system.contains("rationale") {
        bad.push("the system prompt does not ask for the rationale".into());
    }
    let schema = match (s.api, s.mode) {
        (Api::Openai, Mode::Schema) => {
            let rf = &req["response_format"];
            if rf["type"] != "json_schema" || rf["json_schema"]["strict"] != true {
                bad.push(format!("response_format {rf}"));
            }
            Some(rf["json_schema"]["schema"].clone())
        }
        (Api::Anthropic, Mode::Tool) => {
            let name = &req["tools"][0]["name"];
            if req["tool_choice"] != json!({"type": "tool", "name": name}) {
                bad.push(format!("tool_choice {}", req["tool_choice"]));
            }
            Some(req["tools"][0]["input_schema"].clone())
        }
        (_, Mode::Prompt) => {
            for field in ["response_format", "tools", "tool_choice", "output_config"] {
                if req.get(field).is_some() {
                    bad.push(format!("prompt mode sent `{field}`"));
                }
            }
            if !prompt.contains("\"enum\":[0,3,5]") {
                bad.push("prompt mode without the schema in the prompt".into());
            }
            None
        }
        other => panic!("mode {other:?} not served by this test server"),
    };
    if let Some(schema) = schema {
        check_schema(&schema, &q, &mut bad);
    }
    let qid = q["id"].as_str().unwrap().to_string();
    s.violations
        .extend(bad.iter().map(|b| format!("{qid}: {b}")));
    if !bad.is_empty() {
        return (400, String::new(), json!({"error": bad}).to_string());
    }

    if s.refused_echoing_key.contains(&qid) {
        let msg = format!("Incorrect API key provided: {KEY}");
        return (
            400,
            String::new(),
            json!({"error": {"message": msg}}).to_string(),
        );
    }
    let mut reply = good_reply(&q);
    match s.faults.pop_front() {
        Some(Fault::RateLimited) => {
            return (
                429,
                "retry-after: 1\r\n".into(),
                r#"{"error":"slow down"}"#.into(),
            );
        }
        Some(Fault::ServerError) => return (500, String::new(), "upstream exploded".into()),
        Some(Fault::QuotaExhausted) => {
            let body = r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#;
            return (429, "retry-after: 0\r\n".into(), body.into());
        }
        Some(Fault::HtmlBody) => {
            return (
                200,
                String::new(),
                "<html><body>Bad gateway</body></html>".into(),
            );
        }
        Some(Fault::NotJsonReply) => reply = "I think the answer is quite good.".into(),
        Some(Fault::ScoreOutsideEnum) => reply = invalid_reply(&q),
        None => {}
    }
    if s.always_invalid.contains(&qid) {
        reply = invalid_reply(&q);
    }
    if s.fenced {
        reply = format!("Here is the grading:\n```json\n{reply}\n```\nDone.");
    }
    (200, String::new(), envelope(s.api, s.mode, &reply))
}

/// The schema must be the one of SPEC: items in checklist order, enums = allowed sets,
/// rationale before score, everything required, no additional properties.
fn check_schema(schema: &Value, q: &Value, bad: &mut Vec<String>) {
    let items = q["checklist"].as_array().unwrap();
    let ids: Vec<&Value> = items.iter().map(|i| &i["id"]).collect();
    if schema["type"] != "object" || schema["additionalProperties"] != false {
        bad.push(format!("top of schema {schema}"));
    }
    if schema["required"]
        .as_array()
        .map(|r| r.iter().collect::<Vec<_>>())
        != Some(ids)
    {
        bad.push(format!("required {}", schema["required"]));
    }
    if schema["properties"].as_object().map(|p| p.len()) != Some(items.len()) {
        bad.push("schema properties are not exactly the items".into());
    }
    for item in items {
        let p = &schema["properties"][item["id"].as_str().unwrap()];
        let mut allowed: Vec<u64> = item["rubric"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["score"].as_u64().unwrap())
            .collect();
        allowed.sort_unstable();
        let mut got: Vec<u64> = p["properties"]["score"]["enum"]
            .as_array()
            .map(|e| e.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        got.sort_unstable();
        if got != allowed {
            bad.push(format!(
                "enum of {} is {got:?}, allowed {allowed:?}",
                item["id"]
            ));
        }
        if p["properties"]["score"]["type"] != "integer"
            || p["properties"]["rationale"]["type"] != "string"
        {
            bad.push(format!("types of {}", item["id"]));
        }
        if p["required"] != json!(["rationale", "score"]) {
            bad.push(format!("required of {} is {}", item["id"], p["required"]));
        }
        if p["additionalProperties"] != false {
            bad.push(format!("additionalProperties of {}", item["id"]));
        }
    }
}

/// A valid reply: each item gets its middle allowed score, rationale first.
fn good_reply(q: &Value) -> String {
    let mut out = serde_json::Map::new();
    for item in q["checklist"].as_array().unwrap() {
        let mut allowed: Vec<u64> = item["rubric"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["score"].as_u64().unwrap())
            .collect();
        allowed.sort_unstable();
        out.insert(
            item["id"].as_str().unwrap().into(),
            json!({"rationale": format!("The answer covers {}.", item["key_point"]),
                   "score": allowed[allowed.len() / 2]}),
        );
    }
    Value::Object(out).to_string()
}

fn invalid_reply(q: &Value) -> String {
    let mut v: Value = serde_json::from_str(&good_reply(q)).unwrap();
    let first = q["checklist"][0]["id"].as_str().unwrap();
    v[first]["score"] = json!(7);
    v.to_string()
}

fn envelope(api: Api, mode: Mode, reply: &str) -> String {
    match (api, mode) {
        (Api::Openai, _) => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": JUDGE,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        }),
        (Api::Anthropic, Mode::Tool) => {
            let input: Value =
                serde_json::from_str(reply).unwrap_or_else(|_| json!({"text": reply}));
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": JUDGE,
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "checklist_judgment",
                             "input": input}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 100, "output_tokens": 20}
            })
        }
        (Api::Anthropic, _) => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": JUDGE,
            "content": [{"type": "text", "text": reply}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 100, "output_tokens": 20}
        }),
    }
    .to_string()
}

// ---------------------------------------------------------------------------------------------

/// Answers to the golden benchmark: five usable ones and one failed run.
fn write_answers(dir: &Path) -> PathBuf {
    let rows = [
        json!({"question_id": "q1", "model": "A", "attempt": 0, "answer": "A on q1"}),
        json!({"question_id": "q2", "model": "A", "attempt": 0, "answer": "A on q2"}),
        json!({"question_id": "q3", "model": "A", "attempt": 0, "answer": "A on q3"}),
        json!({"question_id": "q1", "model": "B", "attempt": 0, "answer": "B on q1"}),
        json!({"question_id": "q3", "model": "B", "attempt": 1, "answer": "B on q3, again"}),
        json!({"question_id": "q2", "model": "B", "attempt": 0, "answer": null, "error": "agent timed out"}),
    ];
    let p = dir.join("answers.jsonl");
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// The keys the answers above give for `runs` judge runs.
fn expected_keys(runs: u32) -> HashSet<(String, String, u64, u64)> {
    let answers = [
        ("q1", "A", 0),
        ("q2", "A", 0),
        ("q3", "A", 0),
        ("q1", "B", 0),
        ("q3", "B", 1),
    ];
    answers
        .iter()
        .flat_map(|&(q, m, a)| {
            (0..u64::from(runs)).map(move |r| (q.to_string(), m.to_string(), a, r))
        })
        .collect()
}

fn judge_cmd(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Command {
    let provider = match api.with(|s| s.api) {
        Api::Openai => "openai",
        Api::Anthropic => "anthropic",
    };
    let mut c = Command::new(BIN);
    c.env_clear()
        .args(["judge", "--benchmark", BENCHMARK, "--answers"])
        .arg(write_answers(dir))
        .arg("--out")
        .arg(out)
        .args(["--provider", provider, "--model", JUDGE, "--base-url"])
        .arg(api.base_url())
        .args(["--backoff-ms", "20", "--timeout-s", "20"])
        .args(extra);
    c.env(
        match api.with(|s| s.api) {
            Api::Openai => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        },
        KEY,
    );
    c
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ran(out: Output) -> Ran {
    Ran {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn judge(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Ran {
    let r = ran(judge_cmd(api, dir, out, extra).output().unwrap());
    assert!(
        !r.stdout.contains(KEY) && !r.stderr.contains(KEY),
        "the key leaked:\n{}",
        r.stderr
    );
    r
}

fn repoprobe(args: &[&str]) -> Ran {
    ran(Command::new(BIN).env_clear().args(args).output().unwrap())
}

/// The records of a JSONL file, each checked to be a whole JSON line.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    assert!(!text.contains(KEY), "{} holds the key", path.display());
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{} ends mid-line",
        path.display()
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect()
}

fn key(r: &Value) -> (String, String, u64, u64) {
    assert_eq!(r["judge"], JUDGE);
    (
        r["question_id"].as_str().unwrap().into(),
        r["model"].as_str().unwrap().into(),
        r["attempt"].as_u64().unwrap(),
        r["judge_run"].as_u64().unwrap(),
    )
}

/// Every key exactly once, and the file valid against the benchmark.
fn assert_judged_exactly(out: &Path, want: &HashSet<(String, String, u64, u64)>) {
    let recs = records(out);
    let keys: Vec<_> = recs.iter().map(key).collect();
    let unique: HashSet<_> = keys.iter().cloned().collect();
    assert_eq!(keys.len(), unique.len(), "a key is duplicated: {keys:?}");
    assert_eq!(&unique, want, "keys lost or unexpected");
    let v = repoprobe(&["validate", BENCHMARK, out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "validate:\n{}{}", v.stdout, v.stderr);
}

#[test]
fn a_run_under_faults_ends_with_every_key_judged_and_valid() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| {
        s.faults = VecDeque::from([
            Fault::RateLimited,
            Fault::ServerError,
            Fault::NotJsonReply,
            Fault::HtmlBody,
            Fault::ScoreOutsideEnum,
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judgments.jsonl");
    let started = Instant::now();
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "2", "--concurrency", "3"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retry-after: 1 was not honoured"
    );
    assert_judged_exactly(&out, &expected_keys(2));
    // 10 keys; 3 HTTP faults retried and 2 invalid replies re-asked (a re-ask may itself meet an
    // HTTP fault and be sent twice, so the server sees at least 2 re-ask requests).
    let (requests, reasks) = api.with(|s| (s.requests, s.reasks));
    assert_eq!(requests, 15);
    assert!(reasks >= 2, "{reasks} re-asks");
    assert!(r.stderr.contains("10 judged"), "{}", r.stderr);
    assert!(r.stderr.contains("1 answer(s) skipped"), "{}", r.stderr);
    assert!(
        r.stderr.contains("5 retries (3 HTTP, 2 re-asks)"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("judgments.failures.ndjson").exists());
    for rec in records(&out) {
        assert_eq!(rec["prompt_version"], "checklist-judge-v1");
        assert_eq!(rec["provider"], "openai");
        assert!(rec["usage"]["input_tokens"].as_u64().unwrap() >= 100);
        let raw: Value = serde_json::from_str(rec["raw_reply"].as_str().unwrap()).unwrap();
        assert_eq!(raw["k1"]["score"], rec["items"][0]["score"]);
        let ids: Vec<&str> = rec["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["k1", "k2", "clarity"]);
    }
    // The output scores like any judgments file.
    let s = repoprobe(&[
        "score",
        BENCHMARK,
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let report: Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(report["models"].as_array().unwrap().len(), 2);
}

#[test]
fn a_resumed_run_repairs_a_torn_line_and_loses_or_duplicates_no_key() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    assert_eq!(judge(&api, dir.path(), &out, &["--runs", "1"]).code, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    // Two whole lines and the first half of a third, as a kill mid-write leaves them.
    let partial = format!(
        "{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 2]
    );
    std::fs::write(&out, partial).unwrap();

    api.with(|s| {
        s.requests = 0;
        s.faults = VecDeque::from([Fault::ServerError]);
    });
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "2", "--concurrency", "4"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("the last line was cut off"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("8 judged, 2 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 9);
    assert_judged_exactly(&out, &expected_keys(2));

    // Nothing left to do: no call, no line.
    api.with(|s| s.requests = 0);
    let r = judge(&api, dir.path(), &out, &["--runs", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("0 judged, 10 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 0);
    assert_judged_exactly(&out, &expected_keys(2));
    api.assert_no_violations();
}

#[test]
fn a_run_killed_with_sigkill_resumes_without_losing_or_duplicating_a_key() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.latency = Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let mut child = judge_cmd(
        &api,
        dir.path(),
        &out,
        &["--runs", "3", "--concurrency", "2"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let lines = || std::fs::read(&out).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
    while lines() < 4 {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let written = records(&out).len();
    assert!(written < 15, "the run finished before it was killed");

    api.with(|s| s.latency = Duration::ZERO);
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "3", "--concurrency", "2"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_judged_exactly(&out, &expected_keys(3));
    api.assert_no_violations();
}

#[test]
fn anthropic_gets_a_forced_tool_and_the_key_in_x_api_key() {
    let api = FakeApi::start(Api::Anthropic, Mode::Tool);
    api.with(|s| s.faults = VecDeque::from([Fault::ScoreOutsideEnum, Fault::RateLimited]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--temperature", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert_judged_exactly(&out, &expected_keys(1));
    let recs = records(&out);
    assert!(
        recs.iter()
            .all(|r| r["provider"] == "anthropic" && r["structured"] == "tool")
    );
    assert_eq!(api.with(|s| s.reasks), 1);
}

#[test]
fn prompt_mode_sends_no_schema_field_and_accepts_fenced_replies() {
    let api = FakeApi::start(Api::Openai, Mode::Prompt);
    api.with(|s| {
        s.fenced = true;
        s.faults = VecDeque::from([Fault::NotJsonReply]);
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--structured", "prompt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert_judged_exactly(&out, &expected_keys(1));
    let rec = &records(&out)[0];
    assert!(
        rec["raw_reply"]
            .as_str()
            .unwrap()
            .starts_with("Here is the grading")
    );
}

#[test]
fn keys_that_stay_invalid_become_failure_records_never_judgments() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| {
        s.always_invalid = vec!["q2".into()];
        s.refused_echoing_key = vec!["q3".into()];
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let failures = dir.path().join("j.failures.ndjson");
    let r = judge(&api, dir.path(), &out, &["--max-retries", "1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    api.assert_no_violations();
    // q2: the first ask and one re-ask; q3: one refused call, not retried.
    assert_eq!(api.with(|s| s.requests), 4 + 2);
    let judged: HashSet<_> = records(&out).iter().map(key).collect();
    let want: HashSet<_> = expected_keys(1)
        .into_iter()
        .filter(|k| k.0 == "q1")
        .collect();
    assert_eq!(judged, want);
    let failed = records(&failures);
    assert_eq!(failed.len(), 3, "{failed:#?}");
    for f in &failed {
        assert_eq!(f["status"], "failed");
        assert!(f.get("items").is_none());
        match f["question_id"].as_str().unwrap() {
            "q2" => {
                assert!(
                    f["reason"]
                        .as_str()
                        .unwrap()
                        .contains("still invalid after 1 re-ask")
                );
                assert!(
                    f["violations"][0]
                        .as_str()
                        .unwrap()
                        .contains("score 7 is not allowed")
                );
                assert!(f["raw_reply"].is_string());
            }
            "q3" => {
                let reason = f["reason"].as_str().unwrap();
                assert!(
                    reason.contains("HTTP 400") && reason.contains("[redacted]"),
                    "{reason}"
                );
            }
            other => panic!("unexpected failure for {other}"),
        }
    }
    assert!(r.stderr.contains("3 failed"), "{}", r.stderr);
    // The judgments stay valid and scoreable; the failures are not judgments.
    let v = repoprobe(&["validate", BENCHMARK, out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}", v.stdout);

    // A rerun against a healthy server tries the failed keys again.
    api.with(|s| {
        s.always_invalid.clear();
        s.refused_echoing_key.clear();
    });
    let r = judge(&api, dir.path(), &out, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_judged_exactly(&out, &expected_keys(1));
}

#[test]
fn without_the_key_in_the_environment_nothing_is_called() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let mut c = judge_cmd(&api, dir.path(), &out, &[]);
    c.env_remove("OPENAI_API_KEY");
    let r = ran(c.output().unwrap());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("OPENAI_API_KEY is not set"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 0);
    assert!(!out.exists());
}

#[test]
fn a_429_for_an_exhausted_quota_is_not_retried() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.faults = VecDeque::from([Fault::QuotaExhausted]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--concurrency", "1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(api.with(|s| s.requests), 5, "the quota 429 was retried");
    let failed = records(&dir.path().join("j.failures.ndjson"));
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["reason"].as_str().unwrap().contains("HTTP 429"));
    assert_eq!(records(&out).len(), 4);
}
