//! The human review end to end (docs/review.md): `curate agreement` on the review files of
//! `testdata/reviews` (three reviewers with gaps, an adjudicator), `curate finalize` from the
//! candidates to a benchmark that validates and its release manifest, and `score
//! --created-after` on the golden fixture with creation dates added.

use crate::common::{BIN, Ran, ran};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

const REVIEWS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/reviews");
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/golden");

fn repoprobe(args: &[&str]) -> Ran {
    let r = ran(Command::new(BIN).env_clear().args(args).output().unwrap());
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn file(name: &str) -> String {
    format!("{REVIEWS}/{name}")
}

fn json(r: &Ran) -> Value {
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", r.stdout, r.stderr))
}

fn expect(r: &Ran, code: i32) {
    assert_eq!(r.code, code, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

#[test]
fn agreement_json_has_every_figure_and_kappa_only_for_two_reviewers() {
    let three = repoprobe(&[
        "curate",
        "agreement",
        &file("ann.jsonl"),
        &file("bob.jsonl"),
        &file("cy.jsonl"),
        "--format",
        "json",
    ]);
    expect(&three, 0);
    let v = json(&three);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 4, "{v}");
    for k in ["reviewers", "items", "criteria", "disagreements"] {
        assert!(keys.contains(&k), "{k} in {v}");
    }
    assert_eq!(v["reviewers"], json!(["ann", "bob", "cy"]));
    assert_eq!(v["items"], 12);
    let criteria = v["criteria"].as_object().unwrap();
    assert_eq!(criteria.len(), 5);
    for (name, f) in criteria {
        assert!(f["kappa"].is_null(), "{name}: three reviewers, no κ: {f}");
        assert!(f["alpha"].is_f64(), "{name}: {f}");
        let p = f["percent"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&p), "{name}: {f}");
    }
    assert!(
        !v["disagreements"]
            .as_array()
            .unwrap()
            .contains(&json!("c02")),
        "c02: both reviewers accepted it with every criterion: {v}"
    );

    // Two reviewers: κ over the questions both rated. The adjudicator's file is read and
    // left out of the figures.
    let two = repoprobe(&[
        "curate",
        "agreement",
        &file("ann.jsonl"),
        &file("bob.jsonl"),
        &file("adjudicator.jsonl"),
        "--format",
        "json",
    ]);
    expect(&two, 0);
    let v = json(&two);
    assert_eq!(v["reviewers"], json!(["ann", "bob"]));
    assert_eq!(v["items"], 9);
    for (name, f) in v["criteria"].as_object().unwrap() {
        assert!(f["kappa"].is_f64(), "{name}: {f}");
    }
}

/// The text table: any byte that changes is a snapshot diff to review.
#[test]
fn agreement_text_is_its_snapshot() {
    let r = repoprobe(&[
        "curate",
        "agreement",
        &file("ann.jsonl"),
        &file("bob.jsonl"),
        &file("cy.jsonl"),
    ]);
    expect(&r, 0);
    insta::assert_snapshot!("agreement_text", r.stdout);
}

#[test]
fn bad_review_records_are_named_with_where_and_why_and_the_rest_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(file("ann.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let mut text = good.clone();
    text.push_str(&first.replace("\"reviewer\",", "\"boss\","));
    text.push('\n');
    text.push_str(&first.replace("\"decision\": \"reject\", ", ""));
    text.push('\n');
    text.push_str(first);
    text.push('\n');
    // A reviewer's name that would act on a terminal.
    text.push_str(&first.replace("\"ann\"", "\"evil\\u001b[2J\""));
    text.push('\n');
    let p = dir.path().join("reviews.jsonl");
    std::fs::write(&p, text).unwrap();
    let r = repoprobe(&[
        "curate",
        "agreement",
        p.to_str().unwrap(),
        &file("bob.jsonl"),
    ]);
    expect(&r, 1);
    assert!(
        r.stderr
            .contains("line 12, role: invalid review: unknown variant `boss`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("line 13: invalid review: missing field `decision`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "line 14: duplicate review of question \"c01\" by \"ann\" (reviewer): the first is kept"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains('\u{1b}'), "{}", r.stdout);
    assert!(r.stdout.contains("3 reviewer(s)"), "{}", r.stdout);
    // Nothing valid at all: an error, not a table of nothing.
    let none = dir.path().join("none.jsonl");
    std::fs::write(&none, "{\"reviewer\": 1}\n").unwrap();
    let r = repoprobe(&["curate", "agreement", none.to_str().unwrap()]);
    expect(&r, 2);
    assert!(r.stderr.contains("no valid review records"), "{}", r.stderr);
}

fn sha256(p: &Path) -> String {
    let mut h = Sha256::new();
    h.update(std::fs::read(p).unwrap());
    format!("{:x}", h.finalize())
}

#[test]
fn finalize_keeps_what_the_review_accepted_and_writes_the_release_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rel").join("benchmark.jsonl");
    let candidates = file("candidates.jsonl");
    let run = |extra: &[&str]| {
        let mut args = vec!["curate", "finalize", "--candidates", &candidates];
        let reviews: Vec<String> = ["ann", "bob", "cy", "adjudicator"]
            .iter()
            .map(|n| file(&format!("{n}.jsonl")))
            .collect();
        args.extend(reviews.iter().map(String::as_str));
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        repoprobe(&args)
    };
    let r = run(&[
        "--version-name",
        "v1",
        "--date",
        "2026-03-15",
        "--criteria",
        "answered Q&A threads, paper §3.2",
        "--created-after",
        "2024-01-01",
        "--created-before",
        "2025-01-01",
    ]);
    expect(&r, 0);
    assert!(
        r.stderr.contains(
            "curate finalize: 3 of 13 candidate(s) kept (2 by an adjudicator), 5 rejected, 4 unresolved, 1 unreviewed"
        ),
        "{}",
        r.stderr
    );

    // Kept: c02 (every reviewer accepted, every criterion), c01 and c05 (the adjudicator);
    // written as read, the curation block with them.
    let text = std::fs::read_to_string(&out).unwrap();
    let candidates = std::fs::read_to_string(file("candidates.jsonl")).unwrap();
    let ids: Vec<String> = text
        .lines()
        .map(|l| {
            assert!(candidates.lines().any(|c| c == l), "not as written: {l}");
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["c01", "c02", "c05"]);
    expect(&repoprobe(&["validate", out.to_str().unwrap()]), 0);

    let excluded_path = dir.path().join("rel/benchmark.excluded.ndjson");
    let excluded: Vec<Value> = std::fs::read_to_string(&excluded_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rule = |id: &str| {
        let e = excluded.iter().find(|e| e["key"] == id).unwrap();
        assert_eq!(e["stage"], "review");
        e["rule"].as_str().unwrap().to_string()
    };
    assert_eq!(excluded.len(), 10);
    assert_eq!(rule("c04"), "rejected", "the adjudicator rejected it");
    assert_eq!(rule("c03"), "rejected", "every reviewer rejected it");
    assert_eq!(rule("c06"), "unresolved");
    assert_eq!(rule("c13"), "unreviewed");
    let c04 = excluded.iter().find(|e| e["key"] == "c04").unwrap();
    assert_eq!(
        c04["reason"],
        "c04: rejected by the adjudicator: \"dana\" reject: \"adjudicated\""
    );

    let manifest_path = dir.path().join("rel/benchmark.manifest.json");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    assert_eq!(m["format"], "repoprobe-release");
    assert_eq!(m["version"], "v1");
    assert_eq!(m["date"], "2026-03-15");
    assert_eq!(
        m["selection"],
        json!({"criteria": "answered Q&A threads, paper §3.2",
               "created_after": "2024-01-01", "created_before": "2025-01-01",
               "created": {"min": "2024-01-15T10:00:00Z", "max": "2024-05-15T10:00:00Z", "undated": 0}})
    );
    assert_eq!(
        m["review"],
        json!({"candidates": 13, "reviewed": 12, "kept": 3, "kept_by_adjudicator": 2,
               "rejected": 5, "unresolved": 4, "unreviewed": 1})
    );
    let after: Vec<(String, u64)> = m["funnel"]["after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stage"].as_str().unwrap().into(),
                s["kept"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        after,
        [
            ("verify".into(), 13),
            ("reviewed".into(), 12),
            ("kept".into(), 3)
        ]
    );
    assert_eq!(m["funnel"]["dropped"]["review"]["unresolved"], 4);
    // The same figures as `curate agreement` on the same files.
    let agreement = repoprobe(&[
        "curate",
        "agreement",
        &file("ann.jsonl"),
        &file("bob.jsonl"),
        &file("cy.jsonl"),
        &file("adjudicator.jsonl"),
        "--format",
        "json",
    ]);
    assert_eq!(m["agreement"], json(&agreement));
    // Every file with its hash: the inputs, then the outputs, each named relative to the
    // manifest's directory.
    let beside = manifest_path.parent().unwrap();
    let files: Vec<(String, PathBuf, String)> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["role"].as_str().unwrap().into(),
                {
                    let path = f["path"].as_str().unwrap();
                    assert!(!Path::new(path).is_absolute(), "{path}");
                    beside.join(path)
                },
                f["sha256"].as_str().unwrap().into(),
            )
        })
        .collect();
    let roles: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        roles,
        [
            "candidates",
            "reviews",
            "reviews",
            "reviews",
            "reviews",
            "benchmark",
            "excluded"
        ]
    );
    for (role, path, hash) in &files {
        assert_eq!(hash, &sha256(path), "{role} {}", path.display());
    }

    // The version's name is required; a date must be one.
    let r = run(&[]);
    expect(&r, 2);
    assert!(r.stderr.contains("--version-name"), "{}", r.stderr);
    let r = run(&["--version-name", "v1", "--date", "15/03/2026"]);
    expect(&r, 2);
    assert!(
        r.stderr.contains("--date must be YYYY-MM-DD"),
        "{}",
        r.stderr
    );
}

