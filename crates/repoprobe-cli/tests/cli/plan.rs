//! `repoprobe run PLAN` end to end: a plan of a built-in agent (its loopback model API) and a
//! `command` agent, 2 attempts each, a judge with 2 runs, the scalar judge and the classifier,
//! all against the tests' fake servers on 127.0.0.1, each endpoint with a key variable of its
//! own; then the same plan again sends nothing. And the paper's plan priced, nothing sent.

use crate::answer::{AgentApi, agent_api, case};
use crate::common::{self, Api, BIN, FakeApi, KEY, Kind, Mode, claude, records};
use repoprobe_test_support::{FakeServer, Response};
use std::path::Path;
use std::process::Command;

/// The loopback servers of a test plan: the built-in agent's model API, Claude Code's (when the
/// CLI is installed), the judge, the scalar judge and the classifier.
pub(crate) struct Fakes {
    agent: AgentApi,
    claude: Option<(std::path::PathBuf, FakeServer, claude::Seen)>,
    judge: FakeApi,
    scalar: FakeApi,
    classify: FakeApi,
}

impl Fakes {
    pub(crate) fn start() -> Fakes {
        Fakes::with_claude(true)
    }

    /// Without Claude Code even when it is installed (a run elsewhere than this process's
    /// machine view: a Slurm task).
    pub(crate) fn with_claude(claude: bool) -> Fakes {
        let claude = claude::claude_binary().filter(|_| claude).map(|bin| {
            let seen = claude::Seen::default();
            (bin, claude::start(seen.clone(), false), seen)
        });
        Fakes {
            agent: agent_api(),
            claude,
            judge: FakeApi::start_for(Kind::Judge, Api::Openai, Mode::Schema),
            scalar: FakeApi::start_for(Kind::Scalar, Api::Openai, Mode::Schema),
            classify: FakeApi::start_for(Kind::Classify, Api::Openai, Mode::Schema),
        }
    }

    fn apis(&self) -> [&FakeApi; 3] {
        [&self.judge, &self.scalar, &self.classify]
    }

    /// Requests so far: the agent API's tool results, Claude Code's, the three judges'.
    pub(crate) fn requests(&self) -> [usize; 5] {
        [
            self.agent.seen.lock().unwrap().len(),
            self.claude
                .as_ref()
                .map_or(0, |(_, _, s)| s.lock().unwrap().len()),
            self.judge.with(|s| s.requests),
            self.scalar.with(|s| s.requests),
            self.classify.with(|s| s.requests),
        ]
    }
}

/// A plan of three models (the built-in agent, Claude Code when installed, a `command` agent)
/// × 2 attempts, a judge with 2 runs, the reliability stage on the built-in model and the
/// failure stage on the command one; `sleep` slows the command agent (seconds).
pub(crate) fn plan_text(bench: &Path, repo: &Path, f: &Fakes, sleep: f64) -> String {
    let claude = f.claude.as_ref().map_or(String::new(), |(bin, server, _)| {
        format!(
            r#"
[[model]]
name = "Claude Code"
agent = "claude-code"
model = "claude-opus-4-6"
base_url = "{url}"
key_env = "CLAUDE_GATEWAY_KEY"
agent_bin = "{bin}"
sandbox_expose = ["{tools}"]
max_turns = 5
attempts = 2
"#,
            url = server.origin(),
            bin = bin.display(),
            tools = common::agent_cli::tools_dir().display(),
        )
    });
    format!(
        r#"benchmark = "{bench}"
out = "runs"
repo_map = ["acme/widget={repo}"]

[[model]]
name = "Builtin One"
agent = "builtin"
provider = "openai"
model = "tool-model"
base_url = "{agent_base}"
key_env = "AGENT_KEY"
price = {{ input = 1.0, output = 2.0 }}
attempts = 2
{claude}
[[model]]
name = "Shell"
agent = "command"
model = "sh"
command = "sleep {sleep}; echo the answer is in src/lib.rs"
price = {{ input = 0.0, output = 0.0 }}
attempts = 2
args = ["--no-sandbox"]

[judge]
provider = "openai"
model = "judge-model"
base_url = "{judge}"
key_env = "JUDGE_KEY"
price = {{ input = 3.0, output = 15.0 }}
runs = 2

[reliability]
models = ["Builtin One"]
runs = 2
scalar = {{ provider = "openai", model = "judge-model", base_url = "{scalar}", key_env = "SCALAR_KEY", price = {{ input = 3.0, output = 15.0 }} }}

[failures]
models = ["Shell"]
classifier = {{ provider = "openai", model = "judge-model", base_url = "{classify}", key_env = "CLASSIFIER_KEY", price = {{ input = 0.5, output = 3.0 }} }}
"#,
        bench = bench.display(),
        repo = repo.display(),
        agent_base = f.agent.base,
        judge = f.judge.base_url(),
        scalar = f.scalar.base_url(),
        classify = f.classify.base_url(),
    )
}

