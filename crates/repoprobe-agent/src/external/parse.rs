//! Reading each agent CLI's output: Claude Code's result object, Codex's JSONL events, Gemini
//! CLI's JSON; the answer, turns, tokens and cost it reports, or why there is none.

use super::presets::ExternalAgent;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// How much of stderr or of bad output goes into an error message.
pub(super) const ERROR_TAIL_CHARS: usize = 600;

/// What a run gave, parsed. Never holds a secret.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentResult {
    /// The final answer; `None` whenever `error` is set.
    pub answer: Option<String>,
    pub error: Option<String>,
    /// Model round trips as the CLI counts them (Claude Code `num_turns`; Gemini API requests;
    /// Codex `turn.completed` events, one per prompt).
    pub turns: Option<u32>,
    /// All input tokens, cached ones included.
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Of `input_tokens`, those read from the prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Of `input_tokens`, those written to the prompt cache (Claude).
    pub cache_creation_tokens: Option<u64>,
    /// As the CLI reports it (Claude Code prices tokens with its own table); Codex and Gemini
    /// report none.
    pub cost_usd: Option<f64>,
    /// Anything else worth keeping: session id, subtype, stop reason, tool calls, warnings.
    pub meta: BTreeMap<String, Value>,
    /// Why the agent's tools could not work where it ran (its sandbox failed, every tool call
    /// failed): the run says nothing about the model, so it is a failure to retry, never an
    /// answer. Set only with `error`.
    pub environment_failure: Option<String>,
}

/// What a failed tool call's output says when the environment, not the model, is to blame: the
/// sandbox could not be built (Codex's own bwrap: "error building bubblewrap command: Read-only
/// file system", its helper missing, Landlock or seccomp refused) or a program could not be
/// spawned. Matched case-insensitively in calls that failed only.
const ENVIRONMENT_SIGNS: &[&str] = &[
    "error building bubblewrap command",
    "bwrap: ",
    "codex-linux-sandbox",
    "failed to apply sandbox",
    "sandbox error",
    "landlock",
    "seccomp",
    "spawn enoent",
    "spawn eacces",
];

/// The agent's tool calls as its CLI reported them, and what they say of the environment.
#[derive(Debug, Default)]
pub(super) struct ToolTally {
    pub calls: u64,
    pub failed: u64,
    /// The first failed call's output that names a broken environment.
    environment: Option<String>,
    first_error: Option<String>,
}

impl ToolTally {
    /// One call: whether it succeeded, and its output (or error text).
    pub fn call(&mut self, ok: bool, output: &str) {
        self.calls += 1;
        if ok {
            return;
        }
        self.failed += 1;
        let lower = output.to_lowercase();
        if self.environment.is_none() && ENVIRONMENT_SIGNS.iter().any(|s| lower.contains(s)) {
            self.environment = Some(tail(output.trim(), ERROR_TAIL_CHARS));
        }
        if self.first_error.is_none() {
            self.first_error = Some(tail(output.trim(), ERROR_TAIL_CHARS));
        }
    }

    /// Why the environment failed, if it did: a failed call named a broken sandbox, or every
    /// call failed (two at least: one failing `grep` is the model's business).
    pub fn verdict(&self) -> Option<String> {
        if let Some(e) = &self.environment {
            return Some(format!("a tool call failed in the sandbox: {e}"));
        }
        (self.calls >= 2 && self.failed == self.calls).then(|| {
            format!(
                "every tool call failed ({} of {}); the first: {}",
                self.failed,
                self.calls,
                self.first_error.as_deref().unwrap_or("(no output)")
            )
        })
    }

    fn record(&self, r: &mut AgentResult) {
        r.meta.insert("tool_calls".into(), self.calls.into());
        if self.failed > 0 {
            r.meta
                .insert("failed_tool_calls".into(), self.failed.into());
        }
        r.environment_failure = self.verdict();
    }
}

