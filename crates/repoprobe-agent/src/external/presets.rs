//! The agent CLIs we know (presets, each one module behind `cli::AgentCli`) and what a
//! run of one is configured with.

use crate::sandbox::Bubblewrap;
use serde::Serialize;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Most stdout kept (a bigger output is an error: the result object would be cut).
pub const DEFAULT_MAX_STDOUT: usize = 32 << 20;

/// The external agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExternalAgent {
    /// Anthropic's Claude Code (`claude -p … --output-format stream-json`), read-only tools.
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex exec --json -s read-only`).
    Codex,
    /// Google's Gemini CLI (`gemini -p … --output-format stream-json`).
    Gemini,
    /// Any command template with `{prompt_file}`, `{model}`, `{workdir}`; stdout is the answer.
    Command,
}

impl ExternalAgent {
    /// Every external agent, in the order a list of them is shown: the one list of agents in
    /// the tree (`answer --agent` and a plan's `agent` take these names, after `builtin`). An
    /// agent is added here, in the matches the compiler then points to, and in its module.
    pub const ALL: [ExternalAgent; 4] = [
        ExternalAgent::ClaudeCode,
        ExternalAgent::Codex,
        ExternalAgent::Gemini,
        ExternalAgent::Command,
    ];

    /// What the agent is, in a line (a flag's help shows it beside the name,
    /// [`ExternalAgent::as_str`]).
    pub fn description(self) -> &'static str {
        match self {
            ExternalAgent::ClaudeCode => "Claude Code (`claude -p`, tools Read, Grep, Glob only)",
            ExternalAgent::Codex => "Codex CLI (`codex exec --json -s read-only`)",
            ExternalAgent::Gemini => "Gemini CLI (`gemini -p --output-format stream-json`)",
            ExternalAgent::Command => "Any command (see --command)",
        }
    }
}

/// Everything about the runs that does not change from one question to the next.
#[derive(Clone)]
pub struct AgentConfig {
    pub agent: ExternalAgent,
    /// The agent's executable; [`ExternalAgent::default_program`] on PATH when `None`.
    pub program: Option<PathBuf>,
    pub model: String,
    /// Claude Code's `--max-turns` (Codex and Gemini have no such flag).
    pub max_turns: Option<u32>,
    /// The template of `command`, run by `sh -c` after substitution of `{prompt_file}`,
    /// `{model}` and `{workdir}` by shell-quoted values (write them unquoted).
    pub command: Option<String>,
    /// Extra arguments appended to a preset's.
    pub extra_args: Vec<String>,
    /// Names of our environment variables passed to the agent (its key, its base URL).
    pub pass_env: Vec<String>,
    /// Variables set explicitly (name, value); they win over passed-through ones.
    pub set_env: Vec<(String, String)>,
    /// The agent's HOME (a scratch directory keeps user settings out of the benchmark); our
    /// HOME when `None`.
    pub home: Option<PathBuf>,
    pub timeout: Duration,
    pub max_stdout: usize,
    /// The confinement of every process of a run; `None` runs them unconfined (`--no-sandbox`).
    pub sandbox: Option<Bubblewrap>,
    /// repoprobe's own binary, run inside the sandbox as the bridge to the API proxy; without
    /// it a confined run has no network at all.
    pub bridge: Option<PathBuf>,
    /// The API a confined run may reach; `None` takes the preset's base-URL variable from the
    /// agent's environment, else its default ([`ExternalAgent::default_api_url`]); `command`
    /// without one reaches nothing.
    pub api_url: Option<String>,
    /// Directories a confined run may also read (a wrapper script's real program, say): inside,
    /// nothing exists but the system's directories, the agent program's own and the run's.
    pub expose: Vec<PathBuf>,
}

impl fmt::Debug for AgentConfig {
    /// Values of `set_env` are not shown: they may be keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("agent", &self.agent)
            .field("program", &self.program)
            .field("model", &self.model)
            .field("max_turns", &self.max_turns)
            .field("command", &self.command)
            .field("extra_args", &self.extra_args)
            .field("pass_env", &self.pass_env)
            .field(
                "set_env",
                &self.set_env.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("home", &self.home)
            .field("timeout", &self.timeout)
            .field("sandbox", &self.sandbox)
            .field("bridge", &self.bridge)
            .field("api_url", &self.api_url)
            .field("expose", &self.expose)
            .finish()
    }
}

impl AgentConfig {
    /// A configuration with the defaults: no overrides, 30 minutes, 32 MiB of stdout.
    pub fn new(agent: ExternalAgent, model: impl Into<String>) -> AgentConfig {
        AgentConfig {
            agent,
            program: None,
            model: model.into(),
            max_turns: None,
            command: None,
            extra_args: Vec::new(),
            pass_env: Vec::new(),
            set_env: Vec::new(),
            home: None,
            timeout: Duration::from_secs(1800),
            max_stdout: DEFAULT_MAX_STDOUT,
            sandbox: None,
            bridge: None,
            api_url: None,
            expose: Vec::new(),
        }
    }

    /// The executable that runs (`sh` for `command`).
    pub fn program(&self) -> OsString {
        match (&self.program, self.agent.default_program()) {
            (Some(p), _) => p.clone().into_os_string(),
            (None, Some(p)) => p.into(),
            (None, None) => "sh".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExternalAgent;

    #[test]
    fn every_agent_is_listed_once_under_its_own_name() {
        for (i, a) in ExternalAgent::ALL.into_iter().enumerate() {
            assert!(!ExternalAgent::ALL[..i].contains(&a), "{a:?} listed twice");
            assert!(
                ExternalAgent::ALL[..i]
                    .iter()
                    .all(|b| b.as_str() != a.as_str()),
                "{a:?}'s name is taken"
            );
            // The serialized name (records) is the name it goes by.
            assert_eq!(
                serde_json::to_value(a).unwrap(),
                serde_json::json!(a.as_str())
            );
        }
    }
}
