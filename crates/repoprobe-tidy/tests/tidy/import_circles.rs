//! Rule e: no import circle between a crate's top-level modules (`crate::a::…` in `b` and
//! `crate::b::…` in `a`, through any number of steps), built from `use` and every other path.

use crate::source::{Crate, SourceFile, crates, fail_with};
use std::collections::{BTreeMap, BTreeSet};

/// Circles that are known and someone else is untangling, by crate and the modules in the
/// circle (sorted). A ratchet: an entry whose circle is gone fails the test.
const NOT_YET: &[(&str, &[&str])] = &[];

/// An edge `from → to` between top-level modules, with the first file:line that makes it.
type Edges = BTreeMap<(String, String), String>;

/// The top-level module a path in `file` names, if it names another module of the target.
fn target_of(file: &SourceFile, segments: &[String], top: &BTreeSet<String>) -> Option<String> {
    let mut module = file.module.clone();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            module.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                module.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        // A relative path from the root file names a top-level module directly.
        _ if module.is_empty() => {}
        _ => return None,
    }
    let first = module.first().or(rest.first())?;
    top.contains(first).then(|| first.clone())
}

/// The edges of one target (files under one root).
fn edges(files: &[&SourceFile]) -> Edges {
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.module.first().cloned())
        .collect();
    let mut out = Edges::new();
    for f in files {
        let Some(from) = f.module.first() else {
            continue;
        };
        for p in &f.paths {
            if let Some(to) = target_of(f, &p.segments, &top)
                && &to != from
            {
                out.entry((from.clone(), to))
                    .or_insert_with(|| format!("{}:{} (`{}`)", f.path, p.line, p.text()));
            }
        }
    }
    out
}

/// The circles of a graph: its strongly connected components of more than one module
/// (Tarjan's algorithm would do; the graphs are small, so by reachability).
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for ((a, b), _) in edges.range((n.clone(), String::new())..) {
                if *a != n {
                    break;
                }
                if seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let mut circle: Vec<String> = nodes
            .iter()
            .filter(|m| reaches[*n].contains(**m) && reaches[*m].contains(*n))
            .map(|m| (*m).clone())
            .collect();
        circle.sort();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

/// Each target's files: files are grouped by the root they were reached from, which the walk
/// records as the module path's start; a bin's files are its own target.
fn targets(c: &Crate) -> Vec<(String, Vec<&SourceFile>)> {
    let mut by: BTreeMap<String, Vec<&SourceFile>> = BTreeMap::new();
    let mut current = String::new();
    for f in &c.files {
        if f.module.is_empty() {
            current = f.path.clone();
        }
        by.entry(current.clone()).or_default().push(f);
    }
    by.into_iter().collect()
}

#[test]
fn no_import_circle_between_a_crates_top_level_modules() {
    let mut breaches = Vec::new();
    let mut seen = Vec::new();
    for c in crates() {
        for (root, files) in targets(&c) {
            let edges = edges(&files);
            for circle in circles(&edges) {
                let known = NOT_YET.iter().any(|(n, m)| {
                    *n == c.name && m.iter().copied().eq(circle.iter().map(String::as_str))
                });
                seen.push((c.name.clone(), circle.clone()));
                if known {
                    continue;
                }
                let steps: Vec<String> = edges
                    .iter()
                    .filter(|((a, b), _)| circle.contains(a) && circle.contains(b))
                    .map(|((a, b), at)| format!("    {a} → {b}: {at}"))
                    .collect();
                breaches.push(format!(
                    "{root}: modules {} import each other:\n{}",
                    circle.join(", "),
                    steps.join("\n")
                ));
            }
        }
    }
    fail_with(
        "no import circle (a crate's top-level modules import one way)",
        "move what both need to the module it belongs to by meaning (usually the lower one), \
         so that one of the edges goes",
        &breaches,
    );
    let stale: Vec<String> = NOT_YET
        .iter()
        .filter(|(n, m)| {
            !seen.iter().any(|(c, circle)| {
                c == n && m.iter().copied().eq(circle.iter().map(String::as_str))
            })
        })
        .map(|(n, m)| format!("{n}: {} no longer import each other", m.join(", ")))
        .collect();
    fail_with(
        "no import circle: its allow-list only shrinks",
        "remove the entry from NOT_YET in crates/repoprobe-tidy/tests/tidy/import_circles.rs",
        &stale,
    );
}

#[test]
fn a_circle_through_three_modules_is_found() {
    let mut e = Edges::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        e.insert((a.into(), b.into()), String::new());
    }
    assert_eq!(
        circles(&e),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
}
