//! External coding agents run as CLIs in a question's worktree (`--agent claude-code | codex |
//! gemini | command`): the run (its own process group, output captured with caps, a timeout
//! that kills the whole group), the parse of the CLI's machine-readable result into an
//! [`AgentResult`], and what differs from one CLI to the next behind one trait.
//!
//! Each CLI is one module implementing `cli::AgentCli`: `claude_code`, `codex`, `gemini`,
//! `command`. Each holds its command line, the fresh HOME's settings, its output format (with
//! how and against which version it was checked: re-check when a CLI moves) and its tests.
//!
//! Project settings are off: each preset starts its CLI so that the repository's own settings,
//! hooks, MCP servers and environment overrides are ignored — Claude Code by its flags, Codex
//! through the fresh HOME's config written by [`home_settings`], Gemini CLI (which runs headless
//! only in a trusted folder) by the sandbox: the fresh HOME trusts the worktree and
//! [`project_settings`] are emptied in it, so without a sandbox Gemini CLI loads them. The tests
//! plant each CLI's project settings and see them ignored.
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
//! Layout: `presets` (the agents, `AgentConfig`), `cli` (the trait), one module per CLI,
//! `registry` (which module is which agent, and the parse through it), `env`
//! (the environment from scratch, secret scrubbing), `confine` (sandbox and API proxy),
//! `process` (spawning, caps, timeout), `parse` (what every CLI's parser shares); this module
//! builds the invocation and runs it. The submodules import none of this one.

pub use crate::verdict::Verdict;
use crate::verdict::{Cause, CouldNotRun};
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod claude_code;
mod cli;
mod codex;
mod command;
mod confine;
mod env;
mod gemini;
mod parse;
mod presets;
mod process;
mod registry;

pub use claude_code::{CLAUDE_MCP_CONFIG, CLAUDE_SETTINGS};
pub use cli::ArgsError;
use cli::Call;
pub use codex::CODEX_DEFAULT_BASE_URL;
use confine::{confine, sandbox_failure, seal};
use env::secrets_of;
pub use env::{BASE_ENV, agent_env};
pub use gemini::GEMINI_EXCLUDED_TOOLS;
pub use parse::AgentResult;
use parse::{ERROR_TAIL_CHARS, tail};
pub use presets::{AgentConfig, DEFAULT_MAX_STDOUT, ExternalAgent};
pub use process::Invocation;
use process::{RawOutput, execute};
pub use registry::parse;

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

impl RunOutcome {
    /// A run that could not start its agent.
    fn failed(started: Instant, why: CouldNotRun, command: Vec<String>) -> RunOutcome {
        RunOutcome {
            result: AgentResult {
                could_not_run: Some(why),
                ..AgentResult::default()
            },
            exit_code: None,
            timed_out: false,
            duration_s: started.elapsed().as_secs_f64(),
            command,
            stdout: String::new(),
            stderr_tail: String::new(),
            network: String::new(),
        }
    }
}

/// Builds the command of one run: `prompt_file` already holds `prompt` and lies outside the
/// worktree; `env` is the agent's whole environment.
pub fn invocation(
    cfg: &AgentConfig,
    workdir: &Path,
    prompt: &str,
    prompt_file: &Path,
    env: Vec<(OsString, OsString)>,
) -> Result<Invocation, ArgsError> {
    let cli = cfg.agent.cli();
    let call = Call {
        cfg,
        workdir,
        prompt,
        prompt_file,
        env: &env,
    };
    let mut args = cli.args(&call)?;
    args.extend(cfg.extra_args.iter().map(OsString::from));
    args.extend(cli.trailing_args().iter().map(OsString::from));
    let secrets = secrets_of(&env);
    Ok(Invocation {
        program: cfg.program(),
        args,
        cwd: workdir.to_path_buf(),
        stdin: cli.prompt_on_stdin().then(|| prompt_file.to_path_buf()),
        env,
        secrets,
    })
}

