//! Rule h: ARCHITECTURE.md is a map — one short line per crate and module (at most
//! [`MAX_ROW`] characters), every module row naming a path that exists — so that a newcomer
//! can scan it and no row outlives its module. What a module holds in detail is its own `//!`.

use crate::source::{fail_with, root};

/// The longest a row of a crate or module table may be, pipes included.
const MAX_ROW: usize = 160;

/// The rows of ARCHITECTURE.md's crate and module tables (not the rules' nor the layers'),
/// each with its line number.
fn module_rows(text: &str) -> Vec<(usize, &str)> {
    table_rows(text, &["| path |", "| crate | job |"])
}

/// The rows of the map's tables (before the rules) whose header starts with one of `headers`,
/// each with its line number.
pub fn table_rows<'a>(text: &'a str, headers: &[&str]) -> Vec<(usize, &'a str)> {
    let map = text
        .split_once("## Rules (checked by")
        .map_or(text, |(before, _)| before);
    let mut out = Vec::new();
    let mut in_table = false;
    for (n, line) in map.lines().enumerate() {
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        if headers.iter().any(|h| line.starts_with(h)) {
            in_table = true;
            continue;
        }
        if in_table && !line.starts_with("|---") {
            out.push((n + 1, line));
        }
    }
    out
}

/// The paths a row names in its first cell: `` `a/b.rs` ``, `` `src/pages/` ``, `` `…/c.rs` ``
/// (a file of some crate's `src/`: the map leaves out which when the rows around say it) and
/// `` `…/{x,y}.rs` `` (two files).
fn paths(cell: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in cell.split('`').skip(1).step_by(2) {
        match (part.split_once('{'), part.split_once('}')) {
            (Some((head, rest)), Some((_, tail))) => {
                let names = rest.split('}').next().unwrap_or_default();
                out.extend(
                    names
                        .split(',')
                        .map(|n| format!("{head}{}{tail}", n.trim())),
                );
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

/// Whether `p` exists: under the workspace root; for `…/rest`, under the site's `src/`, some
/// crate's `src/` or some crate's folder; a pattern (`*`) when the folder before it does.
fn exists(p: &str) -> bool {
    let root = root();
    let p = match p.find('*') {
        Some(star) => p[..star].trim_end_matches('/'),
        None => p,
    };
    match p.strip_prefix("…/") {
        None => root.join(p).exists(),
        Some(rest) => {
            root.join("src").join(rest).exists()
                || std::fs::read_dir(root.join("crates")).is_ok_and(|dirs| {
                    dirs.flatten().any(|d| {
                        d.path().join("src").join(rest).exists() || d.path().join(rest).exists()
                    })
                })
        }
    }
}

/// The paths of a cell, each as the map means it: a path without a folder of its own after
/// another path (`` `…/model/evidence.rs`, `repo_path.rs` ``) is beside that one.
pub fn resolved(cell: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in paths(cell) {
        let p = p.trim_end_matches('/').to_string();
        let beside = out
            .last()
            .and_then(|prev| prev.rsplit_once('/'))
            .map(|(dir, _)| format!("{dir}/{p}"));
        match beside {
            Some(b) if !exists(&p) && exists(&b) => out.push(b),
            _ => out.push(p),
        }
    }
    out
}

#[test]
fn architecture_md_is_a_map_of_short_rows_naming_paths_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let rows = module_rows(&text);
    assert!(
        rows.len() > 50,
        "the module tables were not found: {} rows",
        rows.len()
    );
    let mut breaches = Vec::new();
    for (line, row) in rows {
        let n = row.chars().count();
        if n > MAX_ROW {
            breaches.push(format!("ARCHITECTURE.md:{line}: {n} characters"));
        }
        let first = row.split('|').nth(1).unwrap_or_default();
        for p in resolved(first) {
            let looks_like_a_path = p.contains('/') || p.ends_with(".rs");
            if looks_like_a_path && !p.contains(' ') && !exists(&p) {
                breaches.push(format!("ARCHITECTURE.md:{line}: `{p}` does not exist"));
            }
        }
    }
    fail_with(
        "ARCHITECTURE.md is a map: a crate or module row is at most 160 characters and names a \
         path that exists",
        "say what the module holds in a few words (its `//!` holds the rest); rename or remove \
         the row of a module that moved",
        &breaches,
    );
}

#[test]
fn the_map_rule_reads_paths_and_sees_one_that_does_not_exist() {
    assert_eq!(
        paths("`…/metrics/{grid,index}.rs`, `src/lib.rs`"),
        ["…/metrics/grid.rs", "…/metrics/index.rs", "src/lib.rs"]
    );
    assert!(exists("…/metrics/grid.rs"));
    assert!(exists("crates/repoprobe-core/src/model.rs"));
    assert!(!exists("…/metrics/no_such_module.rs"));
    assert!(exists("src/pages/*.rs"));
    assert_eq!(
        resolved("`…/model/evidence.rs`, `repo_path.rs`"),
        ["…/model/evidence.rs", "…/model/repo_path.rs"]
    );
    let rows = module_rows(
        "| path | holds |\n|---|---|\n| `a` | b |\n\n## Rules (checked by x\n| r | t |\n",
    );
    assert_eq!(rows, [(3, "| `a` | b |")]);
}
