//! What the end-to-end tests of the agent CLI presets share (`codex.rs`, `gemini.rs`): the
//! installed CLI (`scripts/setup-agents.sh` puts it in `tools/`), a real git repository at a
//! pinned commit with one file only the agent's tools can see, and `repoprobe answer` run on one
//! question against the tests' fake API server, its key checked to appear nowhere.

use super::{BENCHMARK, BIN, git, records};
use repoprobe_test_support::Request;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// What only the agent's file tools can see (the fake model quotes what they returned).
pub const FILE_CONTENT: &str = "the flux capacitor needs 1.21 gigawatts (token zq-7781)";

/// Every request the fake server saw: method, path, headers, JSON body.
pub type Seen = Arc<Mutex<Vec<Request>>>;

/// The CLI `name` installed in `tools/` (or the path in `env_var`); `None` (SKIPPED) where it
/// is missing, a failure under `CI=true` ([`super::needs`]).
pub fn installed(name: &str, env_var: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env_var) {
        return Some(PathBuf::from(p));
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools/node_modules/.bin")
        .join(name);
    if p.exists() {
        return Some(p);
    }
    super::needs::missing(
        &format!("no {name} CLI in tools/"),
        &format!("install it with `bash scripts/setup-agents.sh`, or set {env_var} to its path"),
    )
}

/// One `repoprobe answer` run and what it left.
pub struct Answered {
    /// The answer record, or `None` when the key went to the failures journal.
    pub record: Option<Value>,
    pub failures: Vec<Value>,
    pub stderr: String,
    pub dir: tempfile::TempDir,
}

