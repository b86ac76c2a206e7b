//! The recipes the docs mark as tested, run as written, by bash, with the `repoprobe` under
//! test first on PATH (docs/testing.md, "Recipes the tests run").
//!
//! The mark is a line `<!-- tested: NAME -->` right before a fenced block (```` ```sh ````);
//! Markdown shows nothing of it. The blocks one page marks with the same NAME are one script,
//! in their order on the page, so a recipe may declare its variables in one block and use them
//! in a later one, with prose (and blocks that are not run, e.g. starting a server) in between.
//! Each script runs with `set -euo pipefail` in a fresh directory where `public-data/` and
//! `testdata/` are the repository's, so it reads the bundled data and writes nothing into the
//! checkout.
//!
//! `open-weight` (docs/local-models.md) is the open-weight recipe: it runs against the real
//! `llama-server` serving SmolLM2 that `local_model.rs` starts (a missing one fails under
//! `CI=true`), on a benchmark of one question on a local repository, with the model's name,
//! the server's URL, the benchmark, the output directory and the limits given through the
//! variables the recipe itself declares (`MODEL=${MODEL:-…}`). There `answer` and `judge` may
//! end with 1 (some keys failed: a 135M model answers and judges poorly); any other failure of
//! any line fails the test. Every other NAME runs as it is.

use crate::common::*;
use crate::local_model::{LocalModel, MODEL, widget};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The name of the open-weight recipe, and its page.
const OPEN_WEIGHT: &str = "open-weight";
const OPEN_WEIGHT_PAGE: &str = "docs/local-models.md";

/// The longest a recipe may run before the test calls it a hang.
const HANG: Duration = Duration::from_secs(900);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A marked recipe: its page, its name, the line of its first block, and its script.
#[derive(Debug)]
struct Recipe {
    page: String,
    name: String,
    line: usize,
    script: String,
}

/// The recipes of a Markdown page; a mark that is not right above a fenced block is an error.
fn recipes_of(page: &str, text: &str) -> Result<Vec<Recipe>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut by_name: BTreeMap<String, Recipe> = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let mark = lines[i]
            .trim()
            .strip_prefix("<!-- tested:")
            .and_then(|r| r.strip_suffix("-->"))
            .map(|n| n.trim().to_string());
        i += 1;
        let Some(name) = mark else { continue };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!(
                "{page}:{i}: a tested mark needs one NAME: <!-- tested: NAME -->"
            ));
        }
        let fence = lines.get(i).map(|l| l.trim_start()).unwrap_or("");
        if !fence.starts_with("```") {
            return Err(format!(
                "{page}:{i}: <!-- tested: {name} --> must be the line right before a fenced block"
            ));
        }
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        if end == lines.len() {
            return Err(format!("{page}:{}: the block never ends", i + 1));
        }
        let recipe = by_name.entry(name.clone()).or_insert_with(|| Recipe {
            page: page.to_string(),
            name: name.clone(),
            line: start,
            script: String::new(),
        });
        recipe.script.push_str(&format!("# {page}:{}\n", start + 1));
        for l in &lines[start..end] {
            recipe.script.push_str(l);
            recipe.script.push('\n');
        }
        i = end + 1;
    }
    Ok(by_name.into_values().collect())
}

/// Every marked recipe of README.md and docs/*.md.
fn recipes() -> Vec<Recipe> {
    let mut all = Vec::new();
    for p in doc_pages() {
        let name = p
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        all.extend(
            recipes_of(&name, &std::fs::read_to_string(&p).unwrap())
                .unwrap_or_else(|e| panic!("{e}")),
        );
    }
    all
}

