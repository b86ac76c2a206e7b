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

/// Questions in groups sharing a repository, more judges, a synthetic person's grades and more
/// attempts: a valid bundle whose repositories are `score --cluster repo`'s clusters and whose
/// judges `repoprobe judge-agreement` compares; the repository effect makes the clustered SE
/// wider.
#[test]
fn synth_groups_questions_by_repository_and_adds_judges_and_a_persons_grades() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    run(&[
        "synth",
        "--models",
        "4",
        "--questions",
        "72",
        "--runs",
        "2",
        "--questions-per-repo",
        "6",
        "--attempts",
        "3",
        "--judges",
        "2",
        "--human-grades",
        "3",
        "--seed",
        "1",
        "--out",
        path_str(&out),
    ])
    .expect_code(0);
    let b: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let generator = &b["meta"]["generator"];
    assert_eq!(generator["questions_per_repo"], 6, "{generator:#}");
    assert_eq!(generator["attempts"], 3);
    let bench = b["benchmark"].as_array().unwrap();
    for (i, q) in bench.iter().enumerate() {
        assert_eq!(q["repo"], bench[i / 6 * 6]["repo"], "question {i}");
    }
    assert_eq!(bench[6]["repo"]["name"], "synthetic/repo-002");

    let v = run(&["validate", path_str(&out), "--format", "json"]);
    v.expect_code(0);
    assert_eq!(v.json()["counts"]["answers"], 4 * 72 * 3);

    let j = run(&["judge-agreement", path_str(&out), "--format", "json"]);
    j.expect_code(0);
    let judges: Vec<String> = j.json()["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["judge"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        judges,
        ["human:synthetic-grader", "synth-judge", "synth-judge-2"]
    );

    let se = |cluster: &str| {
        let s = run(&[
            "score",
            path_str(&out),
            "--format",
            "json",
            "--cluster",
            cluster,
        ]);
        s.expect_code(0);
        let r = s.json();
        assert_eq!(r["judge"], "synth-judge");
        r["models"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["judge"] == "synth-judge")
            .map(|m| (m["se"].as_f64().unwrap(), m["clusters"].as_u64().unwrap()))
            .collect::<Vec<_>>()
    };
    let (repo, none) = (se("repo"), se("none"));
    for ((r, rc), (n, nc)) in repo.iter().zip(&none) {
        assert_eq!((*rc, *nc), (12, 72 * 3 * 2));
        assert!(*r > 2.5 * n, "SE by repository {r} vs every cell alone {n}");
    }

    for bad in ["--questions-per-repo", "--judges", "--attempts"] {
        run(&["synth", "--models", "1", "--questions", "2", bad, "0"]).expect_code(2);
    }
}