/// `repoprobe run PLAN` with every endpoint's key in a variable of its own.
pub(crate) fn plan_cmd(plan: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("AGENT_KEY", KEY)
        .env("CLAUDE_GATEWAY_KEY", claude::KEY)
        .env("JUDGE_KEY", KEY)
        .env("SCALAR_KEY", KEY)
        .env("CLASSIFIER_KEY", KEY)
        .arg("run")
        .arg(plan)
        .args(["--retry-backoff-s", "0"])
        .args(extra);
    c
}

pub(crate) fn run_plan(plan: &Path, extra: &[&str]) -> (i32, String, String) {
    let r = plan_cmd(plan, extra).output().unwrap();
    (
        r.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&r.stdout).into_owned(),
        String::from_utf8_lossy(&r.stderr).into_owned(),
    )
}

/// The model names of the plan's files (`output::file_name_part`: a space is `_20`).
fn file_names(f: &Fakes) -> Vec<&'static str> {
    let mut v = vec!["Builtin_20One", "Shell"];
    if f.claude.is_some() {
        v.push("Claude_20Code");
    }
    v
}

/// Every record of the run's outputs by file, as a sorted list of its key fields (the parts
/// of a record that depend on timing left out), and whether any key is there twice.
pub(crate) fn results(runs: &Path) -> (std::collections::BTreeMap<String, Vec<String>>, bool) {
    let mut all = std::collections::BTreeMap::new();
    let mut twice = false;
    for stage in ["answers", "judgments", "scalar", "failures"] {
        let Ok(dir) = std::fs::read_dir(runs.join(stage)) else {
            continue;
        };
        for e in dir.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let mut k: Vec<String> = records(&p)
                .iter()
                .map(|r| {
                    [
                        "question_id",
                        "model",
                        "attempt",
                        "judge",
                        "judge_run",
                        "classifier",
                        "error",
                    ]
                    .map(|f| r[f].to_string())
                    .join("/")
                })
                .collect();
            // A shard's file counts as its model's (`Shell-0001-of-0002.jsonl` is `Shell`).
            let name = e.file_name().to_string_lossy().into_owned();
            let model = match name.rfind("-of-") {
                Some(at) => name[..name[..at].rfind('-').unwrap()].to_string() + ".jsonl",
                None => name,
            };
            let entry: &mut Vec<String> = all.entry(format!("{stage}/{model}")).or_default();
            entry.append(&mut k);
            entry.sort();
            let n = entry.len();
            entry.dedup();
            twice |= entry.len() != n;
        }
    }
    (all, twice)
}

