//! OpenAI's Codex CLI (`--agent codex`).
//!
//! Its format was checked as follows (re-check when the CLI moves): `exec --json` prints JSONL
//! `ThreadEvent`s as defined in openai/codex `codex-rs/exec/src/exec_events.rs` (commit
//! 08a1f30): `thread.started {thread_id}`, `turn.started`, `turn.completed {usage:
//! {input_tokens, cached_input_tokens, output_tokens}}`, `turn.failed {error: {message}}`,
//! `item.started|updated|completed {item: {id, type: agent_message {text} | reasoning |
//! command_execution | file_change | mcp_tool_call | web_search | todo_list | error
//! {message}}}`, `error {message}`. Flags from `codex-rs/exec/src/cli.rs` (commit 0280533): the
//! prompt is read from stdin when it is `-`. Run for real, version 0.171.0 (npm
//! `@openai/codex`), against the tests' loopback Responses API: it ignores `OPENAI_BASE_URL`
//! (hence a model provider of ours in `-c` overrides, see `codex_overrides`), posts only
//! `/v1/responses` (SSE), runs its `exec_command` tool under its own read-only bwrap sandbox
//! nested in ours (writes fail with "Read-only file system"), needs no `--skip-git-repo-check`
//! for a worktree whose `.git` pointer leads to a hidden git directory, refuses to set its
//! sandbox helper up when CODEX_HOME lies under TMPDIR (see `private_tmp`), and words a model
//! API failure as `error` events "Reconnecting... n/5 (…)" then `turn.failed` (a 5xx without
//! its status), exit status 1.
//!
//! Project settings are off through the fresh HOME's `~/.codex/config.toml` (the worktree
//! `untrusted`: codex-rs `core/src/config_loader/mod.rs` loads project `.codex/` layers only for
//! trusted projects).

use super::cli::{AgentCli, ArgsError, Call};
use super::parse::{AgentResult, ERROR_TAIL_CHARS, Shown, tail, unparsable};
use crate::atif::{agent_step, system_note};
use crate::verdict::{Cause, CouldNotRun};
use repoprobe_core::model::trajectory::{
    FinalMetrics, Observation, ObservationResult, Step, ToolCall, Trajectory, TrajectoryAgent,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// The Responses API Codex calls when `OPENAI_BASE_URL` is not passed.
pub const CODEX_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The name of the model provider the Codex preset defines.
const CODEX_PROVIDER: &str = "repoprobe";

/// OpenAI's Codex CLI (`codex exec --json -s read-only`).
pub(super) struct Codex;

impl AgentCli for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn default_program(&self) -> Option<&'static str> {
        Some("codex")
    }

    fn usual_env(&self) -> &'static [&'static str] {
        // Not CODEX_HOME: the run's fresh HOME holds Codex's config (see `home_settings`).
        &["OPENAI_API_KEY", "OPENAI_BASE_URL"]
    }

    fn key_var(&self) -> Option<&'static str> {
        Some("OPENAI_API_KEY")
    }

    fn base_url_var(&self) -> Option<&'static str> {
        Some("OPENAI_BASE_URL")
    }

    fn default_api_url(&self) -> Option<&'static str> {
        Some(CODEX_DEFAULT_BASE_URL)
    }

    fn args(&self, call: &Call) -> Result<Vec<OsString>, ArgsError> {
        // No `--skip-git-repo-check`: the worktree's `.git` pointer is enough for 0.171.0,
        // though the sandbox hides the git directory it leads to (run for real).
        let model = call.cfg.model.as_str();
        let mut args: Vec<OsString> = ["exec", "--json", "-s", "read-only", "-m", model]
            .map(OsString::from)
            .into();
        let base_url = call
            .env
            .iter()
            .find(|(k, _)| k == "OPENAI_BASE_URL")
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .filter(|v| !v.trim().is_empty());
        for o in codex_overrides(base_url.as_deref().unwrap_or(CODEX_DEFAULT_BASE_URL)) {
            args.extend(["-c".into(), o.into()]);
        }
        Ok(args)
    }

    fn trailing_args(&self) -> &'static [&'static str] {
        // After every option: read the prompt from stdin.
        &["-"]
    }

    fn home_settings(&self, home: &Path, workdir: &str) -> std::io::Result<Vec<(String, String)>> {
        // The project's `.codex/` layers (config.toml, its MCP servers) load only for a
        // trusted project; the worktree is marked untrusted in the user config.
        let dir = home.join(".codex");
        std::fs::create_dir_all(&dir)?;
        let key = serde_json::to_string(workdir).unwrap_or_default();
        std::fs::write(
            dir.join("config.toml"),
            format!("[projects.{key}]\ntrust_level = \"untrusted\"\n"),
        )?;
        Ok(vec![(
            "CODEX_HOME".into(),
            dir.to_string_lossy().into_owned(),
        )])
    }

    fn private_tmp(&self) -> bool {
        // Codex puts the helper its own sandbox execs (`codex-linux-sandbox`) next to
        // CODEX_HOME, and refuses to when CODEX_HOME lies under the temporary directory: every
        // command then fails ("bwrap: execvp codex-linux-sandbox").
        true
    }

    fn read(&self, stdout: &str, _stderr: &str, _own: Option<&str>) -> AgentResult {
        read_codex(stdout)
    }
}

