//! The process runner of agent CLIs: a new process group per run, stdout's head and stderr's
//! tail read while it runs, the whole group killed on timeout, when the leader exits, and when
//! a run is cancelled.

use super::env::scrub;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The tail of stderr kept.
pub(super) const MAX_STDERR: usize = 64 << 10;
/// How long the pipes may stay open after the agent's process group is gone (a process that
/// left the group still holds them).
pub(super) const DRAIN_GRACE: Duration = Duration::from_secs(3);
/// The capabilities (numbers of `<linux/capability.h>`) any of which opens a non-dumpable
/// process's `/proc/<pid>/environ` to another: `CAP_SYS_PTRACE`, `CAP_SYS_ADMIN`,
/// `CAP_PERFMON` (measured on Linux 6.18: each alone grants the read).
#[cfg(target_os = "linux")]
pub(super) const PTRACE_CAPS: [libc::c_ulong; 3] = [19, 21, 38];

/// A command ready to spawn. `Debug` shows the names of the environment only.
#[derive(Clone)]
pub struct Invocation {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The worktree.
    pub cwd: PathBuf,
    /// A file fed to the agent's stdin (the prompt), or none.
    pub stdin: Option<PathBuf>,
    pub(super) env: Vec<(OsString, OsString)>,
    pub(super) secrets: Vec<String>,
}

impl fmt::Debug for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("stdin", &self.stdin)
            .field("env", &self.env_names().collect::<Vec<_>>())
            .finish()
    }
}

impl Invocation {
    /// Names of the variables the agent gets (its whole environment).
    pub fn env_names(&self) -> impl Iterator<Item = &OsStr> {
        self.env.iter().map(|(k, _)| k.as_os_str())
    }

    /// `text` with every secret value replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        scrub(&self.secrets, text)
    }
}

/// What a process left: raw bytes, exit status, whether we killed it.
pub(super) struct RawOutput {
    pub(super) stdout: Vec<u8>,
    pub(super) stdout_truncated: bool,
    pub(super) stderr: Vec<u8>,
    pub(super) exit_code: Option<i32>,
    pub(super) timed_out: bool,
}

/// Kills the whole process group when dropped (a cancelled run leaves nothing behind).
pub(super) struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: a plain syscall; ESRCH (group already gone) is fine.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `inv` as the leader of a new process group, reads stdout (head, up to `max_stdout`)
/// and stderr (tail) while it runs, and on timeout kills the whole group. Once the leader has
/// exited the group is killed as well, so background processes it left cannot hold the pipes.
pub(super) async fn execute(
    inv: &Invocation,
    timeout: Duration,
    max_stdout: usize,
    unconfined: bool,
) -> std::io::Result<RawOutput> {
    let stdin = match &inv.stdin {
        Some(p) => Stdio::from(std::fs::File::open(p)?),
        None => Stdio::null(),
    };
    let mut cmd = tokio::process::Command::new(&inv.program);
    cmd.args(&inv.args)
        .current_dir(&inv.cwd)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    #[cfg(target_os = "linux")]
    {
        // A child running as root would otherwise keep the capabilities that open our
        // `/proc/<pid>/environ` although we are non-dumpable; out of its bounding set, its exec
        // never regains them. bwrap needs them for itself and drops every capability of the
        // sandboxed process, so this is for unconfined runs only. EPERM (not root) is fine:
        // nothing to drop.
        if unconfined {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    for cap in PTRACE_CAPS {
                        libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
                    }
                    Ok(())
                });
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = unconfined;
    let mut child = cmd.spawn()?;
    let mut guard = GroupGuard(child.id().map(|p| p as i32));
    let out_task = tokio::spawn(read_head(child.stdout.take(), max_stdout));
    let err_task = tokio::spawn(read_tail(child.stderr.take(), MAX_STDERR));
    let (exit_code, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status?.code(), false),
        Err(_) => {
            guard.kill();
            let _ = child.wait().await;
            (None, true)
        }
    };
    guard.kill();
    let (stdout, stdout_truncated) = match tokio::time::timeout(DRAIN_GRACE, out_task).await {
        Ok(Ok(x)) => x,
        _ => (Vec::new(), false),
    };
    let stderr = match tokio::time::timeout(DRAIN_GRACE, err_task).await {
        Ok(Ok(x)) => x,
        _ => Vec::new(),
    };
    Ok(RawOutput {
        stdout,
        stdout_truncated,
        stderr,
        exit_code,
        timed_out,
    })
}

/// The first `max` bytes, and whether there was more (the rest is read and dropped so the
/// writer never blocks).
pub(super) async fn read_head<R: AsyncRead + Unpin>(r: Option<R>, max: usize) -> (Vec<u8>, bool) {
    let Some(mut r) = r else {
        return (Vec::new(), false);
    };
    let (mut out, mut truncated, mut chunk) = (Vec::new(), false, vec![0u8; 64 << 10]);
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => return (out, truncated),
            Ok(n) => {
                let room = max.saturating_sub(out.len());
                out.extend_from_slice(&chunk[..n.min(room)]);
                truncated |= n > room;
            }
        }
    }
}

/// The last `max` bytes.
pub(super) async fn read_tail<R: AsyncRead + Unpin>(r: Option<R>, max: usize) -> Vec<u8> {
    let Some(mut r) = r else { return Vec::new() };
    let (mut out, mut chunk) = (Vec::new(), vec![0u8; 16 << 10]);
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&chunk[..n]);
                if out.len() > 2 * max {
                    out.drain(..out.len() - max);
                }
            }
        }
    }
    if out.len() > max {
        out.drain(..out.len() - max);
    }
    out
}
