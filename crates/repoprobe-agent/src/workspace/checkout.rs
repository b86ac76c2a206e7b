//! A question's worktree: registered in the cache's clone (`git worktree add --no-checkout`),
//! its files checked out by git running in a `Shadow` of ours (never on the cache's git
//! directory, which the agent can write), and removed afterwards.

use super::inspect::inspect_cache;
use super::lock::RepoLock;
use super::shadow::Shadow;
use super::source::{absolute, cache_stem};
use super::{QUOTE_CHARS, RepoSource, WorkspaceError, Worktree};
use crate::git::{self, Git};
use repoprobe_core::Repo;
use std::path::{Path, PathBuf};

impl RepoSource {
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
        let origin = self.origin(repo)?;
        let worktree_dir = &absolute(worktree_dir);
        std::fs::create_dir_all(&self.cache_dir).map_err(|e| WorkspaceError::Io {
            context: format!("creating the repository cache {}", self.cache_dir.display()),
            source: e,
        })?;
        let git_dir = absolute(&self.clone_path(name)?);
        let lock_path = self.cache_dir.join(format!("{stem}.lock"));
        let _lock = RepoLock::acquire(&lock_path)?;
        let commit = self.cached_commit(name, &git_dir, &origin, wanted)?;
        let path = add_worktree(name, &git_dir, &commit, worktree_dir)?;
        let admin_dir = admin_dir_of(&git_dir, &path).map_err(|e| WorkspaceError::Git {
            repo: name.into(),
            commit: commit.clone(),
            action: "worktree add".into(),
            stderr: e.to_string(),
        })?;
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
}

/// Registers a worktree of the clone at `git_dir` at `commit` in `worktree_dir` (absolute),
/// replacing a stale one of the same clone; returns its path as git reports it.
fn add_worktree(
    name: &str,
    git_dir: &Path,
    commit: &str,
    worktree_dir: &Path,
) -> Result<PathBuf, WorkspaceError> {
    let git_err = |action: &str, e: git::GitError| WorkspaceError::Git {
        repo: name.into(),
        commit: commit.into(),
        action: action.into(),
        stderr: e.to_string(),
    };
    // Entries whose directories are gone (an earlier run killed before its cleanup).
    Git::at(git_dir)
        .args(["worktree", "prune"])
        .run()
        .map_err(|e| git_err("worktree prune", e))?;
    if worktree_dir.exists() {
        if !is_worktree_of(git_dir, worktree_dir) {
            return Err(WorkspaceError::PathTaken {
                repo: name.into(),
                commit: commit.into(),
                path: worktree_dir.to_path_buf(),
            });
        }
        Git::at(git_dir)
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
    Git::at(git_dir)
        .args(["worktree", "add", "--detach", "--no-checkout", "--quiet"])
        .arg(worktree_dir)
        .arg(commit)
        .run()
        .map_err(|e| git_err("worktree add", e))?;
    // The path as git will report it, so `remove` names the same directory.
    Ok(worktree_dir
        .canonicalize()
        .unwrap_or_else(|_| worktree_dir.to_path_buf()))
}

impl Worktree {
    /// Removes the worktree (`git worktree remove --force --force`, then `prune`); the directory
    /// is deleted even when git no longer knows it. A cache found tampered with is not given to
    /// git at all: the directory is deleted and the error says what was found.
    pub fn remove(self) -> Result<(), WorkspaceError> {
        let _lock = RepoLock::acquire(&self.lock_path)?;
        let found = inspect_cache(&self.git_dir);
        let removed = found.is_empty()
            && Git::at(&self.git_dir)
                .args(["worktree", "remove", "--force", "--force"])
                .arg(&self.path)
                .run()
                .is_ok();
        if !removed && self.path.exists() {
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

    pub(super) fn error(&self, action: &str, e: git::GitError) -> WorkspaceError {
        WorkspaceError::Git {
            repo: self.repo.clone(),
            commit: self.commit.clone(),
            action: action.into(),
            stderr: e.to_string(),
        }
    }
}

/// Why a new worktree's own git directory cannot be trusted: its `.git` file cannot be read,
/// does not name one, or names one outside the cache.
#[derive(Debug, thiserror::Error)]
enum AdminDirError {
    #[error("cannot read {}: {error}", .file.display())]
    Read {
        file: PathBuf,
        error: std::io::Error,
    },
    #[error("unexpected .git file: {}", git::quote(.0, QUOTE_CHARS))]
    Unexpected(String),
    #[error("the worktree's git directory is not in the cache: {}", .0.display())]
    Outside(PathBuf),
}

/// The worktree's own git directory, from the `.git` file `git worktree add` just wrote (before
/// any agent ran); it must lie in `<git_dir>/worktrees/`.
fn admin_dir_of(git_dir: &Path, worktree: &Path) -> Result<PathBuf, AdminDirError> {
    let file = worktree.join(".git");
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) => return Err(AdminDirError::Read { file, error }),
    };
    let dir = text
        .trim()
        .strip_prefix("gitdir:")
        .map(|p| PathBuf::from(p.trim()))
        .ok_or_else(|| AdminDirError::Unexpected(text.clone()))?;
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = canonical(&dir);
    if dir.parent() != Some(&canonical(&git_dir.join("worktrees"))) {
        return Err(AdminDirError::Outside(dir));
    }
    Ok(dir)
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

#[cfg(test)]
mod tests {
    use crate::testutil::git;
    use crate::workspace::tests::{origin, repo};
    use crate::workspace::{RepoSource, WorkspaceError};

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
}
