//! A run's confinement: the keys replaced by placeholders and the API proxy started outside
//! (`seal`), the command wrapped in bubblewrap with what it may see and write (`confine`), and
//! the telling of a sandbox that never started from an agent that failed (`sandbox_failure`).

use super::parse::{ERROR_TAIL_CHARS, tail};
use super::presets::AgentConfig;
use super::process::{Invocation, RawOutput};
use crate::proxy;
use crate::sandbox::{self, Mounts};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why a sealed run's API proxy could not be started: the API's URL, or the proxy's own start
/// (its socket, its HTTP client).
#[derive(Debug, thiserror::Error)]
pub(super) enum SealError {
    #[error(transparent)]
    Url(#[from] proxy::UrlError),
    #[error(transparent)]
    Start(std::io::Error),
}

/// What stands in the agent's environment for the variables that are keys, and what the proxy
/// must reach: with a sandbox, every credential variable (by name, [`proxy::is_credential`])
/// becomes a placeholder, the preset's base-URL variable (and `REPOPROBE_API_URL`) the bridge's
/// address, and the proxy starts for the API's origin; returns it (none when the run reaches no
/// API: `command` without `--agent-api-url`, or no bridge program) and the network rule in words.
pub(super) fn seal(
    cfg: &AgentConfig,
    env: &mut [(OsString, OsString)],
) -> Result<(Option<proxy::ApiProxy>, String), SealError> {
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
    let p = proxy::ApiProxy::start(upstream, secrets).map_err(SealError::Start)?;
    Ok((
        Some(p),
        format!("{origin} only, through repoprobe's proxy (key added outside)"),
    ))
}

/// `inv` run under `cfg.sandbox` when there is one: bwrap's command line with the agent's after
/// `--` (its `TMPDIR` is set by the caller: the scratch directory's `tmp`); `writable` (absolute) are bound back, `git_pointer`
/// read-only over itself when it exists; cwd stays the worktree (or `/tmp` for a run without
/// one). Without a sandbox, `inv` unchanged.
pub(super) fn confine(
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
    // Inside, only the exposed directories exist, by their real paths: a path through others
    // (`crates/x/../../tools`) or through a symlinked directory (a PATH entry that is a link)
    // would not resolve there. The program is found on PATH here and its directory resolved;
    // the name stays (a `.bin` link).
    let found = sandbox::find_on_path(&inv.program, path_var.as_deref());
    let program = match found.as_deref().map(|p| (p.parent(), p.file_name())) {
        Some((Some(dir), Some(name))) => dir
            .canonicalize()
            .map_or_else(|_| dir.join(name), |d| d.join(name))
            .into_os_string(),
        _ => inv.program.clone(),
    };
    // And what the agent itself finds on PATH (`#!/usr/bin/env node`, a CLI's helpers), by
    // the same real paths.
    if let Some(path) = &path_var {
        let real = std::env::join_paths(
            std::env::split_paths(path).map(|d| d.canonicalize().unwrap_or(d)),
        );
        if let Ok(real) = real {
            for (k, v) in inv.env.iter_mut() {
                if k == "PATH" {
                    *v = real.clone();
                }
            }
        }
    }
    let (program, args) = bw.wrap(&program, &inv.args, &mounts);
    inv.program = program;
    inv.args = args;
    inv
}

/// Why bwrap could not start the agent (exit status 1, a `bwrap: ` message and no output), or
/// `None` when the agent ran.
pub(super) fn sandbox_failure(cfg: &AgentConfig, raw: &RawOutput, stderr: &str) -> Option<String> {
    cfg.sandbox.as_ref()?;
    let first = stderr.trim_start().lines().next().unwrap_or("");
    (raw.exit_code == Some(1) && raw.stdout.is_empty() && first.starts_with("bwrap: "))
        .then(|| tail(first, ERROR_TAIL_CHARS))
}
