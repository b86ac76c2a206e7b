//! The built-in agent (`--agent builtin`): a tool-calling loop between a model behind the
//! judge's [`Client`] (each turn one [`Client::chat`], so retries, rate limits and the key's
//! scrubbing are the client's) and the read-only [`tools`] over one worktree.
//!
//! The loop sends the conversation, runs the turn's tool calls in order, sends their results,
//! and repeats until the model replies without a tool call (that text is the answer) or a limit
//! is hit. A limit, an HTTP failure or an empty final reply sets [`BuiltinRun::error`] and leaves
//! the answer empty: a run never makes an answer up. Every model turn and every tool call with
//! its full result is kept, in order, in [`BuiltinRun::transcript`]. Nothing here writes files
//! or decides where the transcript goes (the `answer` command does).

use super::tools::{self, Sandbox, ToolOutput};
use crate::verdict::{CouldNotRun, cause_of};
use repoprobe_llm::chat::{ChatMessage, ToolCall, ToolDef, ToolResult, Turn};
use repoprobe_llm::{Client, Tokens};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a tool told to stop (the run's time limit) is waited for; tools check the flag
/// between files and buffers, so this is only reached by a stuck file system.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The bounds of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most model calls (each reply is one turn, with or without tool calls).
    pub max_turns: u32,
    /// Most tokens summed over every turn's input and output, as the API reports them. Each
    /// turn re-sends the conversation, so this is what the run is billed, not the context size.
    /// Checked before each call: the turn that crosses it still completes.
    pub max_total_tokens: u64,
    /// Wall-clock time for the whole run, model calls and tools together.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_turns: 40,
            max_total_tokens: 2_000_000,
            timeout: Duration::from_secs(20 * 60),
        }
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltinRun {
    /// The model's final text; `None` when the run ended otherwise.
    pub answer: Option<String>,
    /// Why there is no answer (a limit, an HTTP failure, an empty reply).
    pub error: Option<String>,
    /// Model calls that got a reply.
    pub turns: u32,
    pub tokens: Tokens,
    pub http_retries: u32,
    /// Final replies sent back by [`run_checked`]'s check.
    pub reasks: u32,
    /// The run ended because a model call failed (after its retries) or could not be built: a
    /// fault of the service, not of the model, so the key is worth trying again; its cause
    /// from the call's error (the HTTP status, or the network).
    pub could_not_run: Option<CouldNotRun>,
    /// The last reply's `finish_reason`/`stop_reason`: `"length"` or `"max_tokens"` on an answer
    /// means it was cut at the token limit.
    pub stop_reason: Option<String>,
    /// The last reply was cut at the model's output limit (an answer may be incomplete).
    pub cut_at_token_limit: bool,
    /// In order: the system prompt and the user's, then per turn the model's reply followed by
    /// one tool entry per call (and, after a final reply [`run_checked`] sent back, the user's
    /// message); a run ending without an answer ends with its error. Written as the run's raw
    /// output, converted to ATIF by `atif::builtin`.
    pub transcript: Vec<Entry>,
}

/// One entry of a built-in run's transcript, typed once: written as `{"kind": …}` objects (the
/// raw output beside the trajectory) and read by `atif::builtin` as these variants.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    System {
        text: String,
        /// The tools offered, by name.
        tools: Vec<String>,
    },
    User {
        /// The turn after which a refused final reply was answered; `None` for the prompt.
        #[serde(skip_serializing_if = "Option::is_none")]
        turn: Option<u32>,
        text: String,
    },
    Model {
        turn: u32,
        text: String,
        tool_calls: Vec<ToolCall>,
        tokens: Tokens,
        stop_reason: Option<String>,
    },
    Tool {
        turn: u32,
        id: String,
        name: String,
        input: Value,
        content: String,
        is_error: bool,
    },
    /// Why the run ended without an answer.
    Error { message: String },
}

/// Runs the agent on `prompt` until it answers or a limit is hit.
pub async fn run(
    client: &Client,
    sandbox: &Sandbox,
    system: &str,
    prompt: &str,
    limits: &Limits,
) -> BuiltinRun {
    run_checked(client, sandbox, system, prompt, limits, 0, |_| Ok(())).await
}

