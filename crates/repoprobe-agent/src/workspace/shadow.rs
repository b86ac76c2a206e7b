//! The private git directory through which a worktree's files are checked out and compared.

use super::Worktree;
use crate::git::Git;
use std::path::Path;

/// A private, throw-away git directory of ours (in the temporary directory) that borrows the
/// cache's object store: `HEAD` is the pinned commit, `config` is ours, there are no hooks,
/// attributes or refs. Files of a worktree are checked out and compared only through one, so
/// nothing the agent wrote into a git directory is read.
pub(super) struct Shadow {
    pub dir: tempfile::TempDir,
}

impl Shadow {
    pub fn new(commit: &str) -> std::io::Result<Shadow> {
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
    pub fn git(&self, wt: &Worktree, index: &Path) -> Git {
        Git::at(self.dir.path())
            .arg("--work-tree")
            .arg(&wt.path)
            .env("GIT_INDEX_FILE", index)
            .env("GIT_OBJECT_DIRECTORY", wt.git_dir.join("objects"))
    }
}
