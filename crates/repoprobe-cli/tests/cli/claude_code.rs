//! The Claude Code preset end to end: `repoprobe answer --agent claude-code` runs the REAL
//! Claude Code CLI (installed by `scripts/setup-agents.sh`, or `REPOPROBE_CLAUDE`) in a worktree
//! of a real git repository, against a loopback Anthropic-compatible server that makes it call
//! Glob and Read before it answers. Skipped, with a message, when the CLI is not installed.

use crate::common;

use common::claude::{self, FILE_CONTENT, KEY, Seen, claude_binary};
use common::{BIN, git, records};
use serde_json::{Value, json};
use std::process::Command;

/// Runs `answer --agent claude-code` on one question; returns (record, stderr, requests seen).
fn answer(endless: bool, max_turns: &str) -> Option<(Value, String, Seen, tempfile::TempDir)> {
    let claude = claude_binary()?;
    Some(answer_with(&claude, endless, max_turns))
}

/// [`answer`] with the CLI at `claude`.
fn answer_with(
    claude: &std::path::Path,
    endless: bool,
    max_turns: &str,
) -> (Value, String, Seen, tempfile::TempDir) {
    answer_on_path(
        claude,
        endless,
        max_turns,
        std::env::var_os("PATH").unwrap(),
        false,
    )
}

/// [`answer_with`], PATH being `path`; `gateway`: the key is in `GATEWAY_KEY` (`--key-env`) and
/// the server's address given by `--agent-api-url`, no `ANTHROPIC_*` variable set (a gateway in
/// front of another provider's model).
fn answer_on_path(
    claude: &std::path::Path,
    endless: bool,
    max_turns: &str,
    path: std::ffi::OsString,
    gateway: bool,
) -> (Value, String, Seen, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin");
    std::fs::create_dir_all(origin.join("docs")).unwrap();
    git(&origin, &["init", "-q", "-b", "main"]);
    std::fs::write(origin.join("docs/notes.txt"), format!("{FILE_CONTENT}\n")).unwrap();
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-q", "-m", "notes"]);
    let sha = git(&origin, &["rev-parse", "HEAD"]);
    let mut q: Value = serde_json::from_str(
        std::fs::read_to_string(common::BENCHMARK)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    q["repo"] = json!({"name": "acme/delorean", "url": "", "commit": sha});
    let bench = dir.path().join("benchmark.jsonl");
    std::fs::write(&bench, format!("{q}\n")).unwrap();

    let seen: Seen = Seen::default();
    let server = claude::start(seen.clone(), endless);
    let out = dir.path().join("answers.jsonl");
    let mut c = Command::new(BIN);
    c.env_clear().env("PATH", path);
    let mut endpoint = Vec::new();
    if gateway {
        c.env("GATEWAY_KEY", KEY);
        endpoint = vec![
            "--key-env".into(),
            "GATEWAY_KEY".into(),
            "--agent-api-url".into(),
            server.origin(),
        ];
    } else {
        c.env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", server.origin());
    }
    let r = c
        .arg("answer")
        .arg(&bench)
        .arg("--out")
        .arg(&out)
        .arg("--clone-cache")
        .arg(dir.path().join("cache"))
        .arg("--repo-map")
        .arg(format!("acme/delorean={}", origin.display()))
        .args([
            "--agent",
            "claude-code",
            "--model",
            "claude-sonnet-4-5",
            "--max-turns",
            max_turns,
        ])
        .args(["--agent-timeout-s", "120", "--agent-bin"])
        .arg(claude)
        .arg("--sandbox-expose")
        .arg(common::agent_cli::tools_dir())
        .args(&endpoint)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
    assert!(!stderr.contains(KEY), "the key leaked: {stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(KEY), "the key is in the answers: {text}");
    let recs = records(&out);
    assert_eq!(recs.len(), 1, "{stderr}");
    (recs[0].clone(), stderr, seen, dir)
}

#[test]
fn claude_code_holds_a_placeholder_while_the_server_sees_the_real_key() {
    let Some(claude) = claude_binary() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let probe = common::agent_cli::env_probe(tmp.path(), &claude, KEY);
    let (rec, stderr, seen, dir) = answer_with(&probe, false, "5");
    assert_eq!(rec["error"], Value::Null, "{rec}\n{stderr}");
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.is_empty());
    for (path, key, _) in &requests {
        assert_eq!(key.as_deref(), Some(KEY), "{path}");
    }
    common::agent_cli::assert_only_a_placeholder_inside(&common::trajectory::raw_path(
        dir.path(),
        &rec,
    ));
}

#[test]
fn claude_code_behind_a_gateway_gets_the_key_of_the_named_variable_through_the_proxy() {
    let Some(claude) = claude_binary() else {
        return;
    };
    let (rec, stderr, seen, _dir) =
        answer_on_path(&claude, false, "5", std::env::var_os("PATH").unwrap(), true);
    assert_eq!(rec["error"], Value::Null, "{rec}\n{stderr}");
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.is_empty());
    for (path, key, _) in &requests {
        assert_eq!(key.as_deref(), Some(KEY), "{path}");
    }
}

