//! Is the judge right? `repoprobe judge-agreement` on testdata/judges (three model judges and
//! people, `human:ann`, with gaps and second runs) and on files made here, and `score --panel`.
//! The figures themselves are held against scikit-learn and krippendorff by
//! scripts/check-judges.py; these tests hold the command's shape, its choices and its errors.

use crate::common::{BIN, Ran, ran};
use serde_json::{Value, json};
use std::process::Command;

const JUDGES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/judges");

fn repoprobe(args: &[&str]) -> Ran {
    let r = ran(Command::new(BIN).env_clear().args(args).output().unwrap());
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn json_of(r: &Ran) -> Value {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", r.stdout, r.stderr))
}

#[test]
fn every_pair_is_compared_with_people_as_the_reference() {
    let v = json_of(&repoprobe(&["judge-agreement", JUDGES, "--format", "json"]));
    let pairs: Vec<(String, String)> = v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["a"].as_str().unwrap().into(),
                p["b"].as_str().unwrap().into(),
            )
        })
        .collect();
    // Four judges: six pairs; each model against people has people as B.
    assert_eq!(pairs.len(), 6, "{pairs:?}");
    for (a, b) in &pairs {
        assert!(!a.starts_with("human:"), "{a} vs {b}");
    }
    for p in v["pairs"].as_array().unwrap() {
        let items = p["items"].as_u64().unwrap();
        assert!(items > 0, "{p}");
        let kinds: u64 = p["by_kind"]
            .as_object()
            .unwrap()
            .values()
            .map(|f| f["items"].as_u64().unwrap())
            .sum();
        let models: u64 = p["by_model"]
            .as_object()
            .unwrap()
            .values()
            .map(|f| f["items"].as_u64().unwrap())
            .sum();
        assert_eq!((kinds, models), (items, items), "{p}");
        for f in ["exact", "kappa", "alpha_interval", "f1_full_credit"] {
            let x = p[f].as_f64().unwrap();
            assert!((-1.0..=1.0).contains(&x), "{f}: {p}");
        }
        let gaps: Vec<f64> = p["disagreements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["gap"].as_f64().unwrap())
            .collect();
        assert!(
            gaps.windows(2).all(|w| w[0] >= w[1]),
            "largest first: {gaps:?}"
        );
        let exact = p["exact"].as_f64().unwrap();
        assert_eq!(
            gaps.len() as f64,
            ((1.0 - exact) * items as f64).round(),
            "one disagreement per unequal unit: {p}"
        );
        // testdata/judges is one repository: by default (whole repositories resampled) one
        // cluster, no interval.
        assert_eq!(p["clusters"], 1, "{p}");
        for f in ["kappa", "alpha_interval", "f1_full_credit", "bias"] {
            assert!(p[format!("{f}_ci95")].is_null(), "{f}: {p}");
        }
    }
    assert_eq!(v["cluster"], "repo");
}

