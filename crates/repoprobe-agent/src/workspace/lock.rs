//! One git user per cached repository at a time: concurrent questions (threads or processes)
//! never race on git's own locks.

use super::WorkspaceError;
use std::fs::File;
use std::path::Path;

/// An exclusive `flock` on the repository's lock file, released on drop (and by the kernel when
/// the process dies, so a killed run never leaves the cache locked).
pub(super) struct RepoLock {
    _file: File,
}

impl RepoLock {
    pub(super) fn acquire(path: &Path) -> Result<RepoLock, WorkspaceError> {
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

#[cfg(test)]
mod tests {
    use crate::testutil::git;
    use crate::workspace::tests::{origin, repo};
    use crate::workspace::{RepoSource, Worktree};

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
}
