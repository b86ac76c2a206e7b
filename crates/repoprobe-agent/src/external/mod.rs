//! External coding agents run as CLIs in a question's worktree (`--agent claude-code | codex |
//! gemini | command`): the invocation of each preset, the run (its own process group, output
//! captured with caps, a timeout that kills the whole group) and the parse of each CLI's
//! machine-readable result into an [`AgentResult`].
//!
//! The formats were checked as follows (re-check when a CLI moves):
//! - **Claude Code** `-p --output-format json`: run for real, version 2.1.332 (npm
//!   `@anthropic-ai/claude-code`), against a loopback Anthropic-compatible server; one JSON
//!   object `{"type": "result", "subtype": "success" | "error_max_turns" | …, "is_error",
//!   "result", "num_turns", "total_cost_usd", "usage": {"input_tokens", "output_tokens",
//!   "cache_creation_input_tokens", "cache_read_input_tokens", …}, "session_id", "stop_reason",
//!   "terminal_reason", "errors": [..] (on errors), …}`; exit status 1 on `is_error`.
//! - **Codex CLI** `exec --json`: JSONL `ThreadEvent`s as defined in openai/codex
//!   `codex-rs/exec/src/exec_events.rs` (commit 08a1f30): `thread.started {thread_id}`,
//!   `turn.started`, `turn.completed {usage: {input_tokens, cached_input_tokens,
//!   output_tokens}}`, `turn.failed {error: {message}}`, `item.started|updated|completed {item:
//!   {id, type: agent_message {text} | reasoning | command_execution | file_change | mcp_tool_call
//!   | web_search | todo_list | error {message}}}`, `error {message}`. Flags from
//!   `codex-rs/exec/src/cli.rs` (commit 0280533): the prompt is read from stdin when it is `-`.
//!   Run for real, version 0.171.0 (npm `@openai/codex`), against the tests' loopback Responses
//!   API: it ignores `OPENAI_BASE_URL` (hence a model provider of ours in `-c` overrides, see
//!   `codex_overrides`), posts only `/v1/responses` (SSE), runs its `exec_command` tool under
//!   its own read-only bwrap sandbox nested in ours (writes fail with "Read-only file system"),
//!   needs no `--skip-git-repo-check` for a worktree whose `.git` pointer leads to a hidden git
//!   directory, refuses to set its sandbox helper up when CODEX_HOME lies under TMPDIR (see
//!   `run`), and words a model API failure as `error` events "Reconnecting... n/5 (…)" then
//!   `turn.failed` (a 5xx without its status), exit status 1.
//! - **Gemini CLI** `--output-format json`: one object `{"session_id", "response", "stats",
//!   "error": {"type", "message", "code"}}` (google-gemini/gemini-cli
//!   `packages/core/src/output/json-formatter.ts`, commit 04fbf50; `docs/cli/headless.md`);
//!   `stats.models.<model>.{api.totalRequests, tokens.{prompt, candidates, cached, thoughts}}`
//!   (`packages/core/src/telemetry/uiTelemetry.ts`, commit 024891a); exit status 53 when the turn
//!   limit is hit. Run for real, version 0.61.0 (npm `@google/gemini-cli`), against the tests'
//!   loopback Gemini API (`GOOGLE_GEMINI_BASE_URL`, `streamGenerateContent?alt=sse` only): with
//!   that variable set it picks the "gateway" auth method and refuses it unless the settings
//!   select `gemini-api-key`; headless, it refuses to run in an untrusted folder; it offers only
//!   read tools (no shell, no writes) in headless mode; after its retries against a failing API
//!   it prints its error object on stderr, not stdout (exit status 244).
//!
//! Project settings are off: each preset starts its CLI so that the repository's own settings,
//! hooks, MCP servers and environment overrides are ignored — Claude Code with
//! `--setting-sources user` (the run's fresh HOME), `--settings {"disableAllHooks":true}` and
//! `--strict-mcp-config --mcp-config {"mcpServers":{}}` (flags of 2.1.332's `--help`); Codex
//! through the fresh HOME's `~/.codex/config.toml` written by [`home_settings`] (the worktree
//! `untrusted`: codex-rs `core/src/config_loader/mod.rs` loads project `.codex/` layers only for
//! trusted projects); Gemini CLI, which runs headless only in a trusted folder, by the sandbox:
//! the fresh HOME trusts the worktree and [`project_settings`] (`.gemini/`, `.env`) are emptied
//! in it, so without a sandbox Gemini CLI loads them. The tests plant each CLI's project settings
//! and see them ignored.
//!
//! Confinement: with [`AgentConfig::sandbox`] every process (the `--version` probe included) runs
//! under bubblewrap (`super::sandbox`), seeing the worktree and its scratch directory only. Without
//! it, the child still cannot read our `/proc/<pid>/environ`: we are non-dumpable
//! (the CLI's `run` makes us so first) and the child loses `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN` and `CAP_PERFMON` before it
//! starts, so even root cannot.
//!
//! Secrets: the agent's environment is built from scratch (a few base variables plus the names
//! and values the caller lists) and the values of secret-looking variables are scrubbed from
//! everything read back, so no returned struct or message ever holds a key. A failed run never
//! yields an answer: a non-zero exit, unparsable output, an error result or a timeout sets
//! `error` and leaves `answer` empty.
//!
//! Layout: `presets` (the CLIs we know, `AgentConfig`), `env` (the environment from scratch,
//! secret scrubbing), `process` (the runner), `parse` (one parser per CLI); this module builds
//! the invocation, confines it and runs it. The submodules import none of this one.

