//! Rule m: the map's "must not" column is checked. Each claim of a module row (the cell split
//! at `;`) is one of [`CLAIMS`], whose check runs over the non-test code of the row's files:
//! a claim no program can check is not written there (the module's `//!` can say it in words).

use crate::import_circles::{Modules, modules, resolve, targets};
use crate::source::{PathUse, SourceFile, crates, fail_with, parsed, root};
use std::collections::BTreeMap;

/// What a claim forbids.
#[derive(Debug, Clone, Copy)]
enum Check {
    /// No path holds one of these segment runs (`["std", "fs"]` in `std::fs::read`, in
    /// `use std::fs`; `["println"]`, a macro's name).
    Paths(&'static [&'static [&'static str]]),
    /// No path names what follows `import`: `` `mod.rs` `` an item of the folder's `mod.rs`
    /// (`super::X`, `X` no module), `` `load/mod.rs` `` one of that module's (from the crate
    /// root), `` `grid` `` or `` `batch.rs` `` the sibling module.
    Imports,
    /// No path of one of the row's files names another of the row's files.
    ImportsEachOther,
    /// No identifier of this name in the code (in `view!` too).
    Token(&'static str),
    /// Checked by another rule over every file it could break in: the rule's file here.
    Rule(&'static str),
}

const FS: &[&str] = &["std", "fs"];
const TOKIO_FS: &[&str] = &["tokio", "fs"];
const CLOCK: &[&[&str]] = &[
    &["SystemTime"],
    &["Instant"],
    &["Utc", "now"],
    &["Local", "now"],
    &["Date", "now"],
    &["performance"],
];
const BROWSER: &[&[&str]] = &[
    &["web_sys"],
    &["js_sys"],
    &["wasm_bindgen_futures"],
    &["gloo_timers"],
    &["gloo_net"],
];
const NET: &[&[&str]] = &[
    &["reqwest"],
    &["ureq"],
    &["hyper"],
    &["std", "net"],
    &["tokio", "net"],
];
const SPAWN: &[&[&str]] = &[&["std", "process"], &["tokio", "process"], &["Command"]];
const PRINT: &[&[&str]] = &[&["println"], &["eprintln"], &["print"], &["eprint"]];
const WRITE: &[&[&str]] = &[
    &["fs", "write"],
    &["File", "create"],
    &["OpenOptions"],
    &["create_dir_all"],
    &["fs", "rename"],
    &["remove_file"],
];
const OS: &[&[&str]] = &[
    FS,
    TOKIO_FS,
    &["std", "env"],
    &["std", "process"],
    &["SystemTime"],
    &["Instant"],
    &["Utc", "now"],
];

/// Every claim a "must not" cell may make, word for word, and its check.
const CLAIMS: &[(&str, Check)] = &[
    ("read files", Check::Paths(&[FS, TOKIO_FS])),
    ("write files", Check::Paths(WRITE)),
    ("read a clock", Check::Paths(CLOCK)),
    ("use the OS or clock", Check::Paths(OS)),
    ("touch the browser", Check::Paths(BROWSER)),
    ("use leptos", Check::Paths(&[&["leptos"]])),
    ("do HTTP", Check::Paths(NET)),
    ("connect anywhere", Check::Paths(NET)),
    ("spawn anything", Check::Paths(SPAWN)),
    ("print", Check::Paths(PRINT)),
    ("import each other", Check::ImportsEachOther),
    ("`inner_html`", Check::Token("inner_html")),
    ("compute a metric", Check::Rule("pages_compute_nothing.rs")),
    (
        "be imported by its submodules",
        Check::Rule("metrics_root.rs"),
    ),
    (
        "hold an error as a `String`",
        Check::Rule("string_errors.rs"),
    ),
];

/// The check of a claim: one of [`CLAIMS`], or `` import `a` `` / `` import `a` or `b` ``.
fn check_of(claim: &str) -> Option<Check> {
    CLAIMS
        .iter()
        .find(|(c, _)| *c == claim)
        .map(|(_, k)| *k)
        .or_else(|| {
            let names = claim.strip_prefix("import ")?;
            let each = names.split(" or ");
            each.clone()
                .all(|n| n.len() > 2 && n.starts_with('`') && n.ends_with('`'))
                .then_some(Check::Imports)
        })
}

/// A module row of a `| path | holds | must not |` table: its line, first and last cells.
struct Row<'a> {
    line: usize,
    paths: &'a str,
    must_not: &'a str,
}

fn rows(text: &str) -> Vec<Row<'_>> {
    crate::map::table_rows(text, &["| path | holds | must not |"])
        .into_iter()
        .filter_map(|(line, row)| match row.split('|').collect::<Vec<_>>()[..] {
            [_, paths, _, must_not, ..] => Some(Row {
                line,
                paths,
                must_not: must_not.trim(),
            }),
            _ => None,
        })
        .collect()
}

/// The workspace files a row names: `…/x` is looked for under the crate of the last row that
/// named a whole path (then under any crate); a folder or `*.rs` means the `.rs` files in it.
fn files_of(cell: &str, current: &mut String) -> Vec<String> {
    let root = root();
    let mut out = Vec::new();
    for p in crate::map::resolved(cell) {
        let p = p.trim_end_matches('/');
        let candidates: Vec<String> = match p.strip_prefix("…/") {
            None => {
                if let Some(i) = p.find("/src/") {
                    *current = p[..i + 5].to_string();
                }
                vec![p.to_string()]
            }
            Some(rest) => {
                let here = format!("{current}{rest}");
                let mine = root.join(here.split('*').next().unwrap_or_default());
                if mine.exists() {
                    vec![here]
                } else {
                    crate::source::crate_dirs()
                        .into_iter()
                        .map(|(_, d)| format!("{}/src/{rest}", d.display()))
                        .map(|c| c.trim_start_matches("./").to_string())
                        .filter(|c| root.join(c.split('*').next().unwrap_or_default()).exists())
                        .collect()
                }
            }
        };
        for c in candidates {
            let (dir, star) = match c.split_once('*') {
                Some((dir, _)) => (dir.trim_end_matches('/').to_string(), true),
                None => (c.clone(), false),
            };
            if root.join(&dir).is_dir() {
                rs_files(&dir, !star, &mut out);
            } else {
                out.push(c);
            }
        }
    }
    out
}

fn rs_files(dir: &str, deep: bool, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for e in entries {
        let name = e
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let rel = format!("{dir}/{name}");
        if e.is_dir() && deep {
            rs_files(&rel, deep, out);
        } else if name.ends_with(".rs") {
            out.push(rel);
        }
    }
}

fn holds_run(p: &PathUse, run: &[&str]) -> bool {
    p.segments
        .windows(run.len())
        .any(|w| w.iter().eq(run.iter()))
}

/// The file's module's folder: the module itself for a `mod.rs`/root, else its parent.
fn folder_of(f: &SourceFile) -> Vec<String> {
    let mut m = f.module.clone();
    if !f.path.ends_with("mod.rs") && !f.path.ends_with("lib.rs") {
        m.pop();
    }
    m
}

/// Whether the crate-relative path `t`, named in `f`, is what `import `name`` forbids.
fn imports(f: &SourceFile, t: &[String], name: &str, modules: &Modules) -> bool {
    let module = |s: &str| -> Vec<String> { s.split('/').map(str::to_string).collect() };
    match name.strip_suffix("mod.rs") {
        Some(dir) => {
            let folder = match dir.trim_end_matches('/') {
                "" => folder_of(f),
                d => module(d),
            };
            f.module != folder
                && t.len() > folder.len()
                && t.starts_with(&folder)
                && !modules.contains(&t[..=folder.len()])
        }
        None => {
            let mut sibling = folder_of(f);
            sibling.extend(module(name.trim_end_matches(".rs")));
            f.module != sibling && t.starts_with(&sibling)
        }
    }
}

/// Each breach of `check` in `f` (of a target with `modules`; `row` the row's files).
fn breaches(
    check: Check,
    claim: &str,
    f: &SourceFile,
    modules: &Modules,
    row: &[&SourceFile],
) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let names: Vec<String> = claim
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    for p in &f.paths {
        let target = || resolve(f, &p.segments, modules);
        let hit = match check {
            Check::Paths(runs) => runs.iter().any(|r| holds_run(p, r)),
            Check::Imports => {
                target().is_some_and(|t| names.iter().any(|n| imports(f, &t, n, modules)))
            }
            Check::ImportsEachOther => target().is_some_and(|t| {
                row.iter()
                    .any(|o| o.path != f.path && !o.module.is_empty() && t.starts_with(&o.module))
            }),
            Check::Token(_) | Check::Rule(_) => false,
        };
        if hit {
            out.push((p.line, p.text()));
        }
    }
    if let Check::Token(word) = check {
        for t in f.non_test_tokens() {
            if t.to_string()
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == word)
            {
                out.push((0, word.to_string()));
            }
        }
    }
    out
}

