//! Any bytes, loaded as one file or split into two, then scored: nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use repoprobe_core::{LoadOptions, ScoreOptions, SourceFile, load, score};

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(0, |&b| b as usize % (data.len() + 1));
    let (a, b) = data.split_at(split);
    for files in [vec![SourceFile { name: "all", bytes: data }], vec![
        SourceFile { name: "a", bytes: a },
        SourceFile { name: "b", bytes: b },
    ]] {
        let loaded = load(&files, LoadOptions { keep_raw: true, ..Default::default() });
        let _ = score(&loaded.dataset, &loaded.issues, &ScoreOptions { bootstrap: 5, items: true, ..Default::default() });
    }
});
