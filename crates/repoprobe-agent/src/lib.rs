//! The agents of `repoprobe answer`, which answer a question by exploring its repository.
//! `workspace` gives each question a fresh worktree at its pinned commit (from a cache of
//! clones) and says afterwards whether the agent changed anything; `external` runs a coding-agent
//! CLI (Claude Code, Codex, Gemini, any command) in it; `tools` and `builtin` are our own
//! read-only tool-calling agent for any model behind the judge's client; `sandbox` confines
//! every process an external agent run spawns (bubblewrap) and `proxy` is its only way out (the
//! model's API, the key added outside); `git` is every git command we run; `run` is one
//! question answered in its worktree, however the agent, and `verdict` how a run ended.
//! No flags and no terminal here: the CLI reads the flags, reports and writes the records.

pub mod atif;
pub mod builtin;
pub mod external;
pub mod git;
pub mod proxy;
pub mod run;
pub mod sandbox;
pub mod tools;
pub mod verdict;
pub mod workspace;

#[cfg(test)]
mod testutil;
