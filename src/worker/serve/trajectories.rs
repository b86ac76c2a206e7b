//! Requests over the trajectories files: a page of one run's steps (`trajectory_page`), a
//! search in the run held or over every run (`start_search`, a task beside the queue), two runs
//! side by side (`compare`). A run's line is read by its byte range (`read_range`).

use super::Service;
use crate::protocol::{
    Comparison, ReadError, Reply, RunError, SearchState, StepKind, TrajectoryKey, TrajectoryPage,
};
use crate::worker::host::{Host, Phases};
use crate::worker::trajectory::Source;
use crate::worker::trajectory::steps::FIRST_BYTES;
use crate::worker::{compare, search};
use repoprobe_core::sort::CollectTree;
use std::collections::BTreeSet;
use std::rc::Rc;

impl<H: Host> Service<H> {
    /// The bytes `offset..offset+length` of a trajectories file: a `Blob` slice, or an HTTP
    /// Range request to its URL (which must answer 206: the start script checked it does).
    async fn read_range(
        &self,
        source: Source<H::Blob>,
        offset: u64,
        length: u64,
    ) -> Result<Vec<u8>, ReadError> {
        match source {
            Source::Blob(b) => self.host.read_slice(&b, offset, offset + length).await,
            Source::Url(url) => self.host.fetch_range(&url, offset, length).await,
        }
    }

    /// A page of run `key`'s steps: its line read by range and parsed when it is not the run
    /// held (then its outline comes too), the search texts made after the answer is out.
    pub(super) async fn trajectory_page(
        self: Rc<Self>,
        ask: u64,
        key: TrajectoryKey,
        from: u64,
        kinds: Vec<StepKind>,
        count: usize,
        head: bool,
    ) {
        let mut phases = Phases::start(&self.host, "rp:trajectory", false);
        let held = self.worker.borrow().trajectories.held(&key).is_some();
        let mut opened = false;
        let page: Result<TrajectoryPage, RunError> = async {
            if !held {
                self.open(ask, &key, from, &kinds, count, &mut phases)
                    .await?;
                opened = true;
            }
            self.worker
                .borrow()
                .trajectories
                .held(&key)
                .map(|h| h.page(from, &kinds, count, head || opened))
                .ok_or(RunError::NotHeld)
        }
        .await;
        phases.end("rp:trajectory-page");
        self.reply_to(ask, Reply::Trajectory(page));
        phases.end("rp:trajectory-reply");
        if opened {
            if let Some(h) = self.worker.borrow_mut().trajectories.held_mut(&key) {
                h.prepare_search();
            }
            phases.end("rp:trajectory-search-texts");
        }
    }

    /// Reads run `key`'s line and holds it; a long line's first page is answered from its
    /// first bytes meanwhile.
    async fn open(
        &self,
        ask: u64,
        key: &TrajectoryKey,
        from: u64,
        kinds: &[StepKind],
        count: usize,
        phases: &mut Phases<'_, H>,
    ) -> Result<(), RunError> {
        let at = self.worker.borrow().trajectories.find(key);
        let at = at.ok_or(RunError::NotGiven)?;
        if at.length > FIRST_BYTES
            && let Ok(first) = self
                .read_range(at.source.clone(), at.offset, FIRST_BYTES)
                .await
        {
            let preview = self
                .worker
                .borrow()
                .trajectories
                .preview(key, &at.file, &first, from, kinds, count);
            if let Some(page) = preview {
                self.reply_to(ask, Reply::Trajectory(Ok(page)));
                phases.end("rp:trajectory-first-page");
            }
        }
        let bytes = self.read_range(at.source, at.offset, at.length).await?;
        phases.end("rp:trajectory-read");
        self.worker
            .borrow_mut()
            .trajectories
            .open(key, &at.file, &bytes)?;
        phases.end("rp:trajectory-parse");
        Ok(())
    }

    /// A search in the steps of the run held.
    pub(super) fn trajectory_search(&self, ask: u64, key: TrajectoryKey, query: String) {
        let mut phases = Phases::start(&self.host, "rp:trajectory-search", false);
        let steps = self
            .worker
            .borrow_mut()
            .trajectories
            .held_mut(&key)
            .map(|h| h.search(&query))
            .ok_or(RunError::NotHeld);
        phases.end("rp:trajectory-search");
        self.reply_to(ask, Reply::TrajectorySearch(steps));
    }

