//! What the worker tells the page a load holds: the [`Snapshot`] every view lists from, computed
//! once per load (counts per file).

use crate::protocol::Snapshot;
use repoprobe_core::{Loaded, RecordKind};

impl Snapshot {
    /// The snapshot of a load (the worker's answer to every load; the build-time prerender's).
    pub fn of(l: &Loaded) -> Snapshot {
        let d = &l.dataset;
        Snapshot {
            files: l.files.clone(),
            issues: l.issues.clone(),
            notes: l.notes.clone(),
            counts: RecordKind::ALL
                .iter()
                .map(|&k| (k.bundle_key().to_string(), d.count(k)))
                .collect(),
            questions: d.questions.clone(),
            reported: d.reported.clone(),
            per_file: per_file(l),
            trajectories: Vec::new(),
            releases: Vec::new(),
            reviews: d.reviews.clone(),
        }
    }
}

/// Valid records per kind of each file of a load (from the records' spans; a load that kept
/// none says nothing).
fn per_file(l: &Loaded) -> Vec<Vec<(String, usize)>> {
    let Some(spans) = l.dataset.spans.as_ref() else {
        return Vec::new();
    };
    let n = l.files.len();
    let by_kind: Vec<(RecordKind, Vec<usize>)> = RecordKind::ALL
        .iter()
        .map(|&k| (k, spans.per_file(k, n)))
        .collect();
    (0..n)
        .map(|i| {
            by_kind
                .iter()
                .filter(|(_, c)| c[i] > 0)
                .map(|(k, c)| (k.bundle_key().to_string(), c[i]))
                .collect()
        })
        .collect()
}
