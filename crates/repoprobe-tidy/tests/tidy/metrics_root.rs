//! Rule g: the core's `metrics/mod.rs` is imported by no module of its own: its submodules
//! import each other (`super::grid::Grid`), never an item of `mod.rs` itself (`super::score`,
//! `super::ScoreOptions` re-exported there), so `score` sits on top of the metrics and no
//! metric depends on the function that gathers them all.

use crate::source::{PathUse, crates, fail_with};

/// Why `p`, met in `metrics/<file>.rs`, reaches into `metrics/mod.rs`, if it does: a
/// `super::X` or `crate::metrics::X` whose `X` is no submodule of `metrics`.
fn why(p: &PathUse, submodules: &[String]) -> Option<String> {
    let item = match p.segments.as_slice() {
        [first, item, ..] if first == "super" => item,
        [first, m, item, ..] if first == "crate" && m == "metrics" => item,
        _ => return None,
    };
    (!submodules.iter().any(|m| m == item) && item != "*")
        .then(|| format!("`{}` is an item of metrics/mod.rs", p.text()))
}

#[test]
fn no_metrics_module_imports_from_metrics_mod_rs() {
    let core = crates()
        .into_iter()
        .find(|c| c.name == "repoprobe-core")
        .expect("crates/repoprobe-core");
    let submodules: Vec<String> = core
        .files
        .iter()
        .filter(|f| f.module.len() == 2 && f.module[0] == "metrics")
        .map(|f| f.module[1].clone())
        .collect();
    assert!(
        submodules.len() > 10,
        "the metrics' files were not found: {submodules:?}"
    );
    let mut breaches = Vec::new();
    for f in core
        .files
        .iter()
        .filter(|f| f.module.len() == 2 && f.module[0] == "metrics" && !f.test_only)
    {
        for p in &f.paths {
            if let Some(why) = why(p, &submodules) {
                breaches.push(format!("{}:{}: {why}", f.path, p.line));
            }
        }
    }
    fail_with(
        "metrics/mod.rs is imported by none of its submodules (ARCHITECTURE.md, its row)",
        "import the item from the submodule that defines it (`super::error::ScoreError`), or \
         move it out of mod.rs into the submodule it belongs to",
        &breaches,
    );
}

#[test]
fn the_metrics_rule_sees_an_item_of_mod_rs_and_lets_a_submodule_through() {
    let at = |s: &[&str]| PathUse {
        segments: s.iter().map(|x| x.to_string()).collect(),
        line: 1,
        parallel: false,
    };
    let subs = vec!["grid".to_string(), "choice".to_string()];
    assert!(why(&at(&["super", "grid", "Grid"]), &subs).is_none());
    assert!(why(&at(&["super", "score"]), &subs).is_some());
    assert!(why(&at(&["crate", "metrics", "ScoreOptions"]), &subs).is_some());
    assert!(why(&at(&["crate", "metrics", "choice", "in_force"]), &subs).is_none());
    assert!(why(&at(&["crate", "model", "Judgment"]), &subs).is_none());
}