/// [`run`] whose final reply must pass `check`: a reply it refuses (`Err` is the message to
/// send back) is answered with that message as the user's next turn, and the conversation goes
/// on (the model may call tools again), at most `max_reasks` times. The last reply is the
/// answer whether or not it passed: the caller checks it again and decides.
pub async fn run_checked(
    client: &Client,
    sandbox: &Sandbox,
    system: &str,
    prompt: &str,
    limits: &Limits,
    max_reasks: u32,
    mut check: impl FnMut(&str) -> Result<(), String> + Send,
) -> BuiltinRun {
    let agent = Agent {
        client,
        sandbox,
        system,
        specs: tools::specs(),
        limits,
        deadline: Instant::now() + limits.timeout,
    };
    let mut run = BuiltinRun::started(system, prompt, &agent.specs);
    let mut messages = vec![ChatMessage::User {
        text: prompt.to_string(),
    }];
    loop {
        let turn = match agent.turn(&messages, &mut run).await {
            Ok(turn) => turn,
            Err(why) => return run.failed(why),
        };
        if turn.tool_calls.is_empty() {
            if turn.text.trim().is_empty() {
                return run.failed(Ended::Empty(turn.stop_reason.clone()));
            }
            match check(&turn.text) {
                Err(reask) if run.reasks < max_reasks => {
                    run.reasks += 1;
                    run.transcript.push(Entry::User {
                        turn: Some(run.turns),
                        text: reask.clone(),
                    });
                    messages.push(turn.to_message());
                    messages.push(ChatMessage::User { text: reask });
                    continue;
                }
                _ => {
                    run.answer = Some(turn.text);
                    return run;
                }
            }
        }
        messages.push(turn.to_message());
        match agent.tools(&turn, &mut run).await {
            Ok(results) => messages.push(ChatMessage::ToolResults { results }),
            Err(why) => return run.failed(why),
        }
    }
}

impl BuiltinRun {
    /// A run that has not called the model yet: its transcript holds the system prompt with the
    /// tools offered, and the user's prompt.
    fn started(system: &str, prompt: &str, specs: &[ToolDef]) -> BuiltinRun {
        BuiltinRun {
            answer: None,
            error: None,
            turns: 0,
            tokens: Tokens::default(),
            http_retries: 0,
            reasks: 0,
            could_not_run: None,
            stop_reason: None,
            cut_at_token_limit: false,
            transcript: vec![
                Entry::System {
                    text: system.to_string(),
                    tools: specs.iter().map(|t| t.name.clone()).collect(),
                },
                Entry::User {
                    turn: None,
                    text: prompt.to_string(),
                },
            ],
        }
    }

    /// The run, ended without an answer for `why`.
    fn failed(mut self, why: Ended) -> BuiltinRun {
        let why = why.to_string();
        self.transcript.push(Entry::Error {
            message: why.clone(),
        });
        self.error = Some(why);
        self
    }

    fn push_tool(&mut self, call: &ToolCall, out: &ToolOutput) {
        self.transcript.push(Entry::Tool {
            turn: self.turns,
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
            content: out.content.clone(),
            is_error: out.is_error,
        });
    }
}

/// What stays the same over one run's turns.
struct Agent<'a> {
    client: &'a Client,
    sandbox: &'a Sandbox,
    system: &'a str,
    specs: Vec<ToolDef>,
    limits: &'a Limits,
    deadline: Instant,
}

