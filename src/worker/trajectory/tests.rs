//! The trajectory store and the held run, natively: files routed by name, indexes read, checked
//! or made by a scan, a run read back by its range, pages, kinds and search.

use super::steps::{Held, relative, seconds_of};
use super::*;
use crate::protocol::{Origin, StepKind, ViewOptions};
use crate::worker::Worker;
use repoprobe_core::model::trajectory::{
    ObservationResult, Step, StepSource, ToolCall, Trajectory, TrajectoryAgent,
};
use repoprobe_core::trajectories::{IndexEntry, line};
use serde_json::{Map, Value, json};

const ROOT: &str = "/tmp/wt/q1__m__a0";

fn key(q: &str, attempt: u32) -> TrajectoryKey {
    TrajectoryKey {
        question_id: q.into(),
        model: "m".into(),
        attempt,
    }
}

/// A run: a system prompt, a read of src/lib.rs (by absolute path), a failed shell command,
/// `extra` steps of text, and a last step that ended the run.
fn run(extra: usize) -> Trajectory {
    let mut t = Trajectory::new(TrajectoryAgent {
        name: "builtin".into(),
        version: "1".into(),
        ..TrajectoryAgent::default()
    });
    t.extra = Some(Map::from_iter([(
        "worktree".to_string(),
        Value::String(ROOT.into()),
    )]));
    t.push(Step::new(StepSource::System, "You are <b>an agent</b>"));
    let s = t.push(Step::new(StepSource::Agent, ""));
    s.timestamp = Some("2026-01-02T03:04:05Z".into());
    s.tool_calls = Some(vec![ToolCall::new(
        "c1",
        "read_file",
        json!({ "path": format!("{ROOT}/src/lib.rs") }),
    )]);
    t.attach_result(ObservationResult::of(
        "c1",
        format!("{ROOT}/src/lib.rs\n1\tpub fn start() {{}}"),
        false,
    ));
    let s = t.push(Step::new(StepSource::Agent, "Let me grep"));
    s.timestamp = Some("2026-01-02T03:04:07.500Z".into());
    s.tool_calls = Some(vec![ToolCall::new(
        "c2",
        "bash",
        json!({ "command": "cat missing.txt" }),
    )]);
    t.attach_result(ObservationResult::of("c2", "No such file", true));
    for i in 0..extra {
        t.push(Step::new(
            StepSource::Agent,
            format!("thinking {i} MARKER{i}"),
        ));
    }
    let s = t.push(Step::new(
        StepSource::Agent,
        "<script>alert(1)</script> javascript:alert(1)",
    ));
    s.set_extra("error", Value::Bool(true));
    t
}

/// A trajectories file of runs q1/0 (with `extra` steps) and q2/0, and its index.
fn file(extra: usize) -> (Vec<u8>, Vec<u8>) {
    let mut text = String::new();
    let mut entries = Vec::new();
    for (k, t) in [(key("q1", 0), run(extra)), (key("q2", 0), run(0))] {
        let l = line(&k, &t).unwrap();
        entries.push(IndexEntry {
            key: k,
            offset: text.len() as u64,
            length: l.len() as u64 - 1,
        });
        text.push_str(&l);
    }
    let index = Index::new(text.len() as u64, entries);
    (text.into_bytes(), serde_json::to_vec(&index).unwrap())
}

fn held(extra: usize) -> Held {
    let (bytes, _) = file(extra);
    let mut s = Scanner::new();
    s.feed(&bytes);
    let (index, _) = s.finish();
    let e = index.find(&key("q1", 0)).unwrap();
    let line = &bytes[e.offset as usize..(e.offset + e.length) as usize];
    Held::read(&key("q1", 0), "r.trajectories.jsonl", line, Vec::new()).unwrap()
}

#[test]
fn trajectories_files_are_routed_by_name_never_to_the_loader() {
    assert_eq!(role("results.trajectories.jsonl"), Some(Role::Lines));
    assert_eq!(
        role("https://x.org/r.trajectories.index.json?raw=1"),
        Some(Role::Index)
    );
    assert_eq!(role("results.jsonl"), None);
    assert_eq!(
        lines_of("https://x.org/r.trajectories.index.json"),
        "https://x.org/r.trajectories.jsonl"
    );
    let (bytes, index) = file(0);
    let mut w: Worker<Vec<u8>> = Worker::default();
    w.add(
        vec![
            "r.trajectories.jsonl".into(),
            "r.trajectories.index.json".into(),
        ],
        &[Origin::Dropped; 2],
        vec![bytes, index],
    );
    let load = w.begin_load(&ViewOptions::default());
    assert!(load.files.is_empty(), "the loader reads none of them");
    let work = w.trajectories.work();
    let [Work::ReadIndex { file, index }] = work.as_slice() else {
        panic!("the index given is read: {work:?}");
    };
    w.trajectories.index_read(file, Ok(index.clone()));
    let snapshot = w.finish_load(load);
    assert_eq!(snapshot.trajectories.len(), 1);
    assert_eq!(snapshot.trajectories[0].runs, 2);
    assert_eq!(snapshot.trajectories[0].index, IndexHow::Given);
    assert!(snapshot.issues.is_empty());
    assert_eq!(w.trajectories.runs_of("q1"), [("m".to_string(), 0)]);
    assert_eq!(w.question("q1", &[]).trajectories, [("m".to_string(), 0)]);
    assert!(w.trajectories.find(&key("q3", 0)).is_none());
}