    /// Starts a search over every step of every run held, as a task of its own (the queue
    /// goes on serving: the Runs table is asked for as hits come): a batch of lines read at a
    /// time, a `Search` reply after each (each with the ask's number), the last `done`.
    pub(super) fn start_search(self: Rc<Self>, id: u64, query: String, regex: bool) {
        self.stop_search();
        let n = self.search.get();
        let mut state = SearchState {
            query: query.clone(),
            regex,
            ..SearchState::default()
        };
        let matcher = match search::Matcher::new(&query, regex) {
            Ok(m) => m,
            Err(why) => {
                state.done = true;
                state.errors.push(why.to_string());
                return self.reply_to(id, Reply::Search(state));
            }
        };
        let batches = {
            let mut w = self.worker.borrow_mut();
            w.search = Some((query, regex, search::Found::default()));
            search::line_reads(&w.trajectories, search::BATCH_BYTES)
        };
        state.bytes = batches.iter().map(|b| b.length).sum();
        state.runs = batches.iter().map(|b| b.lines.len()).sum();
        let me = Rc::clone(&self);
        self.host.spawn(async move {
            let mut phases = Phases::start(&me.host, "rp:search", false);
            for b in batches {
                if me.search.get() != n {
                    // Stopped, or another search or new files: the page knows.
                    return;
                }
                let read = me.read_range(b.source.clone(), b.offset, b.length).await;
                let (hits, runs_hit, errors) = me.search_batch(&b, read, &matcher);
                if me.search.get() != n {
                    return;
                }
                state.bytes_read += b.length;
                state.runs_read += b.lines.len();
                state.runs_hit = runs_hit;
                state.hits = hits;
                state.errors = errors;
                me.reply_to(id, Reply::Search(state.clone()));
            }
            phases.end("rp:search");
            state.done = true;
            state.hits.clear();
            state.errors.clear();
            me.reply_to(id, Reply::Search(state));
        });
    }

    /// Matches batch `b`'s lines (or says why they could not be read): the hits and errors
    /// new with it, and how many runs have hit so far.
    fn search_batch(
        &self,
        b: &search::RunLines<H::Blob>,
        read: Result<Vec<u8>, ReadError>,
        matcher: &search::Matcher,
    ) -> (Vec<crate::protocol::SearchHit>, usize, Vec<String>) {
        let mut w = self.worker.borrow_mut();
        let Some((_, _, found)) = w.search.as_mut() else {
            return (Vec::new(), 0, Vec::new());
        };
        let (listed, errors) = (found.hits.len(), found.errors.len());
        match &read {
            Ok(bytes) => search::search_batch(b, bytes, matcher, found),
            Err(e) => found.errors.push(format!("{}: {e}", b.file)),
        }
        (
            found.hits[listed..].to_vec(),
            found.runs.len(),
            found.errors[errors..].to_vec(),
        )
    }

    /// Two runs of question `id` side by side: each one's line read (by slice or range) and
    /// laid out by `worker::compare`; one that cannot be read says why beside the other.
    pub(super) async fn compare(
        self: Rc<Self>,
        ask: u64,
        id: String,
        a: (String, u32),
        b: (String, u32),
    ) {
        let evidence: BTreeSet<String> = self
            .worker
            .borrow()
            .loaded()
            .dataset
            .question(&id)
            .map(|q| {
                q.checklist
                    .iter()
                    .flat_map(|c| c.evidence.iter().map(|e| e.path.clone()))
                    .collect_set()
            })
            .unwrap_or_default();
        let key = |(model, attempt): (String, u32)| TrajectoryKey {
            question_id: id.clone(),
            model,
            attempt,
        };
        let mut a = self.side(key(a), &evidence).await;
        let mut b = self.side(key(b), &evidence).await;
        if let (Ok(a), Ok(b)) = (a.as_mut(), b.as_mut()) {
            compare::only(a, b);
        }
        self.reply_to(
            ask,
            Reply::Compare(Box::new(Comparison {
                id,
                evidence: evidence.into_iter().collect(),
                a,
                b,
            })),
        );
    }

    /// One side of a comparison: run `key` read and laid out.
    async fn side(
        &self,
        key: TrajectoryKey,
        evidence: &BTreeSet<String>,
    ) -> Result<crate::protocol::CompareSide, RunError> {
        let at = self.worker.borrow().trajectories.find(&key);
        let at = at.ok_or(RunError::NotGiven)?;
        let bytes = self.read_range(at.source, at.offset, at.length).await?;
        let (_, t) = repoprobe_core::trajectories::read_line(&bytes)?;
        Ok(compare::side(key, &t, evidence))
    }
}