/// Codex `exec --json`'s JSONL events, read in one pass ([`CodexRead::event`]) into its
/// trajectory and into how the run ended ([`CodexRead::finish`]).
fn read_codex(stdout: &str) -> AgentResult {
    let mut read = CodexRead {
        t: Trajectory::new(TrajectoryAgent::default()),
        reasoning: None,
        totals: FinalMetrics::default(),
        meta: BTreeMap::new(),
        events: 0,
        not_json: 0,
        turns: 0,
        answer: None,
        failed: None,
        pending_error: None,
        warnings: Vec::new(),
        file_changes: 0,
    };
    for line in stdout.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => read.event(&v),
            Err(_) => read.not_json += 1,
        }
    }
    read.finish(stdout)
}

/// What Codex's events said so far. Its stream has items, not model responses: each completed
/// `agent_message`, `command_execution`, `file_change`, `mcp_tool_call` or `web_search` item
/// is one agent step (a call's item holds its result too), a `reasoning` item is the reasoning
/// of the step after it, an `error` item or event a system step. Usage comes per prompt
/// (`turn.completed`), so it is in the totals only; the events carry no time. The answer is
/// the last `agent_message`; a `turn.failed`, or an `error` event with no completed turn after
/// it, is the error.
struct CodexRead {
    t: Trajectory,
    /// Reasoning items waiting for the step they lead to.
    reasoning: Option<String>,
    /// Usage summed over `turn.completed`.
    totals: FinalMetrics,
    meta: BTreeMap<String, Value>,
    events: u32,
    not_json: u32,
    /// `turn.completed` events: one per prompt.
    turns: u32,
    answer: Option<String>,
    /// A `turn.failed`'s message.
    failed: Option<String>,
    /// The last `error` event's message, until a turn completes after it.
    pending_error: Option<String>,
    warnings: Vec<Value>,
    file_changes: u32,
}

