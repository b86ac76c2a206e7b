//! `--estimate` is dry everywhere (issue 54): every command that takes it prints its estimate
//! and exits 0 with no key in its environment, and opens no connection — to the model's API, to
//! a page `curate enhance` would fetch, to GitHub — starts no agent and writes no file. One
//! table of every such command, run one after the other against one loopback server that
//! counts the connections it accepts (each command's share read after it ends); a failure
//! names the command.
//!
//! The live commands run twice: with no key in the environment (a key read fails the run), and
//! with `--no-key` (a request sent is counted rather than stopped by the missing key).

use repoprobe_test_support::{FakeServer, Response};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_repoprobe");
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden");

/// The variables a run could take a key from: none reaches the child.
const KEY_VARS: [&str; 3] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"];

fn golden(file: &str) -> String {
    format!("{GOLDEN}/{file}")
}

fn write_lines(path: &Path, rows: &[Value]) {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// A repository as `curate repos` writes it.
fn repository() -> Value {
    json!({"repo": "acme/widget", "id": "R_1", "url": "https://github.com/acme/widget",
           "stars": 5000, "created_at": "2024-03-01T12:00:00Z", "default_branch": "main",
           "categories": [{"id": "DIC_1", "name": "Q&A", "answerable": true, "answered": 8,
                           "kept": true}],
           "kept_because": "Discussions on; Q&A has 8 answered (at least 3 asked)",
           "provenance": {"source": "search", "query": "stars:>=1000",
                          "api_url": "https://api.github.com/graphql",
                          "seen_at": "2026-12-01T00:00:00Z"}})
}

/// A thread as `curate filter` writes it, linking to `link`.
fn thread(link: &str) -> Value {
    json!({"key": "acme/widget#1", "repo": "acme/widget", "category": "Q&A", "number": 1,
           "url": "https://github.com/acme/widget/discussions/1",
           "title": "Where does start() begin?",
           "body": format!("Which function runs first when the widget starts? The docs: {link}"),
           "author": "asker1", "created_at": "2024-05-01T10:00:00Z", "upvotes": 1,
           "answer": {"body": format!("start() in src/lib.rs, as {link} says."),
                      "author": "maintainer", "author_association": "MEMBER",
                      "chosen_at": "2024-07-01T00:00:00Z",
                      "url": "https://github.com/acme/widget/discussions/1#discussioncomment-100"},
           "commit": {"oid": "0000000000000000000000000000000000000000",
                      "committed_at": "2024-06-01T00:00:00Z", "branch": "main"},
           "provenance": {"source_url": "https://github.com/acme/widget/discussions/1",
                          "api_url": "https://api.github.com/graphql",
                          "harvested_at": "2026-12-01T00:00:00Z", "repository_id": "R_1",
                          "category_id": "DIC_1", "discussion_id": "D_1", "answer_id": "DC_1"}})
}

/// The thread as `curate classify` passes it.
fn classified(link: &str) -> Value {
    let mut t = thread(link);
    t["question_category"] = json!("Implementation Details");
    t["classify"] = json!({"prompt_version": "curate-classify-v1", "model": "m", "passed": true,
                           "rationale": "about the code"});
    t
}

/// The golden q1 as `make-checklist` writes it for `curate verify`, its links resolved.
fn checklisted() -> Value {
    let text = std::fs::read_to_string(golden("benchmark.jsonl")).unwrap();
    let mut q: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let commit = q["repo"]["commit"].clone();
    q["curation"] = json!({
        "source": {"key": "acme/widget#1", "url": "https://github.com/acme/widget/discussions/1",
                   "category": "Q&A", "title": "t", "created_at": "2024-05-01T10:00:00Z",
                   "answer_chosen_at": "2024-07-01T00:00:00Z",
                   "answer_url": "https://github.com/acme/widget/discussions/1#c",
                   "answer_author_association": "MEMBER", "upvotes": 1,
                   "harvested_at": "2026-01-01T00:00:00Z",
                   "api_url": "https://api.github.com/graphql", "discussion_id": "D_1",
                   "answer_id": "DC_1"},
        "commit": {"oid": commit, "committed_at": "2024-06-01T00:00:00Z", "branch": "main"},
        "classify": {"prompt_version": "curate-classify-v1", "model": "c", "passed": true,
                     "rationale": "about code"},
        "enhance": {"original_question": "q", "original_answer": "a", "sources": []}});
    q
}

/// A plan of every stage: a built-in agent on this server, Claude Code and a command agent
/// that would touch `marker`, a judge, the scalar judge and the classifier on this server.
fn plan(base: &str, agent_bin: &Path, marker: &Path) -> String {
    format!(
        r#"benchmark = "{bench}"
out = "runs"

[[model]]
name = "Builtin"
agent = "builtin"
provider = "openai"
model = "tool-model"
base_url = "{base}"
local = true
attempts = 2

[[model]]
name = "Claude"
agent = "claude-code"
model = "claude-sonnet-4-5"
base_url = "{base}"
agent_bin = "{bin}"
price = {{ input = 3.0, output = 15.0 }}

[[model]]
name = "Shell"
agent = "command"
model = "sh"
command = "touch {marker}"
price = {{ input = 0.0, output = 0.0 }}

[judge]
provider = "openai"
model = "judge-model"
base_url = "{base}"
local = true
runs = 2

[reliability]
models = ["Builtin"]
runs = 2
scalar = {{ provider = "openai", model = "judge-model", base_url = "{base}", local = true }}

[failures]
models = ["Shell"]
classifier = {{ provider = "openai", model = "judge-model", base_url = "{base}", local = true }}
"#,
        bench = golden("benchmark.jsonl"),
        bin = agent_bin.display(),
        marker = marker.display(),
    )
}

/// One command run dry: its own server, its files, what its estimate starts with.
struct Case {
    name: &'static str,
    args: Vec<String>,
    /// The estimate's first line starts with this.
    says: &'static str,
    /// Files the run must not create.
    outputs: Vec<PathBuf>,
    /// `--no-key` may be added (a live command's flag).
    live: bool,
}

/// The files of the cases and the script an agent CLI would be.
struct Fixture {
    dir: tempfile::TempDir,
    /// Touched by an agent that ran.
    marker: PathBuf,
    agent_bin: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("an-agent-ran");
        let agent_bin = dir.path().join("claude");
        std::fs::write(
            &agent_bin,
            format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
        )
        .unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&agent_bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir(dir.path().join("home")).unwrap();
        Fixture {
            dir,
            marker,
            agent_bin,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn s(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// Every command that takes `--estimate`, aimed at `base` (the server's origin).
fn cases(f: &Fixture, base: &str) -> Vec<Case> {
    let v1 = format!("{base}/v1");
    let api = |model: &str| strings(&["--provider", "openai", "--model", model, "--base-url", &v1]);
    let (bench, answers, judgments) = (
        golden("benchmark.jsonl"),
        golden("answers.jsonl"),
        golden("judgments.jsonl"),
    );
    let live = |name, says, cmd: &[&str], out: &str, model: &str| {
        let mut args = strings(cmd);
        args.extend(api(model));
        args.extend(strings(&["--out", &f.s(out), "--max-http-retries", "0"]));
        args.push("--estimate".into());
        Case {
            name,
            args,
            says,
            outputs: vec![f.path(out)],
            live: true,
        }
    };
    let link = format!("{base}/docs/start");
    write_lines(&f.path("repos.jsonl"), &[repository()]);
    write_lines(&f.path("threads.jsonl"), &[thread(&link)]);
    write_lines(&f.path("classified.jsonl"), &[classified(&link)]);
    write_lines(&f.path("checklisted.jsonl"), &[checklisted()]);
    let host_port = base.trim_start_matches("http://");
    let mut enhance = live(
        "curate enhance",
        "curate enhance --estimate (nothing sent): ",
        &["curate", "enhance", &f.s("classified.jsonl")],
        "pairs.jsonl",
        "m",
    );
    enhance.args.extend(strings(&["--allow-host", host_port]));
    enhance.outputs.push(f.path("pairs.pages.ndjson"));
    let agent = |name, agent_args: &[&str], out: &str| {
        let mut args = strings(&["answer", &bench, "--clone-cache", &f.s("cache")]);
        args.extend(strings(agent_args));
        args.extend(strings(&[
            "--out",
            &f.s(out),
            "--attempts",
            "2",
            "--estimate",
        ]));
        Case {
            name,
            args,
            says: "answer --estimate (nothing sent): ",
            outputs: vec![f.path(out), f.path("cache")],
            live: true,
        }
    };
    let agent_bin = f.agent_bin.display().to_string();
    let touch = format!("touch '{}'", f.marker.display());
    let mut verify = live(
        "curate verify",
        "curate verify --estimate (nothing sent): ",
        &["curate", "verify", &f.s("checklisted.jsonl")],
        "candidates.jsonl",
        "m",
    );
    verify
        .args
        .extend(strings(&["--clone-cache", &f.s("cache")]));
    verify.outputs.push(f.path("cache"));
    std::fs::write(f.path("plan.toml"), plan(&v1, &f.agent_bin, &f.marker)).unwrap();
    vec![
        live(
            "judge",
            "judge --estimate (nothing sent): ",
            &["judge", &bench, &answers, "--runs", "2"],
            "judgments.jsonl",
            "judge-model",
        ),
        {
            let mut c = live(
                "judge, a panel of two",
                "judge --estimate (nothing sent): ",
                &["judge", &bench, &answers, "--model", "second-judge"],
                "panel.{model}.jsonl",
                "judge-model",
            );
            c.outputs = vec![
                f.path("panel.judge-model.jsonl"),
                f.path("panel.second-judge.jsonl"),
            ];
            c
        },
        live(
            "judge --batch",
            "judge --estimate (nothing sent): ",
            &["judge", &bench, &answers, "--batch"],
            "batched.jsonl",
            "judge-model",
        ),
        live(
            "judge-scalar",
            "judge-scalar --estimate (nothing sent): ",
            &["judge-scalar", &bench, &answers],
            "scalar.jsonl",
            "judge-model",
        ),
        live(
            "classify-failures",
            "classify-failures --estimate (nothing sent): ",
            &["classify-failures", &bench, &answers, &judgments],
            "labels.jsonl",
            "judge-model",
        ),
        live(
            "make-checklist",
            "curate make-checklist --estimate (nothing sent): ",
            &["curate", "make-checklist", &bench],
            "questions.jsonl",
            "writer-model",
        ),
        live(
            "curate classify",
            "curate classify --estimate (nothing sent): ",
            &["curate", "classify", &f.s("threads.jsonl")],
            "classified-out.jsonl",
            "m",
        ),
        live(
            "curate themes",
            "curate themes --estimate (nothing sent): ",
            &["curate", "themes", &f.s("repos.jsonl")],
            "themed.jsonl",
            "m",
        ),
        enhance,
        verify,
        {
            let mut c = agent("answer --agent builtin", &[], "answers-builtin.jsonl");
            c.args.extend(api("tool-model"));
            c.args.extend(strings(&["--agent", "builtin"]));
            c
        },
        {
            let mut c = agent(
                "answer --agent claude-code",
                &["--agent", "claude-code", "--agent-bin", &agent_bin],
                "answers-claude.jsonl",
            );
            c.args.extend(strings(&[
                "--model",
                "claude-sonnet-4-5",
                "--base-url",
                base,
                "--agent-api-url",
                base,
            ]));
            c
        },
        {
            let mut c = agent(
                "answer --agent command",
                &["--agent", "command", "--command", &touch],
                "answers-command.jsonl",
            );
            c.args
                .extend(strings(&["--model", "sh", "--base-url", base]));
            c
        },
        Case {
            name: "run PLAN",
            args: strings(&["run", &f.s("plan.toml"), "--estimate"]),
            says: "run --estimate (nothing sent): ",
            outputs: vec![f.path("runs")],
            live: false,
        },
    ]
}

/// Connections the server accepted before now, the probe's own included: the probe's request
/// is answered, so every connection made before it (accepted in order) is counted.
fn connections_so_far(server: &FakeServer) -> usize {
    let mut probe = TcpStream::connect(server.addr()).unwrap();
    probe
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    probe
        .write_all(b"GET /probe HTTP/1.1\r\nhost: probe\r\n\r\n")
        .unwrap();
    let mut reply = Vec::new();
    let _ = probe.read_to_end(&mut reply);
    assert!(!reply.is_empty(), "the probe was not answered");
    server.connections()
}

/// The loopback server every case is aimed at, and what it had seen when the last case ended.
struct Counted {
    server: FakeServer,
    connections: usize,
    requests: usize,
}

impl Counted {
    fn start() -> Counted {
        Counted {
            server: FakeServer::start(|_| {
                Response::json(400, r#"{"error":"a dry run sent this"}"#)
            }),
            connections: 0,
            requests: 0,
        }
    }

    /// The connections and requests since the last call, the probe's left out.
    fn since_last(&mut self) -> (usize, usize) {
        let connections = connections_so_far(&self.server);
        let requests = self.server.hits();
        let new = (
            connections - self.connections - 1,
            requests.saturating_sub(self.requests + 1),
        );
        (self.connections, self.requests) = (connections, requests);
        new
    }
}

/// What went wrong with one dry run, each line naming the command; empty when it was dry.
fn check(f: &Fixture, case: &Case, no_key: bool, server: &mut Counted) -> Vec<String> {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", f.path("home"))
        .args(&case.args);
    if no_key {
        cmd.arg("--no-key");
    }
    for var in KEY_VARS {
        cmd.env_remove(var);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let mode = if no_key {
        "with --no-key"
    } else {
        "with no key in the environment"
    };
    let name = format!("`{}` {mode}", case.name);
    let mut wrong = Vec::new();
    if out.status.code() != Some(0) {
        wrong.push(format!("{name}: exit {:?}\n{stderr}", out.status.code()));
    }
    match stdout
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(case.says))
    {
        None => wrong.push(format!(
            "{name}: no estimate ({:?}…) on stdout:\n{stdout}{stderr}",
            case.says
        )),
        Some(rest) => {
            let calls = rest.split(' ').next().and_then(|n| n.parse::<u64>().ok());
            let some = case.name == "run PLAN" || calls.is_some_and(|n| n > 0);
            if !some || !stdout.contains(" tok") {
                wrong.push(format!(
                    "{name}: the estimate names no call or no tokens:\n{stdout}"
                ));
            }
        }
    }
    let (connections, requests) = server.since_last();
    if connections > 0 {
        wrong.push(format!(
            "{name}: {connections} connection(s) to the loopback server ({requests} request(s))"
        ));
    }
    if f.marker.exists() {
        wrong.push(format!("{name}: an agent ran (it touched its marker)"));
        let _ = std::fs::remove_file(&f.marker);
    }
    for o in &case.outputs {
        if o.exists() {
            wrong.push(format!("{name}: {} was created", o.display()));
        }
    }
    wrong
}

#[test]
fn every_estimate_is_dry_no_key_no_connection_no_agent_no_file() {
    let f = Fixture::new();
    let mut server = Counted::start();
    let mut wrong = Vec::new();
    for case in cases(&f, &server.server.origin()) {
        wrong.extend(check(&f, &case, false, &mut server));
        if case.live {
            wrong.extend(check(&f, &case, true, &mut server));
        }
    }
    assert!(
        wrong.is_empty(),
        "a dry run was not dry:\n\n{}",
        wrong.join("\n\n")
    );
    // Nothing beside the fixtures and the agent script.
    let mut left: Vec<String> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "checklisted.jsonl",
            "classified.jsonl",
            "claude",
            "home",
            "plan.toml",
            "repos.jsonl",
            "threads.jsonl"
        ],
        "a dry run wrote a file"
    );
}
