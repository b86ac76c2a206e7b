//! Claude Code (`--agent claude-code`).
//!
//! Its format was checked as follows (re-check when the CLI moves): `-p --output-format json`,
//! run for real, version 2.1.332 (npm `@anthropic-ai/claude-code`), against a loopback
//! Anthropic-compatible server; one JSON object `{"type": "result", "subtype": "success" |
//! "error_max_turns" | …, "is_error", "result", "num_turns", "total_cost_usd", "usage":
//! {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
//! …}, "session_id", "stop_reason", "terminal_reason", "errors": [..] (on errors), …}`; exit
//! status 1 on `is_error`. A run uses `--output-format stream-json`, whose last line is that
//! same object; its events are read in one pass into the trajectory, the counts read from it.
//!
//! Project settings are off: `--setting-sources user` (the run's fresh HOME), `--settings
//! {"disableAllHooks":true}` and `--strict-mcp-config --mcp-config {"mcpServers":{}}` (flags of
//! 2.1.332's `--help`).

use super::cli::{AgentCli, ArgsError, Call};
use super::parse::{AgentResult, ERROR_TAIL_CHARS, Shown, json_object, tail, unparsable};
use crate::verdict::{Cause, CouldNotRun};
use repoprobe_core::model::trajectory::{
    Message, ObservationResult, Step, StepMetrics, ToolCall, Trajectory, TrajectoryAgent,
};
use serde_json::Value;
use std::ffi::OsString;

/// Claude Code's `--settings`: no hook runs, whichever settings file defines it.
pub const CLAUDE_SETTINGS: &str = r#"{"disableAllHooks":true}"#;
/// Claude Code's `--mcp-config` (with `--strict-mcp-config`): no MCP server at all.
pub const CLAUDE_MCP_CONFIG: &str = r#"{"mcpServers":{}}"#;

/// Anthropic's Claude Code (`claude -p … --output-format stream-json`), read-only tools.
pub(super) struct ClaudeCode;

impl AgentCli for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn default_program(&self) -> Option<&'static str> {
        Some("claude")
    }

    fn usual_env(&self) -> &'static [&'static str] {
        &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
        ]
    }

    fn key_var(&self) -> Option<&'static str> {
        Some("ANTHROPIC_API_KEY")
    }

    fn base_url_var(&self) -> Option<&'static str> {
        Some("ANTHROPIC_BASE_URL")
    }

    fn default_api_url(&self) -> Option<&'static str> {
        Some("https://api.anthropic.com")
    }

    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("DISABLE_TELEMETRY", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ]
    }

    fn args(&self, call: &Call) -> Result<Vec<OsString>, ArgsError> {
        // The prompt comes on stdin: `--tools` takes several values and would swallow a
        // positional prompt, and stdin has no argument length limit.
        // The event stream (`--verbose` is required with it in `-p` mode) shows each tool
        // result, so a run whose tools all failed is told from an answer; its last line is
        // the same result object as `--output-format json`'s.
        let mut args: Vec<OsString> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            call.cfg.model.as_str(),
        ]
        .map(OsString::from)
        .into();
        if let Some(n) = call.cfg.max_turns {
            args.extend(["--max-turns".into(), n.to_string().into()]);
        }
        // The repository's `.claude/settings*.json` (hooks, env, apiKeyHelper, plugins) and
        // `.mcp.json` are never read: user settings only (the fresh HOME's), every hook off,
        // no MCP server but the empty set given here. `--mcp-config` takes several values,
        // so an option follows it.
        args.extend(
            [
                "--setting-sources",
                "user",
                "--settings",
                CLAUDE_SETTINGS,
                "--mcp-config",
                CLAUDE_MCP_CONFIG,
                "--strict-mcp-config",
                "--tools",
                "Read,Grep,Glob",
                "--no-session-persistence",
            ]
            .map(OsString::from),
        );
        Ok(args)
    }

    fn read(&self, stdout: &str, _stderr: &str, _own: Option<&str>) -> AgentResult {
        read_claude(stdout)
    }
}