fn text_of(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

impl CodexRead {
    fn event(&mut self, v: &Value) {
        self.events += 1;
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "thread.started" => {
                if let Some(id) = v.get("thread_id") {
                    self.meta.insert("thread_id".into(), id.clone());
                }
                self.t.session_id = text_of(v, "thread_id").filter(|x| !x.is_empty());
            }
            "turn.completed" => {
                self.turns += 1;
                self.pending_error = None;
                let n = |k: &str| v.pointer(&format!("/usage/{k}")).and_then(Value::as_u64);
                let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                };
                let totals = &mut self.totals;
                totals.total_prompt_tokens = add(totals.total_prompt_tokens, n("input_tokens"));
                totals.total_cached_tokens =
                    add(totals.total_cached_tokens, n("cached_input_tokens"));
                totals.total_completion_tokens =
                    add(totals.total_completion_tokens, n("output_tokens"));
            }
            "turn.failed" => {
                let msg = v.get("error").and_then(|e| text_of(e, "message"));
                let msg = msg.unwrap_or_else(|| "turn failed".into());
                self.t.push(system_note(&msg, true));
                self.failed = Some(msg);
            }
            "error" => {
                let msg = text_of(v, "message");
                self.t
                    .push(system_note(msg.clone().unwrap_or_default(), false));
                let msg = msg.unwrap_or_else(|| "error event".into());
                self.warnings.push(Value::String(msg.clone()));
                self.pending_error = Some(msg);
            }
            "item.completed" => {
                if let Some(item) = v.get("item") {
                    self.item(item);
                }
            }
            _ => {}
        }
    }

    /// A completed item: reasoning for the next step, an error, or a step (the answer so far,
    /// a tool call).
    fn item(&mut self, item: &Value) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "reasoning" => {
                let r = self.reasoning.get_or_insert_with(String::new);
                if !r.is_empty() {
                    r.push('\n');
                }
                r.push_str(&text_of(item, "text").unwrap_or_default());
                return;
            }
            "error" => {
                let msg = text_of(item, "message");
                self.t
                    .push(system_note(msg.clone().unwrap_or_default(), false));
                self.warnings.extend(msg.map(Value::String));
                return;
            }
            "agent_message" => self.answer = text_of(item, "text"),
            "file_change" => self.file_changes += 1,
            _ => {}
        }
        if let Some(mut step) = codex_item(item, kind) {
            step.reasoning_content = self.reasoning.take();
            self.t.push(step);
        }
    }

    /// The result: the trajectory and the CLI's facts in `meta`, then the verdict — a failure
    /// at the model API could not run, another failure is the agent's, else its last message
    /// is the answer. The counts are the trajectory's (`super::parse::count`).
    fn finish(mut self, stdout: &str) -> AgentResult {
        if let Some(r) = self.reasoning.take() {
            let mut step = agent_step("");
            step.reasoning_content = Some(r);
            self.t.push(step);
        }
        self.t.final_metrics = Some(self.totals);
        self.t.notes = Some(
            "Codex reports items, not model responses: one agent step per completed item; usage \
             per prompt, in final_metrics only; a command its sandbox refused may have no item \
             (0.171.0)"
                .into(),
        );
        if self.events == 0 {
            return AgentResult {
                trajectory: Some(self.t),
                ..unparsable("Codex JSONL events", stdout)
            };
        }
        let mut r = AgentResult {
            meta: self.meta,
            trajectory: Some(self.t),
            shown: Shown::Steps,
            ..AgentResult::default()
        };
        if self.file_changes > 0 {
            r.meta
                .insert("file_changes".into(), self.file_changes.into());
        }
        if self.not_json > 0 {
            r.meta.insert("non_json_lines".into(), self.not_json.into());
        }
        let failure = self.failed.or(self.pending_error);
        let status = failure
            .as_ref()
            .and_then(|e| codex_api_status(&self.warnings, e));
        if let Some(status) = &status {
            r.meta.insert("api_error_status".into(), status.clone());
        }
        if !self.warnings.is_empty() {
            r.meta.insert("errors".into(), Value::Array(self.warnings));
        }
        match (failure, status) {
            (Some(e), Some(status)) => {
                let e = tail(&e, ERROR_TAIL_CHARS);
                let (cause, said) = match status.as_u64() {
                    Some(n) => (
                        Cause::of_http_status(u16::try_from(n).unwrap_or(0)),
                        format!("last status {n}"),
                    ),
                    None => (Cause::Api, "retries exhausted".to_string()),
                };
                r.could_not_run = Some(CouldNotRun::new(
                    cause,
                    format!("Codex: model API error ({said}): {e}"),
                ));
            }
            (Some(e), None) => r.error = Some(format!("Codex: {}", tail(&e, ERROR_TAIL_CHARS))),
            (None, _) if self.turns == 0 => r.error = Some("Codex: no completed turn".into()),
            (None, _) => r.answer = self.answer,
        }
        r
    }
}