/// Parses a CLI's output. `exit_code` is `None` when the process was killed.
pub fn parse(
    agent: ExternalAgent,
    stdout: &str,
    stderr: &str,
    exit_code: Option<i32>,
) -> AgentResult {
    let mut r = match agent {
        ExternalAgent::ClaudeCode => parse_claude(stdout),
        ExternalAgent::Codex => parse_codex(stdout),
        ExternalAgent::Gemini => parse_gemini(stdout, stderr),
        ExternalAgent::Command => AgentResult {
            answer: Some(stdout.trim().to_string()),
            ..AgentResult::default()
        },
    };
    if let Some(why) = &r.environment_failure {
        r.error = Some(format!("the agent's environment failed: {why}"));
    }
    if r.error.is_none() && exit_code != Some(0) {
        let status = match exit_code {
            Some(c) => format!("exit status {c}"),
            None => "killed by a signal".to_string(),
        };
        let detail = tail(stderr.trim(), ERROR_TAIL_CHARS);
        r.error = Some(if detail.is_empty() {
            status
        } else {
            format!("{status}: {detail}")
        });
    }
    if r.error.is_none() && r.answer.as_deref().is_none_or(|a| a.trim().is_empty()) {
        r.error = Some("empty answer".to_string());
    }
    if r.error.is_some() {
        r.answer = None;
    }
    r
}

/// Claude Code `--output-format json`: one `type: result` object (the last such line, should
/// anything precede it).
pub(super) fn parse_claude(stdout: &str) -> AgentResult {
    let Some(v) = json_object(stdout, |v| {
        v.get("type").and_then(Value::as_str) == Some("result")
    }) else {
        return unparsable("Claude Code JSON result", stdout);
    };
    let mut r = AgentResult::default();
    let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    if subtype == "success" && !is_error {
        r.answer = v.get("result").and_then(Value::as_str).map(str::to_string);
    } else {
        let errors: Vec<&str> = v
            .get("errors")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let detail = if !errors.is_empty() {
            errors.join("; ")
        } else {
            v.get("result")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let what = if subtype.is_empty() { "error" } else { subtype };
        r.error = Some(if detail.is_empty() {
            format!("Claude Code: {what}")
        } else {
            format!("Claude Code: {what}: {}", tail(&detail, ERROR_TAIL_CHARS))
        });
    }
    let tools = claude_tools(stdout);
    if tools.calls > 0 || stdout.lines().count() > 1 {
        tools.record(&mut r);
    }
    r.turns = v.get("num_turns").and_then(Value::as_u64).map(|n| n as u32);
    r.cost_usd = v.get("total_cost_usd").and_then(Value::as_f64);
    if let Some(u) = v.get("usage") {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let (input, created, read) = (
            n("input_tokens"),
            n("cache_creation_input_tokens"),
            n("cache_read_input_tokens"),
        );
        r.input_tokens = input.map(|i| i + created.unwrap_or(0) + read.unwrap_or(0));
        r.output_tokens = n("output_tokens");
        r.cache_creation_tokens = created;
        r.cache_read_tokens = read;
    }
    for k in [
        "subtype",
        "session_id",
        "stop_reason",
        "terminal_reason",
        "duration_ms",
        "duration_api_ms",
        "permission_denials",
        "api_error_status",
    ] {
        if let Some(x) = v.get(k).filter(|x| !x.is_null()) {
            r.meta.insert(k.to_string(), x.clone());
        }
    }
    r
}

/// The tool results of Claude Code's `--output-format stream-json` events: each `user`
/// message's `tool_result` blocks (`is_error`, `content` as text or text parts).
fn claude_tools(stdout: &str) -> ToolTally {
    let mut t = ToolTally::default();
    for line in stdout.lines().filter(|l| l.contains("tool_result")) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("type").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let blocks = v.pointer("/message/content").and_then(Value::as_array);
        for b in blocks.into_iter().flatten() {
            if b.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            let text = match b.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            let failed = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            t.call(!failed, &text);
        }
    }
    t
}

