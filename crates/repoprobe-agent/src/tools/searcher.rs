//! The search over files that `search` and `find_symbol` share: one regular expression over a
//! named file or a `.gitignore`-aware walk, bounded in what it reads ([`MAX_SEARCH_FILE_BYTES`]
//! per file), compiles ([`REGEX_SIZE_LIMIT`], [`REGEX_DFA_LIMIT`]) and buffers
//! ([`SEARCH_HEAP_LIMIT`]), and stopped between two files or two buffers when asked. It does not
//! decide what a tool prints beyond the `path:line: text` lines.

use super::{MAX_OUTPUT_BYTES, Resolved, STOPPED, Sandbox, ToolError, cut_line};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use ignore::overrides::OverrideBuilder;
use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Longest matched line shown by `search` and `find_symbol`.
const MAX_MATCH_CHARS: usize = 300;
/// Files larger than this are not searched (generated data, vendored blobs).
pub(super) const MAX_SEARCH_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Largest compiled regular expression (the model's pattern, or `find_symbol`'s).
pub const REGEX_SIZE_LIMIT: usize = 2 * 1024 * 1024;
/// Largest lazy DFA cache of one regular expression.
pub const REGEX_DFA_LIMIT: usize = 8 * 1024 * 1024;
/// Largest buffer the searcher grows to for one line (a file is at most
/// `MAX_SEARCH_FILE_BYTES`, so any of its lines fits).
pub const SEARCH_HEAP_LIMIT: usize = MAX_SEARCH_FILE_BYTES as usize + 64 * 1024;

/// One matching line.
pub(super) struct Hit {
    path: String,
    line: u64,
    text: String,
}

/// What a search over files found.
pub(super) struct Found {
    pub(super) hits: Vec<Hit>,
    /// More matches than `limit` exist.
    pub(super) cut: bool,
    pub(super) files: usize,
}

/// A file being searched: refuses to read on once `stop` is raised, and ends at `left` bytes
/// (the size cap holds even for a file that grows while it is read).
struct Guarded<'a> {
    file: std::fs::File,
    stop: &'a AtomicBool,
    left: u64,
}

impl Read for Guarded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::other(STOPPED));
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..max])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Searches `start` (a file, searched even when ignored, or a directory, walked honouring
/// `.gitignore`) with `matcher`; keeps the hits `keep` accepts, up to `limit`. Files larger than
/// [`MAX_SEARCH_FILE_BYTES`] are skipped in a walk and refused when named.
pub(super) fn search_files(
    sandbox: &Sandbox,
    start: &Resolved,
    glob: Option<&str>,
    matcher: &RegexMatcher,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
    stop: &AtomicBool,
) -> Result<Found, ToolError> {
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .heap_limit(Some(SEARCH_HEAP_LIMIT))
        .build();
    let mut found = Found {
        hits: Vec::new(),
        cut: false,
        files: 0,
    };
    let files = files_to_search(sandbox, start, glob, stop)?;
    for path in files {
        if found.cut {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Err(ToolError::Stopped);
        }
        found.files += 1;
        let shown = sandbox.show(&path);
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let reader = Guarded {
            file,
            stop,
            left: MAX_SEARCH_FILE_BYTES,
        };
        let _ = searcher.search_reader(
            matcher,
            reader,
            Lossy(|line, text| {
                if !keep(text) {
                    return Ok(true);
                }
                if found.hits.len() >= limit {
                    found.cut = true;
                    return Ok(false);
                }
                found.hits.push(Hit {
                    path: shown.clone(),
                    line,
                    text: cut_line(text.trim_end_matches(['\n', '\r']), MAX_MATCH_CHARS),
                });
                Ok(true)
            }),
        );
    }
    if stop.load(Ordering::Relaxed) {
        return Err(ToolError::Stopped);
    }
    Ok(found)
}

/// The files a search reads: `start` itself when it is a file (refused when larger than
/// [`MAX_SEARCH_FILE_BYTES`]), else the walk of its directory (`.gitignore` honoured, `glob`
/// applied, links and larger files skipped).
fn files_to_search(
    sandbox: &Sandbox,
    start: &Resolved,
    glob: Option<&str>,
    stop: &AtomicBool,
) -> Result<Vec<PathBuf>, ToolError> {
    if start.path.is_file() {
        let size = std::fs::metadata(&start.path).map_or(0, |m| m.len());
        if size > MAX_SEARCH_FILE_BYTES {
            return Err(ToolError::TooLargeToSearch {
                size,
                rel: start.rel.clone(),
            });
        }
        return Ok(vec![start.path.clone()]);
    }
    let mut w = sandbox.walker(&start.path, None);
    w.max_filesize(Some(MAX_SEARCH_FILE_BYTES));
    if let Some(glob) = glob.map(str::trim).filter(|g| !g.is_empty()) {
        let mut ob = OverrideBuilder::new(&sandbox.root);
        let invalid = |error| ToolError::Glob {
            glob: glob.into(),
            error,
        };
        ob.add(glob).map_err(invalid)?;
        let ov = ob.build().map_err(invalid)?;
        w.overrides(ov);
    }
    let mut files = Vec::new();
    for entry in w.build() {
        if stop.load(Ordering::Relaxed) {
            return Err(ToolError::Stopped);
        }
        let Ok(entry) = entry else { continue };
        // Links are skipped: one pointing out must not be read, one pointing in is a
        // duplicate.
        if entry.file_type().is_some_and(|t| t.is_file()) && !entry.path_is_symlink() {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

/// `path:line: text` lines, capped at [`MAX_OUTPUT_BYTES`]; true when the cap cut them.
pub(super) fn format_hits(hits: &[Hit]) -> (String, bool) {
    let mut out = String::new();
    for h in hits {
        if out.len() >= MAX_OUTPUT_BYTES {
            return (out, true);
        }
        let _ = writeln!(out, "{}:{}: {}", h.path, h.line, h.text);
    }
    (out, false)
}

pub(super) fn matcher(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .multi_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .build(pattern)
}
