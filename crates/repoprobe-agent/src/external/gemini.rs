//! Google's Gemini CLI (`--agent gemini`).
//!
//! A run uses `--output-format stream-json` (its events hold every tool call with its
//! timestamp: see `read_gemini`, read in one pass into the trajectory, checked against 0.61.0's
//! `nonInteractiveCli.ts` and run for real); the one-object `json` format, still read, holds
//! only counts, taken as it reports them. That format was checked as follows (re-check when the CLI moves): `--output-format json`
//! prints one object `{"session_id", "response", "stats", "error": {"type", "message",
//! "code"}}` (google-gemini/gemini-cli `packages/core/src/output/json-formatter.ts`, commit
//! 04fbf50; `docs/cli/headless.md`); `stats.models.<model>.{api.totalRequests,
//! tokens.{prompt, candidates, cached, thoughts}}` (`packages/core/src/telemetry/uiTelemetry.ts`,
//! commit 024891a); exit status 53 when the turn limit is hit. Run for real, version 0.61.0 (npm
//! `@google/gemini-cli`), against the tests' loopback Gemini API (`GOOGLE_GEMINI_BASE_URL`,
//! `streamGenerateContent?alt=sse` only): with that variable set it picks the "gateway" auth
//! method and refuses it unless the settings select `gemini-api-key`; headless, it refuses to
//! run in an untrusted folder; it offers only read tools (no shell, no writes) in headless
//! mode; after its retries against a failing API it prints its error object on stderr, not
//! stdout (exit status 244).
//!
//! Project settings are off by the sandbox only: Gemini CLI runs headless only in a trusted
//! folder, so the fresh HOME trusts the worktree and the project's settings (`.gemini/`,
//! `.env`) are emptied in the sandbox; without a sandbox Gemini CLI loads them.

