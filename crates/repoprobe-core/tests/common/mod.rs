//! The golden fixture (`testdata/golden`, see its README) as the loader takes it, shared by the
//! core's integration tests.

use repoprobe_core::SourceFile;

/// The golden fixture's five files, in the order the tests load them.
pub const GOLDEN: [(&str, &[u8]); 5] = [
    (
        "benchmark.jsonl",
        include_bytes!("../../../../testdata/golden/benchmark.jsonl"),
    ),
    (
        "answers.jsonl",
        include_bytes!("../../../../testdata/golden/answers.jsonl"),
    ),
    (
        "judgments.jsonl",
        include_bytes!("../../../../testdata/golden/judgments.jsonl"),
    ),
    (
        "scalar_judgments.jsonl",
        include_bytes!("../../../../testdata/golden/scalar_judgments.jsonl"),
    ),
    (
        "failure_modes.json",
        include_bytes!("../../../../testdata/golden/failure_modes.json"),
    ),
];

/// The golden files followed by `extra` ones, as the loader's input.
pub fn golden_with<'a>(extra: &[(&'a str, &'a [u8])]) -> Vec<SourceFile<'a>> {
    GOLDEN
        .iter()
        .chain(extra)
        .map(|&(name, bytes)| SourceFile { name, bytes })
        .collect()
}
