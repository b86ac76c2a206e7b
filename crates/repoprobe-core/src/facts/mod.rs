//! Facts derived once from a run's trajectory and written in the answer record's `agent` block
//! (docs/format.md#what-the-agent-read), so that scoring never reads a transcript: the model
//! responses (`turns`, one meaning for every agent), the tool calls by kind, the files whose
//! contents the agent saw (`files_read`) and the files its searches returned (`files_searched`).
//!
//! Every agent's tools are named here, whichever module converts its output: the facts of two
//! agents are comparable only when one table decides what a read is.

pub mod shell;
mod tools;

use crate::model::repo_path;
use crate::model::trajectory::{Step, ToolCall, Trajectory};
use serde_json::Value;
use std::collections::BTreeMap;
pub use tools::{ToolKind, kind_of};

/// What a trajectory says the agent did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Model responses.
    pub turns: u64,
    /// Tool calls by [`ToolKind::as_str`]; a shell command counted by what it did (a `cat` is a
    /// read).
    pub tool_calls: BTreeMap<String, u64>,
    /// Repository paths whose contents the agent saw, in the order first seen, each once.
    pub files_read: Vec<String>,
    /// Repository paths its searches returned, in the order first seen, each once.
    pub files_searched: Vec<String>,
}

impl Facts {
    /// The facts of `t`; its `extra.worktree` (the root as the agent saw it) makes absolute
    /// paths relative.
    pub fn of(t: &Trajectory) -> Facts {
        let root = t.extra_str("worktree");
        let mut f = Collect {
            root,
            facts: Facts::default(),
        };
        for step in &t.steps {
            if step.is_model_response() {
                f.facts.turns += 1;
            }
            for call in step.tool_calls.iter().flatten() {
                f.call(step, call);
            }
        }
        f.facts
    }
}

struct Collect<'a> {
    root: Option<&'a str>,
    facts: Facts,
}

impl Collect<'_> {
    fn call(&mut self, step: &Step, call: &ToolCall) {
        let result = step.result_of(&call.tool_call_id);
        let failed = result.is_some_and(|r| r.is_error());
        let output = result.map(|r| r.text()).unwrap_or_default();
        let mut kind = kind_of(&call.function_name);
        match kind {
            ToolKind::Read if !failed => {
                for p in tools::read_paths(&call.arguments) {
                    self.read(&p);
                }
            }
            ToolKind::Search if !failed => self.searched(&output),
            ToolKind::Shell => {
                let facts = match call.arguments.get("command") {
                    Some(Value::String(c)) => shell::read_command(c),
                    Some(Value::Array(a)) => shell::read_argv(
                        &a.iter()
                            .filter_map(|w| w.as_str().map(str::to_string))
                            .collect::<Vec<_>>(),
                    ),
                    _ => shell::ShellFacts::default(),
                };
                let root = self.root;
                if facts
                    .written
                    .iter()
                    .any(|p| repo_path::under_root(p, root).is_ok() || p == ".")
                {
                    // An attempt to change the repository, whatever else the command did.
                    kind = ToolKind::Edit;
                } else if !facts.read.is_empty() {
                    kind = ToolKind::Read;
                    if !failed {
                        for p in &facts.read {
                            self.read(p);
                        }
                    }
                } else if facts.searched {
                    kind = ToolKind::Search;
                    if !failed {
                        self.searched(&output);
                    }
                } else if facts.listed {
                    kind = ToolKind::List;
                }
            }
            _ => {}
        }
        *self
            .facts
            .tool_calls
            .entry(kind.as_str().to_string())
            .or_default() += 1;
    }

    fn read(&mut self, path: &str) {
        if let Ok(p) = repo_path::under_root(path, self.root) {
            push_once(&mut self.facts.files_read, p);
        }
    }

    /// The paths in a search's output: a line that is a path, or starts with one before `:`
    /// (`path:12: text`), or Gemini's `File: path`.
    fn searched(&mut self, output: &str) {
        for line in output.lines() {
            let line = line.trim();
            let line = line.strip_prefix("File: ").unwrap_or(line);
            let candidate = line.split(':').next().unwrap_or("");
            if candidate.is_empty()
                || candidate.contains(char::is_whitespace)
                || !candidate.contains(['.', '/'])
            {
                continue;
            }
            if let Ok(p) = repo_path::under_root(candidate, self.root) {
                push_once(&mut self.facts.files_searched, p);
            }
        }
    }
}

