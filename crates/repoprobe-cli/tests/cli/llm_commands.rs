//! End-to-end tests of `repoprobe judge-scalar`, `classify-failures` and `curate
//! make-checklist`: the real binary against the loopback server of `common/mod.rs` (the one
//! `judge.rs` uses), which checks each command's prompt and schema and injects faults. For each
//! command: a normal run whose output `repoprobe validate` accepts with the benchmark, a reply
//! that breaks the rules is re-asked and then accepted, a rerun skips the keys done, and the key
//! is in no output.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scalar_cmd(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = live_cmd(api, "judge-scalar", out);
    c.arg(BENCHMARK).arg(write_answers(dir)).args(extra);
    c
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Keeps the first `whole` lines and half of the next, as a kill mid-write leaves a file.
fn tear(path: &Path, whole: usize) {
    let lines = lines_of(path);
    let mut text: String = lines[..whole].iter().map(|l| format!("{l}\n")).collect();
    text.push_str(&lines[whole][..lines[whole].len() / 2]);
    std::fs::write(path, text).unwrap();
}

#[test]
fn judge_scalar_grades_on_the_scale_reasks_and_resumes() {
    let api = FakeApi::start_for(Kind::Scalar, Api::Openai, Mode::Schema);
    api.with(|s| {
        s.scale = 20;
        s.faults = VecDeque::from([Fault::ScoreOutsideEnum, Fault::RateLimited, Fault::HtmlBody]);
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scalar.jsonl");
    let extra = ["--scale", "20", "--runs", "2", "--concurrency", "3"];
    let r = run_checked(&mut scalar_cmd(&api, dir.path(), &out, &extra));
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    // A re-ask may itself meet an HTTP fault and reach the server twice.
    assert!(api.with(|s| s.reasks) >= 1);
    assert!(r.stderr.contains("judge-scalar: 10 judged"), "{}", r.stderr);
    assert!(
        r.stderr.contains("3 retries (2 HTTP, 1 re-asks)"),
        "{}",
        r.stderr
    );
    assert_judged_exactly(&out, &expected_keys(2));
    for rec in records(&out) {
        assert_eq!(rec["max_per_dimension"], 20);
        assert_eq!(rec["dimensions"].as_object().unwrap().len(), 5);
        assert_eq!(rec["dimensions"]["correctness"], 10);
        assert_eq!(rec["prompt_version"], "scalar-judge-v1");
        assert!(!rec["rationale"].as_str().unwrap().is_empty());
        assert!(rec["raw_reply"].as_str().unwrap().contains("\"reasoning\""));
        assert!(rec.get("items").is_none());
    }

    // A kill mid-write: the torn line is repaired, the three whole records are kept.
    tear(&out, 3);
    api.with(|s| s.requests = 0);
    let r = run_checked(&mut scalar_cmd(&api, dir.path(), &out, &extra));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("the last line was cut off"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("7 judged, 3 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 7);
    assert_judged_exactly(&out, &expected_keys(2));
}

#[test]
fn judge_scalar_on_anthropic_defaults_to_10_and_records_failures() {
    let api = FakeApi::start_for(Kind::Scalar, Api::Anthropic, Mode::Tool);
    api.with(|s| s.always_invalid = vec!["q3".into()]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.jsonl");
    let r = run_checked(&mut scalar_cmd(
        &api,
        dir.path(),
        &out,
        &["--max-retries", "1"],
    ));
    assert_eq!(r.code, 1, "{}", r.stderr);
    api.assert_no_violations();
    let recs = records(&out);
    assert_eq!(recs.len(), 3);
    assert!(recs.iter().all(|r| r["max_per_dimension"] == 10));
    let failed = records(&dir.path().join("s.failures.ndjson"));
    assert_eq!(failed.len(), 2, "{failed:#?}");
    for f in &failed {
        assert_eq!(
            (f["status"].as_str(), f["question_id"].as_str()),
            (Some("failed"), Some("q3"))
        );
        assert!(f.get("dimensions").is_none());
        assert_eq!(
            f["violations"][0],
            "`correctness` is 11: it must be an integer from 1 to 10"
        );
    }
    let v = repoprobe(&["validate", BENCHMARK, out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    // A bad scale is a usage error, before any call.
    api.with(|s| s.requests = 0);
    let r = run_checked(&mut scalar_cmd(&api, dir.path(), &out, &["--scale", "5"]));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(api.with(|s| s.requests), 0);
}

const CHECKLIST_JUDGE: &str = "checklist-judge";

/// Judgments of the answers of `write_answers`: three answers below 60 % by the judge with the
/// most judgments, one exactly at 60 %, and one failure by another judge.
fn write_judgments(dir: &Path) -> PathBuf {
    let j = |q: &str, m: &str, attempt: u32, judge: &str, run: u32, s: [u32; 3]| {
        json!({"question_id": q, "model": m, "attempt": attempt, "judge": judge,
               "judge_run": run, "items": [
                   {"id": "k1", "rationale": "r1", "score": s[0]},
                   {"id": "k2", "rationale": "r2", "score": s[1]},
                   {"id": "clarity", "rationale": "r3", "score": s[2]}]})
    };
    let rows = [
        j("q1", "A", 0, CHECKLIST_JUDGE, 0, [0, 2, 1]), // 30 %
        j("q2", "A", 0, CHECKLIST_JUDGE, 0, [5, 4, 1]), // 100 %
        j("q3", "A", 0, CHECKLIST_JUDGE, 0, [3, 2, 1]), // 60 %: not a failure
        j("q1", "B", 0, CHECKLIST_JUDGE, 0, [3, 2, 1]), // 60 % and
        j("q1", "B", 0, CHECKLIST_JUDGE, 1, [0, 0, 1]), // 10 %: mean 35 %
        j("q3", "B", 1, CHECKLIST_JUDGE, 0, [0, 0, 0]), // 0 %
        j("q2", "A", 0, "other-judge", 0, [0, 0, 1]),   // 10 % by another judge
    ];
    let p = dir.join("judgments.jsonl");
    std::fs::write(
        &p,
        rows.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    p
}

fn classify_cmd(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = live_cmd(api, "classify-failures", out);
    c.arg(BENCHMARK)
        .arg(write_answers(dir))
        .arg(write_judgments(dir))
        .args(extra);
    c
}

fn label_keys(out: &Path) -> Vec<(String, String, u64)> {
    records(out)
        .iter()
        .map(|r| {
            assert_eq!(r["classifier"], JUDGE);
            (
                r["question_id"].as_str().unwrap().into(),
                r["model"].as_str().unwrap().into(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn classify_failures_labels_answers_below_60_percent_and_resumes() {
    let api = FakeApi::start_for(Kind::Classify, Api::Openai, Mode::Schema);
    api.with(|s| s.faults = VecDeque::from([Fault::ScoreOutsideEnum, Fault::ServerError]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("labels.jsonl");
    let r = run_checked(&mut classify_cmd(&api, dir.path(), &out, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    // 3 keys, one 500 retried, one invalid mode re-asked.
    assert_eq!(api.with(|s| s.requests), 5);
    assert!(r.stderr.contains("(1 HTTP, 1 re-asks)"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("judge \"checklist-judge\": 3 answer(s) below 60 %"),
        "{}",
        r.stderr
    );
    let mut keys = label_keys(&out);
    keys.sort();
    let want = [("q1", "A", 0), ("q1", "B", 0), ("q3", "B", 1)];
    assert_eq!(
        keys,
        want.map(|(q, m, a)| (q.to_string(), m.to_string(), a))
    );
    for rec in records(&out) {
        assert_eq!(rec["mode"], "edit_bias");
        assert_eq!(rec["checklist_judge"], CHECKLIST_JUDGE);
        assert!(rec["checklist_score"].as_f64().unwrap() < 0.6);
        assert_eq!(rec["prompt_version"], "classify-failures-v1");
    }
    let answers = dir.path().join("answers.jsonl");
    let judgments = dir.path().join("judgments.jsonl");
    let files = [
        BENCHMARK,
        answers.to_str().unwrap(),
        judgments.to_str().unwrap(),
        out.to_str().unwrap(),
    ];
    let v = repoprobe(&[&["validate"][..], &files].concat());
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    let s = repoprobe(&[&["score"][..], &files, &["--format", "json"]].concat());
    let report: Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(
        report["failure_modes"].as_array().unwrap().len(),
        2,
        "{}",
        s.stdout
    );

    // A rerun has nothing to do.
    api.with(|s| s.requests = 0);
    let r = run_checked(&mut classify_cmd(&api, dir.path(), &out, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("0 classified, 3 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 0);
    assert_eq!(label_keys(&out).len(), 3);

    // Another judge's scores decide what failed when it is named.
    let other = dir.path().join("other.jsonl");
    let r = run_checked(&mut classify_cmd(
        &api,
        dir.path(),
        &other,
        &["--judge", "other-judge", "--structured", "prompt"],
    ));
    assert_eq!(
        r.code, 1,
        "prompt mode against a schema server: {}",
        r.stderr
    );
    let api = FakeApi::start_for(Kind::Classify, Api::Openai, Mode::Prompt);
    api.with(|s| s.fenced = true);
    let r = run_checked(&mut classify_cmd(
        &api,
        dir.path(),
        &other,
        &["--judge", "other-judge", "--structured", "prompt"],
    ));
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert_eq!(label_keys(&other), [("q2".to_string(), "A".to_string(), 0)]);
    let r = run_checked(&mut classify_cmd(
        &api,
        dir.path(),
        &other,
        &["--judge", "nobody"],
    ));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("judge \"nobody\" has no valid judgments"),
        "{}",
        r.stderr
    );
}

/// The golden benchmark without its checklists; q2's repository given by name only.
fn write_sources(dir: &Path) -> PathBuf {
    let text: String = std::fs::read_to_string(BENCHMARK)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("checklist");
            if v["id"] == "q1" {
                let answer = format!(
                    "{} (see {CHECKLIST_EVIDENCE_CITED})",
                    v["reference_answer"].as_str().unwrap()
                );
                v["reference_answer"] = json!(answer);
            }
            if v["id"] == "q2" {
                v["repo"] = json!("example/python");
            }
            format!("{v}\n")
        })
        .collect();
    let p = dir.join("sources.jsonl");
    std::fs::write(&p, text).unwrap();
    p
}

fn checklist_cmd(api: &FakeApi, dir: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = live_cmd(api, "curate make-checklist", out);
    c.arg(write_sources(dir)).args(extra);
    c
}

fn ids(out: &Path) -> Vec<String> {
    let mut ids: Vec<String> = records(out)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn make_checklist_writes_valid_questions_reasking_rule_breaking_replies() {
    let api = FakeApi::start_for(Kind::MakeChecklist, Api::Openai, Mode::Schema);
    api.with(|s| s.faults = VecDeque::from([Fault::ScoreOutsideEnum, Fault::RateLimited]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("benchmark.jsonl");
    let r = run_checked(&mut checklist_cmd(&api, dir.path(), &out, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert!(api.with(|s| s.reasks) >= 1);
    assert!(
        r.stderr.contains("curate make-checklist: 3 made"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("(1 HTTP, 1 re-asks)"), "{}", r.stderr);
    assert_eq!(ids(&out), ["q1", "q2", "q3"]);
    let golden: Vec<Value> = lines_of(Path::new(BENCHMARK))
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for mut rec in records(&out) {
        let g = golden.iter().find(|g| g["id"] == rec["id"]).unwrap();
        // The evidence the model gave, normalised and merged into one entry; none elsewhere.
        let k1 = rec["checklist"][0].as_object_mut().unwrap();
        let evidence = k1.remove("evidence");
        if rec["id"] == "q1" {
            assert_eq!(
                evidence,
                Some(
                    json!([{"path": "src/flows/llm_flow.py", "lines": [210, 264],
                             "source": "make-checklist-v2"}])
                )
            );
        } else {
            assert_eq!(evidence, None, "{rec}");
        }
        assert_eq!(rec["checklist"], g["checklist"]);
        assert_eq!(rec["question"], g["question"]);
        assert_eq!(rec["note_unknown_field"], "kept and ignored");
        assert_eq!(rec["prompt_version"], "make-checklist-v2");
        if rec["id"] == "q2" {
            assert_eq!(rec["repo"]["name"], "example/python");
        }
    }
    let v = repoprobe(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);

    // Torn by a kill: the two other questions are made again, none twice.
    tear(&out, 1);
    api.with(|s| s.requests = 0);
    let r = run_checked(&mut checklist_cmd(&api, dir.path(), &out, &[]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("2 made, 1 already done"), "{}", r.stderr);
    assert_eq!(api.with(|s| s.requests), 2);
    assert_eq!(ids(&out), ["q1", "q2", "q3"]);
}

#[test]
fn make_checklist_records_a_reply_that_keeps_breaking_the_rules_as_a_failure() {
    let api = FakeApi::start_for(Kind::MakeChecklist, Api::Openai, Mode::Prompt);
    api.with(|s| {
        s.fenced = true;
        s.always_invalid = vec!["q2".into()];
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.jsonl");
    let extra = ["--structured", "prompt", "--max-retries", "1"];
    let r = run_checked(&mut checklist_cmd(&api, dir.path(), &out, &extra));
    assert_eq!(r.code, 1, "{}", r.stderr);
    api.assert_no_violations();
    assert_eq!(ids(&out), ["q1", "q3"]);
    let failed = records(&dir.path().join("b.failures.ndjson"));
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["id"], "q2");
    assert!(failed[0].get("checklist").is_none());
    let violations: Vec<&str> = failed[0]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        violations.contains(&"the knowledge weights sum to 8: they must sum to 9"),
        "{violations:?}"
    );
    let v = repoprobe(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);

    api.with(|s| s.always_invalid.clear());
    let r = run_checked(&mut checklist_cmd(&api, dir.path(), &out, &extra));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ids(&out), ["q1", "q2", "q3"]);
    let unique: HashSet<String> = ids(&out).into_iter().collect();
    assert_eq!(unique.len(), 3);
}