use super::cli::{AgentCli, ArgsError, Call};
use super::parse::{
    AgentResult, ERROR_TAIL_CHARS, Shown, ToolTally, json_object, tail, unparsable,
};
use crate::verdict::{Cause, CouldNotRun};
use repoprobe_core::model::trajectory::{
    FinalMetrics, Message, ObservationResult, Step, StepSource, ToolCall, Trajectory,
    TrajectoryAgent,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The Gemini CLI tools a run never offers its model: those that reach the web.
pub const GEMINI_EXCLUDED_TOOLS: &[&str] = &["google_web_search", "web_fetch"];

/// Google's Gemini CLI (`gemini -p … --output-format stream-json`).
pub(super) struct Gemini;

impl AgentCli for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn default_program(&self) -> Option<&'static str> {
        Some("gemini")
    }

    fn usual_env(&self) -> &'static [&'static str] {
        &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"]
    }

    fn key_var(&self) -> Option<&'static str> {
        Some("GEMINI_API_KEY")
    }

    fn base_url_var(&self) -> Option<&'static str> {
        Some("GOOGLE_GEMINI_BASE_URL")
    }

    fn default_api_url(&self) -> Option<&'static str> {
        Some("https://generativelanguage.googleapis.com")
    }

    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("GEMINI_TELEMETRY_ENABLED", "false")]
    }

    fn args(&self, call: &Call) -> Result<Vec<OsString>, ArgsError> {
        let mut args = vec![OsString::from(format!("--prompt={}", call.prompt))];
        args.extend(
            [
                "--output-format",
                "stream-json",
                "-m",
                call.cfg.model.as_str(),
            ]
            .map(OsString::from),
        );
        Ok(args)
    }

    fn prompt_on_stdin(&self) -> bool {
        // `-p` is appended to stdin input, so stdin stays empty.
        false
    }

    fn home_settings(&self, home: &Path, workdir: &str) -> std::io::Result<Vec<(String, String)>> {
        // Folder trust on (it is off by default) and the worktree alone trusted: Gemini CLI
        // 0.61.0 refuses to run headless anywhere else (run for real), and the project
        // settings it then loads are emptied by the sandbox (`project_settings`). The API key
        // is the auth method: with `GOOGLE_GEMINI_BASE_URL` set, 0.61.0 would otherwise pick
        // the "gateway" method and refuse it ("Invalid auth method selected"). Telemetry,
        // usage statistics and update checks off.
        let dir = home.join(".gemini");
        std::fs::create_dir_all(&dir)?;
        let settings = serde_json::json!({
            "security": {
                "folderTrust": {"enabled": true},
                "auth": {"selectedType": "gemini-api-key"},
            },
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            // No web tools: a search runs at Google's end, beyond any network rule of ours,
            // and would find the Discussion a question came from. 0.61.0 offers both by
            // default (`WEB_SEARCH_TOOL_NAME`, `WEB_FETCH_TOOL_NAME` in its bundle;
            // `tools.exclude` is merged in `mergeExcludeTools`).
            "tools": {"exclude": GEMINI_EXCLUDED_TOOLS},
        });
        std::fs::write(dir.join("settings.json"), format!("{settings:#}\n"))?;
        let trusted = dir.join("trustedFolders.json");
        let rules = serde_json::json!({ workdir: "TRUST_FOLDER" });
        std::fs::write(&trusted, format!("{rules:#}\n"))?;
        Ok(vec![
            (
                "GEMINI_CLI_HOME".into(),
                home.to_string_lossy().into_owned(),
            ),
            (
                "GEMINI_CLI_TRUSTED_FOLDERS_PATH".into(),
                trusted.to_string_lossy().into_owned(),
            ),
        ])
    }

    fn project_settings(&self, workdir: &Path) -> Vec<PathBuf> {
        // In a trusted folder 0.61.0 loads the project's `.gemini/` (settings with MCP servers,
        // tool discovery commands, hooks; extensions) and `.env` (which could point it and its
        // key at another server).
        [".gemini", ".env"]
            .iter()
            .map(|n| workdir.join(n))
            .collect()
    }

    fn read(&self, stdout: &str, stderr: &str, _own: Option<&str>) -> AgentResult {
        read_gemini(stdout, stderr)
    }

    /// Gemini CLI's fatal errors that are the set-up's, not the model's
    /// (`packages/core/src/utils/errors.ts`): 41 authentication ("Error: Invalid auth method
    /// selected."), 44 its sandbox, 52 its configuration.
    fn exit_could_not_run(&self, exit_code: Option<i32>, stderr: &str) -> Option<CouldNotRun> {
        let (cause, what) = match exit_code? {
            41 => (Cause::Auth, "could not authenticate"),
            44 => (Cause::Sandbox, "could not set its sandbox up"),
            52 => (Cause::Config, "refused its configuration"),
            _ => return None,
        };
        let code = exit_code?;
        let detail = tail(stderr.trim(), ERROR_TAIL_CHARS);
        Some(CouldNotRun::new(
            cause,
            if detail.is_empty() {
                format!("Gemini CLI {what} (exit status {code})")
            } else {
                format!("Gemini CLI {what} (exit status {code}): {detail}")
            },
        ))
    }
}

/// Gemini CLI's output, read in one pass: `--output-format stream-json`'s events (0.61.0,
/// `packages/core/src/output/stream-json-formatter.ts` and `nonInteractiveCli.ts`) into its
/// trajectory ([`GeminiRead::event`]) and how the run ended ([`GeminiRead::finish`]); an output
/// with neither an `init` nor a `result` event is `--output-format json`'s ([`parse_gemini`]).
fn read_gemini(stdout: &str, stderr: &str) -> AgentResult {
    let mut t = Trajectory::new(TrajectoryAgent::default());
    t.notes = Some(
        "Gemini CLI's stream-json gives a tool result's display text, not what the model was sent"
            .into(),
    );
    let mut read = GeminiRead {
        t,
        new_response: true,
        stream: false,
        meta: BTreeMap::new(),
        text: String::new(),
        warnings: Vec::new(),
        result: None,
    };
    for line in stdout.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line.trim()) {
            read.event(&v);
        }
    }
    if !read.stream {
        return AgentResult {
            trajectory: Some(read.t),
            ..parse_gemini(stdout, stderr)
        };
    }
    read.finish(stdout)
}

