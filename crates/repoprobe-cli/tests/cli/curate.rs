//! `repoprobe curate` end to end against the fake GitHub of `repoprobe-test-support`
//! (`github::World::standard`, whose contents the counts below follow): the funnel's counts,
//! every drop's reason, resume after `kill -9` without asking twice, the token in no file, and
//! bad replies as errors.

use crate::common::{BIN, Ran, ran};
use repoprobe_test_support::github::{FakeGitHub, Gate, GhFault, World};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "ghp_TestToken0123456789SECRET";

fn curate(gh: &FakeGitHub, stage: &str) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("GITHUB_TOKEN", TOKEN)
        .args(["curate", stage, "--github-api-url"])
        .arg(gh.url())
        .args(["--github-timeout-s", "20"]);
    c
}

fn run(c: &mut Command) -> Ran {
    let r = ran(c.output().unwrap());
    assert!(
        !r.stdout.contains(TOKEN) && !r.stderr.contains(TOKEN),
        "the token leaked: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

fn keys(path: &Path) -> Vec<String> {
    lines(path)
        .iter()
        .map(|v| v["key"].as_str().unwrap().to_string())
        .collect()
}

/// No file of `dir` holds the token.
fn assert_no_token(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.contains(TOKEN), "{} holds the token", p.display());
    }
}

/// No request was served data twice.
fn assert_nothing_asked_twice(gh: &FakeGitHub) {
    let served = gh.served();
    let mut seen = HashSet::new();
    for s in &served {
        assert!(seen.insert(s), "asked twice: {s}");
    }
}

fn world_with_token_in_a_body() -> World {
    let mut w = World::standard();
    // A thread that quotes the token (pasted by mistake): it must not reach any file.
    w.repos[0].discussions[0].body =
        format!("My config has token {TOKEN} in it; how does the loader pick a backend?");
    w
}