impl Agent<'_> {
    /// The time left before the run's deadline; `Err` (why the run ends) when there is none.
    fn time_left(&self) -> Result<Duration, Ended> {
        self.deadline
            .checked_duration_since(Instant::now())
            .ok_or(Ended::Time(self.limits.timeout))
    }

    /// The model's next turn, recorded in `run`, if the run's limits allow one; `Err` is why
    /// the run ends.
    async fn turn(&self, messages: &[ChatMessage], run: &mut BuiltinRun) -> Result<Turn, Ended> {
        let limits = self.limits;
        let spent = run.tokens.input_tokens + run.tokens.output_tokens;
        if run.turns >= limits.max_turns {
            return Err(Ended::Turns(limits.max_turns));
        }
        if run.turns > 0 && spent >= limits.max_total_tokens {
            return Err(Ended::Tokens {
                spent,
                limit: limits.max_total_tokens,
            });
        }
        let left = self.time_left()?;
        let sent = self
            .client
            .chat(self.system, &self.specs, messages, &mut run.http_retries);
        let turn = match tokio::time::timeout(left, sent).await {
            Err(_) => return Err(Ended::Time(limits.timeout)),
            Ok(Err(e)) => {
                let cause = cause_of(&e);
                let why = Ended::ModelCall(e);
                run.could_not_run = Some(CouldNotRun::new(cause, why.to_string()));
                return Err(why);
            }
            Ok(Ok(turn)) => turn,
        };
        run.turns += 1;
        run.tokens += turn.tokens;
        run.stop_reason = turn.stop_reason.clone();
        run.cut_at_token_limit = turn.cut_at_token_limit();
        run.transcript.push(Entry::Model {
            turn: run.turns,
            text: turn.text.clone(),
            tool_calls: turn.tool_calls.clone(),
            tokens: turn.tokens,
            stop_reason: turn.stop_reason.clone(),
        });
        Ok(turn)
    }

    /// Runs the turn's tool calls in order, each recorded in `run`; `Err` is why the run ends
    /// (its time limit).
    async fn tools(&self, turn: &Turn, run: &mut BuiltinRun) -> Result<Vec<ToolResult>, Ended> {
        let mut results = Vec::with_capacity(turn.tool_calls.len());
        for c in &turn.tool_calls {
            let out = match &c.invalid {
                Some(why) => ToolOutput {
                    content: format!(
                        "{why}; call the tool again with its input as one JSON object that fits its schema"
                    ),
                    is_error: true,
                },
                None => match self.tool(c).await {
                    Ok(out) => out,
                    Err(stopped) => {
                        if let Some(out) = stopped {
                            run.push_tool(c, &out);
                        }
                        return Err(Ended::Time(self.limits.timeout));
                    }
                },
            };
            run.push_tool(c, &out);
            results.push(ToolResult {
                id: c.id.clone(),
                content: out.content,
                is_error: out.is_error,
            });
        }
        Ok(results)
    }

    /// Runs one call off the runtime's thread, so the time limit holds during a long search; at
    /// the limit the tool is told to stop, and its thread is waited for. `Err`: the time limit,
    /// with what the stopped tool said (`None` when it was reached before the tool started).
    async fn tool(&self, c: &ToolCall) -> Result<ToolOutput, Option<ToolOutput>> {
        let left = self.time_left().map_err(|_| None)?;
        let (sb, name, input) = (self.sandbox.clone(), c.name.clone(), c.input.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let mut job =
            tokio::task::spawn_blocking(move || tools::call_until(&sb, &name, &input, &flag));
        match tokio::time::timeout(left, &mut job).await {
            Err(_) => {
                stop.store(true, Ordering::Relaxed);
                let content = match tokio::time::timeout(STOP_GRACE, job).await {
                    Ok(Ok(out)) => out.content,
                    _ => format!(
                        "the tool did not stop within {} s of being told to",
                        STOP_GRACE.as_secs()
                    ),
                };
                Err(Some(ToolOutput {
                    content,
                    is_error: true,
                }))
            }
            Ok(Err(e)) => Ok(ToolOutput {
                content: format!("the tool failed unexpectedly: {e}"),
                is_error: true,
            }),
            Ok(Ok(out)) => Ok(out),
        }
    }
}

