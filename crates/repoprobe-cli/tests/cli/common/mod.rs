//! What the end-to-end tests of the live calls (`judge.rs`, `llm_commands.rs`) share: the real
//! binary, run with a cleared environment, against a real HTTP server on 127.0.0.1 that each
//! test starts.
//!
//! The server is the tests' one fake API server (`repoprobe_test_support::FakeServer`) with a
//! handler that speaks the judges' protocols: it checks every request (path, key header, model, schema with the allowed scores as enums,
//! rationale before score; for the other commands their own schemas and prompts, see [`Kind`])
//! and records each violation; tests assert there are none.

pub mod agent_cli;
pub mod batch;
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod needs;
pub mod slurm;
pub mod trajectory;
pub mod wait;

pub use repoprobe_test_support::reply::{Api, Mode};
use repoprobe_test_support::{FakeServer, Request, Response};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const BENCHMARK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/golden/benchmark.jsonl"
);
pub const BIN: &str = env!("CARGO_BIN_EXE_repoprobe");
pub const KEY: &str = "sk-test-Zq81SECRETkey0042";
pub const JUDGE: &str = "judge-model";
/// The path with lines the fake checklist writer gives q1's k1 as evidence; q1's source
/// reference answer names it.
pub const CHECKLIST_EVIDENCE_CITED: &str = "src/flows/llm_flow.py:210-264";

/// A fault the server injects into the next request it receives.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
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

/// Which command the server speaks to: it decides the checks and the replies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Judge,
    Scalar,
    Classify,
    MakeChecklist,
}

pub struct State {
    pub kind: Kind,
    /// `judge-scalar`'s scale: replies and schema checks use it.
    pub scale: u32,
    pub api: Api,
    pub mode: Mode,
    pub questions: Vec<Value>,
    pub faults: VecDeque<Fault>,
    /// Questions (by id) whose replies always score item 0 outside its enum.
    pub always_invalid: Vec<String>,
    /// Questions (by id) refused with a 400 whose body echoes the key.
    pub refused_echoing_key: Vec<String>,
    /// Delay before each response.
    pub latency: Duration,
    /// Wrap replies in a ```json fence with prose around it.
    pub fenced: bool,
    pub requests: usize,
    pub reasks: usize,
    pub violations: Vec<String>,
    /// Header lines (`name: value\r\n`) added to the next response only.
    pub headers_once: Option<String>,
    /// When each request arrived.
    pub arrivals: Vec<std::time::Instant>,
    /// Each request's body, as sent.
    pub bodies: Vec<String>,
    /// The batch APIs' side (`--batch`).
    pub batch: batch::Batches,
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
}

pub struct FakeApi {
    pub addr: SocketAddr,
    pub state: Arc<Mutex<State>>,
    /// Kept so that the server lives as long as the test's handle.
    _server: FakeServer,
}

impl FakeApi {
    pub fn start(api: Api, mode: Mode) -> FakeApi {
        FakeApi::start_for(Kind::Judge, api, mode)
    }

    pub fn start_for(kind: Kind, api: Api, mode: Mode) -> FakeApi {
        let questions = std::fs::read_to_string(BENCHMARK)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let state = Arc::new(Mutex::new(State {
            kind,
            scale: 10,
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
            headers_once: None,
            arrivals: Vec::new(),
            bodies: Vec::new(),
            batch: batch::Batches::default(),
            origin: String::new(),
        }));
        let st = Arc::clone(&state);
        let server = FakeServer::start(move |req| serve(req, &st));
        let addr = server.addr();
        state.lock().unwrap().origin = server.origin();
        FakeApi {
            addr,
            state,
            _server: server,
        }
    }