/// One completed item as an agent step; `None` for an item that is no step (`todo_list`).
fn codex_item(item: &Value, kind: &str) -> Option<Step> {
    let id = item
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let status = item.get("status").and_then(Value::as_str);
    let (args, output, failed) = match kind {
        "agent_message" => {
            let text = item.get("text").and_then(Value::as_str).unwrap_or("");
            return Some(agent_step(text));
        }
        "command_execution" => {
            let code = item.get("exit_code").and_then(Value::as_i64);
            let output = item
                .get("aggregated_output")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let failed = status != Some("completed") || code.is_some_and(|c| c != 0);
            (json!({"command": item.get("command")}), output, failed)
        }
        "file_change" => (
            json!({"changes": item.get("changes")}),
            status.unwrap_or("").to_string(),
            status == Some("failed"),
        ),
        "mcp_tool_call" => {
            // A failed call's output is its error's message (its `result` is null).
            let failed = status == Some("failed");
            let error = item.pointer("/error/message").and_then(Value::as_str);
            let output = match (failed, error) {
                (true, Some(e)) => e.to_string(),
                _ => item.get("result").map(Value::to_string).unwrap_or_default(),
            };
            (
                json!({"server": item.get("server"), "tool": item.get("tool"),
                       "arguments": item.get("arguments")}),
                output,
                failed,
            )
        }
        "web_search" => (json!({"query": item.get("query")}), String::new(), false),
        _ => return None,
    };
    let mut step = agent_step("");
    step.tool_calls = Some(vec![ToolCall::new(&id, kind, args)]);
    let mut result = ObservationResult::of(&id, output, failed);
    if let Some(code) = item.get("exit_code").filter(|c| !c.is_null()) {
        result
            .extra
            .get_or_insert_with(Default::default)
            .insert("exit_code".into(), code.clone());
    }
    step.observation = Some(Observation {
        results: vec![result],
    });
    Some(step)
}

