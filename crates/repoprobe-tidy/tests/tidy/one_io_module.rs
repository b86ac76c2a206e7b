//! Rule c: the CLI reads and writes files in one module, `crates/repoprobe-cli/src/input.rs`,
//! and writes them atomically (no plain `std::fs::write`).

use crate::source::{PathUse, crates, fail_with};

const THE_MODULE: &str = "crates/repoprobe-cli/src/input.rs";

/// Files that still use `std::fs` themselves, each being edited by someone else right now (issue
/// 36). A ratchet: an entry that no longer breaks the rule fails the test, so remove it when its
/// file's reads and writes have moved to `input.rs`.
const NOT_YET: &[(&str, &str)] = &[
    (
        "crates/repoprobe-cli/src/commands/answer.rs",
        "transcripts' directory",
    ),
    (
        "crates/repoprobe-cli/src/commands/curate/mod.rs",
        "output directories",
    ),
    (
        "crates/repoprobe-cli/src/commands/curate/verify.rs",
        "transcripts, evidence files read",
    ),
    ("crates/repoprobe-cli/src/live/mod.rs", "output directories"),
    (
        "crates/repoprobe-cli/src/output.rs",
        "the journals (append-only, locked)",
    ),
    (
        "crates/repoprobe-cli/src/runs/manifest.rs",
        "the manifest (hard-linked into place)",
    ),
    (
        "crates/repoprobe-cli/src/runs/state.rs",
        "journals and notes read back",
    ),
];

/// Whether `p` names the file system (std's, or tokio's).
fn is_fs(p: &PathUse) -> bool {
    p.starts_with(&["std", "fs"]) || p.starts_with(&["tokio", "fs"])
}

/// A plain, non-atomic write: `std::fs::write` (or `fs::write` after `use std::fs`), or a file
/// created in place (`File::create`: a reader or a crash sees it half written).
fn is_plain_write(p: &PathUse) -> bool {
    p.starts_with(&["std", "fs", "write"])
        || p.segments == ["fs", "write"]
        || p.segments
            .ends_with(&["File".to_string(), "create".to_string()])
}

/// Every breach of the rule: (file, line, what).
fn breaches() -> Vec<(String, usize, String)> {
    let cli = crates()
        .into_iter()
        .find(|c| c.name == "repoprobe-cli")
        .expect("crates/repoprobe-cli");
    let mut out = Vec::new();
    for f in &cli.files {
        for p in &f.paths {
            if is_plain_write(p) {
                out.push((
                    f.path.clone(),
                    p.line,
                    format!("`{}` is not atomic", p.text()),
                ));
            } else if is_fs(p) && f.path != THE_MODULE {
                out.push((
                    f.path.clone(),
                    p.line,
                    format!("`{}` outside input.rs", p.text()),
                ));
            }
        }
    }
    out
}

#[test]
fn the_cli_reads_and_writes_files_only_in_input_rs_and_atomically() {
    let found = breaches();
    let lines: Vec<String> = found
        .iter()
        .filter(|(file, _, _)| !NOT_YET.iter().any(|(f, _)| f == file))
        .map(|(file, line, what)| format!("{file}:{line}: {what}"))
        .collect();
    fail_with(
        "the CLI's one I/O module (crates/repoprobe-cli/src, non-test code: std::fs only in \
         input.rs; files written atomically, never with std::fs::write or File::create)",
        "call (or add) a function of input.rs: `write_atomically`/`write_atomically_with` for a \
         file written whole, `create_dir_all`, `read`, … — I/O of a file stays in one place",
        &lines,
    );
    let stale: Vec<String> = NOT_YET
        .iter()
        .filter(|(f, _)| !found.iter().any(|(file, _, _)| file == f))
        .map(|(f, _)| format!("{f}: allowed, but it no longer uses std::fs"))
        .collect();
    fail_with(
        "the CLI's one I/O module: its allow-list only shrinks",
        "remove the entry from NOT_YET in crates/repoprobe-tidy/tests/tidy/one_io_module.rs",
        &stale,
    );
}