/// Runs `answer --agent AGENT --model MODEL` with the agent at `bin`, the variables `env` (the
/// key among them) and nothing else of ours, on one question about a fresh repository holding
/// `docs/notes.txt`, a decoy `README.md` and `files` (path, content) at a pinned commit.
pub fn answer(
    agent: &str,
    model: &str,
    bin: &Path,
    env: &[(&str, String)],
    key: &str,
    files: &[(&str, &str)],
) -> Answered {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin");
    std::fs::create_dir_all(origin.join("docs")).unwrap();
    git(&origin, &["init", "-q", "-b", "main"]);
    for (path, content) in files {
        let p = origin.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    std::fs::write(origin.join("docs/notes.txt"), format!("{FILE_CONTENT}\n")).unwrap();
    std::fs::write(origin.join("README.md"), "# delorean\n").unwrap();
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-q", "-m", "notes"]);
    let sha = git(&origin, &["rev-parse", "HEAD"]);
    // A later commit the worktree must not show: the question pins the first.
    std::fs::write(origin.join("docs/notes.txt"), "moved on\n").unwrap();
    git(&origin, &["commit", "-q", "-am", "later"]);
    let mut q: Value = serde_json::from_str(
        std::fs::read_to_string(BENCHMARK)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    q["repo"] = json!({"name": "acme/delorean", "url": "", "commit": sha});
    let bench = dir.path().join("benchmark.jsonl");
    std::fs::write(&bench, format!("{q}\n")).unwrap();
    let out = dir.path().join("answers.jsonl");
    let mut c = Command::new(BIN);
    c.env_clear().env("PATH", std::env::var_os("PATH").unwrap());
    for (k, v) in env {
        c.env(k, v);
    }
    let r = c
        .arg("answer")
        .arg(&bench)
        .arg("--out")
        .arg(&out)
        .arg("--clone-cache")
        .arg(dir.path().join("cache"))
        .arg("--repo-map")
        .arg(format!("acme/delorean={}", origin.display()))
        .args(["--agent", agent, "--model", model])
        .args(["--agent-timeout-s", "600", "--agent-bin"])
        .arg(bin)
        // A wrapper of a test runs the real CLI from there.
        .arg("--sandbox-expose")
        .arg(tools_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        !stderr.contains(key) && !stdout.contains(key),
        "the key leaked: {stderr}"
    );
    let failures_path = dir.path().join("answers.failures.ndjson");
    for p in [&out, &failures_path] {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        assert!(!text.contains(key), "the key is in {}: {text}", p.display());
    }
    for t in walk(dir.path()) {
        let text = std::fs::read(&t).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(key),
            "the key is in {}",
            t.display()
        );
    }
    let recs = records(&out);
    assert!(recs.len() <= 1, "{recs:?}");
    Answered {
        record: recs.first().cloned(),
        failures: records(&failures_path),
        stderr,
        dir,
    }
}

/// The files under `dir` outside the repositories (answers, failures, transcripts).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "origin" || name == "cache" || name == ".git" {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A script standing in for the CLI at `real`: `--version` passes through; a run passes
/// through, then `after` (shell) runs with the CLI's stdout in `$out`.
pub fn wrapper(dir: &Path, real: &Path, after: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join("wrapped-cli");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then exec '{}' \"$@\"; fi\n\
             out=$('{}' \"$@\")\n{after}\n",
            real.display(),
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The real CLI at `bin` crashing after its output (`crash`: shell run with the output in
/// `$out`, ending non-zero with `last_words` on stderr), then printing its output garbled: each
/// is a failed run (an answer record with `error`, no answer) that carries the CLI's last words
/// or names what could not be parsed (`unparsed`, a field of the CLI's real output). `run` runs
/// `answer` with the CLI at the path it is given.
pub fn assert_crash_and_garble_fail(
    bin: &Path,
    run: impl Fn(&Path) -> Answered,
    last_words: &str,
    unparsed: &str,
) {
    let bin = std::fs::canonicalize(bin).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let crashing = wrapper(
        tmp.path(),
        &bin,
        &format!("printf '%s\\n' \"$out\"; echo '{last_words}' >&2; exit 3"),
    );
    let a = run(&crashing);
    let rec = a.record.expect(&a.stderr);
    assert_eq!(rec["answer"], serde_json::Value::Null, "{rec}");
    let err = rec["error"].as_str().unwrap();
    assert!(
        err.starts_with("exit status 3") && err.contains(last_words),
        "{err}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let garbling = wrapper(tmp.path(), &bin, "printf '%s\\n' \"$out\" | tr '{}' '<>'");
    let a = run(&garbling);
    let rec = a.record.expect(&a.stderr);
    assert_eq!(rec["answer"], serde_json::Value::Null, "{rec}");
    let err = rec["error"].as_str().unwrap();
    assert!(
        err.starts_with("could not parse") && err.contains(unparsed),
        "{err}"
    );
}

/// A script standing in for the CLI at `real` that runs it, then says on stderr (the end of the
/// transcript's `stderr_tail`) whether any process of the sandbox holds `key` in its environ and
/// how many placeholders its own environment holds: the agent's view of the key.
pub fn env_probe(dir: &Path, real: &Path, key: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let real = std::fs::canonicalize(real).unwrap();
    let p = dir.join("env-probe-cli");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then exec '{real}' \"$@\"; fi\n\
             '{real}' \"$@\"; status=$?\n\
             if grep -l -a -F '{key}' /proc/[0-9]*/environ >/dev/null 2>&1; \
             then echo 'ENV-PROBE: the key is in an environ' >&2; \
             else echo 'ENV-PROBE: no environ holds the key' >&2; fi\n\
             echo \"ENV-PROBE: placeholders $(env | grep -c '=repoprobe-placeholder-')\" >&2\n\
             exit $status\n",
            real = real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The `stderr_tail` of the run's raw output (`raw`, beside its trajectory) says the agent held
/// a placeholder, never `key`.
pub fn assert_only_a_placeholder_inside(raw: &Path) {
    let t: Value = serde_json::from_str(&std::fs::read_to_string(raw).unwrap()).unwrap();
    let tail = t["stderr_tail"].as_str().unwrap_or("");
    assert!(
        tail.contains("ENV-PROBE: no environ holds the key"),
        "{tail}"
    );
    assert!(tail.contains("ENV-PROBE: placeholders 1"), "{tail}");
}

/// A PATH that reaches the agent CLIs through a symlink to `tools/` only (their real directory
/// left out), the link made in `dir`: a `tools/` that is a link, npm's global `bin` links.
pub fn path_through_a_link(dir: &Path) -> String {
    let linked = dir.join("linked-tools");
    std::os::unix::fs::symlink(tools_dir().canonicalize().unwrap(), &linked).unwrap();
    let real_bin = tools_dir()
        .join("node_modules/.bin")
        .canonicalize()
        .unwrap();
    let rest = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| d.canonicalize().ok().as_ref() != Some(&real_bin))
        .collect::<Vec<_>>();
    std::env::join_paths(std::iter::once(linked.join("node_modules/.bin")).chain(rest))
        .unwrap()
        .into_string()
        .unwrap()
}

/// Where `scripts/setup-agents.sh` installs the CLIs (the real programs behind the tests'
/// wrappers, exposed to their sandbox).
pub fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools")
}

/// A `bwrap` that passes repoprobe's checks (its version, the trial run of `true`, the CLI's
/// `--version`) and then cannot set up a run's sandbox, as on a machine whose kernel refuses
/// a namespace: every run must end as a failure to retry that says so.
pub fn failing_bwrap(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let real = std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|p| p.exists())
        .expect("bwrap on PATH (scripts/setup-agents.sh installs it)");
    let p = dir.join("bwrap-that-fails-runs");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh
for last; do :; done
             case \"$last\" in --version|true) exec '{}' \"$@\";; esac
             echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2
exit 1
",
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// `failing_bwrap`'s run of `answer --agent AGENT` (with `env`, the key among them) is a
/// failure to retry naming the sandbox, never an answer.
pub fn assert_a_broken_sandbox_is_a_failure_to_retry(
    agent: &str,
    model: &str,
    bin: &Path,
    env: &[(&str, String)],
    key: &str,
) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut env = env.to_vec();
    env.push((
        "REPOPROBE_BWRAP",
        failing_bwrap(tmp.path()).display().to_string(),
    ));
    let a = answer(agent, model, bin, &env, key, &[]);
    assert_eq!(a.record, None, "an answer was recorded: {}", a.stderr);
    assert_eq!(a.failures.len(), 1, "{}", a.stderr);
    let reason = a.failures[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("could not start the agent in its sandbox")
            && reason.contains("Creating new namespace failed"),
        "{reason}"
    );
}

/// `a` is an answer (no error) whose agent held a placeholder, never `key`
/// ([`assert_only_a_placeholder_inside`] on its raw output).
pub fn assert_answered_with_a_placeholder_inside(a: &Answered) {
    let rec = a.record.as_ref().expect(&a.stderr);
    assert_eq!(rec["error"], Value::Null, "{rec}");
    assert_only_a_placeholder_inside(&super::trajectory::raw_path(a.dir.path(), rec));
}