/// What Gemini CLI's stream-json events said so far: JSONL events `init {session_id, model}`,
/// `message {role: user | assistant, content, delta}`, `tool_use {tool_name, tool_id,
/// parameters}`, `tool_result {tool_id, status: success | error, output, error {type,
/// message}}`, `error {severity, message}`, and last `result {status, error?, stats
/// {input_tokens, output_tokens, cached, tool_calls, models}}`.
struct GeminiRead {
    t: Trajectory,
    /// Whether the next assistant text or tool call opens a new model response.
    new_response: bool,
    /// Whether an `init` or `result` event came: the output is stream-json's.
    stream: bool,
    meta: BTreeMap<String, Value>,
    /// The assistant's text since its last tool call: the answer, in the end (as
    /// `--output-format json`'s `response`).
    text: String,
    warnings: Vec<Value>,
    result: Option<Value>,
}

impl GeminiRead {
    /// One event as ATIF steps, with its timestamp: the `user` message a user step, then one
    /// agent step per model response — the assistant text and tool calls between two tool
    /// results — each call's `tool_result` in place (0.61.0 gives a result's display text only,
    /// often empty; the call's arguments say what it read), an `error` event a system step, the
    /// `result` stats the totals.
    fn event(&mut self, v: &Value) {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let at = Some(s("timestamp")).filter(|x| !x.is_empty());
        let t = &mut self.t;
        match s("type").as_str() {
            "init" => {
                self.stream = true;
                self.meta
                    .insert("session_id".into(), v["session_id"].clone());
                t.session_id = Some(s("session_id")).filter(|x| !x.is_empty());
            }
            "message" if s("role") == "user" => {
                let step = t.push(Step::new(StepSource::User, s("content")));
                step.timestamp = at;
                self.new_response = true;
            }
            kind @ ("message" | "tool_use") => {
                if kind == "tool_use" {
                    self.text.clear();
                } else if s("role") == "assistant" {
                    self.text.push_str(&s("content"));
                }
                self.response(v, at);
            }
            "tool_result" => {
                let failed = s("status") != "success";
                let out = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(|| s("output"), str::to_string);
                t.attach_result(ObservationResult::of(s("tool_id"), out, failed));
                self.new_response = true;
            }
            "error" => {
                let step = t.push(crate::atif::system_note(
                    s("message"),
                    s("severity") == "error",
                ));
                step.timestamp = at;
                self.warnings.push(Value::String(s("message")));
            }
            "result" => {
                self.stream = true;
                t.final_metrics = Some(gemini_totals(v));
                self.result = Some(v.clone());
            }
            _ => {}
        }
    }

    /// A `message` or `tool_use` event: more of the current model response, or a new one.
    fn response(&mut self, v: &Value, at: Option<String>) {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let t = &mut self.t;
        if self.new_response || t.steps.last().is_none_or(|x| x.source != StepSource::Agent) {
            let step = t.push(crate::atif::agent_step(""));
            step.timestamp = at;
            self.new_response = false;
        }
        let step = t.steps.last_mut().expect("a step was pushed");
        if s("type") == "message" {
            let mut m = step.message.text();
            m.push_str(&s("content"));
            step.message = Message::Text(m);
        } else {
            step.tool_calls
                .get_or_insert_with(Vec::new)
                .push(ToolCall::new(
                    s("tool_id"),
                    s("tool_name"),
                    v.get("parameters").cloned().unwrap_or(Value::Null),
                ));
        }
    }

    /// How the run ended, by its `result` event: the answer (the assistant's text after its
    /// last tool call), or the error; its model API's failure could not run. The counts are the
    /// trajectory's (`super::parse::count`).
    fn finish(self, stdout: &str) -> AgentResult {
        let Some(v) = self.result else {
            // A stream cut before its result event still shows the steps it printed.
            let shown = if self.t.steps.is_empty() {
                Shown::Nothing
            } else {
                Shown::Steps
            };
            return AgentResult {
                trajectory: Some(self.t),
                shown,
                ..unparsable("Gemini CLI stream-json with a result event", stdout)
            };
        };
        let mut r = AgentResult {
            meta: self.meta,
            trajectory: Some(self.t),
            shown: Shown::Steps,
            ..AgentResult::default()
        };
        if v.get("status").and_then(Value::as_str) == Some("success") {
            r.answer = Some(self.text);
        } else {
            stream_failure(&mut r, &v);
        }
        if let Some(models) = v.pointer("/stats/models").and_then(Value::as_object) {
            r.meta.insert(
                "models".into(),
                Value::Array(models.keys().cloned().map(Value::String).collect()),
            );
        }
        if !self.warnings.is_empty() {
            r.meta.insert("errors".into(), Value::Array(self.warnings));
        }
        r
    }
}