/// Runs the agent once in `workdir` on `prompt`, which is written to `scratch/prompt.txt`
/// (`scratch` must lie outside the worktree, or the prompt would count as the agent's edit).
/// Every failure is in the returned result's `error`; this never panics or returns early.
pub async fn run(cfg: &AgentConfig, workdir: &Path, prompt: &str, scratch: &Path) -> RunOutcome {
    let started = Instant::now();
    let (inv, proxy, network) = match prepare(cfg, workdir, prompt, scratch) {
        Ok(prepared) => prepared,
        Err(e) => return RunOutcome::failed(started, e, Vec::new()),
    };
    let command: Vec<String> = std::iter::once(&inv.program)
        .chain(&inv.args)
        .map(|a| inv.scrub(&a.to_string_lossy()))
        .collect();
    let raw = match execute(&inv, cfg.timeout, cfg.max_stdout, cfg.sandbox.is_none()).await {
        Ok(raw) => raw,
        Err(e) => {
            // A program that is not there (or not executable) is a missing CLI; anything else
            // that stops the spawn is the machine's.
            let cause = match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
                    Cause::CliMissing
                }
                _ => Cause::Environment,
            };
            let e = format!("could not start {}: {e}", inv.program.to_string_lossy());
            return RunOutcome::failed(started, CouldNotRun::new(cause, inv.scrub(&e)), command);
        }
    };
    let stdout = inv.scrub(&String::from_utf8_lossy(&raw.stdout));
    let stderr = inv.scrub(&String::from_utf8_lossy(&raw.stderr));
    let proxy_died = proxy.as_ref().is_some_and(|p| !p.is_alive());
    let own = cfg
        .agent
        .cli()
        .trajectory_file(scratch)
        .and_then(|f| read_own_trajectory(&f))
        .map(|t| inv.scrub(&t));
    let output = Output {
        raw: &raw,
        stdout: &stdout,
        stderr: &stderr,
        own: own.as_deref(),
    };
    let result = judge(cfg, &output, proxy_died);
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

/// The most of an agent's own trajectory file that is read.
const MAX_OWN_TRAJECTORY: u64 = 256 << 20;

/// The trajectory file an agent wrote itself (`--agent command`'s `REPOPROBE_TRAJECTORY_FILE`),
/// if it wrote one no larger than [`MAX_OWN_TRAJECTORY`]; a file of its own, never a link.
fn read_own_trajectory(path: &Path) -> Option<String> {
    use std::io::Read;
    let meta = path.symlink_metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_OWN_TRAJECTORY {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_OWN_TRAJECTORY)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// Everything before the spawn: the prompt file, the environment, the proxy (kept alive by the
/// caller for the run), the invocation confined and its temporary directory; or why not.
fn prepare(
    cfg: &AgentConfig,
    workdir: &Path,
    prompt: &str,
    scratch: &Path,
) -> Result<(Invocation, Option<crate::proxy::ApiProxy>, String), CouldNotRun> {
    let prompt_file = scratch.join("prompt.txt");
    std::fs::create_dir_all(scratch)
        .and_then(|_| std::fs::write(&prompt_file, prompt))
        .map_err(|e| {
            CouldNotRun::new(
                Cause::Environment,
                format!(
                    "could not write the prompt file {}: {e}",
                    prompt_file.display()
                ),
            )
        })?;
    let mut env = agent_env(cfg, workdir, &prompt_file);
    // The real values, scrubbed from what comes back even though the agent never sees them.
    let real_secrets = secrets_of(&env);
    let (proxy, network) = seal(cfg, &mut env).map_err(|e| {
        CouldNotRun::new(
            Cause::Sandbox,
            format!("could not start the API proxy: {e}"),
        )
    })?;
    let mut inv = invocation(cfg, workdir, prompt, &prompt_file, env)
        .map_err(|e| CouldNotRun::new(Cause::Config, e.to_string()))?;
    inv.secrets.extend(real_secrets);
    inv.secrets
        .sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    inv.secrets.dedup();
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
        .map(|(p, bridge)| crate::sandbox::ApiDoor {
            socket: p.socket().to_path_buf(),
            bridge: bridge.clone(),
        });
    let git_pointer = workdir.join(".git");
    let mut inv = confine(cfg, inv, &writable, Some(&git_pointer), &emptied, door);
    if cfg.agent.cli().private_tmp() || cfg.sandbox.is_some() {
        // In the sandbox `/tmp` is read-only: the agent's temporary files go to the scratch
        // directory's own. Some CLIs need that even unconfined (`AgentCli::private_tmp`); the
        // fresh HOME is not under the scratch directory's `tmp`.
        let tmp = scratch.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| {
            CouldNotRun::new(
                Cause::Environment,
                format!("cannot create {}: {e}", tmp.display()),
            )
        })?;
        inv.env.retain(|(k, _)| k != "TMPDIR");
        inv.env.push(("TMPDIR".into(), tmp.into_os_string()));
    }
    Ok((inv, proxy, network))
}

