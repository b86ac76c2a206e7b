//! `repoprobe curate verify` end to end: the real binary on a git repository each test makes,
//! the built-in agent driven by a loopback OpenAI-compatible server through real tool calls
//! (it reads a file, then gives its final JSON object), and `make-checklist`-shaped questions
//! with their `curation` blocks. Every connection stays on 127.0.0.1.

use crate::common::{BIN, KEY, Ran, git, ran, records, repoprobe};
use repoprobe_test_support::reply::openai_message;
use repoprobe_test_support::{FakeServer, Response};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A repository of three files at one commit; returns (path, sha).
fn repo(dir: &Path) -> (PathBuf, String) {
    let r = dir.join("widget");
    std::fs::create_dir_all(r.join("src")).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    let parser: String = (1..=20)
        .map(|n| format!("line_{n} = 'MARKER_PARSE_{n}'\n"))
        .collect();
    std::fs::write(r.join("src/parser.py"), parser).unwrap();
    std::fs::write(
        r.join("src/config.py"),
        "DEFAULT_BACKEND = 'sqlite'\nRETRIES = 3\n",
    )
    .unwrap();
    std::fs::write(r.join("README.md"), "widget\n").unwrap();
    git(&r, &["add", "."]);
    git(&r, &["commit", "-q", "-m", "first"]);
    let sha = git(&r, &["rev-parse", "HEAD"]);
    (r, sha)
}

/// A `curation` block at `commit` whose enhance record holds `sources`.
fn curation(id: &str, commit: &str, sources: Value) -> Value {
    json!({
        "source": {"key": format!("acme/widget#{id}"), "url": "https://github.com/acme/widget/discussions/1",
            "category": "Q&A", "title": "t", "created_at": "2024-05-01T10:00:00Z",
            "answer_chosen_at": "2024-07-01T00:00:00Z", "answer_url": "https://github.com/acme/widget/discussions/1#c",
            "answer_author_association": "MEMBER", "upvotes": 1, "harvested_at": "2026-01-01T00:00:00Z",
            "api_url": "https://api.github.com/graphql", "discussion_id": "D_1", "answer_id": "DC_1"},
        "commit": {"oid": commit, "committed_at": "2024-06-01T00:00:00Z", "branch": "main"},
        "classify": {"prompt_version": "curate-classify-v1", "model": "c", "passed": true, "rationale": "about code"},
        "enhance": {"original_question": "q", "original_answer": "a", "sources": sources}
    })
}

/// A line of `make-checklist`'s output: a benchmark question (its text names `id`, which the
/// fake model reads), its provenance, and its curation block.
fn question(id: &str, commit: &str, external: bool, sources: Value) -> Value {
    let tiers =
        |w: u32| json!([{"score": w, "criterion": "all"}, {"score": 0, "criterion": "none"}]);
    json!({
        "id": id,
        "repo": {"name": "acme/widget", "url": "", "commit": commit, "language": "Python", "theme": "T"},
        "category": "Business Logic",
        "question": format!("QUESTION-{id}: how does the parser pick its backend?"),
        "reference_answer": "It reads DEFAULT_BACKEND in src/config.py.",
        "external_context": external,
        "checklist": [
            {"id": "k1", "kind": "knowledge", "key_point": "Names the parser in src/parser.py", "weight": 5,
             "rubric": tiers(5), "evidence": [{"path": "./src/parser.py", "source": "make-checklist-v2"}]},
            {"id": "k2", "kind": "knowledge", "key_point": "Says the default backend is sqlite", "weight": 4,
             "rubric": tiers(4)},
            {"id": "clarity", "kind": "clarity", "key_point": "Clarity", "weight": 1, "rubric": tiers(1)}
        ],
        "prompt_version": "make-checklist-v2", "provider": "openai", "structured": "schema",
        "usage": {"input_tokens": 10, "output_tokens": 5, "calls": 1, "retries": 0},
        "raw_reply": "{\"checklist\": []}",
        "curation": curation(id, commit, sources),
    })
}

