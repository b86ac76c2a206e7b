//! Google's Gemini CLI (`--agent gemini`).
//!
//! Its format was checked as follows (re-check when the CLI moves): `--output-format json`
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

use super::cli::{AgentCli, Call};
use super::parse::{AgentResult, ERROR_TAIL_CHARS, ToolTally, json_object, tail, unparsable};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The Gemini CLI tools a run never offers its model: those that reach the web.
pub const GEMINI_EXCLUDED_TOOLS: &[&str] = &["google_web_search", "web_fetch"];

/// Google's Gemini CLI (`gemini -p … --output-format json`).
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

    fn base_url_var(&self) -> Option<&'static str> {
        Some("GOOGLE_GEMINI_BASE_URL")
    }

    fn default_api_url(&self) -> Option<&'static str> {
        Some("https://generativelanguage.googleapis.com")
    }

    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("GEMINI_TELEMETRY_ENABLED", "false")]
    }

    fn args(&self, call: &Call) -> Result<Vec<OsString>, String> {
        let mut args = vec![OsString::from(format!("--prompt={}", call.prompt))];
        args.extend(["--output-format", "json", "-m", call.cfg.model.as_str()].map(OsString::from));
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

    fn parse(&self, stdout: &str, stderr: &str) -> AgentResult {
        parse_gemini(stdout, stderr)
    }

    /// Gemini CLI's fatal errors that are the set-up's, not the model's
    /// (`packages/core/src/utils/errors.ts`): 41 authentication ("Error: Invalid auth method
    /// selected."), 44 its sandbox, 52 its configuration.
    fn exit_could_not_run(&self, exit_code: Option<i32>, stderr: &str) -> Option<String> {
        let what = match exit_code? {
            41 => "could not authenticate",
            44 => "could not set its sandbox up",
            52 => "refused its configuration",
            _ => return None,
        };
        let code = exit_code?;
        let detail = tail(stderr.trim(), ERROR_TAIL_CHARS);
        Some(if detail.is_empty() {
            format!("Gemini CLI {what} (exit status {code})")
        } else {
            format!("Gemini CLI {what} (exit status {code}): {detail}")
        })
    }
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
            if code.as_u64().is_some_and(|c| (400..600).contains(&c)) {
                r.meta.insert("api_error_status".into(), code.clone());
                r.could_not_run = r.error.clone();
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
        assert_eq!(
            r.error.as_deref(),
            Some("Gemini: FatalAuthenticationError: API key not valid")
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
        assert!(
            r.error
                .as_deref()
                .unwrap()
                .starts_with("Gemini: Error: {\"error\":{\"code\":500"),
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
            r.environment_failure.is_some() && r.answer.is_none(),
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
                "--prompt=Why? --output-format json -m gemini-2.5-pro".into(),
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
}
