//! `repoprobe evidence` end to end: the real binary on a real git repository with two commits,
//! questions pinned to the first citing a file that exists there, one that exists only at the
//! second, one that never existed, and a directory.

use crate::common;

use common::{BIN, git};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A repository whose first commit has `src/lib.rs` and `src/parser/mod.rs`, and whose second
/// adds `src/later.rs`; returns (path, first sha, second sha).
fn repo(dir: &Path) -> (PathBuf, String, String) {
    let r = dir.join("widget");
    std::fs::create_dir_all(r.join("src/parser")).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    std::fs::write(r.join("src/lib.rs"), "pub fn start() {}\n").unwrap();
    std::fs::write(r.join("src/parser/mod.rs"), "pub fn parse() {}\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let first = git(&r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join("src/later.rs"), "pub fn later() {}\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "second"]);
    let second = git(&r, &["rev-parse", "HEAD"]);
    (r, first, second)
}

fn tier(score: u32, criterion: &str) -> Value {
    json!({"score": score, "criterion": criterion})
}

/// A question on `acme/widget` at `commit` whose two knowledge items say `k1` and `k2`.
fn question(id: &str, commit: &str, answer: &str, k1: &str, k2: &str) -> Value {
    json!({"id": id,
        "repo": {"name": "acme/widget", "url": "", "commit": commit, "language": "Rust", "theme": "T"},
        "category": "Business Logic", "question": "Where does it start?",
        "reference_answer": answer, "external_context": false,
        "checklist": [
            {"id": "k1", "kind": "knowledge", "key_point": k1, "weight": 5,
             "rubric": [tier(5, "names it"), tier(0, "does not")]},
            {"id": "k2", "kind": "knowledge", "key_point": k2, "weight": 4,
             "rubric": [tier(4, "full"), tier(0, "none")]},
            {"id": "clarity", "kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
             "rubric": [tier(1, "clear"), tier(0, "not")]}],
        "note_unknown_field": {"z": 1, "a": 2}})
}

