//! Rule a: which workspace crate may depend on which (`cargo metadata`).

use crate::source::{fail_with, root};

/// The one table of the layers (ARCHITECTURE.md's table of crates says the same). A crate's
/// normal and build dependencies among the workspace's crates must be in its row; its
/// dev-dependencies too, and `repoprobe-test-support` besides (tests only).
pub(crate) const MAY_DEPEND_ON: &[(&str, &[&str])] = &[
    // The text and date helpers, pure: under the core and the clients, which need no more of
    // the core.
    ("repoprobe-text", &[]),
    ("repoprobe-core", &["repoprobe-text"]),
    // Curation sits on the core and under everything that curates or shows a release: scoring
    // never needs it.
    ("repoprobe-curate", &["repoprobe-core"]),
    // The LLM client: the one text module (cutting, quoting, error chains), not the core.
    ("repoprobe-llm", &["repoprobe-text"]),
    ("repoprobe-agent", &["repoprobe-core", "repoprobe-llm"]),
    (
        "repoprobe-cli",
        &[
            "repoprobe-core",
            "repoprobe-curate",
            "repoprobe-llm",
            "repoprobe-agent",
            "repoprobe-github",
            "repoprobe-fetch",
        ],
    ),
    // The GitHub client (dates and text) and the link fetcher (the curation's address
    // refusals), below the CLI.
    ("repoprobe-github", &["repoprobe-text", "repoprobe-llm"]),
    // Not the LLM client: the fetcher holds no credential.
    ("repoprobe-fetch", &["repoprobe-text", "repoprobe-curate"]),
    ("repoprobe-site", &["repoprobe-core", "repoprobe-curate"]),
    ("repoprobe-test-support", &[]),
    ("repoprobe-tidy", &[]),
];

const TESTS_ONLY: &str = "repoprobe-test-support";

struct Package {
    name: String,
    manifest: String,
    /// (dependency, kind: "normal", "dev" or "build")
    deps: Vec<(String, String)>,
}

fn workspace() -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let packages = meta["packages"].as_array().expect("packages");
    packages
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap().to_string(),
            manifest: p["manifest_path"].as_str().unwrap().to_string(),
            deps: p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    (
                        d["name"].as_str().unwrap().to_string(),
                        d["kind"].as_str().unwrap_or("normal").to_string(),
                    )
                })
                .collect(),
        })
        .collect()
}

/// The breaches of the table by `packages` (each a line naming manifest, dependency, rule).
fn breaches(packages: &[Package]) -> Vec<String> {
    let members: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let root = root();
    let mut out = Vec::new();
    for p in packages {
        let manifest = p
            .manifest
            .strip_prefix(root.to_str().unwrap())
            .unwrap_or(&p.manifest)
            .trim_start_matches('/');
        let Some((_, allowed)) = MAY_DEPEND_ON.iter().find(|(n, _)| *n == p.name) else {
            out.push(format!(
                "{manifest}: crate `{}` has no row in the layering table",
                p.name
            ));
            continue;
        };
        for (dep, kind) in &p.deps {
            if !members.contains(&dep.as_str()) || allowed.contains(&dep.as_str()) {
                continue;
            }
            if kind == "dev" && dep == TESTS_ONLY {
                continue;
            }
            out.push(format!(
                "{manifest}: `{}` depends on `{dep}` ({kind}); it may depend on {}",
                p.name,
                if allowed.is_empty() {
                    "no workspace crate".to_string()
                } else {
                    allowed.join(", ")
                }
            ));
        }
    }
    out
}

#[test]
fn crates_depend_only_on_the_layers_below_them() {
    fail_with(
        "crate layering (each crate depends only on the crates of its row in \
         tests/tidy/layering.rs's MAY_DEPEND_ON)",
        "remove the dependency (move the code it needs to a crate both may use), or, if the \
         architecture changed, change the table here and in ARCHITECTURE.md together",
        &breaches(&workspace()),
    );
}

#[test]
fn the_layering_rule_sees_a_forbidden_dependency() {
    let core = Package {
        name: "repoprobe-core".into(),
        manifest: "crates/repoprobe-core/Cargo.toml".into(),
        deps: vec![("repoprobe-llm".into(), "normal".into())],
    };
    let llm = Package {
        name: "repoprobe-llm".into(),
        manifest: "crates/repoprobe-llm/Cargo.toml".into(),
        deps: vec![(TESTS_ONLY.into(), "dev".into())],
    };
    let got = breaches(&[core, llm]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("`repoprobe-core` depends on `repoprobe-llm`"),
        "{got:?}"
    );
}

/// ARCHITECTURE.md's table of the layers (under "The layers of rule a"), as (crate, may depend
/// on), short names (`core`) made whole (`repoprobe-core`).
fn documented() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let table = text
        .split_once("The layers of rule a")
        .expect("ARCHITECTURE.md has the layers of rule a")
        .1;
    let whole = |s: &str| {
        let s = s.trim().trim_matches('`');
        if s.starts_with("repoprobe-") {
            s.to_string()
        } else {
            format!("repoprobe-{s}")
        }
    };
    let mut out = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with('|')).skip(2) {
        let cells: Vec<&str> = line.split('|').collect();
        let [_, crates, deps, _] = cells[..] else {
            break;
        };
        let mut deps: Vec<String> = match deps.trim() {
            "no workspace crate" => Vec::new(),
            d => d.split(',').map(whole).collect(),
        };
        deps.sort();
        for c in crates.split(',') {
            out.push((whole(c), deps.clone()));
        }
    }
    out
}

#[test]
fn architecture_md_states_the_same_layers() {
    let mut documented = documented();
    documented.sort();
    let mut here: Vec<(String, Vec<String>)> = MAY_DEPEND_ON
        .iter()
        .map(|(c, deps)| {
            let mut deps: Vec<String> = deps.iter().map(|d| d.to_string()).collect();
            deps.sort();
            (c.to_string(), deps)
        })
        .collect();
    here.sort();
    let differ: Vec<String> = here
        .iter()
        .filter(|row| !documented.contains(row))
        .map(|(c, deps)| format!("tests/tidy/layering.rs: `{c}` may depend on {deps:?}"))
        .chain(
            documented
                .iter()
                .filter(|row| !here.contains(row))
                .map(|(c, deps)| format!("ARCHITECTURE.md: `{c}` may depend on {deps:?}")),
        )
        .collect();
    fail_with(
        "crate layering: one table, the same in ARCHITECTURE.md (\"The layers of rule a\") and \
         in tests/tidy/layering.rs",
        "change both together",
        &differ,
    );
}