    pub fn base_url(&self) -> String {
        match self.state.lock().unwrap().api {
            Api::Openai => format!("http://{}/v1", self.addr),
            Api::Anthropic => format!("http://{}", self.addr),
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        f(&mut self.state.lock().unwrap())
    }

    pub fn assert_no_violations(&self) {
        let v = self.with(|s| s.violations.clone());
        assert!(
            v.is_empty(),
            "requests broke the protocol:\n{}",
            v.join("\n")
        );
    }
}

/// The pages a user reads, in order: README.md, then docs/*.md by name (the docs tests read
/// every one).
pub fn doc_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    std::iter::once(root.join("README.md"))
        .chain(docs)
        .collect()
}

/// Answers one request: the batch APIs' routes, else a model call checked by [`respond`].
pub fn serve(req: &Request, state: &Mutex<State>) -> Response {
    let header = |name: &str| req.header(name).map(str::to_string);
    let (latency, once) = {
        let mut s = state.lock().unwrap();
        s.arrivals.push(std::time::Instant::now());
        (s.latency, s.headers_once.take())
    };
    let (status, mut extra, response) =
        match batch::route(state, &req.method, &req.path, &header, &req.body) {
            Some(r) => r,
            None => respond(state, &req.path, &header, &req.body),
        };
    extra.push_str(&once.unwrap_or_default());
    std::thread::sleep(latency);
    let mut r = Response::json(status, response);
    for line in extra.split("\r\n").filter(|l| !l.is_empty()) {
        let (k, v) = line.split_once(':').expect("a header line");
        r = r.header(k.trim(), v.trim());
    }
    r
}

/// A response of the test-support server as (status, extra header lines, body).
fn parts(r: Response) -> (u16, String, String) {
    let headers = r
        .headers
        .iter()
        .filter(|(k, _)| k != "content-type")
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    (r.status, headers, String::from_utf8(r.body).unwrap())
}

/// Checks one request and decides the response: (status, extra header lines, body).
pub fn respond(
    state: &Mutex<State>,
    path: &str,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> (u16, String, String) {
    let mut s = state.lock().unwrap();
    s.requests += 1;
    s.bodies.push(String::from_utf8_lossy(body).into_owned());
    let mut bad = check_transport(s.api, path, header);
    let req: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            s.violations.push(format!("request body is not JSON: {e}"));
            return (400, String::new(), "{}".into());
        }
    };
    if req["model"] != JUDGE && !req["model"].as_str().is_some_and(|m| m.starts_with(JUDGE)) {
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
    check_prompt(s.kind, prompt, &q, &mut bad);
    check_system(&s, &req, &msgs, &mut bad);
    if let Some(schema) = reply_schema(&s, &req, prompt, &mut bad) {
        match s.kind {
            Kind::Judge => check_schema(&schema, &q, &mut bad),
            kind => check_other_schema(kind, s.scale, &schema, &mut bad),
        }
    }
    let qid = q["id"].as_str().unwrap().to_string();
    s.violations
        .extend(bad.iter().map(|b| format!("{qid}: {b}")));
    if !bad.is_empty() {
        return (400, String::new(), json!({"error": bad}).to_string());
    }
    reply_to(&mut s, &q, &qid)
}

/// The provider's path and key header (and Anthropic's version header): what is wrong with them.
fn check_transport(api: Api, path: &str, header: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut bad = Vec::new();
    let (want_path, key_ok) = match api {
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
    bad
}

/// The system prompt must state the command's rule (rationales; checklists summing to 9).
fn check_system(s: &State, req: &Value, msgs: &[Value], bad: &mut Vec<String>) {
    let system = match s.api {
        Api::Openai => msgs
            .first()
            .and_then(|m| m["content"].as_str())
            .unwrap_or(""),
        Api::Anthropic => req["system"].as_str().unwrap_or(""),
    };
    let asks = if s.kind == Kind::MakeChecklist {
        "sum to 9"
    } else {
        "rationale"
    };
    if !system.contains(asks) {
        bad.push(format!("the system prompt does not say {asks:?}"));
    }
}

/// The reply schema the request carries for its structured mode (`None` in prompt mode, whose
/// prompt must hold the schema instead).
fn reply_schema(s: &State, req: &Value, prompt: &str, bad: &mut Vec<String>) -> Option<Value> {
    match (s.api, s.mode) {
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
            let needle = match s.kind {
                Kind::Judge => "\"enum\":[0,3,5]".to_string(),
                Kind::Scalar => format!("\"maximum\":{}", s.scale),
                Kind::Classify => "\"enum\":[\"edit_bias\"".to_string(),
                Kind::MakeChecklist => "\"maxItems\":5".to_string(),
            };
            if !prompt.contains(&needle) {
                bad.push("prompt mode without the schema in the prompt".into());
            }
            None
        }
        other => panic!("mode {other:?} not served by this test server"),
    }
}