/// Codex's `-c` overrides (values are TOML): the model provider of the run, and analytics,
/// feedback and update checks off. Codex 0.171.0 no longer reads `OPENAI_BASE_URL` itself (run
/// for real, it went to api.openai.com, first over a WebSocket), so the base URL comes in a
/// provider of ours that speaks the Responses API over HTTPS with server-sent events, its key
/// read from `OPENAI_API_KEY` (never on the command line).
fn codex_overrides(base_url: &str) -> Vec<String> {
    let url = serde_json::to_string(base_url).unwrap_or_default();
    vec![
        format!("model_provider={CODEX_PROVIDER}"),
        format!(
            "model_providers.{CODEX_PROVIDER}={{name=\"{CODEX_PROVIDER}\",base_url={url},\
             env_key=\"OPENAI_API_KEY\",wire_api=\"responses\"}}"
        ),
        // No web search: Codex 0.171.0 offers the Responses API's hosted `web_search` tool
        // (run at OpenAI's end, beyond any network rule of ours) unless the mode is disabled
        // (`web_search` = disabled | cached | live in its config).
        "web_search=\"disabled\"".into(),
        "analytics.enabled=false".into(),
        "feedback.enabled=false".into(),
        "check_for_update_on_startup=false".into(),
    ]
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

#[cfg(test)]
mod tests {
    use crate::external::tests::{PROMPT_FILE, command_line};
    use crate::external::{AgentConfig, ExternalAgent, home_settings, parse};
    use crate::verdict::{Cause, CouldNotRun, Verdict};
    use std::path::Path;

    /// Codex `exec --json` events, in the shapes of codex-rs/exec/src/exec_events.rs.
    const CODEX_SUCCESS: &str = r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Looking for the parser**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'rg -n parse src'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'rg -n parse src'","aggregated_output":"src/lib.rs:3:fn parse()\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"The parser is `parse` in src/lib.rs."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
"#;

    const CODEX_FAILED: &str = r#"{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}
"#;

    /// Codex 0.171.0 after a 429 and then 500 for good from a loopback Responses API.
    const CODEX_RETRIES_EXHAUSTED: &str = r#"{"type":"thread.started","thread_id":"01a22d60-39c6-7e43-aaac-2299b1453263"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'ls -R'","aggregated_output":".:\nREADME.md\n","exit_code":0,"status":"completed"}}
{"type":"error","message":"Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)"}
{"type":"error","message":"Reconnecting... 2/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}
{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}
"#;

    #[test]
    fn codex_events_give_the_last_agent_message_and_summed_usage() {
        let r = parse(ExternalAgent::Codex, CODEX_SUCCESS, "", Some(0));
        assert_eq!(r.error, None);
        assert_eq!(
            r.answer.as_deref(),
            Some("The parser is `parse` in src/lib.rs.")
        );
        // The turns are the trajectory's model responses (the record's), not the one prompt's
        // `turn.completed`: the command, the answer.
        assert_eq!(r.turns, Some(2));
        assert_eq!(r.input_tokens, Some(24763));
        assert_eq!(r.cache_read_tokens, Some(24448));
        assert_eq!(r.output_tokens, Some(122));
        assert_eq!(r.cost_usd, None);
        assert_eq!(r.meta["tool_calls"], 1);
        assert_eq!(r.meta["thread_id"], "0199a213-81c0-7800-8aa1-bbab2a035a53");
    }

    #[test]
    fn codex_turn_failed_is_the_error() {
        let r = parse(ExternalAgent::Codex, CODEX_FAILED, "", Some(1));
        assert_eq!(r.answer, None);
        assert_eq!(
            r.verdict(),
            Verdict::CouldNotRun(CouldNotRun::new(
                Cause::Auth,
                "Codex: model API error (last status 401): unexpected status 401 Unauthorized"
            ))
        );
        assert_eq!(r.meta["errors"][0], "Reconnecting... 1/5");
        assert_eq!(r.meta["api_error_status"], 401, "the model API failed");
        // Codex 0.171.0 after one 429 and then 500s (run for real): no status in the failure.
        let r = parse(ExternalAgent::Codex, CODEX_RETRIES_EXHAUSTED, "", Some(1));
        assert_eq!(r.answer, None);
        assert_eq!(r.meta["api_error_status"], 429);
        assert_eq!(
            r.verdict(),
            Verdict::CouldNotRun(CouldNotRun::new(
                Cause::RateLimit,
                "Codex: model API error (last status 429): We’re currently experiencing high demand, which may cause temporary errors."
            ))
        );
        let last_only = CODEX_RETRIES_EXHAUSTED.replace(
            "exceeded retry limit, last status: 429 Too Many Requests",
            "x",
        );
        let r = parse(ExternalAgent::Codex, &last_only, "", Some(1));
        assert_eq!(r.meta["api_error_status"], "retries exhausted");
        assert!(matches!(r.verdict(), Verdict::CouldNotRun(c) if c.cause == Cause::Api));
        // A failure that is no API error (no status, no retries) is the agent's.
        let r = parse(
            ExternalAgent::Codex,
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"context window exceeded\"}}",
            "",
            Some(1),
        );
        assert_eq!(r.meta.get("api_error_status"), None);
        assert_eq!(
            r.verdict(),
            Verdict::AgentFailed("Codex: context window exceeded".into())
        );
        // A stream that stops before any turn completes has no answer either.
        let cut: String = CODEX_SUCCESS
            .lines()
            .take(6)
            .map(|l| format!("{l}\n"))
            .collect();
        let r = parse(ExternalAgent::Codex, &cut, "", Some(0));
        assert_eq!(r.error.as_deref(), Some("Codex: no completed turn"));
        assert_eq!(r.answer, None);
    }

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
        let c = r.could_not_run.as_ref().unwrap();
        assert_eq!(c.cause, Cause::Sandbox);
        assert!(c.why.contains("error building bubblewrap command"), "{c:?}");
        assert!(matches!(r.verdict(), Verdict::CouldNotRun(_)), "{r:?}");
        assert_eq!(r.meta["failed_tool_calls"], 1);
    }

    #[test]
    fn every_call_failing_is_an_environment_failure_one_failing_grep_is_not() {
        let all = codex_run(&[("failed", 2, "ls: cannot access"), ("failed", 1, "")]);
        let r = parse(ExternalAgent::Codex, &all, "", Some(0));
        let c = r.could_not_run.as_ref().unwrap();
        assert_eq!(c.cause, Cause::Environment);
        assert!(
            c.why.starts_with("every tool call failed (2 of 2)"),
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
        assert_eq!(r.could_not_run, None, "{r:?}");
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
    fn the_command_line_names_our_provider_and_reads_the_prompt_last() {
        let mut codex = AgentConfig::new(ExternalAgent::Codex, "gpt-5-codex");
        codex.program = Some("/opt/codex".into());
        codex.extra_args = vec!["--skip-git-repo-check".into()];
        assert_eq!(
            command_line(&codex, Vec::new()),
            (
                "/opt/codex".into(),
                "exec --json -s read-only -m gpt-5-codex -c model_provider=repoprobe \
                 -c model_providers.repoprobe={name=\"repoprobe\",\
                 base_url=\"https://api.openai.com/v1\",env_key=\"OPENAI_API_KEY\",\
                 wire_api=\"responses\"} -c web_search=\"disabled\" -c analytics.enabled=false -c feedback.enabled=false \
                 -c check_for_update_on_startup=false --skip-git-repo-check -"
                    .into(),
                Some(Path::new(PROMPT_FILE).to_path_buf())
            )
        );
        // A passed OPENAI_BASE_URL is the provider's base URL (Codex 0.171.0 ignores it).
        let env = vec![("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into())];
        let (_, shown, _) = command_line(&codex, env);
        assert!(
            shown.contains("base_url=\"http://127.0.0.1:9/v1\""),
            "{shown:?}"
        );
    }

    #[test]
    fn the_fresh_home_marks_the_worktree_untrusted() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, wt) = (tmp.path().join("home"), tmp.path().join("wt \"q\""));
        std::fs::create_dir_all(&wt).unwrap();
        let wt_s = wt.canonicalize().unwrap().to_string_lossy().into_owned();
        let vars = home_settings(ExternalAgent::Codex, &home, &wt).unwrap();
        assert_eq!(
            std::fs::read_to_string(home.join(".codex/config.toml")).unwrap(),
            format!(
                "[projects.{}]\ntrust_level = \"untrusted\"\n",
                serde_json::to_string(&wt_s).unwrap()
            )
        );
        assert_eq!(
            vars,
            [(
                "CODEX_HOME".to_string(),
                home.join(".codex").to_string_lossy().into_owned()
            )]
        );
    }

    /// Codex 0.171.0's `exec --json` of a real run against the tests' server (ls, grep, cat, a
    /// refused write, answer), as captured.
    const CODEX_STREAM: &str = include_str!("../../../../testdata/agents/codex-0.171.0.jsonl");

    #[test]
    fn codexs_items_become_steps_with_their_output_and_exit_code() {
        let r = parse(ExternalAgent::Codex, CODEX_STREAM, "", Some(0));
        let t = r.trajectory.clone().unwrap();
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        let commands: Vec<String> = t
            .steps
            .iter()
            .flat_map(|s| s.tool_calls.iter().flatten())
            .map(|c| c.arguments["command"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(
            commands,
            [
                "/bin/bash -lc 'ls -R'",
                "/bin/bash -lc 'grep -rn flux .'",
                "/bin/bash -lc 'cat docs/notes.txt'"
            ]
        );
        // The model-metadata warning is a system step; the answer the last agent step.
        assert_eq!(
            t.steps[0].source,
            repoprobe_core::model::trajectory::StepSource::System
        );
        assert!(
            t.steps
                .last()
                .unwrap()
                .message
                .text()
                .starts_with("The tools returned:")
        );
        let cat = t.steps[3].observation.as_ref().unwrap();
        assert!(cat.results[0].text().contains("flux capacitor"));
        assert_eq!(cat.results[0].extra.as_ref().unwrap()["exit_code"], 0);
        let fm = t.final_metrics.as_ref().unwrap();
        assert_eq!(
            (fm.total_prompt_tokens, fm.total_cached_tokens),
            (Some(5000), Some(1000))
        );
        let (_, f) = crate::atif::assemble(&crate::atif::RunInfo::default(), t);
        assert_eq!(f.turns, 4);
        assert_eq!(f.files_read, ["docs/notes.txt"]);
        assert_eq!(f.files_searched, ["docs/notes.txt"]);
        // The result's counts are the trajectory's.
        assert_eq!((r.turns, &r.meta["tool_calls"]), (Some(4), &3.into()));
        assert_eq!(
            (r.input_tokens, r.cache_read_tokens),
            (Some(5000), Some(1000))
        );
    }
}
