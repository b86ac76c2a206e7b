//! The built-in agent's read-only tools over one worktree, one module each (`list_dir`,
//! `read_file`, `search`, `find_symbol`: its input, its limits, the schema and description the
//! model is given, built from those limits, and what it does), the search both searching tools
//! share (`searcher`), and the [`Sandbox`] every path goes through (`boundary`, which imports
//! nothing of the tools).
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

mod boundary;
mod find_symbol;
#[cfg(test)]
pub(crate) mod fixture;
mod input;
mod list_dir;
mod read_file;
mod search;
mod searcher;

use boundary::quote;
pub use boundary::{PathError, Resolved, Sandbox};
pub use list_dir::MAX_LIST_ENTRIES;
pub use read_file::MAX_READ_LINES;
pub use searcher::{REGEX_DFA_LIMIT, REGEX_SIZE_LIMIT, SEARCH_HEAP_LIMIT};

use repoprobe_llm::chat::ToolDef;
use serde_json::Value;
use std::sync::atomic::AtomicBool;

/// Most bytes of text one tool result holds.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;
/// What a stopped tool says.
const STOPPED: &str = "stopped: the run's time limit was reached while this tool was running";

/// Why a tool call failed, in the words the model reads (its error output): each says what to
/// do instead, and quotes (`quote`) what the model gave.
#[derive(Debug, thiserror::Error)]
enum ToolError {
    #[error("there is no tool of that name; the tools are {}: {}", tool_names(), quote(.0))]
    NoSuchTool(String),
    #[error(
        "the input of {tool} must be a JSON object of its parameters, not: {}",
        quote(.given)
    )]
    NotAnObject { tool: &'static str, given: String },
    #[error("invalid input for {tool} (see its schema): {error}")]
    Input {
        tool: &'static str,
        error: serde_json::Error,
    },
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{STOPPED}")]
    Stopped,
    #[error("the pattern is empty: give a regular expression")]
    EmptyPattern,
    #[error(
        "invalid regular expression (Rust regex syntax; escape `(`, `[`, `.` and the like with `\\`): {0}"
    )]
    Regex(grep_regex::Error),
    #[error(
        "the name must be an identifier such as \"parse_args\" (use search for patterns): {}",
        quote(.0)
    )]
    NotIdentifier(String),
    #[error("cannot build the definition pattern ({0})")]
    DefinitionPattern(grep_regex::Error),
    #[error(
        "the file is {size} bytes, too large to search (at most {} MiB); search a smaller file: {}",
        searcher::MAX_SEARCH_FILE_BYTES / (1024 * 1024),
        quote(.rel)
    )]
    TooLargeToSearch { size: u64, rel: String },
    #[error("invalid glob ({error}): {}", quote(.glob))]
    Glob { glob: String, error: ignore::Error },
    #[error("not a directory (use read_file for files): {}", quote(.0))]
    NotADirectory(String),
    #[error("this is a directory (use list_dir): {}", quote(.0))]
    IsADirectory(String),
    #[error("cannot read ({error}): {}", quote(.rel))]
    Read { rel: String, error: std::io::Error },
    #[error(
        "the file is {size} bytes, too large to read; use search with this path to find the lines you need: {}",
        quote(.rel)
    )]
    TooLargeToRead { size: u64, rel: String },
    #[error("binary file ({size} bytes), not shown: {}", quote(.rel))]
    Binary { size: usize, rel: String },
    #[error("start_line {start} is past the end: the file has {total} lines: {}", quote(.rel))]
    PastEnd {
        start: u64,
        total: usize,
        rel: String,
    },
    #[error("end_line {end} is before start_line {start}: {}", quote(.rel))]
    EndBeforeStart {
        end: usize,
        start: usize,
        rel: String,
    },
}

/// A tool's result as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

/// One tool: its name, what the model is told about it (description and input schema) and what
/// runs it on the model's input (the text the model reads, or why the call failed).
struct Tool {
    name: &'static str,
    spec: fn() -> (String, Value),
    run: fn(&Sandbox, &Value, &AtomicBool) -> Result<String, ToolError>,
}

/// The tools, in the order they are offered.
const TOOLS: [Tool; 4] = [
    list_dir::TOOL,
    read_file::TOOL,
    search::TOOL,
    find_symbol::TOOL,
];

/// The tools' definitions, in the order they are offered.
pub fn specs() -> Vec<ToolDef> {
    TOOLS
        .iter()
        .map(|t| {
            let (description, input_schema) = (t.spec)();
            ToolDef {
                name: t.name.to_string(),
                description,
                input_schema,
            }
        })
        .collect()
}

/// Runs tool `name` with the model's `input`. An unknown tool, an input that does not fit the
/// schema and every refusal are error outputs the model reads; this never panics.
#[cfg(test)]
pub fn call(sandbox: &Sandbox, name: &str, input: &Value) -> ToolOutput {
    call_until(sandbox, name, input, &AtomicBool::new(false))
}

/// Runs tool `name` as `call` (test builds) does, giving up (an error output) soon after `stop`
/// is raised: walks check it at every entry, searches at every file and every buffer read, so a
/// thread running a tool is free again at once.
pub fn call_until(sandbox: &Sandbox, name: &str, input: &Value, stop: &AtomicBool) -> ToolOutput {
    let result = match TOOLS.iter().find(|t| t.name == name) {
        Some(tool) => (tool.run)(sandbox, input, stop),
        None => Err(ToolError::NoSuchTool(name.into())),
    };
    match result {
        Ok(content) => ToolOutput {
            content,
            is_error: false,
        },
        Err(e) => ToolOutput {
            content: e.to_string(),
            is_error: true,
        },
    }
}

/// The tools' names as a sentence: `a, b, c and d`.
fn tool_names() -> String {
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A path the model gave (none or blank: the root), inside the sandbox.
fn resolve(sandbox: &Sandbox, path: Option<&str>) -> Result<Resolved, ToolError> {
    let path = path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
    Ok(sandbox.resolve(path)?)
}

/// `line` cut to `max` characters, saying so.
fn cut_line(line: &str, max: usize) -> String {
    match repoprobe_core::text::prefix(line, max) {
        (whole, false) => whole.to_string(),
        (head, true) => format!(
            "{head}… [line cut: {} more characters]",
            line[head.len()..].chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture::{fixture, run};
    use serde_json::json;

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
