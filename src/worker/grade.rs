//! The Grade view's data (`?view=grade`): which answers a person grades — the core's
//! `grading::sample` of those a judge judged in run 0 —, the judges to choose from, and a
//! grader's judgments in the files (`human:NAME`) as grades, their rationales read back by byte
//! range as for a question's view. The texts a grader reads (question, answer, the judge's
//! verdict) come with the question's data (`Ask::Question`).

use super::question::Wanted;
use crate::protocol::GradeAnswer;
use repoprobe_core::grading::{HUMAN_PREFIX, Sample, sample};
use repoprobe_core::{Dataset, RecordKind};
use std::collections::{BTreeMap, BTreeSet};

/// Every judge of `d` and its number of judgments (any run), by name.
pub fn judges(d: &Dataset) -> Vec<(String, usize)> {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for j in &d.judgments {
        *n.entry(j.judge.as_str()).or_default() += 1;
    }
    n.into_iter().map(|(j, c)| (j.to_string(), c)).collect()
}

/// The judge graded when none is asked: the one with the most judgments that is not a person's
/// (`human:*`; the first by name on a tie), else the first judge.
pub fn default_judge(judges: &[(String, usize)]) -> Option<String> {
    let mut best: Option<&(String, usize)> = None;
    for j in judges.iter().filter(|(j, _)| !j.starts_with(HUMAN_PREFIX)) {
        if best.is_none_or(|b| j.1 > b.1) {
            best = Some(j);
        }
    }
    best.or(judges.first()).map(|(j, _)| j.clone())
}

/// The answer to a `Grade` request: the sample of the judge asked (the default where `None`).
pub fn answer(d: &Dataset, judge: Option<String>, s: Sample) -> GradeAnswer {
    let all = judges(d);
    let chosen = judge.or_else(|| default_judge(&all));
    let drawn = chosen
        .as_deref()
        .map(|j| sample(d, j, &s))
        .unwrap_or_default();
    GradeAnswer {
        judges: all,
        chosen,
        drawn,
    }
}

/// The run-0 judgments of `judge` whose texts are not read back yet (`filled`): a grader's file
/// taken as grades needs its rationales.
pub fn wanted(d: &Dataset, judge: &str, filled: &BTreeSet<(RecordKind, usize)>) -> Vec<Wanted> {
    let Some(spans) = d.spans.as_ref() else {
        return Vec::new();
    };
    d.judgments
        .iter()
        .enumerate()
        .filter(|(i, j)| {
            j.judge == judge && j.judge_run == 0 && !filled.contains(&(RecordKind::Judgment, *i))
        })
        .filter_map(|(i, _)| {
            spans.judgments.get(i).map(|&span| Wanted {
                kind: RecordKind::Judgment,
                index: i,
                span,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;

    #[test]
    fn the_default_judge_is_the_busiest_not_a_person_and_the_sample_is_the_cores() {
        let j = |v: &[(&str, usize)]| -> Vec<(String, usize)> {
            v.iter().map(|(a, n)| (a.to_string(), *n)).collect()
        };
        assert_eq!(
            default_judge(&j(&[("human:ann", 99), ("m1", 3), ("m2", 5), ("m3", 5)])),
            Some("m2".into())
        );
        assert_eq!(
            default_judge(&j(&[("human:ann", 1), ("human:bob", 2)])),
            Some("human:ann".into())
        );
        assert_eq!(default_judge(&[]), None);
        let l = golden();
        let s = Sample::Drawn {
            per_model: 2,
            seed: 3,
        };
        let a = answer(&l.dataset, None, s.clone());
        let chosen = a.chosen.clone().expect("a judge");
        assert_eq!(Some(chosen.clone()), default_judge(&a.judges));
        assert_eq!(a.drawn, sample(&l.dataset, &chosen, &s));
        assert!(!a.drawn.answers.is_empty());
        let none = answer(&l.dataset, Some("nobody".into()), s);
        assert!(none.drawn.answers.is_empty());
    }

    #[test]
    fn a_graders_judgments_are_wanted_until_read_back() {
        // Texts skipped, as the worker loads: the spans known.
        let sources: Vec<repoprobe_core::SourceFile> = crate::worker::testdata::FILES
            .iter()
            .map(|(name, bytes)| repoprobe_core::SourceFile { name, bytes })
            .collect();
        let l = repoprobe_core::load(
            &sources,
            repoprobe_core::LoadOptions {
                skip_text: true,
                ..Default::default()
            },
        );
        let judge = l.dataset.judgments[0].judge.clone();
        let w = wanted(&l.dataset, &judge, &BTreeSet::new());
        let runs0 = l
            .dataset
            .judgments
            .iter()
            .filter(|j| j.judge == judge && j.judge_run == 0)
            .count();
        assert_eq!(w.len(), runs0);
        let filled: BTreeSet<_> = w.iter().map(|w| (w.kind, w.index)).collect();
        assert!(wanted(&l.dataset, &judge, &filled).is_empty());
    }
}
