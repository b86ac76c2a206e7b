//! `--batch` end to end against the fake server's batch APIs (OpenAI Files + Batches, Anthropic
//! Message Batches): every request of a batch gets the live calls' checks and faults; invalid
//! replies are asked again in a next batch; a run killed while it waits resumes the same batch.

use crate::common;

use common::*;
use std::time::Duration;

#[test]
fn a_batch_run_under_faults_ends_with_every_key_judged_once() {
    for (api_kind, mode) in [(Api::Openai, Mode::Schema), (Api::Anthropic, Mode::Tool)] {
        let api = FakeApi::start(api_kind, mode);
        api.with(|s| {
            s.batch.polls_before_end = 2;
            s.faults.extend([
                Fault::ScoreOutsideEnum,
                Fault::ServerError,
                Fault::NotJsonReply,
            ]);
        });
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("j.jsonl");
        let r = judge(
            &api,
            dir.path(),
            &out,
            &["--batch", "--poll-s", "0.05", "--runs", "2"],
        );
        assert_eq!(r.code, 0, "{api_kind:?}: {}", r.stderr);
        assert_judged_exactly(&out, &expected_keys(2));
        api.assert_no_violations();
        let (created, requests) = api.with(|s| (s.batch.created, s.batch.requests));
        // 10 keys in the first batch, the 3 faulted ones again in a second.
        assert_eq!((created, requests), (2, 13), "{api_kind:?}");
        assert!(
            !dir.path().join("j.batch.json").exists(),
            "the batch record is removed once merged"
        );
        assert!(r.stderr.contains("10 judged"), "{}", r.stderr);
    }
}

#[test]
fn a_batch_run_killed_while_waiting_resumes_the_same_batch() {
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    api.with(|s| s.batch.hold = true);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("j.jsonl");
    let state = dir.path().join("j.batch.json");
    let mut child = judge_cmd(&api, dir.path(), &out, &["--batch", "--poll-s", "0.05"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait::until(
        "the batch record j.batch.json",
        Duration::from_secs(60),
        || state.exists(),
    );
    std::thread::sleep(Duration::from_millis(100));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(recorded["batch_id"], "batch_1");
    api.with(|s| s.batch.hold = false);
    let r = judge(&api, dir.path(), &out, &["--batch", "--poll-s", "0.05"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("batch batch_1: resuming"), "{}", r.stderr);
    assert_eq!(
        api.with(|s| s.batch.created),
        1,
        "the batch was not paid for twice"
    );
    assert_judged_exactly(&out, &expected_keys(1));
    assert!(!state.exists());
}