/// Claude Code's output, read in one pass: `--output-format stream-json`'s events (each line
/// one) into its trajectory ([`ClaudeRead::event`]), the last `type: result` object (should
/// anything follow it) for how the run ended ([`ClaudeRead::finish`]). `--output-format
/// json`'s one object is read alike: a trajectory of no steps, its totals the result's.
fn read_claude(stdout: &str) -> AgentResult {
    let mut read = ClaudeRead {
        t: Trajectory::new(TrajectoryAgent::default()),
        last_id: None,
        result: None,
        message_error: None,
        stream: false,
    };
    for line in stdout.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line.trim()) {
            read.event(v);
        }
    }
    if read.result.is_none()
        && let Some(v) = json_object(stdout, is_result)
    {
        // One object over several lines: never printed by 2.1.332, still read.
        read.result_totals(&v);
        read.result = Some(v);
    }
    read.finish(stdout)
}

fn is_result(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("result")
}

/// What Claude Code's events said so far.
struct ClaudeRead {
    t: Trajectory,
    /// The `id` of the message of the last `assistant` event, while its blocks keep coming.
    last_id: Option<String>,
    /// The last `type: result` object.
    result: Option<Value>,
    /// The `error` of the first assistant message the CLI made itself (see [`api_cause`]).
    message_error: Option<String>,
    /// Whether an event besides the result came: a `stream-json` run, whose steps are shown.
    stream: bool,
}

impl ClaudeRead {
    /// One event as ATIF steps: each `assistant` message one agent step (its events share the
    /// message's `id`: a response's text, thinking and `tool_use` blocks may come one event
    /// each), its `usage` the step's metrics; each `user` event's `tool_result` blocks the
    /// results of the step that made the call; the `result` line the totals.
    fn event(&mut self, v: Value) {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        self.stream |= kind != "result";
        match kind {
            "system" if v.get("subtype").and_then(Value::as_str) == Some("init") => {
                let t = &mut self.t;
                t.session_id = v
                    .get("session_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                t.agent.tool_definitions = v.get("tools").and_then(Value::as_array).map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(|n| serde_json::json!({"name": n}))
                        .collect()
                });
            }
            "assistant" => self.assistant(&v),
            "user" => {
                // What follows a tool result is the model's next response, whatever its id.
                self.last_id = None;
                let blocks = v.pointer("/message/content").and_then(Value::as_array);
                for b in blocks.into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                        claude_result(&mut self.t, b);
                    }
                }
            }
            "result" => {
                self.result_totals(&v);
                self.result = Some(v);
            }
            _ => {}
        }
    }

    /// An `assistant` event: a new step, or more blocks of the last one; the `error` of a
    /// message the CLI made itself.
    fn assistant(&mut self, v: &Value) {
        if self.message_error.is_none() {
            self.message_error = v.get("error").and_then(Value::as_str).map(String::from);
        }
        let t = &mut self.t;
        let msg = v.get("message").unwrap_or(&Value::Null);
        let id = msg.get("id").and_then(Value::as_str).map(String::from);
        let same = id.is_some() && id == self.last_id;
        self.last_id = id;
        if !same || t.steps.is_empty() {
            let s = t.push(crate::atif::agent_step(""));
            s.model_name = msg.get("model").and_then(Value::as_str).map(String::from);
            s.metrics = msg.get("usage").map(claude_metrics);
        }
        let step = t.steps.last_mut().expect("a step was pushed");
        claude_blocks(step, msg.get("content"));
    }

    /// A result's cost, tokens and duration as the trajectory's totals.
    fn result_totals(&mut self, v: &Value) {
        let fm = self.t.final_metrics.get_or_insert_with(Default::default);
        fm.total_cost_usd = v.get("total_cost_usd").and_then(Value::as_f64);
        if let Some(u) = v.get("usage") {
            let m = claude_metrics(u);
            fm.total_prompt_tokens = m.prompt_tokens;
            fm.total_completion_tokens = m.completion_tokens;
            fm.total_cached_tokens = m.cached_tokens;
        }
        if let Some(ms) = v.get("duration_ms").and_then(Value::as_f64) {
            fm.extra
                .get_or_insert_with(Default::default)
                .insert("duration_s".into(), (ms / 1000.0).into());
        }
    }

    /// How the run ended, by its result object: the answer, or the error in the CLI's words;
    /// a failure of its model API could not run. Its tokens and cost are the trajectory's
    /// totals (counted by `super::parse::count`), save the cache writes ATIF has no field for.
    fn finish(self, stdout: &str) -> AgentResult {
        let Some(v) = self.result else {
            // A stream cut before its result line (a timeout, a crash) still shows the steps it
            // printed, and so the tokens they cost.
            return AgentResult {
                trajectory: Some(self.t),
                shown: if self.stream {
                    Shown::Steps
                } else {
                    Shown::Nothing
                },
                ..unparsable("Claude Code JSON result", stdout)
            };
        };
        let mut r = AgentResult {
            trajectory: Some(self.t),
            shown: if self.stream {
                Shown::Steps
            } else {
                Shown::Totals
            },
            ..AgentResult::default()
        };
        let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("");
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        if subtype == "success" && !is_error {
            r.answer = v.get("result").and_then(Value::as_str).map(str::to_string);
        } else {
            r.error = Some(claude_error(&v, subtype));
        }
        if let Some(cause) = api_cause(&v, self.message_error.as_deref()) {
            // Its model API refused or failed: not the model's doing, whatever the result says.
            let why = r
                .error
                .take()
                .unwrap_or_else(|| "Claude Code: API error".into());
            r.could_not_run = Some(CouldNotRun::new(cause, why));
        }
        if !self.stream {
            r.turns = v.get("num_turns").and_then(Value::as_u64).map(|n| n as u32);
        }
        r.cache_creation_tokens = v
            .pointer("/usage/cache_creation_input_tokens")
            .and_then(Value::as_u64);
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
}

