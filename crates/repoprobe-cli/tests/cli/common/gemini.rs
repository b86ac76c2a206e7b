//! The fake Gemini API the real Gemini CLI (`repoprobe answer --agent gemini`) runs against, at
//! the base URL `GOOGLE_GEMINI_BASE_URL` sets: `POST /v1beta/models/{model}:streamGenerateContent
//! ?alt=sse` (and `:generateContent`), key in `x-goog-api-key`. The scripted model drives Gemini
//! CLI's own file tools as the request declares them (list the directory, search, read the file
//! found), then answers quoting what they returned (and the key it was sent, which the run must
//! scrub).

use super::agent_cli::Seen;
use repoprobe_test_support::reply::{gemini_response, gemini_sse};
use repoprobe_test_support::{FakeServer, Request, Response};
use serde_json::{Value, json};

pub const KEY: &str = "gk-gemini-e2e-key-93ab1c";
pub const MODEL: &str = "gemini-2.5-pro";

/// Tokens each response reports (prompt, cached, candidates).
pub const USAGE: (u64, u64, u64) = (800, 100, 40);

/// The tools the model calls, in order, and the argument it gives each: (tool, value).
pub const CALLS: [(&str, &str); 3] = [
    ("list_directory", "docs"),
    ("grep_search", "flux"),
    ("read_file", "docs/notes.txt"),
];

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Script {
    Answer,
    /// The first call answered; then one 429 and 500 for good.
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
    let path = req.path.as_str();
    let generate = path.contains(":streamGenerateContent") || path.contains(":generateContent");
    if req.method != "POST" || !path.starts_with("/v1beta/models/") || !generate {
        return Response::json(
            404,
            r#"{"error":{"code":404,"message":"not here","status":"NOT_FOUND"}}"#,
        );
    }
    if req.header("x-goog-api-key") != Some(KEY) {
        return Response::json(
            400,
            r#"{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}"#,
        );
    }
    if script == Script::FailMidRun && n >= 2 {
        return if n == 2 {
            Response::json(
                429,
                r#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}"#,
            )
        } else {
            Response::json(
                500,
                r#"{"error":{"code":500,"message":"upstream exploded","status":"INTERNAL"}}"#,
            )
        };
    }
    let body = req.json();
    let responses: Vec<Value> = body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").cloned())
        .collect();
    let k = responses.len();
    let parts = if k < CALLS.len() {
        let (tool, value) = CALLS[k];
        let (name, arg) = declared(&body, tool);
        vec![json!({"functionCall": {"name": name, "args": {arg: value}}})]
    } else {
        let said: Vec<String> = responses
            .iter()
            .map(|r| r["response"].to_string())
            .collect();
        vec![
            json!({"text": format!("The tools returned:\n{}\n(my key is {KEY})", said.join("\n---\n"))}),
        ]
    };
    let (p, c, o) = USAGE;
    let reply = gemini_response(MODEL, parts, p, c, o);
    if path.contains(":streamGenerateContent") {
        Response::new(200, gemini_sse(&[reply])).header("content-type", "text/event-stream")
    } else {
        Response::json(200, reply.to_string())
    }
}

/// The declared tool named `tool` (or, for the search, whichever name the CLI gives it) and the
/// name of its first required parameter.
fn declared(body: &Value, tool: &str) -> (String, String) {
    let decls: Vec<&Value> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .collect();
    let names: Vec<&str> = decls.iter().filter_map(|d| d["name"].as_str()).collect();
    let d = decls
        .iter()
        .find(|d| d["name"] == tool)
        .or_else(|| {
            decls.iter().find(|d| {
                tool == "grep_search" && d["name"].as_str().is_some_and(|n| n.contains("search"))
            })
        })
        .unwrap_or_else(|| panic!("no tool {tool} among {names:?}"));
    let schema = if d["parametersJsonSchema"].is_object() {
        &d["parametersJsonSchema"]
    } else {
        &d["parameters"]
    };
    let arg = schema["required"][0].as_str().unwrap_or("path").to_string();
    (d["name"].as_str().unwrap().to_string(), arg)
}