#[test]
fn a_plan_runs_every_stage_to_the_tables_and_run_again_sends_nothing() {
    let c = case(None);
    let f = Fakes::start();
    let dir = c.dir.path();
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, plan_text(&c.bench, &c.repo, &f, 0.0)).unwrap();

    let (code, stdout, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let questions = records(&c.bench).len();
    let runs = dir.join("runs");
    for name in file_names(&f) {
        let answers = runs.join(format!("answers/{name}.jsonl"));
        let answered = records(&answers);
        assert_eq!(answered.len(), questions * 2, "{name}: {stderr}");
        assert!(
            answered.iter().all(|a| a["error"].is_null()),
            "{name}: {answered:?}"
        );
        let judged = runs.join(format!("judgments/{name}.jsonl"));
        assert_eq!(records(&judged).len(), questions * 2 * 2, "{name}");
    }
    let scalar_out = runs.join("scalar/Builtin_20One.jsonl");
    assert_eq!(records(&scalar_out).len(), questions * 2 * 2, "{stderr}");
    assert!(runs.join("bundle.json").exists(), "{stderr}");
    // The tables come last, from the bundle: the models are in them by the plan's names, the
    // answers keeping the API's name beside.
    for (name, file, api_model) in [
        ("Builtin One", "Builtin_20One", "tool-model"),
        ("Shell", "Shell", "sh"),
        ("Claude Code", "Claude_20Code", "claude-opus-4-6"),
    ] {
        if name == "Claude Code" && f.claude.is_none() {
            continue;
        }
        assert!(stdout.contains(&format!("\n{name} ")), "{name}: {stdout}");
        let a = &records(&runs.join(format!("answers/{file}.jsonl")))[0];
        assert_eq!(
            (&a["model"], &a["agent"]["model"]),
            (&name.into(), &api_model.into())
        );
    }
    for api in f.apis() {
        api.assert_no_violations();
    }
    // Claude Code reached its "gateway" with the key of the plan's key_env, and only there.
    if let Some((_, _, seen)) = &f.claude {
        let seen = seen.lock().unwrap();
        assert!(!seen.is_empty());
        assert!(
            seen.iter()
                .all(|(_, key, _)| key.as_deref() == Some(claude::KEY))
        );
    }
    // The keys went only where they were sent: no file of the run holds one.
    common::assert_no_file_holds(dir, KEY);
    common::assert_no_file_holds(dir, claude::KEY);

    // The estimate beside what was spent, read back from the outputs: the command agent's 12
    // judgments (3 questions × 2 attempts × 2 runs), estimated and made.
    assert!(
        stderr.contains("estimate (the whole stage) beside spent"),
        "{stderr}"
    );
    let shell: Vec<&str> = stderr
        .lines()
        .find(|l| l.starts_with("judgments  Shell "))
        .unwrap_or_else(|| panic!("{stderr}"))
        .split_whitespace()
        .collect();
    assert_eq!((shell[2], shell[3]), ("12", "12"), "{shell:?}");
    // Calibrated on the built-in agent's runs (3 model calls each), the agent runs are
    // estimated at 3 calls a run instead of the model's 15.
    let pilot = runs.join("answers/Builtin_20One.jsonl");
    let (code, stdout, stderr) = run_plan(
        &plan,
        &["--estimate", "--calibrate", pilot.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("calibrated on {} answered run(s)", questions * 2)),
        "{stdout}"
    );
    let shell: Vec<&str> = stdout
        .lines()
        .find(|l| l.starts_with("answers    Shell "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(shell[3], (questions * 2 * 3).to_string(), "{stdout}");

    // Run again: every stage resumes with nothing left, and no request is made.
    let before = f.requests();
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(f.requests(), before);
}

/// Lines written under `runs` so far (every stage's journal).
fn lines_written(runs: &Path) -> usize {
    ["answers", "judgments", "scalar", "failures"]
        .iter()
        .filter_map(|s| std::fs::read_dir(runs.join(s)).ok())
        .flat_map(|d| d.flatten())
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read(e.path()).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count()))
        .sum()
}