#[test]
fn an_index_of_another_file_is_an_issue_and_no_index_means_a_scan() {
    let (bytes, _) = file(0);
    let (_, other) = file(5);
    let mut s: Store<Vec<u8>> = Store::default();
    s.add("a.trajectories.jsonl", bytes.clone(), bytes.len() as u64);
    s.add("a.trajectories.index.json", other, 0);
    let work = s.work();
    let [Work::ReadIndex { file, index }] = work.as_slice() else {
        panic!("{work:?}");
    };
    s.index_read(file, Ok(index.clone()));
    let issues = s.issues();
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].file, "a.trajectories.jsonl");
    assert!(issues[0].message.contains("another version"), "{issues:?}");
    assert!(s.find(&key("q1", 0)).is_none(), "its runs are not read");

    let mut s: Store<Vec<u8>> = Store::default();
    s.add("b.trajectories.jsonl", bytes.clone(), bytes.len() as u64);
    s.add("c.trajectories.index.json", Vec::new(), 0);
    let work = s.work();
    let [Work::Scan { file, blob }] = work.as_slice() else {
        panic!("{work:?}");
    };
    let mut scan = Scanner::new();
    for c in blob.chunks(100) {
        scan.feed(c);
    }
    s.scanned(file, scan, 2.0, None);
    let sum = s.summary();
    assert_eq!((sum[0].index, sum[0].runs), (IndexHow::Scanned, 2));
    assert!(sum[0].notes[0].starts_with("no index was given"), "{sum:?}");
    let at = s.find(&key("q2", 0)).unwrap();
    let Source::Blob(b) = &at.source else {
        panic!()
    };
    let line = &b[at.offset as usize..(at.offset + at.length) as usize];
    s.open(&key("q2", 0), &at.file, line).unwrap();
    assert!(s.held(&key("q2", 0)).is_some());
    // A line of another run (a stale index) is refused.
    let refused = s.open(&key("q1", 0), &at.file, line).unwrap_err();
    assert!(
        matches!(&refused, RunError::OtherRun { found, .. } if *found == key("q2", 0)),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("is the index of another version of")
    );
    // An index whose trajectories file was not given is said.
    assert!(s.issues()[0].message.contains("was not given"));
}

#[test]
fn a_ranged_file_without_an_index_is_an_error_and_notes_are_kept() {
    let mut s: Store<Vec<u8>> = Store::default();
    s.note("https://x/r.trajectories.jsonl", "downloaded whole");
    s.add("https://x/r.trajectories.jsonl", Vec::new(), 0);
    s.add_ranged(
        "https://x/s.trajectories.jsonl",
        "https://x/s.trajectories.jsonl",
        10,
        None,
    );
    let work = s.work();
    assert_eq!(work.len(), 1, "the downloaded one is scanned");
    let sum = s.summary();
    assert_eq!(sum[0].notes, ["downloaded whole"]);
    assert!(sum[1].ranged && sum[1].error.is_some());
}

#[test]
fn steps_are_paged_with_their_kinds_paths_relative_and_read_files() {
    let h = held(100);
    let first = h.page(1, &[], 40, true);
    let head = first.head.as_ref().unwrap();
    assert_eq!(head.steps, 104);
    assert_eq!(head.outline.len(), 104);
    assert_eq!(first.steps.len(), 40);
    assert_eq!(first.next, Some(41));
    let read = &first.steps[1];
    assert_eq!(read.kinds, [StepKind::READ]);
    assert_eq!(
        read.calls[0].read,
        ["src/lib.rs"],
        "the core's facts of the call"
    );
    assert!(
        read.calls[0].input.contains("\"src/lib.rs\""),
        "relative: {}",
        read.calls[0].input
    );
    assert!(
        read.calls[0]
            .output
            .as_deref()
            .unwrap()
            .starts_with("src/lib.rs\n")
    );
    assert_eq!(head.outline[1].title, "read_file src/lib.rs");
    let shell = &first.steps[2];
    assert_eq!(
        shell.kinds,
        [StepKind::Text, StepKind::READ, StepKind::Error]
    );
    assert!(shell.calls[0].failed);
    assert_eq!(shell.seconds, Some(2.5));
    assert_eq!(first.steps[0].kinds, [StepKind::System]);
    // The next page follows; a filter pages only its kinds.
    let next = h.page(41, &[], 40, false);
    assert!(next.head.is_none());
    assert_eq!(next.steps[0].step, 41);
    let errors = h.page(1, &[StepKind::Error], 40, false);
    let steps: Vec<u64> = errors.steps.iter().map(|s| s.step).collect();
    assert_eq!(steps, [3, 104]);
    assert_eq!(errors.next, None);
    assert_eq!(
        errors.steps[1].error.as_deref(),
        Some("the run ended here with an error")
    );
    // Asked past the end, or for nothing: an empty page, no panic.
    assert!(h.page(10_000, &[], 0, false).steps.is_empty());
    assert_eq!(h.page(0, &[], usize::MAX, false).steps.len(), 104);
}

