//! Each question's repository at its pinned commit: a cache of bare clones (`--repos DIR`, one
//! `DIR/<owner>__<name>.git` per repository, cloned on first use and fetched only when the pinned
//! commit is missing) and, for offline use, a map from repository name to a local clone
//! (`--repo-map owner/name=PATH`) that is then the only source: no network for those.
//!
//! [`RepoSource::prepare`] gives every question a fresh detached `git worktree` at the pinned
//! commit, resolved to a full sha; [`Worktree::changes`] says afterwards what the agent changed
//! (the evidence of edit bias the answer record carries) and [`Worktree::remove`] cleans up.
//!
//! Git operations on one cached repository are serialised by an exclusive `flock` on
//! `DIR/<owner>__<name>.lock`, so concurrent questions (threads or processes) never race on git's
//! own locks. Everything here is synchronous: callers on the async runtime use `spawn_blocking`.
//!
//! **The agent is not trusted with git.** Every git command is hardened ([`super::git`]: empty
//! environment, no system or global config, fsmonitor and hooks off, a timeout). On top of that:
//! - files are never checked out or compared by git running on the cache's git directory, which
//!   the agent can write (a worktree shares the cache's `config`, `hooks/`, `info/`): `git
//!   worktree add --no-checkout` only registers the worktree, and the checkout (`read-tree -u`)
//!   and `status` afterwards run in a `Shadow`, a private repository of ours whose config we
//!   wrote, borrowing only the cache's object store. So a planted filter driver, `include.path`
//!   or `config.worktree` is never even read. The status compares the files with a fresh index
//!   of the pinned commit, so index flags the agent set (`--assume-unchanged`, `skip-worktree`)
//!   hide nothing, and committed edits show as what they are: differences from the pin;
//! - the cache is checked ([`inspect_cache`]) before every use and after every run: a config key
//!   our own clone never writes, a `config.worktree`, a hook, `info/attributes`, alternates. A
//!   tampered cache is refused with what was found and how to mend it (delete it: it is cloned
//!   again on next use), not repaired: what else the agent changed (refs, objects) cannot be
//!   known, and a fresh clone is cheap next to a benchmark built on a poisoned one.
//!
//! This module must not decide what an answer is worth: it only reports.

use super::git::{self, Git};
use repoprobe_core::Repo;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Longest untrusted value (a config value, a hook's name) quoted in a message.
const QUOTE_CHARS: usize = 120;
/// Most findings of [`inspect_cache`] named one by one (the rest are counted).
const MAX_FINDINGS: usize = 20;

/// Config keys `git clone --bare` writes (and older git versions did), with any value: anything
/// else in a cache's `config` was put there by someone else.
const CLONE_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.logallrefupdates",
    "remote.origin.url",
    "remote.origin.fetch",
    "extensions.objectformat",
    "extensions.refstorage",
];

/// Where repositories come from and how a question without a pinned commit is treated.
#[derive(Debug, Clone)]
pub struct RepoSource {
    cache_dir: PathBuf,
    map: BTreeMap<String, PathBuf>,
    allow_head: bool,
}

/// A question's checkout: a detached worktree of the cached clone at `commit`.
#[derive(Debug)]
pub struct Worktree {
    /// The worktree's directory (where the agent runs).
    pub path: PathBuf,
    /// `owner/name`.
    pub repo: String,
    /// The full sha checked out.
    pub commit: String,
    /// True when the question had no pinned commit and the clone's HEAD was used instead
    /// (only with [`RepoSource::allow_head`]); the answer record should say so.
    pub from_head: bool,
    git_dir: PathBuf,
    /// The worktree's own git directory, `<git_dir>/worktrees/<id>` (its HEAD and index).
    admin_dir: PathBuf,
    lock_path: PathBuf,
}

/// What the agent left behind: the answer record's `agent.changes`, typed in the core so that
/// what `answer` writes is what the site reads.
pub use repoprobe_core::model::agent::{Change, ChangeKind, Changes};

