//! `repoprobe answer` end to end: the real binary on a real git repository made by each test,
//! with the built-in agent driven by a loopback OpenAI-compatible server through real tool calls,
//! and the `command` preset for what any agent CLI does (edits, slowness, kills).

use crate::common;

use common::{BENCHMARK, BIN, KEY, git, records};
use repoprobe_test_support::reply::openai_message;
use repoprobe_test_support::{FakeServer, Response};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A repository with two commits; returns (path, first sha, second sha).
fn repo(dir: &Path) -> (PathBuf, String, String) {
    let r = dir.join("widget");
    std::fs::create_dir_all(r.join("src")).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    std::fs::write(r.join("src/lib.rs"), "pub fn start() { marker_alpha(); }\n").unwrap();
    std::fs::write(r.join("README.md"), "widget\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let first = git(&r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join("src/lib.rs"), "pub fn start() { marker_beta(); }\n").unwrap();
    git(&r, &["commit", "-q", "-am", "second"]);
    let second = git(&r, &["rev-parse", "HEAD"]);
    (r, first, second)
}

/// The golden benchmark's questions, all on `acme/widget` at `commit` (q2 at `q2_commit`).
fn benchmark(dir: &Path, commit: &str, q2_commit: &str) -> PathBuf {
    let p = dir.join("benchmark.jsonl");
    let text: String = std::fs::read_to_string(BENCHMARK)
        .unwrap()
        .lines()
        .map(|l| {
            let mut q: Value = serde_json::from_str(l).unwrap();
            let c = if q["id"] == "q2" { q2_commit } else { commit };
            q["repo"]["name"] = json!("acme/widget");
            q["repo"]["url"] = json!("");
            q["repo"]["commit"] = json!(c);
            format!("{q}\n")
        })
        .collect();
    std::fs::write(&p, text).unwrap();
    p
}

/// One test's world: a repository with two commits, the golden questions pinned to its first
/// commit (q2 to `q2_commit` when given), and where the answers go.
pub(crate) struct Case {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) repo: PathBuf,
    first: String,
    pub(crate) bench: PathBuf,
    pub(crate) out: PathBuf,
}

pub(crate) fn case(q2_commit: Option<&str>) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first, _second) = repo(dir.path());
    let bench = benchmark(dir.path(), &first, q2_commit.unwrap_or(&first));
    let out = dir.path().join("answers.jsonl");
    Case {
        dir,
        repo,
        first,
        bench,
        out,
    }
}

impl Case {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `repoprobe answer` on this case's benchmark, clone cache and repository map.
    pub(crate) fn cmd(&self) -> Command {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .arg("answer")
            .arg(&self.bench)
            .arg("--out")
            .arg(&self.out)
            .arg("--clone-cache")
            .arg(self.path().join("cache"))
            .arg("--repo-map")
            .arg(format!("acme/widget={}", self.repo.display()));
        c
    }
}

/// A loopback Chat Completions server playing an agent: it asks for `read_file src/lib.rs`,
/// then `search start`, then answers quoting what the tools returned. It records the tool
/// results it was sent.
pub(crate) struct AgentApi {
    pub(crate) base: String,
    pub(crate) seen: Arc<Mutex<Vec<String>>>,
}

pub(crate) fn agent_api() -> AgentApi {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let server = FakeServer::start(move |req| {
        assert!(
            req.header("authorization")
                .is_some_and(|auth| auth.ends_with(KEY)),
            "the key is not in the authorization header"
        );
        let req = req.json();
        let msgs = req["messages"].as_array().unwrap();
        let tool_results: Vec<String> = msgs
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect();
        let tools: Vec<&str> = req["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["function"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            tools.contains(&"read_file") && tools.contains(&"search"),
            "{tools:?}"
        );
        let message = match tool_results.len() {
            0 => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                "type": "function", "function": {"name": "read_file",
                "arguments": "{\"path\": \"src/lib.rs\"}"}}]}),
            1 => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c2",
                "type": "function", "function": {"name": "search",
                "arguments": "{\"pattern\": \"fn start\"}"}}]}),
            _ => {
                s.lock().unwrap().extend(tool_results.iter().cloned());
                json!({"role": "assistant", "content":
                    format!("It starts in src/lib.rs. The tools said:\n{}", tool_results.join("\n---\n"))})
            }
        };
        Response::json(200, openai_message(message))
    });
    AgentApi {
        base: format!("{}/v1", server.origin()),
        seen,
    }
}