#[test]
fn search_finds_steps_ignoring_case_and_a_blank_query_finds_none() {
    let mut h = held(100);
    assert_eq!(h.search("marker42"), [46]);
    assert_eq!(h.search("NO SUCH FILE"), [3]);
    assert_eq!(h.search("read_file").len(), 1);
    assert!(h.search("  ").is_empty());
    assert!(h.search("absent-thing").is_empty());
}

#[test]
fn hostile_texts_stay_text_and_odd_inputs_do_not_panic() {
    let h = held(0);
    let last = h.page(4, &[], 1, false);
    assert!(last.steps[0].text.contains("<script>"), "kept as text");
    assert!(Held::read(&key("q1", 0), "f", b"{not json", Vec::new()).is_err());
    assert!(Held::read(&key("q1", 0), "f", &[0xff, 0xfe], Vec::new()).is_err());
    assert_eq!(
        relative("/tmp/wt/a.rs and /tmp/wt", Some("/tmp/wt")),
        "a.rs and ."
    );
    assert_eq!(seconds_of("1970-01-01T00:01:00Z"), Some(60.0));
    assert_eq!(seconds_of("1970-01-01T01:00:00+01:00"), Some(0.0));
    for bad in [
        "",
        "x",
        "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00.Z",
        "2026-01-01T0é:00:00Z",
    ] {
        assert_eq!(seconds_of(bad), None, "{bad}");
    }
}

#[test]
fn a_long_lines_first_bytes_give_its_first_page_marked_partial_and_the_whole_line_replaces_it() {
    let (bytes, index) = file(2_000);
    let mut s: Store<u8> = Store::default();
    assert!(s.add("r.trajectories.jsonl", 0, bytes.len() as u64));
    s.index_read("r.trajectories.jsonl", Ok(index));
    let at = s.find(&key("q1", 0)).unwrap();
    let line = &bytes[at.offset as usize..(at.offset + at.length) as usize];
    let first = &line[..4_000];
    let p = s
        .preview(&key("q1", 0), &at.file, first, 1, &[], 40)
        .expect("the first bytes hold the first steps");
    let head = p.head.as_ref().unwrap();
    assert!(head.partial && head.problems.is_empty());
    assert!(head.steps > 3 && head.steps < 2_004, "{}", head.steps);
    assert_eq!(head.outline.len() as u64, head.steps);
    assert_eq!(p.steps[0].step, 1);
    // The worktree (written before the steps) is known: the read's path is already relative.
    assert_eq!(p.steps[1].calls[0].read, ["src/lib.rs"]);
    assert_eq!(p.next, Some(p.steps.last().unwrap().step + 1));
    // The preview is never held: the whole line is read after it.
    assert!(s.held(&key("q1", 0)).is_none());
    s.open(&key("q1", 0), &at.file, line).unwrap();
    let whole = s.held(&key("q1", 0)).unwrap().page(1, &[], 40, true);
    let wh = whole.head.as_ref().unwrap();
    assert!(!wh.partial);
    assert_eq!(wh.steps, 2_004);
    assert_eq!(whole.steps, p.steps, "the preview showed the same steps");
    // What the view made of the preview is replaced by the whole page.
    let v = crate::trajectory::merge(None, key("q1", 0), Ok(p.clone()));
    let v = crate::trajectory::merge(Some(&v), key("q1", 0), Ok(whole));
    assert!(!v.head.unwrap().partial);
    // A page the first bytes do not reach, another run's line, or bytes not a line: no preview.
    assert!(
        s.preview(&key("q1", 0), &at.file, first, 1_500, &[], 40)
            .is_none()
    );
    assert!(
        s.preview(&key("q2", 0), &at.file, first, 1, &[], 40)
            .is_none()
    );
    assert!(
        s.preview(&key("q1", 0), &at.file, b"[[", 1, &[], 40)
            .is_none()
    );
}
