//! `list_dir`: a directory of the worktree, sorted by name, to the depth asked.

use super::input::{lenient_u64, parse};
use super::{MAX_OUTPUT_BYTES, Sandbox, Tool, ToolError, resolve};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

const NAME: &str = "list_dir";
/// Most entries `list_dir` shows.
pub const MAX_LIST_ENTRIES: usize = 400;
/// Deepest `list_dir` goes.
const MAX_LIST_DEPTH: u64 = 6;
/// How deep `list_dir` goes when not told.
const DEFAULT_LIST_DEPTH: u64 = 1;

pub(super) const TOOL: Tool = Tool {
    name: NAME,
    spec,
    run,
};

fn spec() -> (String, Value) {
    (
        format!(
            "List a directory of the repository, sorted by name: directories end with `/`, files \
             show their size, symbolic links their target. Files ignored by .gitignore and `.git` \
             are not listed. At most {MAX_LIST_ENTRIES} entries."
        ),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory relative to the repository root; \".\" (the default) is the root."},
                "depth": {"type": "integer", "minimum": 1, "maximum": MAX_LIST_DEPTH, "description": format!("How many levels to list (default {DEFAULT_LIST_DEPTH}).")}
            },
            "additionalProperties": false
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListDirInput {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    depth: Option<u64>,
}

fn run(sandbox: &Sandbox, input: &Value, stop: &AtomicBool) -> Result<String, ToolError> {
    let input: ListDirInput = parse(NAME, input)?;
    let dir = resolve(sandbox, input.path.as_deref())?;
    if !dir.path.is_dir() {
        return Err(ToolError::NotADirectory(dir.rel));
    }
    let depth = input
        .depth
        .unwrap_or(DEFAULT_LIST_DEPTH)
        .clamp(1, MAX_LIST_DEPTH) as usize;
    let mut out = String::new();
    let mut shown = 0usize;
    let mut more = 0usize;
    for entry in sandbox.walker(&dir.path, Some(depth)).build() {
        if stop.load(Ordering::Relaxed) {
            return Err(ToolError::Stopped);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Sandbox;
    use crate::tools::fixture::{fixture, run};
    use serde_json::json;
    use std::fs;

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
    fn the_schema_states_the_codes_limits() {
        let (description, schema) = spec();
        assert!(description.ends_with(&format!("At most {MAX_LIST_ENTRIES} entries.")));
        assert_eq!(schema["properties"]["depth"]["maximum"], MAX_LIST_DEPTH);
    }
}
