//! `search`: the lines of the worktree's files that match a regular expression, in path order.

use super::boundary::quote;
use super::input::{lenient_u64, parse};
use super::searcher::{format_hits, matcher, search_files};
use super::{Sandbox, Tool, ToolError, resolve};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

const NAME: &str = "search";
/// `search`'s default and largest `max_results`.
const DEFAULT_SEARCH_RESULTS: u64 = 50;
const MAX_SEARCH_RESULTS: u64 = 500;

pub(super) const TOOL: Tool = Tool {
    name: NAME,
    spec,
    run,
};

fn spec() -> (String, Value) {
    (
        "Search the repository's files for a regular expression (Rust regex syntax, one line \
         at a time; `(?i)` for case-insensitive). Prints `path:line: text` per matching line, \
         in path order. Files ignored by .gitignore, binary files and `.git` are skipped."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or directory to search, relative to the root (default: the whole repository)."},
                "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.rs\" or \"src/**/*.py\"; a leading `!` excludes."},
                "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "description": format!("Most matching lines to show (default {DEFAULT_SEARCH_RESULTS}).")}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    )
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

fn run(sandbox: &Sandbox, input: &Value, stop: &AtomicBool) -> Result<String, ToolError> {
    let input: SearchInput = parse(NAME, input)?;
    if input.pattern.is_empty() {
        return Err(ToolError::EmptyPattern);
    }
    let m = matcher(&input.pattern).map_err(ToolError::Regex)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::fixture::{SLOW_PATTERN, heavy};
    use crate::tools::fixture::{fixture, run};
    use crate::tools::searcher::MAX_SEARCH_FILE_BYTES;
    use crate::tools::{Sandbox, call_until};
    use serde_json::json;
    use std::fs;
    use std::sync::atomic::Ordering;

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
    fn the_schema_states_the_codes_limits() {
        let (_, schema) = spec();
        let max_results = &schema["properties"]["max_results"];
        assert_eq!(max_results["maximum"], MAX_SEARCH_RESULTS);
        let default = format!("(default {DEFAULT_SEARCH_RESULTS})");
        assert!(
            max_results["description"]
                .as_str()
                .unwrap()
                .contains(&default)
        );
    }
}