/// A failed result's message: its `errors`, else its `result` text, after its subtype.
fn claude_error(v: &Value, subtype: &str) -> String {
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
    if detail.is_empty() {
        format!("Claude Code: {what}")
    } else {
        format!("Claude Code: {what}: {}", tail(&detail, ERROR_TAIL_CHARS))
    }
}

/// A message's `usage`: every input token (cache reads and writes included) and the output.
fn claude_metrics(u: &Value) -> StepMetrics {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let read = n("cache_read_input_tokens");
    let prompt = n("input_tokens")
        .map(|i| i + n("cache_creation_input_tokens").unwrap_or(0) + read.unwrap_or(0));
    StepMetrics {
        prompt_tokens: prompt,
        completion_tokens: n("output_tokens"),
        cached_tokens: read,
        ..StepMetrics::default()
    }
}

/// A response's content blocks into its step: text, thinking, tool calls.
fn claude_blocks(step: &mut Step, content: Option<&Value>) {
    let mut text = step.message.text();
    for b in content.and_then(Value::as_array).into_iter().flatten() {
        let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
        match s("type") {
            "text" => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(s("text"));
            }
            "thinking" => {
                let r = step.reasoning_content.get_or_insert_with(String::new);
                r.push_str(s("thinking"));
            }
            "tool_use" => step
                .tool_calls
                .get_or_insert_with(Vec::new)
                .push(ToolCall::new(
                    s("id"),
                    s("name"),
                    b.get("input").cloned().unwrap_or(Value::Null),
                )),
            _ => {}
        }
    }
    step.message = Message::Text(text);
}

/// A `tool_result` block, put with the call it answers (the shapes of a model API's `content`:
/// the client's one reading of them).
fn claude_result(t: &mut Trajectory, b: &Value) {
    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
    let text = b
        .get("content")
        .and_then(repoprobe_llm::reply::content_text)
        .unwrap_or_default();
    let failed = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    t.attach_result(ObservationResult::of(id, text, failed));
}

/// Why Claude Code's model API kept the run from happening, from its typed facts: the HTTP
/// status of `result.api_error_status`; else `message_error`, the `error` of an assistant
/// message the CLI made itself when a call failed (model `<synthetic>`, 0 tokens; the Agent
/// SDK's `SDKAssistantMessageError`: `authentication_failed` — a key rejected, a login
/// expired —, `billing_error`, `rate_limit`, `invalid_request`, `server_error`, `unknown`);
/// else a result whose `terminal_reason` is `api_error`. `None` when the API answered.
fn api_cause(result: &Value, message_error: Option<&str>) -> Option<Cause> {
    if let Some(status) = result.get("api_error_status").and_then(Value::as_u64) {
        return Some(Cause::of_http_status(u16::try_from(status).unwrap_or(0)));
    }
    if let Some(e) = message_error {
        return Some(match e {
            "authentication_failed" => Cause::Auth,
            "billing_error" | "rate_limit" => Cause::RateLimit,
            "invalid_request" => Cause::Config,
            _ => Cause::Api,
        });
    }
    let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
    let api_ended = result.get("terminal_reason").and_then(Value::as_str) == Some("api_error");
    (is_error && api_ended).then_some(Cause::Api)
}