/// What a recipe's run left: its exit code, stdout and stderr, and how long it took.
struct Done {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `script` by bash in `dir` (with the repository's `public-data/` and `testdata/`), the
/// binary under test first on PATH and `env` set; a run past [`HANG`] is killed, and fails.
fn run_script(r: &Recipe, prelude: &str, dir: &Path, env: &[(&str, String)]) -> Done {
    for data in ["public-data", "testdata"] {
        let link = dir.join(data);
        if !link.exists() {
            std::os::unix::fs::symlink(root().join(data).canonicalize().unwrap(), link).unwrap();
        }
    }
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = format!("{prelude}\n{}", r.script);
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group: a hang is killed whole, the commands it started included.
        .process_group(0);
    let started = Instant::now();
    let child = c.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(HANG) {
        Ok(out) => {
            let out = out.unwrap();
            let ran = Done {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                took: started.elapsed(),
            };
            eprintln!(
                "{}:{} ({}) ran in {:.1} s, exit {}",
                r.page,
                r.line,
                r.name,
                ran.took.as_secs_f64(),
                ran.code
            );
            ran
        }
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-9", &format!("-{pid}")])
                .status();
            panic!(
                "{}:{} ({}) still running after {HANG:?}: killed",
                r.page, r.line, r.name
            );
        }
    }
}

/// Every line traced (`+ …` on stderr), so a failure shows the command as it ran.
const STRICT: &str = "set -euo pipefail\nPS4='+ '\nset -x";

/// The open-weight recipe's prelude: exit 1 of `answer` or `judge` (some keys failed) goes
/// on, any other failure stops the recipe with its code.
const KEYS_MAY_FAIL: &str = r#"set -uo pipefail
PS4='+ '
set -x
trap 'rc=$?; case "$BASH_COMMAND" in "repoprobe answer "*|"repoprobe judge "*) if [ "$rc" -ne 1 ]; then exit "$rc"; fi; echo "recipe: some keys failed (exit 1), going on" >&2;; *) exit "$rc";; esac' ERR"#;

fn fail(r: &Recipe, ran: &Done, why: &str) -> ! {
    panic!(
        "{}:{} ({}): {why}\n--- script ---\n{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        r.page, r.line, r.name, r.script, ran.stdout, ran.stderr
    )
}

/// The bundled data's examples, as the docs mark them: each runs and exits 0. Among them at
/// least one runs `score` and one an agreement (`judge-agreement` or `curate agreement`).
#[test]
fn the_marked_examples_run_as_written_on_the_bundled_data() {
    let recipes: Vec<Recipe> = recipes()
        .into_iter()
        .filter(|r| r.name != OPEN_WEIGHT)
        .collect();
    let has = |what: &[&str]| {
        recipes
            .iter()
            .any(|r| what.iter().any(|w| r.script.contains(w)))
    };
    assert!(
        has(&["repoprobe score "]),
        "no tested recipe runs `repoprobe score`: mark the scoring examples (docs/testing.md)"
    );
    assert!(
        has(&["repoprobe judge-agreement ", "repoprobe curate agreement "]),
        "no tested recipe runs an agreement: mark the agreement examples (docs/testing.md)"
    );
    for r in &recipes {
        let dir = tempfile::tempdir().unwrap();
        let ran = run_script(r, STRICT, dir.path(), &[]);
        if ran.code != 0 {
            fail(r, &ran, &format!("exit {}", ran.code));
        }
        assert!(!ran.stdout.trim().is_empty(), "{}: printed nothing", r.name);
    }
}

/// The question the recipe's model answers: the golden benchmark's q1 on a local repository
/// (its url a path, cloned into the recipe's clone cache like any url), asking for one sentence
/// so that a 135M model on 2 cores ends in a turn or two.
fn one_question(dir: &Path) -> (PathBuf, String) {
    let (repo, commit) = widget(dir);
    let mut q: Value = std::fs::read_to_string(BENCHMARK)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|q| q["id"] == "q1")
        .unwrap();
    q["repo"] = json!({"name": "acme/widget", "url": repo.to_str().unwrap(), "commit": commit});
    q["question"] = json!(
        "Reply with exactly this sentence and nothing else: \
         start() in src/lib.rs calls marker_alpha()."
    );
    let p = dir.join("benchmark.jsonl");
    std::fs::write(&p, format!("{q}\n")).unwrap();
    (p, commit)
}

