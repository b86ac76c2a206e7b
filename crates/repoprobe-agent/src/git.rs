//! Every git command repoprobe runs, hardened against the repositories it runs in.
//!
//! An agent works in a worktree whose git directory is shared with the clone cache, so anything
//! it writes there (`git config core.fsmonitor '<cmd>'`, `core.hooksPath`, a hook, a filter
//! driver, `include.path`) would be run by the next git command of ours — with our whole
//! environment, API keys included. So every command built here:
//!
//! - starts from an empty environment: `PATH` (git finds its helpers and `ssh` through it; it
//!   holds no secret), `HOME=/dev/null` (a path under which no file can ever be planted, so no
//!   `~/.gitconfig`, `~/.config/git/attributes` or `ignore` is read), `LC_ALL=C` (messages read
//!   the same everywhere), `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`,
//!   `GIT_ATTR_NOSYSTEM`, `GIT_NO_REPLACE_OBJECTS` (a `refs/replace/` ref cannot swap the pinned
//!   commit's content), no prompt (`GIT_TERMINAL_PROMPT=0`, empty askpass); clone and fetch also
//!   get the proxy, CA and ssh-agent variables ([`NETWORK_VARS`]), nothing else;
//! - overrides on the command line ([`HARDENING`], which wins over any repository config):
//!   `core.fsmonitor=false`, `core.hooksPath=/dev/null`, no credential helper, plain `ssh`,
//!   only the file, git, ssh, http and https transports (never `ext::`), no automatic gc;
//! - runs in its own process group from `/`, and is killed with that group after a timeout
//!   ([`LOCAL_TIMEOUT`], [`NETWORK_TIMEOUT`]), so a stuck clone never holds a repository's lock
//!   forever.
//!
//! What `-c` cannot cover (filter drivers and diff drivers under names the attacker picks,
//! `include.path`, `extensions.worktreeConfig`, attributes files) is the job of the clone
//! cache's check ([`super::workspace`]) and of never running git on a git directory the agent
//! could have written when files are checked out or compared (a private repository of ours,
//! see `workspace::Shadow`).

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// How long a local git command may run (a checkout of a very large repository included).
pub const LOCAL_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// How long a clone or fetch may run.
pub const NETWORK_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// Longest git stderr quoted in an error.
const STDERR_CHARS: usize = 600;

/// `-c` settings given to every git command. Command-line settings take precedence over every
/// config file, and git hands them on to the git processes it starts itself.
pub const HARDENING: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.sshCommand=ssh",
    "core.askPass=",
    // An empty value empties the list of helpers.
    "credential.helper=",
    "protocol.allow=never",
    "protocol.file.allow=always",
    "protocol.git.allow=always",
    "protocol.ssh.allow=always",
    "protocol.http.allow=always",
    "protocol.https.allow=always",
    "protocol.ext.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "submodule.recurse=false",
];

/// Variables passed to clone and fetch (and only to them): proxies, certificates, the ssh
/// agent. None of them makes git run a program.
pub const NETWORK_VARS: &[&str] = &[
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
    "SSH_AUTH_SOCK",
];

/// One git command, hardened (see the module's documentation).
pub struct Git {
    cmd: Command,
    timeout: Duration,
}

impl Default for Git {
    fn default() -> Git {
        Git::new()
    }
}

impl Git {
    /// `git <args>` outside any repository (a clone, `config --file`).
    pub fn new() -> Git {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .env("HOME", "/dev/null")
            .env("LC_ALL", "C")
            .env("LANG", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "")
            .env("SSH_ASKPASS", "")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .current_dir("/")
            .arg("--no-pager");
        for setting in HARDENING {
            cmd.arg("-c").arg(setting);
        }
        Git {
            cmd,
            timeout: LOCAL_TIMEOUT,
        }
    }

