//! The built-in agent's read-only tools over one worktree: `list_dir`, `read_file`, `search`
//! and `find_symbol`, and the [`Sandbox`] every path goes through.
//!
//! Nothing here writes, runs a program or follows a path out of the worktree: absolute paths,
//! `..` above the root and symbolic links (the file or any parent) resolving outside the root
//! are refused, and `.git` is neither listed, searched nor read. Every failure is a
//! [`ToolOutput`] with `is_error` and a message the model can act on; nothing panics on a
//! model's input. Listing and search walk with ripgrep's `ignore` (honouring `.gitignore`, but
//! not the user's global ignore file, so results do not depend on the machine) in file-name
//! order, so the same worktree gives the same output.
//!
//! Every tool is bounded: the files it reads (a file named to `search` as much as a walk), the
//! regular expressions it compiles ([`REGEX_SIZE_LIMIT`], [`REGEX_DFA_LIMIT`]) and the search's
//! buffer ([`SEARCH_HEAP_LIMIT`]); and [`call_until`] stops a walk or search as soon as its
//! caller raises the stop flag (a run's time limit), between two files or two buffers of one.

use crate::llm::chat::ToolDef;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Most bytes of text one tool result holds.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// Most lines `read_file` shows in one call.
pub const MAX_READ_LINES: usize = 1000;
/// Longest line shown whole; longer lines are cut.
const MAX_LINE_CHARS: usize = 1000;
/// Longest matched line shown by `search` and `find_symbol`.
const MAX_MATCH_CHARS: usize = 300;
/// Largest file `read_file` opens (it is read whole to count its lines).
const MAX_READ_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Files larger than this are not searched (generated data, vendored blobs).
const MAX_SEARCH_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Largest compiled regular expression (the model's pattern, or `find_symbol`'s).
pub const REGEX_SIZE_LIMIT: usize = 2 * 1024 * 1024;
/// Largest lazy DFA cache of one regular expression.
pub const REGEX_DFA_LIMIT: usize = 8 * 1024 * 1024;
/// Largest buffer the searcher grows to for one line (a file is at most
/// [`MAX_SEARCH_FILE_BYTES`], so any of its lines fits).
pub const SEARCH_HEAP_LIMIT: usize = MAX_SEARCH_FILE_BYTES as usize + 64 * 1024;
/// What a stopped tool says.
const STOPPED: &str = "stopped: the run's time limit was reached while this tool was running";
/// Most entries `list_dir` shows.
pub const MAX_LIST_ENTRIES: usize = 400;
/// Deepest `list_dir` goes.
const MAX_LIST_DEPTH: u64 = 6;
/// `search`'s default and largest `max_results`.
const DEFAULT_SEARCH_RESULTS: u64 = 50;
const MAX_SEARCH_RESULTS: u64 = 500;
/// Most definitions `find_symbol` shows.
const MAX_SYMBOL_RESULTS: usize = 100;
/// Bytes looked at to call a file binary (as git does).
const BINARY_PROBE_BYTES: usize = 8000;
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
    root: PathBuf,
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
    fn show(&self, path: &Path) -> String {
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
    fn walker(&self, start: &Path, max_depth: Option<usize>) -> WalkBuilder {
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

/// A tool's result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutput {
    fn ok(content: String) -> ToolOutput {
        ToolOutput {
            content,
            is_error: false,
        }
    }

    fn error(content: String) -> ToolOutput {
        ToolOutput {
            content,
            is_error: true,
        }
    }
}

/// The tools' definitions, in the order they are offered.
pub fn specs() -> Vec<ToolDef> {
    let def = |name: &str, description: &str, schema: Value| ToolDef {
        name: name.to_string(),
        description: description.to_string(),
        input_schema: schema,
    };
    vec![
        def(
            "list_dir",
            "List a directory of the repository, sorted by name: directories end with `/`, files \
             show their size, symbolic links their target. Files ignored by .gitignore and `.git` \
             are not listed. At most 400 entries.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory relative to the repository root; \".\" (the default) is the root."},
                    "depth": {"type": "integer", "minimum": 1, "maximum": MAX_LIST_DEPTH, "description": "How many levels to list (default 1)."}
                },
                "additionalProperties": false
            }),
        ),
        def(
            "read_file",
            "Read a text file of the repository with line numbers. Without a range it starts at \
             line 1; at most 1000 lines or 64 KiB are shown per call, and the output says how to \
             read on. Binary files are refused.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File relative to the repository root, e.g. \"src/main.rs\"."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line to show (1-based, default 1)."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to show, inclusive (default: the end of the file)."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        def(
            "search",
            "Search the repository's files for a regular expression (Rust regex syntax, one line \
             at a time; `(?i)` for case-insensitive). Prints `path:line: text` per matching line, \
             in path order. Files ignored by .gitignore, binary files and `.git` are skipped.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression."},
                    "path": {"type": "string", "description": "File or directory to search, relative to the root (default: the whole repository)."},
                    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.rs\" or \"src/**/*.py\"; a leading `!` excludes."},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": "Most matching lines to show (default 50)."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        def(
            "find_symbol",
            "Find where a function, method, class, struct, enum, trait, interface, type, constant, \
             module or macro is defined, by name, in Rust, Python, JavaScript/TypeScript, Go, \
             Java, Kotlin, C#, C and C++ (best effort, by pattern). Prints `path:line: text`.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The identifier, e.g. \"parse_args\" or \"HttpClient\" (for \"a::b\" or \"A.b\" the last part is looked up)."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
    ]
}

