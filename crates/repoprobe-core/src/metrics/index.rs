//! The frame every grid is laid on: the benchmark's questions in id order. Its own module so
//! that the grid and the weights, which both need it, need not import each other.

use crate::dataset::Dataset;
use crate::model::Question;
use crate::sort::SharedSort;
// Fx: the ids are the file's, not an attacker's keys into a long-lived table, and this is
// looked up once per record scored.
use rustc_hash::FxHashMap as HashMap;

/// The questions sorted by id, with a lookup from id; the frame every grid is laid on.
#[derive(Debug)]
pub struct Index<'d> {
    pub questions: Vec<&'d Question>,
    pub by_id: HashMap<&'d str, u32>,
}

impl<'d> Index<'d> {
    pub fn new(ds: &'d Dataset) -> Self {
        let mut questions: Vec<&Question> = ds.questions.iter().collect();
        questions.shared_sort_by(|a, b| a.id.cmp(&b.id));
        let by_id = questions
            .iter()
            .enumerate()
            .map(|(i, q)| (q.id.as_str(), i as u32))
            .collect();
        Index { questions, by_id }
    }
}
