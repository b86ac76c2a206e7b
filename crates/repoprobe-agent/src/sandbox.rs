//! The confinement of every process an agent run spawns (`--agent claude-code | codex | gemini |
//! command`): on Linux, bubblewrap (`bwrap`, Debian package `bubblewrap`) with its own PID
//! namespace and `/proc`, the whole filesystem read-only but a private empty tmpfs over `/tmp`
//! (the agent's TMPDIR is its scratch directory's), repoprobe's own
//! directories (clone cache, worktrees, journals, transcripts, mapped clones) and the users'
//! homes hidden under empty tmpfs, and only the question's worktree and the run's scratch
//! directory (the fresh HOME, the prompt) bound back writable; the benchmark file (reference
//! answers, checklists) reads as empty. The worktree's `.git` pointer is
//! bound read-only over itself; what it points to is hidden. The network is the run's own
//! namespace with loopback only: the model's API is reached through `proxy` (its socket and the
//! bridge bound under `/run/repoprobe`, the host's `/run` hidden).
//!
//! [`Bubblewrap::probe`] is asked once per run, before any question: a missing or broken bwrap
//! stops `answer` with [`unavailable`]'s message unless the user passed `--no-sandbox`.
//! [`Bubblewrap::wrap`] turns one command into its confined form; the argument list is pure and
//! pinned in the tests below. This module must not decide what runs or read the agent's output.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The environment variable naming the bwrap program to use instead of `bwrap` on PATH (for
/// tests, and for installs outside PATH).
pub const BWRAP_ENV: &str = "REPOPROBE_BWRAP";
/// The Debian package that provides bwrap.
pub const PACKAGE: &str = "bubblewrap";
/// Directories never exposed again, whatever PATH says.
const NEVER_EXPOSED: &[&str] = &[".ssh", ".gnupg", ".aws", ".kube", ".docker", ".netrc"];
/// The host's directories of programs and libraries, bound read-only (or, when a link into
/// `/usr`, kept as that link).
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// The files of `/etc` that programs read to start (user and host names, the dynamic linker,
/// Debian's alternatives behind `/usr/bin` links, shells' start files, time zone, TLS roots),
/// bound read-only where they exist; nothing else of `/etc` (no credentials, no services'
/// configuration) is seen.
const ETC_FILES: &[&str] = &[
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "localtime",
    "timezone",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "os-release",
    "debian_version",
    "profile",
    "profile.d",
    "bash.bashrc",
    "inputrc",
    "shells",
    "environment",
    "locale.alias",
    "mime.types",
    "magic",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "terminfo",
];
/// The directory every run sees as its own empty tmpfs.
const PRIVATE_TMP: &str = "/tmp";
/// What a record says when agents ran unconfined.
pub const NONE: &str = "none (--no-sandbox)";

/// A bwrap that was found to work, and the directories every run must not see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bubblewrap {
    program: PathBuf,
    /// `bubblewrap 0.8.0`, as `bwrap --version` says.
    version: String,
    /// Directories hidden under an empty tmpfs (absolute, existing, canonical).
    hidden: Vec<PathBuf>,
    /// Files replaced by an empty one (`/dev/null`): the benchmark, whose reference answers and
    /// checklists the agent must not read.
    masked: Vec<PathBuf>,
}

/// What one confined command may touch besides the read-only root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Bound writable at the same path, after everything is hidden (the worktree, the scratch
    /// directory with the fresh HOME).
    pub writable: Vec<PathBuf>,
    /// Bound read-only over themselves last (the worktree's `.git` pointer).
    pub read_only_over: Vec<PathBuf>,
    /// Emptied after the writable binds: a directory becomes an empty tmpfs, a file
    /// `/dev/null` (the project settings a CLI would load, see `external::project_settings`).
    pub emptied: Vec<PathBuf>,
    /// Re-exposed read-only although inside a hidden directory (the agent's own program, PATH
    /// entries under a home).
    pub exposed: Vec<PathBuf>,
    /// The working directory inside.
    pub cwd: PathBuf,
    /// The run's one way out (its own network namespace has nothing but loopback): the API
    /// proxy's socket and the bridge program, bound at [`API_SOCKET`] and [`BRIDGE`], the
    /// bridge started first. `None`: no network at all.
    pub api: Option<ApiDoor>,
}