/// The open-weight recipe of docs/local-models.md, as written, against the real llama-server:
/// answer → judge → bundle → score, ending with a bundle that validates, the run's
/// trajectory beside it, and the tables printed.
#[test]
fn the_open_weight_recipe_runs_as_written_against_llama_server() {
    let all = recipes();
    let r = all
        .iter()
        .find(|r| r.page == OPEN_WEIGHT_PAGE && r.name == OPEN_WEIGHT)
        .unwrap_or_else(|| {
            panic!("{OPEN_WEIGHT_PAGE} has no block marked <!-- tested: {OPEN_WEIGHT} -->")
        });
    let dir = tempfile::tempdir().unwrap();
    let (bench, commit) = one_question(dir.path());
    let out = dir.path().join("out");
    let clones = dir.path().join("clones");
    // What the test sets, each through the recipe's own variable.
    let mut env: Vec<(&str, String)> = vec![
        ("MODEL", MODEL.to_string()),
        ("BENCH", bench.to_str().unwrap().to_string()),
        ("OUT", out.to_str().unwrap().to_string()),
        ("CLONES", clones.to_str().unwrap().to_string()),
        ("SLOTS", "1".to_string()),
        ("MAX_TURNS", "3".to_string()),
        ("MAX_TOKENS", "256".to_string()),
        ("TIMEOUT_S", "300".to_string()),
    ];
    for var in env.iter().map(|(k, _)| *k).chain(["BASE_URL"]) {
        assert!(
            r.script.contains(&format!("{var}=${{{var}:-")),
            "{}:{}: the recipe must declare {var}=${{{var}:-…}}, which this test sets",
            r.page,
            r.line
        );
    }
    for line in [
        "repoprobe answer ",
        "repoprobe judge ",
        "repoprobe bundle ",
        "repoprobe score ",
    ] {
        assert!(r.script.contains(line), "the recipe has no `{line}…`");
    }
    let Some(server) = LocalModel::start_on_two_threads() else {
        return;
    };
    env.push(("BASE_URL", server.base_url()));
    let ran = run_script(r, KEYS_MAY_FAIL, dir.path(), &env);
    drop(server);
    if ran.code != 0 {
        fail(r, &ran, &format!("exit {}", ran.code));
    }
    let answers = records(&out.join("answers.jsonl"));
    if answers.len() != 1 {
        fail(r, &ran, "not one answer record");
    }
    let a = &answers[0];
    assert_eq!(a["model"], MODEL, "{a}");
    assert_eq!(a["agent"]["name"], "builtin", "{a}");
    assert_eq!(a["agent"]["commit"], commit.as_str(), "{a}");
    // The recipe's zero prices are the flags', not a list price: the record says which.
    if a["error"].is_null() {
        assert_eq!(
            a["agent"]["cost_source"], "estimated from --price-in/--price-out",
            "{a}"
        );
    }
    if a["error"].is_null() {
        // The answer was judged: a judgment, or a failure with its reason.
        let judged = out.join("judgments.jsonl");
        let n = |p: &Path| {
            std::fs::read_to_string(p)
                .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0)
        };
        let keys = n(&judged) + n(&out.join("judgments.failures.ndjson"));
        if keys != 1 {
            fail(r, &ran, &format!("{keys} judge keys, not 1"));
        }
    }
    let bundle = out.join("results.json");
    let v = repoprobe(&["validate", bundle.to_str().unwrap()]);
    assert_eq!(
        v.code, 0,
        "the bundle does not validate:\n{}{}",
        v.stdout, v.stderr
    );
    let trajectories = out.join("results.trajectories.jsonl");
    let runs = std::fs::read_to_string(&trajectories).unwrap_or_default();
    if runs.lines().count() != 1 {
        fail(
            r,
            &ran,
            "the bundle's trajectories file does not hold the run",
        );
    }
    if !ran.stdout.contains(MODEL) {
        fail(r, &ran, "score's tables do not name the model");
    }
    eprintln!(
        "the open-weight recipe against llama-server: {:.1} s",
        ran.took.as_secs_f64()
    );
}

/// The marks themselves: blocks of one name are one script in page order; a mark must sit
/// right before a block.
#[test]
fn tested_marks_join_blocks_of_one_name_in_order() {
    let page = "intro\n<!-- tested: a -->\n```sh\nX=${X:-1}\n```\nprose\n```sh\nnot run\n```\n\
                <!-- tested: b -->\n```sh\necho b\n```\n<!-- tested: a -->\n```\necho $X\n```\n";
    let r = recipes_of("p.md", page).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].name.as_str(), r[0].line), ("a", 3));
    assert_eq!(r[0].script, "# p.md:4\nX=${X:-1}\n# p.md:16\necho $X\n");
    assert_eq!(r[1].script, "# p.md:12\necho b\n");
    let broken = recipes_of("p.md", "<!-- tested: a -->\ntext\n").unwrap_err();
    assert!(broken.starts_with("p.md:1: "), "{broken}");
}
