//! `repoprobe score`'s what-ifs and notes: dropped questions, re-weighted items, models that never answered, the evidence of the runs, and the bundled data's snapshot in every format.

use super::*;

#[test]
fn score_can_drop_questions_and_says_so_and_refuses_unknown_ones() {
    let all = run(&["score", GOLDEN, "--format", "json", "--bootstrap", "0"]);
    let r = run(&[
        "score",
        GOLDEN,
        "--format",
        "json",
        "--bootstrap",
        "0",
        "--drop-question",
        "q2",
    ]);
    let (all, dropped) = (all.expect_code(0).json(), r.expect_code(0).json());
    assert_eq!(
        dropped["policy"]["dropped_questions"],
        serde_json::json!(["q2"])
    );
    assert!(all["policy"].get("dropped_questions").is_none());
    assert_ne!(
        model_row(&all, "A", "J")["overall"],
        model_row(&dropped, "A", "J")["overall"]
    );
    let text = run(&["score", GOLDEN, "--drop-question", "q2", "--bootstrap", "0"]);
    assert!(
        text.stdout
            .contains("WITHOUT 1 question(s) dropped by the reader: q2"),
        "{}",
        text.stdout
    );
    let bad = run(&["score", GOLDEN, "--drop-question", "nope"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("\"nope\" cannot be dropped"),
        "{}",
        bad.stderr
    );
}

#[test]
fn score_weight_reweights_items_and_names_the_rules() {
    let plain = run(&["score", GOLDEN, "--format", "json", "--bootstrap", "0"]);
    let r = run(&[
        "score",
        GOLDEN,
        "--format",
        "json",
        "--bootstrap",
        "0",
        "--weight",
        "*/@clarity=0",
        "--weight",
        "q1/k1=1",
    ]);
    let (plain, w) = (plain.expect_code(0).json(), r.expect_code(0).json());
    assert_eq!(
        w["policy"]["weights"],
        serde_json::json!(["*/@clarity=0", "q1/k1=1"])
    );
    assert!(plain["policy"].get("weights").is_none());
    // The hand-computed value of tests/golden.rs (crates/repoprobe-core): A under J.
    let a = model_row(&w, "A", "J");
    let want = (1.0 + 0.6 + 5.0 / 9.0 + 5.0 / 9.0) / 6.0 * 100.0;
    close(&a["overall"], want);
    close(&a["knowledge"], want);
    assert_eq!(model_row(&plain, "A", "J")["overall"], 50.0);

    let text = run(&[
        "score",
        GOLDEN,
        "--weight",
        "*/@knowledge=1",
        "--bootstrap",
        "0",
    ]);
    assert!(
        text.stdout.contains(
            "RE-WEIGHTED by the reader (not the checklists' own weights): */@knowledge=1"
        ),
        "{}",
        text.stdout
    );
    for (rule, says) in [
        ("q1/k1", "has no '='"),
        (
            "q1/k7=1",
            "question \"q1\" has no such item (its items: k1, k2, clarity)",
        ),
    ] {
        let bad = run(&["score", GOLDEN, "--weight", rule]);
        assert_eq!(bad.code, 2, "{rule}");
        assert!(bad.stderr.contains(says), "{rule}: {}", bad.stderr);
    }
}

#[test]
fn score_says_which_models_never_answered_questions_and_not_failed_runs() {
    let dir = golden_with_extra_model("C");
    let r = run(&["score", path_str(dir.path()), "--format", "json"]);
    r.expect_code(0);
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: model"))
        .collect();
    // C never saw q2 and q3; B's failed run on q3 is a plain zero and gets no note.
    assert_eq!(notes.len(), 1, "{}", r.stderr);
    assert!(
        notes[0].starts_with(
            "note: model \"C\" (judge \"J\"): answered 1 of 3 questions; 2 counted as 0"
        ),
        "{}",
        notes[0]
    );
    let v = r.json();
    let c = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "C")
        .unwrap();
    assert_eq!(c["never_answered"], 2);
    assert_eq!(c["benchmark_questions"], 3);
    // Under `zero` the two count: (10 + 0 + 0) / 3 cells.
    close(&c["overall"], 100.0 / 3.0);
    let entries: Vec<&Value> = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["location"] == "model \"C\", judge \"J\"")
        .collect();
    assert_eq!(entries.len(), 1, "{}", v["issues"]);
    let msg = entries[0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("answered 1 of 3 questions; 2 counted as 0"),
        "{msg}"
    );
    for m in v["models"].as_array().unwrap() {
        if m["model"] != "C" {
            assert_eq!(m["never_answered"], 0, "{m}");
        }
    }

    // Left out under `exclude`: nothing to say.
    let r = run(&[
        "score",
        path_str(dir.path()),
        "--format",
        "json",
        "--missing",
        "exclude",
    ]);
    assert!(!r.stderr.contains("note: model"), "{}", r.stderr);
    assert!(!r.stdout.contains("counted as 0"), "{}", r.stdout);
}
/// `repoprobe score --evidence` adds the evidence of the runs (the site's leaderboard table): the
/// means of the answer records' fields, here computed by hand from the file written below.
#[test]
fn score_evidence_adds_the_means_of_the_answer_records() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.jsonl");
    std::fs::write(
        &answers,
        concat!(
            r#"{"question_id":"q1","model":"A","answer":"a","usage":{"input_tokens":100,"output_tokens":10,"cost_usd":0.5},"duration_s":2.0,"agent":{"name":"x","turns":3,"worktree_changed":true}}"#,
            "\n",
            r#"{"question_id":"q2","model":"A","answer":"a","usage":{"input_tokens":300,"output_tokens":30,"cost_usd":0.25},"duration_s":4.0,"agent":{"name":"x","turns":5,"worktree_changed":false}}"#,
            "\n"
        ),
    )
    .unwrap();
    let bench = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/golden/benchmark.jsonl"
    );
    let judgments = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/golden/judgments.jsonl"
    );
    let files = [bench, judgments, path_str(&answers)];
    let md = run(&[
        &["score", "--format", "markdown", "--evidence"][..],
        &files[..],
    ]
    .concat());
    md.expect_code(0);
    let from = md
        .stdout
        .find("**Evidence of the runs")
        .expect("the evidence table");
    let table = &md.stdout[from..];
    insta::assert_snapshot!("score_evidence_markdown", table);
    let j = run(&[&["score", "--format", "json", "--evidence"][..], &files[..]].concat()).json();
    let a = &j["evidence"][0];
    assert_eq!(a["model"], "A");
    assert_eq!(a["mean_cost_usd"], 0.375);
    assert_eq!(a["mean_input_tokens"], 200.0);
    assert_eq!(a["mean_turns"], 4.0);
    assert_eq!(a["edited_pct"], 50.0);
    // Without the flag the output is what it always was.
    let plain = run(&[&["score", "--format", "json"][..], &files[..]].concat()).json();
    assert!(plain.get("evidence").is_none());
    run(&[&["score", "--format", "csv", "--evidence"][..], &files[..]].concat()).expect_code(2);
}

/// `repoprobe score` on the bundled data (what the site shows) in every format, stdout and
/// stderr: any byte that changes in any output is a snapshot diff to review.
#[test]
fn score_of_the_bundled_data_in_every_format_is_its_snapshot() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../public-data/demo");
    for format in ["table", "json", "csv", "markdown", "latex"] {
        let r = run(&["score", "--format", format, SAMPLE, REPORTED, demo]);
        r.expect_code(0);
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let out = format!("{}\n-- stderr --\n{}", r.stdout, r.stderr).replace(root, "<root>");
        insta::assert_snapshot!(format!("score_bundled_{format}"), out);
    }
}
