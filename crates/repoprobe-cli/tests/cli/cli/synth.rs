//! `repoprobe synth`.

use super::*;

#[test]
fn synth_writes_a_labelled_synthetic_bundle_that_validates_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let args = |out: &Path| {
        run(&[
            "synth",
            "--models",
            "3",
            "--questions",
            "10",
            "--runs",
            "2",
            "--seed",
            "5",
            "--out",
            path_str(out),
        ])
    };
    args(&out).expect_code(0);
    let b: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(b["meta"]["synthetic"], true, "{:#}", b["meta"]);

    let v = run(&["validate", path_str(&out), "--format", "json"]);
    v.expect_code(0);
    let counts = &v.json()["counts"];
    assert_eq!(counts["benchmark"], 10);
    assert_eq!(counts["judgments"], 3 * 10 * 2);

    let s = run(&[
        "score",
        path_str(&out),
        "--format",
        "json",
        "--bootstrap",
        "50",
    ]);
    s.expect_code(0);
    let models = s.json()["models"].as_array().unwrap().clone();
    assert_eq!(models.len(), 3, "{models:#?}");
    for m in &models {
        let o = m["overall"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&o), "{m}");
    }
}

#[test]
fn synth_with_the_same_seed_writes_identical_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, seed: &str| {
        let out = dir.path().join(name);
        run(&[
            "synth",
            "--models",
            "3",
            "--questions",
            "10",
            "--runs",
            "2",
            "--seed",
            seed,
            "--out",
            path_str(&out),
        ])
        .expect_code(0);
        std::fs::read(&out).unwrap()
    };
    let first = write("a.json", "5");
    let second = write("b.json", "5");
    assert!(first == second, "the same seed gave different files");
    let other = write("c.json", "6");
    assert!(first != other, "seeds 5 and 6 gave the same file");
}
