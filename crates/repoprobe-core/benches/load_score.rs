//! Load + score of 50,000 judgments (`synth --models 20 --questions 500 --runs 5`) against a bare
//! `serde_json` parse of the same bytes into a `Value`. Target: load + score ≤ 2× the bare parse.
//!
//! With `--features parallel` the loads are also timed with records parsed on one thread per
//! core while the bytes are cut (what the CLI does): `cargo bench -p repoprobe-core --features
//! parallel --bench load_score`.

use criterion::{Criterion, criterion_group, criterion_main};
use repoprobe_core::synth::{SynthOptions, generate};
use repoprobe_core::{LoadOptions, ScoreOptions, SourceFile, load, score};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let bytes = serde_json::to_vec(&generate(SynthOptions {
        models: 20,
        questions: 500,
        runs: 5,
        seed: 1,
    }))
    .unwrap();
    eprintln!("input: {} bytes", bytes.len());
    let files = [SourceFile {
        name: "synth.json",
        bytes: &bytes,
    }];

    let mut g = c.benchmark_group("50k_judgments");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(3));
    g.bench_function("serde_json_value_parse", |b| {
        b.iter(|| {
            black_box(serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).unwrap())
        })
    });
    g.bench_function("load", |b| {
        b.iter(|| black_box(load(black_box(&files), LoadOptions::default())))
    });
    // What `repoprobe score` does: texts skipped, parsed on every core.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let score_load = |threads: usize| LoadOptions {
        skip_text: true,
        threads,
        ..LoadOptions::default()
    };
    g.bench_function("load_skip_text_1_thread", |b| {
        b.iter(|| black_box(load(black_box(&files), score_load(1))))
    });
    if cfg!(feature = "parallel") && threads > 1 {
        eprintln!("parallel loads: {threads} threads");
        g.bench_function(format!("load_skip_text_{threads}_threads"), |b| {
            b.iter(|| black_box(load(black_box(&files), score_load(threads))))
        });
        g.bench_function(
            format!("load_skip_text_{threads}_threads_and_score_bootstrap_1000"),
            |b| {
                let o = ScoreOptions::default();
                b.iter(|| {
                    let l = load(black_box(&files), score_load(threads));
                    black_box(score(&l.dataset, &l.issues, &o).unwrap())
                })
            },
        );
    }
    let loaded = load(&files, LoadOptions::default());
    assert!(loaded.issues.is_empty());
    g.bench_function("score_no_bootstrap", |b| {
        let o = ScoreOptions {
            bootstrap: 0,
            ..Default::default()
        };
        b.iter(|| black_box(score(&loaded.dataset, &loaded.issues, &o).unwrap()))
    });
    g.bench_function("score_bootstrap_1000", |b| {
        let o = ScoreOptions::default();
        b.iter(|| black_box(score(&loaded.dataset, &loaded.issues, &o).unwrap()))
    });
    // Re-weighted: every cell through the exact weighted sums instead of the integer ones.
    g.bench_function("score_reweighted_bootstrap_1000", |b| {
        let o = ScoreOptions {
            weights: ["*/@knowledge=1", "*/@clarity=2"]
                .iter()
                .map(|r| repoprobe_core::WeightRule::parse(r).unwrap())
                .collect(),
            ..Default::default()
        };
        b.iter(|| black_box(score(&loaded.dataset, &loaded.issues, &o).unwrap()))
    });
    g.bench_function("load_and_score_bootstrap_1000", |b| {
        let o = ScoreOptions::default();
        b.iter(|| {
            let l = load(black_box(&files), LoadOptions::default());
            black_box(score(&l.dataset, &l.issues, &o).unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
