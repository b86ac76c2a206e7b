//! Rule c: the CLI reads and writes files in its I/O modules only — `input.rs` (inputs,
//! directories, atomic writes), `output.rs` (the journals: append-only, locked) and `run_files/` (a
//! run's manifest, notes and state) — and never writes one in place (no plain
//! `std::fs::write`, no `File::create`).

use crate::source::{PathUse, crates, fail_with};

/// The CLI's I/O modules: a file, or a folder ending in `/`.
const IO_MODULES: &[&str] = &[
    "crates/repoprobe-cli/src/input.rs",
    "crates/repoprobe-cli/src/output.rs",
    "crates/repoprobe-cli/src/run_files/",
];

fn is_io_module(path: &str) -> bool {
    IO_MODULES.iter().any(|m| {
        if m.ends_with('/') {
            path.starts_with(m)
        } else {
            path == *m
        }
    })
}

/// Files that still use `std::fs` themselves, each being edited by someone else right now (issue
/// 36). A ratchet: an entry that no longer breaks the rule fails the test, so remove it when its
/// file's reads and writes have moved to `input.rs`.
const NOT_YET: &[(&str, &str)] = &[
    // Empty: every file of the CLI but its I/O modules goes through them.
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
            } else if is_fs(p) && !is_io_module(&f.path) {
                out.push((
                    f.path.clone(),
                    p.line,
                    format!(
                        "`{}` outside the I/O modules (input.rs, output.rs, run_files/)",
                        p.text()
                    ),
                ));
            }
        }
    }
    out
}

#[test]
fn the_cli_reads_and_writes_files_only_in_its_io_modules_and_atomically() {
    let found = breaches();
    let lines: Vec<String> = found
        .iter()
        .filter(|(file, _, _)| !NOT_YET.iter().any(|(f, _)| f == file))
        .map(|(file, line, what)| format!("{file}:{line}: {what}"))
        .collect();
    fail_with(
        "the CLI's I/O modules (crates/repoprobe-cli/src, non-test code: std::fs only in \
         input.rs, output.rs and run_files/; files written atomically, never with std::fs::write or \
         File::create)",
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
        "the CLI's I/O modules: its allow-list only shrinks",
        "remove the entry from NOT_YET in crates/repoprobe-tidy/tests/tidy/one_io_module.rs",
        &stale,
    );
}