fn run(dir: &Path, bench: &Path, out: &Path, repo: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .arg("evidence")
        .arg(bench)
        .arg("--clone-cache")
        .arg(dir.join("cache"))
        .arg("--repo-map")
        .arg(format!("acme/widget={}", repo.display()))
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn cited_paths_that_exist_at_the_pinned_commit_become_evidence_and_the_rest_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first, _second) = repo(dir.path());
    let q1 = question(
        "q1",
        &first,
        "It starts in src/lib.rs:1 and parses in src/parser/; src/later.rs and src/ghost.rs \
         do not matter.",
        "Names src/lib.rs:1-3 as where it starts",
        "Mentions later.rs",
    );
    let mut q2 = question(
        "q2",
        &first,
        "Nothing cited.",
        "Says the parser lives in src/parser/",
        "Cites src/ghost.rs",
    );
    // Evidence already there stays as written; a cited path it has is not added twice.
    q2["checklist"][0]["evidence"] = json!(["./src/parser", "src/kept.rs"]);
    let bench = dir.path().join("benchmark.jsonl");
    // Written by hand so that the unknown field's keys are not in sorted order (`json!` sorts).
    let q1_line = q1
        .to_string()
        .replace(r#"{"a":2,"z":1}"#, r#"{"z": 1, "a": 2}"#);
    assert!(q1_line.contains(r#"{"z": 1, "a": 2}"#));
    std::fs::write(&bench, format!("{q1_line}\n{q2}\n")).unwrap();
    let out = dir.path().join("with-evidence.jsonl");

    let o = run(dir.path(), &bench, &out, &repo, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let got = lines(&out);
    assert_eq!(got.len(), 2);

    // q1: k1 gets what its own key point cites, with its lines; k2 names `later.rs`, which the
    // answer cites, but at the pinned commit it does not exist, so nothing.
    assert_eq!(
        got[0]["checklist"][0]["evidence"],
        json!([{"path": "src/lib.rs", "lines": [1, 3], "source": "cited"}])
    );
    assert!(
        got[0]["checklist"][1].get("evidence").is_none(),
        "{}",
        got[0]
    );
    assert!(got[0]["checklist"][2].get("evidence").is_none());
    // Everything else as written: unknown fields, their key order.
    let raw_q1 = std::fs::read_to_string(&out).unwrap();
    assert!(
        raw_q1
            .lines()
            .next()
            .unwrap()
            .contains(r#""note_unknown_field":{"z": 1, "a": 2}"#),
        "{raw_q1}"
    );
    let mut stripped = got[0].clone();
    stripped["checklist"][0]
        .as_object_mut()
        .unwrap()
        .remove("evidence");
    assert_eq!(stripped, q1);

    // q2: the directory was there already (as ./src/parser); the ghost is not at the commit.
    assert_eq!(
        got[1]["checklist"][0]["evidence"],
        json!(["./src/parser", "src/kept.rs"])
    );
    assert!(got[1]["checklist"][1].get("evidence").is_none());

    // The report: a line per question, then the totals.
    let line = |id: &str| {
        stderr
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{id}:")))
            .unwrap_or_else(|| panic!("no line for {id}:\n{stderr}"))
            .to_string()
    };
    let l1 = line("q1");
    assert!(l1.contains("1 item(s) given evidence (k1 +1)"), "{l1}");
    assert!(l1.contains("2 cited path(s) found at"), "{l1}");
    assert!(
        l1.contains("not at the commit: src/ghost.rs, src/later.rs"),
        "{l1}"
    );
    assert!(
        l1.contains("cited by the reference answer only, given to no item: src/parser"),
        "{l1}"
    );
    let l2 = line("q2");
    assert!(l2.contains("no item given evidence"), "{l2}");
    assert!(l2.contains("not at the commit: src/ghost.rs"), "{l2}");
    assert!(
        stderr.contains("2 question(s), 1 given evidence (1 item(s), 1 entry), 3 cited path(s) not at their commit"),
        "{stderr}"
    );

    // The output reads back as a valid benchmark whose evidence the loader keeps.
    let v = Command::new(BIN)
        .env_clear()
        .arg("validate")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );

    // Run again on its own output: nothing new, the file the same.
    let again = dir.path().join("again.jsonl");
    let o = run(dir.path(), &out, &again, &repo, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&out).unwrap()
    );
}

#[test]
fn a_question_whose_commit_cannot_be_had_is_written_unchanged_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, first, second) = repo(dir.path());
    let good = question("q1", &second, "", "Names src/later.rs", "x");
    let missing = question(
        "q2",
        "0123456789abcdef0123456789abcdef01234567",
        "",
        "Names src/lib.rs",
        "y",
    );
    let unpinned = question("q3\u{1b}[31m", "", "", "Names src/later.rs", "z");
    let bench = dir.path().join("benchmark.jsonl");
    std::fs::write(&bench, format!("{good}\n{missing}\n{unpinned}\n")).unwrap();
    let out = dir.path().join("out.jsonl");
    let o = run(dir.path(), &bench, &out, &repo, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
    let got = lines(&out);
    assert_eq!(
        got[0]["checklist"][0]["evidence"],
        json!([{"path": "src/later.rs", "source": "cited"}])
    );
    assert_eq!(got[1], missing);
    assert_eq!(got[2], unpinned);
    assert!(
        stderr.contains("q2: written unchanged, its repository could not be read"),
        "{stderr}"
    );
    assert!(stderr.contains("no pinned commit"), "{stderr}");
    assert!(stderr.contains("2 question(s) whose repository could not be read"));

    // --allow-unpinned reads the clone's HEAD for q3 and says so.
    let o = run(dir.path(), &bench, &out, &repo, &["--allow-unpinned"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "q2 still fails: {stderr}");
    assert!(stderr.contains("(unpinned)"), "{stderr}");
    assert_eq!(
        lines(&out)[2]["checklist"][0]["evidence"],
        json!([{"path": "src/later.rs", "source": "cited"}])
    );
    let _ = first;
}

#[test]
fn an_unreadable_benchmark_is_unusable_input() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _, _) = repo(dir.path());
    let bench = dir.path().join("b.jsonl");
    std::fs::write(&bench, "not json\n").unwrap();
    let out = dir.path().join("out.jsonl");
    let o = run(dir.path(), &bench, &out, &repo, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
}
