//! The only place the CLI reads input files. A directory stands for the `.json` and `.jsonl`
//! files directly in it, in name order. An unreadable file is an issue, like any other.
//!
//! Also the one place a command reads, writes or removes a file of its own (state, journals read
//! back, directories made): files are written atomically (`write_atomically`), never in place.
//! `crates/repoprobe-tidy` checks that no other module names `std::fs` (a ratchet lists the
//! modules still moving here).
//!
//! Files are read as streams, a chunk at a time, into the core's [`StreamLoader`]: a results
//! file is never held whole, and its records are parsed on every core while it is read.

use repoprobe_core::issue::{IssueKind, Place};
use repoprobe_core::{Issue, LoadOptions, Loaded, Severity, StreamLoader};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes read at a time.
const CHUNK: usize = 1 << 20;

/// Threads that parse records: one per core, or `REPOPROBE_THREADS` (1 parses on the reading
/// thread; for measurements).
pub const THREADS_VAR: &str = "REPOPROBE_THREADS";

fn threads() -> usize {
    std::env::var(THREADS_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Reads and loads every path.
pub fn load_paths(paths: &[PathBuf], options: LoadOptions) -> Loaded {
    let mut loader = StreamLoader::new(LoadOptions {
        threads: threads(),
        ..options
    });
    let mut read_issues = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    for path in paths {
        for file in expand(path, &mut read_issues) {
            let name = file.display().to_string();
            let cannot = |e: std::io::Error, at: u64| {
                let message = if at == 0 {
                    format!("cannot read the file: {e}")
                } else {
                    format!("cannot read the file beyond byte {at}: {e}")
                };
                let kind = IssueKind::UnreadableFile;
                Issue::new(name.clone(), Place::File, kind, message, Severity::File)
            };
            let mut f = match std::fs::File::open(&file) {
                Ok(f) => f,
                Err(e) => {
                    read_issues.push(cannot(e, 0));
                    continue;
                }
            };
            loader.begin_file(&name);
            let mut at = 0u64;
            loop {
                match f.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        loader.feed(&buf[..n]);
                        at += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        read_issues.push(cannot(e, at));
                        break;
                    }
                }
            }
            loader.end_file();
        }
    }
    let mut loaded = loader.finish();
    read_issues.append(&mut loaded.issues);
    loaded.issues = read_issues;
    loaded
}

/// What a directory given as input stands for: its `.json` and `.jsonl` files, in name order
/// (also what a run's manifest hashes of it).
pub fn dir_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("json" | "jsonl")
                )
                && !is_trajectories(p)
        })
        .collect();
    out.sort();
    Ok(out)
}

/// A trajectories file or its index (`bundle` writes `*.trajectories.jsonl` and
/// `*.trajectories.index.json`): runs' steps for the site, no records to score, so a directory's
/// listing leaves them out.
fn is_trajectories(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.ends_with("trajectories.jsonl") || n.ends_with("trajectories.index.json")
    })
}

fn expand(path: &Path, issues: &mut Vec<Issue>) -> Vec<PathBuf> {
    if !path.is_dir() {
        if is_trajectories(path) {
            // Given by name (a bundled set's list, a shell glob): still no records. The site
            // reads it beside the same files; here it would be one "unknown record" per run.
            eprintln!(
                "note: {} is a trajectories file or index (runs' steps, no records): not read",
                repoprobe_core::text::terminal_safe(&path.display().to_string())
            );
            return Vec::new();
        }
        return vec![path.to_path_buf()];
    }
    let out = match dir_files(path) {
        Ok(out) => out,
        Err(e) => {
            issues.push(Issue::new(
                path.display().to_string(),
                Place::Directory,
                IssueKind::UnreadableFile,
                format!("cannot list the directory: {e}"),
                Severity::File,
            ));
            return Vec::new();
        }
    };
    if out.is_empty() {
        issues.push(Issue::new(
            path.display().to_string(),
            Place::Directory,
            IssueKind::MissingFile,
            "the directory holds no .json or .jsonl files",
            Severity::File,
        ));
    }
    out
}