use super::proxy;
use super::sandbox::{self, Mounts};
use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod env;
mod parse;
mod presets;
mod process;

use env::secrets_of;
pub use env::{BASE_ENV, agent_env};
pub use parse::AgentResult;
pub use parse::parse;
use parse::{ERROR_TAIL_CHARS, tail};
pub use presets::{
    AgentConfig, CLAUDE_MCP_CONFIG, CLAUDE_SETTINGS, DEFAULT_MAX_STDOUT, ExternalAgent,
};
pub use process::Invocation;
use process::{RawOutput, execute};

/// A finished (or killed) run.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    pub result: AgentResult,
    /// The exit status; `None` when killed by a signal or timed out.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Wall-clock seconds, prompt writing included.
    pub duration_s: f64,
    /// The program and arguments (scrubbed; the prompt is in a file, except Gemini's `-p`).
    pub command: Vec<String>,
    /// stdout (scrubbed, at most `max_stdout` bytes).
    pub stdout: String,
    /// The end of stderr (scrubbed).
    pub stderr_tail: String,
    /// What the run could reach: `https://api.anthropic.com:443 only, through repoprobe's
    /// proxy (key added outside)`, `none`, or `open` (no sandbox).
    pub network: String,
}

/// Builds the command of one run: `prompt_file` already holds `prompt` and lies outside the
/// worktree; `env` is the agent's whole environment.
pub fn invocation(
    cfg: &AgentConfig,
    workdir: &Path,
    prompt: &str,
    prompt_file: &Path,
    env: Vec<(OsString, OsString)>,
) -> Result<Invocation, String> {
    let model = cfg.model.as_str();
    let mut args: Vec<OsString> = Vec::new();
    let mut stdin = Some(prompt_file.to_path_buf());
    match cfg.agent {
        ExternalAgent::ClaudeCode => {
            // The prompt comes on stdin: `--tools` takes several values and would swallow a
            // positional prompt, and stdin has no argument length limit.
            // The event stream (`--verbose` is required with it in `-p` mode) shows each tool
            // result, so a run whose tools all failed is told from an answer; its last line is
            // the same result object as `--output-format json`'s.
            args.extend(
                [
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--model",
                    model,
                ]
                .map(OsString::from),
            );
            if let Some(n) = cfg.max_turns {
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
        }
        ExternalAgent::Codex => {
            // No `--skip-git-repo-check`: the worktree's `.git` pointer is enough for 0.171.0,
            // though the sandbox hides the git directory it leads to (run for real).
            args.extend(["exec", "--json", "-s", "read-only", "-m", model].map(OsString::from));
            let base_url = env
                .iter()
                .find(|(k, _)| k == "OPENAI_BASE_URL")
                .map(|(_, v)| v.to_string_lossy().into_owned())
                .filter(|v| !v.trim().is_empty());
            for o in codex_overrides(base_url.as_deref().unwrap_or(CODEX_DEFAULT_BASE_URL)) {
                args.extend(["-c".into(), o.into()]);
            }
        }
        ExternalAgent::Gemini => {
            // `-p` is appended to stdin input, so stdin stays empty.
            stdin = None;
            args.push(format!("--prompt={prompt}").into());
            args.extend(["--output-format", "json", "-m", model].map(OsString::from));
        }
        ExternalAgent::Command => {
            let template = cfg
                .command
                .as_deref()
                .filter(|t| !t.trim().is_empty())
                .ok_or("--agent command needs a command template")?;
            let script = substitute(
                template,
                &[
                    ("{prompt_file}", prompt_file.as_os_str()),
                    ("{model}", OsStr::new(model)),
                    ("{workdir}", workdir.as_os_str()),
                ],
            );
            args.extend([OsString::from("-c"), script]);
        }
    }
    args.extend(cfg.extra_args.iter().map(OsString::from));
    if cfg.agent == ExternalAgent::Codex {
        // After every option: read the prompt from stdin.
        args.push("-".into());
    }
    let secrets = secrets_of(&env);
    Ok(Invocation {
        program: cfg.program(),
        args,
        cwd: workdir.to_path_buf(),
        stdin,
        env,
        secrets,
    })
}

/// The Responses API Codex calls when `OPENAI_BASE_URL` is not passed.
pub const CODEX_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

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

/// The Gemini CLI tools a run never offers its model: those that reach the web.
pub const GEMINI_EXCLUDED_TOOLS: &[&str] = &["google_web_search", "web_fetch"];

/// The name of the model provider the Codex preset defines.
const CODEX_PROVIDER: &str = "repoprobe";

/// Runs the agent once in `workdir` on `prompt`, which is written to `scratch/prompt.txt`
/// (`scratch` must lie outside the worktree, or the prompt would count as the agent's edit).
/// Every failure is in the returned result's `error`; this never panics or returns early.
pub async fn run(cfg: &AgentConfig, workdir: &Path, prompt: &str, scratch: &Path) -> RunOutcome {
    let started = Instant::now();
    let prompt_file = scratch.join("prompt.txt");
    let failed = |error: String, command: Vec<String>| RunOutcome {
        result: AgentResult {
            error: Some(error),
            ..AgentResult::default()
        },
        exit_code: None,
        timed_out: false,
        duration_s: started.elapsed().as_secs_f64(),
        command,
        stdout: String::new(),
        stderr_tail: String::new(),
        network: String::new(),
    };
    if let Err(e) =
        std::fs::create_dir_all(scratch).and_then(|_| std::fs::write(&prompt_file, prompt))
    {
        return failed(
            format!(
                "could not write the prompt file {}: {e}",
                prompt_file.display()
            ),
            Vec::new(),
        );
    }
    let mut env = agent_env(cfg, workdir, &prompt_file);
    // The real values, scrubbed from what comes back even though the agent never sees them.
    let real_secrets = secrets_of(&env);
    let (proxy, network) = match seal(cfg, &mut env) {
        Ok(sealed) => sealed,
        Err(e) => return failed(format!("could not start the API proxy: {e}"), Vec::new()),
    };
    let inv = match invocation(cfg, workdir, prompt, &prompt_file, env) {
        Ok(mut inv) => {
            inv.secrets.extend(real_secrets);
            inv.secrets
                .sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            inv.secrets.dedup();
            inv
        }
        Err(e) => return failed(e, Vec::new()),
    };
    // Writable: the worktree (edits stay observable), the scratch directory (prompt, fresh HOME)
    // and a HOME of the user's choosing; the worktree's `.git` pointer read-only.
    let mut writable = vec![workdir.to_path_buf(), scratch.to_path_buf()];
    if let Some(home) = cfg.home.as_ref().filter(|h| !h.starts_with(scratch)) {
        writable.push(home.clone());
    }
    let emptied = project_settings(cfg.agent, workdir);
    let door = proxy
        .as_ref()
        .zip(cfg.bridge.as_ref())
        .map(|(p, bridge)| sandbox::ApiDoor {
            socket: p.socket().to_path_buf(),
            bridge: bridge.clone(),
        });
    let mut inv = confine(
        cfg,
        inv,
        &writable,
        Some(&workdir.join(".git")),
        &emptied,
        door,
    );
    if cfg.agent == ExternalAgent::Codex || cfg.sandbox.is_some() {
        // In the sandbox `/tmp` is read-only: the agent's temporary files go to the scratch
        // directory's own. Codex needs that even unconfined: it puts the helper its own sandbox
        // execs (`codex-linux-sandbox`) next to CODEX_HOME, and refuses to when CODEX_HOME lies
        // under the temporary directory: every command then fails ("bwrap: execvp
        // codex-linux-sandbox"); the fresh HOME is not under the scratch directory's `tmp`.
        let tmp = scratch.join("tmp");
        if let Err(e) = std::fs::create_dir_all(&tmp) {
            return failed(format!("cannot create {}: {e}", tmp.display()), Vec::new());
        }
        inv.env.retain(|(k, _)| k != "TMPDIR");
        inv.env.push(("TMPDIR".into(), tmp.into_os_string()));
    }
    let command: Vec<String> = std::iter::once(&inv.program)
        .chain(&inv.args)
        .map(|a| inv.scrub(&a.to_string_lossy()))
        .collect();
    let raw = match execute(&inv, cfg.timeout, cfg.max_stdout, cfg.sandbox.is_none()).await {
        Ok(raw) => raw,
        Err(e) => {
            let e = format!("could not start {}: {e}", inv.program.to_string_lossy());
            return failed(inv.scrub(&e), command);
        }
    };
    let stdout = inv.scrub(&String::from_utf8_lossy(&raw.stdout));
    let stderr = inv.scrub(&String::from_utf8_lossy(&raw.stderr));
    let mut result = parse(cfg.agent, &stdout, &stderr, raw.exit_code);
    if let Some(why) = sandbox_failure(cfg, &raw, &stderr) {
        // bwrap itself could not set the sandbox up: the agent never ran.
        result = AgentResult {
            error: Some(format!("could not start the agent in its sandbox: {why}")),
            ..AgentResult::default()
        };
    }
    if proxy.as_ref().is_some_and(|p| !p.is_alive()) {
        result.answer = None;
        let why = "the API proxy stopped during the run".to_string();
        result.error = Some(format!("the agent's environment failed: {why}"));
        result.environment_failure = Some(why);
    }
    if raw.stdout_truncated {
        result.answer = None;
        result.error = Some(format!("output over {} bytes, not parsed", cfg.max_stdout));
    }
    if raw.timed_out {
        result.answer = None;
        result.error = Some(format!("timed out after {} s", cfg.timeout.as_secs_f64()));
    }
    RunOutcome {
        result,
        exit_code: raw.exit_code,
        timed_out: raw.timed_out,
        duration_s: started.elapsed().as_secs_f64(),
        command,
        stdout,
        stderr_tail: tail(&stderr, ERROR_TAIL_CHARS * 4),
        network,
    }
}

/// What stands in the agent's environment for the variables that are keys, and what the proxy
/// must reach: with a sandbox, every credential variable (by name, [`proxy::is_credential`])
/// becomes a placeholder, the preset's base-URL variable (and `REPOPROBE_API_URL`) the bridge's
/// address, and the proxy starts for the API's origin; returns it (none when the run reaches no
/// API: `command` without `--agent-api-url`, or no bridge program) and the network rule in words.
fn seal(
    cfg: &AgentConfig,
    env: &mut [(OsString, OsString)],
) -> Result<(Option<proxy::ApiProxy>, String), String> {
    if cfg.sandbox.is_none() {
        return Ok((None, "open".into()));
    }
    let var = cfg.agent.base_url_var();
    let from_env = var.and_then(|var| {
        env.iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .filter(|v| !v.trim().is_empty())
    });
    let url = cfg
        .api_url
        .clone()
        .or(from_env)
        .or(cfg.agent.default_api_url().map(str::to_string));
    let mut secrets = Vec::new();
    for (k, v) in env.iter_mut() {
        let name = k.to_string_lossy().into_owned();
        if proxy::is_credential(&name) && !v.is_empty() {
            let ph = proxy::placeholder(&name);
            secrets.push((ph.clone(), v.to_string_lossy().into_owned()));
            *v = ph.into();
        }
    }
    let (Some(url), Some(_)) = (url, cfg.bridge.as_ref()) else {
        return Ok((None, "none".into()));
    };
    let upstream = proxy::Upstream::parse(&url)?;
    let inside = upstream.inside_url();
    for (k, v) in env.iter_mut() {
        if var.is_some_and(|var| k == var) {
            *v = inside.clone().into();
        }
    }
    let origin = upstream.origin();
    let p = proxy::ApiProxy::start(upstream, secrets).map_err(|e| e.to_string())?;
    Ok((
        Some(p),
        format!("{origin} only, through repoprobe's proxy (key added outside)"),
    ))
}

/// `inv` run under `cfg.sandbox` when there is one: bwrap's command line with the agent's after
/// `--` (its `TMPDIR` is set by the caller: the scratch directory's `tmp`); `writable` (absolute) are bound back, `git_pointer`
/// read-only over itself when it exists; cwd stays the worktree (or `/tmp` for a run without
/// one). Without a sandbox, `inv` unchanged.
fn confine(
    cfg: &AgentConfig,
    mut inv: Invocation,
    writable: &[PathBuf],
    git_pointer: Option<&Path>,
    emptied: &[PathBuf],
    api: Option<sandbox::ApiDoor>,
) -> Invocation {
    let Some(bw) = &cfg.sandbox else {
        return inv;
    };
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let path_var = inv
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone());
    let mounts = Mounts {
        writable: writable.iter().map(|p| canonical(p)).collect(),
        read_only_over: git_pointer
            .filter(|p| p.symlink_metadata().is_ok())
            .map(|p| vec![canonical(p)])
            .unwrap_or_default(),
        emptied: emptied.iter().map(|p| canonical(p)).collect(),
        exposed: sandbox::program_dirs(&inv.program, path_var.as_deref())
            .into_iter()
            .chain(cfg.expose.iter().map(|p| canonical(p)))
            .collect(),
        cwd: if writable.is_empty() {
            PathBuf::from("/tmp")
        } else {
            canonical(&inv.cwd)
        },
        api,
    };
    // Inside, only the exposed directories exist: a path through others (`crates/x/../../tools`)
    // would not resolve there. The directory is resolved here; the name stays (a `.bin` link).
    let program = Path::new(&inv.program);
    let program = match (program.parent(), program.file_name()) {
        (Some(dir), Some(name)) if program.components().count() > 1 => dir
            .canonicalize()
            .map_or_else(|_| program.to_path_buf(), |d| d.join(name))
            .into_os_string(),
        _ => inv.program.clone(),
    };
    let (program, args) = bw.wrap(&program, &inv.args, &mounts);
    inv.program = program;
    inv.args = args;
    inv
}