/// What a sealed run reaches the model's API through (see `proxy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiDoor {
    /// The proxy's Unix socket, outside.
    pub socket: PathBuf,
    /// repoprobe's own binary, which runs as the bridge inside.
    pub bridge: PathBuf,
}

/// Where the proxy's socket is inside the sandbox.
pub const API_SOCKET: &str = "/run/repoprobe/api.sock";
/// Where repoprobe's binary, the bridge, is inside the sandbox.
pub const BRIDGE: &str = "/run/repoprobe/bridge";

/// Why agent CLIs cannot run confined here: what stopped bubblewrap (its message says the
/// package to install and the way out, [`unavailable`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", unavailable(.0))]
pub struct Unavailable(pub String);

/// The message of a refused run: why, the package, and the way out.
pub fn unavailable(why: &str) -> String {
    if cfg!(target_os = "linux") {
        format!(
            "agent CLIs run confined by bubblewrap, which cannot start here: {why}. Install the \
             Debian package `{PACKAGE}` (apt-get install {PACKAGE}), or pass --no-sandbox to run \
             the agent unconfined (recorded as agent.sandbox = \"{NONE}\")"
        )
    } else {
        format!(
            "agent CLIs run confined by bubblewrap, which exists on Linux only; pass --no-sandbox \
             to run the agent unconfined on this system (recorded as agent.sandbox = \"{NONE}\")"
        )
    }
}

