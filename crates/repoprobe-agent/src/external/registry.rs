//! Which module is which agent: the one place that maps an [`ExternalAgent`] to its CLI's
//! module, and the parse of a CLI's output through it. The per-CLI modules import `cli`,
//! `parse` and `presets`, never this one, so the arrows between them run one way.

use super::claude_code::ClaudeCode;
use super::cli::AgentCli;
use super::codex::Codex;
use super::command::Command;
use super::gemini::Gemini;
use super::parse::{AgentResult, ERROR_TAIL_CHARS, count, tail};
use super::presets::ExternalAgent;

impl ExternalAgent {
    /// The CLI's own behaviour: the one place that maps an agent to its module.
    pub(super) fn cli(self) -> &'static dyn AgentCli {
        match self {
            ExternalAgent::ClaudeCode => &ClaudeCode,
            ExternalAgent::Codex => &Codex,
            ExternalAgent::Gemini => &Gemini,
            ExternalAgent::Command => &Command,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.cli().name()
    }

    /// The program looked up on PATH when no path is given; `None` for `command`.
    pub fn default_program(self) -> Option<&'static str> {
        self.cli().default_program()
    }

    /// The variables a preset usually needs passed through (its key and base URL); a suggestion
    /// for the caller's default, never read unless listed in [`AgentConfig::pass_env`](super::AgentConfig::pass_env).
    pub fn usual_env(self) -> &'static [&'static str] {
        self.cli().usual_env()
    }

    /// The variable holding the base URL of the preset's model API: the agent inside a sandbox
    /// gets the bridge's address there; `command` is told it in `REPOPROBE_API_URL`.
    pub fn base_url_var(self) -> Option<&'static str> {
        self.cli().base_url_var()
    }

    /// The variable the preset reads its API key from (`None` for `command`).
    pub fn key_var(self) -> Option<&'static str> {
        self.cli().key_var()
    }

    /// The API a preset calls when its base-URL variable is not set.
    pub fn default_api_url(self) -> Option<&'static str> {
        self.cli().default_api_url()
    }
}

/// Parses a CLI's output: its own reading, in one pass into its trajectory (`AgentCli::read`),
/// the counts read from that trajectory (`count`, the same for every CLI), then what its exit
/// status says (a documented exit code that means it could not run, or any other failure),
/// then an empty answer. `exit_code` is `None` when the process was killed.
pub fn parse(
    agent: ExternalAgent,
    stdout: &str,
    stderr: &str,
    exit_code: Option<i32>,
) -> AgentResult {
    read(agent, stdout, stderr, None, exit_code)
}

/// [`parse`], given `own`: the trajectory file the CLI wrote itself, if any.
pub(super) fn read(
    agent: ExternalAgent,
    stdout: &str,
    stderr: &str,
    own: Option<&str>,
    exit_code: Option<i32>,
) -> AgentResult {
    let mut r = agent.cli().read(stdout, stderr, own);
    count(&mut r);
    if r.could_not_run.is_none()
        && let Some(mut c) = agent.cli().exit_could_not_run(exit_code, stderr)
    {
        // The CLI's own words, when its output had them.
        if let Some(e) = r.error.take().filter(|_| !r.unparsed) {
            c.why = e;
        }
        r.could_not_run = Some(c);
    }
    if r.error.is_none() && r.could_not_run.is_none() && exit_code != Some(0) {
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
    if r.error.is_none()
        && r.could_not_run.is_none()
        && r.answer.as_deref().is_none_or(|a| a.trim().is_empty())
    {
        r.error = Some("empty answer".to_string());
    }
    if r.error.is_some() || r.could_not_run.is_some() {
        r.answer = None;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::super::presets::ExternalAgent;
    use super::*;

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
}
