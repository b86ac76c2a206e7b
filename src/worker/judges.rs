//! The Judges view's data (`?view=judges`): the core's agreement between judges
//! (`metrics::judges`, what `repoprobe judge-agreement` prints) over the dataset loaded, with the
//! bootstrap of the leaderboard, and the judgments whose rationales the view shows — those of
//! the first [`SHOWN`] disagreements of each pair —, which a load skips and the worker reads
//! back by byte range as for a question's view.

use super::question::Wanted;
use repoprobe_core::metrics::cluster::Cluster;
use repoprobe_core::metrics::judges::{JudgesOptions, JudgesReport, UnknownJudge, judges};
use repoprobe_core::{Dataset, RecordKind, ScoreOptions};
use std::collections::BTreeSet;

/// Disagreements shown per pair (largest gap first), their rationales read back.
pub const SHOWN: usize = 20;

/// Judge A against judge B (every judge where `None`), bootstrap and seed as the
/// leaderboard's defaults, whole `cluster`s resampled as the view's switch says (`&cluster=`,
/// the CLI's `judges --cluster`).
pub fn options(a: Option<String>, b: Option<String>, cluster: Cluster) -> JudgesOptions {
    let score = ScoreOptions::default();
    JudgesOptions {
        a,
        b,
        bootstrap: score.bootstrap,
        seed: score.seed,
        cluster,
    }
}

/// The core's report, or why there is none (a judge not in the files).
pub fn report(
    d: &Dataset,
    a: Option<String>,
    b: Option<String>,
    cluster: Cluster,
) -> Result<JudgesReport, UnknownJudge> {
    judges(d, &options(a, b, cluster))
}

/// The judgments (run 0) behind the first [`SHOWN`] disagreements of each pair whose texts are
/// not read back yet (`filled`): the first of each key, as the core reads them.
pub fn wanted(
    d: &Dataset,
    r: &JudgesReport,
    filled: &BTreeSet<(RecordKind, usize)>,
) -> Vec<Wanted> {
    let Some(spans) = d.spans.as_ref() else {
        return Vec::new();
    };
    let mut keys: BTreeSet<(&str, &str, u32, &str)> = BTreeSet::new();
    for p in &r.pairs {
        for x in p.disagreements.iter().take(SHOWN) {
            for judge in [p.a.as_str(), p.b.as_str()] {
                keys.insert((x.question_id.as_str(), x.model.as_str(), x.attempt, judge));
            }
        }
    }
    let mut out = Vec::new();
    for (i, j) in d.judgments.iter().enumerate() {
        if j.judge_run != 0 {
            continue;
        }
        let key = (
            j.question_id.as_str(),
            j.model.as_str(),
            j.attempt,
            j.judge.as_str(),
        );
        // The first judgment of a key is the one the core reads.
        if !keys.remove(&key) || filled.contains(&(RecordKind::Judgment, i)) {
            continue;
        }
        if let Some(&span) = spans.judgments.get(i) {
            out.push(Wanted {
                kind: RecordKind::Judgment,
                index: i,
                span,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;
    use repoprobe_core::metrics::cluster::Cluster;

    #[test]
    fn the_report_is_the_cores_with_the_leaderboards_bootstrap() {
        let l = golden();
        let r = report(&l.dataset, None, None, Cluster::Repo).unwrap();
        assert_eq!(r, judges(&l.dataset, &JudgesOptions::default()).unwrap());
        assert_eq!((r.bootstrap, r.seed, r.cluster), (1000, 0, Cluster::Repo));
        assert!(
            report(
                &l.dataset,
                Some("no such judge".into()),
                None,
                Cluster::Repo
            )
            .is_err()
        );
    }
}
