//! The live commands against a real model: llama.cpp's own `llama-server` serving SmolLM2-135M
//! with a chat template that renders tools (all three installed into `tools/` by
//! `scripts/setup-local-model.sh`), started by each test on a
//! free port of 127.0.0.1 and stopped when it ends. A model this small answers poorly, and that
//! is fine; what these tests hold is what must never happen with any server: a hang, a crash, a
//! silent 0 or a score outside the rubric. Every record written is checked by `repoprobe
//! validate` against the benchmark, and every key ends as a record or a failure with its cause.

use crate::common::needs;
use crate::common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The model as the server names it in records (llama-server answers to any name).
pub(crate) const MODEL: &str = "smollm2-135m-instruct";
/// One request's limit: on 2 idle cores the model writes ~6 tokens a second and reads a judge's
/// prompt in under a minute; with builds alongside (measured 2026-12-05: three cargo builds and
/// the rest of the suite) a scalar judge's request ran past 120 s. A reply of `MAX_TOKENS` tokens
/// fits in this limit even at a third of the idle speed: a test holds what the command does (a
/// record in the rubric, or a failure with its reason), never how fast this machine is today.
const TIMEOUT_S: &str = "360";
const MAX_TOKENS: &str = "200";
/// The longest a whole command may take before the test calls it a hang: a few requests at
/// their limit, one at a time.
const HANG: Duration = Duration::from_secs(1500);

/// One model server at a time: two cores cannot serve two at useful speed.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools")
}