#[test]
fn every_must_not_of_the_map_is_a_claim_a_rule_checks_and_holds() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let crates = crates();
    let mut by_path: BTreeMap<&str, (&SourceFile, Modules)> = BTreeMap::new();
    for c in &crates {
        for (_, files) in targets(c) {
            let m = modules(&files);
            for f in files.iter().filter(|f| !f.test_only) {
                by_path.entry(f.path.as_str()).or_insert((*f, m.clone()));
            }
        }
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut checked = 0;
    for row in rows(&text) {
        let paths = files_of(row.paths, &mut current);
        let files: Vec<&SourceFile> = paths
            .iter()
            .filter_map(|p| by_path.get(p.as_str()).map(|(f, _)| *f))
            .collect();
        for claim in row
            .must_not
            .split(';')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            let Some(check) = check_of(claim) else {
                out.push(format!(
                    "ARCHITECTURE.md:{}: \"{claim}\" is no claim a rule checks",
                    row.line
                ));
                continue;
            };
            if let Check::Rule(file) = check {
                let rule = root().join("crates/repoprobe-tidy/tests/tidy").join(file);
                assert!(rule.is_file(), "{claim}: no rule {file}");
            } else if files.is_empty() {
                out.push(format!(
                    "ARCHITECTURE.md:{}: \"{claim}\": the row names no Rust file to check",
                    row.line
                ));
            }
            checked += 1;
            for f in &files {
                for (line, what) in breaches(check, claim, f, &by_path[f.path.as_str()].1, &files) {
                    out.push(format!(
                        "{}:{line}: `{what}` breaks ARCHITECTURE.md:{}'s \"must not {claim}\"",
                        f.path, row.line
                    ));
                }
            }
        }
    }
    assert!(checked > 20, "the must-not cells were not found: {checked}");
    fail_with(
        "the map's \"must not\" column holds only claims a rule checks, and they hold",
        "keep the module to its claim, or mend the row: a claim is one of `CLAIMS` in \
         crates/repoprobe-tidy/tests/tidy/map_claims.rs (or `import `name``); say the rest in \
         the module's `//!`",
        &out,
    );
}

