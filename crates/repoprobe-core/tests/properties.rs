//! Properties that must hold for any input: the loader never panics, scores stay in 0–100 with
//! Overall = 0.9·Knowledge + 0.1·Clarity, and the order of records never changes a result.

use proptest::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use repoprobe_core::synth::{SynthOptions, generate};
use repoprobe_core::{LoadOptions, MissingPolicy, ScoreOptions, SourceFile, load, score};

const GOLDEN: &[u8] = include_bytes!("../../../testdata/golden/judgments.jsonl");
const GOLDEN_BENCH: &[u8] = include_bytes!("../../../testdata/golden/benchmark.jsonl");

fn load_one(bytes: &[u8]) -> repoprobe_core::Loaded {
    load(
        &[SourceFile { name: "x", bytes }],
        LoadOptions {
            keep_raw: true,
            ..Default::default()
        },
    )
}

/// Every record of a synthetic bundle as one JSONL line, a few judgments dropped to leave holes.
fn synthetic_lines(o: SynthOptions, drop_every: usize) -> Vec<String> {
    let b = generate(o);
    let mut lines: Vec<String> = Vec::new();
    lines.extend(
        b.benchmark
            .iter()
            .map(|x| serde_json::to_string(x).unwrap()),
    );
    lines.extend(b.answers.iter().map(|x| serde_json::to_string(x).unwrap()));
    lines.extend(
        b.judgments
            .iter()
            .enumerate()
            .filter(|(i, _)| drop_every == 0 || i % drop_every != 1)
            .map(|(_, x)| serde_json::to_string(x).unwrap()),
    );
    lines.extend(
        b.scalar_judgments
            .iter()
            .map(|x| serde_json::to_string(x).unwrap()),
    );
    lines.extend(
        b.failure_modes
            .iter()
            .map(|x| serde_json::to_string(x).unwrap()),
    );
    lines
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn loader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..3000)) {
        let l = load_one(&bytes);
        let _ = score(&l.dataset, &l.issues, &ScoreOptions { bootstrap: 10, items: true, ..Default::default() });
    }

    #[test]
    fn loader_never_panics_on_mutated_valid_files(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..20)
    ) {
        let mut bytes = [GOLDEN_BENCH, GOLDEN].concat();
        mutate(&mut bytes, &edits);
        let l = load_one(&bytes);
        // Everything kept is valid: scoring it never fails for want of a judge.
        let r = score(&l.dataset, &l.issues, &ScoreOptions { bootstrap: 10, items: true, ..Default::default() });
        prop_assert!(r.is_ok());
    }
}

/// Everything a load gives, as text to compare.
fn fingerprint(l: &repoprobe_core::Loaded) -> String {
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}",
        l.dataset, l.issues, l.files, l.notes
    )
}

