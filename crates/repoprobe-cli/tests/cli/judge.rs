//! End-to-end tests of `repoprobe judge`: the real binary, with a cleared environment, against a
//! real HTTP server on 127.0.0.1 that each test starts (`common/mod.rs`, shared with the tests of
//! the other live calls in `llm_commands.rs`).

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_run_under_faults_ends_with_every_key_judged_and_valid() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| {
        s.faults = VecDeque::from([
            Fault::RateLimited,
            Fault::ServerError,
            Fault::NotJsonReply,
            Fault::HtmlBody,
            Fault::ScoreOutsideEnum,
        ])
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judgments.jsonl");
    let started = Instant::now();
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "2", "--concurrency", "3"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retry-after: 1 was not honoured"
    );
    assert_judged_exactly(&out, &expected_keys(2));
    // 10 keys; 3 HTTP faults retried and 2 invalid replies re-asked (a re-ask may itself meet an
    // HTTP fault and be sent twice, so the server sees at least 2 re-ask requests).
    let (requests, reasks) = api.with(|s| (s.requests, s.reasks));
    assert_eq!(requests, 15);
    assert!(reasks >= 2, "{reasks} re-asks");
    assert!(r.stderr.contains("10 judged"), "{}", r.stderr);
    assert!(r.stderr.contains("1 answer(s) skipped"), "{}", r.stderr);
    assert!(
        r.stderr.contains("5 retries (3 HTTP, 2 re-asks)"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("judgments.failures.ndjson").exists());
    for rec in records(&out) {
        assert_eq!(rec["prompt_version"], "checklist-judge-v1");
        assert_eq!(rec["provider"], "openai");
        assert!(rec["usage"]["input_tokens"].as_u64().unwrap() >= 100);
        let raw: Value = serde_json::from_str(rec["raw_reply"].as_str().unwrap()).unwrap();
        assert_eq!(raw["k1"]["score"], rec["items"][0]["score"]);
        let ids: Vec<&str> = rec["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["k1", "k2", "clarity"]);
    }
    // The output scores like any judgments file.
    let s = repoprobe(&[
        "score",
        BENCHMARK,
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let report: Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(report["models"].as_array().unwrap().len(), 2);
}

#[test]
fn a_resumed_run_repairs_a_torn_line_and_loses_or_duplicates_no_key() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    assert_eq!(judge(&api, dir.path(), &out, &["--runs", "1"]).code, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5);
    // Two whole lines and the first half of a third, as a kill mid-write leaves them.
    let partial = format!(
        "{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 2]
    );
    std::fs::write(&out, partial).unwrap();

    api.with(|s| {
        s.requests = 0;
        s.faults = VecDeque::from([Fault::ServerError]);
    });
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "2", "--concurrency", "4"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("the last line was cut off"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("8 judged, 2 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 9);
    assert_judged_exactly(&out, &expected_keys(2));

    // Nothing left to do: no call, no line.
    api.with(|s| s.requests = 0);
    let r = judge(&api, dir.path(), &out, &["--runs", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("0 judged, 10 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 0);
    assert_judged_exactly(&out, &expected_keys(2));
    api.assert_no_violations();
}

#[test]
fn a_run_killed_with_sigkill_resumes_without_losing_or_duplicating_a_key() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.latency = Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let mut child = judge_cmd(
        &api,
        dir.path(),
        &out,
        &["--runs", "3", "--concurrency", "2"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let lines = || std::fs::read(&out).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
    common::wait::until("four records written", Duration::from_secs(60), || {
        lines() >= 4
    });
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let written = records(&out).len();
    assert!(written < 15, "the run finished before it was killed");

    api.with(|s| s.latency = Duration::ZERO);
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--runs", "3", "--concurrency", "2"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_judged_exactly(&out, &expected_keys(3));
    api.assert_no_violations();
}

#[test]
fn anthropic_gets_a_forced_tool_and_the_key_in_x_api_key() {
    let api = FakeApi::start(Api::Anthropic, Mode::Tool);
    api.with(|s| s.faults = VecDeque::from([Fault::ScoreOutsideEnum, Fault::RateLimited]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--temperature", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert_judged_exactly(&out, &expected_keys(1));
    let recs = records(&out);
    assert!(
        recs.iter()
            .all(|r| r["provider"] == "anthropic" && r["structured"] == "tool")
    );
    assert_eq!(api.with(|s| s.reasks), 1);
}

#[test]
fn prompt_mode_sends_no_schema_field_and_accepts_fenced_replies() {
    let api = FakeApi::start(Api::Openai, Mode::Prompt);
    api.with(|s| {
        s.fenced = true;
        s.faults = VecDeque::from([Fault::NotJsonReply]);
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--structured", "prompt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert_judged_exactly(&out, &expected_keys(1));
    let rec = &records(&out)[0];
    assert!(
        rec["raw_reply"]
            .as_str()
            .unwrap()
            .starts_with("Here is the grading")
    );
}

#[test]
fn keys_that_stay_invalid_become_failure_records_never_judgments() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| {
        s.always_invalid = vec!["q2".into()];
        s.refused_echoing_key = vec!["q3".into()];
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let failures = dir.path().join("j.failures.ndjson");
    let r = judge(&api, dir.path(), &out, &["--max-retries", "1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    api.assert_no_violations();
    // q2: the first ask and one re-ask; q3: one refused call, not retried.
    assert_eq!(api.with(|s| s.requests), 4 + 2);
    let judged: HashSet<_> = records(&out).iter().map(key).collect();
    let want: HashSet<_> = expected_keys(1)
        .into_iter()
        .filter(|k| k.0 == "q1")
        .collect();
    assert_eq!(judged, want);
    let failed = records(&failures);
    assert_eq!(failed.len(), 3, "{failed:#?}");
    for f in &failed {
        assert!(f.get("items").is_none());
        match f["question_id"].as_str().unwrap() {
            "q2" => {
                // The call was made; the replies stayed invalid.
                assert_eq!((&f["status"], f.get("cause")), (&json!("failed"), None));
                assert!(
                    f["reason"]
                        .as_str()
                        .unwrap()
                        .contains("still invalid after 1 re-ask")
                );
                assert!(
                    f["violations"][0]
                        .as_str()
                        .unwrap()
                        .contains("score 7 is not allowed")
                );
                assert!(f["raw_reply"].is_string());
            }
            "q3" => {
                // The request was refused as ours (HTTP 400): it never got through.
                assert_eq!(
                    (&f["status"], &f["cause"]),
                    (&json!("could_not_run"), &json!("config"))
                );
                let reason = f["reason"].as_str().unwrap();
                assert!(
                    reason.contains("HTTP 400") && reason.contains("[redacted]"),
                    "{reason}"
                );
            }
            other => panic!("unexpected failure for {other}"),
        }
    }
    let refused = failed
        .iter()
        .filter(|f| f["status"] == "could_not_run")
        .count();
    assert!(
        r.stderr.contains(&format!(
            "3 failed ({refused} could not run: {refused} configuration refused; see "
        )),
        "{}",
        r.stderr
    );
    // The judgments stay valid and scoreable; the failures are not judgments.
    let v = repoprobe(&["validate", BENCHMARK, out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}", v.stdout);

    // A rerun against a healthy server tries the failed keys again.
    api.with(|s| {
        s.always_invalid.clear();
        s.refused_echoing_key.clear();
    });
    let r = judge(&api, dir.path(), &out, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_judged_exactly(&out, &expected_keys(1));
}

#[test]
fn without_the_key_in_the_environment_nothing_is_called() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let mut c = judge_cmd(&api, dir.path(), &out, &[]);
    c.env_remove("OPENAI_API_KEY");
    let r = ran(c.output().unwrap());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("OPENAI_API_KEY is not set"),
        "{}",
        r.stderr
    );
    assert_eq!(api.with(|s| s.requests), 0);
    assert!(!out.exists());
}

#[test]
fn a_429_for_an_exhausted_quota_is_not_retried() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.faults = VecDeque::from([Fault::QuotaExhausted]));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(&api, dir.path(), &out, &["--concurrency", "1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(api.with(|s| s.requests), 5, "the quota 429 was retried");
    let failed = records(&dir.path().join("j.failures.ndjson"));
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["reason"].as_str().unwrap().contains("HTTP 429"));
    assert_eq!(records(&out).len(), 4);
}

#[test]
fn an_estimate_prints_calls_tokens_and_cost_and_sends_nothing() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("judgments.jsonl");
    let r = judge(
        &api,
        dir.path(),
        &out,
        &[
            "--runs",
            "3",
            "--estimate",
            "--price-in",
            "1",
            "--price-out",
            "10",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(api.with(|s| s.requests), 0, "a request was sent");
    assert!(!out.exists(), "an estimate writes nothing");
    let keys = expected_keys(3).len();
    assert!(
        r.stdout.contains(&format!(
            "judge --estimate (nothing sent): {keys} call(s) to {JUDGE}"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("cost   ≈ $"), "{}", r.stdout);
    // A model outside the price table and no prices given: the cost is said to be unknown.
    let r = judge(&api, dir.path(), &out, &["--estimate"]);
    assert!(r.stdout.contains("not in the price table"), "{}", r.stdout);
    assert_eq!(api.with(|s| s.requests), 0);
}

#[test]
fn a_key_held_under_another_name_is_read_from_it_and_written_nowhere() {
    for api in [Api::Openai, Api::Anthropic] {
        let mode = if api == Api::Openai {
            Mode::Schema
        } else {
            Mode::Tool
        };
        let api = FakeApi::start(api, mode);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("j.jsonl");
        let mut c = judge_cmd(&api, dir.path(), &out, &["--key-env", "GATEWAY_KEY"]);
        c.env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env("GATEWAY_KEY", KEY);
        let r = run_checked(&mut c);
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The fake server records a violation for any request without the right key.
        api.assert_no_violations();
        assert_judged_exactly(&out, &expected_keys(1));
        common::assert_no_file_holds(dir.path(), KEY);
        // The named variable unset: refused before any call, naming it.
        let mut c = judge_cmd(
            &api,
            dir.path(),
            &dir.path().join("k.jsonl"),
            &["--key-env", "GATEWAY_KEY"],
        );
        let r = ran(c.output().unwrap());
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains("GATEWAY_KEY (--key-env) is not set"),
            "{}",
            r.stderr
        );
    }
    let r = repoprobe(&[
        "judge",
        "--key-env",
        "NOT-A-NAME",
        "--model",
        "m",
        "--out",
        "x",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("is not an environment variable's name"),
        "{}",
        r.stderr
    );
}

#[test]
fn no_key_is_refused_for_a_providers_own_api() {
    let dir = tempfile::tempdir().unwrap();
    let answers = write_answers(dir.path());
    let out = dir.path().join("j.jsonl");
    let r = repoprobe(&[
        "judge",
        BENCHMARK,
        answers.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--provider",
        "openai",
        "--model",
        "m",
        "--no-key",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--no-key needs --base-url: https://api.openai.com/v1 needs a key"),
        "{}",
        r.stderr
    );
    assert!(!out.exists());
}

/// `--shuffle-items SEED`: each answer's items reach the judge in the order its record says,
/// drawn per answer; the record keeps its items in checklist order and names the judge
/// `MODEL@shuffled-SEED`; a rerun presents the same orders; `repoprobe judge-agreement`
/// compares the shuffled judge with the unshuffled one like any pair (the order bias).
#[test]
fn shuffled_items_reach_the_judge_in_the_recorded_order_and_compare_with_the_plain_run() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let shuffled = dir.path().join("shuffled.jsonl");
    let plain = dir.path().join("plain.jsonl");
    let r = judge(
        &api,
        dir.path(),
        &shuffled,
        &["--runs", "2", "--shuffle-items", "7"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bodies = api.with(|s| std::mem::take(&mut s.bodies));
    let name = format!("{JUDGE}@shuffled-7");
    let recs = records(&shuffled);
    assert_eq!(recs.len(), 10);
    let mut orders = HashSet::new();
    let mut recorded = HashSet::new();
    for rec in &recs {
        assert_eq!(rec["judge"], name.as_str());
        assert_eq!(rec["shuffle_items"], 7);
        let ids: Vec<&str> = rec["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["k1", "k2", "clarity"], "checklist order kept");
        let order: Vec<&str> = rec["item_order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap())
            .collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["clarity", "k1", "k2"], "a permutation: {order:?}");
        let answer = match (
            rec["model"].as_str().unwrap(),
            rec["question_id"].as_str().unwrap(),
        ) {
            ("B", "q3") => "B on q3, again".to_string(),
            (m, q) => format!("{m} on {q}"),
        };
        recorded.insert((answer, order.join(",")));
        orders.insert(order.join(","));
    }
    assert!(
        orders.len() > 1,
        "every answer got the same order: {orders:?}"
    );
    // Each request showed its answer's items in the order of that answer's record.
    let shown: HashSet<(String, String)> = bodies
        .iter()
        .map(|b| {
            let req: Value = serde_json::from_str(b).unwrap();
            let prompt = req["messages"].to_string();
            let mut at: Vec<(usize, &str)> = ["k1", "k2", "clarity"]
                .into_iter()
                .map(|id| {
                    (
                        prompt.find(&format!("### Item `{id}`")).expect("each item"),
                        id,
                    )
                })
                .collect();
            at.sort_unstable();
            let answer = ["B on q3, again", "A on q1", "A on q2", "A on q3", "B on q1"]
                .into_iter()
                .find(|a| prompt.contains(a))
                .expect("an answer")
                .to_string();
            (
                answer,
                at.iter().map(|(_, id)| *id).collect::<Vec<_>>().join(","),
            )
        })
        .collect();
    assert_eq!(shown, recorded);

    // A rerun into a fresh file presents the same orders.
    let again = dir.path().join("again.jsonl");
    assert_eq!(
        judge(
            &api,
            dir.path(),
            &again,
            &["--runs", "2", "--shuffle-items", "7"]
        )
        .code,
        0
    );
    let key = |r: &Value| {
        (
            r["question_id"].to_string(),
            r["model"].to_string(),
            r["attempt"].to_string(),
            r["judge_run"].to_string(),
        )
    };
    let first: std::collections::BTreeMap<_, _> = recs
        .iter()
        .map(|r| (key(r), r["item_order"].clone()))
        .collect();
    for r in records(&again) {
        assert_eq!(first[&key(&r)], r["item_order"]);
    }

    assert_eq!(judge(&api, dir.path(), &plain, &["--runs", "1"]).code, 0);
    assert!(
        records(&plain)
            .iter()
            .all(|r| r.get("item_order").is_none())
    );
    let v = repoprobe(&[
        "judge-agreement",
        BENCHMARK,
        shuffled.to_str().unwrap(),
        plain.to_str().unwrap(),
        "--a",
        &name,
        "--b",
        JUDGE,
        "--format",
        "json",
    ]);
    assert_eq!(v.code, 0, "{}", v.stderr);
    let report: Value = serde_json::from_str(&v.stdout).unwrap();
    // Five answers, three items each, judged by both in run 0.
    assert_eq!(report["pairs"][0]["items"], 15, "{report}");
    assert_eq!(report["pairs"][0]["answers"], 5, "{report}");
}

/// Several `--model`s: each judge in turn into its own journal (`{model}` in `--out`), the
/// records named for their judge, so that `score --panel` reads them as a panel; without
/// `{model}`, or with a model named twice, nothing is sent.
#[test]
fn several_models_judge_in_turn_each_into_its_own_journal_for_a_panel() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let b = format!("{JUDGE}-b");
    let c = format!("{JUDGE}-c");
    let out = dir.path().join("j.{model}.jsonl");
    let mut cmd = judge_cmd(&api, dir.path(), &out, &["--model", &b, "--model", &c]);
    let r = run_checked(&mut cmd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    api.assert_no_violations();
    assert!(r.stderr.contains("judge 3 of 3"), "{}", r.stderr);
    let mut files = Vec::new();
    for m in [JUDGE, b.as_str(), c.as_str()] {
        let f = dir.path().join(format!("j.{m}.jsonl"));
        let recs = records(&f);
        assert_eq!(recs.len(), 5, "{}", f.display());
        assert!(recs.iter().all(|r| r["judge"] == m), "{}", f.display());
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["score", BENCHMARK];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--format", "json", "--bootstrap", "0"]);
    for m in [JUDGE, b.as_str(), c.as_str()] {
        args.extend(["--panel", m]);
    }
    let s = repoprobe(&args);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let v: Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(v["panel"]["judgments"], 5, "{v}");

    // A rerun asks nothing: every judge's keys are done.
    api.with(|s| s.requests = 0);
    let again = run_checked(&mut judge_cmd(
        &api,
        dir.path(),
        &out,
        &["--model", &b, "--model", &c],
    ));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(api.with(|s| s.requests), 0);

    for (extra, says) in [
        (vec!["--model", &b], "must hold {model}"),
        (vec!["--model", JUDGE], "is given twice"),
    ] {
        let plain = dir.path().join("plain.jsonl");
        let out = if says.contains("{model}") {
            &plain
        } else {
            &out
        };
        let r = run_checked(&mut judge_cmd(&api, dir.path(), out, &extra));
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(says), "{says}: {}", r.stderr);
    }
    assert_eq!(
        api.with(|s| s.requests),
        0,
        "nothing sent on a refused command"
    );
}