/// Each kind of claim, broken once on purpose: the check sees the breach and lets the same
/// file without it through.
#[test]
fn each_claim_sees_its_breach() {
    let modules: Modules = [
        vec![],
        vec!["load".to_string()],
        vec!["load".to_string(), "record".to_string()],
        vec!["load".to_string(), "split".to_string()],
        vec!["load".to_string(), "stream".to_string()],
    ]
    .into_iter()
    .collect();
    let at = |path: &str, module: &[&str], code: &str| parsed(path, module, code);
    let cases: &[(&str, &str, &str)] = &[
        (
            "read files",
            "fn f() { std::fs::read(\"x\"); }",
            "fn f() { g(\"x\"); }",
        ),
        (
            "read a clock",
            "fn f() { std::time::Instant::now(); }",
            "fn f() {}",
        ),
        (
            "touch the browser",
            "use web_sys::Blob;",
            "use crate::x::Blob;",
        ),
        (
            "print",
            "fn f() { eprintln!(\"x\"); }",
            "fn f() { format!(\"x\"); }",
        ),
        (
            "spawn anything",
            "fn f() { std::process::Command::new(\"git\"); }",
            "fn f() {}",
        ),
        ("do HTTP", "use reqwest::Client;", "use crate::Client;"),
        (
            "`inner_html`",
            "fn f() { view! { <p inner_html=x /> } }",
            "fn f() { view! { <p>{x}</p> } }",
        ),
        (
            "import `load/mod.rs`",
            "use super::Cx;",
            "use super::split::Cut;",
        ),
        (
            "import `mod.rs`",
            "use crate::load::Cx;",
            "use crate::load::stream::S;",
        ),
        (
            "import `split`",
            "use super::split::Cut;",
            "use super::stream::S;",
        ),
        (
            "import each other",
            "use super::split::Cut;",
            "use crate::model::Q;",
        ),
    ];
    let split = at("c/src/load/split.rs", &["load", "split"], "fn g() {}");
    for (claim, broken, kept) in cases {
        let check = check_of(claim).unwrap_or_else(|| panic!("{claim} is a claim"));
        let file = |code| at("c/src/load/record.rs", &["load", "record"], code);
        let (broken, kept) = (file(broken), file(kept));
        let row = [&broken, &split];
        assert!(
            !breaches(check, claim, &broken, &modules, &row).is_empty(),
            "{claim}: breach not seen"
        );
        let row = [&kept, &split];
        assert_eq!(
            breaches(check, claim, &kept, &modules, &row),
            [],
            "{claim}: a file that keeps it"
        );
    }
    assert!(check_of("decide what a path is").is_none());
    assert!(check_of("import grid").is_none());
}
