//! Hand-computed values on `testdata/golden` (see its README): missing cells, invalid records,
//! duplicates, two judges, two judge runs, scalar judgments and failure labels.

use repoprobe_core::{
    LoadOptions, Loaded, MissingPolicy, ScoreOptions, SourceFile, Stratum, load, score,
};

mod common;

fn loaded() -> Loaded {
    load(&common::golden_with(&[]), LoadOptions::default())
}

fn row(r: &repoprobe_core::ScoreReport, m: &str, j: &str) -> repoprobe_core::metrics::ModelScore {
    r.models
        .iter()
        .find(|x| x.model == m && x.judge == j)
        .cloned()
        .unwrap()
}

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("value defined");
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn golden_issues_are_each_reported_where_they_are() {
    let l = loaded();
    // A location is the record (its line), then (for errors inside a record) the path in it.
    let got: Vec<(String, String)> = l
        .issues
        .iter()
        .map(|i| {
            let record = i.location.record_at().expect("in a record");
            (i.file.clone(), record.to_string())
        })
        .collect();
    let want = [
        ("judgments.jsonl", "line 15"),
        ("judgments.jsonl", "line 10"),
        ("judgments.jsonl", "line 11"),
        ("judgments.jsonl", "line 12"),
        ("judgments.jsonl", "line 13"),
        ("scalar_judgments.jsonl", "line 3"),
    ];
    for (f, loc) in want {
        assert!(
            got.contains(&(f.to_string(), loc.to_string())),
            "no issue at {f} {loc}: {:#?}",
            l.issues
        );
    }
    assert_eq!(l.issues.len(), 6, "{:#?}", l.issues);
    let msg = |loc: &str| {
        l.issues
            .iter()
            .find(|i| i.location.to_string().starts_with(loc))
            .unwrap()
            .message
            .clone()
    };
    assert!(
        msg("line 10").contains("score 1 for item \"k1\" is not allowed"),
        "{}",
        msg("line 10")
    );
    assert!(msg("line 11").contains("failed run"));
    assert!(msg("line 12").contains("duplicate judgment"));
    assert!(msg("line 13").contains("unknown question \"q9\""));
    assert!(msg("line 15").contains("invalid JSON"));
    assert_eq!(l.dataset.judgments.len(), 10);
    assert_eq!(l.dataset.questions.len(), 3);
}

#[test]
fn golden_table3_under_both_policies() {
    let l = loaded();
    let zero = score(&l.dataset, &l.issues, &ScoreOptions::default()).unwrap();
    // A/J: s = 10+8+6+5+1+0 = 30 over 3 questions × 2 runs; kn = 9+7+5+5+0+0 = 26; cl = 4; one s = 10.
    let a = row(&zero, "A", "J");
    close(a.overall, 30.0 / 60.0 * 100.0);
    close(a.knowledge, 26.0 / 54.0 * 100.0);
    close(a.clarity, 4.0 / 6.0 * 100.0);
    close(a.perfect, 100.0 / 6.0);
    close(a.coverage, 1.0);
    assert_eq!((a.questions, a.judgments), (3, 6));
    // B/J: cells q1r0 (10), q1r1 (10), q2r0 (3: kn 2, cl 1); q2r1 invalid, q3 failed: 3 of 6 filled.
    let b = row(&zero, "B", "J");
    close(b.overall, 23.0 / 60.0 * 100.0);
    close(b.knowledge, 20.0 / 54.0 * 100.0);
    close(b.clarity, 50.0);
    close(b.perfect, 100.0 / 3.0);
    close(b.coverage, 0.5);
    assert_eq!((b.questions, b.judgments), (2, 3));
    // A/K: one cell s = 9 (kn 9, cl 0) in a grid of 3.
    let k = row(&zero, "A", "K");
    close(k.overall, 30.0);
    close(k.knowledge, 100.0 / 3.0);
    close(k.clarity, 0.0);
    close(k.coverage, 1.0 / 3.0);

    let ex = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            missing: MissingPolicy::Exclude,
            ..Default::default()
        },
    )
    .unwrap();
    let b = row(&ex, "B", "J");
    close(b.overall, 23.0 / 30.0 * 100.0);
    close(b.knowledge, 20.0 / 27.0 * 100.0);
    close(b.clarity, 100.0);
    close(b.perfect, 200.0 / 3.0);
    close(row(&ex, "A", "K").overall, 90.0);
    assert_eq!(
        zero.judge.as_deref(),
        Some("J"),
        "J has the most valid judgments"
    );
}

