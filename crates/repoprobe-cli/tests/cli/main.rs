//! The end-to-end tests of the `repoprobe` binary, one test binary (one link, and the shared
//! helpers of `common` used, not copied): every test runs the real executable with a cleared
//! environment; the live calls against the tests' fake API server.

mod common;

mod answer;
mod batch;
mod claude_code;
mod cli;
mod cluster;
mod codex;
mod confinement;
mod curate;
mod curate_pipeline;
mod curate_verify;
mod docs_flags;
mod docs_recipes;
mod dry_run;
mod evidence;
mod gemini;
mod git_hardening;
mod judge;
mod judges;
mod llm_commands;
mod local_model;
mod long_runs;
mod pipeline;
mod plan;
mod retrieval;
mod review;
mod server_quirks;
