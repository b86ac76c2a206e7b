//! What long live runs need beyond a single call, end to end against a loopback server: a split
//! across machines (`--shard`), one writer per output file, the server's rate-limit headers
//! obeyed, and the summary's cost estimate.

use crate::common;

use common::*;
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn shards_split_a_run_and_bundle_merges_them_into_the_whole() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    let mut seen = HashSet::new();
    for i in 0..3 {
        let out = dir.path().join(format!("shard{i}.jsonl"));
        let shard = format!("{i}/3");
        let r = judge(&api, dir.path(), &out, &["--runs", "2", "--shard", &shard]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("(this is shard {i}/3)")),
            "{}",
            r.stderr
        );
        for rec in records(&out) {
            assert!(
                seen.insert(key(&rec)),
                "a key in two shards: {:?}",
                key(&rec)
            );
        }
        outs.push(out);
    }
    assert_eq!(
        seen,
        expected_keys(2),
        "the shards together are the whole run"
    );
    let merged = dir.path().join("merged.json");
    let mut args = vec![
        "bundle".to_string(),
        "--out".into(),
        merged.display().to_string(),
    ];
    args.extend(outs.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = repoprobe(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(bundle["judgments"].as_array().unwrap().len(), 10);
    let bad = repoprobe(&["judge", "--shard", "3/3"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("0 ≤ I < N"), "{}", bad.stderr);
}

#[test]
fn a_second_run_on_the_same_output_is_refused_while_the_first_writes() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    // The first run takes 5 × 800 ms; the second waits up to 2 s for the lock, then gives up.
    api.with(|s| s.latency = Duration::from_millis(800));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let first = judge_cmd(&api, dir.path(), &out, &["--concurrency", "1"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first run holds the file.
    common::wait::until(
        "the first run's first request",
        Duration::from_secs(60),
        || api.with(|s| s.requests) > 0,
    );
    let second = judge(&api, dir.path(), &out, &[]);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains("being written by another run"),
        "{}",
        second.stderr
    );
    let first = ran(first.wait_with_output().unwrap());
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_judged_exactly(&out, &expected_keys(1));
    // Once the first is gone, a rerun is welcome (and has nothing left to do).
    let again = judge(&api, dir.path(), &out, &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("0 judged, 5 already done"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_spent_request_budget_holds_every_request_until_its_reset() {
    for api_kind in [Api::Openai, Api::Anthropic] {
        let mode = if api_kind == Api::Openai {
            Mode::Schema
        } else {
            Mode::Tool
        };
        let api = FakeApi::start(api_kind, mode);
        let reset = match api_kind {
            Api::Openai => {
                "x-ratelimit-remaining-requests: 0\r\nx-ratelimit-reset-requests: 1.2s\r\n"
                    .to_string()
            }
            Api::Anthropic => {
                let at = std::time::SystemTime::now() + Duration::from_millis(1500);
                format!(
                    "anthropic-ratelimit-requests-remaining: 0\r\nanthropic-ratelimit-requests-reset: {}\r\n",
                    humantime::format_rfc3339_millis(at)
                )
            }
        };
        api.with(|s| s.headers_once = Some(reset));
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("j.jsonl");
        let r = judge(&api, dir.path(), &out, &["--concurrency", "1"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let arrivals = api.with(|s| s.arrivals.clone());
        assert_eq!(arrivals.len(), 5);
        let gap = arrivals[1] - arrivals[0];
        assert!(
            gap >= Duration::from_millis(1000),
            "{api_kind:?}: the second request came after {gap:?}"
        );
        // Held again, a later request would wait about as long as the second did; unheld, it
        // comes after one fast local reply. Half the first hold tells the two apart on any load.
        let later = arrivals[1..].windows(2).map(|w| w[1] - w[0]).max().unwrap();
        assert!(
            later < gap / 2,
            "{api_kind:?}: later requests were held too (one came {later:?} after the previous)"
        );
        api.assert_no_violations();
    }
}

#[test]
fn the_summary_estimates_the_cost_from_the_given_prices() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let r = judge(
        &api,
        dir.path(),
        &out,
        &["--price-in", "1000000", "--price-out", "0"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The fake server reports 100 input tokens per call: 5 calls at $1 per token.
    assert!(r.stderr.contains("≈$500.00 estimated"), "{}", r.stderr);
}

#[test]
fn sigterm_stops_a_run_whole_with_exit_75_and_the_rerun_resumes() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.latency = Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let child = judge_cmd(
        &api,
        dir.path(),
        &out,
        &["--runs", "2", "--concurrency", "2"],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    common::wait::until("two records written", Duration::from_secs(60), || {
        std::fs::read_to_string(&out).is_ok_and(|t| t.lines().count() >= 2)
    });
    // SAFETY: a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let r = ran(child.wait_with_output().unwrap());
    assert_eq!(r.code, 75, "{}", r.stderr);
    assert!(r.stderr.contains("SIGTERM: no new key"), "{}", r.stderr);
    assert!(r.stderr.contains("stopped by SIGTERM"), "{}", r.stderr);
    let written = records(&out).len();
    assert!((2..10).contains(&written), "{written} records");
    let again = judge(&api, dir.path(), &out, &["--runs", "2"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains(&format!("{} already done", written)),
        "{}",
        again.stderr
    );
    assert_judged_exactly(&out, &expected_keys(2));
}

#[test]
fn shard_auto_outside_a_cluster_job_names_the_variables_it_looked_for() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j-{shard}.jsonl");
    let r = judge(&api, dir.path(), &out, &["--shard", "auto"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "JOB_COMPLETION_INDEX",
        "REPOPROBE_SHARDS",
    ] {
        assert!(r.stderr.contains(var), "{}", r.stderr);
    }
    // A Kubernetes index with its count: shard 1 of 2, the file named for it.
    let r = run_checked(
        judge_cmd(
            &api,
            dir.path(),
            &out,
            &["--shard", "auto", "--shards", "2"],
        )
        .env("JOB_COMPLETION_INDEX", "1"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("(this is shard 1/2)"), "{}", r.stderr);
    assert!(!records(&dir.path().join("j-0001-of-0002.jsonl")).is_empty());
    assert!(dir.path().join("j.manifest").is_file());
}

#[test]
fn merge_refuses_a_key_twice_and_another_runs_files_unless_told_and_names_the_shard() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("j-{shard}.jsonl");
    for i in 0..2 {
        let r = judge(
            &api,
            dir.path(),
            &template,
            &["--runs", "2", "--shard", &format!("{i}/2")],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let manifest = dir.path().join("j.manifest");
    let merged = dir.path().join("merged.jsonl");
    let merge = |extra: &[&str]| {
        let mut args = vec![
            "merge",
            manifest.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ];
        args.extend(extra);
        repoprobe(&args)
    };
    let ok = merge(&[]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_judged_exactly(&merged, &expected_keys(2));
    // A record of shard 0's copied into shard 1's file: a key twice, in a shard not its own.
    let shard0 = dir.path().join("j-0000-of-0002.jsonl");
    let shard1 = dir.path().join("j-0001-of-0002.jsonl");
    let first = std::fs::read_to_string(&shard0)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut text = std::fs::read_to_string(&shard1).unwrap();
    text.push_str(&first);
    text.push('\n');
    std::fs::write(&shard1, text).unwrap();
    let r = merge(&[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("shard 0001-of-0002"), "{}", r.stderr);
    assert!(r.stderr.contains("in another shard too"), "{}", r.stderr);
    let (code, text) = {
        let r = repoprobe(&["status", manifest.to_str().unwrap()]);
        (r.code, r.stdout)
    };
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("record(s) of another shard's keys"), "{text}");
    let r = merge(&["--allow-duplicates"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_judged_exactly(&merged, &expected_keys(2));
    // A shard whose note names another run is not this run's.
    let note = dir.path().join("j-0000-of-0002.shard");
    let other = std::fs::read_to_string(&note)
        .unwrap()
        .replace("\"run_id\":\"", "\"run_id\":\"0ther");
    std::fs::write(&note, other).unwrap();
    let r = merge(&["--allow-duplicates"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("written by another run"), "{}", r.stderr);
}