/// The final replies the fake model gives, by question id.
fn final_reply(id: &str, fixed: bool) -> String {
    let item = |n: u32, grounded: bool, evidence: Value, reason: &str| json!({"item": n, "grounded": grounded, "evidence": evidence, "reason": reason});
    let items = match id {
        "g1" => vec![
            item(
                1,
                true,
                json!([{"path": "src/parser.py", "lines": [1, 3]}]),
                "the parser is in src/parser.py",
            ),
            item(
                2,
                true,
                json!(["./src/config.py:1"]),
                "DEFAULT_BACKEND is sqlite",
            ),
        ],
        "u1" => vec![
            item(
                1,
                true,
                json!([{"path": "src/parser.py"}]),
                "the parser is there",
            ),
            item(
                2,
                false,
                json!([]),
                "NO-SQLITE-ANYWHERE: no backend default in the code",
            ),
        ],
        "m1" => vec![
            item(
                1,
                true,
                json!([{"path": "src/config.py", "lines": [1, 99]}]),
                "config",
            ),
            item(
                2,
                true,
                json!([{"path": "src/nope.py"}]),
                "the default is in nope.py",
            ),
        ],
        "i1" if !fixed => return "I think the checklist is fine.".into(),
        "i1" => vec![
            item(
                1,
                true,
                json!([{"path": "src/parser.py", "lines": [2, 2]}]),
                "parser",
            ),
            item(2, true, json!([{"path": "src/config.py"}]), "config"),
        ],
        other => panic!("no reply for {other}"),
    };
    json!({"items": items}).to_string()
}

/// A loopback Chat Completions server playing the verifying agent: for each question it reads
/// `src/parser.py`, then answers with [`final_reply`]. It records each request by question id,
/// with the tool results and re-asks it was sent.
struct Model {
    base: String,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
    /// Whether `i1` now gets a valid reply.
    fixed: Arc<Mutex<bool>>,
    _server: FakeServer,
}

fn model() -> Model {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let fixed = Arc::new(Mutex::new(false));
    let (reqs, fx) = (Arc::clone(&requests), Arc::clone(&fixed));
    let server = FakeServer::start(move |req| {
        assert!(
            req.header("authorization")
                .is_some_and(|a| a == format!("Bearer {KEY}")),
            "the key is not in the authorization header"
        );
        let body = req.json();
        let msgs = body["messages"].as_array().unwrap().clone();
        let prompt = msgs
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_string();
        let id = prompt
            .split("QUESTION-")
            .nth(1)
            .and_then(|s| s.split(':').next())
            .unwrap_or("?")
            .to_string();
        reqs.lock().unwrap().push((id.clone(), body.clone()));
        let read = msgs.iter().any(|m| m["role"] == "tool");
        let message = if !read {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1",
                "type": "function", "function": {"name": "read_file",
                "arguments": "{\"path\": \"src/parser.py\"}"}}]})
        } else {
            json!({"role": "assistant", "content": final_reply(&id, *fx.lock().unwrap())})
        };
        Response::json(200, openai_message(message))
    });
    Model {
        base: format!("{}/v1", server.origin()),
        requests,
        fixed,
        _server: server,
    }
}

impl Model {
    /// The requests made for question `id`.
    fn for_question(&self, id: &str) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(q, _)| q == id)
            .map(|(_, b)| b.clone())
            .collect()
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

/// One test's world: the repository, the questions file, where the candidates go.
struct Case {
    dir: tempfile::TempDir,
    repo: PathBuf,
    sha: String,
    input: PathBuf,
    out: PathBuf,
}

fn case(lines: &[Value]) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let (repo, sha) = repo(dir.path());
    let input = dir.path().join("checklisted.jsonl");
    let text: String = lines
        .iter()
        .map(|l| {
            let s = l.to_string().replace("@SHA@", &sha);
            format!("{s}\n")
        })
        .collect();
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("cur/candidates.jsonl");
    Case {
        dir,
        repo,
        sha,
        input,
        out,
    }
}

