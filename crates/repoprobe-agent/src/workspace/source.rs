//! Where a repository comes from: a `--repo-map` local clone (offline, the only source for
//! that name) or the question's url; the cache's bare clone of it, made on first use, and the
//! pinned commit fetched when the clone lacks it.

use super::inspect::inspect_cache;
use super::{RepoSource, WorkspaceError};
use crate::git::Git;
use repoprobe_core::Repo;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Where a repository is cloned and fetched from, and how messages name it.
pub(super) struct Origin {
    source: OsString,
    /// `local clone PATH` or the url.
    pub desc: String,
}

/// Why a `--repo-map` value is refused: each message shows the form it needs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MapArgError {
    #[error("expected owner/name=PATH, got {0:?}")]
    NoEquals(String),
    #[error("{0:?} is not of the form owner/name")]
    BadName(String),
    #[error("no path for {0}")]
    NoPath(String),
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
    /// [`Worktree::from_head`](super::Worktree::from_head)); off by default, when such a question fails.
    pub fn allow_head(mut self, yes: bool) -> RepoSource {
        self.allow_head = yes;
        self
    }

    /// Parses a `--repo-map` value, `owner/name=PATH`.
    pub fn parse_map_arg(arg: &str) -> Result<(String, PathBuf), MapArgError> {
        let (name, path) = arg
            .split_once('=')
            .ok_or_else(|| MapArgError::NoEquals(arg.into()))?;
        let name = name.trim();
        if !valid_name(name) {
            return Err(MapArgError::BadName(name.into()));
        }
        if path.is_empty() {
            return Err(MapArgError::NoPath(name.into()));
        }
        Ok((name.to_string(), PathBuf::from(path)))
    }

    /// The cache's bare clone of `name` (whether or not it exists yet).
    pub fn clone_path(&self, name: &str) -> Result<PathBuf, WorkspaceError> {
        Ok(self.cache_dir.join(format!("{}.git", cache_stem(name)?)))
    }

    /// Where `repo` comes from: the mapped local clone, else the question's url (a local path
    /// made absolute first: git runs from `/`).
    pub(super) fn origin(&self, repo: &Repo) -> Result<Origin, WorkspaceError> {
        let name = repo.name.as_str();
        if let Some(p) = self.map.get(name) {
            let source = absolute(p).into_os_string();
            let desc = format!("local clone {}", Path::new(&source).display());
            return Ok(Origin { source, desc });
        }
        let url = repo.url.trim();
        if url.is_empty() {
            return Err(WorkspaceError::NoSource { repo: name.into() });
        }
        let local = Path::new(url);
        let source: OsString = if !url.contains("://") && local.exists() {
            absolute(local).into_os_string()
        } else {
            url.into()
        };
        let desc = source.to_string_lossy().into_owned();
        Ok(Origin { source, desc })
    }

    /// The full sha of `wanted` (HEAD when empty) in the cache's clone at `git_dir`, under the
    /// repository's lock: a clone found tampered with is refused, a missing one is made from
    /// `origin`, a missing commit is fetched.
    pub(super) fn cached_commit(
        &self,
        name: &str,
        git_dir: &Path,
        origin: &Origin,
        wanted: &str,
    ) -> Result<String, WorkspaceError> {
        if git_dir.exists() {
            let found = inspect_cache(git_dir);
            if !found.is_empty() {
                return Err(WorkspaceError::Tampered {
                    repo: name.into(),
                    path: git_dir.to_path_buf(),
                    found,
                });
            }
        }
        if !git_dir.join("HEAD").exists() {
            self.clone_into(name, &origin.source, &origin.desc, git_dir)?;
        }
        let label = if wanted.is_empty() { "HEAD" } else { wanted };
        match resolve(git_dir, label) {
            Some(sha) => Ok(sha),
            None if wanted.is_empty() => Err(WorkspaceError::UnknownCommit {
                repo: name.into(),
                commit: "HEAD".into(),
                source_desc: origin.desc.clone(),
                stderr: "the clone has no HEAD (empty repository?)".into(),
            }),
            None => {
                let stderr = fetch(git_dir, &origin.source, wanted);
                resolve(git_dir, wanted).ok_or_else(|| WorkspaceError::UnknownCommit {
                    repo: name.into(),
                    commit: wanted.into(),
                    source_desc: origin.desc.clone(),
                    stderr,
                })
            }
        }
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
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(WorkspaceError::Clone {
                repo: name.into(),
                source_desc: source_desc.into(),
                stderr: e.to_string(),
            });
        }
        std::fs::rename(&tmp, git_dir).map_err(|e| WorkspaceError::Io {
            context: format!("moving the clone of {name} to {}", git_dir.display()),
            source: e,
        })
    }
}

/// `p` made absolute against the current directory (unchanged when that fails).
pub(super) fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `owner/name` → `owner__name`, refusing anything that could leave the cache directory.
pub(super) fn cache_stem(name: &str) -> Result<String, WorkspaceError> {
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
        last = e.to_string();
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
        last = e.to_string();
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;
    use crate::workspace::tests::{origin, repo};

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
}
