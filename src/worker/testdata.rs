//! The golden files of the site's tests, loaded as the CLI loads them.

use repoprobe_core::{LoadOptions, Loaded, SourceFile, load};

pub const FILES: [(&str, &[u8]); 4] = [
    (
        "benchmark.jsonl",
        include_bytes!("../../testdata/golden/benchmark.jsonl"),
    ),
    (
        "answers.jsonl",
        include_bytes!("../../testdata/golden/answers.jsonl"),
    ),
    (
        "judgments.jsonl",
        include_bytes!("../../testdata/golden/judgments.jsonl"),
    ),
    (
        "scalar_judgments.jsonl",
        include_bytes!("../../testdata/golden/scalar_judgments.jsonl"),
    ),
];

pub fn golden() -> Loaded {
    let sources: Vec<SourceFile> = FILES
        .iter()
        .map(|(name, bytes)| SourceFile { name, bytes })
        .collect();
    load(&sources, LoadOptions::default())
}