#[cfg(test)]
mod tests {
    use crate::external::tests::{PROMPT_FILE, command_line};
    use crate::external::{AgentConfig, ExternalAgent, home_settings, parse};
    use crate::verdict::{Cause, CouldNotRun, Verdict};
    use std::path::Path;

    /// Claude Code 2.1.332's result for a three-turn run (Glob, Read, answer) against a loopback
    /// server, as printed (bulky fields cut).
    const CLAUDE_SUCCESS: &str = r#"{"duration_api_ms":532,"stop_reason":"end_turn","session_id":"d7e13fe3-a38f-415b-955a-25485aa4d9df","total_cost_usd":0.0018000000000000002,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":60,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":300,"outputTokens":60,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.0018000000000000002,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","safety_stops":0,"is_error":false,"num_turns":3,"subtype":"success","api_error_status":null,"result":"The file says: 1\tsecret content 42\n","ttft_ms":279,"type":"result","duration_ms":996,"uuid":"f769c6ce-9f47-46e9-8539-6988b90fa034","queued_turn_count":0,"result_index":0}"#;

    /// Claude Code 2.1.332 hitting `--max-turns 5` (exit status 1).
    const CLAUDE_MAX_TURNS: &str = r#"{"duration_api_ms":494,"stop_reason":"tool_use","session_id":"1a72d4f3-a44d-4c58-b5d0-b50d6dd63381","total_cost_usd":0.003,"usage":{"input_tokens":500,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":100},"permission_denials":[],"terminal_reason":"max_turns","safety_stops":0,"is_error":true,"num_turns":6,"subtype":"error_max_turns","errors":["Reached maximum number of turns (5)"],"type":"result","duration_ms":1387,"uuid":"7409cc9a-0175-4087-b182-6b2d9c6caa1c","queued_turn_count":0,"result_index":0}"#;

    #[test]
    fn claude_code_success_is_parsed_with_turns_tokens_and_cost() {
        let r = parse(ExternalAgent::ClaudeCode, CLAUDE_SUCCESS, "", Some(0));
        assert_eq!(r.error, None);
        assert_eq!(
            r.answer.as_deref(),
            Some("The file says: 1\tsecret content 42\n")
        );
        assert_eq!(r.turns, Some(3));
        assert_eq!((r.input_tokens, r.output_tokens), (Some(300), Some(60)));
        assert_eq!(r.cost_usd, Some(0.0018000000000000002));
        assert_eq!(r.meta["session_id"], "d7e13fe3-a38f-415b-955a-25485aa4d9df");
        assert_eq!(r.meta["subtype"], "success");
        // Warnings printed before the object do not hide it.
        let noisy = format!("warning: something\n{CLAUDE_SUCCESS}\n");
        assert_eq!(
            parse(ExternalAgent::ClaudeCode, &noisy, "", Some(0)).answer,
            r.answer
        );
    }

    #[test]
    fn claude_code_error_result_sets_error_and_no_answer() {
        let r = parse(ExternalAgent::ClaudeCode, CLAUDE_MAX_TURNS, "", Some(1));
        assert_eq!(r.answer, None);
        assert_eq!(
            r.error.as_deref(),
            Some("Claude Code: error_max_turns: Reached maximum number of turns (5)")
        );
        assert_eq!(r.turns, Some(6));
        assert_eq!(r.meta["terminal_reason"], "max_turns");
        // A success object with a failing exit status is still a failure.
        let r = parse(ExternalAgent::ClaudeCode, CLAUDE_SUCCESS, "boom", Some(2));
        assert_eq!(r.answer, None);
        assert_eq!(r.error.as_deref(), Some("exit status 2: boom"));
    }