/// `--cluster question` resamples the seven questions whole: every figure of every pair gets
/// an interval, the same for the same seed; the table shows them beside the figures, and a pair
/// of fewer than 30 units says the sample is too small to say instead.
#[test]
fn by_question_every_figure_has_its_interval_and_small_samples_say_so() {
    let args = [
        "judge-agreement",
        JUDGES,
        "--cluster",
        "question",
        "--format",
        "json",
    ];
    let v = json_of(&repoprobe(&args));
    assert_eq!(v["cluster"], "question");
    for p in v["pairs"].as_array().unwrap() {
        // The questions with an answer both judged: most of the seven.
        let c = p["clusters"].as_u64().unwrap();
        assert!((2..=7).contains(&c), "{p}");
        assert_eq!(
            p["too_small"].as_bool().unwrap(),
            p["items"].as_u64().unwrap() < 30
        );
        for f in ["kappa", "alpha_interval", "f1_full_credit", "bias"] {
            let [lo, hi] = [0, 1].map(|i| p[format!("{f}_ci95")][i].as_f64().unwrap());
            assert!(lo <= hi, "{f}: {p}");
            if f != "bias" {
                assert!(hi <= 1.0, "{f}: {p}");
            }
        }
    }
    assert_eq!(json_of(&repoprobe(&args)), v, "one seed, one result");
    let other = json_of(&repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--cluster",
        "question",
        "--bootstrap-seed",
        "1",
        "--format",
        "json",
    ]));
    assert_eq!(other["pairs"][0]["kappa"], v["pairs"][0]["kappa"]);
    assert_ne!(other["pairs"][0]["kappa_ci95"], v["pairs"][0]["kappa_ci95"]);
    // Each answer alone: as many clusters as answers both judged.
    let none = json_of(&repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--cluster",
        "none",
        "--format",
        "json",
    ]));
    for p in none["pairs"].as_array().unwrap() {
        assert_eq!(p["clusters"], p["answers"], "{p}");
    }

    let pair = ["--a", "judge-b", "--b", "human:ann", "--disagreements", "0"];
    let text = repoprobe(
        &[
            &["judge-agreement", JUDGES, "--cluster", "question"][..],
            &pair[..],
        ]
        .concat(),
    );
    assert_eq!(text.code, 0, "{}", text.stderr);
    let p = &json_of(&repoprobe(&[&args[..], &pair[..]].concat()))["pairs"][0];
    assert!(!p["too_small"].as_bool().unwrap(), "{p}");
    let shown = |f: &str| {
        let [lo, hi] = [0, 1].map(|i| p[format!("{f}_ci95")][i].as_f64().unwrap());
        format!("{:.3} ({lo:.3}–{hi:.3})", p[f].as_f64().unwrap())
    };
    for f in ["kappa", "alpha_interval", "f1_full_credit"] {
        assert!(
            text.stdout.contains(&shown(f)),
            "{} in\n{}",
            shown(f),
            text.stdout
        );
    }
    assert!(
        text.stdout.contains("resamples of the 7 questions"),
        "{}",
        text.stdout
    );
    // The default: one repository, no interval, and the table says why.
    let one = repoprobe(&[&["judge-agreement", JUDGES][..], &pair[..]].concat());
    assert!(!one.stdout.contains('–'), "{}", one.stdout);
    assert!(one.stdout.contains("no interval"), "{}", one.stdout);

    // Two questions of judge-b and people: fewer than 30 units.
    let dir = tempfile::tempdir().unwrap();
    let keep = |l: &&str| {
        let j: Value = serde_json::from_str(l).unwrap();
        ["r-000", "r-001"].contains(&j["question_id"].as_str().unwrap())
    };
    let lines = std::fs::read_to_string(format!("{JUDGES}/judgments.jsonl")).unwrap();
    let few: Vec<&str> = lines
        .lines()
        .filter(|l| !l.is_empty())
        .filter(keep)
        .collect();
    std::fs::copy(
        format!("{JUDGES}/benchmark.jsonl"),
        dir.path().join("benchmark.jsonl"),
    )
    .unwrap();
    std::fs::write(dir.path().join("j.jsonl"), few.join("\n")).unwrap();
    let d = dir.path().to_str().unwrap();
    let small = json_of(&repoprobe(
        &[
            &[
                "judge-agreement",
                d,
                "--cluster",
                "question",
                "--format",
                "json",
            ][..],
            &pair[..],
        ]
        .concat(),
    ));
    let p = &small["pairs"][0];
    assert!(p["items"].as_u64().unwrap() < 30, "{p}");
    assert_eq!(p["too_small"], true, "{p}");
    assert!(
        p["kappa_ci95"].is_array(),
        "the JSON keeps the intervals: {p}"
    );
    let text = repoprobe(
        &[
            &["judge-agreement", d, "--cluster", "question"][..],
            &pair[..],
        ]
        .concat(),
    );
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("the sample is too small to say"),
        "{}",
        text.stdout
    );
    assert!(
        !text.stdout.contains('–') && !text.stdout.contains(" ["),
        "{}",
        text.stdout
    );
}

#[test]
fn one_named_side_pairs_it_with_every_other_judge_and_an_unknown_name_says_who_is_there() {
    let v = json_of(&repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--b",
        "human:ann",
        "--format",
        "json",
        "--bootstrap",
        "0",
    ]));
    let a: Vec<&str> = v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["a"].as_str().unwrap())
        .collect();
    assert_eq!(a, ["judge-a", "judge-b", "judge-c"]);
    assert!(v["pairs"][0]["bias_ci95"].is_null());
    assert!(v["pairs"][0]["kappa_ci95"].is_null());

    let r = repoprobe(&["judge-agreement", JUDGES, "--a", "gpt-nobody"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("\"gpt-nobody\"") && r.stderr.contains("\"human:ann\""),
        "{}",
        r.stderr
    );
}