/// Prints issues to stderr with their count: never hidden, never mixed into stdout.
pub fn print_issues(loaded: &Loaded) {
    use repoprobe_core::text::terminal_safe_lines as safe;
    for n in &loaded.notes {
        eprintln!("note: {}", safe(n));
    }
    if loaded.issues.is_empty() {
        return;
    }
    let warning = |i: &&repoprobe_core::Issue| i.severity == repoprobe_core::Severity::Warning;
    let warnings = loaded.issues.iter().filter(warning).count();
    eprintln!(
        "{} issue(s) in the input; {}",
        loaded.issues.len(),
        match warnings {
            0 => "the records concerned are left out:",
            w if w == loaded.issues.len() => {
                "each a warning: part of a record is ignored, the record is counted:"
            }
            _ => "the records concerned are left out (a warning: part of its record is ignored):",
        }
    );
    for i in &loaded.issues {
        eprintln!(
            "  {}: {}: {}{}",
            safe(&i.file),
            safe(&i.location.to_string()),
            if warning(&i) { "warning: " } else { "" },
            safe(&i.message)
        );
    }
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half
/// a file, and a crash right after leaves the old file or the new one, never an empty one. The
/// temporary file has an unpredictable name (created exclusively: nobody can have put a link
/// there first) in `path`'s directory; it is flushed to disk before the rename, and the
/// directory after it.
pub fn write_atomically(path: &Path, text: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |w| w.write_all(text))
}

/// [`write_atomically`], the content written by `write` as it comes (a file too large to hold).
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = dir_of(path);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        // As `std::fs::write` would create it (the umask applies), not tempfile's 0600.
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}

/// Makes `dir` and its missing parents (an output's directory).
pub fn create_dir_all(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// A file's bytes, whole: a small file of our own (a record, a batch's state), never an input
/// to score (`load_paths` streams those).
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// A file's bytes, or `None` when there is no file (a journal or state of an earlier run that
/// may not exist yet).
pub fn read_if_present(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A file's text (not UTF-8 is an error), or `None` when there is no file.
pub fn read_text_if_present(path: &Path) -> std::io::Result<Option<String>> {
    read_if_present(path)?
        .map(|b| String::from_utf8(b).map_err(std::io::Error::other))
        .transpose()
}

/// A file's length in bytes.
pub fn file_len(path: &Path) -> std::io::Result<u64> {
    std::fs::metadata(path).map(|m| m.len())
}

/// Removes a file of our own (a state that is done with, an empty output).
pub fn remove_file(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)
}

/// Reads a file of JSON records that the core does not know (the source records of
/// `make-checklist`): a JSON array, or JSONL (one object a line; a UTF-8 BOM is fine). Returns
/// each record with its location (`line N` or `[i]`), or the location and reason of a line that
/// is not JSON.
pub fn read_json_records(
    path: &Path,
) -> std::io::Result<Vec<(String, Result<serde_json::Value, NotJson>)>> {
    let bytes = std::fs::read(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_start_matches('\u{feff}');
    if text.trim_start().starts_with('[') {
        return Ok(match serde_json::from_str::<Vec<serde_json::Value>>(text) {
            Ok(v) => v
                .into_iter()
                .enumerate()
                .map(|(i, r)| (format!("[{i}]"), Ok(r)))
                .collect(),
            Err(e) => vec![("file".into(), Err(NotJson::Array(e)))],
        });
    }
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            let parsed = serde_json::from_str(l).map_err(NotJson::Line);
            (format!("line {}", n + 1), parsed)
        })
        .collect())
}

/// Why a record of [`read_json_records`] could not be read (the record is skipped, counted).
#[derive(Debug, thiserror::Error)]
pub enum NotJson {
    /// The file starts as a JSON array but is not one.
    #[error("not a JSON array: {0}")]
    Array(serde_json::Error),
    /// A line of JSONL.
    #[error("not JSON: {0}")]
    Line(serde_json::Error),
}

/// The directory a file is in: its parent, `.` for a bare name (`Path::parent` gives `""`).
pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The files a command was given, as an error names them (`a.jsonl, b.jsonl`).
pub fn listed(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_file_name_is_in_the_current_directory() {
        assert_eq!(dir_of(Path::new("out.json")), Path::new("."));
        assert_eq!(dir_of(Path::new("runs/a/out.json")), Path::new("runs/a"));
        assert_eq!(dir_of(Path::new("/out.json")), Path::new("/"));
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        std::fs::write(&p, "old").unwrap();
        write_atomically(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.json"]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_ne!(
            mode & 0o044,
            0,
            "readable by others as a plain write makes it: {mode:o}"
        );
        // A bare file name means the current directory's file; a missing directory is an error.
        assert!(write_atomically(&dir.path().join("no/such/dir.json"), b"x").is_err());
    }
}