impl Case {
    fn verify(&self, m: &Model) -> Ran {
        let mut c = Command::new(BIN);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("OPENAI_API_KEY", KEY)
            .args(["curate", "verify"])
            .arg(&self.input)
            .arg("--out")
            .arg(&self.out)
            .arg("--clone-cache")
            .arg(self.dir.path().join("cache"))
            .arg("--repo-map")
            .arg(format!("acme/widget={}", self.repo.display()))
            .args(["--provider", "openai", "--model", "verifier", "--base-url"])
            .arg(&m.base)
            .args([
                "--backoff-s",
                "0.02",
                "--timeout-s",
                "20",
                "--max-retries",
                "1",
            ])
            .args(["--concurrency", "2"]);
        let r = ran(c.output().unwrap());
        assert!(
            !r.stdout.contains(KEY) && !r.stderr.contains(KEY),
            "the key leaked: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        r
    }

    fn excluded(&self) -> BTreeMap<String, Value> {
        records(&self.dir.path().join("cur/candidates.excluded.ndjson"))
            .into_iter()
            .map(|r| (r["key"].as_str().unwrap().to_string(), r))
            .collect()
    }

    fn failures(&self) -> Vec<Value> {
        records(&self.dir.path().join("cur/candidates.failures.ndjson"))
    }

    fn candidates(&self) -> BTreeMap<String, Value> {
        records(&self.out)
            .into_iter()
            .map(|r| (r["id"].as_str().unwrap().to_string(), r))
            .collect()
    }
}

fn summary(r: &Ran) -> &str {
    r.stderr
        .lines()
        .find(|l| l.starts_with("curate verify: "))
        .unwrap_or_else(|| panic!("no summary line:\n{}", r.stderr))
}

/// The questions of the main test: grounded, ungrounded, a missing path, an external page
/// that did not resolve, a record without curation.
fn main_case() -> Case {
    let mut no_curation = question("n1", "@SHA@", false, json!([]));
    no_curation.as_object_mut().unwrap().remove("curation");
    case(&[
        question("g1", "@SHA@", false, json!([])),
        question("u1", "@SHA@", false, json!([])),
        question("m1", "@SHA@", false, json!([])),
        question(
            "x1",
            "@SHA@",
            true,
            json!([
                {"url": "https://docs.example.org/backends", "fetched_at": "2026-01-01T00:00:00Z",
                 "status": 404, "relevant": true},
                {"url": "https://blog.example.org/x", "fetched_at": "2026-01-01T00:00:00Z",
                 "status": 200, "relevant": false}
            ]),
        ),
        no_curation,
    ])
}

#[test]
fn curate_verify_keeps_grounded_questions_and_drops_the_others_with_why() {
    let c = main_case();
    let m = model();
    let r = c.verify(&m);
    assert_eq!(r.code, 1, "a record was left out:\n{}", r.stderr);
    assert_eq!(
        summary(&r).split("; ").next().unwrap(),
        "curate verify: 1 kept, 3 dropped (1 links-unresolved, 2 unanswerable",
        "{}",
        r.stderr
    );
    assert!(
        summary(&r).contains(", 0 failed, 0 already done"),
        "{}",
        r.stderr
    );
    // The record without curation: located, named, the others went on.
    assert!(
        r.stderr
            .contains("checklisted.jsonl: line 5: question \"n1\": no `curation` block"),
        "{}",
        r.stderr
    );

    // g1: kept, each item's evidence verified (merged with what was there, each path once),
    // the provenance moved into curation, verify set.
    let cands = c.candidates();
    assert_eq!(cands.keys().collect::<Vec<_>>(), ["g1"]);
    let g1 = &cands["g1"];
    assert_eq!(
        g1["checklist"][0]["evidence"],
        json!([{"path": "src/parser.py", "lines": [1, 3], "source": "verified"}])
    );
    assert_eq!(
        g1["checklist"][1]["evidence"],
        json!([{"path": "src/config.py", "lines": [1, 1], "source": "verified"}])
    );
    for f in [
        "prompt_version",
        "provider",
        "structured",
        "usage",
        "raw_reply",
    ] {
        assert!(g1.get(f).is_none(), "{f} left at the top: {g1}");
    }
    let cur = &g1["curation"];
    assert_eq!(cur["checklist"]["prompt_version"], "make-checklist-v2");
    assert_eq!(cur["checklist"]["usage"]["calls"], 1);
    assert_eq!(cur["verify"]["passed"], true);
    assert_eq!(cur["verify"]["prompt_version"], "curate-verify-v1");
    assert_eq!(cur["verify"]["model"], "verifier");
    assert_eq!(
        cur["verify"]["rationale"],
        "item 1 (k1): the parser is in src/parser.py\nitem 2 (k2): DEFAULT_BACKEND is sqlite"
    );
    assert_eq!(cur["commit"]["oid"], c.sha.as_str());
    let v = repoprobe(&["validate", c.out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "validate:\n{}{}", v.stdout, v.stderr);

    // The agent worked in the repository at the commit: the file it read came back whole, and
    // the prompt numbered the knowledge items.
    let g1_reqs = m.for_question("g1");
    assert_eq!(g1_reqs.len(), 2);
    let second = g1_reqs[1]["messages"].to_string();
    assert!(second.contains("MARKER_PARSE_20"), "{second}");
    let prompt = g1_reqs[0]["messages"].to_string();
    assert!(
        prompt.contains("### Item 1 (`k1`, weight 5)")
            && prompt.contains("### Item 2 (`k2`, weight 4)"),
        "{prompt}"
    );
    assert!(prompt.contains(&c.sha), "the prompt names the commit");

    let ex = c.excluded();
    assert_eq!(ex.keys().collect::<Vec<_>>(), ["m1", "u1", "x1"]);
    // u1: the item the model could not ground, with its reason.
    let u1 = &ex["u1"];
    assert_eq!(
        (u1["stage"].as_str(), u1["rule"].as_str()),
        (Some("verify"), Some("unanswerable"))
    );
    let why = u1["reason"].as_str().unwrap();
    assert!(
        why.contains("1 of 2 checklist item(s) not grounded")
            && why.contains("item 2 (k2, \"Says the default backend is sqlite\")")
            && why.contains("NO-SQLITE-ANYWHERE")
            && why.contains("curate-verify-v1, model verifier"),
        "{why}"
    );
    // m1: a path not at the commit and lines past a file's end ground nothing.
    let why = ex["m1"]["reason"].as_str().unwrap();
    assert_eq!(ex["m1"]["rule"], "unanswerable");
    assert!(
        why.contains("2 of 2 checklist item(s) not grounded")
            && why.contains("\"src/nope.py\" does not exist at")
            && why.contains("\"src/config.py\" has 2 line(s) at")
            && why.contains("lines 1-99 are past its end"),
        "{why}"
    );
    // x1: its relevant page did not resolve: dropped without a single model call.
    let x1 = &ex["x1"];
    assert_eq!(x1["rule"], "links-unresolved");
    assert_eq!(
        x1["reason"],
        "x1: it depends on external pages (external_context) and 1 relevant link(s) did not \
         resolve: \"https://docs.example.org/backends\" (HTTP 404)"
    );
    assert!(m.for_question("x1").is_empty());
    assert!(
        !m.requests
            .lock()
            .unwrap()
            .iter()
            .any(|(_, b)| b.to_string().contains("QUESTION-x1")),
        "the model was asked about x1"
    );
    assert!(m.for_question("n1").is_empty());
    assert!(c.failures().is_empty());
    // The transcripts stay beside the candidates; the worktrees are gone.
    // The agent's run is an ATIF trajectory like every run's (the one run of the agent crate),
    // left for scripts/test.sh's check against the published models.
    let path = c
        .dir
        .path()
        .join("cur/candidates.transcripts/verify__g1.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let atif = crate::common::trajectory::atif_dir();
    std::fs::create_dir_all(&atif).unwrap();
    std::fs::write(atif.join("curate-verify.json"), &text).unwrap();
    let t: Value = serde_json::from_str(&text).unwrap();
    assert!(
        t["schema_version"].as_str().unwrap().starts_with("ATIF-"),
        "{t}"
    );
    assert_eq!(t["extra"]["question_id"], "g1");
    assert_eq!(t["extra"]["prompt_version"], "curate-verify-v1");
    assert!(t["steps"].as_array().unwrap().len() >= 4, "{t}");
    assert!(
        c.dir
            .path()
            .join("cur/candidates.transcripts/verify__g1.raw.json")
            .is_file()
    );
    assert_eq!(
        std::fs::read_dir(c.dir.path().join("cache/worktrees")).map_or(0, |d| d.count()),
        0
    );

    // A rerun skips every key written, asks nothing, and still reports the bad record.
    let before = m.count();
    let r = c.verify(&m);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        summary(&r).starts_with("curate verify: 0 kept, 0 dropped")
            && summary(&r).contains(", 0 failed, 4 already done"),
        "{}",
        r.stderr
    );
    assert_eq!(m.count(), before, "a rerun asked the model again");
    assert_eq!(c.candidates().len(), 1);
    assert_eq!(c.excluded().len(), 3);
}

#[test]
fn curate_verify_an_invalid_final_reply_is_reasked_then_fails_and_a_rerun_completes_it() {
    let c = case(&[question("i1", "@SHA@", false, json!([]))]);
    let m = model();
    let r = c.verify(&m);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(summary(&r).contains(" 1 failed (see "), "{}", r.stderr);
    // Asked, re-asked once in the same conversation (--max-retries 1), then failed.
    let reqs = m.for_question("i1");
    assert_eq!(reqs.len(), 3, "read, reply, re-asked reply");
    let last = reqs[2]["messages"].as_array().unwrap();
    let reask = last.last().unwrap()["content"].as_str().unwrap();
    assert!(
        reask.starts_with("Your reply cannot be accepted."),
        "{reask}"
    );
    assert_eq!(
        last[last.len() - 2]["content"],
        "I think the checklist is fine."
    );
    let f = c.failures();
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0]["id"].as_str(), f[0]["status"].as_str()),
        (Some("i1"), Some("failed"))
    );
    assert!(
        f[0]["reason"]
            .as_str()
            .unwrap()
            .contains("still invalid after 1 re-ask(s)"),
        "{}",
        f[0]
    );
    assert!(!f[0]["violations"].as_array().unwrap().is_empty());
    assert_eq!(f[0]["raw_reply"], "I think the checklist is fine.");
    // Never an excluded record: a rerun tries it again, and now it passes.
    assert!(c.excluded().is_empty() && c.candidates().is_empty());
    *m.fixed.lock().unwrap() = true;
    let r = c.verify(&m);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        summary(&r).starts_with("curate verify: 1 kept, 0 dropped")
            && summary(&r).contains(", 0 failed, 0 already done"),
        "{}",
        r.stderr
    );
    let cands = c.candidates();
    assert_eq!(
        cands["i1"]["checklist"][0]["evidence"],
        json!([{"path": "src/parser.py", "lines": [2, 2], "source": "verified"}])
    );
    assert_eq!(
        cands["i1"]["checklist"][1]["evidence"],
        json!([{"path": "src/config.py", "source": "verified"}])
    );
    let v = repoprobe(&["validate", c.out.to_str().unwrap()]);
    assert_eq!(v.code, 0, "validate:\n{}{}", v.stdout, v.stderr);
}
