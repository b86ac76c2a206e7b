//! The worker's requests served natively, as the binary hands them over, through a fake browser
//! (`Fake`): files are bytes (one can be made to break off), tasks run when `drain` says, a URL
//! answers Range requests from a map, and every reply and User Timing call is recorded.

use super::Service;
use crate::protocol::{
    Ask, Origin, ReadError, Reply, Request, Response, RunError, StartFile, Started, StepKind,
    TrajectoryKey, ViewOptions,
};
use crate::worker::Handle;
use crate::worker::hash::{Digest, Hasher, hex};
use crate::worker::host::{Host, ReadTimes, Stopped, range_bytes, range_status};
use crate::worker::testdata::FILES;
use repoprobe_core::issue::{IssueKind, Place};
use repoprobe_core::model::trajectory::{Step, StepSource, Trajectory, TrajectoryAgent};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// A file as the fake browser holds it: its bytes, and whether reading it breaks off after the
/// first chunk (a file changed or gone).
#[derive(Clone)]
struct File {
    bytes: Vec<u8>,
    broken: bool,
}

impl Handle for File {
    fn bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// The chunk size of the fake's streams.
const CHUNK: usize = 61;

#[derive(Default)]
struct Fake {
    replies: RefCell<Vec<Response>>,
    logged: RefCell<Vec<String>>,
    tasks: RefCell<Vec<Pin<Box<dyn Future<Output = ()>>>>>,
    /// User Timing calls in order: `mark NAME`, `clear`, `measure NAME FROM TO`, `total NAME`.
    timing: RefCell<Vec<String>>,
    /// URLs answering Range requests (status, body).
    urls: BTreeMap<String, (u16, Vec<u8>)>,
    /// The query the worker was started with.
    query: Vec<(String, String)>,
}

impl Host for Fake {
    type Blob = File;
    fn reply(&self, r: &Response) {
        // As the page gets it: written and read back.
        let back = Response::decode(&r.encode()).expect("an answer reads back");
        assert_eq!(&back, r, "an answer reads back as it was written");
        self.replies.borrow_mut().push(back);
    }
    fn log_error(&self, why: &str) {
        self.logged.borrow_mut().push(why.into());
    }
    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.tasks.borrow_mut().push(Box::pin(task));
    }
    fn start_options(&self) -> ViewOptions {
        ViewOptions::from_query(|k| {
            let v = self.query.iter().find(|(n, _)| n == k);
            v.map(|(_, v)| v.clone())
        })
    }
    async fn stream(
        &self,
        blob: &File,
        _: &mut ReadTimes,
        f: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, Stopped> {
        let mut read = 0;
        for (n, c) in blob.bytes.chunks(CHUNK).enumerate() {
            if blob.broken && n == 1 {
                return Err(Stopped {
                    read,
                    error: ReadError::Browser("gone".into()),
                });
            }
            f(c);
            read += c.len() as u64;
        }
        Ok(read)
    }
    async fn read_all(&self, blob: &File) -> Result<Vec<u8>, ReadError> {
        Ok(blob.bytes.clone())
    }
    async fn read_slice(&self, blob: &File, start: u64, end: u64) -> Result<Vec<u8>, ReadError> {
        let got = blob.bytes.get(start as usize..end as usize);
        got.map(<[u8]>::to_vec)
            .ok_or_else(|| ReadError::Browser("out of the file".into()))
    }
    async fn fetch_range(&self, url: &str, offset: u64, length: u64) -> Result<Vec<u8>, ReadError> {
        let (status, body) = self
            .urls
            .get(url)
            .ok_or_else(|| ReadError::Fetch("no such URL".into()))?;
        range_status(*status)?;
        let part = body
            .get(offset as usize..(offset + length) as usize)
            .unwrap_or_default();
        range_bytes(part.to_vec(), length)
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn mark(&self, name: &str, clear: bool) {
        let mut t = self.timing.borrow_mut();
        if clear {
            t.push("clear".into());
        }
        t.push(format!("mark {name}"));
    }
    fn measure(&self, name: &str, from: &str, to: &str) {
        self.timing
            .borrow_mut()
            .push(format!("measure {name} {from} {to}"));
    }
    fn measure_total(&self, name: &str, _: f64, _: f64) {
        self.timing.borrow_mut().push(format!("total {name}"));
    }
}

/// Runs every task (the fake's reads are ready at once, so each ends when first polled),
/// those they spawn too, as the browser's event loop would.
fn drain(s: &Service<Fake>) {
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        let tasks = std::mem::take(&mut *s.host().tasks.borrow_mut());
        if tasks.is_empty() {
            return;
        }
        for mut t in tasks {
            assert!(t.as_mut().poll(&mut cx) == Poll::Ready(()), "a task waited");
        }
    }
}

fn replies(s: &Service<Fake>) -> Vec<Response> {
    std::mem::take(&mut *s.host().replies.borrow_mut())
}

fn golden_files() -> (Vec<String>, Vec<Option<File>>) {
    let names = FILES.iter().map(|(n, _)| n.to_string()).collect();
    let files = FILES
        .iter()
        .map(|(_, b)| {
            Some(File {
                bytes: b.to_vec(),
                broken: false,
            })
        })
        .collect();
    (names, files)
}

fn add(s: &Rc<Service<Fake>>, names: Vec<String>, files: Vec<Option<File>>) {
    let req = Request::Add {
        origins: vec![Origin::Dropped; names.len()],
        names,
        options: ViewOptions::default(),
    };
    s.receive(&req.encode(), files);
}

fn hash_of(bytes: &[u8]) -> String {
    let mut h = Hasher::new();
    h.update(bytes);
    hex(&h.finalize())
}

#[test]
fn an_add_answers_the_tables_then_each_files_hash_in_a_task_of_its_own() {
    let s = Service::new(Fake::default());
    let (names, files) = golden_files();
    add(&s, names, files);
    assert!(
        replies(&s).is_empty(),
        "served in a task, not in the message's handler"
    );
    drain(&s);
    let got = replies(&s);
    let Response::Loaded { snapshot, .. } = &got[0] else {
        panic!("{:?}", got[0])
    };
    assert_eq!(snapshot.files.len(), 4);
    let unread = |i: &&repoprobe_core::Issue| i.kind == IssueKind::UnreadableFile;
    assert!(!snapshot.issues.iter().any(|i| unread(&i)));
    let hashes: Vec<Response> = FILES
        .iter()
        .map(|(n, b)| Response::Hashes(vec![(n.to_string(), hash_of(b))]))
        .collect();
    assert_eq!(got[1..], hashes);
    // Hashed once: a second load reads the files but does not hash them again.
    s.receive(
        &Request::Reload {
            options: ViewOptions::default(),
        }
        .encode(),
        Vec::new(),
    );
    drain(&s);
    let got = replies(&s);
    assert!(
        matches!(got.as_slice(), [Response::Loaded { .. }]),
        "{got:?}"
    );
}

#[test]
fn requests_are_served_in_order_each_seeing_what_the_ones_before_did() {
    let s = Service::new(Fake::default());
    let (names, files) = golden_files();
    add(&s, names, files);
    // Asked before the load ran: served after it, its texts read back from the files.
    s.receive(&ask(5, Ask::Question { id: "q1".into() }), Vec::new());
    drain(&s);
    let got = replies(&s);
    let Some(Response::Reply {
        id,
        body: Reply::Question(q),
    }) = got.iter().find(|r| matches!(r, Response::Reply { .. }))
    else {
        panic!("{got:?}")
    };
    assert_eq!(*id, 5, "the reply carries its ask's number");
    assert!(matches!(got[0], Response::Loaded { .. }), "{got:?}");
    assert_eq!(q.id, "q1");
    assert!(!q.answers.is_empty());
    assert!(
        q.answers.iter().all(|a| a.answer.is_some()),
        "texts read back"
    );
    assert_eq!(q.texts_error, None);
}

#[test]
fn a_message_that_is_no_request_is_rejected_and_said_on_the_console() {
    let s = Service::new(Fake::default());
    // A variant number no request has, a start script's message that is not one, and a
    // message that is neither bytes nor text (the binary's words).
    s.receive(&[0xff, 0xff, 0xff, 0x0f], Vec::new());
    s.receive_started("{\"nonsense\": 1}", Vec::new());
    s.reject("the worker got a message that is not [request, files]: \"x\"".into());
    let got = replies(&s);
    assert_eq!(got.len(), 3);
    assert!(got.iter().all(|r| matches!(r, Response::Rejected(_))));
    assert_eq!(s.host().logged.borrow().len(), 3);
    assert!(s.host().tasks.borrow().is_empty(), "nothing queued");
}

#[test]
fn a_file_the_browser_stops_reading_is_an_issue_at_its_byte_and_has_no_hash() {
    let s = Service::new(Fake::default());
    let (names, mut files) = golden_files();
    files[1].as_mut().unwrap().broken = true;
    add(&s, names, files);
    drain(&s);
    let got = replies(&s);
    let Response::Loaded { snapshot, .. } = &got[0] else {
        panic!("{:?}", got[0])
    };
    let unread = |i: &&repoprobe_core::Issue| i.kind == IssueKind::UnreadableFile;
    let issue = snapshot.issues.iter().find(unread).unwrap();
    assert_eq!(issue.file, "answers.jsonl");
    assert_eq!(issue.location, Place::Byte(CHUNK as u64));
    assert!(
        issue.message.ends_with("beyond this point: gone"),
        "{}",
        issue.message
    );
    let hashed: Vec<&str> = got[1..]
        .iter()
        .map(|r| match r {
            Response::Hashes(h) => h[0].0.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        hashed,
        [
            "benchmark.jsonl",
            "judgments.jsonl",
            "scalar_judgments.jsonl"
        ]
    );
}

#[test]
fn each_phase_is_measured_from_the_end_of_the_one_before_and_a_load_clears_the_last() {
    let s = Service::new(Fake::default());
    let (names, files) = golden_files();
    add(&s, names, files);
    drain(&s);
    let timing = std::mem::take(&mut *s.host().timing.borrow_mut());
    let load: Vec<&str> = timing.iter().map(String::as_str).collect();
    assert_eq!(
        load,
        [
            "clear",
            "mark rp:start",
            "mark rp:read+parse:end",
            "measure rp:read+parse rp:start rp:read+parse:end",
            "total rp:(wait)",
            "total rp:(copy)",
            "total rp:(parse)",
            "mark rp:snapshot:end",
            "measure rp:snapshot rp:read+parse:end rp:snapshot:end",
            "mark rp:score:end",
            "measure rp:score rp:snapshot:end rp:score:end",
            "mark rp:reply:end",
            "measure rp:reply rp:score:end rp:reply:end",
        ]
    );
    s.receive(&ask(6, Ask::Question { id: "q2".into() }), Vec::new());
    drain(&s);
    let timing = s.host().timing.borrow();
    assert_eq!(timing[0], "mark rp:question", "not cleared: {timing:?}");
    assert_eq!(timing[2], "measure rp:texts rp:question rp:texts:end");
}

/// Two runs of question q1 (models a and b) in a trajectories file and its index.
fn trajectories() -> (Vec<u8>, Vec<u8>) {
    let run = |model: &str, text: &str| {
        let mut t = Trajectory::new(TrajectoryAgent::default());
        t.push(Step::new(StepSource::Agent, text));
        let key = TrajectoryKey {
            question_id: "q1".into(),
            model: model.into(),
            attempt: 0,
        };
        (key, t)
    };
    let runs = [run("a", "the NEEDLE here"), run("b", "nothing")];
    let (bytes, index) = repoprobe_core::trajectories::file(&runs).unwrap();
    (bytes, serde_json::to_vec(&index).unwrap())
}

fn key(model: &str) -> TrajectoryKey {
    TrajectoryKey {
        question_id: "q1".into(),
        model: model.into(),
        attempt: 0,
    }
}

fn page_request(model: &str) -> Vec<u8> {
    let page = Ask::Trajectory {
        key: key(model),
        from: 0,
        kinds: StepKind::all().collect(),
        count: 10,
        head: false,
    };
    ask(1, page)
}

/// A view's ask numbered `id`, as the page writes it.
fn ask(id: u64, ask: Ask) -> Vec<u8> {
    Request::Ask { id, ask }.encode()
}

/// The bodies of replies, the numbers left out.
fn bodies(got: Vec<Response>) -> Vec<Reply> {
    got.into_iter()
        .map(|r| match r {
            Response::Reply { body, .. } => body,
            other => panic!("not a reply: {other:?}"),
        })
        .collect()
}

/// The worker started with the golden files downloaded and a trajectories file read by Range
/// requests from `url` (answering `status`), its index beside it.
fn started(status: u16) -> Rc<Service<Fake>> {
    let (lines, index) = trajectories();
    let url = "https://x.invalid/r.trajectories.jsonl";
    let fake = Fake {
        urls: BTreeMap::from([(url.to_string(), (status, lines.clone()))]),
        query: vec![("keep".into(), "1".into())],
        ..Fake::default()
    };
    let s = Service::new(fake);
    let (mut names, mut files) = golden_files();
    names.push("r.trajectories.index.json".into());
    files.push(Some(File {
        bytes: index,
        broken: false,
    }));
    let mut starts: Vec<StartFile> = names
        .iter()
        .zip(&files)
        .map(|(n, f)| StartFile {
            name: n.clone(),
            origin: Origin::Url,
            size: f.as_ref().unwrap().bytes.len(),
            ranged: None,
            note: None,
        })
        .collect();
    starts.push(StartFile {
        name: "r.trajectories.jsonl".into(),
        origin: Origin::Url,
        size: lines.len(),
        ranged: Some(url.into()),
        note: None,
    });
    // The ranged file's stand-in: not a file.
    files.push(None);
    let req = Request::Started(Started {
        files: starts,
        ..Started::default()
    });
    s.receive(&req.encode(), files);
    drain(&s);
    s
}

#[test]
fn the_start_scripts_files_load_under_the_start_query_and_a_ranged_run_reads_by_range() {
    let s = started(206);
    let got = replies(&s);
    let Response::Loaded {
        options, snapshot, ..
    } = &got[0]
    else {
        panic!("{:?}", got[0])
    };
    assert!(options.keep_bundled, "the start query's options");
    assert_eq!(
        snapshot.files.len(),
        4,
        "the index and the ranged file are not records"
    );
    let t = &snapshot.trajectories[0];
    assert!(t.ranged && t.runs == 2, "{t:?}");
    s.receive(&page_request("a"), Vec::new());
    drain(&s);
    let got = bodies(replies(&s));
    let [Reply::Trajectory(Ok(page))] = got.as_slice() else {
        panic!("{got:?}")
    };
    assert!(page.head.is_some(), "read: its outline comes with it");
    assert_eq!(page.steps.len(), 1);
    // The run held now: searched in, and paged without its outline.
    let search = Ask::TrajectorySearch {
        key: key("a"),
        query: "needle".into(),
    };
    s.receive(&ask(2, search), Vec::new());
    s.receive(&page_request("a"), Vec::new());
    drain(&s);
    let got = bodies(replies(&s));
    let [
        Reply::TrajectorySearch(Ok(steps)),
        Reply::Trajectory(Ok(page)),
    ] = got.as_slice()
    else {
        panic!("{got:?}")
    };
    assert_eq!(steps.len(), 1);
    assert!(page.head.is_none());
}

#[test]
fn a_server_that_answers_a_range_whole_is_an_error_of_that_run_and_a_missing_run_too() {
    let s = started(200);
    replies(&s);
    s.receive(&page_request("a"), Vec::new());
    s.receive(&page_request("nobody"), Vec::new());
    let compare = Ask::Compare {
        id: "q1".into(),
        a: ("a".into(), 0),
        b: ("nobody".into(), 0),
    };
    s.receive(&ask(3, compare), Vec::new());
    drain(&s);
    let got = bodies(replies(&s));
    let [
        Reply::Trajectory(Err(whole)),
        Reply::Trajectory(Err(missing)),
        Reply::Compare(c),
    ] = got.as_slice()
    else {
        panic!("{got:?}")
    };
    assert_eq!(*whole, RunError::Read(ReadError::NotRange(200)));
    assert_eq!(*missing, RunError::NotGiven);
    assert_eq!(
        missing.to_string(),
        "no trajectories file given holds this run"
    );
    assert_eq!(c.a.as_ref().unwrap_err(), whole);
    assert_eq!(c.b.as_ref().unwrap_err(), missing);
}

#[test]
fn a_search_over_every_run_answers_as_it_reads_and_a_stop_or_new_files_end_it() {
    let s = started(206);
    replies(&s);
    let search = |id, query: &str, regex| {
        let search = Ask::Search {
            query: query.into(),
            regex,
        };
        ask(id, search)
    };
    s.receive(&search(1, "needle", false), Vec::new());
    drain(&s);
    let got = replies(&s);
    assert!(
        got.iter()
            .all(|r| matches!(r, Response::Reply { id: 1, .. })),
        "every reply of a search carries its number: {got:?}"
    );
    let got = bodies(got);
    let Some(Reply::Search(last)) = got.last() else {
        panic!("{got:?}")
    };
    assert!(
        last.done && last.runs == 2 && last.runs_read == 2 && last.runs_hit == 1,
        "{last:?}"
    );
    let hits: usize = got
        .iter()
        .map(|r| match r {
            Reply::Search(s) => s.hits.len(),
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(hits, 1);
    // A bad expression is done at once, with why.
    s.receive(&search(2, "(", true), Vec::new());
    drain(&s);
    let got = bodies(replies(&s));
    let [Reply::Search(bad)] = got.as_slice() else {
        panic!("{got:?}")
    };
    assert!(bad.done && bad.errors.len() == 1, "{bad:?}");
    // Stopped before its task ran: it answers nothing more.
    s.receive(&search(3, "needle", false), Vec::new());
    s.receive(&Request::StopSearch.encode(), Vec::new());
    drain(&s);
    assert!(replies(&s).is_empty());
    // New files stop it too.
    s.receive(&search(4, "needle", false), Vec::new());
    add(&s, Vec::new(), Vec::new());
    drain(&s);
    let got = replies(&s);
    assert!(
        !got.iter().any(|r| matches!(r, Response::Reply { .. })),
        "{got:?}"
    );
}
