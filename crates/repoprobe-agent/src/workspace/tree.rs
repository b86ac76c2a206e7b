//! A repository's tree at a question's pinned commit, read from the cache's clone without
//! checking anything out: what `repoprobe evidence` asks of a cited path (is it there at the
//! commit?). `git ls-tree` only reads objects, so no filter, hook or attribute of the clone is
//! involved; the clone is still checked for tampering first, as for every use.

use super::lock::RepoLock;
use super::source::{absolute, cache_stem};
use super::{RepoSource, WorkspaceError};
use crate::git::Git;
use repoprobe_core::Repo;
use std::collections::BTreeSet;

/// Every path of a repository at one commit: its files (symbolic links and submodules
/// included) and its directories.
#[derive(Debug, Clone)]
pub struct RepoTree {
    /// The full sha read.
    pub commit: String,
    /// True when the question had no pinned commit and the clone's HEAD was read instead (only
    /// with [`RepoSource::allow_head`]).
    pub from_head: bool,
    paths: BTreeSet<String>,
}

impl RepoTree {
    /// Whether `path` (a [normalised](repoprobe_core::model::repo_path::normalise) repository
    /// path) is a file or a directory at the commit.
    pub fn contains(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    /// How many paths the tree has.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

impl RepoSource {
    /// The tree of `repo` at its pinned commit (HEAD when it has none and
    /// [`RepoSource::allow_head`] allows it): cloned on first use, fetched when the commit is
    /// missing, under the repository's lock, as [`RepoSource::prepare`] does.
    pub fn tree(&self, repo: &Repo) -> Result<RepoTree, WorkspaceError> {
        let name = repo.name.as_str();
        let stem = cache_stem(name)?;
        let wanted = repo.commit.trim();
        if wanted.is_empty() && !self.allow_head {
            return Err(WorkspaceError::NoCommit { repo: name.into() });
        }
        let origin = self.origin(repo)?;
        std::fs::create_dir_all(&self.cache_dir).map_err(|e| WorkspaceError::Io {
            context: format!("creating the repository cache {}", self.cache_dir.display()),
            source: e,
        })?;
        let git_dir = absolute(&self.clone_path(name)?);
        let _lock = RepoLock::acquire(&self.cache_dir.join(format!("{stem}.lock")))?;
        let commit = self.cached_commit(name, &git_dir, &origin, wanted)?;
        // `-t` lists the directories too; `-z` ends every name with a NUL, unquoted.
        let listing = Git::at(&git_dir)
            .args(["ls-tree", "-r", "-t", "-z", "--name-only"])
            .arg(&commit)
            .run()
            .map_err(|e| WorkspaceError::Git {
                repo: name.into(),
                commit: commit.clone(),
                action: "ls-tree".into(),
                stderr: e.to_string(),
            })?;
        let paths = listing
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        Ok(RepoTree {
            commit,
            from_head: wanted.is_empty(),
            paths,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;
    use crate::workspace::tests::{origin, repo};

    #[test]
    fn the_tree_is_the_pinned_commits_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        std::fs::create_dir_all(origin.join("docs/deep")).unwrap();
        std::fs::write(origin.join("docs/deep/new file.md"), "x\n").unwrap();
        git(&origin, &["add", "."]);
        git(&origin, &["commit", "--quiet", "-m", "three"]);
        let source = RepoSource::new(tmp.path().join("cache"));
        let url = origin.to_str().unwrap();
        let t = source.tree(&repo("acme/widget", url, &first)).unwrap();
        assert_eq!(t.commit, first);
        assert!(t.contains("src/lib.txt") && t.contains("src") && t.contains(".gitignore"));
        assert!(!t.contains("docs/deep/new file.md") && !t.contains("docs"));
        assert_eq!(t.len(), 3);
        let t = source.tree(&repo("acme/widget", url, &second)).unwrap();
        assert!(!t.contains("docs"));
        let t = source
            .allow_head(true)
            .tree(&repo("acme/widget", url, ""))
            .unwrap();
        assert!(t.from_head);
        assert!(t.contains("docs/deep/new file.md") && t.contains("docs/deep"));
    }

    #[test]
    fn an_unpinned_question_or_a_missing_commit_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, _, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let url = origin.to_str().unwrap();
        let err = source.tree(&repo("acme/widget", url, "")).unwrap_err();
        assert!(matches!(err, WorkspaceError::NoCommit { .. }), "{err}");
        let missing = "0123456789abcdef0123456789abcdef01234567";
        let err = source.tree(&repo("acme/widget", url, missing)).unwrap_err();
        assert!(err.to_string().contains(missing), "{err}");
    }
}