    /// `git --git-dir=<git_dir> <args>`: a repository named, never discovered.
    pub fn at(git_dir: &Path) -> Git {
        let mut g = Git::new();
        g.cmd.arg("--git-dir").arg(git_dir);
        g
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Git {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Git
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Git {
        self.cmd.env(key, value);
        self
    }

    /// A clone or fetch: [`NETWORK_VARS`] passed on, [`NETWORK_TIMEOUT`].
    pub fn network(mut self) -> Git {
        for var in NETWORK_VARS {
            if let Some(v) = std::env::var_os(var) {
                self.cmd.env(var, v);
            }
        }
        self.timeout = NETWORK_TIMEOUT;
        self
    }

    /// Runs it: stdout on success; why not on failure (git's stderr, trimmed and cut to its
    /// last lines, when it failed).
    pub fn run(self) -> Result<String, GitError> {
        let mut cmd = self.cmd;
        let out = run_with_timeout(&mut cmd, self.timeout)?;
        if out.success {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(GitError::Failed {
            status: out.status,
            // git's last lines say what went wrong.
            stderr: repoprobe_core::text::cut_tail(stderr.trim(), STDERR_CHARS),
        })
    }
}

/// Why a git command (or another command run by [`run_with_timeout`]) gave no output. Each
/// message says it all (none chains a `source`): the messages go into `WorkspaceError`'s.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("could not run git: {0}")]
    Spawn(std::io::Error),
    #[error("could not wait for git: {0}")]
    Wait(std::io::Error),
    #[error("git did not finish within {} s and was killed", .0.as_secs_f64())]
    TimedOut(Duration),
    /// Git's stderr (its last lines), or its exit status when it printed nothing.
    #[error("{}", if .stderr.is_empty() { format!("exit status {}", .status) } else { .stderr.clone() })]
    Failed { status: String, stderr: String },
}

/// What a command left.
pub struct Output {
    pub success: bool,
    pub status: String,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `cmd` (stdin closed) in a process group of its own. The deadline (`timeout` from now)
/// covers both the process and its output: a process of the group that still holds a pipe after
/// git exits cannot keep us waiting either. At the deadline the whole group is killed and the
/// error says so; a reader blocked on a pipe held by a process that left the group is abandoned.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> Result<Output, GitError> {
    use std::os::unix::process::CommandExt;
    let deadline = Instant::now() + timeout;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(GitError::Spawn)?;
    let pid = child.id() as libc::pid_t;
    enum Done {
        Stdout(Vec<u8>),
        Stderr(Vec<u8>),
        Exited(std::io::Result<std::process::ExitStatus>),
    }
    let (tx, rx) = mpsc::channel();
    let drain = |r: Option<Box<dyn Read + Send>>, wrap: fn(Vec<u8>) -> Done| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            let _ = tx.send(wrap(buf));
        });
    };
    drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Done::Stdout,
    );
    drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Done::Stderr,
    );
    let exited = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&exited);
    std::thread::spawn(move || {
        let status = child.wait();
        flag.store(true, Ordering::SeqCst);
        let _ = tx.send(Done::Exited(status));
    });
    let (mut stdout, mut stderr, mut status) = (None, None, None);
    while stdout.is_none() || stderr.is_none() || status.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Done::Stdout(b)) => stdout = Some(b),
            Ok(Done::Stderr(b)) => stderr = Some(b),
            Ok(Done::Exited(s)) => status = Some(s),
            Err(_) => {
                if !exited.load(Ordering::SeqCst) || stdout.is_none() || stderr.is_none() {
                    // SAFETY: signals the process group we created. Its id stays ours while any
                    // member lives: the leader unreaped (`exited` not set) or a process still
                    // holding a pipe (a reader not done).
                    unsafe {
                        libc::killpg(pid, libc::SIGKILL);
                    }
                }
                return Err(GitError::TimedOut(timeout));
            }
        }
    }
    let status = status
        .expect("loop ends with a status")
        .map_err(GitError::Wait)?;
    Ok(Output {
        success: status.success(),
        status: status.to_string(),
        stdout: stdout.unwrap_or_default(),
        stderr: stderr.unwrap_or_default(),
    })
}

/// The values of a config file as `(key, value)` pairs, read by git itself (`git config --file
/// F --no-includes --list -z`), so the file's syntax is git's; keys come lower-cased except for
/// subsection names. Reading a config file never runs anything.
pub fn config_entries(file: &Path) -> Result<Vec<(String, String)>, GitError> {
    let out = Git::new()
        .args(["config", "--no-includes", "--list", "-z", "--file"])
        .arg(file)
        .run()?;
    Ok(out
        .split('\0')
        .filter(|e| !e.is_empty())
        .map(|e| match e.split_once('\n') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (e.to_string(), String::new()),
        })
        .collect())
}