#[test]
fn the_builtin_agent_answers_from_the_pinned_commit_with_real_tool_results() {
    let c = case(None);
    let api = agent_api();
    let r = c
        .cmd()
        .args([
            "--agent",
            "builtin",
            "--provider",
            "openai",
            "--model",
            "m1",
            "--base-url",
        ])
        .arg(&api.base)
        .args(["--question", "q1"])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(KEY));
    let recs = records(&c.out);
    assert_eq!(recs.len(), 1);
    let a = &recs[0];
    assert_eq!(
        (
            a["question_id"].as_str(),
            a["model"].as_str(),
            a["attempt"].as_u64()
        ),
        (Some("q1"), Some("m1"), Some(0))
    );
    let answer = a["answer"].as_str().unwrap();
    // The worktree is at the first commit: the tool saw marker_alpha, never marker_beta.
    assert!(
        answer.contains("marker_alpha") && !answer.contains("marker_beta"),
        "{answer}"
    );
    assert!(
        answer.contains("src/lib.rs:1:"),
        "the search result: {answer}"
    );
    assert_eq!(a["error"], Value::Null);
    assert_eq!(a["agent"]["name"], "builtin");
    assert_eq!(a["agent"]["commit"], c.first.as_str());
    assert_eq!(a["agent"]["worktree_changed"], false);
    assert_eq!(a["agent"]["prompt_version"], "answer-v1");
    assert_eq!(a["agent"]["turns"], 3);
    assert_eq!(a["usage"]["input_tokens"], 150);
    let seen = api.seen.lock().unwrap().clone();
    assert!(
        seen[0].contains("marker_alpha"),
        "the server got the real file: {seen:?}"
    );
    // The trajectory (ATIF) holds every tool call with what it really returned, and the
    // record the files whose contents the agent saw.
    let t = common::trajectory::trajectory(c.path(), a, "builtin");
    assert_eq!(t["agent"]["name"], "builtin");
    assert_eq!(t["extra"]["question_id"], "q1");
    assert_eq!(t["extra"]["commit"], c.first.as_str());
    let calls = common::trajectory::tool_calls(&t);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, "read_file");
    assert!(calls[0].2.contains("marker_alpha"), "{calls:?}");
    assert_eq!(a["agent"]["files_read"], json!(["src/lib.rs"]), "{a}");
    assert_eq!(a["agent"]["tool_calls"]["read"], 1, "{a}");
    assert_eq!(a["agent"]["tool_calls"]["search"], 1, "{a}");
    assert_eq!(a["agent"]["files_searched"], json!(["src/lib.rs"]), "{a}");
    // The raw transcript stays beside it.
    let raw = common::trajectory::raw(c.path(), a);
    assert_eq!(raw["agent"], "builtin");
    assert!(raw["transcript"].as_array().is_some_and(|e| e.len() > 4));
    assert!(!std::fs::read_to_string(&c.out).unwrap().contains(KEY));
    // The worktree is gone; the clone cache stays.
    assert_eq!(
        std::fs::read_dir(c.path().join("cache/worktrees")).map_or(0, |d| d.count()),
        0
    );
}

#[test]
fn a_commit_that_cannot_be_had_fails_its_question_only_and_is_tried_again() {
    let c = case(Some("1234567890123456789012345678901234567890"));
    let run = || {
        c.cmd()
            .args([
                "--agent",
                "command",
                "--model",
                "sh",
                "--command",
                "cat {prompt_file} | head -c 40; echo",
            ])
            .output()
            .unwrap()
    };
    let r = run();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("q2") && stderr.contains("1234567890123456789012345678901234567890"),
        "{stderr}"
    );
    let ids: Vec<String> = records(&c.out)
        .iter()
        .map(|r| r["question_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(!ids.contains(&"q2".to_string()));
    let failures = records(&c.path().join("answers.failures.ndjson"));
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["question_id"], "q2");
    assert_eq!(failures[0]["status"], "could_not_run");
    assert_eq!(failures[0]["cause"], "checkout");
    let again = run();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("0 answered, 2 already done") && stderr.contains("1 failed"),
        "{stderr}"
    );
}