#[test]
fn csv_and_terminal_say_the_same_as_json() {
    let v = json_of(&repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--a",
        "judge-b",
        "--b",
        "human:ann",
        "--format",
        "json",
    ]));
    let csv = repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--a",
        "judge-b",
        "--b",
        "human:ann",
        "--format",
        "csv",
    ]);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let all = csv
        .stdout
        .lines()
        .find(|l| l.starts_with("judge-b,human:ann,all,"))
        .expect("the pair's row");
    let cells: Vec<&str> = all.split(',').collect();
    assert_eq!(cells[3], v["pairs"][0]["items"].to_string());
    assert_eq!(
        cells[5].parse::<f64>().unwrap(),
        v["pairs"][0]["kappa"].as_f64().unwrap()
    );
    let text = repoprobe(&[
        "judge-agreement",
        JUDGES,
        "--a",
        "judge-b",
        "--b",
        "human:ann",
    ]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let kappa = format!("{:.3}", v["pairs"][0]["kappa"].as_f64().unwrap());
    assert!(text.stdout.contains(&kappa), "{kappa} in\n{}", text.stdout);
    assert!(
        text.stdout
            .contains("Where judge-b and human:ann differ most")
    );
}

/// A judge name and a rationale that would act on a terminal are shown as text.
#[test]
fn hostile_names_and_rationales_reach_the_terminal_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let bench = std::fs::read_to_string(format!("{JUDGES}/benchmark.jsonl")).unwrap();
    let first: Value = serde_json::from_str(bench.lines().next().unwrap()).unwrap();
    let q = first["id"].as_str().unwrap();
    let items = |judge: &str, score: u32| {
        let list: Vec<Value> = first["checklist"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let w = i["weight"].as_u64().unwrap() as u32;
                json!({"id": i["id"], "rationale": "\u{1b}]0;pwned\u{7}\nline", "score": if score == 0 { 0 } else { w }})
            })
            .collect();
        json!({"question_id": q, "model": "m", "judge": judge, "items": list})
    };
    let lines = [items("\u{1b}[2Jevil", 1), items("human:ann", 0)]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.path().join("b.jsonl"), &bench).unwrap();
    std::fs::write(dir.path().join("j.jsonl"), lines).unwrap();
    let r = repoprobe(&["judge-agreement", dir.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains('\u{1b}'), "{}", r.stdout);
    assert!(r.stdout.contains("\\u{1b}[2Jevil"), "{}", r.stdout);
}

#[test]
fn a_panel_is_one_more_judge_and_says_how_each_member_agrees_with_it() {
    let v = json_of(&repoprobe(&[
        "score",
        JUDGES,
        "--format",
        "json",
        "--bootstrap",
        "0",
        "--panel",
        "judge-a",
        "--panel",
        "judge-b",
        "--panel",
        "judge-c",
        "--panel-rule",
        "majority",
    ]));
    let name = "panel-majority(judge-a, judge-b, judge-c)";
    assert_eq!(v["judge"], name, "the panel is the judge in force");
    assert_eq!(v["panel"]["judge"], name);
    assert_eq!(v["panel"]["rule"], "majority");
    let members: Vec<&str> = v["panel"]["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["a"].as_str().unwrap())
        .collect();
    assert_eq!(members, ["judge-a", "judge-b", "judge-c"]);
    assert!(
        v["models"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["judge"] == name && m["judgments"].as_u64().unwrap() > 0),
        "{v}"
    );

    let one = repoprobe(&["score", JUDGES, "--panel", "judge-a"]);
    assert_eq!(one.code, 2, "{}", one.stderr);
    assert!(one.stderr.contains("at least two judges"), "{}", one.stderr);
    let unknown = repoprobe(&["score", JUDGES, "--panel", "judge-a", "--panel", "judge-z"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("\"judge-z\""), "{}", unknown.stderr);
    let text = repoprobe(&["score", JUDGES, "--panel", "judge-a", "--panel", "judge-b"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("Panel panel-median(judge-a, judge-b)"),
        "{}",
        text.stdout
    );
}

/// The panel's members' agreement is over the questions in force, as every other figure.
#[test]
fn a_panels_agreement_leaves_out_the_questions_dropped() {
    let items = |extra: &[&str]| {
        let mut args = vec![
            "score",
            JUDGES,
            "--format",
            "json",
            "--bootstrap",
            "0",
            "--panel",
            "judge-a",
            "--panel",
            "judge-b",
            "--panel",
            "judge-c",
        ];
        args.extend(extra);
        let v = json_of(&repoprobe(&args));
        v["panel"]["agreement"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["items"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    let all = items(&[]);
    let fewer = items(&["--drop-question", "r-000"]);
    assert_eq!(all.len(), 3);
    for (a, f) in all.iter().zip(&fewer) {
        assert!(f < a, "{fewer:?} vs {all:?}");
    }
}