/// Why a question's worktree could not be had (or inspected, or removed). Messages name the
/// repository and commit and end with what git said.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("repository name {0:?} is not of the form owner/name")]
    BadName(String),
    #[error("{repo}: no pinned commit (the question's repo.commit is empty)")]
    NoCommit { repo: String },
    #[error("{repo}: no url in the question and not in --repo-map")]
    NoSource { repo: String },
    #[error("{repo}: could not clone {source_desc}: {stderr}")]
    Clone {
        repo: String,
        source_desc: String,
        stderr: String,
    },
    #[error("{repo}@{commit}: commit not found in {source_desc} (after fetching){}", if .stderr.is_empty() { String::new() } else { format!(": {}", .stderr) })]
    UnknownCommit {
        repo: String,
        commit: String,
        source_desc: String,
        stderr: String,
    },
    #[error("{repo}@{commit}: git {action} failed: {stderr}")]
    Git {
        repo: String,
        commit: String,
        action: String,
        stderr: String,
    },
    #[error(
        "{repo}@{commit}: worktree directory {path} already exists and is not a worktree of the cache"
    )]
    PathTaken {
        repo: String,
        commit: String,
        path: PathBuf,
    },
    #[error(
        "{repo}: the cached clone {} has been tampered with (an agent may have planted git \
         configuration there; none of it was run) and will not be used: delete {} (it is cloned \
         again on next use) and look into which run planted it; found: {}",
        .path.display(), .path.display(), .found.join("; ")
    )]
    Tampered {
        repo: String,
        path: PathBuf,
        found: Vec<String>,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl RepoSource {
    /// Clones are kept in `cache_dir` (created when missing).
    pub fn new(cache_dir: impl Into<PathBuf>) -> RepoSource {
        RepoSource {
            cache_dir: cache_dir.into(),
            map: BTreeMap::new(),
            allow_head: false,
        }
    }

    /// Takes `name` from the local clone at `path` only (offline use): the cache's clone is made
    /// from it and fetched from it, never from the question's url.
    pub fn map_repo(mut self, name: impl Into<String>, path: impl Into<PathBuf>) -> RepoSource {
        self.map.insert(name.into(), path.into());
        self
    }

    /// Lets a question without a pinned commit use the clone's HEAD (recorded in
    /// [`Worktree::from_head`]); off by default, when such a question fails.
    pub fn allow_head(mut self, yes: bool) -> RepoSource {
        self.allow_head = yes;
        self
    }

    /// Parses a `--repo-map` value, `owner/name=PATH`.
    pub fn parse_map_arg(arg: &str) -> Result<(String, PathBuf), String> {
        let (name, path) = arg
            .split_once('=')
            .ok_or_else(|| format!("expected owner/name=PATH, got {arg:?}"))?;
        let name = name.trim();
        if !valid_name(name) {
            return Err(format!("{name:?} is not of the form owner/name"));
        }
        if path.is_empty() {
            return Err(format!("no path for {name}"));
        }
        Ok((name.to_string(), PathBuf::from(path)))
    }

    /// The cache's bare clone of `name` (whether or not it exists yet).
    pub fn clone_path(&self, name: &str) -> Result<PathBuf, WorkspaceError> {
        Ok(self.cache_dir.join(format!("{}.git", cache_stem(name)?)))
    }

    /// A fresh detached worktree of `repo` at its pinned commit, at `worktree_dir` (which must
    /// not exist, or be a stale worktree of the same cache, which is replaced). Clones the
    /// repository on first use and fetches when the commit is missing; refuses a cached clone
    /// that [`inspect_cache`] finds tampered with.
    pub fn prepare(&self, repo: &Repo, worktree_dir: &Path) -> Result<Worktree, WorkspaceError> {
        let name = repo.name.as_str();
        let stem = cache_stem(name)?;
        let wanted = repo.commit.trim();
        if wanted.is_empty() && !self.allow_head {
            return Err(WorkspaceError::NoCommit { repo: name.into() });
        }
        // Git runs from `/`, so local paths are made absolute first.
        let (source, offline) = match self.map.get(name) {
            Some(p) => (absolute(p).into_os_string(), true),
            None if !repo.url.trim().is_empty() => {
                let url = repo.url.trim();
                let local = Path::new(url);
                let source = if !url.contains("://") && local.exists() {
                    absolute(local).into_os_string()
                } else {
                    url.into()
                };
                (source, false)
            }
            None => return Err(WorkspaceError::NoSource { repo: name.into() }),
        };
        let worktree_dir = &absolute(worktree_dir);
        let source_desc = if offline {
            format!("local clone {}", Path::new(&source).display())
        } else {
            source.to_string_lossy().into_owned()
        };
        std::fs::create_dir_all(&self.cache_dir).map_err(|e| WorkspaceError::Io {
            context: format!("creating the repository cache {}", self.cache_dir.display()),
            source: e,
        })?;
        let git_dir = absolute(&self.clone_path(name)?);
        let lock_path = self.cache_dir.join(format!("{stem}.lock"));
        let _lock = RepoLock::acquire(&lock_path)?;

        if git_dir.exists() {
            let found = inspect_cache(&git_dir);
            if !found.is_empty() {
                return Err(WorkspaceError::Tampered {
                    repo: name.into(),
                    path: git_dir,
                    found,
                });
            }
        }
        if !git_dir.join("HEAD").exists() {
            self.clone_into(name, &source, &source_desc, &git_dir)?;
        }
        let label = if wanted.is_empty() { "HEAD" } else { wanted };
        let commit = match resolve(&git_dir, label) {
            Some(sha) => sha,
            None if wanted.is_empty() => {
                return Err(WorkspaceError::UnknownCommit {
                    repo: name.into(),
                    commit: "HEAD".into(),
                    source_desc,
                    stderr: "the clone has no HEAD (empty repository?)".into(),
                });
            }
            None => {
                let stderr = fetch(&git_dir, &source, wanted);
                resolve(&git_dir, wanted).ok_or_else(|| WorkspaceError::UnknownCommit {
                    repo: name.into(),
                    commit: wanted.into(),
                    source_desc,
                    stderr,
                })?
            }
        };

        let git_err = |action: &str, stderr: String| WorkspaceError::Git {
            repo: name.into(),
            commit: commit.clone(),
            action: action.into(),
            stderr,
        };
        // Entries whose directories are gone (an earlier run killed before its cleanup).
        Git::at(&git_dir)
            .args(["worktree", "prune"])
            .run()
            .map_err(|e| git_err("worktree prune", e))?;
        if worktree_dir.exists() {
            if !is_worktree_of(&git_dir, worktree_dir) {
                return Err(WorkspaceError::PathTaken {
                    repo: name.into(),
                    commit,
                    path: worktree_dir.to_path_buf(),
                });
            }
            Git::at(&git_dir)
                .args(["worktree", "remove", "--force", "--force"])
                .arg(worktree_dir)
                .run()
                .map_err(|e| git_err("worktree remove (stale worktree)", e))?;
        }
        if let Some(parent) = worktree_dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| WorkspaceError::Io {
                context: format!("creating {}", parent.display()),
                source: e,
            })?;
        }
        // Registered only; the files come from a checkout in a repository of ours.
        Git::at(&git_dir)
            .args(["worktree", "add", "--detach", "--no-checkout", "--quiet"])
            .arg(worktree_dir)
            .arg(&commit)
            .run()
            .map_err(|e| git_err("worktree add", e))?;
        // The path as git will report it, so `remove` names the same directory.
        let path = worktree_dir
            .canonicalize()
            .unwrap_or_else(|_| worktree_dir.to_path_buf());
        let admin_dir = admin_dir_of(&git_dir, &path).map_err(|e| git_err("worktree add", e))?;
        let wt = Worktree {
            path,
            repo: name.into(),
            commit,
            from_head: wanted.is_empty(),
            git_dir,
            admin_dir,
            lock_path,
        };
        let shadow = Shadow::new(&wt.commit).map_err(|e| WorkspaceError::Io {
            context: "creating a private git directory in the temporary directory".into(),
            source: e,
        })?;
        shadow
            .git(&wt, &wt.admin_dir.join("index"))
            .args(["read-tree", "-u", "--reset"])
            .arg(&wt.commit)
            .run()
            .map_err(|e| wt.error("checkout (read-tree -u)", e))?;
        Ok(wt)
    }

    /// Clones into a temporary name and renames, so a killed clone never leaves a half cache.
    fn clone_into(
        &self,
        name: &str,
        source: &OsStr,
        source_desc: &str,
        git_dir: &Path,
    ) -> Result<(), WorkspaceError> {
        let tmp = git_dir.with_extension(format!("git.tmp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        // No template: no sample hooks or `info/exclude`, nor whatever else a template directory
        // of this machine holds, so a fresh clone is exactly what `inspect_cache` accepts.
        let result = Git::new()
            .network()
            .args(["clone", "--bare", "--quiet", "--template=", "--"])
            .arg(source)
            .arg(&tmp)
            .run();
        if let Err(stderr) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(WorkspaceError::Clone {
                repo: name.into(),
                source_desc: source_desc.into(),
                stderr,
            });
        }
        std::fs::rename(&tmp, git_dir).map_err(|e| WorkspaceError::Io {
            context: format!("moving the clone of {name} to {}", git_dir.display()),
            source: e,
        })
    }
}