/// Codex `exec --json`: JSONL events. The answer is the last `agent_message`; usage is summed
/// over `turn.completed`; a `turn.failed`, or an `error` event with no completed turn after it,
/// is the error.
pub(super) fn parse_codex(stdout: &str) -> AgentResult {
    let mut r = AgentResult::default();
    let (mut events, mut not_json) = (0u32, 0u32);
    let (mut input, mut cached, mut output, mut turns) = (0u64, 0u64, 0u64, 0u32);
    let mut answer: Option<String> = None;
    let mut failed: Option<String> = None;
    let mut pending_error: Option<String> = None;
    let mut warnings: Vec<Value> = Vec::new();
    let mut tools = ToolTally::default();
    let mut file_changes = 0u32;
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            not_json += 1;
            continue;
        };
        events += 1;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "thread.started" => {
                if let Some(id) = v.get("thread_id") {
                    r.meta.insert("thread_id".into(), id.clone());
                }
            }
            "turn.completed" => {
                turns += 1;
                pending_error = None;
                if let Some(u) = v.get("usage") {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    input += n("input_tokens");
                    cached += n("cached_input_tokens");
                    output += n("output_tokens");
                }
            }
            "turn.failed" => {
                let msg = v.get("error").and_then(|e| s(e, "message"));
                failed = Some(msg.unwrap_or_else(|| "turn failed".into()));
            }
            "error" => {
                let msg = s(&v, "message").unwrap_or_else(|| "error event".into());
                warnings.push(Value::String(msg.clone()));
                pending_error = Some(msg);
            }
            "item.completed" => {
                let Some(item) = v.get("item") else { continue };
                match item.get("type").and_then(Value::as_str).unwrap_or("") {
                    "agent_message" => answer = s(item, "text"),
                    "error" => {
                        if let Some(m) = s(item, "message") {
                            warnings.push(Value::String(m));
                        }
                    }
                    "command_execution" => {
                        // `status` completed | failed | declined (a sandbox refusal).
                        let ok = item.get("status").and_then(Value::as_str) == Some("completed")
                            && item
                                .get("exit_code")
                                .and_then(Value::as_i64)
                                .is_none_or(|c| c == 0);
                        let output = s(item, "aggregated_output").unwrap_or_default();
                        tools.call(ok, &output);
                    }
                    "mcp_tool_call" => {
                        let ok = item.get("status").and_then(Value::as_str) != Some("failed");
                        let e = item.get("error").and_then(|e| s(e, "message"));
                        tools.call(ok, &e.unwrap_or_default());
                    }
                    "web_search" => tools.call(true, ""),
                    "file_change" => file_changes += 1,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if events == 0 {
        return unparsable("Codex JSONL events", stdout);
    }
    r.turns = Some(turns);
    if turns > 0 {
        r.input_tokens = Some(input);
        r.cache_read_tokens = Some(cached);
        r.output_tokens = Some(output);
    }
    tools.record(&mut r);
    if file_changes > 0 {
        r.meta.insert("file_changes".into(), file_changes.into());
    }
    if not_json > 0 {
        r.meta.insert("non_json_lines".into(), not_json.into());
    }
    if let Some(e) = failed.as_ref().or(pending_error.as_ref())
        && let Some(status) = codex_api_status(&warnings, e)
    {
        r.meta.insert("api_error_status".into(), status);
    }
    if !warnings.is_empty() {
        r.meta.insert("errors".into(), Value::Array(warnings));
    }
    if let Some(e) = failed.or(pending_error) {
        let e = tail(&e, ERROR_TAIL_CHARS);
        r.error = Some(match r.meta.get("api_error_status") {
            Some(Value::Number(n)) => format!("Codex: model API error (last status {n}): {e}"),
            Some(_) => format!("Codex: model API error (retries exhausted): {e}"),
            None => format!("Codex: {e}"),
        });
    } else if turns == 0 {
        r.error = Some("Codex: no completed turn".into());
    } else {
        r.answer = answer;
    }
    r
}

/// Whether a failed Codex run failed at the model API, and how: the HTTP status a message names
/// (`last status: 429 Too Many Requests`, `unexpected status 401 Unauthorized`), else
/// `"retries exhausted"` when Codex retried before giving up (`Reconnecting... 2/5 (…)`).
/// Codex 0.171.0 words a 5xx as "We're currently experiencing high demand…", naming no status;
/// its retries tell.
fn codex_api_status(warnings: &[Value], failure: &str) -> Option<Value> {
    let messages: Vec<&str> = warnings
        .iter()
        .filter_map(Value::as_str)
        .chain([failure])
        .collect();
    let status = messages.iter().rev().find_map(|m| {
        ["last status: ", "unexpected status "]
            .iter()
            .find_map(|p| {
                let rest = &m[m.find(p)? + p.len()..];
                let code: String = rest.chars().take_while(char::is_ascii_digit).collect();
                code.parse::<u16>().ok()
            })
    });
    match status {
        Some(code) => Some(code.into()),
        None => messages
            .iter()
            .any(|m| m.starts_with("Reconnecting..."))
            .then(|| "retries exhausted".into()),
    }
}

/// Gemini CLI `--output-format json`: one (pretty-printed) object on stdout, or for a failure
/// an object with `error` on stderr (0.61.0, run for real: after its retries against a failing
/// API it prints the object there, after the stack trace, and exits with status 244). An
/// `error.code` that is an HTTP status means the model API failed (`api_error_status`).
pub(super) fn parse_gemini(stdout: &str, stderr: &str) -> AgentResult {
    let result = |v: &Value| {
        v.get("response").is_some() || v.get("error").is_some() || v.get("stats").is_some()
    };
    let Some(v) = json_object(stdout, result).or_else(|| {
        json_object(stderr, |v| v.get("error").is_some_and(Value::is_object))
            .filter(|_| stdout.trim().is_empty())
    }) else {
        return unparsable("Gemini JSON output", stdout);
    };
    let mut r = AgentResult::default();
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("error");
        r.error = Some(format!("Gemini: {kind}: {}", tail(msg, ERROR_TAIL_CHARS)));
        if let Some(code) = e.get("code") {
            r.meta.insert("error_code".into(), code.clone());
            if code.as_u64().is_some_and(|c| (400..600).contains(&c)) {
                r.meta.insert("api_error_status".into(), code.clone());
            }
        }
    } else {
        r.answer = v
            .get("response")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(id) = v.get("session_id") {
        r.meta.insert("session_id".into(), id.clone());
    }
    if let Some(stats) = v.get("stats") {
        let mut found = false;
        let (mut requests, mut prompt, mut out, mut cached) = (0u64, 0u64, 0u64, 0u64);
        if let Some(models) = stats.get("models").and_then(Value::as_object) {
            for m in models.values() {
                found = true;
                let n = |a: &str, b: &str| {
                    m.get(a)
                        .and_then(|x| x.get(b))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                requests += n("api", "totalRequests");
                prompt += n("tokens", "prompt");
                // Thinking tokens are output the model was paid for.
                out += n("tokens", "candidates") + n("tokens", "thoughts");
                cached += n("tokens", "cached");
            }
            r.meta.insert(
                "models".into(),
                Value::Array(models.keys().cloned().map(Value::String).collect()),
            );
        }
        if found {
            r.turns = Some(requests as u32);
            r.input_tokens = Some(prompt);
            r.output_tokens = Some(out);
            r.cache_read_tokens = Some(cached);
        }
        if let Some(t) = stats.get("tools") {
            // Only counts: `totalCalls`, `totalSuccess`, `totalFail` (uiTelemetry.ts).
            let n = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
            let (calls, ok) = (n("totalCalls"), n("totalSuccess"));
            let mut tally = ToolTally::default();
            for i in 0..calls {
                tally.call(i < ok, "(Gemini CLI reports no output in its stats)");
            }
            tally.record(&mut r);
        }
    }
    r
}

pub(super) fn unparsable(what: &str, stdout: &str) -> AgentResult {
    let shown = tail(stdout.trim(), ERROR_TAIL_CHARS);
    AgentResult {
        error: Some(if shown.is_empty() {
            format!("no output (expected {what})")
        } else {
            format!("could not parse the output as {what}: {shown:?}")
        }),
        ..AgentResult::default()
    }
}

/// The whole text as one JSON object, else the last line-started object (possibly spanning
/// several lines) that `wanted` accepts.
pub(super) fn json_object(text: &str, wanted: impl Fn(&Value) -> bool) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return wanted(&v).then_some(v);
    }
    let mut starts: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter(|&i| text[i..].starts_with('{'))
        .collect();
    if text.starts_with('{') {
        starts.insert(0, 0);
    }
    for &start in starts.iter().rev() {
        let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next()
            && v.is_object()
            && wanted(&v)
        {
            return Some(v);
        }
    }
    None
}