/// The answer to a request that kept the protocol: the next injected fault, else the reply the
/// test asked for question `q`.
fn reply_to(s: &mut State, q: &Value, qid: &str) -> (u16, String, String) {
    if s.refused_echoing_key.iter().any(|r| r == qid) {
        let msg = format!("Incorrect API key provided: {KEY}");
        return (
            400,
            String::new(),
            json!({"error": {"message": msg}}).to_string(),
        );
    }
    let mut reply = reply_for(s.kind, s.scale, q, false);
    use repoprobe_test_support::Fault as Transport;
    match s.faults.pop_front() {
        Some(Fault::RateLimited) => return parts(Transport::RateLimited.response()),
        Some(Fault::ServerError) => return parts(Transport::ServerError.response()),
        Some(Fault::QuotaExhausted) => return parts(Transport::QuotaExhausted.response()),
        Some(Fault::HtmlBody) => return parts(Transport::HtmlBody.response()),
        Some(Fault::NotJsonReply) => reply = "I think the answer is quite good.".into(),
        Some(Fault::ScoreOutsideEnum) => reply = reply_for(s.kind, s.scale, q, true),
        None => {}
    }
    if s.always_invalid.iter().any(|r| r == qid) {
        reply = reply_for(s.kind, s.scale, q, true);
    }
    if s.fenced {
        reply = format!("Here is the grading:\n```json\n{reply}\n```\nDone.");
    }
    (200, String::new(), envelope(s.api, s.mode, &reply))
}

/// What each command's prompt must hold besides the question.
fn check_prompt(kind: Kind, prompt: &str, q: &Value, bad: &mut Vec<String>) {
    let needles: Vec<String> = match kind {
        Kind::Judge => q["checklist"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|i| i["rubric"].as_array().unwrap())
            .map(|t| t["criterion"].as_str().unwrap().to_string())
            .collect(),
        Kind::Scalar => [
            "correctness",
            "completeness",
            "relevance",
            "clarity",
            "reasoning",
        ]
        .iter()
        .map(|d| format!("`{d}`"))
        .collect(),
        Kind::Classify => vec![
            "the model writes new code or configuration instead".into(),
            "`shallow_explanation`".into(),
            "`hallucination`".into(),
            "Checklist score:".into(),
        ],
        Kind::MakeChecklist => vec![q["reference_answer"].as_str().unwrap().into()],
    };
    for n in needles {
        if !prompt.contains(&n) {
            bad.push(format!("{n:?} missing from the prompt"));
        }
    }
}

