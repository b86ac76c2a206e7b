//! One question's data for its view: its judgments and answers with their texts, which a load
//! skips (scores never read them) and the worker reads back by byte range when the question is
//! first viewed ([`TextReads`]: which slices of which file, as few reads as serve them).

use crate::markdown;
use crate::protocol::QuestionData;
use repoprobe_core::sort::CollectTree;
use repoprobe_core::sort::SharedSort;
use repoprobe_core::{Answer, Dataset, RecordKind, Span};

/// Records this close together (bytes) are read back with one slice of their file: a slice
/// read costs a round trip to the browser, a few KB more cost nothing.
pub const GAP: u64 = 64 * 1024;
/// The most one slice read holds (bytes), so that a question whose records are spread over a
/// large file does not read all of it.
pub const MAX_READ: u64 = 8 * 1024 * 1024;

impl QuestionData {
    /// Question `id`'s records as the dataset holds them now (texts read back or not).
    pub fn of(d: &Dataset, id: &str) -> QuestionData {
        let answers: Vec<Answer> = d
            .answers
            .iter()
            .filter(|a| a.question_id == id)
            .cloned()
            .collect();
        QuestionData {
            id: id.to_string(),
            answers_md: answers
                .iter()
                .map(|a| markdown::parse(a.answer.as_deref().unwrap_or_default()))
                .collect(),
            reference_md: d
                .questions
                .iter()
                .find(|q| q.id == id)
                .map(|q| markdown::parse(&q.reference_answer)),
            judgments: d
                .judgments
                .iter()
                .filter(|j| j.question_id == id)
                .cloned()
                .collect(),
            answers,
            texts_error: None,
            trajectories: Vec::new(),
        }
    }
}

/// One read of a file that serves several records' byte ranges (see [`batch_ranges`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSpan {
    pub start: u64,
    pub end: u64,
    /// Indices into the ranges given, in the order of their starts.
    pub members: Vec<usize>,
}

/// Groups byte ranges `[start, end)` of one file into fewer reads: each read of a `Blob` slice
/// costs a round trip to the browser's file thread, so ranges less than `gap` bytes apart share
/// one read, as long as it stays within `max` bytes (a range longer than `max` is a read of its
/// own). Overlapping ranges are allowed; an empty or reversed range is a read of nothing.
pub fn batch_ranges(ranges: &[(u64, u64)], gap: u64, max: u64) -> Vec<ReadSpan> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.shared_sort_by_key(|&i| (ranges[i].0, ranges[i].1));
    let mut out: Vec<ReadSpan> = Vec::new();
    for i in order {
        let (start, end) = (ranges[i].0, ranges[i].1.max(ranges[i].0));
        match out.last_mut() {
            Some(b)
                if start <= b.end.saturating_add(gap)
                    && end.max(b.end).saturating_sub(b.start) <= max =>
            {
                b.end = b.end.max(end);
                b.members.push(i);
            }
            _ => out.push(ReadSpan {
                start,
                end,
                members: vec![i],
            }),
        }
    }
    out
}

/// A record whose texts the load skipped, and where it lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    pub kind: RecordKind,
    pub index: usize,
    pub span: Span,
}

/// The slices of one file that bring a question's skipped texts back: each [`ReadSpan`] one read,
/// with the records it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct TextReads<B> {
    pub blob: B,
    pub batches: Vec<(ReadSpan, Vec<Wanted>)>,
}

/// The records of question `id` in `d` whose texts are not read back yet (`filled`).
pub fn wanted(
    d: &Dataset,
    id: &str,
    filled: &std::collections::BTreeSet<(RecordKind, usize)>,
) -> Vec<Wanted> {
    let Some(spans) = d.spans.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut take = |kind: RecordKind, index: usize, spans: &[Span]| {
        if let Some(&span) = spans.get(index)
            && !filled.contains(&(kind, index))
        {
            out.push(Wanted { kind, index, span });
        }
    };
    for (i, a) in d.answers.iter().enumerate() {
        if a.question_id == id {
            take(RecordKind::Answer, i, &spans.answers);
        }
    }
    for (i, j) in d.judgments.iter().enumerate() {
        if j.question_id == id {
            take(RecordKind::Judgment, i, &spans.judgments);
        }
    }
    out
}

/// The reads, per file, that serve `wanted` (files by the loader's number, `sources`); a file
/// number with no source is said in `errors`.
pub fn plan<B: Clone>(
    wanted: &[Wanted],
    sources: &[B],
    errors: &mut Vec<String>,
) -> Vec<TextReads<B>> {
    let files: std::collections::BTreeSet<u32> = wanted.iter().map(|w| w.span.file).collect_set();
    let mut out = Vec::new();
    for file in files {
        let mine: Vec<Wanted> = wanted
            .iter()
            .filter(|w| w.span.file == file)
            .copied()
            .collect();
        let Some(blob) = sources.get(file as usize) else {
            errors.push(format!("no file number {file}"));
            continue;
        };
        let ranges: Vec<(u64, u64)> = mine.iter().map(|w| (w.span.start, w.span.end)).collect();
        let batches = batch_ranges(&ranges, GAP, MAX_READ)
            .into_iter()
            .map(|b| {
                let members = b.members.iter().map(|&m| mine[m]).collect();
                (b, members)
            })
            .collect();
        out.push(TextReads {
            blob: blob.clone(),
            batches,
        });
    }
    out
}

/// Why texts could not be read back, in one message (`None` when all were).
pub fn texts_error(errors: &[String]) -> Option<String> {
    errors.first().map(|first| {
        format!(
            "{} answer text(s) or rationale(s) could not be read back from the files (did a file change since it was loaded? load it again): {first}",
            errors.len()
        )
    })
}