fn push_once(list: &mut Vec<String>, p: String) {
    if !list.contains(&p) {
        list.push(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trajectory::{Observation, ObservationResult, StepSource, TrajectoryAgent};
    use serde_json::{Map, json};

    fn trajectory(root: &str, calls: Vec<(ToolCall, &str, bool)>) -> Trajectory {
        let mut t = Trajectory::new(TrajectoryAgent::default());
        t.extra = Some(Map::from_iter([("worktree".to_string(), json!(root))]));
        t.push(Step::new(StepSource::User, "q"));
        for (call, out, failed) in calls {
            let s = t.push(Step::new(StepSource::Agent, ""));
            s.observation = Some(Observation {
                results: vec![ObservationResult::of(&call.tool_call_id, out, failed)],
            });
            s.tool_calls = Some(vec![call]);
        }
        t.push(Step::new(StepSource::Agent, "the answer"));
        t
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        ToolCall::new(id, name, args)
    }

    #[test]
    fn reads_searches_and_listings_are_told_apart_across_agents() {
        let t = trajectory(
            "/wt",
            vec![
                (
                    call("1", "list_dir", json!({"path": "."})),
                    "src/\nREADME.md",
                    false,
                ),
                (
                    call("2", "Read", json!({"file_path": "/wt/src/lib.rs"})),
                    "1\tfn x",
                    false,
                ),
                (
                    call("3", "read_file", json!({"path": "./src/lib.rs"})),
                    "…",
                    false,
                ),
                (
                    call("4", "read_file", json!({"path": "missing.rs"})),
                    "not found",
                    true,
                ),
                (
                    call("5", "Grep", json!({"pattern": "x"})),
                    "/wt/src/a.rs\n/wt/src/b.rs\nFound 2 files",
                    false,
                ),
                (
                    call("6", "search", json!({"pattern": "y"})),
                    "src/c.rs:3: y()",
                    false,
                ),
                (
                    call(
                        "7",
                        "command_execution",
                        json!({"command": "bash -lc 'sed -n 1,40p src/d.rs'"}),
                    ),
                    "…",
                    false,
                ),
                (call("8", "Bash", json!({"command": "ls -la"})), "…", false),
                (
                    call("9", "read_file", json!({"path": "../../etc/passwd"})),
                    "…",
                    false,
                ),
            ],
        );
        let f = Facts::of(&t);
        assert_eq!(f.turns, 10);
        assert_eq!(f.files_read, ["src/lib.rs", "src/d.rs"]);
        assert_eq!(f.files_searched, ["src/a.rs", "src/b.rs", "src/c.rs"]);
        let kinds: Vec<(&str, u64)> = f.tool_calls.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(kinds, [("list", 2), ("read", 5), ("search", 2)]);
    }

    #[test]
    fn edits_are_counted_refused_or_not_and_shell_writes_into_the_worktree_are_edits() {
        let t = trajectory(
            "/wt",
            vec![
                (
                    call("1", "Edit", json!({"file_path": "/wt/src/a.rs"})),
                    "refused: read-only file system",
                    true,
                ),
                (
                    call("2", "Bash", json!({"command": "echo x > /wt/src/b.rs"})),
                    "Read-only file system",
                    true,
                ),
                (
                    call("3", "Bash", json!({"command": "sed -i 's/a/b/' src/c.rs"})),
                    "",
                    false,
                ),
                (
                    call("4", "Bash", json!({"command": "cat src/d.rs > /tmp/d"})),
                    "",
                    false,
                ),
                (
                    call("5", "Bash", json!({"command": "cat src/e.rs 2>/dev/null"})),
                    "fn e",
                    false,
                ),
            ],
        );
        let f = Facts::of(&t);
        let kinds: Vec<(&str, u64)> = f.tool_calls.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        // The write to /tmp is outside the repository: a shell command, not an edit.
        assert_eq!(kinds, [("edit", 3), ("read", 1), ("shell", 1)]);
        assert_eq!(f.files_read, ["src/e.rs"]);
    }

    #[test]
    fn a_run_that_read_nothing_has_an_empty_list_and_a_turn_per_response() {
        let f = Facts::of(&trajectory("/wt", vec![]));
        assert_eq!(f.turns, 1);
        assert!(f.files_read.is_empty() && f.tool_calls.is_empty());
    }
}
