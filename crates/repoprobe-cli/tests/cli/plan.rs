//! `repoprobe run PLAN` end to end: a plan of a built-in agent (its loopback model API) and a
//! `command` agent, 2 attempts each, a judge with 2 runs, the scalar judge and the classifier,
//! all against the tests' fake servers on 127.0.0.1, each endpoint with a key variable of its
//! own; then the same plan again sends nothing. And the paper's plan priced, nothing sent.

use crate::answer::{agent_api, case};
use crate::common::{self, Api, BIN, FakeApi, KEY, Kind, Mode, records};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

fn plan_text(
    bench: &Path,
    repo: &Path,
    agent_base: &str,
    judge: &FakeApi,
    scalar: &FakeApi,
    classify: &FakeApi,
) -> String {
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

[[model]]
name = "Shell"
agent = "command"
model = "sh"
command = "echo the answer is in src/lib.rs"
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
        judge = judge.base_url(),
        scalar = scalar.base_url(),
        classify = classify.base_url(),
    )
}

fn run_plan(plan: &Path, extra: &[&str]) -> (i32, String, String) {
    let r = Command::new(BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("AGENT_KEY", KEY)
        .env("JUDGE_KEY", KEY)
        .env("SCALAR_KEY", KEY)
        .env("CLASSIFIER_KEY", KEY)
        .arg("run")
        .arg(plan)
        .args(["--retry-backoff-s", "0"])
        .args(extra)
        .output()
        .unwrap();
    (
        r.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&r.stdout).into_owned(),
        String::from_utf8_lossy(&r.stderr).into_owned(),
    )
}

fn keys(path: &Path, fields: &[&str]) -> HashSet<String> {
    records(path)
        .iter()
        .map(|r| {
            fields
                .iter()
                .map(|f| r[*f].to_string())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect()
}

#[test]
fn a_plan_runs_every_stage_to_the_tables_and_run_again_sends_nothing() {
    let c = case(None);
    let agent = agent_api();
    let judge = FakeApi::start_for(Kind::Judge, Api::Openai, Mode::Schema);
    let scalar = FakeApi::start_for(Kind::Scalar, Api::Openai, Mode::Schema);
    let classify = FakeApi::start_for(Kind::Classify, Api::Openai, Mode::Schema);
    let dir = c.dir.path();
    let plan = dir.join("plan.toml");
    std::fs::write(
        &plan,
        plan_text(&c.bench, &c.repo, &agent.base, &judge, &scalar, &classify),
    )
    .unwrap();

    let (code, stdout, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let questions = records(&c.bench).len();
    let runs = dir.join("runs");
    // File names are the plan names made safe (`output::file_name_part`: a space is `_20`).
    for name in ["Builtin_20One", "Shell"] {
        let answers = runs.join(format!("answers/{name}.jsonl"));
        assert_eq!(
            keys(&answers, &["question_id", "attempt"]).len(),
            questions * 2,
            "{name}: {stderr}"
        );
        let judged = runs.join(format!("judgments/{name}.jsonl"));
        assert_eq!(records(&judged).len(), questions * 2 * 2, "{name}");
    }
    let scalar_out = runs.join("scalar/Builtin_20One.jsonl");
    assert_eq!(records(&scalar_out).len(), questions * 2 * 2, "{stderr}");
    assert!(runs.join("bundle.json").exists(), "{stderr}");
    // The tables come last, from the bundle: both models are in them (by their API names).
    assert!(
        stdout.contains("tool-model") && stdout.contains("\nsh "),
        "{stdout}"
    );
    for api in [&judge, &scalar, &classify] {
        api.assert_no_violations();
    }
    // The keys went only where they were sent: no file of the run holds one.
    common::assert_no_file_holds(dir, KEY);

    // Run again: every stage resumes with nothing left, and no request is made.
    let before = [&judge, &scalar, &classify].map(|a| a.with(|s| s.requests));
    let agent_calls = agent.seen.lock().unwrap().len();
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        [&judge, &scalar, &classify].map(|a| a.with(|s| s.requests)),
        before
    );
    assert_eq!(agent.seen.lock().unwrap().len(), agent_calls);
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