#[test]
fn claude_code_answers_through_its_read_only_tools_and_the_record_says_so() {
    let Some((a, stderr, seen, dir)) = answer(false, "5") else {
        return;
    };
    assert_eq!(a["error"], Value::Null, "{a}\n{stderr}");
    let text = a["answer"].as_str().unwrap();
    assert!(
        text.contains(FILE_CONTENT),
        "only the Read tool could have seen it: {text}"
    );
    assert!(text.contains("my key is [redacted]"), "{text}");
    let agent = &a["agent"];
    assert_eq!(agent["name"], "claude-code");
    assert!(
        agent["version"].as_str().unwrap().contains("Claude Code"),
        "{agent}"
    );
    assert_eq!(agent["turns"], 3);
    assert_eq!(
        agent["worktree_changed"], false,
        "reading is not editing: {agent}"
    );
    assert_eq!(agent["prompt_version"], "answer-v1");
    assert_eq!(agent["cost_source"], "reported by the agent");
    assert!(a["usage"]["input_tokens"].as_u64().unwrap() >= 300, "{a}");
    assert!(a["usage"]["cost_usd"].as_f64().is_some(), "{a}");
    let requests = seen.lock().unwrap().clone();
    let tools: Vec<&str> = requests[0].2["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(tools, ["Glob", "Grep", "Read"], "read-only tools only");
    // The prompt is the versioned template with the question and the pinned commit.
    let first = requests[0].2["messages"][0].to_string();
    assert!(
        first.contains("Question q1?") && first.contains(agent["commit"].as_str().unwrap()),
        "{first}"
    );
    let raw = common::trajectory::raw(dir.path(), &a).to_string();
    assert!(raw.contains("num_turns") && !raw.contains(KEY));
    // The trajectory: Claude Code's Glob and Read calls with their results, the file it read
    // in the record.
    let t = common::trajectory::trajectory(dir.path(), &a, "claude-code");
    assert!(!t.to_string().contains(KEY));
    let calls = common::trajectory::tool_calls(&t);
    let names: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["Glob", "Read"], "{calls:?}");
    assert!(calls[1].2.contains(FILE_CONTENT), "{calls:?}");
    assert_eq!(
        agent["files_read"],
        serde_json::json!(["docs/notes.txt"]),
        "{agent}"
    );
    assert_eq!(agent["tool_calls"]["read"], 1, "{agent}");
    assert_eq!(t["final_metrics"]["extra"]["turns"], 3, "{t}");
}

#[test]
fn claude_code_stopped_by_max_turns_is_a_failed_run_without_an_answer() {
    let Some((a, stderr, _, _dir)) = answer(true, "2") else {
        return;
    };
    assert_eq!(a["answer"], Value::Null, "{a}");
    let err = a["error"].as_str().unwrap();
    assert!(
        err.starts_with("Claude Code: error_max_turns"),
        "{err}\n{stderr}"
    );
    assert!(stderr.contains("no answer: q1"), "{stderr}");
}

#[test]
fn claude_code_in_a_sandbox_that_cannot_start_is_a_failure_to_retry() {
    let Some(claude) = claude_binary() else {
        return;
    };
    let env = [
        ("ANTHROPIC_API_KEY", KEY.to_string()),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9".to_string()),
    ];
    common::agent_cli::assert_a_broken_sandbox_is_a_failure_to_retry(
        "claude-code",
        "claude-sonnet-4-5",
        &claude,
        &env,
        KEY,
    );
}

#[test]
fn claude_code_found_on_path_through_a_symlinked_directory_runs_in_its_sandbox() {
    let Some(_claude) = claude_binary() else {
        return;
    };
    let links = tempfile::tempdir().unwrap();
    let path = common::agent_cli::path_through_a_link(links.path());
    let (a, stderr, _, _dir) = answer_on_path(
        std::path::Path::new("claude"),
        false,
        "5",
        path.into(),
        false,
    );
    assert_eq!(a["error"], Value::Null, "{a}\n{stderr}");
    assert!(a["answer"].as_str().unwrap().contains(FILE_CONTENT), "{a}");
}