impl Worktree {
    /// What differs from the pinned commit: `git status --porcelain=v1 -z --untracked-files=all
    /// --ignored=matching` (ignored directories are listed once, not file by file) run in a
    /// `Shadow` against a fresh index of the pinned commit; whether HEAD moved (read from the
    /// worktree's own HEAD file, not by git); and what [`inspect_cache`] finds in the cache.
    pub fn changes(&self) -> Result<Changes, WorkspaceError> {
        let cache_tampered = inspect_cache(&self.git_dir);
        let shadow = Shadow::new(&self.commit).map_err(|e| WorkspaceError::Io {
            context: "creating a private git directory in the temporary directory".into(),
            source: e,
        })?;
        let index = shadow.dir.path().join("index");
        shadow
            .git(self, &index)
            .arg("read-tree")
            .arg(&self.commit)
            .run()
            .map_err(|e| self.error("read-tree", e))?;
        let out = shadow
            .git(self, &index)
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignored=matching",
                "--no-renames",
                // A submodule the agent populated shows when its HEAD is not the recorded
                // commit; git never runs inside it.
                "--ignore-submodules=dirty",
            ])
            .run()
            .map_err(|e| self.error("status", e))?;
        let files = parse_status(&out);
        let head = read_head(&self.admin_dir, &self.git_dir);
        Ok(Changes {
            files,
            head_moved_to: (head != self.commit).then_some(head),
            cache_tampered,
        })
    }

    /// Removes the worktree (`git worktree remove --force --force`, then `prune`); the directory
    /// is deleted even when git no longer knows it. A cache found tampered with is not given to
    /// git at all: the directory is deleted and the error says what was found.
    pub fn remove(self) -> Result<(), WorkspaceError> {
        let _lock = RepoLock::acquire(&self.lock_path)?;
        let found = inspect_cache(&self.git_dir);
        let removed = if found.is_empty() {
            Git::at(&self.git_dir)
                .args(["worktree", "remove", "--force", "--force"])
                .arg(&self.path)
                .run()
        } else {
            Err(String::new())
        };
        if removed.is_err() && self.path.exists() {
            std::fs::remove_dir_all(&self.path).map_err(|e| WorkspaceError::Io {
                context: format!("removing the worktree {}", self.path.display()),
                source: e,
            })?;
        }
        if !found.is_empty() {
            return Err(WorkspaceError::Tampered {
                repo: self.repo,
                path: self.git_dir,
                found,
            });
        }
        Git::at(&self.git_dir)
            .args(["worktree", "prune"])
            .run()
            .map_err(|e| self.error("worktree prune", e))?;
        Ok(())
    }

    fn error(&self, action: &str, stderr: String) -> WorkspaceError {
        WorkspaceError::Git {
            repo: self.repo.clone(),
            commit: self.commit.clone(),
            action: action.into(),
            stderr,
        }
    }
}

/// A private, throw-away git directory of ours (in the temporary directory) that borrows the
/// cache's object store: `HEAD` is the pinned commit, `config` is ours, there are no hooks,
/// attributes or refs. Files of a worktree are checked out and compared only through one, so
/// nothing the agent wrote into a git directory is read.
struct Shadow {
    dir: tempfile::TempDir,
}

impl Shadow {
    fn new(commit: &str) -> std::io::Result<Shadow> {
        let dir = tempfile::Builder::new()
            .prefix("repoprobe-git-")
            .tempdir()?;
        let p = dir.path();
        std::fs::create_dir(p.join("refs"))?;
        std::fs::create_dir(p.join("objects"))?;
        std::fs::write(p.join("HEAD"), format!("{commit}\n"))?;
        // A 64-digit sha is a SHA-256 repository's.
        let config = if commit.len() == 64 {
            "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n"
        } else {
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        };
        std::fs::write(p.join("config"), config)?;
        Ok(Shadow { dir })
    }

    /// Git in this directory over `wt`'s files, with `index` as the index.
    fn git(&self, wt: &Worktree, index: &Path) -> Git {
        Git::at(self.dir.path())
            .arg("--work-tree")
            .arg(&wt.path)
            .env("GIT_INDEX_FILE", index)
            .env("GIT_OBJECT_DIRECTORY", wt.git_dir.join("objects"))
    }
}

