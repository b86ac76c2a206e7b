//! Which tool is which kind, across the agents we run: the built-in agent's tools, Claude
//! Code's, Codex's items and Gemini CLI's (names compared case-insensitively). A tool not
//! named here is `other`: it reads nothing, so an unknown agent's reads are never guessed.

use serde_json::{Map, Value};

/// What a tool call does, as retrieval sees it (in the order the site lists kinds).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum ToolKind {
    /// Shows a file's contents.
    Read,
    /// Returns matches or paths for a pattern.
    Search,
    /// Lists a directory.
    List,
    /// Runs a shell command (read again by [`super::shell`]).
    Shell,
    /// Changes a file.
    Edit,
    /// Fetches or searches the web.
    Web,
    Other,
}

impl ToolKind {
    pub const ALL: &'static [ToolKind] = <ToolKind as strum::VariantArray>::VARIANTS;

    /// The kind [`ToolKind::as_str`] names.
    pub fn parse(s: &str) -> Option<ToolKind> {
        s.parse().ok()
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The kind of the tool `name`.
pub fn kind_of(name: &str) -> ToolKind {
    match name.to_ascii_lowercase().as_str() {
        // builtin read_file; Claude Code Read; Gemini read_file, read_many_files.
        "read_file" | "read" | "read_many_files" | "view" | "view_file" | "open_file"
        | "notebookread" => ToolKind::Read,
        // builtin search, find_symbol; Claude Code Grep, Glob; Gemini search_file_content,
        // glob (grep_search in later versions).
        "search"
        | "find_symbol"
        | "grep"
        | "glob"
        | "search_file_content"
        | "grep_search"
        | "codebase_search"
        | "file_search" => ToolKind::Search,
        // builtin list_dir; Claude Code LS; Gemini list_directory.
        "list_dir" | "ls" | "list_directory" | "list_files" => ToolKind::List,
        // Claude Code Bash; Codex command_execution; Gemini run_shell_command.
        "bash" | "shell" | "command_execution" | "run_shell_command" | "exec_command"
        | "local_shell" => ToolKind::Shell,
        // Claude Code Edit, Write, MultiEdit, NotebookEdit; Codex file_change; Gemini replace,
        // write_file.
        "edit" | "write" | "multiedit" | "notebookedit" | "file_change" | "apply_patch"
        | "replace" | "write_file" => ToolKind::Edit,
        "webfetch" | "websearch" | "web_fetch" | "web_search" | "google_web_search" => {
            ToolKind::Web
        }
        _ => ToolKind::Other,
    }
}

/// The file paths a read tool's arguments name: `path`, `file_path`, `absolute_path`, or each
/// entry of `paths` that is not a glob.
pub(super) fn read_paths(args: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = ["path", "file_path", "absolute_path", "filename"]
        .iter()
        .filter_map(|k| args.get(*k)?.as_str())
        .take(1)
        .map(str::to_string)
        .collect();
    if let Some(Value::Array(paths)) = args.get("paths") {
        out.extend(
            paths
                .iter()
                .filter_map(Value::as_str)
                .filter(|p| !p.contains(['*', '?', '[', '{']))
                .map(str::to_string),
        );
    }
    out
}