/// The last `max` characters of `s`.
pub(super) fn tail(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let t: String = s.chars().skip(n - max).collect();
    format!("…{t}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codex_run(commands: &[(&str, i64, &str)]) -> String {
        let mut lines = vec![r#"{"type":"thread.started","thread_id":"t1"}"#.to_string()];
        for (i, (status, code, output)) in commands.iter().enumerate() {
            let item = serde_json::json!({"id": format!("item_{i}"), "type": "command_execution",
                "command": "ls", "aggregated_output": output, "exit_code": code, "status": status});
            lines.push(serde_json::json!({"type": "item.completed", "item": item}).to_string());
        }
        lines.push(
            r#"{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"It is 42."}}"#
                .into(),
        );
        lines.push(r#"{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}"#.into());
        lines.join("\n")
    }

    #[test]
    fn a_codex_run_whose_sandbox_broke_is_an_environment_failure_not_an_answer() {
        // As Codex 0.171.0 words it when `/tmp/codex-daemon-0` cannot be made; one good call
        // does not save the run.
        let out = codex_run(&[
            ("completed", 0, "docs\n"),
            (
                "failed",
                1,
                "error building bubblewrap command: Read-only file system (os error 30)",
            ),
        ]);
        let r = parse(ExternalAgent::Codex, &out, "", Some(0));
        assert_eq!(r.answer, None);
        let why = r.environment_failure.as_deref().unwrap();
        assert!(why.contains("error building bubblewrap command"), "{why}");
        assert!(
            r.error
                .as_deref()
                .unwrap()
                .starts_with("the agent's environment failed"),
            "{r:?}"
        );
        assert_eq!(r.meta["failed_tool_calls"], 1);
    }

    #[test]
    fn every_call_failing_is_an_environment_failure_one_failing_grep_is_not() {
        let all = codex_run(&[("failed", 2, "ls: cannot access"), ("failed", 1, "")]);
        let r = parse(ExternalAgent::Codex, &all, "", Some(0));
        assert!(
            r.environment_failure
                .as_deref()
                .unwrap()
                .starts_with("every tool call failed (2 of 2)"),
            "{r:?}"
        );
        let one = codex_run(&[("failed", 1, "")]);
        let r = parse(ExternalAgent::Codex, &one, "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("It is 42."), "{r:?}");
        // A refused write among good reads is the model's business (and the sandbox's point).
        let write = codex_run(&[
            ("completed", 0, "a"),
            ("failed", 2, "sh: can't create x: Read-only file system"),
        ]);
        let r = parse(ExternalAgent::Codex, &write, "", Some(0));
        assert_eq!(r.environment_failure, None, "{r:?}");
        assert!(r.answer.is_some());
        // Output that merely quotes a sign, from a call that succeeded, is a file's content.
        let quoted = codex_run(&[("completed", 0, "bwrap: setting up uid map: denied")]);
        assert!(
            parse(ExternalAgent::Codex, &quoted, "", Some(0))
                .answer
                .is_some()
        );
    }

    #[test]
    fn claude_codes_tool_results_are_read_from_its_event_stream() {
        let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":3}"#;
        let user = |is_error: bool, text: &str| {
            serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "is_error": is_error,
                 "content": [{"type": "text", "text": text}]}]}})
            .to_string()
        };
        let init = r#"{"type":"system","subtype":"init","tools":["Read","Grep","Glob"]}"#;
        let broken = [init.to_string(), user(true, "spawn EACCES"), result.into()].join("\n");
        let r = parse(ExternalAgent::ClaudeCode, &broken, "", Some(0));
        assert!(r.environment_failure.is_some(), "{r:?}");
        assert_eq!(r.answer, None);
        let fine = [
            init.to_string(),
            user(true, "File does not exist."),
            user(false, "1\tfn main() {}"),
            result.into(),
        ]
        .join("\n");
        let r = parse(ExternalAgent::ClaudeCode, &fine, "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("Done."), "{r:?}");
        assert_eq!(r.meta["tool_calls"], 2);
        assert_eq!(r.meta["failed_tool_calls"], 1);
    }

    #[test]
    fn gemini_runs_whose_every_tool_call_failed_are_environment_failures() {
        let out = |ok: u64| {
            serde_json::json!({"response": "It is 42.", "stats": {"models": {},
                "tools": {"totalCalls": 3, "totalSuccess": ok, "totalFail": 3 - ok}}})
            .to_string()
        };
        let r = parse(ExternalAgent::Gemini, &out(0), "", Some(0));
        assert!(
            r.environment_failure.is_some() && r.answer.is_none(),
            "{r:?}"
        );
        let r = parse(ExternalAgent::Gemini, &out(1), "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("It is 42."), "{r:?}");
    }
}