/// What in a cached clone's git directory a clone of ours never holds and an agent (whose
/// worktree shares that directory) could have planted: config keys outside `CLONE_KEYS`
/// (`core.fsmonitor`, `core.hooksPath`, `include.path`, `filter.*`, `extensions.worktreeConfig`
/// …), a `config.worktree` (the cache's or a worktree's), hooks (anything in `hooks/` but git's
/// `*.sample` files, which clones made before `--template=` hold), files in `info/` other than `exclude` (`attributes`, `grafts`,
/// `sparse-checkout`) and alternates. One line per finding, untrusted values quoted last; empty
/// when the cache is clean.
pub fn inspect_cache(git_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    match git::config_entries(&git_dir.join("config")) {
        Ok(entries) => {
            for (key, value) in entries {
                if !CLONE_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
                    found.push(format!(
                        "config sets {key} = {}",
                        git::quote(&value, QUOTE_CHARS)
                    ));
                }
            }
        }
        Err(e) => found.push(format!(
            "config cannot be read: {}",
            git::quote(&e, QUOTE_CHARS)
        )),
    }
    let listing = |rel: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(git_dir.join(rel))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let exists = |rel: &str| git_dir.join(rel).symlink_metadata().is_ok();
    if exists("config.worktree") {
        found.push("config.worktree exists".into());
    }
    for id in listing("worktrees") {
        let rel = format!("worktrees/{id}/config.worktree");
        if exists(&rel) {
            found.push(format!("{rel} exists"));
        }
    }
    for hook in listing("hooks") {
        if !hook.ends_with(".sample") {
            found.push(format!(
                "hook {}",
                git::quote(&format!("hooks/{hook}"), QUOTE_CHARS)
            ));
        }
    }
    for info in listing("info") {
        if info != "exclude" {
            found.push(format!(
                "{} exists",
                git::quote(&format!("info/{info}"), QUOTE_CHARS)
            ));
        }
    }
    for alt in ["objects/info/alternates", "objects/info/http-alternates"] {
        if exists(alt) {
            found.push(format!("{alt} exists"));
        }
    }
    if found.len() > MAX_FINDINGS {
        let more = found.len() - MAX_FINDINGS;
        found.truncate(MAX_FINDINGS);
        found.push(format!("and {more} more"));
    }
    found
}

/// The worktree's own git directory, from the `.git` file `git worktree add` just wrote (before
/// any agent ran); it must lie in `<git_dir>/worktrees/`.
fn admin_dir_of(git_dir: &Path, worktree: &Path) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(worktree.join(".git"))
        .map_err(|e| format!("cannot read {}: {e}", worktree.join(".git").display()))?;
    let dir = text
        .trim()
        .strip_prefix("gitdir:")
        .map(|p| PathBuf::from(p.trim()))
        .ok_or_else(|| format!("unexpected .git file: {}", git::quote(&text, QUOTE_CHARS)))?;
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = canonical(&dir);
    if dir.parent() != Some(&canonical(&git_dir.join("worktrees"))) {
        return Err(format!(
            "the worktree's git directory is not in the cache: {}",
            dir.display()
        ));
    }
    Ok(dir)
}

/// The commit the worktree's HEAD names, read from its files as git would (a detached sha, or a
/// branch in the loose refs or `packed-refs`) without running git; anything else is described.
fn read_head(admin_dir: &Path, git_dir: &Path) -> String {
    // A ref file is one line; the agent may have written anything there.
    let read = |p: PathBuf| -> std::io::Result<String> {
        use std::io::Read;
        let mut text = String::new();
        File::open(p)?.take(512).read_to_string(&mut text)?;
        Ok(text.trim().to_string())
    };
    let Ok(mut text) = read(admin_dir.join("HEAD")) else {
        return "(HEAD is missing or unreadable)".into();
    };
    for _ in 0..5 {
        let Some(name) = text.strip_prefix("ref:").map(str::trim) else {
            let sha = matches!(text.len(), 40 | 64) && text.chars().all(|c| c.is_ascii_hexdigit());
            return if sha {
                text
            } else {
                format!("(HEAD holds {})", git::quote(&text, QUOTE_CHARS))
            };
        };
        let valid = name.starts_with("refs/")
            && !name.split('/').any(|c| c.is_empty() || c.starts_with('.'))
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
        if !valid {
            return format!("(HEAD names the ref {})", git::quote(name, QUOTE_CHARS));
        }
        let per_worktree = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"]
            .iter()
            .any(|p| name.starts_with(p));
        let base = if per_worktree { admin_dir } else { git_dir };
        if let Ok(next) = read(base.join(name)) {
            text = next;
            continue;
        }
        let packed = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap_or_default();
        return packed
            .lines()
            .filter(|l| !l.starts_with(['#', '^']))
            .find_map(|l| {
                l.split_once(' ')
                    .filter(|(_, r)| *r == name)
                    .map(|(sha, _)| sha.to_string())
            })
            .unwrap_or_else(|| format!("(HEAD is the unborn branch {name})"));
    }
    "(HEAD: too many symbolic refs)".into()
}

/// An exclusive `flock` on the repository's lock file, released on drop (and by the kernel when
/// the process dies, so a killed run never leaves the cache locked).
struct RepoLock {
    _file: File,
}

impl RepoLock {
    fn acquire(path: &Path) -> Result<RepoLock, WorkspaceError> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| WorkspaceError::Io {
                context: format!("opening the lock {}", path.display()),
                source: e,
            })?;
        loop {
            // std's `flock(LOCK_EX)`; held as long as the guard keeps the file open.
            let err = match file.lock() {
                Ok(()) => return Ok(RepoLock { _file: file }),
                Err(e) => e,
            };
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(WorkspaceError::Io {
                    context: format!("locking {}", path.display()),
                    source: err,
                });
            }
        }
    }
}

