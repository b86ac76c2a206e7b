//! The boundary of the built-in agent's tools: the worktree they may see and the one check every
//! path a model gives goes through (relative, not above the root, not `.git`, no symbolic link
//! leading out), and the walker that lists and searches inside it.

use ignore::WalkBuilder;
use std::path::{Component, Path, PathBuf};

/// Longest untrusted value quoted in a message.
const QUOTE_CHARS: usize = 200;

/// Why a path given by the model is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error(
        "absolute paths are refused; give a path relative to the repository root, such as \"src/main.rs\" (\".\" is the root): {0}"
    )]
    Absolute(String),
    #[error("the path leaves the repository (`..` may not climb above its root): {0}")]
    Escapes(String),
    #[error("`.git` is not readable; look at the working files instead: {0}")]
    GitDir(String),
    #[error(
        "the path is, or lies under, a symbolic link pointing outside the repository, so it is refused: {0}"
    )]
    OutsideLink(String),
    #[error("no such file or directory (use list_dir or search to find the right path): {0}")]
    NotFound(String),
    #[error("cannot open ({1}): {0}")]
    Io(String, String),
}

/// A path inside the sandbox: the real (canonical) location and the path as shown to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Canonical absolute path, inside the root.
    pub path: PathBuf,
    /// Relative to the root, `/`-separated, `..` and `.` removed; `.` for the root itself.
    pub rel: String,
}

/// The worktree the tools may see.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub(super) root: PathBuf,
}

impl Sandbox {
    /// A sandbox over `root`, which must be an existing directory; it is canonicalised so that
    /// symbolic links are judged against the real location.
    pub fn new(root: &Path) -> std::io::Result<Sandbox> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("not a directory: {}", root.display()),
            ));
        }
        Ok(Sandbox { root })
    }

    /// The canonical root.
    #[cfg(test)]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path given by the model, relative to the root. Refuses absolute paths, `..`
    /// above the root, anything under `.git`, paths that do not exist, and paths whose real
    /// location (after every symbolic link, in the file or any parent) is outside the root.
    pub fn resolve(&self, rel: &str) -> Result<Resolved, PathError> {
        let shown = || quote(rel);
        let trimmed = rel.trim();
        let p = Path::new(trimmed);
        if p.is_absolute() || trimmed.starts_with(['/', '\\']) || has_drive(trimmed) {
            return Err(PathError::Absolute(shown()));
        }
        let mut parts: Vec<&str> = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(s) => match s.to_str() {
                    Some(s) => parts.push(s),
                    None => return Err(PathError::NotFound(shown())),
                },
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(PathError::Escapes(shown()));
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(PathError::Absolute(shown()));
                }
            }
        }
        if parts.contains(&".git") {
            return Err(PathError::GitDir(shown()));
        }
        let joined = parts.iter().fold(self.root.clone(), |acc, s| acc.join(s));
        let real = match joined.canonicalize() {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling link pointing out is reported as what it is.
                return Err(if self.link_leaves(&parts) {
                    PathError::OutsideLink(shown())
                } else {
                    PathError::NotFound(shown())
                });
            }
            Err(e) => return Err(PathError::Io(shown(), e.to_string())),
        };
        let Ok(inside) = real.strip_prefix(&self.root) else {
            return Err(PathError::OutsideLink(shown()));
        };
        if inside.components().any(|c| c.as_os_str() == ".git") {
            return Err(PathError::GitDir(shown()));
        }
        let rel = if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        };
        Ok(Resolved { path: real, rel })
    }

    /// Whether some prefix of `parts` is a symbolic link whose target is absolute or climbs out.
    fn link_leaves(&self, parts: &[&str]) -> bool {
        let mut at = self.root.clone();
        for part in parts {
            at.push(part);
            if let Ok(target) = std::fs::read_link(&at) {
                let resolved = at.parent().unwrap_or(&self.root).join(target);
                let real = resolved.canonicalize().unwrap_or(resolved);
                if !lexically_inside(&real, &self.root) {
                    return true;
                }
            }
        }
        false
    }

    /// `path` (under the root) as shown to the model.
    pub(super) fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(p) if p.as_os_str().is_empty() => ".".to_string(),
            Ok(p) => p
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }

    /// A walker from the root (so every `.gitignore` between the root and `start` applies) that
    /// only descends towards and under `start`; entries are yielded in file-name order.
    pub(super) fn walker(&self, start: &Path, max_depth: Option<usize>) -> WalkBuilder {
        let mut w = WalkBuilder::new(&self.root);
        let start_owned = start.to_path_buf();
        let start_depth = start
            .strip_prefix(&self.root)
            .map(|p| p.components().count())
            .unwrap_or(0);
        w.hidden(false)
            .parents(false)
            .ignore(true)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(false)
            .require_git(false)
            .follow_links(false)
            .max_depth(max_depth.map(|d| d + start_depth))
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |e| {
                e.file_name() != ".git"
                    && (e.path().starts_with(&start_owned) || start_owned.starts_with(e.path()))
            });
        w
    }
}

fn has_drive(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

fn lexically_inside(path: &Path, root: &Path) -> bool {
    let mut depth: i64 = 0;
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    for c in rest.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    true
}

/// An untrusted value for the end of a message: JSON-quoted and cut.
pub(super) fn quote(value: &str) -> String {
    repoprobe_core::text::quote_json(value, QUOTE_CHARS)
}