/// A failed `result` event's error into `r`: its model API failed (after its own retries)
/// when the message is `parseAndFormatApiError`'s words "[API Error: <the API's error body>]",
/// whose body names the HTTP status (the stream's result carries no code of its own); else the
/// agent's error.
fn stream_failure(r: &mut AgentResult, v: &Value) {
    let msg = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = v
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let why = format!("Gemini: {kind}: {}", tail(msg, ERROR_TAIL_CHARS));
    if msg.starts_with("[API Error") {
        let code = api_error_code(msg);
        r.meta.insert(
            "api_error_status".into(),
            code.map_or(Value::from("unknown"), Value::from),
        );
        let cause = code
            .and_then(|c| u16::try_from(c).ok())
            .map_or(Cause::Api, Cause::of_http_status);
        r.could_not_run = Some(CouldNotRun::new(cause, why));
    } else {
        r.error = Some(why);
    }
}

/// A `result` event's stats as the trajectory's totals.
fn gemini_totals(v: &Value) -> FinalMetrics {
    let n = |k: &str| v.pointer(&format!("/stats/{k}")).and_then(Value::as_u64);
    let mut fm = FinalMetrics {
        total_prompt_tokens: n("input_tokens"),
        total_completion_tokens: n("output_tokens"),
        total_cached_tokens: n("cached"),
        ..FinalMetrics::default()
    };
    if let Some(ms) = n("duration_ms") {
        fm.extra = Some(serde_json::Map::from_iter([(
            "duration_s".to_string(),
            Value::from(ms as f64 / 1000.0),
        )]));
    }
    fm
}

/// The HTTP status in an API error body quoted in `msg` (`{"error":{"code":500,…}}`).
fn api_error_code(msg: &str) -> Option<u64> {
    let at = msg.find("\"code\":")? + "\"code\":".len();
    let digits: String = msg[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|c| (400..600).contains(c))
}