#[test]
fn an_agent_that_edits_its_worktree_is_recorded_as_such() {
    let c = case(None);
    let r = c
        .cmd()
        .args([
            "--agent",
            "command",
            "--model",
            "sh",
            "--question",
            "q1",
            "--command",
            "echo patched > {workdir}/src/lib.rs; echo new > {workdir}/NOTES.md; echo I fixed it",
        ])
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let a = &records(&c.out)[0];
    assert_eq!(a["answer"], "I fixed it");
    assert_eq!(a["agent"]["worktree_changed"], true);
    let changed = a["agent"]["changes"]["files"].to_string();
    assert!(
        changed.contains("src/lib.rs") && changed.contains("modified"),
        "{changed}"
    );
    assert!(
        changed.contains("NOTES.md") && changed.contains("untracked"),
        "{changed}"
    );
    // The edit stayed in its worktree: the repository itself is untouched.
    assert!(
        std::fs::read_to_string(c.repo.join("src/lib.rs"))
            .unwrap()
            .contains("marker_beta")
    );
}

#[test]
fn a_run_killed_with_sigkill_resumes_with_nothing_lost_or_duplicated() {
    let c = case(None);
    let cmd = || {
        let mut c = c.cmd();
        c.args([
            "--agent",
            "command",
            "--model",
            "sh",
            "--attempts",
            "3",
            "--concurrency",
            "1",
            "--command",
            "sleep 0.3; echo answer from {model}",
        ])
        .stderr(std::process::Stdio::null());
        c
    };
    let mut child = cmd().spawn().unwrap();
    common::wait::until("two answers written", Duration::from_secs(60), || {
        std::fs::read_to_string(&c.out).is_ok_and(|t| t.lines().count() >= 2)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let r = cmd().stderr(std::process::Stdio::piped()).output().unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let mut keys: Vec<(String, u64)> = records(&c.out)
        .iter()
        .map(|r| {
            (
                r["question_id"].as_str().unwrap().to_string(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    let want: Vec<(String, u64)> = ["q1", "q2", "q3"]
        .iter()
        .flat_map(|q| (0..3).map(move |a| (q.to_string(), a)))
        .collect();
    assert_eq!(keys, want, "every (question, attempt) exactly once");
    // The answers validate as docs/format.md#answer answers.
    let v = Command::new(BIN)
        .arg("validate")
        .arg(&c.bench)
        .arg(&c.out)
        .output()
        .unwrap();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stderr)
    );
}

#[test]
fn a_missing_agent_cli_stops_the_run_before_anything_is_checked_out() {
    let c = case(None);
    let r = c
        .cmd()
        .args([
            "--agent",
            "claude-code",
            "--model",
            "m",
            "--agent-bin",
            "/nonexistent/claude",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("claude-code CLI cannot run") && stderr.contains("--agent-bin"),
        "{stderr}"
    );
    assert!(!c.path().join("cache/worktrees").exists());
}

/// What Claude Code printed when it never reached a model: its API refused the key (2.1.332,
/// `api_error_status` 401), or, captured by other projects from the real CLI, a login that had
/// expired (an assistant message of its own from the model `<synthetic>`, typed
/// `authentication_failed`, then an `is_error` result, 0 tokens).
const CLAUDE_COULD_NOT_AUTHENTICATE: [&str; 2] = [
    r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 401 invalid x-api-key","api_error_status":401,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0}}"#,
    r#"{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"Failed to authenticate: OAuth session expired and could not be refreshed"}],"usage":{"input_tokens":0,"output_tokens":0}},"error":"authentication_failed"}
{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","duration_ms":247,"num_turns":1,"result":"Failed to authenticate: OAuth session expired and could not be refreshed","usage":{"input_tokens":0,"output_tokens":0}}"#,
];

#[test]
fn an_agent_that_could_not_authenticate_leaves_a_failure_to_retry_not_a_zero() {
    for (n, printed) in CLAUDE_COULD_NOT_AUTHENTICATE.iter().enumerate() {
        let c = case(None);
        let fake = c.path().join("fake-claude");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo \"2.1.332 (Claude Code)\"; exit 0; fi\n\
                 cat > /dev/null\ncat <<'EOF'\n{printed}\nEOF\nexit 1\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let r = c
            .cmd()
            .args(["--agent", "claude-code", "--model", "m", "--question", "q1"])
            .arg("--agent-bin")
            .arg(&fake)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{n}: {stderr}");
        assert!(
            records(&c.out).is_empty(),
            "{n}: no answer record (and no score) for a run that never reached a model"
        );
        let f = records(&c.path().join("answers.failures.ndjson"));
        assert_eq!(f.len(), 1, "{n}: {stderr}");
        assert_eq!(
            (f[0]["status"].as_str(), f[0]["cause"].as_str()),
            (Some("could_not_run"), Some("auth")),
            "{n}: {}",
            f[0]
        );
        assert!(
            stderr.contains("1 failed (1 could not run: 1 authentication; see "),
            "{n}: {stderr}"
        );
    }
}

#[test]
fn the_builtin_agent_whose_model_api_refuses_leaves_a_failure_to_retry_not_a_zero() {
    let c = case(None);
    let server = FakeServer::start(|_| {
        Response::json(401, json!({"error": {"message": "bad key"}}).to_string())
    });
    let r = c
        .cmd()
        .args([
            "--agent",
            "builtin",
            "--provider",
            "openai",
            "--model",
            "m1",
        ])
        .args(["--question", "q1", "--max-http-retries", "0", "--base-url"])
        .arg(format!("{}/v1", server.origin()))
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(records(&c.out).is_empty(), "no answer record: {stderr}");
    let f = records(&c.path().join("answers.failures.ndjson"));
    assert_eq!(f.len(), 1, "{stderr}");
    let reason = f[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("model call failed: HTTP 401"),
        "{reason}"
    );
    assert_eq!(f[0]["cause"], "auth", "{}", f[0]);
}

#[test]
fn a_run_whose_tmp_cannot_be_made_is_a_failure_to_retry_and_the_retry_answers() {
    let c = case(None);
    // The run's scratch `tmp` (the sandbox's /tmp for the agent) cannot be made: a file is in
    // its place. The agent never ran; nothing about it is an answer.
    let scratch = c.path().join("cache/worktrees/q1__m__a0.scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join("tmp"), "in the way").unwrap();
    let run = || {
        c.cmd()
            .args(["--agent", "command", "--model", "m", "--question", "q1"])
            .args(["--command", "echo the answer"])
            .output()
            .unwrap()
    };
    let r = run();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(records(&c.out).is_empty(), "{stderr}");
    let f = records(&c.path().join("answers.failures.ndjson"));
    assert_eq!(f.len(), 1, "{stderr}");
    let reason = f[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("cannot create ") && reason.contains("q1__m__a0.scratch/tmp"),
        "{reason}"
    );
    // The scratch directory went with the run: the next run answers.
    assert!(!scratch.exists());
    let r = run();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let recs = records(&c.out);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        recs[0]["answer"].as_str().map(str::trim),
        Some("the answer")
    );
    assert_eq!(recs[0]["agent"]["files_read"], json!([]), "{}", recs[0]);
}

#[test]
fn questions_whose_ids_differ_only_in_punctuation_get_worktrees_and_transcripts_of_their_own() {
    let c = case(None);
    // `q/1` and `q_1` once mapped to the same `q_1` directory and transcript.
    let text: String = std::fs::read_to_string(&c.bench)
        .unwrap()
        .lines()
        .map(|l| {
            let mut q: Value = serde_json::from_str(l).unwrap();
            let id = match q["id"].as_str().unwrap() {
                "q1" => "q/1",
                "q2" => "q_1",
                other => other,
            };
            q["id"] = json!(id);
            format!("{q}\n")
        })
        .collect();
    std::fs::write(&c.bench, text).unwrap();
    let r = c
        .cmd()
        .args(["--agent", "command", "--model", "sh", "--concurrency", "2"])
        .args(["--question", "q/1", "--question", "q_1"])
        .args([
            "--command",
            "sleep 0.2; grep -o 'Question q[0-9]' {prompt_file} | head -n 1",
        ])
        .output()
        .unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let recs = records(&c.out);
    assert_eq!(recs.len(), 2);
    let mut transcripts = Vec::new();
    for a in &recs {
        let want = match a["question_id"].as_str().unwrap() {
            "q/1" => "Question q1",
            _ => "Question q2",
        };
        assert_eq!(a["answer"], want, "{a}");
        let t = a["agent"]["transcript"].as_str().unwrap().to_string();
        let saved = std::fs::read_to_string(c.path().join(&t)).unwrap();
        assert!(saved.contains(want), "{t}: {saved}");
        transcripts.push(t);
    }
    assert_ne!(transcripts[0], transcripts[1]);
}

#[test]
fn an_estimate_of_the_runs_says_its_assumptions_and_runs_nothing() {
    let c = case(None);
    let seen = Arc::new(Mutex::new(0usize));
    let s = Arc::clone(&seen);
    let server = FakeServer::start(move |_| {
        *s.lock().unwrap() += 1;
        Response::json(500, "{}")
    });
    // No agent CLI is checked (the one named does not exist), no key is read, nothing is sent.
    let r = c
        .cmd()
        .args([
            "--agent",
            "claude-code",
            "--model",
            "claude-sonnet-4-5",
            "--attempts",
            "2",
        ])
        .args([
            "--agent-bin",
            "/nonexistent/claude",
            "--estimate",
            "--estimate-turns",
            "10",
        ])
        .env("ANTHROPIC_BASE_URL", server.origin())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // The three questions × two attempts × ten turns.
    assert!(
        stdout.contains("answer --estimate (nothing sent): 60 call(s) to claude-sonnet-4-5"),
        "{stdout}"
    );
    assert!(stdout.contains("assumed: 10 turns a run"), "{stdout}");
    assert!(stdout.contains("cost   ≈ $"), "{stdout}");
    assert_eq!(*seen.lock().unwrap(), 0);
    assert!(!c.out.exists());
    assert!(!c.path().join("cache").exists(), "nothing was cloned");
}

#[test]
fn retry_failed_turns_a_failed_answer_into_a_new_attempt_of_its_key() {
    let c = case(None);
    let run = |command: &str, extra: &[&str]| {
        let r = c
            .cmd()
            .args(["--agent", "command", "--model", "m", "--question", "q1"])
            .args(["--command", command])
            .args(extra)
            .output()
            .unwrap();
        (
            r.status.code(),
            String::from_utf8_lossy(&r.stderr).into_owned(),
        )
    };
    let (_, stderr) = run("echo half an answer; exit 3", &[]);
    let recs = records(&c.out);
    assert_eq!(recs.len(), 1, "{stderr}");
    assert!(!recs[0]["error"].is_null(), "{}", recs[0]);
    // A plain rerun keeps it: the key is done.
    let (code, stderr) = run("echo the answer", &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(records(&c.out), recs);
    // --retry-failed answers it anew; the old record is kept in the failures journal only.
    let (code, stderr) = run("echo the answer", &["--retry-failed"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("1 failed answer(s) moved"), "{stderr}");
    let now = records(&c.out);
    assert_eq!(now.len(), 1, "{stderr}");
    assert!(now[0]["error"].is_null(), "{}", now[0]);
    assert_eq!(now[0]["answer"].as_str().map(str::trim), Some("the answer"));
    assert_eq!(
        (&now[0]["id"], &now[0]["attempt"]),
        (&recs[0]["id"], &recs[0]["attempt"])
    );
    let f = records(&c.path().join("answers.failures.ndjson"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["status"], "failed");
    assert_eq!(f[0]["superseded"], recs[0]);
    // Nothing left to retry: a second --retry-failed runs nothing and moves nothing.
    let (code, stderr) = run("exit 9", &["--retry-failed"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("moved"), "{stderr}");
    assert_eq!(records(&c.out), now);
    // The scorer reads the results: the new answer is the one that counts.
    let s = common::repoprobe(&["validate", c.out.to_str().unwrap()]);
    assert_eq!(s.code, 0, "{}", s.stderr);
}
