//! `repoprobe validate`: counts per kind, every issue located, exit codes.

use super::*;

#[test]
fn validate_on_the_golden_fixture_exits_1_and_prints_every_issue_location_and_the_valid_counts() {
    let r = run(&["validate", GOLDEN]);
    r.expect_code(1);
    for (file, loc) in GOLDEN_ISSUES {
        // Printed as `<file>: <location>: <message>`; a location may continue after a comma.
        let printed = r.stdout.lines().any(|l| {
            l.contains(&format!("{file}: {loc}:")) || l.contains(&format!("{file}: {loc},"))
        });
        assert!(printed, "no issue printed at {file} {loc}:\n{}", r.stdout);
    }
    assert!(r.stdout.contains("6 issue(s)"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "valid: 3 questions, 6 answers, 10 judgments, 2 scalar judgments, 4 failure-mode labels"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn validate_json_on_the_golden_fixture_says_invalid_with_the_counts_and_six_located_issues() {
    let r = run(&["validate", GOLDEN, "--format", "json"]);
    r.expect_code(1);
    let v = r.json();
    assert_eq!(v["valid"], false);
    assert_eq!(v["counts"]["judgments"], 10);
    assert_eq!(v["counts"]["benchmark"], 3);
    assert_eq!(v["counts"]["answers"], 6);
    assert_eq!(v["counts"]["scalar_judgments"], 2);
    assert_eq!(v["counts"]["failure_modes"], 4);
    assert_eq!(
        v["issues"].as_array().unwrap().len(),
        6,
        "{:#}",
        v["issues"]
    );
    assert_eq!(issue_locations(&v["issues"]), golden_issue_locations());
}

#[test]
fn validate_on_the_public_sample_exits_0_and_says_no_issues() {
    let r = run(&["validate", SAMPLE]);
    r.expect_code(0);
    assert!(r.stdout.contains("no issues"), "{}", r.stdout);
    assert!(!r.stdout.contains("issue(s)"), "{}", r.stdout);
    // Every sample question can be answered as it stands: a full commit, a real URL.
    assert!(
        r.stdout
            .contains("pinned: 3 of 3 question(s) at a full commit of a repository with a URL\n"),
        "{}",
        r.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.jsonl");
    let text = std::fs::read_to_string(Path::new(SAMPLE).join("benchmark.jsonl")).unwrap();
    let mut first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["repo"]["commit"] = json!("abc123");
    std::fs::write(&path, format!("{first}\n")).unwrap();
    let r = run(&["validate", path_str(&path), "--format", "json"]);
    assert_eq!(
        r.json()["pinned"]["not_pinned"],
        json!([first["id"]]),
        "{}",
        r.stdout
    );
}

#[test]
fn validate_on_a_file_that_is_not_json_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hello.json");
    std::fs::write(&path, "hello\n").unwrap();
    let r = run(&["validate", path_str(&path)]);
    r.expect_code(2);
    assert!(r.stdout.contains("hello.json"), "{}", r.stdout);
    assert!(r.stdout.contains("valid: nothing"), "{}", r.stdout);
}

#[test]
fn validate_on_a_missing_path_exits_2_and_says_it_cannot_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("does-not-exist.jsonl");
    let r = run(&["validate", path_str(&path)]);
    r.expect_code(2);
    assert!(r.stdout.contains("cannot read"), "{}", r.stdout);
    assert!(r.stdout.contains("does-not-exist.jsonl"), "{}", r.stdout);
}

#[test]
fn validate_on_a_json_array_keeps_every_record_but_a_broken_one_and_stops_at_a_broken_structure() {
    let bench = std::fs::read_to_string(golden_file("benchmark.jsonl")).unwrap();
    let three: Vec<&str> = bench
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .collect();
    assert_eq!(three.len(), 3);
    let dir = tempfile::tempdir().unwrap();

    // Invalid JSON inside one element: that record is left out, the others are read.
    let text = format!(
        "[\n{},\n{},\n{{\"id\": \"q3\", oops}},\n{}\n]\n",
        three[0], three[1], three[2]
    );
    let path = dir.path().join("broken.json");
    std::fs::write(&path, text).unwrap();
    let r = run(&["validate", path_str(&path)]);
    r.expect_code(1);
    assert!(r.stdout.contains("valid: 3 questions"), "{}", r.stdout);
    let r = run(&["validate", path_str(&path), "--format", "json"]);
    r.expect_code(1);
    let v = r.json();
    assert_eq!(v["valid"], false);
    assert_eq!(v["counts"]["benchmark"], 3);
    let issues = v["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert!(
        issues[0]["location"].as_str().unwrap().starts_with("$[2]"),
        "the broken record is the third: {}",
        issues[0]
    );
    assert!(
        issues[0]["message"]
            .as_str()
            .unwrap()
            .contains("invalid JSON")
    );

    // A comma missing between records breaks the array itself: the records before it are
    // read, the rest of the file is not, and the file is unusable from there (exit 2).
    let text = format!(
        "[\n{},\n{},\n{}\n{}\n]\n",
        three[0], three[1], three[2], three[2]
    );
    std::fs::write(&path, text).unwrap();
    let r = run(&["validate", path_str(&path), "--format", "json"]);
    r.expect_code(2);
    let v = r.json();
    assert_eq!(v["counts"]["benchmark"], 3);
    let issues = v["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert!(
        issues[0]["location"].as_str().unwrap().contains("line 5"),
        "the missing comma is before line 5: {}",
        issues[0]
    );
    assert!(
        issues[0]["message"]
            .as_str()
            .unwrap()
            .contains("the 3 record(s) before it were read"),
        "{}",
        issues[0]
    );
}
