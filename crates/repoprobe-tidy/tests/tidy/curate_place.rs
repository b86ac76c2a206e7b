//! Rule l: curation is a layer of its own, above the core: `repoprobe-curate` builds on the core
//! alone, nothing the core or the LLM client is built from may use it, and the core holds no
//! curation (no `curate` module, no `curate-*` prompt). Scoring a release never compiles the
//! pipeline that made it.

use crate::layering::MAY_DEPEND_ON;
use crate::source::{fail_with, root};
use std::path::Path;

const CURATE: &str = "repoprobe-curate";

/// The crates the core's layer is made of: none may depend on the curation.
const BELOW: &[&str] = &["repoprobe-core", "repoprobe-llm", "repoprobe-test-support"];

/// The table's breaches of the layer: the curation's row is the core alone, and no crate below
/// it lists it.
fn table_breaches(table: &[(&str, &[&str])]) -> Vec<String> {
    let mut out = Vec::new();
    match table.iter().find(|(name, _)| *name == CURATE) {
        Some((_, deps)) if *deps == ["repoprobe-core"] => {}
        Some((_, deps)) => out.push(format!(
            "layering.rs: `{CURATE}` may depend on {deps:?}; it builds on `repoprobe-core` alone"
        )),
        None => out.push(format!("layering.rs: `{CURATE}` has no row")),
    }
    for (name, deps) in table.iter().filter(|(n, _)| BELOW.contains(n)) {
        if deps.contains(&CURATE) {
            out.push(format!(
                "layering.rs: `{name}` may depend on `{CURATE}`, which is above it"
            ));
        }
    }
    out
}

/// Files and folders under `dir` (relative to the root) whose name starts with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return out;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = dir.join(&name);
        if name.starts_with(prefix) {
            out.push(rel.display().to_string());
        }
        if e.path().is_dir() {
            out.extend(named(&rel, prefix));
        }
    }
    out
}

/// The core's files that hold curation: a `curate` module anywhere in its sources, a
/// `curate-*` prompt in its `prompts/`.
fn core_breaches() -> Vec<String> {
    let core = Path::new("crates/repoprobe-core");
    let mut out: Vec<String> = named(&core.join("src"), "curate")
        .into_iter()
        .map(|p| format!("{p}: a curation module in the core; it belongs in crates/{CURATE}/src"))
        .collect();
    out.extend(
        named(&core.join("prompts"), "curate-")
            .into_iter()
            .map(|p| {
                format!("{p}: a curation prompt in the core; it belongs in crates/{CURATE}/prompts")
            }),
    );
    out.sort();
    out
}

#[test]
fn curation_is_a_layer_above_the_core() {
    let mut breaches = table_breaches(MAY_DEPEND_ON);
    breaches.extend(core_breaches());
    fail_with(
        "curation above the core (crates/repoprobe-curate depends on the core alone; the core, \
         the LLM client and the test support never depend on it; the core holds no `curate` \
         module or `curate-*` prompt)",
        "move the curation code or prompt into crates/repoprobe-curate (its `protocol/` for a \
         prompt's protocol), and keep the curation's row in layering.rs as `repoprobe-core` alone",
        &breaches,
    );
}

#[test]
fn a_table_that_puts_curation_below_the_core_breaks_the_rule() {
    let bad: &[(&str, &[&str])] = &[
        ("repoprobe-core", &[CURATE]),
        (CURATE, &["repoprobe-core", "repoprobe-llm"]),
    ];
    let got = table_breaches(bad);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].contains("builds on `repoprobe-core` alone"),
        "{got:?}"
    );
    assert!(got[1].contains("`repoprobe-core` may depend on"), "{got:?}");
}
