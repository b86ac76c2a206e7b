//! The whole pipeline on the project's own records: `answer` (the built-in agent against the
//! tests' Chat Completions server, and the real Codex CLI against the tests' Responses server,
//! which leaves a file behind) → `judge` (the tests' judge server) → `bundle` → the core reads the
//! bundle back with the edited file, and `score` counts it. The bundle is left at
//! `<target>/tmp/pipeline/results.json` for the browser test (`e2e/pipeline.test.mjs`), which shows
//! it in the site: evidence, edited files and rationales from these very files.

use crate::answer::{Case, agent_api, case};
use crate::common::agent_cli::{self, tools_dir, wrapper};
use crate::common::codex::{self, Script};
use crate::common::{FakeApi, KEY, live_cmd, records, repoprobe, run_checked};
use repoprobe_core::metrics::evidence::changes;
use repoprobe_core::model::agent::AgentBlock;
use repoprobe_core::trajectories;
use repoprobe_test_support::reply::{Api, Mode};
use std::path::{Path, PathBuf};

/// The file the Codex run leaves in its worktree (the wrapper writes it after the real CLI ran).
const EDITED: &str = "AGENT-NOTES.md";

/// Where the browser test finds the bundle.
fn shared_bundle() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pipeline/results.json")
}

/// The real Codex CLI answers q1 through a wrapper that leaves [`EDITED`] behind after it ran.
fn codex_answers_q1_and_edits(c: &Case, codex_bin: &Path) {
    let seen = agent_cli::Seen::default();
    let server = codex::start(seen.clone(), Script::Answer);
    let cli = wrapper(
        c.dir.path(),
        // Its own path, whole: the sandbox shows the tools' folder, not the test's `..`.
        &std::fs::canonicalize(codex_bin).unwrap(),
        &format!("echo 'notes' > {EDITED}; printf '%s\\n' \"$out\""),
    );
    let r = c
        .cmd()
        .args([
            "--agent",
            "codex",
            "--model",
            codex::MODEL,
            "--question",
            "q1",
        ])
        .args(["--agent-timeout-s", "600", "--agent-bin"])
        .arg(&cli)
        .arg("--sandbox-expose")
        .arg(tools_dir())
        .env("OPENAI_API_KEY", codex::KEY)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.origin()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    let recs = records(&c.out);
    let codex_rec = recs
        .iter()
        .find(|a| a["model"] == codex::MODEL)
        .unwrap_or_else(|| panic!("no Codex answer: {stderr}"));
    assert_eq!(codex_rec["error"], serde_json::Value::Null, "{codex_rec}");
}

#[test]
fn answer_judge_and_bundle_keep_what_the_agent_edited_for_the_site() {
    let Some(codex_bin) = agent_cli::installed("codex", "REPOPROBE_CODEX") else {
        return;
    };
    let c = case(None);
    // The built-in agent, on every question.
    let api = agent_api();
    let r = c
        .cmd()
        .args(["--agent", "builtin", "--provider", "openai", "--model"])
        .args(["builtin-model", "--base-url"])
        .arg(&api.base)
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    codex_answers_q1_and_edits(&c, &codex_bin);

    // Judge both models' answers, then bundle what the runs wrote.
    let judge = FakeApi::start(Api::Openai, Mode::Schema);
    let judgments = c.dir.path().join("judgments.jsonl");
    let r = run_checked(
        live_cmd(&judge, "judge", &judgments)
            .arg(&c.bench)
            .arg(&c.out),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bundle = shared_bundle();
    std::fs::create_dir_all(bundle.parent().unwrap()).unwrap();
    let out = repoprobe(&[
        "bundle",
        c.bench.to_str().unwrap(),
        c.out.to_str().unwrap(),
        judgments.to_str().unwrap(),
        "--out",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // The core reads the bundle's answers as the site will: Codex's edit is there by name.
    let bytes = std::fs::read(&bundle).unwrap();
    let loaded = repoprobe_core::load(
        &[repoprobe_core::SourceFile {
            name: "results.json",
            bytes: &bytes,
        }],
        repoprobe_core::LoadOptions::default(),
    );
    let answers = &loaded.dataset.answers;
    let codex_answer = answers
        .iter()
        .find(|a| a.model == codex::MODEL)
        .expect("the bundle holds the Codex answer");
    assert_eq!(changes(codex_answer), [EDITED]);
    let block = AgentBlock::of(codex_answer).unwrap();
    assert_eq!(block.worktree_changed, Some(true));
    assert_eq!(block.name.as_deref(), Some("codex"));
    let builtin = answers
        .iter()
        .find(|a| a.model == "builtin-model")
        .expect("the bundle holds the built-in agent's answers");
    assert_eq!(
        AgentBlock::of(builtin).unwrap().worktree_changed,
        Some(false)
    );
    assert!(changes(builtin).is_empty());
    // Both models are scored, from the judge's items.
    let score = repoprobe(&["score", bundle.to_str().unwrap(), "--format", "json"]);
    assert_eq!(score.code, 0, "{}", score.stderr);
    let report: serde_json::Value = serde_json::from_str(&score.stdout).unwrap();
    let models: Vec<&str> = report["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert!(
        models.contains(&"builtin-model") && models.contains(&codex::MODEL),
        "{models:?}"
    );
    // Every run's trajectory is in the trajectories file beside the bundle, found by its index.
    let file = bundle.with_file_name("results.trajectories.jsonl");
    let bytes = std::fs::read(&file).unwrap();
    let index = std::fs::read(file.with_extension("index.json")).unwrap();
    let index = trajectories::Index::read(&index, bytes.len() as u64).unwrap();
    assert_eq!(index.entries.len(), answers.len(), "{}", out.stderr);
    for e in &index.entries {
        let line = &bytes[e.offset as usize..(e.offset + e.length) as usize];
        let (key, t) = trajectories::read_line(line).unwrap();
        assert_eq!(key, e.key);
        assert!(t.problems().is_empty(), "{:?}", t.problems());
        assert_eq!(t.extra_str("question_id"), Some(key.question_id.as_str()));
    }
    // The one made without an index reads the same.
    let mut scan = trajectories::Scanner::new();
    scan.feed(&bytes);
    assert_eq!(scan.finish().0, index);
}