/// Runs tool `name` with the model's `input`. An unknown tool, an input that does not fit the
/// schema and every refusal are error outputs the model reads; this never panics.
#[cfg(test)]
pub fn call(sandbox: &Sandbox, name: &str, input: &Value) -> ToolOutput {
    call_until(sandbox, name, input, &AtomicBool::new(false))
}

/// [`call`], giving up (an error output) soon after `stop` is raised: walks check it at every
/// entry, searches at every file and every buffer read, so a thread running a tool is free
/// again at once.
pub fn call_until(sandbox: &Sandbox, name: &str, input: &Value, stop: &AtomicBool) -> ToolOutput {
    let result = match name {
        "list_dir" => parse(name, input).and_then(|i| list_dir(sandbox, i, stop)),
        "read_file" => parse(name, input).and_then(|i| read_file(sandbox, i)),
        "search" => parse(name, input).and_then(|i| search(sandbox, i, stop)),
        "find_symbol" => parse(name, input).and_then(|i| find_symbol(sandbox, i, stop)),
        _ => Err(format!(
            "there is no tool of that name; the tools are list_dir, read_file, search and find_symbol: {}",
            quote(name)
        )),
    };
    match result {
        Ok(text) => ToolOutput::ok(text),
        Err(text) => ToolOutput::error(text),
    }
}

fn parse<T: serde::de::DeserializeOwned>(tool: &str, input: &Value) -> Result<T, String> {
    let input = match input {
        Value::Null => json!({}),
        Value::Object(_) => input.clone(),
        other => {
            return Err(format!(
                "the input of {tool} must be a JSON object of its parameters, not: {}",
                quote(&other.to_string())
            ));
        }
    };
    serde_json::from_value(input)
        .map_err(|e| format!("invalid input for {tool} (see its schema): {e}"))
}