/// The reply schemas of `judge-scalar`, `classify-failures` and `make-checklist`.
fn check_other_schema(kind: Kind, scale: u32, schema: &Value, bad: &mut Vec<String>) {
    if schema["type"] != "object" || schema["additionalProperties"] != false {
        bad.push(format!("top of schema {schema}"));
    }
    let props = &schema["properties"];
    match kind {
        Kind::Scalar => {
            let dims = [
                "correctness",
                "completeness",
                "relevance",
                "clarity",
                "reasoning",
            ];
            let mut want = vec![json!("rationale")];
            want.extend(dims.iter().map(|d| json!(d)));
            if schema["required"] != Value::Array(want) {
                bad.push(format!("required {}", schema["required"]));
            }
            for d in dims {
                let p = &props[d];
                if p["type"] != "integer" || p["minimum"] != 1 || p["maximum"] != scale {
                    bad.push(format!("dimension {d}: {p}"));
                }
            }
        }
        Kind::Classify => {
            let modes = json!([
                "edit_bias",
                "shallow_explanation",
                "misinterpretation",
                "context_miss",
                "hallucination"
            ]);
            if props["mode"]["enum"] != modes || schema["required"] != json!(["rationale", "mode"])
            {
                bad.push(format!("mode schema {schema}"));
            }
        }
        Kind::MakeChecklist => {
            let item = &props["checklist"]["items"];
            if item["properties"]["kind"]["enum"] != json!(["knowledge", "clarity"])
                || item["additionalProperties"] != false
                || item["properties"]["evidence"]["items"]["type"] != "string"
                || !item["required"]
                    .as_array()
                    .is_some_and(|r| r.contains(&json!("evidence")))
            {
                bad.push(format!("checklist schema {schema}"));
            }
        }
        Kind::Judge => unreachable!(),
    }
}

/// A reply of `kind` for question `q`: valid, or breaking one rule of the command.
pub fn reply_for(kind: Kind, scale: u32, q: &Value, invalid: bool) -> String {
    match (kind, invalid) {
        (Kind::Judge, false) => good_reply(q),
        (Kind::Judge, true) => invalid_reply(q),
        // Written by hand: `json!` sorts keys, and the rationale must come first.
        (Kind::Scalar, _) => format!(
            r#"{{"rationale": "Covers most of the reference.", "correctness": {}, "completeness": {}, "relevance": {scale}, "clarity": 1, "reasoning": {}}}"#,
            if invalid { scale + 1 } else { scale / 2 },
            scale / 2 + 1,
            scale - 1
        ),
        (Kind::Classify, _) => format!(
            r#"{{"rationale": "It proposes a patch instead of explaining.", "mode": "{}"}}"#,
            if invalid { "laziness" } else { "edit_bias" }
        ),
        (Kind::MakeChecklist, _) => {
            // Every item has `evidence` (the schema requires it): q1's k1 the file its source's
            // reference answer names (`llm_commands::write_sources`), once with lines and once
            // as `./`, so that the reply check's normalising and merging shows.
            let mut checklist = q["checklist"].clone();
            for item in checklist.as_array_mut().into_iter().flatten() {
                let paths = if q["id"] == "q1" && item["id"] == "k1" {
                    json!([CHECKLIST_EVIDENCE_CITED, "./src/flows/llm_flow.py"])
                } else {
                    json!([])
                };
                item["evidence"] = paths;
            }
            if invalid {
                // The knowledge weights then sum to 8, and k2's rubric lacks its full score.
                checklist[1]["weight"] = json!(3);
            }
            json!({"checklist": checklist}).to_string()
        }
    }
}