/// What a finished process left: its output as it came, stdout and stderr scrubbed, and the
/// trajectory file it wrote itself (scrubbed), if any.
struct Output<'a> {
    raw: &'a RawOutput,
    stdout: &'a str,
    stderr: &'a str,
    own: Option<&'a str>,
}

/// The result of a finished process: the CLI's output read (with its trajectory), overruled
/// by what went wrong around it (the sandbox never started, the proxy died, the output was
/// cut, the time ran out).
fn judge(cfg: &AgentConfig, out: &Output, proxy_died: bool) -> AgentResult {
    let raw = out.raw;
    let mut result = registry::read(cfg.agent, out.stdout, out.stderr, out.own, raw.exit_code);
    if let Some(why) = sandbox_failure(cfg, raw, out.stderr) {
        // bwrap itself could not set the sandbox up: the agent never ran.
        result = AgentResult {
            trajectory: result.trajectory.take(),
            ..AgentResult::could_not_run(
                Cause::Sandbox,
                format!("could not start the agent in its sandbox: {why}"),
            )
        };
    }
    if proxy_died {
        result.answer = None;
        result.could_not_run = Some(CouldNotRun::new(
            Cause::Sandbox,
            "the agent's environment failed: the API proxy stopped during the run",
        ));
    }
    if raw.stdout_truncated {
        result.answer = None;
        result.error = Some(format!("output over {} bytes, not parsed", cfg.max_stdout));
    }
    if raw.timed_out {
        result.answer = None;
        result.error = Some(format!("timed out after {} s", cfg.timeout.as_secs_f64()));
    }
    result
}

/// The repository's own settings that `agent` would load and that only the sandbox can keep
/// from it, emptied there (Gemini CLI's `.gemini/` and `.env`, see its module): the paths that
/// exist in `workdir`.
pub fn project_settings(agent: ExternalAgent, workdir: &Path) -> Vec<PathBuf> {
    agent
        .cli()
        .project_settings(workdir)
        .into_iter()
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
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
    agent.cli().home_settings(home, &workdir.to_string_lossy())
}

/// Why a CLI's `--version` could not be had: the program cannot be run, or it failed.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error("could not run {program} --version: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("{program} --version failed (exit {exit:?}): {stderr}")]
    Failed {
        program: String,
        exit: Option<i32>,
        stderr: String,
    },
}