/// A running `llama-server`, killed on drop.
pub(crate) struct LocalModel {
    child: Child,
    port: u16,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl LocalModel {
    /// Starts the server with the model and waits for `/health` to say it is loaded; `None`
    /// (a SKIPPED line, or a failure under CI=true) when they are not installed.
    pub(crate) fn start() -> Option<LocalModel> {
        LocalModel::serving(8192, 1)
    }

    /// [`LocalModel::start`] computing on two threads: what the docs' open-weight recipe was
    /// measured with (its greedy judge ends its reply there; on one thread the sums come in
    /// another order and the 135M model repeats itself to the token limit). Slower beside a
    /// busy core (see `serving`).
    pub(crate) fn start_on_two_threads() -> Option<LocalModel> {
        LocalModel::serving(8192, 2)
    }

    /// [`LocalModel::start`] with a context of `context` tokens, computing on `threads`.
    fn serving(context: u32, threads: u32) -> Option<LocalModel> {
        let server = tools().join("llama-server/bin/llama-server");
        let model = tools().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
        // SmolLM2's own template has no tools, and llama-server then drops them from the
        // prompt; Qwen2.5's is ChatML like SmolLM2's and shows the tools and the call format.
        let template = tools().join("llama-server/templates/Qwen-Qwen2.5-7B-Instruct.jinja");
        if !server.exists() || !model.exists() || !template.exists() {
            return needs::missing(
                "llama-server, its chat template and SmolLM2-135M-Instruct in tools/",
                "bash scripts/setup-local-model.sh",
            );
        }
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = Command::new(&server)
            .args(["-m"])
            .arg(&model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .arg("--chat-template-file")
            .arg(&template)
            // No weight repacking: its AMX path crashes (SIGSEGV) on this kind of machine
            // (measured 2026-12-04, llama.cpp 0c1e570 of llama-cpp-python 0.3.36). `--temp 0`:
            // a request that names no temperature (the docs' open-weight recipe's agent, run as
            // written by `docs_recipes.rs`) is sampled greedily, so its run is the same each time.
            // One thread: llama.cpp's threads wait for each other at every step, so beside one
            // busy core (the other tests, a build) two of them ran a test 13× slower (8 s →
            // 107 s; 80 s with `--poll 0`, measured 2026-12-07); one has no one to wait for.
            .args(["--threads", &threads.to_string()])
            .args(["--threads-batch", &threads.to_string()])
            .args([
                "-c",
                &context.to_string(),
                "--jinja",
                "-np",
                "1",
                "--no-webui",
                "--no-repack",
                "--temp",
                "0",
            ])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .unwrap();
        let mut m = LocalModel {
            child,
            port,
            _turn: turn,
        };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = m.child.try_wait() {
                let text = std::fs::read_to_string(log.path()).unwrap_or_default();
                panic!("llama-server exited with {status}:\n{text}");
            }
            if m.get("/health").is_some_and(|(code, _)| code == 200) {
                return Some(m);
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama-server not healthy after 120 s:\n{}",
                std::fs::read_to_string(log.path()).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// A GET on the server: the status and the body.
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let code = text.split_whitespace().nth(1)?.parse().ok()?;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
        Some((code, body))
    }

    /// `repoprobe <command>` against this server, with the settings of a small model on a
    /// CPU; a run that outlives [`HANG`] is killed and fails the test.
    fn run(&self, command: &str, out: &Path, args: &[&str]) -> Ran {
        let mut c = Command::new(BIN);
        // No key: llama-server needs none, and `--no-key` sends none.
        c.env_clear()
            // git, for `answer`'s checkouts.
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .args(command.split(' '))
            .arg("--out")
            .arg(out)
            .args([
                "--provider",
                "openai",
                "--no-key",
                "--model",
                MODEL,
                "--base-url",
            ])
            .arg(self.base_url())
            .args(["--timeout-s", TIMEOUT_S])
            // A test may need longer replies (the scalar judge's five rationales).
            .args(if args.contains(&"--max-tokens") {
                &[][..]
            } else {
                &["--max-tokens", MAX_TOKENS][..]
            })
            // A test may sample otherwise (the scalar judge, whose greedy rationales loop).
            .args(if args.contains(&"--temperature") {
                &[][..]
            } else {
                &["--temperature", "0"][..]
            })
            .args(["--sampling-seed", "1", "--concurrency", "1"])
            .args(["--max-http-retries", "1", "--backoff-s", "0.1"])
            .args(args);
        watched(c, command)
    }
}

/// Runs `c` to its end, its output captured; one that outlives [`HANG`] is killed and fails
/// the test.
fn watched(mut c: Command, what: &str) -> Ran {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(HANG) {
        Ok(out) => {
            let r = ran(out.unwrap());
            eprintln!("repoprobe {what} (exit {}):\n{}", r.code, r.stderr);
            r
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("repoprobe {what} against llama-server hung past {HANG:?}");
        }
    }
}

impl Drop for LocalModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two answers to judge (the judge's keys: q1/A/0 and q3/B/0).
fn answers(dir: &Path) -> PathBuf {
    let rows = [
        json!({"question_id": "q1", "model": "A", "attempt": 0,
               "answer": "The flow is defined in src/flows/llm_flow.py; it calls the model and parses the reply."}),
        json!({"question_id": "q3", "model": "B", "attempt": 0,
               "answer": "I do not know."}),
    ];
    let p = dir.join("answers.jsonl");
    std::fs::write(
        &p,
        rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    p
}

fn lines(path: &Path) -> Vec<Value> {
    if path.exists() {
        records(path)
    } else {
        Vec::new()
    }
}

/// Every key ended as a record or as a failure with its reason; the records validate against
/// the benchmark (scores in each item's rubric). Returns (records, failures).
fn accounted(r: &Ran, out: &Path, keys: usize, files: &[&Path]) -> (Vec<Value>, Vec<Value>) {
    let failures_path = out.with_extension("failures.ndjson");
    let (written, failed) = (lines(out), lines(&failures_path));
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    assert_eq!(
        written.len() + failed.len(),
        keys,
        "every key a record or a failure:\n{}",
        r.stderr
    );
    for f in &failed {
        let reason = f["reason"].as_str().or(f["error"].as_str()).unwrap_or("");
        assert!(
            !reason.trim().is_empty(),
            "a failure without its cause: {f}"
        );
    }
    if !written.is_empty() {
        let mut args: Vec<&str> = vec!["validate", BENCHMARK];
        let out_s = out.to_str().unwrap();
        args.extend(files.iter().map(|p| p.to_str().unwrap()));
        args.push(out_s);
        let v = repoprobe(&args);
        assert!(
            v.code == 0 && !format!("{}{}", v.stdout, v.stderr).contains("issue(s)"),
            "the records do not validate:\n{}{}",
            v.stdout,
            v.stderr
        );
    }
    (written, failed)
}

/// Every item of every judgment, in its checklist's order, has one of its rubric's scores.
fn assert_in_rubric(judgments: &[Value]) {
    let benchmark = std::fs::read_to_string(BENCHMARK).unwrap();
    let questions: Vec<Value> = benchmark
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for j in judgments {
        let q = questions
            .iter()
            .find(|q| q["id"] == j["question_id"])
            .unwrap();
        let items = q["checklist"].as_array().unwrap();
        assert_eq!(j["items"].as_array().unwrap().len(), items.len(), "{j}");
        for (item, scored) in items.iter().zip(j["items"].as_array().unwrap()) {
            assert_eq!(item["id"], scored["id"], "{j}");
            let score = scored["score"].as_u64().expect("a whole score");
            let allowed: Vec<u64> = item["rubric"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["score"].as_u64().unwrap())
                .collect();
            assert!(
                allowed.contains(&score),
                "score {score} not in {allowed:?}: {j}"
            );
        }
        assert_eq!(j["judge"], MODEL);
    }
}

fn judge_in(mode: &str) -> (Ran, Vec<Value>, Vec<Value>) {
    let Some(server) = LocalModel::start() else {
        return (
            Ran {
                code: 0,
                stdout: String::new(),
                stderr: String::new(),
            },
            Vec::new(),
            Vec::new(),
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judgments.jsonl");
    let answers = answers(dir.path());
    let r = server.run(
        "judge",
        &out,
        &[
            BENCHMARK,
            answers.to_str().unwrap(),
            "--structured",
            mode,
            "--max-retries",
            "1",
        ],
    );
    let (written, failed) = accounted(&r, &out, 2, &[&answers]);
    assert_in_rubric(&written);
    (r, written, failed)
}

/// The schema mode is the one llama-server enforces (a grammar from the JSON Schema): every
/// judgment it gives is in the rubric, and it gives at least one.
#[test]
fn judge_schema_mode_against_llama_server_gives_rubric_valid_judgments() {
    let (r, written, _) = judge_in("schema");
    if needs::in_ci() || !written.is_empty() {
        assert!(!written.is_empty(), "no judgment at all:\n{}", r.stderr);
    }
}

/// The forced-tool mode: the mode that hung for 15 minutes. Judgments in the rubric, or
/// failures with the server's words, within the deadline.
#[test]
fn judge_tool_mode_against_llama_server_ends_in_judgments_or_failures_never_a_hang() {
    judge_in("tool");
}

/// The prompt mode: the schema only described, every reply checked all the same.
#[test]
fn judge_prompt_mode_against_llama_server_ends_in_judgments_or_failures() {
    judge_in("prompt");
}

#[test]
fn judge_scalar_against_llama_server_scores_on_the_scale() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scalar.jsonl");
    let answers = answers(dir.path());
    let r = server.run(
        "judge-scalar",
        &out,
        &[
            BENCHMARK,
            answers.to_str().unwrap(),
            "--scale",
            "10",
            "--temperature",
            "0.7",
        ],
    );
    let (written, _) = accounted(&r, &out, 2, &[&answers]);
    assert!(!written.is_empty(), "no scalar judgment:\n{}", r.stderr);
    for rec in &written {
        assert_eq!(rec["max_per_dimension"], 10, "{rec}");
        let dims = rec["dimensions"].as_object().expect("dimensions");
        assert!(!dims.is_empty(), "{rec}");
        for (name, v) in dims {
            let v = v.as_u64().unwrap_or(u64::MAX);
            assert!(v <= 10, "{name} = {v} off the scale: {rec}");
        }
    }
}

/// The server says how long its context is; a test of what the server reports, so that the
/// command reading it (`/props`, `/v1/models`) has a real shape to read.
#[test]
fn llama_server_reports_its_context_length() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let (code, body) = server.get("/props").unwrap();
    assert_eq!(code, 200, "{body}");
    let props: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        props["default_generation_settings"]["n_ctx"], 8192,
        "{props}"
    );
}

/// Both answers judged below 60 % by judge `J`: both are failures to classify.
fn low_judgments(dir: &Path) -> PathBuf {
    let j = |q: &str, m: &str| {
        json!({"question_id": q, "model": m, "attempt": 0, "judge": "J", "judge_run": 0,
               "items": [{"id": "k1", "rationale": "missed", "score": 0},
                         {"id": "k2", "rationale": "missed", "score": 0},
                         {"id": "clarity", "rationale": "clear", "score": 1}]})
    };
    let p = dir.join("judgments.jsonl");
    std::fs::write(&p, format!("{}\n{}\n", j("q1", "A"), j("q3", "B"))).unwrap();
    p
}

#[test]
fn classify_failures_against_llama_server_labels_or_fails_each_failure() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("labels.jsonl");
    let answers = answers(dir.path());
    let judgments = low_judgments(dir.path());
    let r = server.run(
        "classify-failures",
        &out,
        &[
            BENCHMARK,
            answers.to_str().unwrap(),
            judgments.to_str().unwrap(),
        ],
    );
    assert!(r.stderr.contains("2 answer(s) below 60 %"), "{}", r.stderr);
    let (written, _) = accounted(&r, &out, 2, &[&answers, &judgments]);
    for rec in &written {
        assert_eq!(rec["classifier"], MODEL, "{rec}");
    }
}

#[test]
fn make_checklist_against_llama_server_writes_valid_checklists_or_failures() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("questions.jsonl");
    // The golden benchmark's first question without its checklist.
    let first = std::fs::read_to_string(BENCHMARK).unwrap();
    let mut q: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    q.as_object_mut().unwrap().remove("checklist");
    let sources = dir.path().join("sources.jsonl");
    std::fs::write(&sources, format!("{q}\n")).unwrap();
    let r = server.run("curate make-checklist", &out, &[sources.to_str().unwrap()]);
    let (written, failed) = (lines(&out), lines(&out.with_extension("failures.ndjson")));
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    assert_eq!(written.len() + failed.len(), 1, "{}", r.stderr);
    if !written.is_empty() {
        let v = repoprobe(&["validate", out.to_str().unwrap()]);
        assert_eq!(
            v.code, 0,
            "the checklist does not validate:\n{}{}",
            v.stdout, v.stderr
        );
        let items = written[0]["checklist"].as_array().unwrap();
        assert!(!items.is_empty(), "{}", written[0]);
    }
    for f in &failed {
        assert!(!f["reason"].as_str().unwrap_or("").is_empty(), "{f}");
    }
}

/// A repository of one commit with one file; returns (path, commit).
pub(crate) fn widget(dir: &Path) -> (PathBuf, String) {
    let r = dir.join("widget");
    std::fs::create_dir_all(r.join("src")).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    std::fs::write(r.join("src/lib.rs"), "pub fn start() { marker_alpha(); }\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let commit = git(&r, &["rev-parse", "HEAD"]);
    (r, commit)
}

/// The golden benchmark's q1 on `acme/widget` at `commit`, asking for a tool call in the
/// template's own syntax: a 135M model does not explore on its own (measured: it answers
/// in prose from the first turn), but it copies a call it is shown, and that call then goes
/// through the server's tool-call parser, the agent's tool and back like any other.
fn widget_benchmark(dir: &Path, commit: &str) -> PathBuf {
    let line = std::fs::read_to_string(BENCHMARK)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|q| q["id"] == "q1")
        .unwrap();
    let mut q = line;
    q["repo"] = json!({"name": "acme/widget", "url": "", "commit": commit});
    q["question"] = json!(
        "Reply with exactly this text and nothing else:\n<tool_call>\n\
         {\"name\": \"list_dir\", \"arguments\": {\"path\": \"src\"}}\n</tool_call>"
    );
    let p = dir.join("benchmark.jsonl");
    std::fs::write(&p, format!("{q}\n")).unwrap();
    p
}

/// The built-in agent on a real repository through the real server: at least one tool call
/// parsed by llama-server, run by the agent on the checkout and answered, and a trajectory
/// (ATIF, checked by `scripts/test.sh` against the published models) that holds it.
#[test]
fn the_builtin_agent_against_llama_server_makes_real_tool_calls_into_a_valid_trajectory() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (repo, commit) = widget(dir.path());
    let bench = widget_benchmark(dir.path(), &commit);
    let out = dir.path().join("answers.jsonl");
    let cache = dir.path().join("cache");
    let map = format!("acme/widget={}", repo.display());
    let transcripts = dir.path().join("transcripts");
    let r = server.run(
        "answer",
        &out,
        &[
            bench.to_str().unwrap(),
            "--agent",
            "builtin",
            "--clone-cache",
            cache.to_str().unwrap(),
            "--repo-map",
            &map,
            "--transcripts",
            transcripts.to_str().unwrap(),
            "--max-turns",
            "4",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recs = records(&out);
    assert_eq!(recs.len(), 1, "{}", r.stderr);
    let a = &recs[0];
    assert_eq!(a["error"], Value::Null, "{a}");
    assert_eq!(a["agent"]["commit"], commit.as_str(), "{a}");
    assert_eq!(a["agent"]["worktree_changed"], false, "{a}");
    let t = crate::common::trajectory::trajectory(dir.path(), a, "builtin-llama-server");
    let calls = crate::common::trajectory::tool_calls(&t);
    assert!(!calls.is_empty(), "no tool call went through: {t}");
    // Each call was run on the checkout and its result is in the trajectory: a listing of
    // `src` names the file; any other call its error, never nothing.
    for (name, args, result) in &calls {
        assert!(!result.is_empty(), "{name}({args}) without a result: {t}");
        if name == "list_dir" && args["path"] == "src" {
            assert!(result.contains("lib.rs"), "{result}");
        }
    }
    let v = repoprobe(&["validate", bench.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(a["usage"]["input_tokens"].as_u64().unwrap_or(0) > 0, "{a}");
}

/// A plan whose model under test and judge are both the local server (`local = true`: no key
/// anywhere in the environment, $0): priced first, then run to its tables.
#[test]
fn a_plan_with_a_local_model_answering_and_judging_runs_to_its_tables_at_no_cost() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (repo, commit) = widget(dir.path());
    let bench = widget_benchmark(dir.path(), &commit);
    let settings = format!(
        r#"["--timeout-s", "{TIMEOUT_S}", "--sampling-seed", "1", "--max-http-retries", "1"]"#
    );
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"benchmark = "{bench}"
out = "runs"
repo_map = ["acme/widget={repo}"]

[[model]]
name = "SmolLM2 local"
agent = "builtin"
provider = "openai"
model = "{MODEL}"
base_url = "{url}"
local = true
max_turns = 4
concurrency = 1
args = ["--max-tokens", "{MAX_TOKENS}", "--temperature", "0", "--timeout-s", "{TIMEOUT_S}", "--sampling-seed", "1", "--max-http-retries", "1"]

[judge]
provider = "openai"
model = "{MODEL}"
base_url = "{url}"
local = true
runs = 1
concurrency = 1
temperature = 0.0
max_tokens = {MAX_TOKENS}
args = {settings}
"#,
            bench = bench.display(),
            repo = repo.display(),
            url = server.base_url(),
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .arg("run")
            .arg(&plan)
            .args(extra);
        watched(c, "run PLAN")
    };
    // The estimate: $0 for both, the tokens still counted.
    let e = run(&["--estimate"]);
    assert_eq!(e.code, 0, "{}", e.stderr);
    for stage in ["answers", "judgments"] {
        let line = e
            .stdout
            .lines()
            .find(|l| l.starts_with(stage))
            .unwrap_or_else(|| panic!("no {stage} line: {}", e.stdout));
        assert!(line.ends_with("0.00  local (no charge)"), "{line}");
        let tokens: Vec<u64> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert!(tokens.iter().filter(|&&t| t > 0).count() >= 3, "{line}");
    }
    assert!(
        e.stdout.contains("total of the plan ≈ $0.00"),
        "{}",
        e.stdout
    );
    // The run: an answer and its judgment from the server, no key, to the tables.
    let r = run(&[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Table 3"), "{}", r.stdout);
    assert!(r.stdout.contains("SmolLM2 local"), "{}", r.stdout);
    let runs = dir.path().join("runs");
    let answers = records(&runs.join("answers/SmolLM2_20local.jsonl"));
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["error"], Value::Null, "{}", answers[0]);
    let judged = runs.join("judgments/SmolLM2_20local.jsonl");
    let failed = lines(&judged.with_extension("failures.ndjson"));
    let judgments = lines(&judged);
    assert_eq!(judgments.len() + failed.len(), 1, "{}", r.stderr);
    assert_in_rubric(&judgments);
    // What the run spent: $0.00 beside real token counts.
    assert!(r.stderr.contains("≈$0.00 estimated"), "{}", r.stderr);
}

/// A server started with a 2,048-token context, and an answer of ~3,000 words to judge: the
/// context is read from the server, the prompt counted by its tokenizer and the key failed
/// before the request is sent, with the numbers and what to do.
#[test]
fn a_prompt_over_a_local_servers_context_fails_before_sending_with_the_numbers() {
    let Some(server) = LocalModel::serving(2048, 1) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judgments.jsonl");
    let answers = dir.path().join("answers.jsonl");
    let long = json!({"question_id": "q1", "model": "A", "attempt": 0,
                      "answer": "The flow calls the model and parses the reply. ".repeat(350)});
    std::fs::write(&answers, format!("{long}\n")).unwrap();
    let started = Instant::now();
    let r = server.run(
        "judge",
        &out,
        &[
            BENCHMARK,
            answers.to_str().unwrap(),
            "--structured",
            "schema",
        ],
    );
    let (written, failed) = accounted(&r, &out, 1, &[&answers]);
    assert!(written.is_empty(), "{written:?}");
    let why = failed[0].to_string();
    assert!(why.contains("context of 2048 tokens"), "{why}");
    assert!(why.contains("not sent"), "{why}");
    assert!(why.contains("--max-tokens 200"), "{why}");
    assert_eq!(failed[0]["cause"], "config", "{why}");
    // Counted, not generated: far less than one reply of the model would take.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// A thread of `acme/widget` at `commit` (a `curate harvest`/`filter` record) linking to `link`.
fn thread(commit: &str, link: &str) -> Value {
    json!({"key": "acme/widget#1", "repo": "acme/widget", "category": "Q&A", "number": 1,
           "url": "https://github.com/acme/widget/discussions/1",
           "title": "Where does start() begin?",
           "body": format!("Which function runs first when the widget starts, and where is it defined? The docs: {link}"),
           "author": "asker1", "created_at": "2024-05-01T10:00:00Z", "upvotes": 1,
           "answer": {"body": "start() in src/lib.rs calls marker_alpha() first.",
                      "author": "maintainer", "author_association": "MEMBER",
                      "chosen_at": "2024-07-01T00:00:00Z",
                      "url": "https://github.com/acme/widget/discussions/1#discussioncomment-100"},
           "commit": {"oid": commit, "committed_at": "2024-06-01T00:00:00Z", "branch": "main"},
           "provenance": {"source_url": "https://github.com/acme/widget/discussions/1",
                          "api_url": "https://api.github.com/graphql",
                          "harvested_at": "2026-12-01T00:00:00Z", "repository_id": "R_1",
                          "category_id": "DIC_1", "discussion_id": "D_1", "answer_id": "DC_1"}})
}

fn write_lines(path: &Path, rows: &[Value]) {
    std::fs::write(
        path,
        rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
}

/// Every line of `out` and its failures and excluded journals: `n` keys in all, each failure
/// with its cause.
fn curated(r: &Ran, out: &Path, n: usize) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    let kept = lines(out);
    let failed = lines(&out.with_extension("failures.ndjson"));
    let excluded = lines(&out.with_extension("excluded.ndjson"));
    assert_eq!(
        kept.len() + failed.len() + excluded.len(),
        n,
        "{}",
        r.stderr
    );
    for f in &failed {
        assert!(!f["reason"].as_str().unwrap_or("").trim().is_empty(), "{f}");
    }
    (kept, failed, excluded)
}

/// The curation stages that call a model — themes, classify, enhance (a page on a loopback
/// server of this test, allowed by name) and verify (the built-in agent on the repository) —
/// against the real server, each on a one-record fixture: a record of the stage's kind or a
/// failure with its cause, never a hang.
#[test]
fn the_curate_stages_against_llama_server_end_in_records_or_failures() {
    let Some(server) = LocalModel::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = |f: &str| dir.path().join(f);
    let (repo, commit) = widget(dir.path());
    let page = repoprobe_test_support::FakeServer::start(|req| match req.path.as_str() {
        "/start" => repoprobe_test_support::Response::new(
            200,
            "<html><body><p>start() is the entry point; it calls marker_alpha().</p></body></html>",
        )
        .header("content-type", "text/html; charset=utf-8"),
        _ => repoprobe_test_support::Response::new(404, "no"),
    });
    let link = format!("http://{}/start", page.addr());

    // themes
    write_lines(
        &d("repos.jsonl"),
        &[
            json!({"repo": "acme/widget", "id": "R_1", "url": "https://github.com/acme/widget",
                 "stars": 5000, "created_at": "2024-03-01T12:00:00Z", "default_branch": "main",
                 "categories": [{"id": "DIC_1", "name": "Q&A", "answerable": true,
                                 "answered": 8, "kept": true}],
                 "kept_because": "Discussions on; Q&A has 8 answered (at least 3 asked)",
                 "provenance": {"source": "search", "query": "stars:>=1000",
                                "api_url": "https://api.github.com/graphql",
                                "seen_at": "2026-12-01T00:00:00Z"}}),
        ],
    );
    let curate = |stage: &str, input: &str, out: &str, extra: &[&str]| {
        let input = d(input);
        let mut args = vec![input.to_str().unwrap()];
        args.extend(extra);
        let out = d(out);
        let r = server.run(&format!("curate {stage}"), &out, &args);
        (r, out)
    };
    let (r, out) = curate("themes", "repos.jsonl", "themed.jsonl", &[]);
    let (themed, _, _) = curated(&r, &out, 1);
    for t in &themed {
        assert!(t["theme"].is_string(), "{t}");
    }

    // classify
    write_lines(&d("filtered.jsonl"), &[thread(&commit, &link)]);
    let (r, out) = curate("classify", "filtered.jsonl", "classified.jsonl", &[]);
    curated(&r, &out, 1);

    // enhance: the thread as classify passes it (whatever the small model said of it)
    let mut classified = thread(&commit, &link);
    classified["question_category"] = json!("Implementation Details");
    classified["classify"] = json!({"prompt_version": "curate-classify-v1", "model": MODEL,
                                    "passed": true, "rationale": "about the code"});
    write_lines(&d("passed.jsonl"), &[classified]);
    let allow = page.addr().to_string();
    let (r, out) = curate(
        "enhance",
        "passed.jsonl",
        "pairs.jsonl",
        &["--allow-host", &allow],
    );
    let (pairs, _, _) = curated(&r, &out, 1);
    assert_eq!(
        page.hits(),
        1,
        "the linked page is fetched once, from loopback only"
    );
    for p in &pairs {
        assert_eq!(p["repo"]["commit"], commit.as_str(), "{p}");
        let sources = &p["curation"]["enhance"]["sources"];
        assert_eq!(sources[0]["status"], 200, "the page was fetched: {p}");
    }

    // verify: the golden q1's checklist on the thread, as make-checklist writes it
    let mut q: Value = std::fs::read_to_string(widget_benchmark(dir.path(), &commit))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .next()
        .unwrap();
    q["id"] = json!("acme/widget#1");
    q["question"] = json!("Which function runs first when the widget starts?");
    q["reference_answer"] = json!("start() in src/lib.rs calls marker_alpha() first.");
    q["external_context"] = json!(false);
    q["curation"] = json!({
        "source": {"key": "acme/widget#1", "url": "https://github.com/acme/widget/discussions/1",
                   "category": "Q&A", "title": "Where does start() begin?",
                   "created_at": "2024-05-01T10:00:00Z", "answer_chosen_at": "2024-07-01T00:00:00Z",
                   "answer_url": "https://github.com/acme/widget/discussions/1#discussioncomment-100",
                   "answer_author_association": "MEMBER", "upvotes": 1,
                   "harvested_at": "2026-12-01T00:00:00Z",
                   "api_url": "https://api.github.com/graphql", "discussion_id": "D_1",
                   "answer_id": "DC_1"},
        "commit": {"oid": commit, "committed_at": "2024-06-01T00:00:00Z", "branch": "main"},
        "classify": {"prompt_version": "curate-classify-v1", "model": MODEL, "passed": true,
                     "rationale": "about the code"},
        "enhance": {"original_question": "q", "original_answer": "a", "sources": [],
                    "skipped": [], "prompt_version": "curate-enhance-v1", "model": MODEL}});
    write_lines(&d("checklisted.jsonl"), &[q]);
    let map = format!("acme/widget={}", repo.display());
    let cache = d("cache");
    let (r, out) = curate(
        "verify",
        "checklisted.jsonl",
        "candidates.jsonl",
        &[
            "--clone-cache",
            cache.to_str().unwrap(),
            "--repo-map",
            &map,
            "--max-turns",
            "4",
        ],
    );
    let (kept, _, _) = curated(&r, &out, 1);
    for k in &kept {
        assert_eq!(k["curation"]["verify"]["passed"], true, "{k}");
    }
}