/// The golden files as one bundle (format first), as one JSON array and as JSONL.
fn golden_shapes() -> Vec<Vec<u8>> {
    let lines: Vec<serde_json::Value> = [GOLDEN_BENCH, GOLDEN]
        .iter()
        .flat_map(|b| std::str::from_utf8(b).unwrap().lines())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let questions: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|v| v.get("checklist").is_some())
        .collect();
    let judgments: Vec<&serde_json::Value> =
        lines.iter().filter(|v| v.get("items").is_some()).collect();
    let bundle = serde_json::json!({"format": "repoprobe-results", "version": 1, "benchmark": questions, "judgments": judgments});
    vec![
        serde_json::to_vec_pretty(&bundle).unwrap(),
        serde_json::to_vec(&lines).unwrap(),
        [GOLDEN_BENCH, GOLDEN].concat(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Streamed in chunks of any sizes (and, with the `parallel` feature, parsed on threads),
    /// a file loads exactly as it does whole, damaged or not.
    #[test]
    fn chunks_and_threads_never_change_a_load(
        shape in 0usize..3,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 0..6),
        cuts in proptest::collection::vec(1usize..400, 1..40),
        skip_text in any::<bool>(),
        threads in 1usize..4,
    ) {
        let mut bytes = golden_shapes().swap_remove(shape);
        mutate(&mut bytes, &edits);
        let options = LoadOptions { skip_text, ..Default::default() };
        let whole = load(&[SourceFile { name: "x", bytes: &bytes }], options);
        let mut loader = repoprobe_core::StreamLoader::new(LoadOptions { threads, ..options });
        loader.begin_file("x");
        let mut rest = &bytes[..];
        for n in cuts.iter().cycle() {
            if rest.is_empty() { break; }
            let (a, b) = rest.split_at((*n).min(rest.len()));
            loader.feed(a);
            rest = b;
        }
        loader.end_file();
        prop_assert_eq!(fingerprint(&loader.finish()), fingerprint(&whole));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn scores_stay_in_range_and_overall_is_the_weighted_sum(
        models in 1u32..5, questions in 1u32..25, runs in 1u32..4, seed in any::<u64>(), exclude in any::<bool>()
    ) {
        let text = synthetic_lines(SynthOptions { models, questions, runs, seed }, 3).join("\n");
        let l = load_one(text.as_bytes());
        prop_assert!(l.issues.is_empty(), "{:?}", l.issues);
        let missing = if exclude { MissingPolicy::Exclude } else { MissingPolicy::Zero };
        let r = score(&l.dataset, &l.issues, &ScoreOptions { missing, bootstrap: 50, ..Default::default() }).unwrap();
        for m in &r.models {
            for v in [m.overall, m.knowledge, m.clarity, m.perfect].into_iter().flatten() {
                prop_assert!((0.0..=100.0).contains(&v), "{v}");
            }
            if let (Some(o), Some(k), Some(c)) = (m.overall, m.knowledge, m.clarity) {
                prop_assert!((o - (0.9 * k + 0.1 * c)).abs() < 1e-9, "{o} vs {k} {c}");
            }
            // mean ± 1.96 SE: around the mean, and (a normal approximation) not clipped to
            // 0–100.
            if let (Some([lo, hi]), Some(o), Some(se)) = (m.ci95, m.overall, m.se) {
                prop_assert!(lo <= o && o <= hi, "{lo} {o} {hi}");
                prop_assert!((hi - lo - 2.0 * 1.959964 * se).abs() < 1e-9, "{lo} {hi} {se}");
            }
            let c = m.coverage.unwrap();
            prop_assert!((0.0..=1.0).contains(&c));
        }
    }

    #[test]
    fn input_order_never_changes_results(
        models in 1u32..5, questions in 1u32..20, runs in 1u32..4, seed in any::<u64>(), shuffle in any::<u64>()
    ) {
        let mut lines = synthetic_lines(SynthOptions { models, questions, runs, seed }, 4);
        let a = load_one(lines.join("\n").as_bytes());
        lines.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(shuffle));
        let b = load_one(lines.join("\n").as_bytes());
        let opts = ScoreOptions { bootstrap: 30, items: true, ..Default::default() };
        let ra = score(&a.dataset, &a.issues, &opts).unwrap();
        let rb = score(&b.dataset, &b.issues, &opts).unwrap();
        prop_assert_eq!(ra, rb);
    }
}

