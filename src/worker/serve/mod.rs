//! The worker's requests served (`Service`): one at a time and in order (serving one may wait
//! for the browser, and a `Question` after an `Add` must see the new data), each answered
//! through the `Host`; hashing and the search over every run run as tasks beside the queue.
//! The binary only hands it each message (`receive`). `load.rs`: files added, loads, hashes;
//! `texts.rs`: what reads texts back; `trajectories.rs`: a run's pages, the search, two runs side by side.

mod load;
#[cfg(test)]
mod tests;
mod texts;
mod trajectories;

use super::host::{Host, Phases};
use super::{Worker, grade, scoring};
use crate::protocol::{Ask, Malformed, Reply, Request, Response, Started, ViewOptions};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

/// A request's files, by position (`None`: not a file).
type Files<H> = Vec<Option<<H as Host>::Blob>>;

/// The worker as it serves: what it holds, its queue, and the tasks beside it.
pub struct Service<H: Host> {
    host: H,
    worker: RefCell<Worker<H::Blob>>,
    /// Requests not served yet, in order, each with its files.
    queue: RefCell<VecDeque<(Request, Files<H>)>>,
    serving: Cell<bool>,
    /// Whether a task is hashing files (see `hash_in_background`).
    hashing: Cell<bool>,
    /// The search over every run that may go on: a task whose number is no longer this one
    /// stops at its next read (a new search, a stop, new files).
    search: Cell<u64>,
}

impl<H: Host> Service<H> {
    pub fn new(host: H) -> Rc<Self> {
        Rc::new(Service {
            host,
            worker: RefCell::new(Worker::default()),
            queue: RefCell::new(VecDeque::new()),
            serving: Cell::new(false),
            hashing: Cell::new(false),
            search: Cell::new(0),
        })
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    fn reply(&self, r: &Response) {
        self.host.reply(r);
    }

    /// A message that is not a request: said to the page (which reports it) and on this
    /// worker's console, never dropped silently.
    pub fn reject(&self, why: String) {
        self.host.log_error(&why);
        self.reply(&Response::Rejected(why));
    }

    /// A message: the request's bytes ([`Request::encode`]) and its files. Queued, and served
    /// after those before.
    pub fn receive(self: &Rc<Self>, bytes: &[u8], blobs: Files<H>) {
        self.take(Request::decode(bytes), blobs);
    }

    /// The start script's message (JSON, [`Started::from_script`]) and the files it fetched.
    pub fn receive_started(self: &Rc<Self>, text: &str, blobs: Files<H>) {
        self.take(Started::from_script(text).map(Request::Started), blobs);
    }

    fn take(self: &Rc<Self>, req: Result<Request, Malformed>, blobs: Files<H>) {
        let req = match req {
            Ok(req) => req,
            Err(e) => return self.reject(e.to_string()),
        };
        self.queue.borrow_mut().push_back((req, blobs));
        if !self.serving.replace(true) {
            let me = Rc::clone(self);
            self.host.spawn(async move {
                loop {
                    let next = me.queue.borrow_mut().pop_front();
                    let Some((req, blobs)) = next else { break };
                    Rc::clone(&me).serve(req, blobs).await;
                }
                me.serving.set(false);
            });
        }
    }

    /// Serves one request.
    async fn serve(self: Rc<Self>, req: Request, blobs: Files<H>) {
        match req {
            Request::Started(s) => self.started(s, blobs).await,
            Request::Add {
                names,
                origins,
                options,
            } => {
                let blobs = blobs.into_iter().flatten().collect();
                self.add(names, &origins, blobs, options).await
            }
            Request::Reload { options } => self.reload(options).await,
            Request::Score { options } => self.score(options),
            Request::Ask { id, ask } => self.answer(id, ask).await,
            Request::StopSearch => self.stop_search(),
        }
    }

    /// Answers a view's ask numbered `id` (each reply carries that number).
    async fn answer(self: Rc<Self>, id: u64, ask: Ask) {
        match ask {
            Ask::Items { options, model } => {
                let items = scoring::items(self.worker.borrow().loaded(), &options, model.as_ref());
                self.reply_to(id, Reply::Items(items));
            }
            Ask::Question { id: q } => self.question(id, q).await,
            Ask::Trajectory {
                key,
                from,
                kinds,
                count,
                head,
            } => {
                self.trajectory_page(id, key, from, kinds, count, head)
                    .await
            }
            Ask::TrajectorySearch { key, query } => self.trajectory_search(id, key, query),
            Ask::Runs { options, query } => {
                let mut phases = Phases::start(&self.host, "rp:runs", false);
                let page = self.worker.borrow_mut().runs(&options, &query);
                phases.end("rp:runs");
                self.reply_to(id, Reply::Runs(page));
            }
            Ask::Search { query, regex } => self.start_search(id, query, regex),
            Ask::Compare { id: q, a, b } => self.compare(id, q, a, b).await,
            Ask::Judges { options, a, b } => self.judges(id, options, a, b).await,
            Ask::Grade {
                options: _,
                judge,
                sample,
            } => {
                let w = self.worker.borrow();
                let answer = grade::answer(&w.loaded().dataset, judge, sample);
                drop(w);
                self.reply_to(id, Reply::Grade(Box::new(answer)));
            }
            Ask::GradesOf { options: _, judge } => self.grades_of(id, judge).await,
            Ask::Paired { options, a, b } => {
                let report = scoring::paired(self.worker.borrow().loaded(), &options, &a, &b);
                self.reply_to(id, Reply::Paired(Box::new(report)));
            }
        }
    }

    /// A reply to the ask numbered `id`.
    fn reply_to(&self, id: u64, body: Reply) {
        self.reply(&Response::Reply { id, body });
    }

    /// A new report for `options`: the tables, then (if they were deferred) the intervals.
    fn score(&self, options: ViewOptions) {
        let (report, pending) = scoring::first_report(self.worker.borrow().loaded(), &options);
        self.reply(&Response::Report {
            options: options.clone(),
            report,
            intervals_pending: pending,
        });
        if pending {
            let mut phases = Phases::start(&self.host, "rp:score-request", false);
            self.send_intervals(options, &mut phases);
        }
    }

    /// Answers the intervals `scoring::first_report` deferred: the whole report, as a `Report`.
    fn send_intervals(&self, options: ViewOptions, phases: &mut Phases<'_, H>) {
        let report = scoring::report(self.worker.borrow().loaded(), &options, None);
        phases.end("rp:intervals");
        self.reply(&Response::Report {
            options,
            report,
            intervals_pending: false,
        });
        phases.end("rp:intervals-reply");
    }

    /// Stops the search under way, if any (its task stops at its next read).
    fn stop_search(&self) {
        self.search.set(self.search.get() + 1);
    }
}