/// The repository's own settings that `agent` would load and that only the sandbox can keep
/// from it, emptied there: Gemini CLI 0.61.0 runs headless only in a trusted folder (run for
/// real, it refuses an untrusted one: "Gemini CLI is not running in a trusted directory"), and
/// in a trusted folder it loads the project's `.gemini/` (settings with MCP servers, tool
/// discovery commands, hooks; extensions) and `.env` (which could point it and its key at
/// another server). The paths that exist in `workdir`.
pub fn project_settings(agent: ExternalAgent, workdir: &Path) -> Vec<PathBuf> {
    match agent {
        ExternalAgent::Gemini => [".gemini", ".env"]
            .iter()
            .map(|n| workdir.join(n))
            .filter(|p| p.symlink_metadata().is_ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// Why bwrap could not start the agent (exit status 1, a `bwrap: ` message and no output), or
/// `None` when the agent ran.
fn sandbox_failure(cfg: &AgentConfig, raw: &RawOutput, stderr: &str) -> Option<String> {
    cfg.sandbox.as_ref()?;
    let first = stderr.trim_start().lines().next().unwrap_or("");
    (raw.exit_code == Some(1) && raw.stdout.is_empty() && first.starts_with("bwrap: "))
        .then(|| tail(first, ERROR_TAIL_CHARS))
}

/// The fresh HOME's settings that keep a preset from loading the repository's own project
/// configuration, written before the run; returns the variables that point the CLI at them.
/// `workdir` is the worktree as the agent will see it.
pub fn home_settings(
    agent: ExternalAgent,
    home: &Path,
    workdir: &Path,
) -> std::io::Result<Vec<(String, String)>> {
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    let wd = workdir.to_string_lossy().into_owned();
    match agent {
        ExternalAgent::Gemini => {
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
            let rules = serde_json::json!({ wd.clone(): "TRUST_FOLDER" });
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
        ExternalAgent::Codex => {
            // The project's `.codex/` layers (config.toml, its MCP servers) load only for a
            // trusted project; the worktree is marked untrusted in the user config.
            let dir = home.join(".codex");
            std::fs::create_dir_all(&dir)?;
            let key = serde_json::to_string(&wd).unwrap_or_default();
            std::fs::write(
                dir.join("config.toml"),
                format!("[projects.{key}]\ntrust_level = \"untrusted\"\n"),
            )?;
            Ok(vec![(
                "CODEX_HOME".into(),
                dir.to_string_lossy().into_owned(),
            )])
        }
        ExternalAgent::ClaudeCode | ExternalAgent::Command => Ok(Vec::new()),
    }
}

/// The CLI's version (`--version`, first line), or why not; `None` for `command`.
pub async fn version(cfg: &AgentConfig) -> Option<Result<String, String>> {
    cfg.agent.default_program()?;
    let program = cfg.program();
    let dir = std::env::temp_dir();
    let mut env = agent_env(cfg, &dir, &dir);
    env.retain(|(k, _)| k != "REPOPROBE_PROMPT_FILE");
    let inv = Invocation {
        program: program.clone(),
        args: vec!["--version".into()],
        cwd: dir,
        stdin: None,
        secrets: secrets_of(&env),
        env,
    };
    let inv = confine(cfg, inv, &[], None, &[], None);
    let raw = match execute(
        &inv,
        Duration::from_secs(60),
        1 << 16,
        cfg.sandbox.is_none(),
    )
    .await
    {
        Ok(raw) => raw,
        Err(e) => {
            return Some(Err(format!(
                "could not run {} --version: {e}",
                program.to_string_lossy()
            )));
        }
    };
    let out = inv.scrub(&String::from_utf8_lossy(&raw.stdout));
    let line = out.lines().map(str::trim).find(|l| !l.is_empty());
    Some(match (raw.exit_code, line) {
        (Some(0), Some(line)) => Ok(line.to_string()),
        _ => Err(format!(
            "{} --version failed (exit {:?}): {}",
            program.to_string_lossy(),
            raw.exit_code,
            tail(
                &inv.scrub(&String::from_utf8_lossy(&raw.stderr)),
                ERROR_TAIL_CHARS
            )
        )),
    })
}

/// Replaces each placeholder by its shell-quoted value (single quotes; a `'` in a value becomes
/// `'\''`), so any path or model name is one word to `sh`.
fn substitute(template: &str, values: &[(&str, &OsStr)]) -> OsString {
    let mut out = template.to_string();
    for (placeholder, value) in values {
        if out.contains(placeholder) {
            let quoted = format!("'{}'", value.to_string_lossy().replace('\'', r"'\''"));
            out = out.replace(placeholder, &quoted);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Claude Code 2.1.332's result for a three-turn run (Glob, Read, answer) against a loopback
    /// server, as printed (bulky fields cut).
    const CLAUDE_SUCCESS: &str = r#"{"duration_api_ms":532,"stop_reason":"end_turn","session_id":"d7e13fe3-a38f-415b-955a-25485aa4d9df","total_cost_usd":0.0018000000000000002,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":60,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":300,"outputTokens":60,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.0018000000000000002,"contextWindow":200000,"maxOutputTokens":32000}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","safety_stops":0,"is_error":false,"num_turns":3,"subtype":"success","api_error_status":null,"result":"The file says: 1\tsecret content 42\n","ttft_ms":279,"type":"result","duration_ms":996,"uuid":"f769c6ce-9f47-46e9-8539-6988b90fa034","queued_turn_count":0,"result_index":0}"#;

    /// Claude Code 2.1.332 hitting `--max-turns 5` (exit status 1).
    const CLAUDE_MAX_TURNS: &str = r#"{"duration_api_ms":494,"stop_reason":"tool_use","session_id":"1a72d4f3-a44d-4c58-b5d0-b50d6dd63381","total_cost_usd":0.003,"usage":{"input_tokens":500,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":100},"permission_denials":[],"terminal_reason":"max_turns","safety_stops":0,"is_error":true,"num_turns":6,"subtype":"error_max_turns","errors":["Reached maximum number of turns (5)"],"type":"result","duration_ms":1387,"uuid":"7409cc9a-0175-4087-b182-6b2d9c6caa1c","queued_turn_count":0,"result_index":0}"#;

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
    fn unparsable_or_empty_output_is_an_error_never_an_answer() {
        for agent in [
            ExternalAgent::ClaudeCode,
            ExternalAgent::Codex,
            ExternalAgent::Gemini,
        ] {
            let r = parse(agent, "Error: not logged in\n", "", Some(0));
            assert_eq!(r.answer, None, "{agent:?}");
            assert!(
                r.error.as_deref().unwrap().starts_with("could not parse"),
                "{r:?}"
            );
            let r = parse(agent, "", "", Some(0));
            assert!(
                r.error.as_deref().unwrap().starts_with("no output"),
                "{r:?}"
            );
        }
        let r = parse(
            ExternalAgent::ClaudeCode,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"  "}"#,
            "",
            Some(0),
        );
        assert_eq!(r.error.as_deref(), Some("empty answer"));
    }

    #[test]
    fn codex_events_give_the_last_agent_message_and_summed_usage() {
        let r = parse(ExternalAgent::Codex, CODEX_SUCCESS, "", Some(0));
        assert_eq!(r.error, None);
        assert_eq!(
            r.answer.as_deref(),
            Some("The parser is `parse` in src/lib.rs.")
        );
        assert_eq!(r.turns, Some(1));
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
            r.error.as_deref(),
            Some("Codex: model API error (last status 401): unexpected status 401 Unauthorized")
        );
        assert_eq!(r.meta["errors"][0], "Reconnecting... 1/5");
        assert_eq!(r.meta["api_error_status"], 401, "the model API failed");
        // Codex 0.171.0 after one 429 and then 500s (run for real): no status in the failure.
        let r = parse(ExternalAgent::Codex, CODEX_RETRIES_EXHAUSTED, "", Some(1));
        assert_eq!(r.answer, None);
        assert_eq!(r.meta["api_error_status"], 429);
        assert_eq!(
            r.error.as_deref(),
            Some(
                "Codex: model API error (last status 429): We’re currently experiencing high demand, which may cause temporary errors."
            )
        );
        let last_only = CODEX_RETRIES_EXHAUSTED.replace(
            "exceeded retry limit, last status: 429 Too Many Requests",
            "x",
        );
        let r = parse(ExternalAgent::Codex, &last_only, "", Some(1));
        assert_eq!(r.meta["api_error_status"], "retries exhausted");
        // A failure that is no API error (no status, no retries) is the agent's.
        let r = parse(
            ExternalAgent::Codex,
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"context window exceeded\"}}",
            "",
            Some(1),
        );
        assert_eq!(r.meta.get("api_error_status"), None);
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
    fn command_stdout_is_the_answer_and_a_failing_exit_is_an_error() {
        let r = parse(ExternalAgent::Command, "  the answer\n", "", Some(0));
        assert_eq!(r.answer.as_deref(), Some("the answer"));
        let r = parse(
            ExternalAgent::Command,
            "partial",
            "line 1\nfatal: it broke\n",
            Some(3),
        );
        assert_eq!(r.answer, None);
        assert_eq!(
            r.error.as_deref(),
            Some("exit status 3: line 1\nfatal: it broke")
        );
        let r = parse(ExternalAgent::Command, "x", "", None);
        assert_eq!(r.error.as_deref(), Some("killed by a signal"));
    }

    #[test]
    fn a_run_can_be_spawned_on_the_runtime() {
        fn send<T: Send>(_: &T) {}
        let cfg = AgentConfig::new(ExternalAgent::Command, "m");
        let fut = run(&cfg, Path::new("."), "q", Path::new("."));
        send(&fut);
        send(&version(&cfg));
    }

    #[test]
    fn agent_names_are_the_recorded_names() {
        // That they are also the `--agent` values is the CLI's test.
        for a in [
            ExternalAgent::ClaudeCode,
            ExternalAgent::Codex,
            ExternalAgent::Gemini,
            ExternalAgent::Command,
        ] {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
        assert!(
            ExternalAgent::ClaudeCode
                .usual_env()
                .contains(&"ANTHROPIC_API_KEY")
        );
        assert!(ExternalAgent::Command.usual_env().is_empty());
    }

    #[test]
    fn presets_build_their_documented_command_lines() {
        let tmp = Path::new("/tmp/wt");
        let pf = Path::new("/tmp/scratch/prompt.txt");
        let args = |cfg: &AgentConfig| {
            let inv = invocation(cfg, tmp, "Why?", pf, Vec::new()).unwrap();
            (
                inv.program.clone(),
                inv.args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
                inv.stdin.clone(),
            )
        };
        let mut claude = AgentConfig::new(ExternalAgent::ClaudeCode, "claude-sonnet-4-5");
        claude.max_turns = Some(30);
        assert_eq!(
            args(&claude),
            (
                "claude".into(),
                "-p --output-format stream-json --verbose --model claude-sonnet-4-5 --max-turns 30 \
                 --setting-sources user --settings {\"disableAllHooks\":true} \
                 --mcp-config {\"mcpServers\":{}} --strict-mcp-config \
                 --tools Read,Grep,Glob --no-session-persistence"
                    .into(),
                Some(pf.to_path_buf())
            )
        );
        let mut codex = AgentConfig::new(ExternalAgent::Codex, "gpt-5-codex");
        codex.program = Some("/opt/codex".into());
        codex.extra_args = vec!["--skip-git-repo-check".into()];
        assert_eq!(
            args(&codex),
            (
                "/opt/codex".into(),
                "exec --json -s read-only -m gpt-5-codex -c model_provider=repoprobe \
                 -c model_providers.repoprobe={name=\"repoprobe\",\
                 base_url=\"https://api.openai.com/v1\",env_key=\"OPENAI_API_KEY\",\
                 wire_api=\"responses\"} -c web_search=\"disabled\" -c analytics.enabled=false -c feedback.enabled=false \
                 -c check_for_update_on_startup=false --skip-git-repo-check -"
                    .into(),
                Some(pf.to_path_buf())
            )
        );
        // A passed OPENAI_BASE_URL is the provider's base URL (Codex 0.171.0 ignores it).
        let env = vec![("OPENAI_BASE_URL".into(), "http://127.0.0.1:9/v1".into())];
        let inv = invocation(&codex, tmp, "Why?", pf, env).unwrap();
        let shown: Vec<String> = inv
            .args
            .iter()
            .map(|a| a.to_string_lossy().into())
            .collect();
        assert!(
            shown
                .iter()
                .any(|a| a.contains("base_url=\"http://127.0.0.1:9/v1\"")),
            "{shown:?}"
        );
        let gemini = AgentConfig::new(ExternalAgent::Gemini, "gemini-2.5-pro");
        assert_eq!(
            args(&gemini),
            (
                "gemini".into(),
                "--prompt=Why? --output-format json -m gemini-2.5-pro".into(),
                None
            )
        );
        let command = AgentConfig::new(ExternalAgent::Command, "m");
        assert!(invocation(&command, tmp, "Why?", pf, Vec::new()).is_err());
    }

    #[test]
    fn agent_env_is_built_from_scratch_and_secrets_never_show() {
        let mut cfg = AgentConfig::new(ExternalAgent::ClaudeCode, "m");
        cfg.set_env = vec![
            ("ANTHROPIC_API_KEY".into(), "sk-ant-test-0123456789".into()),
            ("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()),
        ];
        cfg.pass_env = vec!["REPOPROBE_TEST_SURELY_UNSET_VAR".into()];
        cfg.home = Some("/tmp/scratch-home".into());
        let pf = Path::new("/tmp/p.txt");
        let env = agent_env(&cfg, Path::new("/tmp/wt"), pf);
        let names: Vec<String> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"DISABLE_TELEMETRY".to_string()));
        assert!(!names.contains(&"REPOPROBE_TEST_SURELY_UNSET_VAR".to_string()));
        assert!(
            !names.contains(&"CARGO".to_string()),
            "only listed variables pass: {names:?}"
        );
        let home = env.iter().find(|(k, _)| k == "HOME").unwrap();
        assert_eq!(home.1, "/tmp/scratch-home");
        let inv = invocation(&cfg, Path::new("/tmp/wt"), "q", pf, env).unwrap();
        let shown = format!("{inv:?} {cfg:?}");
        assert!(!shown.contains("sk-ant-test-0123456789"), "{shown}");
        assert!(shown.contains("ANTHROPIC_API_KEY"));
        assert_eq!(
            inv.scrub("key=sk-ant-test-0123456789 url=http://127.0.0.1:9"),
            "key=[redacted] url=http://127.0.0.1:9"
        );
    }

    #[test]
    fn the_fresh_home_turns_project_settings_off_for_gemini_and_codex() {
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
        let vars = home_settings(ExternalAgent::Codex, &home, &wt).unwrap();
        assert_eq!(
            read(".codex/config.toml"),
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
        assert!(
            home_settings(ExternalAgent::ClaudeCode, &home, &wt)
                .unwrap()
                .is_empty()
        );
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn command_placeholders_are_one_shell_word_each_whatever_they_hold() {
        let tmp = tempfile::tempdir().unwrap();
        let workdir = tmp
            .path()
            .join("work dir with 'quotes' and \"doubles\" $(touch pwned)");
        let scratch = tmp.path().join("scratch; rm -rf ~");
        std::fs::create_dir_all(&workdir).unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Command, "model 'x' $HOME `id`");
        cfg.command = Some(
            "printf '%s\\n' {prompt_file} {model} {workdir} \"$PWD\" \"$REPOPROBE_MODEL\"; cat {prompt_file}; cat - ".into(),
        );
        cfg.set_env = vec![("MY_API_KEY".into(), "sk-never-shown-42".into())];
        let prompt = "What does it do? 'quoted' \"twice\" $(id)\n";
        let out = rt().block_on(run(&cfg, &workdir, prompt, &scratch));
        assert_eq!(out.result.error, None, "{out:?}");
        let pf = scratch.join("prompt.txt");
        let want = format!(
            "{}\n{}\n{}\n{}\n{}\n{prompt}{prompt}",
            pf.display(),
            cfg.model,
            workdir.display(),
            workdir.canonicalize().unwrap().display(),
            cfg.model
        );
        assert_eq!(out.result.answer.as_deref(), Some(want.trim()));
        assert!(!workdir.join("pwned").exists());
        assert_eq!(out.exit_code, Some(0));
    }

    #[test]
    fn a_key_echoed_by_the_agent_is_scrubbed_from_everything_returned() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Command, "m");
        cfg.command =
            Some("echo \"answer $MY_API_KEY\"; echo \"err $MY_API_KEY\" >&2; exit 1".into());
        cfg.set_env = vec![("MY_API_KEY".into(), "sk-never-shown-42".into())];
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s")));
        let all = serde_json::to_string(&out).unwrap();
        assert!(!all.contains("sk-never-shown-42"), "{all}");
        assert_eq!(
            out.result.error.as_deref(),
            Some("exit status 1: err [redacted]")
        );
        assert_eq!(out.stdout.trim(), "answer [redacted]");
    }

    /// Whether `pid` still runs (a zombie waiting for its reaper counts as gone).
    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
            Err(_) => false,
        }
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Command, "m");
        cfg.command = Some(
            "sh -c 'sleep 100 & echo $! >> pids; sleep 100 & echo $! >> pids; wait' & wait".into(),
        );
        cfg.timeout = Duration::from_millis(700);
        let started = Instant::now();
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s")));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert!(out.timed_out);
        assert_eq!(out.result.error.as_deref(), Some("timed out after 0.7 s"));
        assert_eq!(out.result.answer, None);
        let pids: Vec<i32> = std::fs::read_to_string(tmp.path().join("pids"))
            .unwrap()
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2);
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for p in pids {
            assert!(!alive(p), "sleep {p} survived the timeout");
        }
    }

    #[test]
    fn background_processes_left_by_a_finished_agent_do_not_hang_the_run() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Command, "m");
        cfg.command = Some("sleep 100 & echo done".into());
        let started = Instant::now();
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s")));
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(out.result.answer.as_deref(), Some("done"));
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Codex, "m");
        cfg.program = Some(tmp.path().join("no-codex-here"));
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s")));
        let err = out.result.error.unwrap();
        assert!(
            err.starts_with("could not start") && err.contains("no-codex-here"),
            "{err}"
        );
        let v = rt().block_on(version(&cfg)).unwrap();
        assert!(v.is_err());
        assert!(
            rt().block_on(version(&AgentConfig::new(ExternalAgent::Command, "m")))
                .is_none()
        );
    }
}
