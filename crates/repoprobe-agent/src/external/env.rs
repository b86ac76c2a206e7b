//! The environment of an agent run, built from scratch (a few base variables plus the names and
//! values the caller lists), and the scrubbing of secret-looking values from everything read
//! back.

use super::presets::AgentConfig;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Variables every agent gets from our own environment (when set), besides the listed ones.
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TZ"];
/// What stands in for a secret in returned text.
pub(super) const REDACTED: &str = "[redacted]";

/// The agent's environment: [`BASE_ENV`] and `pass_env` from ours (when set), the preset's fixed
/// variables, `set_env`, the variables the run defines for the CLI (`command`'s placeholders'
/// values), and HOME.
pub fn agent_env(
    cfg: &AgentConfig,
    workdir: &Path,
    prompt_file: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    for name in BASE_ENV
        .iter()
        .copied()
        .chain(cfg.pass_env.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(name) {
            env.insert(name.into(), v);
        }
    }
    let cli = cfg.agent.cli();
    for (k, v) in cli.fixed_env() {
        env.entry((*k).into()).or_insert_with(|| (*v).into());
    }
    for (k, v) in &cfg.set_env {
        env.insert(k.into(), v.into());
    }
    env.extend(cli.run_env(cfg, workdir, prompt_file));
    if let Some(home) = &cfg.home {
        env.insert("HOME".into(), home.into());
    }
    env.into_iter().collect()
}

/// The values of `env` that must never come back, and every secret-looking value of our own
/// environment (a key we hold for the judge, say), longest first.
pub(super) fn secrets_of(env: &[(OsString, OsString)]) -> Vec<String> {
    let mut s: Vec<String> = env
        .iter()
        .filter(|(k, v)| is_secret(k, v))
        .map(|(_, v)| v.to_string_lossy().into_owned())
        .chain(repoprobe_llm::key::env_secrets().iter().cloned())
        .collect();
    s.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    s.dedup();
    s
}

/// Whether a variable's value must never come back: anything but URLs, homes, models and the
/// base variables, and only values long enough to be keys.
pub(super) fn is_secret(name: &OsStr, value: &OsStr) -> bool {
    let name = name.to_string_lossy();
    let public = BASE_ENV.contains(&name.as_ref())
        || name.ends_with("_URL")
        || name.ends_with("_HOME")
        || name.ends_with("_MODEL")
        || name.starts_with("REPOPROBE_")
        || name.starts_with("DISABLE_")
        || name.starts_with("CLAUDE_CODE_DISABLE");
    !public && value.len() >= 8
}

pub(super) fn scrub(secrets: &[String], text: &str) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), REDACTED);
        }
    }
    out
}