/// `s` as the end of a message: JSON-quoted, its first `max` characters (the core's
/// [`quote_json`](repoprobe_core::text::quote_json)).
pub use repoprobe_core::text::quote_json as quote;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    #[test]
    fn a_command_past_its_timeout_is_killed_with_its_whole_group() {
        let tmp = tempfile::tempdir().unwrap();
        let mark = tmp.path().join("grandchild-lived");
        // A child that starts a grandchild and waits: killing only the child would leave the
        // grandchild holding the pipes (and the lock) for 3 s, then writing its mark.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("(sleep 3; touch {}) & wait", mark.display()));
        let started = Instant::now();
        let err = run_with_timeout(&mut cmd, Duration::from_millis(300))
            .err()
            .unwrap();
        assert!(matches!(err, GitError::TimedOut(_)), "{err}");
        assert!(err.to_string().contains("killed"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(3200));
        assert!(!mark.exists(), "the grandchild survived the timeout");
    }

    #[test]
    fn a_process_left_holding_the_output_after_git_exits_cannot_hold_us_past_the_deadline() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("sleep 5 & echo started");
        let started = Instant::now();
        let err = run_with_timeout(&mut cmd, Duration::from_millis(300))
            .err()
            .unwrap();
        assert!(matches!(err, GitError::TimedOut(_)), "{err}");
        assert!(err.to_string().contains("killed"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        // Without a straggler the output comes back whole.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("echo out; echo err >&2; exit 3");
        let out = run_with_timeout(&mut cmd, Duration::from_secs(5)).unwrap();
        assert!(!out.success);
        assert_eq!(
            (&out.stdout[..], &out.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
    }

    #[test]
    fn a_repository_config_cannot_turn_on_fsmonitor_or_hooks() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "one"]);
        let mark = tmp.path().join("ran");
        let evil = tmp.path().join("evil.sh");
        std::fs::write(
            &evil,
            format!("#!/bin/sh\necho \"$0 $*\" >> {}\n", mark.display()),
        )
        .unwrap();
        std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let hooks = tmp.path().join("hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        for hook in [
            "post-checkout",
            "reference-transaction",
            "post-index-change",
        ] {
            std::fs::copy(&evil, hooks.join(hook)).unwrap();
        }
        let dot_git = repo.join(".git");
        git(&repo, &["config", "core.fsmonitor", evil.to_str().unwrap()]);
        git(
            &repo,
            &["config", "core.hooksPath", hooks.to_str().unwrap()],
        );
        std::fs::copy(&evil, dot_git.join("hooks/post-checkout")).unwrap();
        // Plain git runs the planted commands (the plant works) …
        std::fs::write(repo.join("a.txt"), "b\n").unwrap();
        git(&repo, &["status", "--porcelain"]);
        assert!(
            mark.exists(),
            "the plant does not work: the test proves nothing"
        );
        std::fs::remove_file(&mark).unwrap();
        // … ours do not.
        let status = Git::at(&dot_git)
            .arg("--work-tree")
            .arg(&repo)
            .args(["status", "--porcelain"])
            .run()
            .unwrap();
        assert_eq!(status.trim(), "M a.txt");
        Git::at(&dot_git)
            .args(["worktree", "add", "--detach", "-q"])
            .arg(tmp.path().join("wt"))
            .arg("HEAD")
            .run()
            .unwrap();
        assert!(tmp.path().join("wt/a.txt").exists());
        assert!(
            !mark.exists(),
            "{}",
            std::fs::read_to_string(&mark).unwrap()
        );
    }

    #[test]
    fn config_entries_are_read_without_includes() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("config");
        std::fs::write(
            &f,
            "[core]\n\tbare = true\n[include]\n\tpath = /etc/other\n[filter \"Evil\"]\n\tclean = x y\n",
        )
        .unwrap();
        let e = config_entries(&f).unwrap();
        assert_eq!(
            e,
            [
                ("core.bare".to_string(), "true".to_string()),
                ("include.path".to_string(), "/etc/other".to_string()),
                ("filter.Evil.clean".to_string(), "x y".to_string()),
            ]
        );
        std::fs::write(&f, "[core\n").unwrap();
        assert!(config_entries(&f).is_err());
    }
}
