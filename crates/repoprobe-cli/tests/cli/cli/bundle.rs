//! `repoprobe bundle`.

use super::*;

#[test]
fn bundle_of_the_golden_fixture_exits_1_and_writes_a_bundle_that_validates_and_scores_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.json");
    let r = run(&["bundle", GOLDEN, "--out", path_str(&out)]);
    r.expect_code(1);
    assert!(r.stderr.contains("6 issue(s)"), "{}", r.stderr);
    assert!(out.is_file(), "no bundle written");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "b.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    let v = run(&["validate", path_str(&out), "--format", "json"]);
    v.expect_code(0);
    let counts = &v.json()["counts"];
    assert_eq!(counts["benchmark"], 3);
    assert_eq!(counts["judgments"], 10);
    assert_eq!(counts["scalar_judgments"], 2);

    let score = |input: &str| {
        let r = run(&["score", input, "--format", "json", "--bootstrap-seed", "4"]);
        r.expect_code(0);
        r.json()
    };
    let from_bundle = score(path_str(&out));
    let from_files = score(GOLDEN);
    assert_eq!(from_bundle["models"], from_files["models"]);
    assert_eq!(from_bundle["strata"], from_files["strata"]);
    assert_eq!(from_bundle["reliability"], from_files["reliability"]);
    assert_eq!(from_bundle["failure_modes"], from_files["failure_modes"]);
    assert_eq!(from_bundle["issues"].as_array().unwrap().len(), 0);
}

#[test]
fn bundle_keeps_the_unknown_fields_of_records() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.json");
    run(&["bundle", GOLDEN, "--out", path_str(&out)]).expect_code(1);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("note_unknown_field"), "unknown field dropped");
    let b: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(b["format"], "repoprobe-results");
    let questions = b["benchmark"].as_array().unwrap();
    assert_eq!(questions.len(), 3);
    for q in questions {
        assert_eq!(q["note_unknown_field"], "kept and ignored", "{q}");
    }
}
