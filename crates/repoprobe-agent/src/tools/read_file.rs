//! `read_file`: a text file of the worktree with line numbers, a range of lines at a time.

use super::input::{lenient_u64, parse};
use super::{MAX_OUTPUT_BYTES, Sandbox, Tool, ToolError, cut_line, resolve};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

const NAME: &str = "read_file";
/// Most lines `read_file` shows in one call.
pub const MAX_READ_LINES: usize = 1000;
/// Longest line shown whole; longer lines are cut.
const MAX_LINE_CHARS: usize = 1000;
/// Largest file `read_file` opens (it is read whole to count its lines).
const MAX_READ_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Bytes looked at to call a file binary (as git does).
const BINARY_PROBE_BYTES: usize = 8000;

pub(super) const TOOL: Tool = Tool {
    name: NAME,
    spec,
    run,
};

fn spec() -> (String, Value) {
    (
        format!(
            "Read a text file of the repository with line numbers. Without a range it starts at \
             line 1; at most {MAX_READ_LINES} lines or {} KiB are shown per call, and the output \
             says how to read on. Binary files are refused.",
            MAX_OUTPUT_BYTES / 1024
        ),
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
    )
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

fn run(sandbox: &Sandbox, input: &Value, _stop: &AtomicBool) -> Result<String, ToolError> {
    let input: ReadFileInput = parse(NAME, input)?;
    let file = resolve(sandbox, Some(&input.path))?;
    if file.path.is_dir() {
        return Err(ToolError::IsADirectory(file.rel));
    }
    let unread = |error| ToolError::Read {
        rel: file.rel.clone(),
        error,
    };
    let meta = std::fs::metadata(&file.path).map_err(unread)?;
    if meta.len() > MAX_READ_FILE_BYTES {
        return Err(ToolError::TooLargeToRead {
            size: meta.len(),
            rel: file.rel,
        });
    }
    let bytes = std::fs::read(&file.path).map_err(unread)?;
    if bytes[..bytes.len().min(BINARY_PROBE_BYTES)].contains(&0) {
        return Err(ToolError::Binary {
            size: bytes.len(),
            rel: file.rel,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok(format!("{} is empty", file.rel));
    }
    let start = input.start_line.unwrap_or(1).max(1);
    if start > total as u64 {
        return Err(ToolError::PastEnd {
            start,
            total,
            rel: file.rel,
        });
    }
    let start = start as usize;
    let end = input
        .end_line
        .map(|e| (e.min(total as u64)) as usize)
        .unwrap_or(total);
    if end < start {
        return Err(ToolError::EndBeforeStart {
            end,
            start,
            rel: file.rel,
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Sandbox;
    use crate::tools::fixture::{fixture, run};
    use serde_json::json;
    use std::fs;

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
    fn the_description_states_the_codes_limits() {
        let (description, _) = spec();
        let limits = format!(
            "at most {MAX_READ_LINES} lines or {} KiB",
            MAX_OUTPUT_BYTES / 1024
        );
        assert!(description.contains(&limits), "{description}");
    }
}