/// `p` made absolute against the current directory (unchanged when that fails).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `owner/name` → `owner__name`, refusing anything that could leave the cache directory.
fn cache_stem(name: &str) -> Result<String, WorkspaceError> {
    if !valid_name(name) {
        return Err(WorkspaceError::BadName(name.to_string()));
    }
    Ok(name.replace('/', "__"))
}

fn valid_name(name: &str) -> bool {
    let mut parts = name.split('/');
    let ok_part = |p: Option<&str>| {
        p.is_some_and(|p| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
    };
    ok_part(parts.next()) && ok_part(parts.next()) && parts.next().is_none()
}

/// The full sha of `rev` as a commit, if the clone has it.
fn resolve(git_dir: &Path, rev: &str) -> Option<String> {
    if rev.starts_with('-') {
        return None;
    }
    Git::at(git_dir)
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{rev}^{{commit}}"))
        .run()
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Fetches branches and tags from `source`, then the commit itself (forges serve a full sha that
/// no branch reaches). Returns git's stderr of the last failure, for the error message.
fn fetch(git_dir: &Path, source: &OsStr, commit: &str) -> String {
    let mut last = String::new();
    let refs = Git::at(git_dir)
        .network()
        .args(["fetch", "--quiet", "--"])
        .arg(source)
        .args(["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"])
        .run();
    if let Err(e) = refs {
        last = e;
    }
    let full_sha = commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit());
    if full_sha
        && resolve(git_dir, commit).is_none()
        && let Err(e) = Git::at(git_dir)
            .network()
            .args(["fetch", "--quiet", "--"])
            .arg(source)
            .arg(commit)
            .run()
    {
        last = e;
    }
    last
}

/// Whether `dir` is a registered worktree of the clone at `git_dir`.
fn is_worktree_of(git_dir: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let Ok(list) = Git::at(git_dir)
        .args(["worktree", "list", "--porcelain", "-z"])
        .run()
    else {
        return false;
    };
    list.split('\0')
        .filter_map(|f| f.strip_prefix("worktree "))
        .any(|p| Path::new(p).canonicalize().is_ok_and(|p| p == dir))
}

/// Parses `git status --porcelain=v1 -z`: `XY path\0`, with `XY to\0from\0` for renames and
/// copies.
fn parse_status(out: &str) -> Vec<Change> {
    let mut files = Vec::new();
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let (xy, path) = entry.split_at(3);
        let xy = xy.as_bytes();
        let (x, y) = (xy[0], xy[1]);
        let kind = match (x, y) {
            (b'?', b'?') => ChangeKind::Untracked,
            (b'!', b'!') => ChangeKind::Ignored,
            (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => ChangeKind::Unmerged,
            (b'R', _) => ChangeKind::Renamed,
            (b'C', _) => ChangeKind::Copied,
            (b'D', _) | (_, b'D') => ChangeKind::Deleted,
            (b'A', _) => ChangeKind::Added,
            (b'T', _) | (_, b'T') => ChangeKind::TypeChanged,
            _ => ChangeKind::Modified,
        };
        let from = matches!(kind, ChangeKind::Renamed | ChangeKind::Copied)
            .then(|| fields.next().map(str::to_string))
            .flatten();
        files.push(Change {
            path: path.to_string(),
            kind: Some(kind),
            from,
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;

    /// Runs git in `dir` with a fixed identity, panicking on failure.
    /// A repository with two commits of `src/lib.txt` (and a .gitignore of `target/`); returns
    /// (dir, first sha, second sha).
    fn origin(root: &Path) -> (PathBuf, String, String) {
        let dir = root.join("origin");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        git(&dir, &["init", "--quiet", "-b", "main"]);
        std::fs::write(dir.join("src/lib.txt"), "first version\n").unwrap();
        std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "--quiet", "-m", "one"]);
        let first = git(&dir, &["rev-parse", "HEAD"]);
        std::fs::write(dir.join("src/lib.txt"), "second version\n").unwrap();
        git(&dir, &["commit", "--quiet", "-am", "two"]);
        let second = git(&dir, &["rev-parse", "HEAD"]);
        (dir, first, second)
    }

    fn repo(name: &str, url: &str, commit: &str) -> Repo {
        Repo {
            name: name.into(),
            url: url.into(),
            commit: commit.into(),
            language: String::new(),
            theme: String::new(),
        }
    }

    #[test]
    fn prepare_checks_out_the_pinned_commit_not_the_latest() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let url = origin.to_str().unwrap();
        // A short sha resolves to the full one.
        let wt = source
            .prepare(
                &repo("acme/widget", url, &first[..10]),
                &tmp.path().join("wt/q1"),
            )
            .unwrap();
        assert_eq!(wt.commit, first);
        assert!(!wt.from_head);
        assert_eq!(
            std::fs::read_to_string(wt.path.join("src/lib.txt")).unwrap(),
            "first version\n"
        );
        assert!(tmp.path().join("cache/acme__widget.git/HEAD").exists());
        let wt2 = source
            .prepare(
                &repo("acme/widget", url, &second),
                &tmp.path().join("wt/q2"),
            )
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(wt2.path.join("src/lib.txt")).unwrap(),
            "second version\n"
        );
        assert!(wt.changes().unwrap().is_empty());
        wt.remove().unwrap();
        wt2.remove().unwrap();
    }

    #[test]
    fn a_commit_made_after_the_clone_is_fetched() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let url = origin.to_str().unwrap();
        source
            .prepare(&repo("acme/widget", url, &first), &tmp.path().join("a"))
            .unwrap()
            .remove()
            .unwrap();
        std::fs::write(origin.join("src/lib.txt"), "third version\n").unwrap();
        git(&origin, &["commit", "--quiet", "-am", "three"]);
        let third = git(&origin, &["rev-parse", "HEAD"]);
        let wt = source
            .prepare(&repo("acme/widget", url, &third), &tmp.path().join("b"))
            .unwrap();
        assert_eq!(wt.commit, third);
        assert_eq!(
            std::fs::read_to_string(wt.path.join("src/lib.txt")).unwrap(),
            "third version\n"
        );
    }

    #[test]
    fn unknown_commit_fails_naming_repo_and_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, _, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let missing = "0123456789abcdef0123456789abcdef01234567";
        let err = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), missing),
                &tmp.path().join("wt"),
            )
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, WorkspaceError::UnknownCommit { .. }), "{msg}");
        assert!(
            msg.contains("acme/widget") && msg.contains(missing),
            "{msg}"
        );
        assert!(!tmp.path().join("wt").exists());
    }

    #[test]
    fn unknown_repository_fails_with_what_git_said() {
        let tmp = tempfile::tempdir().unwrap();
        let source = RepoSource::new(tmp.path().join("cache"));
        let nowhere = tmp.path().join("no-such-repo");
        let err = source
            .prepare(
                &repo("acme/ghost", nowhere.to_str().unwrap(), "abc123"),
                &tmp.path().join("wt"),
            )
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, WorkspaceError::Clone { .. }), "{msg}");
        assert!(msg.starts_with("acme/ghost: could not clone"), "{msg}");
        assert!(msg.contains("does not exist"), "{msg}");
        // No half clone is left to be mistaken for a good one.
        assert!(!tmp.path().join("cache/acme__ghost.git").exists());

        let err = source
            .prepare(&repo("acme/ghost", "", "abc123"), &tmp.path().join("wt"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "acme/ghost: no url in the question and not in --repo-map"
        );
        let err = source
            .prepare(&repo("../etc", "x", "abc"), &tmp.path().join("wt"))
            .unwrap_err();
        assert!(matches!(err, WorkspaceError::BadName(_)));
    }

    #[test]
    fn empty_commit_fails_unless_head_is_allowed() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, _, second) = origin(tmp.path());
        let url = origin.to_str().unwrap();
        let source = RepoSource::new(tmp.path().join("cache"));
        let err = source
            .prepare(&repo("acme/widget", url, " "), &tmp.path().join("wt"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "acme/widget: no pinned commit (the question's repo.commit is empty)"
        );
        let wt = source
            .allow_head(true)
            .prepare(&repo("acme/widget", url, ""), &tmp.path().join("wt"))
            .unwrap();
        assert!(wt.from_head);
        assert_eq!(wt.commit, second);
    }

    #[test]
    fn repo_map_clones_from_the_local_path_and_ignores_the_url() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let (name, path) =
            RepoSource::parse_map_arg(&format!("acme/widget={}", origin.display())).unwrap();
        let source = RepoSource::new(tmp.path().join("cache")).map_repo(name, path);
        let wt = source
            .prepare(
                &repo("acme/widget", "https://invalid.example/acme/widget", &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        assert_eq!(wt.commit, first);
        assert!(RepoSource::parse_map_arg("acme/widget").is_err());
        assert!(RepoSource::parse_map_arg("widget=/x").is_err());
    }

    #[test]
    fn edits_new_files_deletions_and_ignored_output_show_in_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        std::fs::create_dir_all(wt.path.join("notes/deep")).unwrap();
        std::fs::write(wt.path.join("notes/deep/new file.md"), "x").unwrap();
        std::fs::remove_file(wt.path.join(".gitignore")).unwrap();
        let changes = wt.changes().unwrap();
        let got: Vec<(&str, Option<ChangeKind>)> = changes
            .files
            .iter()
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        assert!(
            got.contains(&("src/lib.txt", Some(ChangeKind::Modified))),
            "{got:?}"
        );
        assert!(
            got.contains(&("notes/deep/new file.md", Some(ChangeKind::Untracked))),
            "{got:?}"
        );
        assert!(
            got.contains(&(".gitignore", Some(ChangeKind::Deleted))),
            "{got:?}"
        );
        assert!(changes.head_moved_to.is_none());
        assert!(!changes.is_empty());
        let json = serde_json::to_string(&changes.files[0]).unwrap();
        assert!(json.contains("\"kind\":"), "{json}");
    }

    #[test]
    fn ignored_output_and_a_moved_head_show_in_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::create_dir_all(wt.path.join("target/debug")).unwrap();
        std::fs::write(wt.path.join("target/debug/out.bin"), "x").unwrap();
        let changes = wt.changes().unwrap();
        assert_eq!(
            changes.files,
            vec![Change {
                path: "target/".into(),
                kind: Some(ChangeKind::Ignored),
                from: None
            }]
        );
        std::fs::remove_dir_all(wt.path.join("target")).unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "committed by the agent\n").unwrap();
        git(&wt.path, &["commit", "--quiet", "-am", "agent"]);
        let changes = wt.changes().unwrap();
        // A committed edit is still a difference from the pinned commit.
        assert_eq!(
            changes.files,
            vec![Change {
                path: "src/lib.txt".into(),
                kind: Some(ChangeKind::Modified),
                from: None
            }]
        );
        let moved = git(&wt.path, &["rev-parse", "HEAD"]);
        assert_eq!(changes.head_moved_to.as_deref(), Some(moved.as_str()));
        // On a branch (a loose ref, then a packed one), HEAD is read through the ref.
        git(&wt.path, &["checkout", "--quiet", "-b", "agent-branch"]);
        assert_eq!(
            wt.changes().unwrap().head_moved_to.as_deref(),
            Some(moved.as_str())
        );
        git(&wt.path, &["pack-refs", "--all"]);
        assert_eq!(
            wt.changes().unwrap().head_moved_to.as_deref(),
            Some(moved.as_str())
        );
        wt.remove().unwrap();
    }

    #[test]
    fn parallel_prepares_of_one_repository_both_work() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let url = origin.to_str().unwrap().to_string();
        let worktrees: Vec<Worktree> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let (source, url, tmp) = (&source, &url, tmp.path());
                    let commit = if i % 2 == 0 {
                        first.clone()
                    } else {
                        second.clone()
                    };
                    s.spawn(move || {
                        source
                            .prepare(
                                &repo("acme/widget", url, &commit),
                                &tmp.join(format!("wt{i}")),
                            )
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, wt) in worktrees.iter().enumerate() {
            let want = if i % 2 == 0 { "first" } else { "second" };
            let got = std::fs::read_to_string(wt.path.join("src/lib.txt")).unwrap();
            assert_eq!(got, format!("{want} version\n"));
        }
        std::thread::scope(|s| {
            for wt in worktrees {
                s.spawn(move || wt.remove().unwrap());
            }
        });
        let list = git(
            &tmp.path().join("cache/acme__widget.git"),
            &["worktree", "list"],
        );
        assert_eq!(list.lines().count(), 1, "{list}");
    }

    #[test]
    fn remove_deletes_the_directory_and_the_registration() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let dir = tmp.path().join("wt");
        let wt = source
            .prepare(&repo("acme/widget", origin.to_str().unwrap(), &first), &dir)
            .unwrap();
        std::fs::write(wt.path.join("scratch.txt"), "left by the agent").unwrap();
        wt.remove().unwrap();
        assert!(!dir.exists());
        let list = git(
            &tmp.path().join("cache/acme__widget.git"),
            &["worktree", "list"],
        );
        assert_eq!(list.lines().count(), 1, "{list}");
    }

    #[test]
    fn a_stale_worktree_is_replaced_but_a_foreign_directory_is_not_touched() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        let url = origin.to_str().unwrap();
        let source = RepoSource::new(tmp.path().join("cache"));
        let dir = tmp.path().join("wt");
        // A run killed before its cleanup left this one behind, edited.
        let stale = source
            .prepare(&repo("acme/widget", url, &first), &dir)
            .unwrap();
        std::fs::write(stale.path.join("src/lib.txt"), "edited\n").unwrap();
        drop(stale);
        let wt = source
            .prepare(&repo("acme/widget", url, &second), &dir)
            .unwrap();
        assert!(wt.changes().unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(wt.path.join("src/lib.txt")).unwrap(),
            "second version\n"
        );

        let foreign = tmp.path().join("mine");
        std::fs::create_dir_all(&foreign).unwrap();
        std::fs::write(foreign.join("keep.txt"), "precious").unwrap();
        let err = source
            .prepare(&repo("acme/widget", url, &first), &foreign)
            .unwrap_err();
        assert!(matches!(err, WorkspaceError::PathTaken { .. }), "{err}");
        assert!(foreign.join("keep.txt").exists());
    }

    #[test]
    fn relative_paths_mean_relative_to_the_current_directory() {
        // cargo runs tests in the crate's directory; the temporary directory lives there.
        let tmp = tempfile::Builder::new()
            .prefix(".workspace-test")
            .tempdir_in(".")
            .unwrap();
        let rel = Path::new(".").join(tmp.path().file_name().unwrap());
        let (_, first, _) = origin(&rel);
        let source = RepoSource::new(rel.join("cache")).map_repo("acme/widget", rel.join("origin"));
        let wt = source
            .prepare(&repo("acme/widget", "", &first), &rel.join("wt"))
            .unwrap();
        assert!(wt.path.is_absolute());
        assert!(tmp.path().join("wt/src/lib.txt").exists());
        // A later fetch from the mapped (relative) path works from inside the clone too.
        git(
            &rel.join("origin"),
            &["commit", "--quiet", "--allow-empty", "-m", "three"],
        );
        let third = git(&rel.join("origin"), &["rev-parse", "HEAD"]);
        let wt2 = source
            .prepare(&repo("acme/widget", "", &third), &rel.join("wt2"))
            .unwrap();
        assert_eq!(wt2.commit, third);
        wt.remove().unwrap();
        wt2.remove().unwrap();
    }

    /// An executable that appends its name and arguments to `mark`.
    fn evil(dir: &Path, mark: &Path) -> PathBuf {
        let p = dir.join("evil.sh");
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", mark.display()),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn git_config_planted_through_a_worktree_never_runs_and_the_cache_is_refused_next() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        let url = origin.to_str().unwrap();
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(&repo("acme/widget", url, &first), &tmp.path().join("wt"))
            .unwrap();
        let mark = tmp.path().join("ran");
        let evil = evil(tmp.path(), &mark);
        let evil = evil.to_str().unwrap();
        // What an agent in the worktree can do with git alone.
        for (k, v) in [
            ("core.fsmonitor", evil),
            ("filter.x.clean", evil),
            ("filter.x.smudge", evil),
            ("filter.x.required", "true"),
            ("diff.external", evil),
            ("extensions.worktreeConfig", "true"),
        ] {
            git(&wt.path, &["config", k, v]);
        }
        git(
            &wt.path,
            &[
                "config",
                "--worktree",
                "core.hooksPath",
                tmp.path().to_str().unwrap(),
            ],
        );
        std::fs::write(wt.path.join(".gitattributes"), "* filter=x diff=x\n").unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        let cache = tmp.path().join("cache/acme__widget.git");
        assert!(
            !cache.join("hooks").exists(),
            "a clone has no template hooks"
        );
        std::fs::create_dir_all(cache.join("hooks")).unwrap();
        std::fs::create_dir_all(cache.join("info")).unwrap();
        std::fs::copy(evil, cache.join("hooks/post-checkout")).unwrap();
        std::fs::write(cache.join("info/attributes"), "* filter=x\n").unwrap();

        let changes = wt.changes().unwrap();
        let got: Vec<(&str, Option<ChangeKind>)> = changes
            .files
            .iter()
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        assert!(
            got.contains(&("src/lib.txt", Some(ChangeKind::Modified))),
            "{got:?}"
        );
        assert!(
            got.contains(&(".gitattributes", Some(ChangeKind::Untracked))),
            "{got:?}"
        );
        assert!(!changes.is_empty());
        let found = changes.cache_tampered.join("\n");
        for what in [
            "core.fsmonitor",
            "filter.x.clean",
            "extensions.worktreeconfig",
            "config.worktree exists",
            "hooks/post-checkout",
            "info/attributes",
        ] {
            assert!(found.contains(what), "{what} not in {found}");
        }
        let wt_path = wt.path.clone();
        let err = wt.remove().unwrap_err();
        assert!(matches!(err, WorkspaceError::Tampered { .. }), "{err}");
        assert!(!wt_path.exists());
        let err = source
            .prepare(&repo("acme/widget", url, &second), &tmp.path().join("wt2"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tampered with") && err.contains(&format!("delete {}", cache.display())),
            "{err}"
        );
        assert!(
            err.contains("core.fsmonitor") && err.contains(evil),
            "{err}"
        );
        assert!(!tmp.path().join("wt2").exists());
        assert!(
            !mark.exists(),
            "{}",
            std::fs::read_to_string(&mark).unwrap()
        );

        // The plant is real: git as a user runs it has the filter and hooks run.
        let plain = tmp.path().join("plain");
        git(
            &cache,
            &[
                "worktree",
                "add",
                "--detach",
                "-q",
                plain.to_str().unwrap(),
                &first,
            ],
        );
        assert!(
            mark.exists(),
            "the plant does not work: the test proves nothing"
        );

        // Deleting the cache, as the message says, mends it.
        std::fs::remove_dir_all(&cache).unwrap();
        let wt = source
            .prepare(&repo("acme/widget", url, &second), &tmp.path().join("wt2"))
            .unwrap();
        assert!(wt.changes().unwrap().is_empty());
        wt.remove().unwrap();
    }

    #[test]
    fn a_cache_cloned_by_plain_git_with_its_sample_hooks_is_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        // As repoprobe cloned before `--template=`: git's template, sample hooks and all.
        git(
            &cache,
            &[
                "clone",
                "--bare",
                "-q",
                origin.to_str().unwrap(),
                "acme__widget.git",
            ],
        );
        assert!(cache.join("acme__widget.git/hooks").exists());
        assert_eq!(
            inspect_cache(&cache.join("acme__widget.git")),
            Vec::<String>::new()
        );
        let wt = RepoSource::new(&cache)
            .prepare(
                &repo("acme/widget", "https://invalid.example/x", &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        assert!(wt.changes().unwrap().is_empty());
    }

    #[test]
    fn a_hostile_head_is_described_not_followed_and_a_flood_of_findings_is_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let (admin, common) = (tmp.path().join("admin"), tmp.path().join("common"));
        std::fs::create_dir_all(common.join("refs/heads")).unwrap();
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(
            tmp.path().join("secret"),
            "0123456789012345678901234567890123456789",
        )
        .unwrap();
        let head = |text: &str| {
            std::fs::write(admin.join("HEAD"), text).unwrap();
            read_head(&admin, &common)
        };
        assert_eq!(
            head("ref: refs/heads/../../secret\n"),
            "(HEAD names the ref \"refs/heads/../../secret\")"
        );
        assert!(head(&"x".repeat(5000)).starts_with("(HEAD holds \"xxx"));
        assert!(head(&"x".repeat(5000)).len() < 200);
        std::fs::write(common.join("refs/heads/b"), "ref: refs/heads/b\n").unwrap();
        assert_eq!(head("ref: refs/heads/b"), "(HEAD: too many symbolic refs)");
        assert_eq!(
            head("ref: refs/heads/none"),
            "(HEAD is the unborn branch refs/heads/none)"
        );

        std::fs::create_dir_all(common.join("hooks")).unwrap();
        std::fs::write(common.join("config"), "[core]\n\tbare = true\n").unwrap();
        assert!(inspect_cache(&common).is_empty());
        for i in 0..30 {
            std::fs::write(common.join(format!("hooks/h{i:02}")), "").unwrap();
        }
        let found = inspect_cache(&common);
        assert_eq!(found.len(), MAX_FINDINGS + 1);
        assert_eq!(found.last().unwrap(), "and 10 more");
    }

    #[test]
    fn index_flags_set_by_the_agent_hide_no_edit() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        git(
            &wt.path,
            &["update-index", "--assume-unchanged", "src/lib.txt"],
        );
        git(&wt.path, &["update-index", "--skip-worktree", ".gitignore"]);
        std::fs::remove_file(wt.path.join(".gitignore")).unwrap();
        assert_eq!(git(&wt.path, &["status", "--porcelain"]), "");
        let got: Vec<(String, Option<ChangeKind>)> = wt
            .changes()
            .unwrap()
            .files
            .into_iter()
            .map(|c| (c.path, c.kind))
            .collect();
        assert_eq!(
            got,
            [
                (".gitignore".to_string(), Some(ChangeKind::Deleted)),
                ("src/lib.txt".to_string(), Some(ChangeKind::Modified))
            ]
        );
        wt.remove().unwrap();
    }

    #[test]
    fn status_parser_reads_renames_with_their_origin() {
        let out = "R  new.rs\0old.rs\0 M a b.txt\0?? x\0!! target/\0";
        let files = parse_status(out);
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].kind, Some(ChangeKind::Renamed));
        assert_eq!(files[0].from.as_deref(), Some("old.rs"));
        assert_eq!(files[1].path, "a b.txt");
        assert_eq!(files[3].kind, Some(ChangeKind::Ignored));
    }
}