    #[test]
    fn claude_codes_tool_results_are_read_from_its_event_stream() {
        let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":3}"#;
        // A call (its own response) and its result, as the stream gives them.
        let call = |id: &str, is_error: bool, text: &str| {
            let assistant = serde_json::json!({"type": "assistant", "message": {"id": id,
                "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read",
                "input": {"file_path": "/w/src/main.rs"}}]}});
            let user = serde_json::json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "is_error": is_error,
                 "content": [{"type": "text", "text": text}]}]}});
            format!("{assistant}\n{user}")
        };
        let init = r#"{"type":"system","subtype":"init","tools":["Read","Grep","Glob"]}"#;
        let broken = [
            init.to_string(),
            call("t1", true, "spawn EACCES"),
            result.into(),
        ]
        .join("\n");
        let r = parse(ExternalAgent::ClaudeCode, &broken, "", Some(0));
        assert_eq!(
            r.could_not_run.as_ref().map(|c| c.cause),
            Some(Cause::Sandbox),
            "{r:?}"
        );
        assert_eq!(r.answer, None);
        let fine = [
            init.to_string(),
            call("t1", true, "File does not exist."),
            call("t2", false, "1\tfn main() {}"),
            result.into(),
        ]
        .join("\n");
        let r = parse(ExternalAgent::ClaudeCode, &fine, "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("Done."), "{r:?}");
        assert_eq!(r.meta["tool_calls"], 2);
        assert_eq!(r.meta["failed_tool_calls"], 1);
        // The turns are the trajectory's model responses, as the record's: the two calls (the
        // result's `num_turns` counts the answer too, which this stream does not show).
        assert_eq!(r.turns, Some(2));
    }

    #[test]
    fn the_command_line_reads_the_prompt_on_stdin_with_project_settings_off() {
        let mut claude = AgentConfig::new(ExternalAgent::ClaudeCode, "claude-sonnet-4-5");
        claude.max_turns = Some(30);
        let (program, args, stdin) = command_line(&claude, Vec::new());
        assert_eq!(program, "claude");
        assert_eq!(
            args,
            "-p --output-format stream-json --verbose --model claude-sonnet-4-5 --max-turns 30 \
             --setting-sources user --settings {\"disableAllHooks\":true} \
             --mcp-config {\"mcpServers\":{}} --strict-mcp-config \
             --tools Read,Grep,Glob --no-session-persistence"
        );
        assert_eq!(stdin.as_deref(), Some(Path::new(PROMPT_FILE)));
    }

    #[test]
    fn the_fresh_home_needs_no_settings_file() {
        let tmp = tempfile::tempdir().unwrap();
        let vars = home_settings(
            ExternalAgent::ClaudeCode,
            &tmp.path().join("home"),
            tmp.path(),
        );
        assert!(vars.unwrap().is_empty());
    }

    /// Claude Code 2.1.332's `stream-json` of a real run against the tests' server (Glob, Read,
    /// answer), as captured.
    const CLAUDE_STREAM: &str =
        include_str!("../../../../testdata/agents/claude-code-2.1.332.stream.jsonl");

    #[test]
    fn claude_codes_stream_becomes_one_step_per_response_with_results_in_place() {
        let r = parse(ExternalAgent::ClaudeCode, CLAUDE_STREAM, "", Some(0));
        let t = r.trajectory.clone().unwrap();
        assert_eq!(t.steps.len(), 3, "{:#?}", t.steps);
        // The counts are the trajectory's: its responses, its calls, its totals.
        assert_eq!((r.turns, &r.meta["tool_calls"]), (Some(3), &2.into()));
        let fm = t.final_metrics.as_ref().unwrap();
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.cost_usd),
            (
                fm.total_prompt_tokens,
                fm.total_completion_tokens,
                fm.total_cost_usd
            )
        );
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        let calls: Vec<&str> = t
            .steps
            .iter()
            .flat_map(|s| s.tool_calls.iter().flatten())
            .map(|c| c.function_name.as_str())
            .collect();
        assert_eq!(calls, ["Glob", "Read"]);
        let read = t.steps[1].observation.as_ref().unwrap().results[0].text();
        assert!(read.contains("the flux capacitor"), "{read}");
        assert!(t.steps[2].message.text().starts_with("Read returned:"));
        assert_eq!(
            t.steps[0].metrics.as_ref().unwrap().prompt_tokens,
            Some(100)
        );
        assert!(t.final_metrics.as_ref().unwrap().total_cost_usd.is_some());
        assert!(t.session_id.is_some());
        let (_, f) = crate::atif::assemble(&crate::atif::RunInfo::default(), t);
        assert_eq!(
            (f.turns, f.files_read),
            (3, vec!["docs/notes.txt".to_string()])
        );
        assert_eq!(f.files_searched, ["docs/notes.txt"]);
    }

    /// A run stopped before its result line (a timeout kills the CLI mid-stream) still counts
    /// the tokens its responses reported: the trajectory's steps, summed, not 0.
    #[test]
    fn a_stream_cut_before_its_result_counts_the_steps_tokens() {
        let cut: String = CLAUDE_STREAM
            .lines()
            .filter(|l| !l.contains(r#""type":"result""#))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            cut.len() < CLAUDE_STREAM.len(),
            "the capture has a result line"
        );
        let r = parse(ExternalAgent::ClaudeCode, &cut, "", Some(0));
        let t = r.trajectory.clone().unwrap();
        let summed = t.summed_metrics();
        assert!(
            summed.total_prompt_tokens.is_some_and(|n| n > 0),
            "{summed:?}"
        );
        assert_eq!(r.input_tokens, summed.total_prompt_tokens, "{r:?}");
        assert_eq!(r.output_tokens, summed.total_completion_tokens, "{r:?}");
    }

    /// A Claude Code run whose login had expired, as other projects captured it from the real
    /// CLI (stream-json): an assistant message the CLI made itself (model `<synthetic>`, its
    /// `error` typed), then a result with `is_error` and `terminal_reason: api_error`, no
    /// token spent. The model was never reached.
    const CLAUDE_LOGIN_EXPIRED: &str = r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"5c1e","tools":["Read","Grep","Glob"],"model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"0b7f","model":"<synthetic>","role":"assistant","type":"message","content":[{"type":"text","text":"Failed to authenticate: OAuth session expired and could not be refreshed"}],"usage":{"input_tokens":0,"output_tokens":0}},"error":"authentication_failed","session_id":"5c1e"}
{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","duration_ms":247,"num_turns":1,"result":"Failed to authenticate: OAuth session expired and could not be refreshed","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"session_id":"5c1e"}"#;

    #[test]
    fn an_expired_login_could_not_run_for_authentication_and_is_no_answer() {
        let r = parse(ExternalAgent::ClaudeCode, CLAUDE_LOGIN_EXPIRED, "", Some(1));
        assert_eq!((r.answer.as_deref(), r.error.as_deref()), (None, None));
        assert_eq!(
            r.verdict(),
            Verdict::CouldNotRun(CouldNotRun::new(
                Cause::Auth,
                "Claude Code: success: Failed to authenticate: OAuth session expired and could \
                 not be refreshed"
            ))
        );
        // A key the API refused (the result names the status; 2.1.332 against a server that
        // answers 401) and a session limit (the message's `error`, HTTP 429) say so too.
        let refused = r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401 invalid x-api-key","api_error_status":401,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0}}"#;
        let r = parse(ExternalAgent::ClaudeCode, refused, "", Some(1));
        assert_eq!(r.could_not_run.map(|c| c.cause), Some(Cause::Auth));
        let limited = CLAUDE_LOGIN_EXPIRED
            .replace("authentication_failed", "rate_limit")
            .replace(
                "Failed to authenticate: OAuth session expired and could not be refreshed",
                "You've hit your session limit",
            );
        let r = parse(ExternalAgent::ClaudeCode, &limited, "", Some(1));
        assert_eq!(r.could_not_run.map(|c| c.cause), Some(Cause::RateLimit));
        // The same words typed by the model in an answer are an answer: only the typed facts
        // count.
        let said = r#"{"type":"result","subtype":"success","is_error":false,"result":"Failed to authenticate: the code's login check says so.","num_turns":2}"#;
        let r = parse(ExternalAgent::ClaudeCode, said, "", Some(0));
        assert!(matches!(r.verdict(), Verdict::Answered(_)), "{r:?}");
    }
}
