//! End-to-end tests of the `repoprobe` binary, a module per command: every test runs the real executable with a cleared
//! environment and checks its exit code, stdout and stderr. Expected numbers on the golden
//! fixture are the hand-computed ones of `crates/repoprobe-core/tests/golden.rs` (see
//! `testdata/golden/README.md`).

use assert_cmd::Command;
use serde_json::{Value, json};
use std::path::Path;

mod aliases;
mod bundle;
mod reported;
mod score;
mod score_what_if;
mod stdout_closed;
mod synth;
mod untrusted;
mod validate;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden");
const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../public-data/sample");
const REPORTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../public-data/reported");

/// The golden fixture's files, in name order (the order a directory is read in).
const GOLDEN_FILES: [&str; 5] = [
    "answers.jsonl",
    "benchmark.jsonl",
    "failure_modes.json",
    "judgments.jsonl",
    "scalar_judgments.jsonl",
];

/// The six issues of the golden fixture, as (file, location up to the first comma).
const GOLDEN_ISSUES: [(&str, &str); 6] = [
    ("judgments.jsonl", "line 10"),
    ("judgments.jsonl", "line 11"),
    ("judgments.jsonl", "line 12"),
    ("judgments.jsonl", "line 13"),
    ("judgments.jsonl", "line 15"),
    ("scalar_judgments.jsonl", "line 3"),
];

/// One finished run of the binary.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

fn repoprobe() -> Command {
    let mut c = Command::cargo_bin("repoprobe").expect("the repoprobe binary is built");
    c.env_clear();
    c
}

fn run(args: &[&str]) -> Run {
    let out = repoprobe().args(args).output().expect("repoprobe runs");
    Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn golden_file(name: &str) -> String {
    format!("{GOLDEN}/{name}")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// The row of `models` for (model, judge).
fn model_row<'a>(report: &'a Value, model: &str, judge: &str) -> &'a Value {
    report["models"]
        .as_array()
        .expect("models is an array")
        .iter()
        .find(|r| r["model"] == model && r["judge"] == judge)
        .unwrap_or_else(|| panic!("no row for {model}/{judge} in {:#}", report["models"]))
}

fn close(got: &Value, want: f64) {
    let g = got
        .as_f64()
        .unwrap_or_else(|| panic!("{got} is not a number (want {want})"));
    assert!((g - want).abs() < 1e-9, "{g} != {want}");
}

/// The report without `issues` (whose order follows the order of the input files).
fn without_issues(mut report: Value) -> Value {
    report
        .as_object_mut()
        .expect("the report is an object")
        .remove("issues");
    report
}

/// Checks that every issue is an object with non-empty string `file`, `location` and `message`,
/// and returns the (file name, location up to the first comma) pairs.
fn issue_locations(issues: &Value) -> Vec<(String, String)> {
    let issues = issues.as_array().expect("issues is an array");
    let mut out: Vec<(String, String)> = issues
        .iter()
        .map(|i| {
            for key in ["file", "location", "message"] {
                let s = i[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("issue without a string {key:?}: {i}"));
                assert!(!s.is_empty(), "issue with an empty {key:?}: {i}");
            }
            let file = Path::new(i["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let loc = i["location"].as_str().unwrap();
            (file, loc.split(',').next().unwrap().to_string())
        })
        .collect();
    out.sort();
    out
}

fn golden_issue_locations() -> Vec<(String, String)> {
    let mut want: Vec<(String, String)> = GOLDEN_ISSUES
        .iter()
        .map(|(f, l)| (f.to_string(), l.to_string()))
        .collect();
    want.sort();
    want
}

/// A judgment of `model` on golden question q1 with full marks, by judge J, run 0.
fn full_marks_on_q1(model: &str, rationale: &str) -> Value {
    json!({
        "question_id": "q1", "model": model, "attempt": 0, "judge": "J", "judge_run": 0,
        "items": [
            {"id": "k1", "rationale": rationale, "score": 5},
            {"id": "k2", "rationale": "r", "score": 4},
            {"id": "clarity", "rationale": "r", "score": 1}
        ]
    })
}

/// A directory with the golden fixture plus a judgment of A's first one (q1 by J, run 0) given
/// to `model`, who has no answer record: `model` answered 1 of 3 questions and never saw two.
fn golden_with_extra_model(model: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in GOLDEN_FILES {
        std::fs::copy(golden_file(f), dir.path().join(f)).unwrap();
    }
    let first = std::fs::read_to_string(golden_file("judgments.jsonl")).unwrap();
    let mut j: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    j["model"] = json!(model);
    std::fs::write(
        dir.path().join("zz-extra.jsonl"),
        serde_json::to_string(&j).unwrap() + "\n",
    )
    .unwrap();
    dir
}