/// Accepts an integer also when written as a string (`"10"`), which some models do.
fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a positive integer, got {n}"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| D::Error::custom(format!("expected a positive integer, got {s:?}"))),
        Some(other) => Err(D::Error::custom(format!(
            "expected a positive integer, got {other}"
        ))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListDirInput {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    depth: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadFileInput {
    path: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    start_line: Option<u64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    end_line: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchInput {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    max_results: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FindSymbolInput {
    name: String,
}

fn resolve(sandbox: &Sandbox, path: Option<&str>) -> Result<Resolved, String> {
    let path = path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
    sandbox.resolve(path).map_err(|e| e.to_string())
}

fn list_dir(sandbox: &Sandbox, input: ListDirInput, stop: &AtomicBool) -> Result<String, String> {
    let dir = resolve(sandbox, input.path.as_deref())?;
    if !dir.path.is_dir() {
        return Err(format!(
            "not a directory (use read_file for files): {}",
            quote(&dir.rel)
        ));
    }
    let depth = input.depth.unwrap_or(1).clamp(1, MAX_LIST_DEPTH) as usize;
    let mut out = String::new();
    let mut shown = 0usize;
    let mut more = 0usize;
    for entry in sandbox.walker(&dir.path, Some(depth)).build() {
        if stop.load(Ordering::Relaxed) {
            return Err(STOPPED.to_string());
        }
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        if !path.starts_with(&dir.path) || path == dir.path {
            continue;
        }
        if shown >= MAX_LIST_ENTRIES || out.len() >= MAX_OUTPUT_BYTES {
            more += 1;
            continue;
        }
        shown += 1;
        let name = sandbox.show(path);
        let ft = entry.file_type();
        if entry.path_is_symlink() {
            let target = match path.canonicalize() {
                Ok(real) if real.starts_with(&sandbox.root) => sandbox.show(&real),
                Ok(_) => "(outside the repository: refused)".to_string(),
                Err(_) => "(broken link)".to_string(),
            };
            let _ = writeln!(out, "{name} -> {target}");
        } else if ft.is_some_and(|t| t.is_dir()) {
            let _ = writeln!(out, "{name}/");
        } else {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            let _ = writeln!(out, "{name} ({size} bytes)");
        }
    }
    if shown == 0 {
        return Ok(format!(
            "{} is empty (or holds only files ignored by .gitignore)",
            dir.rel
        ));
    }
    if more > 0 {
        let _ = writeln!(
            out,
            "[{more} more entries not shown: list a subdirectory or use a smaller depth]"
        );
    }
    Ok(out)
}

fn read_file(sandbox: &Sandbox, input: ReadFileInput) -> Result<String, String> {
    let file = resolve(sandbox, Some(&input.path))?;
    if file.path.is_dir() {
        return Err(format!(
            "this is a directory (use list_dir): {}",
            quote(&file.rel)
        ));
    }
    let meta = std::fs::metadata(&file.path)
        .map_err(|e| format!("cannot read ({e}): {}", quote(&file.rel)))?;
    if meta.len() > MAX_READ_FILE_BYTES {
        return Err(format!(
            "the file is {} bytes, too large to read; use search with this path to find the lines you need: {}",
            meta.len(),
            quote(&file.rel)
        ));
    }
    let bytes = std::fs::read(&file.path)
        .map_err(|e| format!("cannot read ({e}): {}", quote(&file.rel)))?;
    if bytes[..bytes.len().min(BINARY_PROBE_BYTES)].contains(&0) {
        return Err(format!(
            "binary file ({} bytes), not shown: {}",
            bytes.len(),
            quote(&file.rel)
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok(format!("{} is empty", file.rel));
    }
    let start = input.start_line.unwrap_or(1).max(1);
    if start > total as u64 {
        return Err(format!(
            "start_line {start} is past the end: the file has {total} lines: {}",
            quote(&file.rel)
        ));
    }
    let start = start as usize;
    let end = input
        .end_line
        .map(|e| (e.min(total as u64)) as usize)
        .unwrap_or(total);
    if end < start {
        return Err(format!(
            "end_line {end} is before start_line {start}: {}",
            quote(&file.rel)
        ));
    }
    let width = end.to_string().len();
    let mut body = String::new();
    let mut last = start - 1;
    for (i, line) in lines[start - 1..end].iter().enumerate() {
        let n = start + i;
        if n - start >= MAX_READ_LINES || body.len() >= MAX_OUTPUT_BYTES {
            break;
        }
        let _ = writeln!(body, "{n:>width$}\t{}", cut_line(line, MAX_LINE_CHARS));
        last = n;
    }
    let mut out = format!("{} (lines {start}-{last} of {total})\n{body}", file.rel);
    if last < end {
        let _ = writeln!(
            out,
            "[output cut at line {last} (at most {MAX_READ_LINES} lines or {} KiB per call): call read_file with start_line {} to read on]",
            MAX_OUTPUT_BYTES / 1024,
            last + 1
        );
    }
    Ok(out)
}

/// One matching line.
struct Hit {
    path: String,
    line: u64,
    text: String,
}

/// What a search over files found.
struct Found {
    hits: Vec<Hit>,
    /// More matches than `limit` exist.
    cut: bool,
    files: usize,
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
fn search_files(
    sandbox: &Sandbox,
    start: &Resolved,
    glob: Option<&str>,
    matcher: &RegexMatcher,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
    stop: &AtomicBool,
) -> Result<Found, String> {
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
    let mut files: Vec<PathBuf> = Vec::new();
    if start.path.is_file() {
        let size = std::fs::metadata(&start.path).map_or(0, |m| m.len());
        if size > MAX_SEARCH_FILE_BYTES {
            return Err(format!(
                "the file is {size} bytes, too large to search (at most {} MiB); search a \
                 smaller file: {}",
                MAX_SEARCH_FILE_BYTES / (1024 * 1024),
                quote(&start.rel)
            ));
        }
        files.push(start.path.clone());
    } else {
        let mut w = sandbox.walker(&start.path, None);
        w.max_filesize(Some(MAX_SEARCH_FILE_BYTES));
        if let Some(glob) = glob.map(str::trim).filter(|g| !g.is_empty()) {
            let mut ob = OverrideBuilder::new(&sandbox.root);
            ob.add(glob)
                .map_err(|e| format!("invalid glob ({e}): {}", quote(glob)))?;
            let ov = ob
                .build()
                .map_err(|e| format!("invalid glob ({e}): {}", quote(glob)))?;
            w.overrides(ov);
        }
        for entry in w.build() {
            if stop.load(Ordering::Relaxed) {
                return Err(STOPPED.to_string());
            }
            let Ok(entry) = entry else { continue };
            // Links are skipped: one pointing out must not be read, one pointing in is a
            // duplicate.
            if entry.file_type().is_some_and(|t| t.is_file()) && !entry.path_is_symlink() {
                files.push(entry.into_path());
            }
        }
    }
    for path in files {
        if found.cut {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Err(STOPPED.to_string());
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
        return Err(STOPPED.to_string());
    }
    Ok(found)
}

/// `path:line: text` lines, capped at [`MAX_OUTPUT_BYTES`]; true when the cap cut them.
fn format_hits(hits: &[Hit]) -> (String, bool) {
    let mut out = String::new();
    for h in hits {
        if out.len() >= MAX_OUTPUT_BYTES {
            return (out, true);
        }
        let _ = writeln!(out, "{}:{}: {}", h.path, h.line, h.text);
    }
    (out, false)
}

fn matcher(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .multi_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .build(pattern)
}

fn search(sandbox: &Sandbox, input: SearchInput, stop: &AtomicBool) -> Result<String, String> {
    if input.pattern.is_empty() {
        return Err("the pattern is empty: give a regular expression".to_string());
    }
    let m = matcher(&input.pattern).map_err(|e| {
        format!(
            "invalid regular expression (Rust regex syntax; escape `(`, `[`, `.` and the like with `\\`): {e}"
        )
    })?;
    let start = resolve(sandbox, input.path.as_deref())?;
    let limit = input
        .max_results
        .unwrap_or(DEFAULT_SEARCH_RESULTS)
        .clamp(1, MAX_SEARCH_RESULTS) as usize;
    let found = search_files(
        sandbox,
        &start,
        input.glob.as_deref(),
        &m,
        limit,
        &|_| true,
        stop,
    )?;
    if found.hits.is_empty() {
        return Ok(format!(
            "no matches in {} ({} files searched; files ignored by .gitignore and binary files are skipped): {}",
            start.rel,
            found.files,
            quote(&input.pattern)
        ));
    }
    let (mut out, bytes_cut) = format_hits(&found.hits);
    if found.cut || bytes_cut {
        let _ = writeln!(
            out,
            "[stopped after {} matching lines; there are more: narrow the pattern, path or glob, or raise max_results (at most {MAX_SEARCH_RESULTS})]",
            found.hits.len()
        );
    } else {
        let _ = writeln!(
            out,
            "[{} matching lines; {} files searched]",
            found.hits.len(),
            found.files
        );
    }
    Ok(out)
}

/// Definition patterns per language family, `NAME` standing for the identifier.
const DEFINITION_PATTERNS: &[&str] = &[
    // Rust items.
    r#"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern(?:\s+"[^"]*")?)\s+)*(?:fn|struct|enum|trait|type|union|const|static|mod)\s+NAME\b"#,
    r"^\s*(?:#\[macro_export\]\s*)?macro_rules!\s*NAME\b",
    // Python, Ruby.
    r"^\s*(?:async\s+)?(?:def|class|module)\s+(?:self\.)?NAME\b",
    // JavaScript / TypeScript declarations.
    r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\s*\*?|class|interface|type|enum|namespace|const|let|var)\s*NAME\b",
    // JavaScript / TypeScript: `name = function`, `name: (a) =>`, `name = async (…) =>`.
    r"^\s*(?:(?:public|private|protected|static|readonly|async)\s+)*NAME\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
    // JavaScript / TypeScript / Java methods in a class body: `name(args) {`.
    r"^\s*(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*NAME\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^{;]+)?\{\s*$",
    // Go.
    r"^func\s+(?:\([^)]*\)\s*)?NAME\b",
    r"^\s*type\s+NAME\b",
    // Java, Kotlin, C#, C++, Scala, Swift type declarations.
    r"^\s*(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|inline|partial|export|virtual|readonly|enum|case|annotation|value)\s+)*(?:class|struct|interface|enum|record|object|union|trait|protocol)\s+NAME\b",
    r"^\s*(?:typedef\s+)?(?:struct|enum|union)\s+NAME\b",
    // Kotlin, Swift, Scala functions.
    r"^\s*(?:\w+\s+)*(?:fun|func|def)\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?NAME\b",
    // C macros.
    r"^\s*#\s*define\s+NAME\b",
    // C-like function definitions (return type, then the name, then parameters; no `;`).
    r"^\s*(?:[\w:<>,*&\[\]]+\s+)+[*&]*(?:\w+::)*NAME\s*\([^;]*$",
];

/// Words that start a statement, never a definition: lines starting with them are dropped from
/// `find_symbol`'s loose C-like pattern (`return foo(`, `else if (`).
const STATEMENT_WORDS: &[&str] = &[
    "return", "else", "new", "throw", "await", "yield", "case", "if", "while", "for", "switch",
    "delete", "sizeof", "goto", "do", "print", "echo", "assert", "raise", "not", "and", "or", "in",
    "is", "when", "match",
];

fn find_symbol(
    sandbox: &Sandbox,
    input: FindSymbolInput,
    stop: &AtomicBool,
) -> Result<String, String> {
    let raw = input.name.trim();
    let name = raw
        .rsplit([':', '.', '#'])
        .next()
        .unwrap_or(raw)
        .trim_end_matches("()");
    let valid = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if !valid {
        return Err(format!(
            "the name must be an identifier such as \"parse_args\" (use search for patterns): {}",
            quote(raw)
        ));
    }
    let escaped = name.replace('$', r"\$");
    let pattern = DEFINITION_PATTERNS
        .iter()
        .map(|p| format!("(?:{})", p.replace("NAME", &escaped)))
        .collect::<Vec<_>>()
        .join("|");
    let m = matcher(&pattern).map_err(|e| format!("cannot build the definition pattern ({e})"))?;
    let root = resolve(sandbox, None)?;
    let keep = |line: &str| {
        let first = line
            .trim_start()
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        !STATEMENT_WORDS.contains(&first)
    };
    let found = search_files(sandbox, &root, None, &m, MAX_SYMBOL_RESULTS, &keep, stop)?;
    if found.hits.is_empty() {
        return Ok(format!(
            "no definition found ({} files searched); try search with a regular expression: {}",
            found.files,
            quote(name)
        ));
    }
    let (mut out, bytes_cut) = format_hits(&found.hits);
    if found.cut || bytes_cut {
        let _ = writeln!(
            out,
            "[stopped after {} definitions; use search with a path or glob to narrow]",
            found.hits.len()
        );
    }
    Ok(out)
}

/// `line` cut to `max` characters, saying so.
fn cut_line(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((at, _)) => format!(
            "{}… [line cut: {} more characters]",
            &line[..at],
            line[at..].chars().count()
        ),
    }
}

/// An untrusted value for the end of a message: JSON-quoted and cut.
fn quote(value: &str) -> String {
    let mut chars = value.chars();
    let mut s: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        s.push('…');
    }
    serde_json::to_string(&s).unwrap_or(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs;

    /// A worktree with code in several languages, a `.gitignore`d file, a `.git` directory,
    /// and links pointing in and out; and a directory outside it.
    fn fixture() -> (tempfile::TempDir, tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let r = dir.path();
        fs::write(outside.path().join("secret.txt"), "OUTSIDE_SECRET\n").unwrap();
        fs::create_dir_all(r.join("src/nested")).unwrap();
        fs::create_dir_all(r.join(".git")).unwrap();
        fs::write(r.join(".git/config"), "needle_in_git\n").unwrap();
        fs::write(r.join(".gitignore"), "ignored.log\nbuild/\n").unwrap();
        fs::write(r.join("ignored.log"), "needle_ignored\n").unwrap();
        fs::create_dir_all(r.join("build")).unwrap();
        fs::write(r.join("build/out.rs"), "fn needle_build() {}\n").unwrap();
        fs::write(
            r.join("src/lib.rs"),
            "//! lib\npub struct Parser {\n    n: u32,\n}\n\npub fn parse_args(x: u32) -> u32 {\n    x + 1 // needle_rs\n}\n\nmacro_rules! shout { () => {} }\n",
        )
        .unwrap();
        fs::write(
            r.join("src/nested/tool.py"),
            "import os\n\nclass Parser:\n    def parse_args(self):\n        return parse_args_helper()  # needle_py\n",
        )
        .unwrap();
        fs::write(
            r.join("src/app.ts"),
            "export interface Options {}\nexport const parseArgs = (a: string) => a;\nexport default class App {}\n",
        )
        .unwrap();
        fs::write(
            r.join("main.go"),
            "package main\n\nfunc (s *Server) Serve() error {\n\treturn nil\n}\ntype Server struct{}\n",
        )
        .unwrap();
        fs::write(
            r.join("util.c"),
            "#define MAX_LEN 10\nstatic int count_words(const char *s) {\n  return count_words(s + 1);\n}\nint count_words(const char *s);\n",
        )
        .unwrap();
        fs::write(r.join("blob.bin"), b"abc\0def needle_rs").unwrap();
        let big: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
        fs::write(r.join("big.txt"), big).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), r.join("escape.txt"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("escape_dir")).unwrap();
        std::os::unix::fs::symlink("src/lib.rs", r.join("inner_link.rs")).unwrap();
        std::os::unix::fs::symlink("../../nowhere", r.join("dangling_out")).unwrap();
        let sb = Sandbox::new(r).unwrap();
        (dir, outside, sb)
    }

    fn run(sb: &Sandbox, name: &str, input: Value) -> ToolOutput {
        call(sb, name, &input)
    }

    #[test]
    fn paths_leaving_the_root_are_refused_with_a_reason() {
        let (_d, _o, sb) = fixture();
        assert!(matches!(sb.resolve("../x"), Err(PathError::Escapes(_))));
        assert!(matches!(
            sb.resolve("src/../../x"),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            sb.resolve("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(sb.resolve("C:\\x"), Err(PathError::Absolute(_))));
        assert!(matches!(
            sb.resolve("escape.txt"),
            Err(PathError::OutsideLink(_))
        ));
        assert!(matches!(
            sb.resolve("escape_dir/secret.txt"),
            Err(PathError::OutsideLink(_))
        ));
        assert!(matches!(
            sb.resolve("dangling_out"),
            Err(PathError::OutsideLink(_))
        ));
        assert!(matches!(
            sb.resolve(".git/config"),
            Err(PathError::GitDir(_))
        ));
        assert!(matches!(sb.resolve("nope.rs"), Err(PathError::NotFound(_))));
        assert!(matches!(sb.resolve("src/.git"), Err(PathError::GitDir(_))));
        assert!(Sandbox::new(&sb.root().join("src/lib.rs")).is_err());
        // Inside after normalising, and links that stay inside, are fine.
        assert_eq!(
            sb.resolve("src/nested/../lib.rs").unwrap().rel,
            "src/lib.rs"
        );
        assert_eq!(sb.resolve("./").unwrap().rel, ".");
        assert_eq!(
            sb.resolve("inner_link.rs").unwrap().path,
            sb.root().join("src/lib.rs")
        );
        let msg = sb.resolve("/etc/passwd").unwrap_err().to_string();
        assert!(
            msg.contains("relative to the repository root") && msg.ends_with("\"/etc/passwd\""),
            "{msg}"
        );
    }

    #[test]
    fn tools_refuse_escapes_as_error_outputs() {
        let (_d, _o, sb) = fixture();
        for (tool, input) in [
            ("read_file", json!({"path": "../x"})),
            ("read_file", json!({"path": "/etc/passwd"})),
            ("read_file", json!({"path": "../../etc/passwd"})),
            ("read_file", json!({"path": "escape.txt"})),
            ("read_file", json!({"path": "escape_dir/secret.txt"})),
            ("list_dir", json!({"path": "escape_dir"})),
            ("list_dir", json!({"path": ".."})),
            ("search", json!({"pattern": "SECRET", "path": "escape_dir"})),
        ] {
            let out = run(&sb, tool, input.clone());
            assert!(out.is_error, "{tool} {input}: {out:?}");
            assert!(!out.content.contains("OUTSIDE_SECRET"), "{out:?}");
        }
        let all = run(&sb, "search", json!({"pattern": "OUTSIDE_SECRET"}));
        assert!(
            !all.is_error && all.content.starts_with("no matches"),
            "{all:?}"
        );
    }

    #[test]
    fn list_dir_is_sorted_marks_kinds_and_hides_git_and_ignored() {
        let (_d, _o, sb) = fixture();
        let out = run(&sb, "list_dir", json!({}));
        assert!(!out.is_error, "{out:?}");
        let names: Vec<&str> = out
            .content
            .lines()
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                ".gitignore",
                "big.txt",
                "blob.bin",
                "dangling_out",
                "escape.txt",
                "escape_dir",
                "inner_link.rs",
                "main.go",
                "src/",
                "util.c"
            ]
        );
        assert!(
            out.content
                .contains("escape.txt -> (outside the repository: refused)")
        );
        assert!(out.content.contains("inner_link.rs -> src/lib.rs"));
        let deep = run(&sb, "list_dir", json!({"path": "src", "depth": "3"}));
        assert_eq!(
            deep.content,
            format!(
                "src/app.ts ({} bytes)\nsrc/lib.rs ({} bytes)\nsrc/nested/\nsrc/nested/tool.py ({} bytes)\n",
                fs::metadata(sb.root().join("src/app.ts")).unwrap().len(),
                fs::metadata(sb.root().join("src/lib.rs")).unwrap().len(),
                fs::metadata(sb.root().join("src/nested/tool.py"))
                    .unwrap()
                    .len(),
            )
        );
        assert!(run(&sb, "list_dir", json!({"path": "src/lib.rs"})).is_error);
    }

    #[test]
    fn list_dir_caps_entries_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_LIST_ENTRIES + 5) {
            fs::write(dir.path().join(format!("f{i:04}")), "").unwrap();
        }
        let sb = Sandbox::new(dir.path()).unwrap();
        let out = run(&sb, "list_dir", json!({"path": "."}));
        assert_eq!(out.content.lines().count(), MAX_LIST_ENTRIES + 1);
        assert!(
            out.content.ends_with(
                "[5 more entries not shown: list a subdirectory or use a smaller depth]\n"
            ),
            "{}",
            &out.content[out.content.len() - 200..]
        );
    }

    #[test]
    fn read_file_numbers_lines_and_honours_ranges() {
        let (_d, _o, sb) = fixture();
        let out = run(
            &sb,
            "read_file",
            json!({"path": "src/lib.rs", "start_line": 2, "end_line": 4}),
        );
        assert_eq!(
            out.content,
            "src/lib.rs (lines 2-4 of 10)\n2\tpub struct Parser {\n3\t    n: u32,\n4\t}\n"
        );
        let whole = run(&sb, "read_file", json!({"path": "./src/lib.rs"}));
        assert!(
            whole
                .content
                .starts_with("src/lib.rs (lines 1-10 of 10)\n 1\t//! lib\n"),
            "{}",
            whole.content
        );
        let err = run(
            &sb,
            "read_file",
            json!({"path": "src/lib.rs", "start_line": 11}),
        );
        assert!(
            err.is_error && err.content.contains("the file has 10 lines"),
            "{err:?}"
        );
        let err = run(
            &sb,
            "read_file",
            json!({"path": "src/lib.rs", "start_line": 5, "end_line": 2}),
        );
        assert!(err.is_error, "{err:?}");
        // An end past the end is the end.
        let tail = run(
            &sb,
            "read_file",
            json!({"path": "src/lib.rs", "start_line": 10, "end_line": 99}),
        );
        assert_eq!(
            tail.content,
            "src/lib.rs (lines 10-10 of 10)\n10\tmacro_rules! shout { () => {} }\n"
        );
    }

    #[test]
    fn read_file_caps_lines_and_says_how_to_read_on() {
        let (_d, _o, sb) = fixture();
        let out = run(&sb, "read_file", json!({"path": "big.txt"}));
        assert!(!out.is_error);
        assert!(
            out.content.starts_with("big.txt (lines 1-1000 of 3000)\n"),
            "{}",
            &out.content[..100]
        );
        assert!(out.content.contains("1000\tline 1000\n"));
        assert!(!out.content.contains("\tline 1001"));
        assert!(
            out.content
                .ends_with("call read_file with start_line 1001 to read on]\n")
        );
        let next = run(
            &sb,
            "read_file",
            json!({"path": "big.txt", "start_line": 2995}),
        );
        assert!(
            next.content
                .starts_with("big.txt (lines 2995-3000 of 3000)\n2995\tline 2995\n"),
            "{}",
            next.content
        );
        assert!(!next.content.contains("read on"));
    }

    #[test]
    fn read_file_caps_bytes_and_cuts_long_lines() {
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(5000);
        let text: String = (0..200).map(|_| format!("{long}\n")).collect();
        fs::write(dir.path().join("wide.txt"), text).unwrap();
        let sb = Sandbox::new(dir.path()).unwrap();
        let out = run(&sb, "read_file", json!({"path": "wide.txt"}));
        assert!(
            out.content.len() < MAX_OUTPUT_BYTES + 4 * MAX_LINE_CHARS,
            "{}",
            out.content.len()
        );
        assert!(out.content.contains("… [line cut: 4000 more characters]"));
        assert!(out.content.contains("to read on]"));
    }

    #[test]
    fn read_file_refuses_binary_files_and_directories() {
        let (_d, _o, sb) = fixture();
        let bin = run(&sb, "read_file", json!({"path": "blob.bin"}));
        assert!(
            bin.is_error && bin.content.starts_with("binary file"),
            "{bin:?}"
        );
        assert!(run(&sb, "read_file", json!({"path": "src"})).is_error);
    }

    #[test]
    fn search_respects_gitignore_skips_git_and_binaries() {
        let (_d, _o, sb) = fixture();
        let out = run(&sb, "search", json!({"pattern": "needle_\\w+"}));
        assert_eq!(
            out.content,
            "src/lib.rs:7:     x + 1 // needle_rs\nsrc/nested/tool.py:5:         return parse_args_helper()  # needle_py\n[2 matching lines; 8 files searched]\n"
        );
        // An ignored file named explicitly is searched.
        let named = run(
            &sb,
            "search",
            json!({"pattern": "needle", "path": "ignored.log"}),
        );
        assert_eq!(
            named.content.lines().next(),
            Some("ignored.log:1: needle_ignored")
        );
    }

    #[test]
    fn search_filters_by_path_and_glob_and_caps_results() {
        let (_d, _o, sb) = fixture();
        let py = run(
            &sb,
            "search",
            json!({"pattern": "parse_args", "glob": "*.py"}),
        );
        assert!(
            py.content
                .lines()
                .all(|l| l.starts_with("src/nested/tool.py:") || l.starts_with('[')),
            "{}",
            py.content
        );
        let sub = run(
            &sb,
            "search",
            json!({"pattern": "Parser", "path": "src/nested"}),
        );
        assert!(
            sub.content
                .starts_with("src/nested/tool.py:3: class Parser:"),
            "{}",
            sub.content
        );
        let capped = run(&sb, "search", json!({"pattern": "^line", "max_results": 3}));
        assert_eq!(capped.content.lines().count(), 4);
        assert!(
            capped
                .content
                .contains("big.txt:3: line 3\n[stopped after 3 matching lines; there are more"),
            "{}",
            capped.content
        );
        let bad = run(&sb, "search", json!({"pattern": "fn ("}));
        assert!(
            bad.is_error && bad.content.starts_with("invalid regular expression"),
            "{bad:?}"
        );
        let bad_glob = run(&sb, "search", json!({"pattern": "x", "glob": "a[" }));
        assert!(bad_glob.is_error, "{bad_glob:?}");
    }

    /// A worktree of `n` text files of 256 KiB each: a search over it takes a while.
    pub(crate) fn heavy(dir: &Path, n: usize) {
        let line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n";
        let text = line.repeat(256 * 1024 / line.len());
        for i in 0..n {
            fs::write(dir.join(format!("f{i:04}.txt")), &text).unwrap();
        }
    }

    /// A pattern that matches nothing but makes the matcher work on every byte.
    pub(crate) const SLOW_PATTERN: &str = r"(?i)\w{3,}\s+\w{3,}\s+\w{3,}\s+\w*zq";

    #[test]
    fn a_raised_stop_flag_ends_a_long_search_at_once() {
        let dir = tempfile::tempdir().unwrap();
        heavy(dir.path(), 200);
        let sb = Sandbox::new(dir.path()).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let job = std::thread::spawn(move || {
            call_until(&sb, "search", &json!({"pattern": SLOW_PATTERN}), &flag)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        let raised = std::time::Instant::now();
        stop.store(true, Ordering::Relaxed);
        let out = job.join().unwrap();
        let took = raised.elapsed();
        assert!(
            out.is_error && out.content.starts_with("stopped"),
            "{out:?}"
        );
        assert!(took < std::time::Duration::from_millis(500), "{took:?}");
        // The same search, not stopped, runs to its end.
        let sb = Sandbox::new(dir.path()).unwrap();
        let out = run(
            &sb,
            "search",
            json!({"pattern": SLOW_PATTERN, "path": "f0000.txt"}),
        );
        assert!(
            !out.is_error && out.content.starts_with("no matches"),
            "{out:?}"
        );
    }

    #[test]
    fn a_named_file_is_size_capped_like_a_walk_and_regexes_are_size_capped() {
        let (d, _o, sb) = fixture();
        let big = vec![b'a'; MAX_SEARCH_FILE_BYTES as usize + 1];
        fs::write(d.path().join("huge.txt"), &big).unwrap();
        let out = run(&sb, "search", json!({"pattern": "a", "path": "huge.txt"}));
        assert!(
            out.is_error && out.content.contains("too large to search"),
            "{out:?}"
        );
        // Walks skip it, as before.
        let out = run(&sb, "search", json!({"pattern": "^a+$"}));
        assert!(out.content.starts_with("no matches"), "{out:?}");
        // A pattern whose compiled form would be huge is refused, not built.
        let out = run(&sb, "search", json!({"pattern": r"(?:\w{50}){50}"}));
        assert!(
            out.is_error && out.content.contains("size limit"),
            "{out:?}"
        );
        // find_symbol's own pattern fits.
        assert!(!run(&sb, "find_symbol", json!({"name": "Parser"})).is_error);
    }

    #[test]
    fn find_symbol_finds_definitions_across_languages() {
        let (_d, _o, sb) = fixture();
        let parser = run(&sb, "find_symbol", json!({"name": "Parser"}));
        assert_eq!(
            parser.content,
            "src/lib.rs:2: pub struct Parser {\nsrc/nested/tool.py:3: class Parser:\n"
        );
        let pa = run(&sb, "find_symbol", json!({"name": "tool::parse_args"}));
        assert_eq!(
            pa.content,
            "src/lib.rs:6: pub fn parse_args(x: u32) -> u32 {\nsrc/nested/tool.py:4:     def parse_args(self):\n"
        );
        for (name, expect) in [
            ("shout", "src/lib.rs:10: macro_rules! shout"),
            ("parseArgs", "src/app.ts:2: export const parseArgs"),
            ("Options", "src/app.ts:1: export interface Options {}"),
            ("App", "src/app.ts:3: export default class App {}"),
            ("Serve", "main.go:3: func (s *Server) Serve() error {"),
            ("Server", "main.go:6: type Server struct{}"),
            ("MAX_LEN", "util.c:1: #define MAX_LEN 10"),
        ] {
            let out = run(&sb, "find_symbol", json!({"name": name}));
            assert!(out.content.starts_with(expect), "{name}: {}", out.content);
        }
        // The definition, not the call (`return`) nor the declaration (`;`).
        let cw = run(&sb, "find_symbol", json!({"name": "count_words"}));
        assert_eq!(
            cw.content,
            "util.c:2: static int count_words(const char *s) {\n"
        );
        let none = run(&sb, "find_symbol", json!({"name": "Nothing"}));
        assert!(!none.is_error && none.content.starts_with("no definition found"));
        assert!(run(&sb, "find_symbol", json!({"name": "a b"})).is_error);
    }

    #[test]
    fn bad_input_and_unknown_tools_are_error_outputs() {
        let (_d, _o, sb) = fixture();
        for (tool, input) in [
            ("delete_file", json!({})),
            ("read_file", json!({})),
            ("read_file", json!({"path": 3})),
            ("read_file", json!({"path": "src/lib.rs", "start_line": -1})),
            ("read_file", json!({"path": "src/lib.rs", "colour": "red"})),
            ("search", json!("fn")),
            ("find_symbol", Value::Null),
        ] {
            let out = run(&sb, tool, input.clone());
            assert!(out.is_error, "{tool} {input}: {out:?}");
        }
        // Null input means no parameters; numbers as strings are read.
        assert!(!run(&sb, "list_dir", Value::Null).is_error);
        let s = run(
            &sb,
            "read_file",
            json!({"path": "src/lib.rs", "start_line": "2", "end_line": 2.0}),
        );
        assert_eq!(
            s.content,
            "src/lib.rs (lines 2-2 of 10)\n2\tpub struct Parser {\n"
        );
    }

    #[test]
    fn specs_are_closed_objects_named_like_the_dispatch() {
        let specs = specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["list_dir", "read_file", "search", "find_symbol"]);
        for s in &specs {
            assert_eq!(s.input_schema["type"], "object");
            assert_eq!(s.input_schema["additionalProperties"], false, "{}", s.name);
            for req in s.input_schema["required"].as_array().into_iter().flatten() {
                assert!(
                    s.input_schema["properties"]
                        .get(req.as_str().unwrap())
                        .is_some()
                );
            }
        }
    }
}
