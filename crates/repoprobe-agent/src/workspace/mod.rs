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
//!
//! Layout: `source` (where a repository comes from, the cache's clones, fetching a missing
//! commit), `checkout` (a question's worktree registered, checked out in a `Shadow`, removed),
//! `inspect` (what the agent changed, what was planted in the cache), `shadow` (the private git
//! directory both check out and compare through), `lock` (one git user per cached repository at
//! a time), `tree` (a repository's paths at the pinned commit, read without a checkout).

use std::collections::BTreeMap;
use std::path::PathBuf;

mod checkout;
mod inspect;
mod lock;
mod shadow;
mod source;
mod tree;

pub use inspect::inspect_cache;
pub use source::MapArgError;
pub use tree::RepoTree;

/// Longest untrusted value (a config value, a hook's name) quoted in a message.
const QUOTE_CHARS: usize = 120;

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

#[cfg(test)]
mod tests {
    use crate::testutil::git;
    use repoprobe_core::Repo;
    use std::path::{Path, PathBuf};

    /// A repository with two commits of `src/lib.txt` (and a .gitignore of `target/`); returns
    /// (dir, first sha, second sha).
    pub(super) fn origin(root: &Path) -> (PathBuf, String, String) {
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

    pub(super) fn repo(name: &str, url: &str, commit: &str) -> Repo {
        Repo {
            name: name.into(),
            url: url.into(),
            commit: commit.into(),
            language: String::new(),
            theme: String::new(),
        }
    }
}