#[test]
fn a_plan_killed_three_times_and_resumed_ends_as_the_uninterrupted_run_and_asks_no_done_key_again()
{
    use std::time::Duration;
    let f = Fakes::start();
    for api in f.apis() {
        api.with(|s| s.latency = Duration::from_millis(60));
    }
    // The uninterrupted run.
    let whole = case(None);
    let plan = whole.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&whole.bench, &whole.repo, &f, 0.3)).unwrap();
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (want, twice) = results(&whole.dir.path().join("runs"));
    assert!(!twice);
    let total: usize = want.values().map(Vec::len).sum();
    let one_run = f.requests();

    // The same plan on the same inputs, stopped three times: SIGKILL during the answers,
    // SIGTERM (the run's own graceful stop: exit 75) and SIGKILL during the judgments.
    let c = case(None);
    let plan = c.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&c.bench, &c.repo, &f, 0.3)).unwrap();
    let runs = c.dir.path().join("runs");
    let before = f.requests();
    for (at, signal) in [(2, "KILL"), (total / 2, "TERM"), (total * 3 / 4, "KILL")] {
        let mut child = plan_cmd(&plan, &[])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        common::wait::until("records written", Duration::from_secs(120), || {
            lines_written(&runs) >= at
        });
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-s", signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = child.wait().unwrap();
        if signal == "TERM" {
            // Stopped between keys, or mid-stage: "run me again" (75), never a failure.
            assert!(matches!(status.code(), Some(75) | Some(0)), "{status:?}");
        }
        assert!(
            lines_written(&runs) < total,
            "the run ended before it was stopped at {at}"
        );
    }
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (got, twice) = results(&runs);
    assert!(!twice, "a key was written twice");
    assert_eq!(got, want);
    // No key that was done was asked again: the calls of the stopped runs are those of one run
    // plus at most the keys in flight at each of the 3 stops (4 at once): a judge's request
    // each, a built-in run's 2 tool results, a Claude Code run's 3 requests.
    let spent: Vec<usize> = f
        .requests()
        .iter()
        .zip(before)
        .map(|(a, b)| a - b)
        .collect();
    let in_flight = [2, 3, 1, 1, 1].map(|per_key| 3 * 4 * per_key);
    for (i, ((spent, once), slack)) in spent.iter().zip(one_run).zip(in_flight).enumerate() {
        assert!(
            *spent >= once && *spent <= once + slack,
            "server {i}: {spent} requests, one run takes {once}"
        );
    }
}

#[test]
fn the_papers_plan_is_priced_stage_by_stage_and_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let synth = dir.path().join("synth.json");
    let r = common::repoprobe(&[
        "synth",
        "--models",
        "1",
        "--questions",
        "500",
        "--runs",
        "1",
        "--seed",
        "1",
        "--out",
        synth.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let paper = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reproduce/paper.toml"
    ))
    .unwrap();
    let plan = dir.path().join("paper.toml");
    std::fs::write(
        &plan,
        paper.replace(
            "benchmark = \"benchmark.jsonl\"",
            "benchmark = \"synth.json\"",
        ),
    )
    .unwrap();
    let (code, stdout, stderr) = run_plan(&plan, &["--estimate"]);
    assert_eq!(code, 0, "{stderr}");
    // 20 models' answers and judgments, Table 5's three scalar lines, Table 7's three.
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["answers ", "judgments ", "scalar ", "failures "]
                .iter()
                .any(|s| l.starts_with(s))
        })
        .collect();
    assert_eq!(lines.len(), 20 + 20 + 3 + 3, "{stdout}");
    assert!(
        lines.iter().all(|l| l.contains(" list (https://")),
        "{stdout}"
    );
    assert!(!stdout.contains("unknown"), "{stdout}");
    assert!(stdout.contains("total of the plan ≈ $"), "{stdout}");
    // Nothing written beside the plan.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // A model the list does not know is refused by name, unless the plan goes on without.
    let unpriced = std::fs::read_to_string(&plan)
        .unwrap()
        .replace("model = \"glm-5\"", "model = \"my-glm-finetune\"");
    std::fs::write(&plan, &unpriced).unwrap();
    let (code, _, stderr) = run_plan(&plan, &["--estimate"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[[model]] \"GLM-5\": my-glm-finetune"),
        "{stderr}"
    );
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no price for"), "{stderr}");
    std::fs::write(&plan, format!("allow_unpriced = true\n{unpriced}")).unwrap();
    let (code, stdout, stderr) = run_plan(&plan, &["--estimate"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("unknown"), "{stdout}");
}

