//! The one trait every agent CLI implements ([`AgentCli`]): what differs from one CLI to the
//! next — its defaults, its command line, the settings its fresh HOME needs, the project
//! settings only the sandbox can hide from it, and how its output reads — so that the runner
//! (`super`) holds no per-CLI branch and a new CLI is one new module.

use super::parse::AgentResult;
use super::presets::AgentConfig;
use crate::verdict::CouldNotRun;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why a run's command line cannot be built from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("--agent command needs a command template")]
    NoCommand,
}

/// What one run's command line is built from.
pub(super) struct Call<'a> {
    pub cfg: &'a AgentConfig,
    /// The worktree.
    pub workdir: &'a Path,
    pub prompt: &'a str,
    /// Holds `prompt`; lies outside the worktree.
    pub prompt_file: &'a Path,
    /// The agent's whole environment.
    pub env: &'a [(OsString, OsString)],
}

/// One agent CLI. Implemented by a unit struct per CLI; `super::ExternalAgent::cli` picks it.
pub(super) trait AgentCli: Sync {
    /// The recorded name, also the `--agent` value.
    fn name(&self) -> &'static str;

    /// The program looked up on PATH when no path is given; `None` for `command`.
    fn default_program(&self) -> Option<&'static str>;

    /// The variables a preset usually needs passed through (its key and base URL).
    fn usual_env(&self) -> &'static [&'static str];

    /// The variable holding the base URL of the model API (the sandbox points it at the bridge).
    fn base_url_var(&self) -> Option<&'static str>;

    /// The variable the CLI reads its API key from, which a key named by the caller is put in
    /// (a gateway's key held under another name); `None` for `command`, which gets the
    /// caller's variable under its own name.
    fn key_var(&self) -> Option<&'static str> {
        None
    }

    /// The API called when the base-URL variable is not set.
    fn default_api_url(&self) -> Option<&'static str>;

    /// Variables that keep the CLI from any traffic besides the model calls (no telemetry,
    /// update checks); listed variables with the same name win.
    fn fixed_env(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Variables the run itself defines for the CLI; they win over listed ones.
    fn run_env(
        &self,
        _cfg: &AgentConfig,
        _workdir: &Path,
        _prompt_file: &Path,
    ) -> Vec<(OsString, OsString)> {
        Vec::new()
    }

    /// The arguments before the caller's extra ones.
    fn args(&self, call: &Call) -> Result<Vec<OsString>, ArgsError>;

    /// The arguments after the caller's extra ones.
    fn trailing_args(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the prompt file is fed to stdin (else the prompt is in the arguments).
    fn prompt_on_stdin(&self) -> bool {
        true
    }

    /// Writes the fresh HOME's settings that keep the CLI from loading the repository's own
    /// project configuration; returns the variables that point the CLI at them. `workdir` is
    /// the worktree as the agent sees it (canonical).
    fn home_settings(
        &self,
        _home: &Path,
        _workdir: &str,
    ) -> std::io::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    /// The repository's own settings the CLI would load that only the sandbox can keep from it
    /// (emptied there): the candidates in `workdir`, existing or not.
    fn project_settings(&self, _workdir: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Whether the CLI needs a temporary directory of the run's own even unconfined.
    fn private_tmp(&self) -> bool {
        false
    }

    /// Reads what the CLI printed, in one pass: what it said of how the run ended (answer or
    /// error, a cause that kept it from running, its ids and reasons in `meta`) and the run's
    /// steps in ATIF (`trajectory`, always set: `crate::atif::assemble` adds the prompt and
    /// what every run shares), converted from its output or from `own`, the trajectory file it
    /// wrote itself ([`AgentCli::trajectory_file`]). The counts are read from that trajectory
    /// afterwards, for every CLI alike (`super::parse::count`), as far as `shown` says the
    /// output showed them; the exit status is judged by the caller (`super::registry::parse`).
    fn read(&self, stdout: &str, stderr: &str, own: Option<&str>) -> AgentResult;

    /// Why an exit status of the CLI means the run could not happen (no usable credentials,
    /// a configuration it refused), told by its documented exit codes; `None` otherwise.
    fn exit_could_not_run(&self, _exit_code: Option<i32>, _stderr: &str) -> Option<CouldNotRun> {
        None
    }

    /// Where the CLI may write its own ATIF trajectory, in the run's `scratch` directory.
    fn trajectory_file(&self, _scratch: &Path) -> Option<PathBuf> {
        None
    }
}