/// The schema must be the one of docs/format.md: every item once, enums = allowed sets,
/// rationale before score, everything required, no additional properties.
pub fn check_schema(schema: &Value, q: &Value, bad: &mut Vec<String>) {
    let items = q["checklist"].as_array().unwrap();
    let ids: Vec<&Value> = items.iter().map(|i| &i["id"]).collect();
    if schema["type"] != "object" || schema["additionalProperties"] != false {
        bad.push(format!("top of schema {schema}"));
    }
    // Every item once, in the order the prompt presents them: the checklist's, or with
    // `--shuffle-items` the answer's own order (the records' `item_order` test holds which).
    let mut required: Option<Vec<&Value>> = schema["required"]
        .as_array()
        .map(|r| r.iter().collect::<Vec<_>>());
    let mut ids = ids;
    if let Some(r) = required.as_mut() {
        r.sort_by_key(|v| v.to_string());
    }
    ids.sort_by_key(|v| v.to_string());
    if required != Some(ids) {
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
pub fn good_reply(q: &Value) -> String {
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

pub fn invalid_reply(q: &Value) -> String {
    let mut v: Value = serde_json::from_str(&good_reply(q)).unwrap();
    let first = q["checklist"][0]["id"].as_str().unwrap();
    v[first]["score"] = json!(7);
    v.to_string()
}

pub fn envelope(api: Api, mode: Mode, reply: &str) -> String {
    repoprobe_test_support::reply::envelope(api, mode, JUDGE, reply)
}

// ---------------------------------------------------------------------------------------------

/// Answers to the golden benchmark: five usable ones and one failed run.
pub fn write_answers(dir: &Path) -> PathBuf {
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
pub fn expected_keys(runs: u32) -> HashSet<(String, String, u64, u64)> {
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

pub fn judge_cmd(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = live_cmd(api, "judge", out);
    c.arg(BENCHMARK).arg(write_answers(dir)).args(extra);
    c
}

/// `repoprobe <command> --out OUT --provider ... --model JUDGE --base-url <api>` with the key in
/// the environment and short backoffs; the caller adds the command's inputs. `command` may be
/// a subcommand's path (`"curate make-checklist"`).
pub fn live_cmd(api: &FakeApi, command: &str, out: &Path) -> Command {
    let provider = match api.with(|s| s.api) {
        Api::Openai => "openai",
        Api::Anthropic => "anthropic",
    };
    let mut c = Command::new(BIN);
    c.env_clear()
        .args(command.split(' '))
        .arg("--out")
        .arg(out)
        .args(["--provider", provider, "--model", JUDGE, "--base-url"])
        .arg(api.base_url())
        .args(["--backoff-s", "0.02", "--timeout-s", "20"]);
    c.env(
        match api.with(|s| s.api) {
            Api::Openai => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        },
        KEY,
    );
    c
}

pub struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn ran(out: Output) -> Ran {
    Ran {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

pub fn judge(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Ran {
    run_checked(&mut judge_cmd(api, dir, out, extra))
}

/// Runs a live call to its end and checks that the key is in neither stdout nor stderr.
pub fn run_checked(c: &mut Command) -> Ran {
    let r = ran(c.output().unwrap());
    assert!(
        !r.stdout.contains(KEY) && !r.stderr.contains(KEY),
        "the key leaked:\n{}",
        r.stderr
    );
    r
}

/// Runs `git args` in `dir` (a repository a test makes) with a fixed identity; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

pub fn repoprobe(args: &[&str]) -> Ran {
    ran(Command::new(BIN).env_clear().args(args).output().unwrap())
}

/// The records of a JSONL file, each checked to be a whole JSON line.
pub fn records(path: &Path) -> Vec<Value> {
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

pub fn key(r: &Value) -> (String, String, u64, u64) {
    assert_eq!(r["judge"], JUDGE);
    (
        r["question_id"].as_str().unwrap().into(),
        r["model"].as_str().unwrap().into(),
        r["attempt"].as_u64().unwrap(),
        r["judge_run"].as_u64().unwrap(),
    )
}

/// Every key exactly once, and the file valid against the benchmark.
pub fn assert_judged_exactly(out: &Path, want: &HashSet<(String, String, u64, u64)>) {
    let recs = records(out);
    let keys: Vec<_> = recs.iter().map(key).collect();
    let unique: HashSet<_> = keys.iter().cloned().collect();
    assert_eq!(keys.len(), unique.len(), "a key is duplicated: {keys:?}");
    assert_eq!(&unique, want, "keys lost or unexpected");
    let v = repoprobe(&["validate", BENCHMARK, out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "validate:\n{}{}", v.stdout, v.stderr);
}

/// Every file under `dir` read: none holds `secret`.
pub fn assert_no_file_holds(dir: &std::path::Path, secret: &str) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            assert_no_file_holds(&p, secret);
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            assert!(!text.contains(secret), "{} holds the key", p.display());
        }
    }
}
