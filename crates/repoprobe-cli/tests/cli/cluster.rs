//! A run on a real cluster: job arrays of the repository's batch script
//! (`deploy/slurm/repoprobe-array.sbatch`) on a one-node Slurm the test starts, each task
//! `--shard auto` with `{shard}` in `--out`; a task stopped by SIGTERM and requeued; a task with
//! another model refused by the run's manifest; `status` and `merge` on what the tasks wrote;
//! and the Kubernetes Indexed Job's manifest read for the fields that make it work.

use crate::common;

use common::slurm::Slurm;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// `repoprobe status` on a run; (exit code, stdout).
fn status(run: &Path) -> (i32, String) {
    let r = repoprobe(&["status", run.to_str().unwrap()]);
    (r.code, r.stdout + &r.stderr)
}

fn score(dir: &Path, judgments: &Path) -> String {
    let answers = dir.join("answers.jsonl");
    let r = repoprobe(&[
        "score",
        BENCHMARK,
        answers.to_str().unwrap(),
        judgments.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

fn log_of(dir: &Path, name: &str, task: u32) -> String {
    std::fs::read_to_string(dir.join(format!("{name}-{task}.log"))).unwrap_or_default()
}

#[test]
fn judge_and_answer_run_as_slurm_job_arrays_that_survive_sigterm_and_merge_into_the_whole() {
    let Some(slurm) = Slurm::start() else { return };
    let api = FakeApi::start(Api::Openai, Mode::Schema);
    // Slow enough that a task can be stopped mid-run: 20 keys, 0.4 s each, one at a time.
    api.with(|s| s.latency = Duration::from_millis(400));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let template = d.join("judgments-{shard}.jsonl");
    judge_array_stopped_requeued_and_merged(&slurm, &api, d, &template);
    one_task_lost_and_submitted_again_alone_completes_the_run(&slurm, &api, d, &template);
    another_model_is_refused_by_the_runs_manifest(&slurm, &api, d, &template);
    answer_array_merged(&slurm);
}

/// A 4-task `judge` array, task 2 stopped by SIGTERM mid-run and requeued: `status` and
/// `merge` refuse the run until it resumes, then the merge is exactly one process's output.
fn judge_array_stopped_requeued_and_merged(
    slurm: &Slurm,
    api: &FakeApi,
    d: &Path,
    template: &Path,
) {
    let job = judge_cmd(
        api,
        d,
        template,
        &["--runs", "4", "--concurrency", "1", "--shard", "auto"],
    );

    // One process on the same keys, for the time and the numbers to compare with.
    std::fs::create_dir_all(d.join("single")).unwrap();
    let single = d.join("single/judgments.jsonl");
    let started = Instant::now();
    let r = judge(api, d, &single, &["--runs", "4", "--concurrency", "1"]);
    let one_process = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.stderr);

    // The 4-task array, task 2 stopped by SIGTERM once it has written a record.
    let started = Instant::now();
    let id = slurm.submit_array("0-3", d, "judge", &job);
    let shard2 = d.join("judgments-0002-of-0004.jsonl");
    slurm.wait_for("task 2's first record", Duration::from_secs(60), || {
        std::fs::read_to_string(&shard2).is_ok_and(|t| t.lines().count() >= 1)
    });
    slurm.run("scancel", &["--full", "--signal=TERM", &format!("{id}_2")]);
    slurm.wait_for(
        "the other tasks to end and task 2 to be requeued",
        Duration::from_secs(90),
        || slurm.states(&id) == ["PENDING"],
    );
    let task2 = log_of(d, "judge", 2);
    assert!(task2.contains("stopped by SIGTERM"), "{task2}");
    assert!(task2.contains("requeueing"), "{task2}");
    let stopped_at = records(&shard2).len();
    let manifest = d.join("judgments.manifest");
    let (code, text) = status(&manifest);
    assert_eq!(code, 1, "a stopped shard is not complete:\n{text}");
    assert!(
        text.contains("0002-of-0004") && text.contains("left"),
        "{text}"
    );
    let refused = repoprobe(&[
        "merge",
        manifest.to_str().unwrap(),
        "--out",
        d.join("early.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("incomplete"), "{}", refused.stderr);

    // Requeued (released from Slurm's requeue delay at once): it resumes.
    slurm.run(
        "scontrol",
        &["update", &format!("jobid={id}_2"), "StartTime=now"],
    );
    slurm.wait(&id, Duration::from_secs(120));
    let array = started.elapsed();
    eprintln!(
        "timing: one process judged 20 keys in {:.1} s; the 4-task Slurm array (one task \
         stopped and requeued) in {:.1} s",
        one_process.as_secs_f64(),
        array.as_secs_f64()
    );
    let task2 = log_of(d, "judge", 2);
    assert!(task2.contains("restart 1"), "{task2}");
    assert!(
        records(&shard2).len() > stopped_at,
        "the requeued task went on"
    );
    let (code, text) = status(&manifest);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("complete: every key"), "{text}");
    std::fs::create_dir_all(d.join("merged")).unwrap();
    let merged = d.join("merged/judgments.jsonl");
    let r = repoprobe(&[
        "merge",
        d.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // No key lost, none twice, and the numbers of one process to the last digit.
    assert_judged_exactly(&merged, &expected_keys(4));
    assert_eq!(score(d, &merged), score(d, &single));
}

/// Task 1's output lost (a task that failed for good), then that task submitted again alone,
/// as Slurm users redo one task (`sbatch --array=1`): `--shard auto` takes the run's count from
/// its manifest, the run completes, and nothing of a one-task run is left behind.
fn one_task_lost_and_submitted_again_alone_completes_the_run(
    slurm: &Slurm,
    api: &FakeApi,
    d: &Path,
    template: &Path,
) {
    let shard1 = d.join("judgments-0001-of-0004.jsonl");
    let kept = records(&shard1).len();
    assert!(kept > 0);
    std::fs::remove_file(&shard1).unwrap();
    let manifest = d.join("judgments.manifest");
    let (code, text) = status(&manifest);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("to finish 0001-of-0004") && text.contains("sbatch --array=1"),
        "{text}"
    );
    let job = judge_cmd(
        api,
        d,
        template,
        &["--runs", "4", "--concurrency", "1", "--shard", "auto"],
    );
    let id = slurm.submit_array("1", d, "again", &job);
    slurm.wait(&id, Duration::from_secs(120));
    let log = log_of(d, "again", 1);
    assert!(log.contains("is shard 1/4 again"), "{log}");
    assert_eq!(records(&shard1).len(), kept, "{log}");
    assert!(
        !d.join("judgments-0000-of-0001.jsonl").exists(),
        "a one-task run's file was left: {log}"
    );
    let (code, text) = status(&manifest);
    assert_eq!(code, 0, "{text}");
    std::fs::create_dir_all(d.join("merged-again")).unwrap();
    let merged = d.join("merged-again/judgments.jsonl");
    let r = repoprobe(&[
        "merge",
        manifest.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_judged_exactly(&merged, &expected_keys(4));
}

/// A task of the same run given another model is refused by the manifest; nothing written.
fn another_model_is_refused_by_the_runs_manifest(
    slurm: &Slurm,
    api: &FakeApi,
    d: &Path,
    template: &Path,
) {
    let manifest = d.join("judgments.manifest");
    let before: Vec<usize> = (0..4)
        .map(|i| records(&d.join(format!("judgments-{i:04}-of-0004.jsonl"))).len())
        .collect();
    let same = judge_cmd(api, d, template, &["--runs", "4", "--shard", "auto"]);
    let mut other = Command::new(same.get_program());
    other.env_clear().args(same.get_args().map(|a| {
        if a == JUDGE {
            "another-judge".as_ref()
        } else {
            a
        }
    }));
    for (k, v) in same.get_envs() {
        other.env(k, v.unwrap());
    }
    let id = slurm.submit_array("0-3", d, "other", &other);
    slurm.wait(&id, Duration::from_secs(60));
    for i in 0..4 {
        let log = log_of(d, "other", i);
        assert!(log.contains("not part of the run"), "task {i}: {log}");
        assert!(
            log.contains("model: the run has \"judge-model\""),
            "task {i}: {log}"
        );
        assert_eq!(
            records(&d.join(format!("judgments-{i:04}-of-0004.jsonl"))).len(),
            before[i as usize]
        );
    }
    assert_eq!(status(&manifest).0, 0);
}

/// `answer` through an array too (the `command` agent in its sandbox), merged by its manifest.
fn answer_array_merged(slurm: &Slurm) {
    let case = crate::answer::case(None);
    let answers = case.dir.path().join("answers-{shard}.jsonl");
    let mut job = Command::new(BIN);
    job.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .arg("answer")
        .arg(&case.bench)
        .arg("--out")
        .arg(&answers)
        .arg("--clone-cache")
        .arg(case.dir.path().join("cache"))
        .arg("--repo-map")
        .arg(format!("acme/widget={}", case.repo.display()))
        .args(["--agent", "command", "--model", "sh", "--attempts", "2"])
        .args(["--shard", "auto", "--command", "echo answer from {model}"]);
    let id = slurm.submit_array("1-2", case.dir.path(), "answer", &job);
    slurm.wait(&id, Duration::from_secs(120));
    let manifest = case.dir.path().join("answers.manifest");
    let (code, text) = status(&manifest);
    assert_eq!(code, 0, "{text}\n{}", log_of(case.dir.path(), "answer", 1));
    let merged = case.dir.path().join("answers.jsonl");
    let r = repoprobe(&[
        "merge",
        manifest.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut keys: Vec<(String, u64)> = records(&merged)
        .iter()
        .map(|r| {
            assert_eq!(r["answer"], "answer from sh");
            (
                r["question_id"].as_str().unwrap().to_string(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("q1", 0),
            ("q1", 1),
            ("q2", 0),
            ("q2", 1),
            ("q3", 0),
            ("q3", 1)
        ]
        .map(|(q, a)| (q.to_string(), a))
    );
}

#[test]
fn the_kubernetes_indexed_job_is_one_shard_per_index_and_retries_a_sigterm_exit() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy/kubernetes/repoprobe-indexed-job.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let job: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert!(
        spec["backoffLimitPerIndex"]
            .as_u64()
            .is_some_and(|n| n >= 1)
    );
    let completions = spec["completions"].as_u64().unwrap();
    let pod = &spec["template"]["spec"];
    // Pod failure policies and per-index backoff need restartPolicy Never.
    assert_eq!(pod["restartPolicy"], "Never");
    let rules = spec["podFailurePolicy"]["rules"].as_array().unwrap();
    assert!(
        rules.iter().any(|r| r["action"] == "Ignore"
            && r["onExitCodes"]["values"]
                .as_array()
                .is_some_and(|v| v.contains(&serde_json::json!(75)))),
        "exit 75 (stopped by SIGTERM) must be retried: {rules:?}"
    );
    let container = &pod["containers"][0];
    assert_eq!(
        rules[0]["onExitCodes"]["containerName"], container["name"],
        "the exit-code rule names the container"
    );
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let after = |flag: &str| args.iter().position(|a| *a == flag).map(|i| args[i + 1]);
    assert_eq!(after("--shard"), Some("auto"));
    assert!(after("--out").unwrap().contains("{shard}"));
    let env = container["env"].as_array().unwrap();
    let shards = env
        .iter()
        .find(|e| e["name"] == "REPOPROBE_SHARDS")
        .unwrap();
    assert_eq!(shards["value"].as_str().unwrap(), completions.to_string());
    // The run directory is a volume every pod mounts, and the grace period covers --grace-s.
    let mount = &container["volumeMounts"][0];
    assert!(
        after("--out")
            .unwrap()
            .starts_with(mount["mountPath"].as_str().unwrap())
    );
    assert!(
        pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == mount["name"])
    );
    let grace: f64 = after("--grace-s").unwrap().parse().unwrap();
    assert!(pod["terminationGracePeriodSeconds"].as_f64().unwrap() > grace);
    // And the container's arguments are a command line repoprobe accepts: it gets as far as
    // asking for the key.
    let r = repoprobe(&args);
    assert!(
        r.stderr.contains("OPENAI_API_KEY is not set"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_plan_runs_as_one_slurm_array_whose_tasks_share_nothing_and_its_tables_come_after() {
    use crate::plan::{Fakes, plan_cmd, plan_text, results, run_plan};
    let Some(slurm) = Slurm::start() else { return };
    let f = Fakes::with_claude(false);
    // The whole plan in one process, for what the array must end with.
    let whole = crate::answer::case(None);
    let plan = whole.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&whole.bench, &whole.repo, &f, 0.0)).unwrap();
    let (code, _, stderr) = run_plan(&plan, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (want, _) = results(&whole.dir.path().join("runs"));
    // The same plan as a 3-task array: every task `run PLAN --shard auto`.
    let c = crate::answer::case(None);
    let plan = c.dir.path().join("plan.toml");
    std::fs::write(&plan, plan_text(&c.bench, &c.repo, &f, 0.0)).unwrap();
    let job = plan_cmd(&plan, &["--shard", "auto"]);
    let id = slurm.submit_array("0-2", c.dir.path(), "plan", &job);
    slurm.wait(&id, Duration::from_secs(180));
    let logs: String = (0..3).map(|t| log_of(c.dir.path(), "plan", t)).collect();
    let (code, stdout, stderr) = run_plan(&plan, &["--status"]);
    assert_eq!(code, 0, "{stdout}{stderr}\n{logs}");
    let (got, twice) = results(&c.dir.path().join("runs"));
    assert!(!twice, "a key was done by two tasks\n{logs}");
    assert_eq!(got, want, "{logs}");
    assert!(
        c.dir
            .path()
            .join("runs/judgments/Shell-0002-of-0003.jsonl")
            .exists(),
        "{logs}"
    );
    let (code, stdout, stderr) = run_plan(&plan, &["--tables"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\nShell ") && stdout.contains("\nBuiltin One "),
        "{stdout}"
    );
}