#[test]
fn a_plan_with_an_unknown_field_or_a_stage_naming_no_model_is_refused_saying_where() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("p.toml");
    let base = "benchmark = \"b.jsonl\"\nout = \"o\"\n[[model]]\nname = \"A\"\nagent = \"command\"\nmodel = \"m\"\ncommand = \"echo\"\n[judge]\nprovider = \"openai\"\nmodel = \"gpt-5\"\n";
    for (text, want) in [
        (
            format!("{base}kee_env = \"X\"\n"),
            "unknown field `kee_env`",
        ),
        (
            format!(
                "{base}[failures]\nmodels = [\"B\"]\nclassifier = {{ provider = \"openai\", model = \"gpt-5\" }}\n"
            ),
            "[failures]: \"B\" is not the name of a [[model]]",
        ),
        (
            base.replace(
                "model = \"gpt-5\"\n",
                "model = \"gpt-5\"\nkey_env = \"NOT-A-NAME\"\n",
            ),
            "[judge]: \"NOT-A-NAME\" is not an environment variable's name",
        ),
        (
            base.replace("agent = \"command\"", "agent = \"cursor\""),
            "agent \"cursor\" is not one of",
        ),
    ] {
        std::fs::write(&plan, &text).unwrap();
        let (code, _, stderr) = run_plan(&plan, &["--dry-run"]);
        assert_eq!(code, 2, "{text}\n{stderr}");
        assert!(stderr.contains(want), "{want}\n{stderr}");
        assert!(stderr.contains("p.toml"), "{stderr}");
    }
}

#[test]
fn a_plan_in_two_shards_ends_as_the_whole_run_and_its_tables_come_from_both() {
    let f = Fakes::start();
    let whole = case(None);
    let plan = whole.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&whole.bench, &whole.repo, &f, 0.0)).unwrap();
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (want, _) = results(&whole.dir.path().join("runs"));

    let c = case(None);
    let plan = c.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&c.bench, &c.repo, &f, 0.0)).unwrap();
    let before = f.requests();
    for shard in ["0/2", "1/2"] {
        let (code, stdout, stderr) = run_plan(&plan, &["--shard", shard]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains("--tables` makes the bundle"), "{stderr}");
        assert!(!stdout.contains("Table 3"), "a shard made tables: {stdout}");
    }
    let runs = c.dir.path().join("runs");
    assert!(runs.join("judgments/Shell-0001-of-0002.jsonl").exists());
    let (got, twice) = results(&runs);
    assert!(!twice, "a key was done by both shards");
    assert_eq!(got, want);
    // The two shards together asked what one run asks.
    let spent: Vec<usize> = f
        .requests()
        .iter()
        .zip(before)
        .map(|(a, b)| a - b)
        .collect();
    let once: Vec<usize> = before.to_vec();
    assert_eq!(spent, once, "the whole run asked {once:?}");
    // The tables, from both shards' files.
    let (code, stdout, stderr) = run_plan(&plan, &["--tables"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\nShell ") && stdout.contains("\nBuiltin One "),
        "{stdout}"
    );
    let shell: Vec<&str> = stderr
        .lines()
        .find(|l| l.starts_with("judgments  Shell "))
        .unwrap_or_else(|| panic!("{stderr}"))
        .split_whitespace()
        .collect();
    assert_eq!((shell[2], shell[3]), ("12", "12"), "{shell:?}");
    // Its status: every stage's runs, complete.
    let (code, stdout, stderr) = run_plan(&plan, &["--status"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn a_model_whose_login_is_refused_could_not_run_is_not_retried_and_the_status_says_why() {
    let f = Fakes::start();
    let refused = FakeServer::start(|_| {
        Response::json(
            401,
            r#"{"error": {"message": "invalid x-api-key", "type": "authentication_error"}}"#,
        )
    });
    let c = case(None);
    let plan = c.dir.path().join("plan.toml");
    let text = plan_text(&c.bench, &c.repo, &f, 0.0)
        .replace(&f.agent.base, &format!("{}/v1", refused.origin()));
    std::fs::write(&plan, text).unwrap();
    let (code, _, stderr) = run_plan(&plan, &["--stage-retries", "3"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("needs a person first"), "{stderr}");
    assert!(
        !stderr.contains("answers · Builtin One (again"),
        "retried: {stderr}"
    );
    assert!(
        stderr.contains("judgments · Builtin One: skipped"),
        "{stderr}"
    );
    // Never scored as a zero: the model has no answer, and the status says why, by cause.
    let (code, stdout, _) = run_plan(&plan, &["--status"]);
    assert_eq!(code, 1);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("answers    Builtin One"))
        .unwrap();
    assert!(line.ends_with("auth: 6"), "{stdout}");
    assert!(stdout.contains("not complete"), "{stdout}");
    let shell = stdout
        .lines()
        .find(|l| l.starts_with("answers    Shell"))
        .unwrap();
    assert_eq!(shell.split_whitespace().nth(2), Some("6"), "{stdout}");
}