#[test]
fn golden_strata_reliability_failure_modes_and_paired() {
    let l = loaded();
    let r = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            compare: Some(("A".into(), "B".into())),
            bootstrap: 200,
            ..Default::default()
        },
    )
    .unwrap();
    let cat = &r.strata["category"];
    let pa = cat
        .iter()
        .find(|s| s.stratum == "Project Architecture")
        .unwrap();
    // q1 only: A (10+8)/20 = 90, B 100; perfect A 1/2, B 2/2.
    assert_eq!(pa.questions, 1);
    close(pa.mean, 95.0);
    close(pa.std, 50f64.sqrt());
    close(pa.perfect_mean, 75.0);
    close(pa.perfect_std, 1250f64.sqrt());
    let bl = cat.iter().find(|s| s.stratum == "Business Logic").unwrap();
    // q2, q3: A 12/40 = 30, B 3/40 = 7.5.
    assert_eq!(bl.questions, 2);
    close(bl.mean, 18.75);
    close(bl.std, 22.5 / 2f64.sqrt());
    close(bl.perfect_std, 0.0);
    assert_eq!(r.strata["language"].len(), 2);

    let a = r.reliability.iter().find(|x| x.model == "A").unwrap();
    // run 0: 10+6+1 = 17/30; run 1: 8+5+0 = 13/30.
    close(a.checklist.mean, 50.0);
    close(a.checklist.std, (40.0 / 3.0) / 2f64.sqrt());
    close(a.checklist.range, 40.0 / 3.0);
    // Scalar: rates 0.7 (run 0) and 0.9 (run 1) on q1, grid of 3 questions under `zero`.
    let s = a.scalar.as_ref().unwrap();
    close(s.mean, (70.0 / 3.0 + 30.0) / 2.0);
    close(s.range, 30.0 - 70.0 / 3.0);
    assert!(
        r.reliability
            .iter()
            .find(|x| x.model == "B")
            .unwrap()
            .scalar
            .is_none()
    );

    // Failure modes: classifier C1 (3 labels) wins over C2 (1).
    assert_eq!(r.classifier.as_deref(), Some("C1"));
    let fa = r.failure_modes.iter().find(|f| f.model == "A").unwrap();
    assert_eq!(fa.failures, 2);
    close(Some(fa.shares["context_miss"]), 50.0);
    close(Some(fa.shares["shallow_explanation"]), 50.0);
    close(Some(r.failure_mode_average["edit_bias"]), 50.0);
    close(Some(r.failure_mode_average["hallucination"]), 0.0);

    // Paired: per-question means A 90, 55, 5 vs B 100, 15, 0 → diffs −10, 40, 5.
    let p = r.paired.unwrap();
    close(p.mean_diff, 35.0 / 3.0);
    assert_eq!(p.questions, 3);
    let [lo, hi] = p.ci95.unwrap();
    assert!(
        lo <= 35.0 / 3.0 && 35.0 / 3.0 <= hi && lo >= -10.0 && hi <= 40.0,
        "{lo} {hi}"
    );

    let by_lang = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            strata: vec![Stratum::Language],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        by_lang
            .strata
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        vec!["language"]
    );
}

#[test]
fn golden_items_attainment_and_agreement() {
    let l = loaded();
    let r = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            items: true,
            bootstrap: 0,
            ..Default::default()
        },
    )
    .unwrap();
    let items = r.items.unwrap();
    let k1q1 = items
        .iter()
        .find(|i| i.question_id == "q1" && i.item_id == "k1")
        .unwrap();
    // A: 5, 5; B: 5, 5 → 100 %; runs agree in both pairs.
    close(k1q1.attainment, 100.0);
    assert_eq!(k1q1.agreement_pairs, 2);
    close(k1q1.agreement, 100.0);
    let k2q1 = items
        .iter()
        .find(|i| i.question_id == "q1" && i.item_id == "k2")
        .unwrap();
    // A: 4, 2; B: 4, 4 → (4+2+4+4)/(4×4) = 87.5 %; A's runs disagree, B's agree → 50 %.
    close(k2q1.attainment, 87.5);
    close(k2q1.agreement, 50.0);
    close(Some(k2q1.per_model["A"]), 75.0);
}

#[test]
fn a_score_report_round_trips_through_json() {
    // The site's worker sends reports as JSON: what arrives must equal what was computed.
    let l = loaded();
    let r = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            items: true,
            compare: Some(("A".into(), "B".into())),
            ..Default::default()
        },
    )
    .unwrap();
    let text = serde_json::to_string(&r).unwrap();
    let back: repoprobe_core::ScoreReport = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}

#[test]
fn the_empty_report_is_what_score_gives_for_no_data() {
    for opts in [
        ScoreOptions::default(),
        ScoreOptions {
            items: true,
            missing: MissingPolicy::Exclude,
            ..Default::default()
        },
    ] {
        let scored = score(&repoprobe_core::Dataset::default(), &[], &opts).unwrap();
        assert_eq!(repoprobe_core::ScoreReport::empty(&opts), scored);
    }
}

