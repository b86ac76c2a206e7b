//! Issue 11, hardened git: the real binary and real git, with hostile agents. Whatever git
//! configuration an agent plants — through git in its worktree (`--agent command` scripts), or
//! written straight into the clone cache between runs (a hijacked agent, or one that the sandbox
//! would stop from running git) — never runs: not in that run, not in the next, which refuses the
//! tampered cache saying what it found and how to mend it. The agent's edits are still recorded.
//!
//! Git lower-cases config keys (`core.hookspath`), so findings are compared without case.
//!
//! Every planted command is `evil.sh`, which appends a line to `ran`: the tests assert that
//! file never appears, and one test shows that plain git does run the same plant (so the
//! absence means something).

use crate::common;

use common::{BENCHMARK, BIN, git, records};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A repository, questions pinned to its commit, a planted command and where it would leave its
/// mark.
struct World {
    dir: tempfile::TempDir,
    repo: PathBuf,
    commit: String,
    bench: PathBuf,
    evil: PathBuf,
    mark: PathBuf,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("widget");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("src/lib.rs"), "pub fn start() {}\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    let bench = dir.path().join("benchmark.jsonl");
    let text: String = std::fs::read_to_string(BENCHMARK)
        .unwrap()
        .lines()
        .map(|l| {
            let mut q: Value = serde_json::from_str(l).unwrap();
            q["repo"] = json!({"name": "acme/widget", "url": "", "commit": commit});
            format!("{q}\n")
        })
        .collect();
    std::fs::write(&bench, text).unwrap();
    let mark = dir.path().join("ran");
    let evil = dir.path().join("evil.sh");
    // Also a filter (it must pass its input through) and a hook.
    std::fs::write(
        &evil,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    World {
        dir,
        repo,
        commit,
        bench,
        evil,
        mark,
    }
}

impl World {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn cache(&self) -> PathBuf {
        self.path().join("cache/acme__widget.git")
    }

    fn out(&self) -> PathBuf {
        self.path().join("answers.jsonl")
    }

    /// `repoprobe answer --agent command` on one question, unconfined (`--no-sandbox`) on
    /// purpose: in the sandbox the agent cannot reach the clone cache at all (`confinement.rs`),
    /// and the git hardening must hold on its own — for runs with `--no-sandbox` and as
    /// defence in depth.
    fn answer(&self, question: &str, command: &str) -> Output {
        Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .arg("answer")
            .arg(&self.bench)
            .arg("--out")
            .arg(self.out())
            .arg("--clone-cache")
            .arg(self.path().join("cache"))
            .arg("--repo-map")
            .arg(format!("acme/widget={}", self.repo.display()))
            .args([
                "--agent",
                "command",
                "--model",
                "sh",
                "--question",
                question,
            ])
            .args(["--command", command, "--no-sandbox"])
            .output()
            .unwrap()
    }

    fn answer_of(&self, question: &str) -> Value {
        records(&self.out())
            .into_iter()
            .find(|r| r["question_id"] == question)
            .unwrap_or_else(|| panic!("no answer to {question}"))
    }

    fn failure_of(&self, question: &str) -> Option<String> {
        records(&self.path().join("answers.failures.ndjson"))
            .into_iter()
            .find(|r| r["question_id"] == question)
            .map(|r| r["reason"].as_str().unwrap().to_string())
    }

