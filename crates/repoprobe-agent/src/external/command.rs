//! Any command (`--agent command`): a template run by `sh -c` with `{prompt_file}`, `{model}`
//! and `{workdir}` replaced by shell-quoted values; its stdout is the answer. It is told the
//! same in `REPOPROBE_*` variables, and inside a sandbox its one way out, the API proxy, in
//! `REPOPROBE_API_URL` (when `--agent-api-url` names one).

use super::cli::{AgentCli, ArgsError, Call};
use super::parse::{AgentResult, one_step};
use super::presets::AgentConfig;
use repoprobe_core::model::trajectory::Trajectory;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Any command template; stdout is the answer.
pub(super) struct Command;

impl AgentCli for Command {
    fn name(&self) -> &'static str {
        "command"
    }

    fn default_program(&self) -> Option<&'static str> {
        None
    }

    fn usual_env(&self) -> &'static [&'static str] {
        &[]
    }

    fn base_url_var(&self) -> Option<&'static str> {
        None
    }

    fn default_api_url(&self) -> Option<&'static str> {
        None
    }

    fn run_env(
        &self,
        cfg: &AgentConfig,
        workdir: &Path,
        prompt_file: &Path,
    ) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        if cfg.sandbox.is_some() && cfg.bridge.is_some() && cfg.api_url.is_some() {
            // Its one way out (see `proxy`); credential variables hold placeholders there.
            let inside = cfg
                .api_url
                .as_deref()
                .and_then(|u| crate::proxy::Upstream::parse(u).ok())
                .map(|u| u.inside_url());
            if let Some(url) = inside {
                env.push(("REPOPROBE_API_URL".into(), url.into()));
                env.push((
                    "REPOPROBE_API_SOCKET".into(),
                    crate::sandbox::API_SOCKET.into(),
                ));
            }
        }
        env.push(("REPOPROBE_PROMPT_FILE".into(), prompt_file.into()));
        if let Some(dir) = prompt_file.parent()
            && let Some(file) = self.trajectory_file(dir)
        {
            env.push(("REPOPROBE_TRAJECTORY_FILE".into(), file.into()));
        }
        env.push(("REPOPROBE_MODEL".into(), cfg.model.clone().into()));
        env.push(("REPOPROBE_WORKDIR".into(), workdir.into()));
        env
    }

    fn trajectory_file(&self, scratch: &Path) -> Option<PathBuf> {
        Some(scratch.join("trajectory.json"))
    }

    /// Its stdout is the answer; its trajectory is [`own_trajectory`]. Nothing is counted from
    /// it: a command's own trajectory is its word, not a CLI's format we checked.
    fn read(&self, stdout: &str, _stderr: &str, own: Option<&str>) -> AgentResult {
        AgentResult {
            answer: Some(stdout.trim().to_string()),
            trajectory: Some(own_trajectory(stdout, own)),
            ..AgentResult::default()
        }
    }

    fn args(&self, call: &Call) -> Result<Vec<OsString>, ArgsError> {
        let template = call
            .cfg
            .command
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .ok_or(ArgsError::NoCommand)?;
        let script = substitute(
            template,
            &[
                ("{prompt_file}", call.prompt_file.as_os_str()),
                ("{model}", OsStr::new(&call.cfg.model)),
                ("{workdir}", call.workdir.as_os_str()),
            ],
        );
        Ok(vec![OsString::from("-c"), script])
    }
}

/// The ATIF trajectory the command wrote to `REPOPROBE_TRAJECTORY_FILE` (`own`), its steps
/// renumbered; without one (or one that does not read as ATIF, said in its notes), one step
/// with its output.
fn own_trajectory(stdout: &str, own: Option<&str>) -> Trajectory {
    let Some(text) = own else {
        return one_step(stdout);
    };
    match serde_json::from_str::<Trajectory>(text) {
        Ok(mut t) => {
            for (i, s) in t.steps.iter_mut().enumerate() {
                s.step_id = i as u64 + 1;
            }
            t
        }
        Err(e) => {
            let mut t = one_step(stdout);
            t.notes = Some(format!(
                "REPOPROBE_TRAJECTORY_FILE does not read as an ATIF trajectory ({e}); the output is kept whole as one step"
            ));
            t
        }
    }
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
    use crate::external::tests::{PROMPT_FILE, rt};
    use crate::external::{AgentConfig, ExternalAgent, parse, run};

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
    fn without_a_template_there_is_no_command_line() {
        let command = AgentConfig::new(ExternalAgent::Command, "m");
        let inv = crate::external::invocation(
            &command,
            std::path::Path::new("/tmp/wt"),
            "Why?",
            std::path::Path::new(PROMPT_FILE),
            Vec::new(),
        );
        assert!(inv.is_err());
    }
}