#[test]
fn the_pipeline_counts_every_stage_exactly_and_says_why_each_was_dropped() {
    let gh = FakeGitHub::start(world_with_token_in_a_body(), TOKEN);
    gh.with(|s| {
        s.faults = vec![
            ("SearchRepositories".into(), 2, GhFault::RateLimited),
            ("AnsweredCount".into(), 1, GhFault::Secondary),
        ];
        // Pages over 3 discussions take GitHub too long: 50 → 25 → 12 → 6 → 3.
        s.slow_above = Some(3);
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run(curate(&gh, "repos")
        .args([
            "--created-after",
            "2024-01-01",
            "--created-before",
            "2025-12-31",
        ])
        .args([
            "--min-stars",
            "1000",
            "--category",
            "Q&A",
            "--category",
            "Help",
            "--min-answered",
            "3",
            // The per-category reading: helpdesk's Q&A (1 answered) is not harvested.
            "--answered-rule",
            "each",
        ])
        .arg("--out")
        .arg(d.join("repos.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("search: 1105 repositories listed in 2 slice(s)")
            && r.stderr.contains("GitHub counted 1105 in the whole range"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("RATE_LIMITED"), "{}", r.stderr);
    assert!(r.stderr.contains("secondary rate limit"), "{}", r.stderr);
    let repos = lines(&d.join("repos.jsonl"));
    let names: Vec<&str> = repos.iter().map(|r| r["repo"].as_str().unwrap()).collect();
    assert_eq!(names, ["acme/rocket", "acme/helpdesk"]);
    let help = &repos[1];
    let kept: Vec<(&str, bool, Option<u64>)> = help["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                c["kept"].as_bool().unwrap(),
                c["answered"].as_u64(),
            )
        })
        .collect();
    assert_eq!(kept, [("Help", true, Some(3)), ("Q&A", false, Some(1))]);
    assert_eq!(help["provenance"]["source"], "search");
    let excluded = lines(&d.join("repos.excluded.ndjson"));
    assert_eq!(excluded.len(), 1103);
    let by_key: BTreeMap<&str, (&str, &str)> = excluded
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap(),
                (e["rule"].as_str().unwrap(), e["reason"].as_str().unwrap()),
            )
        })
        .collect();
    assert_eq!(by_key["solo/no-discussions"].0, "no-discussions");
    assert_eq!(by_key["filler/f0000"].0, "no-discussions");
    assert_eq!(by_key["solo/ideas-only"].0, "no-category");
    assert!(
        by_key["solo/ideas-only"].1.contains("Q&A (not answerable)"),
        "{:?}",
        by_key["solo/ideas-only"]
    );
    assert_eq!(
        by_key["solo/quiet"],
        (
            "too-few-answered",
            "solo/quiet: Q&A has 2 answered (at least 3 asked of a category)"
        )
    );
    assert!(!by_key.contains_key("small/repo") && !by_key.contains_key("old/repo"));

    let r = run(curate(&gh, "harvest")
        .arg(d.join("repos.jsonl"))
        .arg("--out")
        .arg(d.join("threads.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let threads = lines(&d.join("threads.jsonl"));
    let tkeys: Vec<&str> = threads.iter().map(|t| t["key"].as_str().unwrap()).collect();
    assert_eq!(
        tkeys,
        [
            "acme/rocket#1",
            "acme/rocket#2",
            "acme/rocket#3",
            "acme/rocket#4",
            "acme/rocket#5",
            "acme/rocket#6",
            "acme/helpdesk#1",
            "acme/helpdesk#2",
            "acme/helpdesk#3"
        ]
    );
    // Pinned to the default branch's commit at the time the answer was chosen.
    let pinned: Vec<&str> = threads
        .iter()
        .map(|t| t["commit"]["oid"].as_str().unwrap())
        .collect();
    let a = |i: u8| format!("{}{i}", "a".repeat(39));
    assert_eq!(
        pinned[0],
        a(1),
        "chosen 2024-07-01: the commit of 2024-06-01"
    );
    assert_eq!(
        pinned[1],
        a(0),
        "chosen 2024-05-15: the commit of 2024-04-01"
    );
    assert_eq!(
        pinned[8],
        format!("{}2", "b".repeat(39)),
        "chosen 2024-09-01"
    );
    let t = &threads[0];
    assert_eq!(t["answer"]["author"], "maintainer");
    assert_eq!(t["answer"]["author_association"], "MEMBER");
    assert_eq!(t["answer"]["chosen_at"], "2024-07-01T00:00:00Z");
    assert_eq!(t["provenance"]["discussion_id"], "D_R_rocket_1");
    assert_eq!(
        t["provenance"]["source_url"],
        "https://github.com/acme/rocket/discussions/1"
    );
    assert_eq!(t["provenance"]["api_url"], gh.url());
    assert!(
        t["body"].as_str().unwrap().contains("[redacted]"),
        "{}",
        t["body"]
    );
    let dropped = lines(&d.join("threads.excluded.ndjson"));
    let dropped: Vec<(&str, &str)> = dropped
        .iter()
        .map(|e| (e["key"].as_str().unwrap(), e["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        dropped,
        [
            ("acme/rocket#7", "no-answer"),
            ("acme/rocket#8", "no-commit")
        ]
    );
    // The unanswered #9 was never listed (answered: true), nor General's #10.
    assert!(
        !std::fs::read_to_string(d.join("threads.pages.ndjson"))
            .unwrap()
            .contains("Nobody answered")
    );
    // Pages of 3 after the 502s: rocket's 8 answered threads in 3 pages, helpdesk's 3 in 1.
    let pages = lines(&d.join("threads.pages.ndjson"));
    assert_eq!(pages.len(), 4, "{pages:?}");
    assert!(
        gh.with(|s| s
            .log
            .iter()
            .filter(
                |l| l.outcome == repoprobe_test_support::github::Outcome::Fault(GhFault::Gateway)
            )
            .count())
            == 4
    );

    let r = run(Command::new(BIN)
        .env_clear()
        .args(["curate", "filter"])
        .arg(d.join("threads.jsonl"))
        .arg("--out")
        .arg(d.join("filtered.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        keys(&d.join("filtered.jsonl")),
        [
            "acme/rocket#1",
            "acme/rocket#2",
            "acme/rocket#4",
            "acme/rocket#6",
            "acme/helpdesk#1",
            "acme/helpdesk#2",
            "acme/helpdesk#3"
        ]
    );
    let images = lines(&d.join("filtered.excluded.ndjson"));
    let reasons: Vec<&str> = images
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "acme/rocket#3: the question relies on images: a Markdown image: \"https://github.com/user-attachments/assets/11111111-2222\"",
            "acme/rocket#5: the accepted answer relies on images: a GitHub attachment: \"https://user-images.githubusercontent.com/1/trace.png\"",
        ]
    );

    let r = run(Command::new(BIN)
        .env_clear()
        .args(["curate", "report", "--repos"])
        .arg(d.join("repos.jsonl"))
        .arg("--threads")
        .arg(d.join("threads.jsonl"))
        .arg("--filtered")
        .arg(d.join("filtered.jsonl"))
        .arg("--out")
        .arg(d.join("funnel.json")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("repositories: 1105 seen, 2 kept\nthreads: 9 harvested, 7 after filter\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("dropped at repos: 1101 no-discussions, 1 no-category, 1 too-few-answered"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("dropped at harvest: 1 no-answer, 1 no-commit"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("dropped at filter: 2 images"),
        "{}",
        r.stdout
    );
    let funnel: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("funnel.json")).unwrap()).unwrap();
    assert_eq!(funnel["per_repository"]["acme/rocket"]["answered"], 8);
    assert_eq!(funnel["per_repository"]["acme/rocket"]["harvested"], 6);
    assert_eq!(
        funnel["per_repository"]["acme/rocket"]["after"]["filter"],
        4
    );
    assert_eq!(
        funnel["per_repository"]["acme/helpdesk"]["after"]["filter"],
        3
    );

    assert_no_token(d);
    assert_nothing_asked_twice(&gh);
    // Every request carried the token as GitHub asks, and none was refused.
    assert!(gh.with(|s| {
        s.log
            .iter()
            .all(|l| l.outcome != repoprobe_test_support::github::Outcome::Refused)
    }));

    // A rerun of a stage finds everything done and asks nothing of the threads again.
    let before = gh.served().len();
    let r = run(curate(&gh, "harvest")
        .arg(d.join("repos.jsonl"))
        .arg("--out")
        .arg(d.join("threads.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(gh.served().len(), before, "a finished harvest asked again");
    assert_eq!(keys(&d.join("threads.jsonl")).len(), 9);
}

/// Runs `c` until the fake holds its gated request, then kills it with SIGKILL.
fn kill_at_gate(gh: &FakeGitHub, c: &mut Command) {
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::common::wait::until("the gated request", Duration::from_secs(60), || {
        gh.with(|s| s.held)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    gh.release();
}

#[test]
fn a_harvest_killed_mid_page_and_between_pages_resumes_without_asking_twice_or_losing_a_thread() {
    let gh = FakeGitHub::start(World::standard(), TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run(curate(&gh, "repos")
        .args([
            "--repo",
            "acme/rocket",
            "--repo",
            "acme/helpdesk",
            "--repo",
            "nobody/nothing",
        ])
        .args(["--min-answered", "3", "--answered-rule", "each", "--out"])
        .arg(d.join("repos.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        keys_of(&d.join("repos.jsonl"), "repo"),
        ["acme/rocket", "acme/helpdesk"]
    );
    let nf = lines(&d.join("repos.excluded.ndjson"));
    assert_eq!(nf.len(), 1);
    assert_eq!(
        (nf[0]["key"].as_str(), nf[0]["rule"].as_str()),
        (Some("nobody/nothing"), Some("not-found"))
    );

    let harvest = || {
        let mut c = curate(&gh, "harvest");
        c.args(["--page-size", "3"])
            .arg(d.join("repos.jsonl"))
            .arg("--out")
            .arg(d.join("threads.jsonl"));
        c
    };
    // Killed while pinning rocket #2, the second thread of the first page.
    gh.with(|s| {
        s.gate = Some(Gate {
            op: "PinnedCommit".into(),
            var: "until".into(),
            value: "2024-05-15T00:00:00Z".into(),
        })
    });
    kill_at_gate(&gh, &mut harvest());
    assert_eq!(keys(&d.join("threads.jsonl")), ["acme/rocket#1"]);
    // Killed again asking for rocket's third page.
    gh.with(|s| {
        s.gate = Some(Gate {
            op: "AnsweredDiscussions".into(),
            var: "after".into(),
            value: "p:6".into(),
        });
        s.held = false;
        s.released = false;
    });
    kill_at_gate(&gh, &mut harvest());
    assert_eq!(
        keys(&d.join("threads.jsonl")).len(),
        6,
        "rocket #1–#6, the first two pages"
    );
    gh.with(|s| s.gate = None);
    let r = run(&mut harvest());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("(6 before)"), "{}", r.stderr);
    let all = keys(&d.join("threads.jsonl"));
    assert_eq!(all.len(), 9, "{all:?}");
    assert_eq!(
        all.iter().collect::<HashSet<_>>().len(),
        9,
        "a thread written twice: {all:?}"
    );
    assert_eq!(
        keys(&d.join("threads.excluded.ndjson")),
        ["acme/rocket#7", "acme/rocket#8"]
    );
    assert_nothing_asked_twice(&gh);
    // Each page and each pin was served once: rocket 3 pages + helpdesk 1; one pin per
    // (repository, time the answer was chosen): rocket 2024-07-01, 2024-05-15 and 2024-03-02
    // (#8, before any commit), helpdesk 2024-07-01 and 2024-09-01. Threads chosen at the same
    // time share their pin, also across the kills (read back from the threads written).
    let served = gh.served();
    let count = |op: &str| {
        served
            .iter()
            .filter(|s| s.starts_with(&format!("{op} ")))
            .count()
    };
    assert_eq!(
        (count("AnsweredDiscussions"), count("PinnedCommit")),
        (4, 5)
    );
    assert_no_token(d);
}

fn keys_of(path: &Path, field: &str) -> Vec<String> {
    lines(path)
        .iter()
        .map(|v| v[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn bad_replies_and_a_bad_token_are_clear_errors_not_panics() {
    let gh = FakeGitHub::start(World::standard(), TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("repos.jsonl");
    let repos = |gh: &FakeGitHub| {
        let mut c = curate(gh, "repos");
        c.args([
            "--created-before",
            "2025-12-31",
            "--answered-rule",
            "each",
            "--out",
        ])
        .arg(&out);
        c
    };
    gh.with(|s| s.faults = vec![("SearchRepositories".into(), 1, GhFault::Html)]);
    let r = run(&mut repos(&gh));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("SearchRepositories: the reply of")
            && r.stderr.contains("is not the API's JSON"),
        "{}",
        r.stderr
    );

    gh.with(|s| s.faults = vec![("SearchRepositories".into(), 2, GhFault::WrongShape)]);
    let r = run(&mut repos(&gh));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("SearchRepositories: the reply's data is not as asked: search:"),
        "{}",
        r.stderr
    );

    let r = run(repos(&gh).env("GITHUB_TOKEN", "ghp_wrongwrongwrong"));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("refused the token (HTTP 401)"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("ghp_wrongwrongwrong"), "{}", r.stderr);

    let r = run(repos(&gh).env_remove("GITHUB_TOKEN"));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("GITHUB_TOKEN is not set"), "{}", r.stderr);

    // A thread file with a broken line: the line is named, the rest filtered.
    let threads = dir.path().join("threads.jsonl");
    std::fs::write(&threads, "{\"key\": \"x\"}\nnot json\n").unwrap();
    let r = run(Command::new(BIN)
        .env_clear()
        .args(["curate", "filter"])
        .arg(&threads)
        .arg("--out")
        .arg(dir.path().join("f.jsonl")));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("line 1: not a thread record: missing field"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("line 2: not JSON"), "{}", r.stderr);
}

#[test]
fn a_harvest_stopped_by_sigterm_exits_75_and_the_rerun_finishes_it() {
    let gh = FakeGitHub::start(World::standard(), TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run(curate(&gh, "repos")
        .args(["--repo", "acme/rocket", "--min-answered", "3", "--out"])
        .arg(d.join("repos.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let harvest = || {
        let mut c = curate(&gh, "harvest");
        c.args(["--page-size", "3"])
            .arg(d.join("repos.jsonl"))
            .arg("--out")
            .arg(d.join("threads.jsonl"));
        c
    };
    // Preempted (a cluster's SIGTERM) while GitHub holds the second page.
    gh.with(|s| {
        s.gate = Some(Gate {
            op: "AnsweredDiscussions".into(),
            var: "after".into(),
            value: "p:3".into(),
        })
    });
    let mut child = harvest()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait::every(
        Duration::from_millis(20),
        "the gated request",
        Duration::from_secs(60),
        || match (gh.with(|s| s.held), child.try_wait()) {
            (true, _) => Ok(()),
            (false, Ok(Some(status))) => {
                let mut err = String::new();
                use std::io::Read;
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                panic!("the harvest ended ({status}) before the gate: {err}")
            }
            _ => Err(String::new()),
        },
    );
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    gh.release();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
    assert_eq!(
        keys(&d.join("threads.jsonl")).len(),
        3,
        "the first page's threads"
    );
    gh.with(|s| s.gate = None);
    let r = run(&mut harvest());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(keys(&d.join("threads.jsonl")).len(), 6);
    assert_nothing_asked_twice(&gh);
}

#[test]
fn answered_threads_count_across_the_named_categories_together_as_the_paper_reads() {
    let gh = FakeGitHub::start(World::standard(), TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let repos = |rule: &[&str], out: &str| {
        run(curate(&gh, "repos")
            .args([
                "--repo",
                "acme/helpdesk",
                "--repo",
                "solo/quiet",
                "--min-answered",
                "3",
            ])
            .args(["--theme", "acme/helpdesk=Editor UI"])
            .args(rule)
            .arg("--out")
            .arg(d.join(out)))
    };
    // The default: Help's 3 and Q&A's 1 answered threads count together (4 ≥ 3), so both
    // categories are harvested; quiet's 2 are too few either way.
    let r = repos(&[], "together.jsonl");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let kept = lines(&d.join("together.jsonl"));
    assert_eq!(kept.len(), 1);
    let help = &kept[0];
    assert_eq!(help["answered_rule"], "together");
    assert_eq!(help["language"], "TypeScript");
    assert_eq!(help["theme"], "Editor UI");
    let cats: Vec<(&str, bool)> = help["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["kept"].as_bool().unwrap()))
        .collect();
    assert_eq!(cats, [("Help", true), ("Q&A", true)]);
    assert!(
        help["kept_because"]
            .as_str()
            .unwrap()
            .contains("4 together"),
        "{help}"
    );
    let quiet = lines(&d.join("together.excluded.ndjson"));
    assert_eq!(
        quiet[0]["reason"],
        "solo/quiet: Q&A has 2 answered: 2 together (at least 3 asked, categories counted together)"
    );
    // Each category on its own: helpdesk's Q&A is not harvested.
    let r = repos(&["--answered-rule", "each"], "each.jsonl");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let each = lines(&d.join("each.jsonl"));
    assert_eq!(each[0]["answered_rule"], "each");
    assert_eq!(each[0]["categories"][1]["kept"], false);
    // Harvest carries the language and theme to the threads, whence to the questions.
    let r = run(curate(&gh, "harvest")
        .arg(d.join("together.jsonl"))
        .arg("--out")
        .arg(d.join("threads.jsonl")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let threads = lines(&d.join("threads.jsonl"));
    assert_eq!(threads.len(), 4, "Help's 3 and Q&A's 1");
    assert!(
        threads
            .iter()
            .all(|t| t["language"] == "TypeScript" && t["theme"] == "Editor UI")
    );
    // A theme that is not one of the paper's eight is refused, naming them.
    let r = repos(&["--theme", "acme/helpdesk=Games"], "bad.jsonl");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("\"Games\" is not one of the paper's themes: LLM Framework"),
        "{}",
        r.stderr
    );
}