/// The golden fixture with creation dates: q1 before the window, q2 in it, q3 without one.
fn dated_golden(dir: &Path) {
    for f in [
        "answers.jsonl",
        "failure_modes.json",
        "judgments.jsonl",
        "scalar_judgments.jsonl",
    ] {
        std::fs::copy(format!("{GOLDEN}/{f}"), dir.join(f)).unwrap();
    }
    let bench = std::fs::read_to_string(format!("{GOLDEN}/benchmark.jsonl")).unwrap();
    let dated: Vec<String> = bench
        .lines()
        .map(|l| {
            let mut q: Value = serde_json::from_str(l).unwrap();
            let created = match q["id"].as_str().unwrap() {
                "q1" => Some("2024-03-01T00:00:00Z"),
                "q2" => Some("2024-06-01T00:00:00Z"),
                _ => None,
            };
            if let Some(c) = created {
                q["curation"] = json!({"source": {"created_at": c}});
            }
            q.to_string()
        })
        .collect();
    std::fs::write(dir.join("benchmark.jsonl"), dated.join("\n") + "\n").unwrap();
}

#[test]
fn score_created_after_scores_only_the_questions_created_on_or_after_the_date() {
    let dir = tempfile::tempdir().unwrap();
    dated_golden(dir.path());
    let d = dir.path().to_str().unwrap();
    let r = repoprobe(&[
        "score",
        d,
        "--format",
        "json",
        "--bootstrap",
        "0",
        "--created-after",
        "2024-06-01",
    ]);
    expect(&r, 0);
    let v = json(&r);
    assert_eq!(
        v["created_after"],
        json!({"created_after": "2024-06-01", "questions": 1, "of": 3, "undated": 1})
    );
    let a = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "A" && m["judge"] == "J")
        .unwrap();
    assert_eq!(a["questions"], 1, "q2 alone: {a}");

    // Every table says so.
    let r = repoprobe(&[
        "score",
        d,
        "--bootstrap",
        "0",
        "--created-after",
        "2024-06-01",
    ]);
    expect(&r, 0);
    let sentence = "scored on 1 of 3 questions created on or after 2024-06-01; 1 have no creation date and are left out";
    let tables = r
        .stdout
        .split("\n\n")
        .filter(|t| !t.trim().is_empty())
        .count();
    assert!(tables > 1, "{}", r.stdout);
    assert_eq!(r.stdout.matches(sentence).count(), tables, "{}", r.stdout);

    // Without the flag, nothing changes: the curation block is an extra field.
    let plain = json(&repoprobe(&[
        "score",
        d,
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]));
    assert!(plain.get("created_after").is_none());
    assert_eq!(
        plain["models"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["model"] == "A" && m["judge"] == "J")
            .unwrap()["questions"],
        3
    );
    let r = repoprobe(&["score", d, "--created-after", "soon"]);
    expect(&r, 2);
    assert!(r.stderr.contains("is not a date"), "{}", r.stderr);
}