/// Why a run ended without an answer: one of its limits, its model call, or a turn that held
/// nothing. Its message is the run's `error` (and, for a failed model call, why it could not
/// run).
#[derive(Debug, thiserror::Error)]
enum Ended {
    #[error("turn limit reached: {0} model turns without a final answer")]
    Turns(u32),
    #[error("token limit reached: {spent} tokens used (limit {limit}) without a final answer")]
    Tokens { spent: u64, limit: u64 },
    #[error("time limit reached: no final answer within {} s", .0.as_secs_f64())]
    Time(Duration),
    #[error("model call failed: {0}")]
    ModelCall(repoprobe_llm::CallError),
    #[error(
        "the model ended its turn with neither text nor a tool call (stop reason {})",
        .0.as_deref().unwrap_or("not given")
    )]
    Empty(Option<String>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;
    use crate::verdict::Cause;
    use repoprobe_llm::{ApiKey, Provider, Settings, Structured};
    use repoprobe_test_support::{FakeServer, Response};
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    const KEY: &str = "sk-builtin-test-key-42";

    /// A transcript as written (`{"kind": …}` objects), to look into.
    fn json_of(transcript: &[Entry]) -> Vec<Value> {
        transcript
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect()
    }

    fn key() -> ApiKey {
        ApiKey::for_test(KEY)
    }

    fn client(provider: Provider, addr: std::net::SocketAddr) -> Client {
        let base_url = match provider {
            Provider::Openai => format!("http://{addr}/v1"),
            Provider::Anthropic => format!("http://{addr}"),
        };
        Client::new(
            Settings {
                provider,
                base_url,
                model: "agent-model".into(),
                structured: Structured::Prompt,
                temperature: Some(0.0),
                seed: None,
                max_tokens: None,
                max_http_retries: 0,
                backoff: Duration::from_millis(1),
                timeout: Duration::from_secs(20),
                rpm: None,
                tpm: None,
            },
            key(),
        )
        .unwrap()
    }

    /// What the model "does" next, given the request body it received (provider-neutral).
    enum Next {
        Call(&'static str, Value),
        /// Several calls in one turn.
        Calls(Vec<(&'static str, Value)>),
        Answer(String),
        /// A raw OpenAI-shaped tool call with these argument bytes.
        RawArgs(&'static str, &'static str),
        Status(u16),
    }

    /// A tool result the server found in a request, provider-neutral.
    #[derive(Debug, Clone)]
    struct SeenResult {
        id: String,
        content: String,
        is_error: bool,
    }

    type Script = Box<dyn FnMut(usize, &[SeenResult]) -> Next + Send>;

    struct Server {
        addr: std::net::SocketAddr,
        requests: Arc<Mutex<Vec<Value>>>,
        violations: Arc<Mutex<Vec<String>>>,
    }

    /// A loopback HTTP/1.1 server playing the model: one request per connection, the request's
    /// last tool results handed to `script`, whose decision is answered in `provider`'s shape.
    fn serve(provider: Provider, script: Script) -> Server {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let violations = Arc::new(Mutex::new(Vec::new()));
        let (reqs, viol) = (Arc::clone(&requests), Arc::clone(&violations));
        let script = Mutex::new(script);
        let server = FakeServer::start(move |req| {
            let path = &req.path;
            let header = |n: &str| req.header(n).map(str::to_string);
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let mut v = viol.lock().unwrap();
            match provider {
                Provider::Openai => {
                    if path != "/v1/chat/completions" {
                        v.push(format!("path {path}"));
                    }
                    if header("authorization") != Some(format!("Bearer {KEY}")) {
                        v.push("no bearer key".into());
                    }
                }
                Provider::Anthropic => {
                    if path != "/v1/messages" {
                        v.push(format!("path {path}"));
                    }
                    if header("x-api-key").as_deref() != Some(KEY) {
                        v.push("no x-api-key".into());
                    }
                    if body["max_tokens"].as_u64().is_none() {
                        v.push("no max_tokens".into());
                    }
                }
            }
            if body["model"] != "agent-model" {
                v.push(format!("model {}", body["model"]));
            }
            let names: Vec<String> = tool_names(provider, &body);
            if names != ["list_dir", "read_file", "search", "find_symbol"] {
                v.push(format!("tools offered: {names:?}"));
            }
            drop(v);
            let seen = last_results(provider, &body);
            let n = {
                let mut r = reqs.lock().unwrap();
                r.push(body);
                r.len() - 1
            };
            let next = (script.lock().unwrap())(n, &seen);
            let (status, reply) = match next {
                Next::Status(s) => (s, json!({"error": {"message": "bad request"}})),
                next => (200, reply(provider, n, next)),
            };
            Response::json(status, reply.to_string())
        });
        Server {
            addr: server.addr(),
            requests,
            violations,
        }
    }

    fn tool_names(provider: Provider, body: &Value) -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| match provider {
                Provider::Openai => t["function"]["name"].as_str(),
                Provider::Anthropic => t["name"].as_str(),
            })
            .map(str::to_string)
            .collect()
    }

    /// The tool results at the end of a request's conversation.
    fn last_results(provider: Provider, body: &Value) -> Vec<SeenResult> {
        let msgs = body["messages"].as_array().unwrap();
        match provider {
            Provider::Openai => msgs
                .iter()
                .rev()
                .take_while(|m| m["role"] == "tool")
                .map(|m| {
                    let c = m["content"].as_str().unwrap_or("").to_string();
                    SeenResult {
                        id: m["tool_call_id"].as_str().unwrap_or("").to_string(),
                        is_error: c.starts_with("error: "),
                        content: c,
                    }
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect(),
            Provider::Anthropic => msgs
                .last()
                .and_then(|m| m["content"].as_array())
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| SeenResult {
                    id: b["tool_use_id"].as_str().unwrap_or("").to_string(),
                    content: b["content"].as_str().unwrap_or("").to_string(),
                    is_error: b["is_error"] == true,
                })
                .collect(),
        }
    }

    fn reply(provider: Provider, n: usize, next: Next) -> Value {
        let id = format!("call_{n}");
        let usage_openai = json!({"prompt_tokens": 100, "completion_tokens": 10});
        let usage_anthropic = json!({"input_tokens": 100, "output_tokens": 10});
        let next = match next {
            Next::Call(name, input) => Next::Calls(vec![(name, input)]),
            other => other,
        };
        let call_id = |j: usize, count: usize| {
            if count == 1 {
                id.clone()
            } else {
                format!("{id}_{j}")
            }
        };
        match (provider, next) {
            (Provider::Openai, Next::Calls(calls)) => json!({
                "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": calls.iter().enumerate().map(|(j, (name, input))| json!(
                        {"id": call_id(j, calls.len()), "type": "function", "function": {"name": name, "arguments": input.to_string()}}
                    )).collect::<Vec<_>>()}}],
                "usage": usage_openai,
            }),
            (Provider::Openai, Next::RawArgs(name, raw)) => json!({
                "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": raw}}]}}],
                "usage": usage_openai,
            }),
            (Provider::Openai, Next::Answer(text)) => json!({
                "choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": usage_openai,
            }),
            (Provider::Anthropic, Next::Calls(calls)) => {
                let mut content = vec![json!({"type": "text", "text": "Looking."})];
                content.extend(calls.iter().enumerate().map(|(j, (name, input))| {
                    json!({"type": "tool_use", "id": call_id(j, calls.len()), "name": name, "input": input})
                }));
                json!({
                    "type": "message", "role": "assistant", "stop_reason": "tool_use",
                    "content": content,
                    "usage": usage_anthropic,
                })
            }
            (Provider::Anthropic, Next::Answer(text)) => json!({
                "type": "message", "role": "assistant", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
                "usage": usage_anthropic,
            }),
            (Provider::Anthropic, Next::RawArgs(..))
            | (_, Next::Status(_))
            | (_, Next::Call(..)) => unreachable!(),
        }
    }

    /// A real git repository: Rust and Python code, an ignored log that mentions the searched
    /// name, and a commit message that does too (so `.git` must not be searched).
    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let r = dir.path();
        git(r, &["init", "-q"]);
        std::fs::create_dir_all(r.join("src")).unwrap();
        std::fs::write(
            r.join("src/lib.rs"),
            "/// Greets.\npub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}! (fixture-7731)\")\n}\n",
        )
        .unwrap();
        std::fs::write(
            r.join("greeter.py"),
            "class Greeter:\n    def hello(self):\n        return 'hi from greeter-5519'\n",
        )
        .unwrap();
        std::fs::write(r.join(".gitignore"), "debug.log\n").unwrap();
        std::fs::write(r.join("debug.log"), "fn greet( in a log\n").unwrap();
        git(r, &["add", "."]);
        git(r, &["commit", "-q", "-m", "add pub fn greet( and Greeter"]);
        dir
    }

    fn limits() -> Limits {
        Limits {
            max_turns: 10,
            max_total_tokens: 1_000_000,
            timeout: Duration::from_secs(30),
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// The model's side of [`drives_tools_on_a_real_repository`]: it searches, reads the file it
    /// found, looks a class up, then answers quoting what each tool returned, checking each
    /// result against the repository's real text.
    fn greet_script() -> Script {
        let mut q = Vec::<String>::new();
        Box::new(move |n, seen| {
            let content = seen.first().map(|s| s.content.clone()).unwrap_or_default();
            match n {
                0 => {
                    assert!(seen.is_empty());
                    Next::Call("search", json!({"pattern": r"fn greet\("}))
                }
                1 => {
                    assert_eq!(seen[0].id, "call_0");
                    assert!(!seen[0].is_error, "{content}");
                    // The real line, and neither the ignored log nor the commit message.
                    assert!(
                        content.starts_with("src/lib.rs:2: pub fn greet(name: &str) -> String {\n"),
                        "{content}"
                    );
                    assert!(
                        !content.contains("debug.log") && !content.contains(".git"),
                        "{content}"
                    );
                    q.push(content.lines().next().unwrap().to_string());
                    Next::Call(
                        "read_file",
                        json!({"path": "src/lib.rs", "start_line": 2, "end_line": 3}),
                    )
                }
                2 => {
                    assert_eq!(
                        content,
                        "src/lib.rs (lines 2-3 of 4)\n2\tpub fn greet(name: &str) -> String {\n3\t    format!(\"Hello, {name}! (fixture-7731)\")\n"
                    );
                    q.push(content.lines().nth(2).unwrap().to_string());
                    Next::Call("find_symbol", json!({"name": "Greeter"}))
                }
                3 => {
                    assert_eq!(content, "greeter.py:1: class Greeter:\n");
                    q.push(content.trim_end().to_string());
                    Next::Answer(format!("Found it.\n{}\n{}\n{}", q[0], q[1], q[2]))
                }
                _ => panic!("too many requests"),
            }
        })
    }

    /// The model drives every kind of tool on a real repository and answers from their output.
    fn drives_tools_on_a_real_repository(provider: Provider) {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(provider, greet_script());
        let client = client(provider, server.addr);
        let run = rt().block_on(run(
            &client,
            &sandbox,
            "You answer questions.",
            "Where is greet?",
            &limits(),
        ));
        assert_eq!(run.error, None, "{:#?}", run.transcript);
        assert!(
            server.violations.lock().unwrap().is_empty(),
            "{:?}",
            server.violations.lock().unwrap()
        );
        let answer = run.answer.unwrap();
        assert!(
            answer.contains("src/lib.rs:2: pub fn greet(name: &str) -> String {"),
            "{answer}"
        );
        assert!(
            answer.contains("3\t    format!(\"Hello, {name}! (fixture-7731)\")"),
            "{answer}"
        );
        assert!(answer.contains("greeter.py:1: class Greeter:"), "{answer}");
        assert_eq!(run.turns, 4);
        assert_eq!(
            run.tokens,
            Tokens {
                input_tokens: 400,
                output_tokens: 40
            }
        );
        assert_eq!(run.http_retries, 0);
        // The transcript: system, user, then model/tool pairs, then the answer, with the tools'
        // real output.
        let tr = json_of(&run.transcript);
        let kinds: Vec<&str> = tr.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "system", "user", "model", "tool", "model", "tool", "model", "tool", "model"
            ]
        );
        let tool = |i: usize| &tr[i];
        assert_eq!(tool(3)["name"], "search");
        assert!(
            tool(3)["content"]
                .as_str()
                .unwrap()
                .contains("pub fn greet(name: &str)")
        );
        assert_eq!(
            tool(5)["input"],
            json!({"path": "src/lib.rs", "start_line": 2, "end_line": 3})
        );
        assert!(
            tool(5)["content"]
                .as_str()
                .unwrap()
                .contains("(fixture-7731)")
        );
        assert_eq!(tool(7)["content"], "greeter.py:1: class Greeter:\n");
        assert_eq!(json_of(&run.transcript)[8]["text"], answer.as_str());
        assert_eq!(
            json_of(&run.transcript)[8]["stop_reason"],
            match provider {
                Provider::Openai => "stop",
                Provider::Anthropic => "end_turn",
            }
        );
        // The conversation grows: the last request holds every call and result.
        let reqs = server.requests.lock().unwrap();
        assert_eq!(reqs.len(), 4);
        assert_eq!(
            reqs[0]["system"]
                .as_str()
                .or(reqs[0]["messages"][0]["content"].as_str()),
            Some("You answer questions.")
        );
        let last = reqs[3]["messages"].to_string();
        assert!(last.contains("fixture-7731") && last.contains("class Greeter:"));
    }

    #[test]
    fn builtin_agent_uses_tools_and_answers_openai() {
        drives_tools_on_a_real_repository(Provider::Openai);
    }

    #[test]
    fn builtin_agent_uses_tools_and_answers_anthropic() {
        drives_tools_on_a_real_repository(Provider::Anthropic);
    }

    /// A final reply the caller's check refuses is sent back as the next user turn, after the
    /// reply itself, and the model may use its tools again; at most `max_reasks` times.
    fn a_refused_final_reply_is_sent_back_and_the_run_goes_on(provider: Provider) {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            provider,
            Box::new(|n, _| match n {
                0 => Next::Answer("not json".into()),
                1 => Next::Call("read_file", json!({"path": "src/lib.rs"})),
                2 => Next::Answer("still bad".into()),
                _ => Next::Answer("{\"ok\": true}".into()),
            }),
        );
        let client = client(provider, server.addr);
        let check = |t: &str| {
            if t.starts_with('{') {
                Ok(())
            } else {
                Err(format!("refused: {t}"))
            }
        };
        let r = rt().block_on(run_checked(
            &client,
            &sandbox,
            "sys",
            "Where?",
            &limits(),
            2,
            check,
        ));
        assert_eq!(r.error, None, "{:#?}", r.transcript);
        assert_eq!(r.answer.as_deref(), Some("{\"ok\": true}"));
        assert_eq!((r.turns, r.reasks), (4, 2));
        let reqs = server.requests.lock().unwrap();
        let second = reqs[1]["messages"].to_string();
        assert!(
            second.contains("not json") && second.contains("refused: not json"),
            "{second}"
        );
        let tr = json_of(&r.transcript);
        let kinds: Vec<&str> = tr.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "system", "user", "model", "user", "model", "tool", "model", "user", "model"
            ]
        );
        // Out of re-asks, the last reply is the answer, for the caller to judge.
        let server = serve(provider, Box::new(|_, _| Next::Answer("never json".into())));
        let client = self::client(provider, server.addr);
        let r = rt().block_on(run_checked(
            &client,
            &sandbox,
            "sys",
            "Where?",
            &limits(),
            1,
            check,
        ));
        assert_eq!(
            (r.answer.as_deref(), r.turns, r.reasks),
            (Some("never json"), 2, 1)
        );
    }

    #[test]
    fn a_refused_final_reply_is_sent_back_openai() {
        a_refused_final_reply_is_sent_back_and_the_run_goes_on(Provider::Openai);
    }

    #[test]
    fn a_refused_final_reply_is_sent_back_anthropic() {
        a_refused_final_reply_is_sent_back_and_the_run_goes_on(Provider::Anthropic);
    }

    /// A path out of the repository is an error result the model reads; the run goes on.
    fn escape_is_refused_and_the_loop_goes_on(provider: Provider) {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            provider,
            Box::new(move |n, seen| match n {
                0 => Next::Call("read_file", json!({"path": "../../etc/passwd"})),
                1 => {
                    assert!(seen[0].is_error, "{seen:?}");
                    assert!(
                        seen[0].content.contains("leaves the repository"),
                        "{seen:?}"
                    );
                    assert!(!seen[0].content.contains("root:"), "{seen:?}");
                    Next::Call("read_file", json!({"path": "/etc/passwd"}))
                }
                2 => {
                    assert!(
                        seen[0].is_error && seen[0].content.contains("absolute paths are refused"),
                        "{seen:?}"
                    );
                    Next::Answer("I could not read it.".into())
                }
                _ => panic!("too many requests"),
            }),
        );
        let client = client(provider, server.addr);
        let run = rt().block_on(run(&client, &sandbox, "sys", "Read /etc/passwd", &limits()));
        assert_eq!(run.answer.as_deref(), Some("I could not read it."));
        assert_eq!(run.error, None);
        let tr = json_of(&run.transcript);
        let tools: Vec<&Value> = tr.iter().filter(|e| e["kind"] == "tool").collect();
        assert_eq!(tools.len(), 2);
        assert!(tools.iter().all(|t| t["is_error"] == true));
        assert!(
            tools[0]["content"]
                .as_str()
                .unwrap()
                .ends_with("\"../../etc/passwd\"")
        );
    }

    #[test]
    fn path_escapes_are_error_results_and_the_loop_goes_on_openai() {
        escape_is_refused_and_the_loop_goes_on(Provider::Openai);
    }

    #[test]
    fn path_escapes_are_error_results_and_the_loop_goes_on_anthropic() {
        escape_is_refused_and_the_loop_goes_on(Provider::Anthropic);
    }

    /// Calls of one turn run in their order and their results go back together, in that order.
    fn several_calls_in_one_turn(provider: Provider) {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            provider,
            Box::new(move |n, seen| match n {
                0 => Next::Calls(vec![
                    ("read_file", json!({"path": "greeter.py", "start_line": 3})),
                    ("read_file", json!({"path": "nope.txt"})),
                    ("list_dir", json!({"path": "src"})),
                ]),
                1 => {
                    let ids: Vec<&str> = seen.iter().map(|s| s.id.as_str()).collect();
                    assert_eq!(ids, ["call_0_0", "call_0_1", "call_0_2"]);
                    assert_eq!(
                        seen[0].content,
                        "greeter.py (lines 3-3 of 3)\n3\t        return 'hi from greeter-5519'\n"
                    );
                    assert!(seen[1].is_error && seen[1].content.contains("no such file"));
                    assert!(seen[2].content.starts_with("src/lib.rs ("), "{seen:?}");
                    Next::Answer(format!("It returns {}", &seen[0].content[30..]))
                }
                _ => panic!("too many requests"),
            }),
        );
        let client = client(provider, server.addr);
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &limits()));
        assert_eq!(run.error, None);
        assert!(run.answer.unwrap().contains("'hi from greeter-5519'"));
        let tr = json_of(&run.transcript);
        let names: Vec<&str> = tr
            .iter()
            .filter(|e| e["kind"] == "tool")
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["call_0_0", "call_0_1", "call_0_2"]);
    }

    #[test]
    fn several_calls_in_one_turn_run_in_order_openai() {
        several_calls_in_one_turn(Provider::Openai);
    }

    #[test]
    fn several_calls_in_one_turn_run_in_order_anthropic() {
        several_calls_in_one_turn(Provider::Anthropic);
    }

    #[test]
    fn malformed_arguments_and_unknown_tools_are_sent_back_as_errors() {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            Provider::Openai,
            Box::new(move |n, seen| match n {
                0 => Next::RawArgs("read_file", "{\"path\": src/lib.rs"),
                1 => {
                    assert!(
                        seen[0]
                            .content
                            .starts_with("error: the arguments are not valid JSON"),
                        "{seen:?}"
                    );
                    Next::Call("write_file", json!({"path": "x"}))
                }
                2 => {
                    assert!(
                        seen[0]
                            .content
                            .starts_with("error: there is no tool of that name"),
                        "{seen:?}"
                    );
                    Next::Answer("done".into())
                }
                _ => panic!("too many requests"),
            }),
        );
        let client = client(Provider::Openai, server.addr);
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &limits()));
        assert_eq!(run.answer.as_deref(), Some("done"));
        // The bad arguments went back to the server verbatim in the assistant message.
        let reqs = server.requests.lock().unwrap();
        assert_eq!(
            reqs[1]["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"path\": src/lib.rs"
        );
        assert_eq!(
            json_of(&run.transcript)[3]["input"],
            "{\"path\": src/lib.rs"
        );
    }

    #[test]
    fn turn_limit_ends_the_run_without_an_answer() {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            Provider::Anthropic,
            Box::new(|_, _| Next::Call("list_dir", json!({}))),
        );
        let client = client(Provider::Anthropic, server.addr);
        let lim = Limits {
            max_turns: 3,
            ..limits()
        };
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &lim));
        assert_eq!(run.answer, None);
        assert_eq!(run.turns, 3);
        let err = run.error.unwrap();
        assert!(
            err.starts_with("turn limit reached: 3 model turns"),
            "{err}"
        );
        assert_eq!(server.requests.lock().unwrap().len(), 3);
        assert_eq!(
            json_of(&run.transcript).last().cloned().unwrap()["kind"],
            "error"
        );
        // The tools of every turn ran: their listing is in the transcript.
        let listings = json_of(&run.transcript)
            .iter()
            .filter(|e| e["kind"] == "tool")
            .count();
        assert_eq!(listings, 3);
        assert!(
            json_of(&run.transcript)[3]["content"]
                .as_str()
                .unwrap()
                .contains("greeter.py (")
        );
    }

    #[test]
    fn token_limit_ends_the_run_without_an_answer() {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            Provider::Openai,
            Box::new(|_, _| Next::Call("list_dir", json!({}))),
        );
        let client = client(Provider::Openai, server.addr);
        let lim = Limits {
            max_total_tokens: 200,
            ..limits()
        };
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &lim));
        assert_eq!(run.answer, None);
        assert_eq!(run.turns, 2);
        assert!(
            run.error
                .unwrap()
                .starts_with("token limit reached: 220 tokens used (limit 200)")
        );
    }

    #[test]
    fn http_failure_ends_the_run_with_the_error() {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(Provider::Openai, Box::new(|_, _| Next::Status(400)));
        let client = client(Provider::Openai, server.addr);
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &limits()));
        assert_eq!(run.answer, None);
        assert_eq!(run.turns, 0);
        // What makes the key a failure to retry, not an answer scored 0.
        assert_eq!(run.could_not_run.as_ref().unwrap().cause, Cause::Config);
        let err = run.error.unwrap();
        assert!(err.starts_with("model call failed: HTTP 400"), "{err}");
    }

    #[test]
    fn time_limit_ends_the_run_without_an_answer() {
        let repo = repo();
        let sandbox = Sandbox::new(repo.path()).unwrap();
        let server = serve(
            Provider::Openai,
            Box::new(|_, _| {
                std::thread::sleep(Duration::from_millis(300));
                Next::Answer("late".into())
            }),
        );
        let client = client(Provider::Openai, server.addr);
        let lim = Limits {
            timeout: Duration::from_millis(100),
            ..limits()
        };
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &lim));
        assert_eq!(run.answer, None);
        // A limit is the agent's failure: an answer record with its error, never retried.
        assert_eq!(run.could_not_run, None);
        assert!(run.error.unwrap().starts_with("time limit reached"));
    }

    #[test]
    fn a_tool_running_at_the_time_limit_is_stopped_and_its_thread_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        crate::tools::fixture::heavy(dir.path(), 400);
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let server = serve(
            Provider::Openai,
            Box::new(|n, _| match n {
                0 => Next::Call(
                    "search",
                    json!({"pattern": crate::tools::fixture::SLOW_PATTERN}),
                ),
                _ => panic!("the run should have ended at its time limit"),
            }),
        );
        let client = client(Provider::Openai, server.addr);
        let lim = Limits {
            timeout: Duration::from_millis(400),
            ..limits()
        };
        let started = Instant::now();
        let run = rt().block_on(run(&client, &sandbox, "sys", "q", &lim));
        let took = started.elapsed();
        assert!(run.error.unwrap().starts_with("time limit reached"));
        // The tool's own (stopped) result is in the transcript: its thread returned before the
        // run did.
        let tr = json_of(&run.transcript);
        let tool = tr
            .iter()
            .find(|e| e["kind"] == "tool")
            .expect("the stopped call is in the transcript");
        assert_eq!(tool["is_error"], true);
        assert!(
            tool["content"].as_str().unwrap().starts_with("stopped"),
            "{tool}"
        );
        assert!(took < Duration::from_secs(3), "{took:?}");
    }
}