/// Every item of every question given `factor` × its own weight, as rules.
fn scaled_rules(ds: &repoprobe_core::Dataset, factor: u32) -> Vec<repoprobe_core::WeightRule> {
    ds.questions
        .iter()
        .flat_map(|q| {
            q.checklist.iter().map(move |c| {
                repoprobe_core::WeightRule::parse(&format!(
                    "{}/{}={}",
                    q.id,
                    c.id,
                    factor * c.weight
                ))
                .unwrap()
            })
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Re-weighting keeps a judge's attainment and only moves the weights: the checklists' own
    /// weights, or all of them doubled, must give back every number bit for bit.
    #[test]
    fn own_or_scaled_weights_change_no_number(
        models in 1u32..4, questions in 1u32..15, runs in 1u32..3, seed in any::<u64>(), factor in 1u32..4,
        exclude in any::<bool>(),
    ) {
        let l = load_one(synthetic_lines(SynthOptions { models, questions, runs, seed }, 3).join("\n").as_bytes());
        let missing = if exclude { MissingPolicy::Exclude } else { MissingPolicy::Zero };
        let plain = ScoreOptions { missing, bootstrap: 40, items: true, ..Default::default() };
        let a = score(&l.dataset, &l.issues, &plain).unwrap();
        let weighted = ScoreOptions { weights: scaled_rules(&l.dataset, factor), ..plain.clone() };
        let mut b = score(&l.dataset, &l.issues, &weighted).unwrap();
        prop_assert_eq!(b.policy.weights.len(), weighted.weights.len());
        b.policy.weights.clear();
        prop_assert_eq!(a, b);
    }

    /// With clarity weighing nothing, Overall is Knowledge; with knowledge items counting alike,
    /// every Overall stays within 0–100.
    #[test]
    fn clarity_at_zero_makes_overall_knowledge(
        models in 1u32..4, questions in 1u32..15, seed in any::<u64>(),
    ) {
        let l = load_one(synthetic_lines(SynthOptions { models, questions, runs: 1, seed }, 3).join("\n").as_bytes());
        let rules = vec![repoprobe_core::WeightRule::parse("*/@clarity=0").unwrap()];
        let r = score(&l.dataset, &l.issues, &ScoreOptions { bootstrap: 0, weights: rules, ..Default::default() }).unwrap();
        for m in &r.models {
            let (o, k) = (m.overall.unwrap(), m.knowledge.unwrap());
            prop_assert!((o - k).abs() < 1e-9, "{o} vs {k}");
        }
        let rules = vec![repoprobe_core::WeightRule::parse("*/@knowledge=1").unwrap()];
        let r = score(&l.dataset, &l.issues, &ScoreOptions { bootstrap: 0, weights: rules, ..Default::default() }).unwrap();
        for m in &r.models {
            prop_assert!((0.0..=100.0).contains(&m.overall.unwrap()));
        }
    }
}

/// Applies `edits` to `bytes`: each replaces (op 0), inserts (1) or removes (2) the byte at an index.
fn mutate(bytes: &mut Vec<u8>, edits: &[(prop::sample::Index, u8, u8)]) {
    for &(at, byte, op) in edits {
        if bytes.is_empty() {
            break;
        }
        let i = at.index(bytes.len());
        match op {
            0 => bytes[i] = byte,
            1 => bytes.insert(i, byte),
            _ => {
                bytes.remove(i);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any text splits into pieces that join back to it, and every citation found is a
    /// repository path.
    #[test]
    fn cited_paths_are_found_in_any_text_without_panic(text in "[a-z./:#L0-9 \u{e9}\u{2013}_-]{0,80}") {
        use repoprobe_core::cited::{Piece, cited, pieces};
        let back: String = pieces(&text)
            .iter()
            .map(|p| match p {
                Piece::Text(t) => *t,
                Piece::Path { text, .. } => *text,
            })
            .collect();
        prop_assert_eq!(back, text.clone());
        for c in cited(&text) {
            let again = repoprobe_core::model::repo_path::normalise(&c.path);
            prop_assert_eq!(again.as_deref(), Ok(c.path.as_str()));
            prop_assert!(c.lines.is_none_or(|[a, b]| a >= 1 && a <= b));
        }
    }

    /// Whatever the texts cite and whichever paths exist, the rewritten record loads back as
    /// the same question, its items' evidence grown by the entries assigned.
    #[test]
    fn a_rewritten_question_loads_back_with_its_new_evidence(
        key_point in "[a-z./:0-9 ]{0,60}",
        answer in "[a-z./:0-9 ]{0,60}",
        exists_mask in any::<u8>(),
    ) {
        use repoprobe_core::cited_evidence::{assign, rewrite};
        let line = std::str::from_utf8(GOLDEN_BENCH).unwrap().lines().next().unwrap();
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["checklist"][0]["key_point"] = serde_json::json!(key_point);
        v["reference_answer"] = serde_json::json!(answer);
        let raw = v.to_string();
        let mut loaded = load_one(raw.as_bytes());
        let before = loaded.dataset.questions.remove(0);
        // Which paths exist: a deterministic function of the path and the mask.
        let exists = |p: &str| (p.len() as u8 ^ exists_mask) & 1 == 0;
        let p = assign(&before, exists);
        let after_text = rewrite(&raw, &p).unwrap();
        prop_assert!(!after_text.contains('\n'));
        let after = load_one(after_text.as_bytes());
        prop_assert!(after.issues.is_empty(), "{:?}", after.issues);
        let mut after = after.dataset.questions[0].clone();
        for item in &p.items {
            let grown = &mut after.checklist[item.index].evidence;
            let old = grown.len() - item.added.len();
            prop_assert_eq!(&grown[old..], &item.added[..]);
            grown.truncate(old);
        }
        prop_assert_eq!(after, before);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `ci = bootstrap` resamples whole repositories: each resample's Overall is the mean over
    /// the cells of the repositories drawn (each as often as drawn), recomputed here from the
    /// judgments themselves, and the interval is its 2.5 % and 97.5 % quantiles.
    #[test]
    fn the_bootstrap_resamples_whole_repositories(
        models in 1u32..4, questions in 2u32..30, runs in 1u32..3, seed in any::<u64>(),
        bseed in any::<u64>(), exclude in any::<bool>()
    ) {
        use repoprobe_core::metrics::bootstrap::Resamples;
        use repoprobe_core::metrics::cluster::{CiMethod, Cluster, Clusters};
        let text = synthetic_lines(SynthOptions { models, questions, runs, seed }, 3).join("\n");
        let l = load_one(text.as_bytes());
        let missing = if exclude { MissingPolicy::Exclude } else { MissingPolicy::Zero };
        let b = 40;
        let opts = ScoreOptions {
            missing, cluster: Cluster::Repo, ci: CiMethod::Bootstrap, bootstrap: b, seed: bseed,
            ..Default::default()
        };
        let r = score(&l.dataset, &l.issues, &opts).unwrap();
        let mut qs: Vec<&repoprobe_core::model::Question> = l.dataset.questions.iter().collect();
        qs.sort_by(|a, b| a.id.cmp(&b.id));
        let clusters = Clusters::new(&qs, Cluster::Repo);
        let draws = Resamples::new(clusters.count, b, bseed).unwrap();
        for m in &r.models {
            // Per repository: the sum of s, the judged cells, the grid's cells.
            let mut per: Vec<(f64, u64, u64)> = vec![(0.0, 0, 0); clusters.count];
            for (i, q) in qs.iter().enumerate() {
                per[clusters.of[i] as usize].2 += (m.attempts * m.runs) as u64;
                for j in l.dataset.judgments.iter().filter(|j| {
                    j.question_id == q.id && j.model == m.model && j.judge == m.judge
                }) {
                    let slot = &mut per[clusters.of[i] as usize];
                    slot.0 += j.items.iter().map(|it| f64::from(it.score)).sum::<f64>();
                    slot.1 += 1;
                }
            }
            let mut values: Vec<f64> = draws
                .each()
                .filter_map(|drawn| {
                    let (mut s, mut filled, mut grid) = (0.0, 0u64, 0u64);
                    for &c in drawn {
                        s += per[c as usize].0;
                        filled += per[c as usize].1;
                        grid += per[c as usize].2;
                    }
                    let d = if exclude { filled } else { grid.max(filled) };
                    (d > 0).then(|| 100.0 * s / (10 * d) as f64)
                })
                .collect();
            values.sort_by(f64::total_cmp);
            let q = repoprobe_core::metrics::stats::quantile_sorted;
            match m.se {
                None => prop_assert_eq!(m.ci95, None),
                Some(_) => {
                    let [lo, hi] = m.ci95.expect("an interval with two clusters");
                    prop_assert!((lo - q(&values, 0.025).unwrap()).abs() < 1e-9, "{} {:?}", lo, values);
                    prop_assert!((hi - q(&values, 0.975).unwrap()).abs() < 1e-9, "{} {:?}", hi, values);
                }
            }
        }
    }
}