    /// Asserts nothing planted ran.
    fn nothing_ran(&self) {
        assert!(
            !self.mark.exists(),
            "a planted command ran: {}",
            std::fs::read_to_string(&self.mark).unwrap_or_default()
        );
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn git_config_an_agent_plants_never_runs_its_edits_are_recorded_and_the_next_run_refuses() {
    let w = world();
    let evil = w.evil.display();
    let included = w.path().join("included.config");
    std::fs::write(&included, format!("[core]\n\tfsmonitor = {evil}\n")).unwrap();
    let hooks = w.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-checkout",
        "reference-transaction",
        "post-index-change",
    ] {
        std::fs::copy(&w.evil, hooks.join(hook)).unwrap();
    }
    // What an agent that may run git in its worktree can plant, then an edit and an answer.
    let hostile = format!(
        "cd {{workdir}} && \
         git config core.fsmonitor '{evil}' && \
         git config core.hooksPath '{hooks}' && \
         git config filter.x.clean '{evil}' && git config filter.x.smudge '{evil}' && \
         git config filter.x.required true && \
         git config include.path '{included}' && \
         git config extensions.worktreeConfig true && \
         git config --worktree core.fsmonitor '{evil}' && \
         common=$(git rev-parse --git-common-dir) && mkdir -p \"$common/info\" \"$common/hooks\" && \
         printf '* filter=x\\n' > \"$common/info/attributes\" && \
         cp '{evil}' \"$common/hooks/post-checkout\" && \
         printf '* filter=x\\n' > .gitattributes && \
         echo patched > src/lib.rs && echo I changed nothing",
        hooks = hooks.display(),
        included = included.display(),
    );
    let r = w.answer("q1", &hostile);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    w.nothing_ran();
    let a = w.answer_of("q1");
    assert_eq!(a["answer"], "I changed nothing");
    assert_eq!(a["agent"]["worktree_changed"], true, "{a}");
    let files = a["agent"]["changes"]["files"].to_string();
    assert!(
        files.contains(r#"{"kind":"modified","path":"src/lib.rs"}"#)
            || files.contains(r#"{"path":"src/lib.rs","kind":"modified"}"#),
        "{files}"
    );
    let tampered = a["agent"]["changes"]["cache_tampered"].to_string();
    for what in [
        "core.fsmonitor",
        "core.hooksPath",
        "filter.x.smudge",
        "include.path",
        "config.worktree exists",
        "hooks/post-checkout",
        "info/attributes",
    ] {
        assert!(
            tampered.to_lowercase().contains(&what.to_lowercase()),
            "{what} not in {tampered}"
        );
    }
    // The worktree was removed without git, and the run said why.
    assert!(
        stderr(&r).contains("has been tampered with"),
        "{}",
        stderr(&r)
    );
    assert_eq!(
        std::fs::read_dir(w.path().join("cache/worktrees")).map_or(0, |d| d.count()),
        0
    );

    // The next run refuses the cache, saying what it found and what to do, and runs nothing.
    let r = w.answer("q2", "echo fine");
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    let reason = w.failure_of("q2").expect("a failure record for q2");
    let cache = w.cache();
    assert!(
        reason.contains("has been tampered with")
            && reason.contains(&format!("delete {}", cache.display()))
            && reason.contains("core.fsmonitor")
            && reason.contains("hooks/post-checkout"),
        "{reason}"
    );
    w.nothing_ran();

    // The plant is real: git as people run it runs it at once.
    let plain = w.path().join("plain");
    git(
        &cache,
        &[
            "worktree",
            "add",
            "--detach",
            "-q",
            plain.to_str().unwrap(),
            &w.commit,
        ],
    );
    assert!(
        w.mark.exists(),
        "the plant does not work: the test proves nothing"
    );
    std::fs::remove_file(&w.mark).unwrap();

    // Deleting the cache, as told, mends it.
    std::fs::remove_dir_all(&cache).unwrap();
    let r = w.answer("q2", "echo fine");
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    assert_eq!(w.answer_of("q2")["agent"]["worktree_changed"], false);
    w.nothing_ran();
}

/// What a plant is called, the files it writes in the cache (path, text appended), and the
/// finding the refusal must name.
type Plant = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn git_config_planted_straight_into_the_cache_between_runs_is_refused_before_git_reads_it() {
    // Each plant on a cache a clean run made; `{evil}` is the planted command, `{id}` the
    // worktree entry left by that run (`--keep-worktrees`).
    let plants: &[Plant] = &[
        (
            "fsmonitor",
            &[("config", "[core]\n\tfsmonitor = {evil}\n")],
            "core.fsmonitor",
        ),
        (
            "hooksPath",
            &[("config", "[core]\n\thooksPath = {hooks}\n")],
            "core.hooksPath",
        ),
        (
            "a post-checkout hook",
            &[("hooks/post-checkout", "#!/bin/sh\n{evil}\n")],
            "hooks/post-checkout",
        ),
        (
            "a reference-transaction hook",
            &[("hooks/reference-transaction", "#!/bin/sh\n{evil}\n")],
            "hooks/reference-transaction",
        ),
        (
            "include.path",
            &[
                ("config", "[include]\n\tpath = {dir}/included.config\n"),
                ("../../included.config", "[core]\n\tfsmonitor = {evil}\n"),
            ],
            "include.path",
        ),
        (
            "a filter driver with attributes",
            &[
                (
                    "config",
                    "[filter \"x\"]\n\tsmudge = {evil}\n\tclean = {evil}\n\trequired = true\n",
                ),
                ("info/attributes", "* filter=x\n"),
            ],
            "filter.x.smudge",
        ),
        (
            "a worktree's config.worktree",
            &[
                ("config", "[extensions]\n\tworktreeConfig = true\n"),
                (
                    "worktrees/{id}/config.worktree",
                    "[core]\n\tfsmonitor = {evil}\n",
                ),
            ],
            "config.worktree exists",
        ),
        (
            "ssh and credential programs",
            &[(
                "config",
                "[core]\n\tsshCommand = {evil}\n[credential]\n\thelper = !{evil}\n",
            )],
            "core.sshCommand",
        ),
        (
            "alternates",
            &[("objects/info/alternates", "{dir}/elsewhere/objects\n")],
            "objects/info/alternates",
        ),
    ];
    for (what, files, finding) in plants {
        let w = world();
        let r = w.answer("q1", "echo fine");
        assert_eq!(r.status.code(), Some(0), "{what}: {}", stderr(&r));
        let cache = w.cache();
        let hooks = w.path().join("hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::copy(&w.evil, hooks.join("post-checkout")).unwrap();
        std::fs::create_dir_all(cache.join("worktrees/stale")).unwrap();
        for (rel, text) in *files {
            let text = text
                .replace("{evil}", &w.evil.display().to_string())
                .replace("{hooks}", &hooks.display().to_string())
                .replace("{dir}", &w.path().display().to_string());
            let path = cache.join(rel.replace("{id}", "stale"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let mut old = std::fs::read_to_string(&path).unwrap_or_default();
            old.push_str(&text);
            std::fs::write(&path, old).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let r = w.answer("q2", "echo fine");
        assert_eq!(r.status.code(), Some(1), "{what}: {}", stderr(&r));
        let reason = w
            .failure_of("q2")
            .unwrap_or_else(|| panic!("{what}: not refused"));
        assert!(
            reason.contains("has been tampered with")
                && reason.contains(&format!("delete {}", cache.display()))
                && reason.to_lowercase().contains(&finding.to_lowercase()),
            "{what}: {reason}"
        );
        assert!(
            stderr(&r).to_lowercase().contains(&finding.to_lowercase()),
            "{what}: the run says it: {}",
            stderr(&r)
        );
        w.nothing_ran();
    }
}

#[test]
fn an_agent_that_repoints_its_dot_git_file_cannot_make_our_status_read_its_config() {
    let w = world();
    let evil = w.evil.display();
    // A repository of the agent's own, with hostile config, made the worktree's git directory.
    let hostile = format!(
        "cd {{workdir}} && git init -q own && \
         git -C own config core.fsmonitor '{evil}' && \
         git -C own config filter.x.clean '{evil}' && git -C own config filter.x.required true && \
         printf '* filter=x\\n' > .gitattributes && \
         printf 'gitdir: %s/own/.git\\n' \"$PWD\" > .git && \
         echo patched > src/lib.rs && echo done"
    );
    let r = w.answer("q1", &hostile);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    w.nothing_ran();
    let a = w.answer_of("q1");
    assert_eq!(a["agent"]["worktree_changed"], true);
    let files = a["agent"]["changes"]["files"].to_string();
    assert!(
        files.contains("src/lib.rs") && files.contains(".gitattributes") && files.contains("own/"),
        "{files}"
    );
    // Nothing was planted in the cache itself: the next run goes ahead.
    assert!(a["agent"]["changes"].get("cache_tampered").is_none(), "{a}");
    let r = w.answer("q2", "echo fine");
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    w.nothing_ran();
}
