//! Paths inside a repository, written one way (docs/format.md#repository-paths): a checklist
//! item's evidence, the files an agent read and the files it searched are compared as strings,
//! so each is normalised here before it is stored or compared, whoever wrote it.

use std::fmt;

/// Why a path is not a repository path; the entry is left out, its record kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    Empty,
    /// Starts at the file system's root (`/etc/passwd`, `C:\…`): not inside the repository.
    Absolute,
    /// Has a `..` part: it could leave the repository.
    ParentPart,
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PathProblem::Empty => "is empty",
            PathProblem::Absolute => "is absolute (a repository path is relative to its root)",
            PathProblem::ParentPart => "has a `..` part (it could leave the repository)",
        })
    }
}

/// `path` as a repository path: `./` and `.` parts removed, `//` collapsed, a trailing `/`
/// removed. An absolute path or one with a `..` part is refused, never rewritten: which file it
/// meant is not ours to guess.
pub fn normalise(path: &str) -> Result<String, PathProblem> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err(PathProblem::Empty);
    }
    if trimmed.starts_with('/') || trimmed.starts_with('\\') || has_drive(trimmed) {
        return Err(PathProblem::Absolute);
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(PathProblem::ParentPart),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(PathProblem::Empty);
    }
    Ok(parts.join("/"))
}

/// `path` relative to `root` when it lies under it (an agent's absolute path into its
/// worktree), else `path` itself; then [`normalise`]d.
pub fn under_root(path: &str, root: Option<&str>) -> Result<String, PathProblem> {
    let path = path.trim();
    if let Some(root) = root
        .map(|r| r.trim_end_matches('/'))
        .filter(|r| !r.is_empty())
    {
        if path == root {
            return Err(PathProblem::Empty);
        }
        if let Some(rest) = path.strip_prefix(root).and_then(|r| r.strip_prefix('/')) {
            return normalise(rest);
        }
    }
    normalise(path)
}

/// `C:\…` or `C:/…`.
fn has_drive(p: &str) -> bool {
    let b = p.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_one_way() {
        for (given, want) in [
            ("src/lib.rs", "src/lib.rs"),
            ("./src/lib.rs", "src/lib.rs"),
            ("././src//a/./b.rs", "src/a/b.rs"),
            ("docs/", "docs"),
            (" README.md ", "README.md"),
        ] {
            assert_eq!(normalise(given).as_deref(), Ok(want), "{given}");
        }
    }

    #[test]
    fn paths_that_could_leave_the_repository_are_refused() {
        assert_eq!(normalise("/etc/passwd"), Err(PathProblem::Absolute));
        assert_eq!(normalise("C:\\x"), Err(PathProblem::Absolute));
        assert_eq!(normalise("src/../../x"), Err(PathProblem::ParentPart));
        assert_eq!(normalise(".."), Err(PathProblem::ParentPart));
        assert_eq!(normalise(""), Err(PathProblem::Empty));
        assert_eq!(normalise("./"), Err(PathProblem::Empty));
    }

    #[test]
    fn an_absolute_path_into_the_worktree_is_made_relative() {
        let root = Some("/work/wt/");
        assert_eq!(
            under_root("/work/wt/src/a.rs", root).as_deref(),
            Ok("src/a.rs")
        );
        assert_eq!(under_root("src/a.rs", root).as_deref(), Ok("src/a.rs"));
        assert_eq!(
            under_root("/work/wtx/a.rs", root),
            Err(PathProblem::Absolute)
        );
        assert_eq!(under_root("/work/wt", root), Err(PathProblem::Empty));
    }
}