impl Bubblewrap {
    /// Finds bwrap (`$REPOPROBE_BWRAP`, else `bwrap` on PATH), asks its version and starts one
    /// confined `true` with the options every run uses. `hidden` are the directories to hide
    /// besides the homes (`$HOME`, `/root`, `/home`); missing ones are skipped. `Err` says why
    /// it cannot start here. `masked` are files to replace by an empty one.
    pub fn probe(hidden: &[PathBuf], masked: &[PathBuf]) -> Result<Bubblewrap, Unavailable> {
        if !cfg!(target_os = "linux") {
            return Err(Unavailable("not Linux".into()));
        }
        let program = match std::env::var_os(BWRAP_ENV).filter(|p| !p.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => find_on_path(OsStr::new("bwrap"), std::env::var_os("PATH").as_deref())
                .ok_or_else(|| Unavailable("no `bwrap` on PATH".into()))?,
        };
        // Neither the probe nor its trial gets our environment (our keys): PATH only.
        let path = std::env::var_os("PATH").unwrap_or_default();
        let out = Command::new(&program)
            .arg("--version")
            .env_clear()
            .env("PATH", &path)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Unavailable(format!("{} --version: {e}", program.display())))?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || version.is_empty() {
            return Err(Unavailable(format!(
                "{} --version failed ({}): {}",
                program.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let mut all: Vec<PathBuf> = hidden.to_vec();
        all.extend(homes());
        let mut masked: Vec<PathBuf> = masked
            .iter()
            .filter_map(|f| f.canonicalize().ok())
            .filter(|f| f.is_file())
            .collect();
        masked.sort();
        masked.dedup();
        let bw = Bubblewrap {
            program,
            version,
            hidden: canonical_dirs(&all),
            masked,
        };
        let mut trial = Command::new(&bw.program);
        trial
            .args(bw.args(&Mounts {
                cwd: "/".into(),
                ..Mounts::default()
            }))
            .arg("true")
            .env_clear()
            .env("PATH", &path)
            .stdin(Stdio::null());
        let out = trial
            .output()
            .map_err(|e| Unavailable(format!("{}: {e}", bw.program.display())))?;
        if !out.status.success() {
            return Err(Unavailable(format!(
                "a trial run failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(bw)
    }

    /// What the records say: `bubblewrap 0.8.0`.
    pub fn describe(&self) -> &str {
        &self.version
    }

    /// bwrap's options for `m`, up to and including the `--` before the command. Order matters:
    /// later mounts lie on top of earlier ones, so the hiding tmpfs come first (parents before
    /// children), then what is exposed again, then the writable binds, then the read-only
    /// pointers over them.
    pub fn args(&self, m: &Mounts) -> Vec<OsString> {
        let mut a = system_args();
        a.extend(self.run_args(m));
        a
    }

    /// [`Bubblewrap::args`] after the system's directories: what this run sees of ours.
    fn run_args(&self, m: &Mounts) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        push(&mut a, &["--dev", "/dev", "--proc", "/proc"]);
        // Each run gets a private, writable, empty `/tmp`: some CLIs write there at fixed paths
        // whatever `TMPDIR` says (Codex 0.171.0 creates `/tmp/codex-daemon-0` before its own
        // sandbox runs a command; read-only, every command failed), and nothing of the host's
        // `/tmp` (other programs' files, our own temporary directories) is seen. What must be
        // seen there (a worktree, the agent's program) is bound back below like anything hidden.
        let tmp = PathBuf::from(PRIVATE_TMP);
        let hidden = self.hidden_with(&tmp);
        // Nothing of ours exists inside but what is bound; a hidden directory is hidden again
        // only where an exposed one brings it back (below).
        push(&mut a, &["--tmpfs".as_ref(), tmp.as_os_str()]);
        let exposed = exposed(m, &hidden);
        for p in &exposed {
            push(
                &mut a,
                &["--ro-bind-try".as_ref(), p.as_os_str(), p.as_os_str()],
            );
        }
        // What an exposed directory brought back of a hidden one goes again (a PATH entry that
        // holds the clone cache, say).
        for h in hidden.iter().filter(|h| {
            exposed
                .iter()
                .any(|e| h.starts_with(e) && h.as_path() != e.as_path())
        }) {
            push(&mut a, &["--tmpfs".as_ref(), h.as_os_str()]);
        }
        for p in &m.writable {
            push(&mut a, &["--bind".as_ref(), p.as_os_str(), p.as_os_str()]);
        }
        self.masks(&mut a, m, &exposed);
        api_door(&mut a, m);
        // The root itself (a tmpfs bwrap made) takes no new file: only the worktree, the scratch
        // directory and the private `/tmp` are writable.
        push(&mut a, &["--remount-ro", "/"]);
        push(
            &mut a,
            &[
                "--unshare-net",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--die-with-parent",
                "--new-session",
            ],
        );
        push(
            &mut a,
            &["--chdir".as_ref(), m.cwd.as_os_str(), "--".as_ref()],
        );
        a
    }

    /// The directories hidden (ours, the homes) and the private `tmp`, shallowest first; never
    /// `/` (hiding it would hide everything).
    fn hidden_with<'a>(&'a self, tmp: &'a PathBuf) -> Vec<&'a PathBuf> {
        let mut hidden: Vec<&PathBuf> = self
            .hidden
            .iter()
            .filter(|h| h.as_path() != Path::new("/"))
            .chain(std::iter::once(tmp))
            .collect();
        hidden.sort_by_key(|p| (p.components().count(), p.as_os_str().to_os_string()));
        hidden.dedup();
        hidden
    }

    /// The masked files a bind brought back (a benchmark inside the worktree's parent under
    /// `/tmp`, say) masked there too; the project settings emptied; what is read-only over a
    /// writable directory.
    fn masks(&self, a: &mut Vec<OsString>, m: &Mounts, exposed: &[&PathBuf]) {
        let shown = |f: &Path| {
            is_system(f)
                || exposed.iter().any(|e| f.starts_with(e))
                || m.writable.iter().any(|w| f.starts_with(w))
        };
        for f in self.masked.iter().filter(|f| shown(f)) {
            push(
                a,
                &["--ro-bind".as_ref(), "/dev/null".as_ref(), f.as_os_str()],
            );
        }
        for p in &m.emptied {
            if p.is_dir() {
                push(a, &["--tmpfs".as_ref(), p.as_os_str()]);
            } else {
                push(
                    a,
                    &["--ro-bind".as_ref(), "/dev/null".as_ref(), p.as_os_str()],
                );
            }
        }
        for p in &m.read_only_over {
            push(a, &["--ro-bind-try".as_ref(), p.as_os_str(), p.as_os_str()]);
        }
    }

    /// `program args…` confined: bwrap's program and the whole argument list.
    pub fn wrap(
        &self,
        program: &OsStr,
        args: &[OsString],
        m: &Mounts,
    ) -> (OsString, Vec<OsString>) {
        let mut all = self.args(m);
        if m.api.is_some() {
            // The bridge listens first, then runs the agent.
            all.extend([
                OsString::from(BRIDGE),
                crate::proxy::BRIDGE_SUBCOMMAND.into(),
                API_SOCKET.into(),
                crate::proxy::BRIDGE_PORT.to_string().into(),
            ]);
        }
        all.push(program.to_os_string());
        all.extend(args.iter().cloned());
        (self.program.clone().into_os_string(), all)
    }
}

/// The host's programs, libraries and the few files of `/etc` every run sees, read-only.
fn system_args() -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |xs: &[&OsStr]| a.extend(xs.iter().map(|x| x.to_os_string()));
    // Nothing of the host exists inside but what is bound here: the programs and libraries,
    // the few files of `/etc` that programs read to start, then (below) the agent's own
    // program, the worktree and the run's scratch directory. No `/opt`, `/srv`, `/home`,
    // `/root`, `/var`, `/mnt`, the directory repoprobe was started from, or the host's
    // `/tmp` and `/run`.
    for dir in SYSTEM_DIRS {
        let p = Path::new(dir);
        match p.symlink_metadata() {
            // Merged /usr: `/bin -> usr/bin` stays a link into the bound /usr.
            Ok(md) if md.file_type().is_symlink() => {
                if let Ok(target) = p.read_link() {
                    push(&["--symlink".as_ref(), target.as_os_str(), p.as_os_str()]);
                }
            }
            Ok(md) if md.is_dir() => push(&["--ro-bind".as_ref(), p.as_os_str(), p.as_os_str()]),
            _ => {}
        }
    }
    for f in ETC_FILES {
        let p = Path::new("/etc").join(f);
        push(&["--ro-bind-try".as_ref(), p.as_os_str(), p.as_os_str()]);
    }
    a
}

/// The users' homes: ours, `/root` and `/home` (where `~/.ssh` and every token file live).
fn homes() -> Vec<PathBuf> {
    let mut h: Vec<PathBuf> = vec!["/root".into(), "/home".into()];
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        h.push(home.into());
    }
    h
}

/// The existing directories of `dirs`, absolute and canonical, sorted, without duplicates.
fn canonical_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .filter(|d| d.is_dir())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The program a script's `#!` line runs (the argument of `env`), or `None`.
fn interpreter_of(script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next()?).into_owned();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let program = if Path::new(first).file_name().is_some_and(|n| n == "env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        first
    };
    Some(PathBuf::from(program))
}

/// `name` looked up on `path` the way `execvp` does (a name with a `/` is taken as it is).
pub fn find_on_path(name: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let p = Path::new(name);
    if p.components().count() > 1 || p.is_absolute() {
        return Some(p.to_path_buf());
    }
    std::env::split_paths(path?)
        .map(|d| d.join(name))
        .find(|c| {
            c.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What a confined agent program needs to see besides the system's directories: the program
/// (as found and its real file), their directories, the package it belongs to (up to a
/// `node_modules` ancestor), and a script's interpreter.
pub fn program_dirs(program: &OsStr, path: Option<&OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(found) = find_on_path(program, path) {
        for p in [found.clone(), found.canonicalize().unwrap_or(found)] {
            if let Some(parent) = p.parent() {
                out.push(parent.to_path_buf());
            }
            // The program itself too: its directory may be one that stays hidden (an
            // `--agent-bin` kept beside the journals, say), and then only the file comes back.
            out.push(p.clone());
            let mut acc = PathBuf::new();
            for c in p.components() {
                acc.push(c);
                if c.as_os_str() == "node_modules" {
                    out.push(acc.clone());
                    break;
                }
            }
        }
    }
    // A script's interpreter (`#!/usr/bin/env node`, `#!/opt/node/bin/node`): where it lies
    // outside the system's directories (a Node.js of nvm's, say), its directory too. Nothing
    // else of PATH is seen.
    if let Some(interpreter) = find_on_path(program, path).and_then(|p| interpreter_of(&p))
        && let Some(found) = find_on_path(interpreter.as_os_str(), path)
    {
        for p in [found.clone(), found.canonicalize().unwrap_or(found)] {
            out.extend(p.parent().map(Path::to_path_buf));
            out.push(p);
        }
    }
    let mut canon: Vec<PathBuf> = out
        .into_iter()
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect();
    canon.sort();
    canon.dedup();
    canon
}

/// Appends bwrap arguments.
fn push<S: AsRef<OsStr> + ?Sized>(a: &mut Vec<OsString>, xs: &[&S]) {
    a.extend(xs.iter().map(|x| x.as_ref().to_os_string()));
}

fn is_system(p: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
}

/// The directories the agent may read besides the system's: absolute, not `/`, not a system
/// directory (those are there already), not hidden, holding no component that is never shown.
fn exposed<'a>(m: &'a Mounts, hidden: &[&PathBuf]) -> Vec<&'a PathBuf> {
    let mut exposed: Vec<&PathBuf> = m
        .exposed
        .iter()
        .filter(|p| {
            p.is_absolute()
                && p.parent().is_some()
                && !is_system(p)
                && !hidden.contains(p)
                && !p
                    .components()
                    .any(|c| NEVER_EXPOSED.contains(&c.as_os_str().to_string_lossy().as_ref()))
        })
        .collect();
    exposed.sort();
    exposed.dedup();
    exposed
}

/// `/run` of the host (sockets of its services) replaced by the run's own, which holds the way
/// to the API only: the bridge program and the proxy's socket.
fn api_door(a: &mut Vec<OsString>, m: &Mounts) {
    push(a, &["--tmpfs", "/run"]);
    if let Some(door) = &m.api {
        push(
            a,
            &[
                "--ro-bind".as_ref(),
                door.bridge.as_os_str(),
                BRIDGE.as_ref(),
                "--ro-bind".as_ref(),
                door.socket.as_os_str(),
                API_SOCKET.as_ref(),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[OsString]) -> String {
        a.iter()
            .map(|x| x.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn hides_first_then_exposes_then_binds_the_worktree_and_its_pointer() {
        let bw = Bubblewrap {
            program: "/usr/bin/bwrap".into(),
            version: "bubblewrap 0.8.0".into(),
            hidden: vec![
                "/root".into(),
                "/srv/cache/worktrees".into(),
                "/srv/cache".into(),
                "/root/bin/cache".into(),
                "/".into(),
            ],
            masked: vec!["/srv/bench.jsonl".into(), "/srv/cache/gone.jsonl".into()],
        };
        let m = Mounts {
            writable: vec![
                "/srv/cache/worktrees/q1".into(),
                "/srv/cache/worktrees/q1.scratch".into(),
            ],
            read_only_over: vec!["/srv/cache/worktrees/q1/.git".into()],
            // Not a directory here: a file, emptied by /dev/null (a directory gets a tmpfs).
            emptied: vec!["/srv/cache/worktrees/q1/.env".into()],
            exposed: vec![
                "/root/.local/bin".into(),
                "/root/bin".into(),
                "/root/.ssh/bin".into(),
                "/usr/bin".into(),
                "/root".into(),
                "relative".into(),
            ],
            cwd: "/srv/cache/worktrees/q1".into(),
            api: None,
        };
        let (program, args) = bw.wrap("claude".as_ref(), &["-p".into()], &m);
        assert_eq!(program, "/usr/bin/bwrap");
        assert!(strings(&args).starts_with(&strings(&system_args())));
        let mut run = bw.run_args(&m);
        run.extend(["claude".into(), "-p".into()]);
        assert_eq!(
            strings(&run),
            "--dev /dev --proc /proc --tmpfs /tmp \
             --ro-bind-try /root/.local/bin /root/.local/bin --ro-bind-try /root/bin /root/bin \
             --tmpfs /root/bin/cache \
             --bind /srv/cache/worktrees/q1 /srv/cache/worktrees/q1 \
             --bind /srv/cache/worktrees/q1.scratch /srv/cache/worktrees/q1.scratch \
             --ro-bind /dev/null /srv/cache/worktrees/q1/.env \
             --ro-bind-try /srv/cache/worktrees/q1/.git /srv/cache/worktrees/q1/.git \
             --tmpfs /run --remount-ro / --unshare-net \
             --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --die-with-parent \
             --new-session --chdir /srv/cache/worktrees/q1 -- claude -p"
        );
        assert_eq!(bw.describe(), "bubblewrap 0.8.0");
    }

    #[test]
    fn tmp_is_private_and_what_lives_there_comes_back_without_its_hidden_neighbours() {
        // A checkout under /tmp (as CI's may be): the clone cache and the journals there are
        // hidden by the fresh /tmp itself, not named by a tmpfs of their own; the agent's
        // package, the worktree and the benchmark inside the worktree's reach come back.
        let bw = Bubblewrap {
            program: "/usr/bin/bwrap".into(),
            version: "bubblewrap 0.8.0".into(),
            hidden: vec!["/tmp/run/cache".into(), "/tmp/run/tools/cache".into()],
            masked: vec![
                "/tmp/run/cache/wt/bench.jsonl".into(),
                "/tmp/bench2.jsonl".into(),
            ],
        };
        let m = Mounts {
            writable: vec!["/tmp/run/cache/wt".into()],
            exposed: vec!["/tmp/run/tools".into(), "/usr/bin".into()],
            cwd: "/tmp/run/cache/wt".into(),
            api: Some(ApiDoor {
                socket: "/tmp/proxy/api.sock".into(),
                bridge: "/usr/bin/repoprobe".into(),
            }),
            ..Mounts::default()
        };
        let (_, wrapped) = bw.wrap("codex".as_ref(), &["exec".into()], &m);
        assert_eq!(
            strings(&wrapped[wrapped.len() - 6..]),
            "/run/repoprobe/bridge __agent-bridge /run/repoprobe/api.sock 41873 codex exec"
        );
        assert_eq!(
            strings(&bw.run_args(&m)),
            "--dev /dev --proc /proc --tmpfs /tmp \
             --ro-bind-try /tmp/run/tools /tmp/run/tools --tmpfs /tmp/run/tools/cache \
             --bind /tmp/run/cache/wt /tmp/run/cache/wt \
             --ro-bind /dev/null /tmp/run/cache/wt/bench.jsonl \
             --tmpfs /run --ro-bind /usr/bin/repoprobe /run/repoprobe/bridge \
             --ro-bind /tmp/proxy/api.sock /run/repoprobe/api.sock --remount-ro / --unshare-net \
             --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try --die-with-parent \
             --new-session --chdir /tmp/run/cache/wt --"
        );
    }

    #[test]
    fn the_refusal_names_the_package_and_the_way_out() {
        let m = unavailable("no `bwrap` on PATH");
        assert!(m.contains("--no-sandbox"), "{m}");
        if cfg!(target_os = "linux") {
            assert!(
                m.contains("`bubblewrap`") && m.contains("no `bwrap` on PATH"),
                "{m}"
            );
        }
    }

    #[test]
    fn programs_are_found_as_execvp_finds_them() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("agent");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["/nonexistent".as_ref(), bin.as_path()]).unwrap();
        assert_eq!(
            find_on_path("agent".as_ref(), Some(&path)),
            Some(exe.clone())
        );
        assert_eq!(find_on_path("missing".as_ref(), Some(&path)), None);
        let dirs = program_dirs("agent".as_ref(), Some(&path));
        let root = tmp.path().canonicalize().unwrap();
        assert!(dirs.contains(&root.join("node_modules")), "{dirs:?}");
        assert!(dirs.contains(&root.join("node_modules/.bin")), "{dirs:?}");
        // A script's interpreter comes along; the rest of PATH does not.
        let interp = tmp.path().join("nvm/bin");
        let other = tmp.path().join("other/bin");
        std::fs::create_dir_all(&interp).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(interp.join("mynode"), "").unwrap();
        std::fs::set_permissions(
            interp.join("mynode"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(&exe, "#!/usr/bin/env -S mynode --flag\n").unwrap();
        let path =
            std::env::join_paths([bin.as_path(), interp.as_path(), other.as_path()]).unwrap();
        let dirs = program_dirs("agent".as_ref(), Some(&path));
        assert!(dirs.contains(&root.join("nvm/bin")), "{dirs:?}");
        assert!(!dirs.contains(&root.join("other/bin")), "{dirs:?}");
    }
}