/// Gemini CLI `--output-format json`: one (pretty-printed) object on stdout, or for a failure
/// an object with `error` on stderr (0.61.0, run for real: after its retries against a failing
/// API it prints the object there, after the stack trace, and exits with status 244). An
/// `error.code` that is an HTTP status means the model API failed (`api_error_status`).
fn parse_gemini(stdout: &str, stderr: &str) -> AgentResult {
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
            if let Some(status) = code
                .as_u64()
                .filter(|c| (400..600).contains(c))
                .and_then(|c| u16::try_from(c).ok())
            {
                r.meta.insert("api_error_status".into(), code.clone());
                let why = r.error.take().unwrap_or_default();
                r.could_not_run = Some(CouldNotRun::new(Cause::of_http_status(status), why));
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

#[cfg(test)]
mod tests {
    use crate::external::tests::command_line;
    use crate::external::{AgentConfig, ExternalAgent, home_settings, parse};
    use crate::verdict::{Cause, CouldNotRun, Verdict};
    use repoprobe_core::model::trajectory::StepSource;
    use serde_json::Value;

    /// Gemini CLI `--output-format json`, in the shape of json-formatter.ts and uiTelemetry.ts.
    const GEMINI_SUCCESS: &str = r#"{
  "session_id": "c0ffee",
  "response": "It is parsed in `src/lib.rs`.",
  "stats": {
    "models": {
      "gemini-2.5-pro": {
        "api": { "totalRequests": 3, "totalErrors": 0, "totalLatencyMs": 5100 },
        "tokens": { "input": 900, "prompt": 1200, "candidates": 80, "total": 1300, "cached": 300, "thoughts": 20, "tool": 0 }
      }
    },
    "tools": { "totalCalls": 2, "totalSuccess": 2, "totalFail": 0, "totalDurationMs": 12, "totalDecisions": {}, "byName": {} },
    "files": { "totalLinesAdded": 0, "totalLinesRemoved": 0 }
  }
}"#;

    const GEMINI_ERROR: &str = r#"{
  "session_id": "c0ffee",
  "error": { "type": "FatalAuthenticationError", "message": "API key not valid", "code": 41 }
}"#;

    #[test]
    fn gemini_json_gives_response_and_model_stats() {
        let r = parse(ExternalAgent::Gemini, GEMINI_SUCCESS, "", Some(0));
        assert_eq!(r.error, None);
        assert_eq!(r.answer.as_deref(), Some("It is parsed in `src/lib.rs`."));
        assert_eq!(r.turns, Some(3));
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.cache_read_tokens),
            (Some(1200), Some(100), Some(300))
        );
        assert_eq!(r.meta["tool_calls"], 2);
        let noisy = format!("Loaded cached credentials.\n{GEMINI_SUCCESS}");
        assert_eq!(
            parse(ExternalAgent::Gemini, &noisy, "", Some(0)).answer,
            r.answer
        );
    }

    #[test]
    fn gemini_error_object_is_the_error() {
        let r = parse(ExternalAgent::Gemini, GEMINI_ERROR, "", Some(41));
        assert_eq!(r.answer, None);
        // Exit status 41 is its authentication's failure, in its own words.
        assert_eq!(
            r.verdict(),
            Verdict::CouldNotRun(CouldNotRun::new(
                Cause::Auth,
                "Gemini: FatalAuthenticationError: API key not valid"
            ))
        );
        assert_eq!(r.meta["error_code"], 41);
        assert_eq!(
            r.meta.get("api_error_status"),
            None,
            "41 is the CLI's own code"
        );
        // Gemini CLI 0.61.0 after its retries against a failing API (run for real): nothing on
        // stdout, the stack trace and then the object on stderr, exit status 244.
        let r = parse(
            ExternalAgent::Gemini,
            "",
            GEMINI_API_FAILED_STDERR,
            Some(244),
        );
        assert_eq!(r.answer, None);
        assert_eq!(r.meta["api_error_status"], 500);
        let c = r.could_not_run.as_ref().unwrap();
        assert_eq!(c.cause, Cause::Api);
        assert!(
            c.why.starts_with("Gemini: Error: {\"error\":{\"code\":500"),
            "{r:?}"
        );
    }

    const GEMINI_API_FAILED_STDERR: &str = r#"Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-30T17-02-20-251Z.json _ApiError: {"error":{"code":500,"message":"upstream exploded","status":"INTERNAL"}}
    at throwErrorIfNotOK (file:///tools/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)
    at async Turn.run (file:///tools/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {
  status: 500
}
{
  "session_id": "2b79072d-23fa-49f9-8249-ae443398b57a",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":500,\"message\":\"upstream exploded\",\"status\":\"INTERNAL\"}}",
    "code": 500
  }
}
"#;

    #[test]
    fn gemini_runs_whose_every_tool_call_failed_are_environment_failures() {
        let out = |ok: u64| {
            serde_json::json!({"response": "It is 42.", "stats": {"models": {},
                "tools": {"totalCalls": 3, "totalSuccess": ok, "totalFail": 3 - ok}}})
            .to_string()
        };
        let r = parse(ExternalAgent::Gemini, &out(0), "", Some(0));
        assert!(
            r.could_not_run
                .as_ref()
                .is_some_and(|c| c.cause == Cause::Environment)
                && r.answer.is_none(),
            "{r:?}"
        );
        let r = parse(ExternalAgent::Gemini, &out(1), "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("It is 42."), "{r:?}");
    }

    #[test]
    fn the_prompt_is_an_argument_and_stdin_stays_empty() {
        let gemini = AgentConfig::new(ExternalAgent::Gemini, "gemini-2.5-pro");
        assert_eq!(
            command_line(&gemini, Vec::new()),
            (
                "gemini".into(),
                "--prompt=Why? --output-format stream-json -m gemini-2.5-pro".into(),
                None
            )
        );
    }

    #[test]
    fn the_fresh_home_trusts_the_worktree_alone_and_selects_the_api_key() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, wt) = (tmp.path().join("home"), tmp.path().join("wt \"q\""));
        std::fs::create_dir_all(&wt).unwrap();
        let wt_s = wt.canonicalize().unwrap().to_string_lossy().into_owned();
        let vars = home_settings(ExternalAgent::Gemini, &home, &wt).unwrap();
        let read = |p: &str| std::fs::read_to_string(home.join(p)).unwrap();
        let settings: Value = serde_json::from_str(&read(".gemini/settings.json")).unwrap();
        assert_eq!(settings["security"]["folderTrust"]["enabled"], true);
        let trusted: Value = serde_json::from_str(&read(".gemini/trustedFolders.json")).unwrap();
        assert_eq!(trusted, serde_json::json!({ wt_s.clone(): "TRUST_FOLDER" }));
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert!(
            vars.contains(&(
                "GEMINI_CLI_TRUSTED_FOLDERS_PATH".into(),
                home.join(".gemini/trustedFolders.json")
                    .to_string_lossy()
                    .into_owned()
            ))
        );
    }

    /// Gemini CLI 0.61.0's `stream-json` of real runs against the tests' server: list, search,
    /// read, answer; and one whose model API failed for good after its retries.
    const GEMINI_STREAM: &str =
        include_str!("../../../../testdata/agents/gemini-0.61.0.stream.jsonl");
    const GEMINI_STREAM_API_ERROR: &str =
        include_str!("../../../../testdata/agents/gemini-0.61.0-api-error.stream.jsonl");

    #[test]
    fn gemini_stream_json_gives_the_answer_the_usage_and_a_step_per_response() {
        let r = parse(ExternalAgent::Gemini, GEMINI_STREAM, "", Some(0));
        assert!(
            r.answer
                .as_deref()
                .unwrap()
                .starts_with("The tools returned:"),
            "{r:?}"
        );
        assert_eq!(
            (r.input_tokens, r.output_tokens, r.cache_read_tokens),
            (Some(3200), Some(160), Some(400))
        );
        assert_eq!(r.meta["tool_calls"], 3);
        // Its turns are the trajectory's model responses, as the record's (the stream's
        // result gives no count of its own).
        assert_eq!(r.turns, Some(4));
        let t = r.trajectory.unwrap();
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        assert_eq!(t.steps[0].source, StepSource::User);
        assert_eq!(t.steps.len(), 5, "the prompt, three calls, the answer");
        assert!(t.steps.iter().all(|s| s.timestamp.is_some()));
        let (t, f) = crate::atif::assemble(&crate::atif::RunInfo::default(), t);
        assert_eq!(t.steps.len(), 5, "the prompt is not added twice");
        assert_eq!(
            (f.turns, f.files_read),
            (4, vec!["docs/notes.txt".to_string()])
        );
    }

    #[test]
    fn gemini_api_failure_in_stream_json_could_not_run() {
        let r = parse(
            ExternalAgent::Gemini,
            GEMINI_STREAM_API_ERROR,
            "",
            Some(244),
        );
        assert_eq!(r.meta["api_error_status"], 500);
        assert!(
            matches!(r.verdict(), Verdict::CouldNotRun(ref c) if c.cause == Cause::Api && c.why.contains("upstream exploded")),
            "{r:?}"
        );
    }

    #[test]
    fn gemini_without_usable_credentials_could_not_run() {
        // 0.61.0 with no key it accepts: "Error: Invalid auth method selected.", exit status 41.
        let r = parse(
            ExternalAgent::Gemini,
            "",
            "Error: Invalid auth method selected.\n",
            Some(41),
        );
        assert_eq!(
            r.verdict(),
            Verdict::CouldNotRun(CouldNotRun::new(
                Cause::Auth,
                "Gemini CLI could not authenticate (exit status 41): Error: Invalid auth method selected."
            ))
        );
        // Its turn limit (53) is the agent's failure, not the set-up's.
        let r = parse(ExternalAgent::Gemini, "", "turn limit", Some(53));
        assert!(matches!(r.verdict(), Verdict::AgentFailed(_)), "{r:?}");
    }
}
