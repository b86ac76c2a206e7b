//! Requests that need texts the load skipped: a question's view, the Judges view's
//! disagreements, a grader's judgments. The texts are read back by byte range first
//! (`fill_reads`), every slice asked for at once.

use super::Service;
use crate::protocol::{GradesOfAnswer, JudgesAnswer, Reply, ViewOptions};
use crate::worker::host::{Host, Phases};
use crate::worker::judges;
use crate::worker::question::{TextReads, texts_error};
use std::rc::Rc;

impl<H: Host> Service<H> {
    /// Reads `reads` (every slice asked for at once: the browser reads them while none is
    /// waited on) and puts their texts back; `errors` and what could not be read (a file
    /// changed since it was loaded), returned.
    async fn fill_reads(
        &self,
        reads: Vec<TextReads<H::Blob>>,
        mut errors: Vec<String>,
    ) -> Vec<String> {
        for file in reads {
            let pending: Vec<_> = file
                .batches
                .iter()
                .map(|(b, _)| self.host.read_slice(&file.blob, b.start, b.end))
                .collect();
            for ((batch, wanted), read) in file.batches.iter().zip(pending) {
                match read.await {
                    Ok(bytes) => {
                        self.worker
                            .borrow_mut()
                            .fill(batch.start, wanted, &bytes, &mut errors)
                    }
                    Err(e) => errors.push(e.to_string()),
                }
            }
        }
        errors
    }

    /// Question `id`'s data, its texts read back first.
    pub(super) async fn question(self: Rc<Self>, ask: u64, id: String) {
        let mut phases = Phases::start(&self.host, "rp:question", false);
        let (reads, errors) = self.worker.borrow().text_reads(&id);
        let errors = self.fill_reads(reads, errors).await;
        phases.end("rp:texts");
        let q = self.worker.borrow().question(&id, &errors);
        phases.end("rp:question-data");
        self.reply_to(ask, Reply::Question(q));
        phases.end("rp:question-reply");
    }

    /// The agreement between judges A and B (every judge where `None`), the rationales of the
    /// disagreements shown read back first (the load skipped them); the report computed again
    /// with them, every figure the same.
    pub(super) async fn judges(
        self: Rc<Self>,
        ask: u64,
        options: ViewOptions,
        a: Option<String>,
        b: Option<String>,
    ) {
        let mut phases = Phases::start(&self.host, "rp:judges", false);
        let cluster = options.cluster;
        let report_now = || {
            let worker = self.worker.borrow();
            judges::report(&worker.loaded().dataset, a.clone(), b.clone(), cluster)
        };
        let mut error = None;
        let report = match report_now() {
            Ok(r) => {
                let (reads, errors) = self.worker.borrow().judges_reads(&r);
                let read_any = !reads.is_empty();
                let errors = self.fill_reads(reads, errors).await;
                phases.end("rp:judges-texts");
                error = texts_error(&errors);
                if read_any { report_now() } else { Ok(r) }
            }
            Err(e) => Err(e),
        };
        phases.end("rp:judges");
        self.reply_to(
            ask,
            Reply::Judges(Box::new(JudgesAnswer {
                report,
                texts_error: error,
            })),
        );
    }

    /// The grades in `judge`'s run-0 judgments (a grader's file loaded), their rationales read
    /// back first (the load skipped them).
    pub(super) async fn grades_of(self: Rc<Self>, ask: u64, judge: String) {
        let (reads, errors) = self.worker.borrow().grade_reads(&judge);
        let errors = self.fill_reads(reads, errors).await;
        let grades = repoprobe_core::grading::grades_of(
            &self.worker.borrow().loaded().dataset.judgments,
            &judge,
        );
        self.reply_to(
            ask,
            Reply::GradesOf(Box::new(GradesOfAnswer {
                grades: grades.into_iter().collect(),
                texts_error: texts_error(&errors),
            })),
        );
    }
}
