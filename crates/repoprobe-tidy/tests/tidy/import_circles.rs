//! Rule e: no import circle between sibling modules, in every folder of every crate and of the
//! site: for each module path `P` (the crate root, `metrics`, `pages::grade`, …) its child
//! modules import one way (`P::a::…` in `P::b` and `P::b::…` in `P::a`, through any number of
//! steps), built from `use` and every other path. Nothing is allowed.

use crate::source::{Crate, SourceFile, crates, fail_with};
use std::collections::{BTreeMap, BTreeSet};

/// An edge `from → to` between sibling modules, with the first file:line that makes it.
type Edges = BTreeMap<(String, String), String>;

/// The module paths of a target: every file's module and each of its ancestors.
pub type Modules = BTreeSet<Vec<String>>;

/// The crate-relative path a path in `file` names, if it names something of the target.
pub fn resolve(file: &SourceFile, segments: &[String], modules: &Modules) -> Option<Vec<String>> {
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
        // A relative path names a child module of the file's own module, or something outside.
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    module.extend(rest.iter().cloned());
    Some(module)
}

/// The edges between the children of `folder` in one target (files under one root).
fn edges(files: &[&SourceFile], folder: &[String], modules: &Modules) -> Edges {
    let child_of = |path: &[String]| -> Option<String> {
        let child = path.get(folder.len())?;
        let mut m = folder.to_vec();
        m.push(child.clone());
        (path.starts_with(folder) && modules.contains(&m)).then(|| child.clone())
    };
    let mut out = Edges::new();
    for f in files {
        let Some(from) = child_of(&f.module) else {
            continue;
        };
        for p in &f.paths {
            if let Some(to) = resolve(f, &p.segments, modules).and_then(|t| child_of(&t))
                && to != from
            {
                out.entry((from.clone(), to))
                    .or_insert_with(|| format!("{}:{} (`{}`)", f.path, p.line, p.text()));
            }
        }
    }
    out
}

/// Every module of a target and its ancestors (the root is `[]`).
pub fn modules(files: &[&SourceFile]) -> Modules {
    let mut out = Modules::new();
    for f in files {
        for n in 0..=f.module.len() {
            out.insert(f.module[..n].to_vec());
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
pub fn targets(c: &Crate) -> Vec<(String, Vec<&SourceFile>)> {
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
fn no_import_circle_between_sibling_modules() {
    let mut breaches = Vec::new();
    for c in crates() {
        for (root, files) in targets(&c) {
            let modules = modules(&files);
            for folder in &modules {
                let edges = edges(&files, folder, &modules);
                for circle in circles(&edges) {
                    let steps: Vec<String> = edges
                        .iter()
                        .filter(|((a, b), _)| circle.contains(a) && circle.contains(b))
                        .map(|((a, b), at)| format!("    {a} → {b}: {at}"))
                        .collect();
                    let place = if folder.is_empty() {
                        root.clone()
                    } else {
                        format!("{root} › {}", folder.join("::"))
                    };
                    breaches.push(format!(
                        "{place}: modules {} import each other:\n{}",
                        circle.join(", "),
                        steps.join("\n")
                    ));
                }
            }
        }
    }
    fail_with(
        "no import circle (sibling modules import one way)",
        "move what both need to the module it belongs to by meaning (usually the lower one), \
         so that one of the edges goes",
        &breaches,
    );
}

/// The drawing of the structure: for each crate target and each folder, which sibling module
/// imports which, lowest first (a module after all it imports), and any circle. Run it with
/// `cargo test -p repoprobe-tidy --test tidy drawing -- --ignored --nocapture`.
#[test]
#[ignore = "prints the drawing; asserts nothing"]
fn drawing_of_the_imports_between_sibling_modules() {
    let (mut arrows, mut circled) = (0, 0);
    for c in crates() {
        for (root, files) in targets(&c) {
            println!("{} ({root})", c.name);
            let modules = modules(&files);
            for folder in &modules {
                let edges = edges(&files, folder, &modules);
                if edges.is_empty() {
                    continue;
                }
                arrows += edges.len();
                println!("  {}/", folder.join("/"));
                for line in drawn(&edges) {
                    println!("    {line}");
                }
                for circle in circles(&edges) {
                    circled += 1;
                    println!("    CIRCLE: {}", circle.join(" ⇄ "));
                }
            }
        }
    }
    println!("{arrows} arrows between sibling modules, {circled} circles");
}

/// One line per module that imports a sibling, `a → b, c`, lowest first: a module comes after
/// every sibling it imports (the members of a circle, which have no such order, come last).
fn drawn(edges: &Edges) -> Vec<String> {
    let mut out: BTreeMap<&String, Vec<&String>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        out.entry(a).or_default().push(b);
    }
    let mut placed: Vec<&String> = Vec::new();
    let mut left: Vec<&String> = out.keys().copied().collect();
    while !left.is_empty() {
        let ready: Vec<&String> = left
            .iter()
            .copied()
            .filter(|m| {
                out[m]
                    .iter()
                    .all(|t| !out.contains_key(t) || placed.contains(t))
            })
            .collect();
        let next = if ready.is_empty() {
            left.clone()
        } else {
            ready
        };
        left.retain(|m| !next.contains(m));
        placed.extend(next);
    }
    placed
        .into_iter()
        .map(|m| {
            let to: Vec<&str> = out[m].iter().map(|t| t.as_str()).collect();
            format!("{m} → {}", to.join(", "))
        })
        .collect()
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

#[test]
fn the_drawing_puts_a_module_after_what_it_imports() {
    let mut e = Edges::new();
    for (a, b) in [("report", "grid"), ("grid", "weights"), ("paired", "grid")] {
        e.insert((a.into(), b.into()), String::new());
    }
    assert_eq!(
        drawn(&e),
        vec!["grid → weights", "paired → grid", "report → grid"]
    );
}
