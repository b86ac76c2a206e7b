//! For the parts' tests: a file cut in chunks of a given size into one batch, and each unit
//! told as a line of text, so that a test reads as what the splitter hands on.

use super::Splitter;
use super::cut::{CutBatch, Output, What};

/// An output that keeps every unit in one batch.
#[derive(Default)]
pub(super) struct Sink {
    pub(super) batch: CutBatch,
    /// Units done so far (as `unit_done` was called).
    pub(super) done: usize,
}

impl Output for Sink {
    fn batch(&mut self) -> &mut CutBatch {
        &mut self.batch
    }

    fn unit_done(&mut self) {
        self.done += 1;
    }
}

/// `bytes` fed to a splitter `chunk` bytes at a time, then finished: the splitter's shape and
/// each unit, told as `record <location> @<line>:<column> <text>`, `whole <text>`,
/// `issue <kind> <message>` (`fatal` when it ends the file) or `void <message>`.
pub(super) fn cut(bytes: &[u8], chunk: usize) -> (&'static str, Vec<String>) {
    let mut sink = Sink::default();
    let mut splitter = Splitter::new(0);
    for piece in bytes.chunks(chunk.max(1)) {
        splitter.feed(piece, &mut sink);
    }
    splitter.finish(&mut sink);
    let told = sink
        .batch
        .units
        .iter()
        .map(|u| {
            let text = String::from_utf8_lossy(&sink.batch.buf[u.range.clone()]);
            match &u.what {
                What::Record { location, .. } => {
                    format!("record {location:?} @{}:{} {text}", u.at.line, u.at.column)
                }
                What::Whole => format!("whole {text}"),
                What::Issue { issue, fatal } => {
                    let end = if *fatal { "fatal " } else { "" };
                    format!("issue {end}{:?} {}", issue.kind, issue.message)
                }
                What::Void(issue) => format!("void {}", issue.message),
            }
        })
        .collect();
    (splitter.shape(), told)
}

/// The same units whatever the chunks' size: what every test of the parts also checks.
pub(super) fn cut_every_way(bytes: &[u8]) -> (&'static str, Vec<String>) {
    let whole = cut(bytes, bytes.len());
    for chunk in 1..bytes.len().min(40) {
        assert_eq!(cut(bytes, chunk), whole, "in chunks of {chunk}");
    }
    whole
}