/// Dropping a question gives exactly the report of the files without it (records removed from
/// the bytes here, by their JSON, not by the core), and the policy block names it.
#[test]
fn dropping_a_question_equals_scoring_the_files_without_it() {
    let drop = "q2";
    let without: Vec<(String, Vec<u8>)> = common::GOLDEN
        .iter()
        .map(|(name, bytes)| {
            let text = std::str::from_utf8(bytes).unwrap();
            let about = |v: &serde_json::Value| v["id"] == drop || v["question_id"] == drop;
            let kept = if name.ends_with(".jsonl") {
                text.lines()
                    .filter(|l| {
                        serde_json::from_str::<serde_json::Value>(l).map_or(true, |v| !about(&v))
                    })
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
            } else {
                let v: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
                serde_json::to_string(&v.into_iter().filter(|x| !about(x)).collect::<Vec<_>>())
                    .unwrap()
            };
            (name.to_string(), kept.into_bytes())
        })
        .collect();
    let files: Vec<SourceFile> = without
        .iter()
        .map(|(name, bytes)| SourceFile { name, bytes })
        .collect();
    let l2 = load(&files, LoadOptions::default());
    let l = loaded();
    for missing in [MissingPolicy::Zero, MissingPolicy::Exclude] {
        let opts = ScoreOptions {
            missing,
            bootstrap: 50,
            items: true,
            ..Default::default()
        };
        let expected = score(&l2.dataset, &l2.issues, &opts).unwrap();
        let dropped = ScoreOptions {
            drop_questions: [drop.to_string()].into(),
            ..opts.clone()
        };
        let mut got = score(&l.dataset, &l2.issues, &dropped).unwrap();
        assert_eq!(got.policy.dropped_questions, ["q2"]);
        got.policy.dropped_questions.clear();
        assert_eq!(got, expected);
        assert_ne!(
            got,
            score(&l.dataset, &l.issues, &opts).unwrap(),
            "q2 changed something"
        );
    }
    let unknown = ScoreOptions {
        drop_questions: ["q9".to_string()].into(),
        ..Default::default()
    };
    let e = score(&l.dataset, &l.issues, &unknown).unwrap_err();
    assert!(e.to_string().contains("\"q9\""), "{e}");
}

fn rules(texts: &[&str]) -> Vec<repoprobe_core::WeightRule> {
    texts
        .iter()
        .map(|t| repoprobe_core::WeightRule::parse(t).unwrap())
        .collect()
}

#[test]
fn golden_reweighted_by_hand() {
    let l = loaded();
    let r = score(
        &l.dataset,
        &l.issues,
        &ScoreOptions {
            weights: rules(&["*/@clarity=0", "q1/k1=1"]),
            bootstrap: 0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.policy.weights, ["*/@clarity=0", "q1/k1=1"]);
    // A under J, 6 cells, each Σ w′·score/w ÷ Σ w′ with clarity at 0:
    // q1 (k1 1, k2 4): run 0 (5/5, 4/4) → 5/5 = 1; run 1 (5/5, 2/4) → (1 + 2)/5 = 0.6.
    // q2 (k1 5, k2 4): both runs (3/5, 2/4) → (3 + 2)/9 = 5/9. q3: 0 and 0.
    let a = row(&r, "A", "J");
    let overall = (1.0 + 0.6 + 5.0 / 9.0 + 5.0 / 9.0) / 6.0 * 100.0;
    close(a.overall, overall);
    close(a.knowledge, overall);
    // Clarity is the clarity item's attainment, whatever its weight: 1, 1, 1, 0, 1, 0.
    close(a.clarity, 400.0 / 6.0);
    // Perfect: every item of non-zero weight full: q1 run 0 only.
    close(a.perfect, 100.0 / 6.0);
    assert!(
        report_note(&r).contains(
            "RE-WEIGHTED by the reader (not the checklists' own weights): */@clarity=0, q1/k1=1"
        ),
        "{}",
        report_note(&r)
    );
}

fn report_note(r: &repoprobe_core::ScoreReport) -> String {
    repoprobe_core::report::models_table(r)
        .note
        .unwrap_or_default()
}

#[test]
fn golden_weight_rules_that_name_nothing_are_errors() {
    let l = loaded();
    let err = |texts: &[&str], drop: &[&str]| {
        score(
            &l.dataset,
            &l.issues,
            &ScoreOptions {
                weights: rules(texts),
                drop_questions: drop.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
        )
        .err()
        .map(|e| e.to_string())
    };
    for (texts, says) in [
        (
            &["q9/k1=2"][..],
            "there is no question \"q9\" in the benchmark",
        ),
        (
            &["q1/k7=2"],
            "question \"q1\" has no such item (its items: k1, k2, clarity)",
        ),
        (
            &["*/k7=2"],
            "weight rule */k7=2: no question has such an item",
        ),
        (
            &["q1/@knowledge=0"],
            "leave question \"q1\" no knowledge item of non-zero weight",
        ),
    ] {
        let e = err(texts, &[]).expect("an error");
        assert!(e.contains(says), "{texts:?}: {e}");
    }
    // A rule naming a question the reader dropped is no typo; an unknown one still is.
    assert_eq!(err(&["q1/k1=2"], &["q1"]), None);
    assert!(err(&["q9/k1=2"], &["q1"]).is_some());
}