/// The CLI's version (`--version`, first line), or why not; `None` for `command`.
pub async fn version(cfg: &AgentConfig) -> Option<Result<String, VersionError>> {
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
    let program = program.to_string_lossy().into_owned();
    let raw = match execute(
        &inv,
        Duration::from_secs(60),
        1 << 16,
        cfg.sandbox.is_none(),
    )
    .await
    {
        Ok(raw) => raw,
        Err(error) => return Some(Err(VersionError::Spawn { program, error })),
    };
    let out = inv.scrub(&String::from_utf8_lossy(&raw.stdout));
    let line = out.lines().map(str::trim).find(|l| !l.is_empty());
    Some(match (raw.exit_code, line) {
        (Some(0), Some(line)) => Ok(line.to_string()),
        _ => Err(VersionError::Failed {
            program,
            exit: raw.exit_code,
            stderr: tail(
                &inv.scrub(&String::from_utf8_lossy(&raw.stderr)),
                ERROR_TAIL_CHARS,
            ),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the command-line tests say the prompt is.
    pub(super) const PROMPT_FILE: &str = "/tmp/scratch/prompt.txt";

    /// The program, the arguments joined by spaces and the stdin file of a run on "Why?" in
    /// `/tmp/wt`.
    pub(super) fn command_line(
        cfg: &AgentConfig,
        env: Vec<(OsString, OsString)>,
    ) -> (OsString, String, Option<PathBuf>) {
        let pf = Path::new(PROMPT_FILE);
        let inv = invocation(cfg, Path::new("/tmp/wt"), "Why?", pf, env).unwrap();
        let args: Vec<String> = inv
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        (inv.program, args.join(" "), inv.stdin)
    }

    pub(super) fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
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

    #[test]
    fn a_run_whose_tmp_cannot_be_made_could_not_run_and_is_no_answer() {
        // Codex needs a `tmp` of its run's own even unconfined; a file in its place stops the
        // run before the CLI starts.
        let tmp = tempfile::tempdir().unwrap();
        let scratch = tmp.path().join("s");
        std::fs::create_dir_all(&scratch).unwrap();
        std::fs::write(scratch.join("tmp"), "in the way").unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Codex, "m");
        cfg.program = Some("/bin/true".into());
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &scratch));
        match out.result.verdict() {
            Verdict::CouldNotRun(c) => {
                assert_eq!(c.cause, Cause::Environment);
                assert!(c.why.starts_with("cannot create "), "{c:?}")
            }
            v => panic!("{v:?}"),
        }
        assert_eq!(out.result.answer, None);
    }

    #[test]
    fn a_command_keeps_the_trajectory_it_wrote_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = AgentConfig::new(ExternalAgent::Command, "m");
        cfg.command = Some(
            r#"printf '%s' '{"schema_version":"ATIF-v1.8","agent":{"name":"mine","version":"1"},"steps":[{"step_id":9,"source":"agent","message":"","tool_calls":[{"tool_call_id":"a","function_name":"read_file","arguments":{"path":"x.rs"}}]},{"step_id":10,"source":"agent","message":"done"}]}' > "$REPOPROBE_TRAJECTORY_FILE"; echo done"#
                .into(),
        );
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s")));
        let t = out.result.trajectory.unwrap();
        assert_eq!(t.agent.name, "mine");
        assert_eq!(
            t.steps.iter().map(|s| s.step_id).collect::<Vec<_>>(),
            [1, 2]
        );
        assert_eq!(
            t.steps[0].tool_calls.as_ref().unwrap()[0].function_name,
            "read_file"
        );
        // Without one, its output is one step.
        cfg.command = Some("echo plain".into());
        let out = rt().block_on(run(&cfg, tmp.path(), "q", &tmp.path().join("s2")));
        let t = out.result.trajectory.unwrap();
        assert_eq!(t.steps.len(), 1);
        assert_eq!(t.steps[0].message.text().trim(), "plain");
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
        let c = out.result.could_not_run.unwrap();
        assert_eq!(c.cause, Cause::CliMissing);
        assert!(
            c.why.starts_with("could not start") && c.why.contains("no-codex-here"),
            "{c:?}"
        );
        let v = rt().block_on(version(&cfg)).unwrap();
        assert!(v.is_err());
        assert!(
            rt().block_on(version(&AgentConfig::new(ExternalAgent::Command, "m")))
                .is_none()
        );
    }
}
