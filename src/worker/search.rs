//! One search over every step of every run (`?view=runs&q=…`): the trajectories files read a
//! batch of lines at a time (a `Blob` slice or an HTTP Range request, by the glue), each line
//! parsed, its steps' texts matched, and dropped before the next batch — the files are never
//! held. Plain text ignores ASCII case; a regular expression is `regex-lite`'s (the `regex`
//! crate's syntax without Unicode classes; linear time: no pattern can hang the worker). Each
//! hit names its run and step with the matched text in context; the runs with a hit filter the
//! Runs table.

use super::question::batch_ranges;
use super::trajectory::steps::step_text;
use super::trajectory::{Source, Store};
use crate::protocol::{SearchHit, TrajectoryKey};
use repoprobe_core::trajectories::read_line;

/// The most bytes one read brings (lines are never cut; a longer line is a read of its own).
pub const BATCH_BYTES: u64 = 4 << 20;
/// Hits listed per run (every run with a hit still filters the table).
pub const HITS_PER_RUN: usize = 3;
/// Hits listed in all; past this, runs with hits are still counted and filtered.
pub const MAX_HITS: usize = 1_000;
/// Characters of context on each side of a match.
const CONTEXT: usize = 60;

/// Some runs' lines of one trajectories file, read at once: `lines` are (run, start within the
/// read, length).
#[derive(Debug, Clone, PartialEq)]
pub struct RunLines<B> {
    pub file: String,
    pub source: Source<B>,
    pub offset: u64,
    pub length: u64,
    pub lines: Vec<(TrajectoryKey, u64, u64)>,
}

/// The runs' lines of every readable file of `store`, grouped into reads of at most `cap` bytes
/// (a longer line is a read of its own), in file order: what a search over every step of every
/// run reads, one read at a time. The grouping is `batch_ranges`', with no limit on the gap
/// (the lines between are runs too: all are read).
pub fn line_reads<B: Clone>(store: &Store<B>, cap: u64) -> Vec<RunLines<B>> {
    let mut out = Vec::new();
    for (file, source, entries) in store.lines() {
        let ranges: Vec<(u64, u64)> = entries
            .iter()
            .map(|e| (e.offset, e.offset + e.length))
            .collect();
        for read in batch_ranges(&ranges, u64::MAX, cap) {
            let lines = read
                .members
                .iter()
                .map(|&i| {
                    let e = &entries[i];
                    (e.key.clone(), e.offset - read.start, e.length)
                })
                .collect();
            out.push(RunLines {
                file: file.to_string(),
                source: source.clone(),
                offset: read.start,
                length: read.end - read.start,
                lines,
            });
        }
    }
    out
}

/// What is looked for.
#[derive(Debug)]
pub enum Matcher {
    /// Lower-cased: the text is compared lower-cased (ASCII), so byte positions agree.
    Plain(String),
    Regex(regex_lite::Regex),
}

/// Why a query is no search: empty, or not a regular expression the search reads.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("type something to search for")]
    Empty,
    /// Not a regular expression, or one too large (over the size limit).
    #[error("not a regular expression this search reads: {0}")]
    Regex(#[from] regex_lite::Error),
}

impl Matcher {
    /// The matcher of `query` (a regular expression when `regex`); why it is none.
    pub fn new(query: &str, regex: bool) -> Result<Matcher, QueryError> {
        if query.trim().is_empty() {
            return Err(QueryError::Empty);
        }
        if regex {
            Ok(regex_lite::RegexBuilder::new(query)
                .size_limit(1 << 20)
                .build()
                .map(Matcher::Regex)?)
        } else {
            Ok(Matcher::Plain(query.trim().to_ascii_lowercase()))
        }
    }

    /// The first match in `text`: its byte range.
    fn find(&self, text: &str) -> Option<(usize, usize)> {
        match self {
            Matcher::Plain(needle) => {
                let lower = text.to_ascii_lowercase();
                memchr::memmem::find(lower.as_bytes(), needle.as_bytes())
                    .map(|at| (at, at + needle.len()))
            }
            Matcher::Regex(r) => r
                .find(text)
                .filter(|m| !m.is_empty())
                .map(|m| (m.start(), m.end())),
        }
    }
}

/// What a search found so far.
#[derive(Debug, Default)]
pub struct Found {
    pub hits: Vec<SearchHit>,
    /// Every run with a hit, listed or not.
    pub runs: std::collections::HashSet<TrajectoryKey>,
    /// Lines that could not be read, in words.
    pub errors: Vec<String>,
}

/// Matches the lines of `batch` in `bytes` (the batch's read), adding to `found`.
pub fn search_batch<B>(batch: &RunLines<B>, bytes: &[u8], m: &Matcher, found: &mut Found) {
    for (key, start, length) in &batch.lines {
        let Some(line) = bytes.get(*start as usize..(*start + *length) as usize) else {
            found.errors.push(format!(
                "{}: the read ended before {}'s line",
                batch.file, key.question_id
            ));
            continue;
        };
        let t = match read_line(line) {
            Ok((_, t)) => t,
            Err(e) => {
                found
                    .errors
                    .push(format!("{}: a line could not be read: {e}", batch.file));
                continue;
            }
        };
        let mut listed = 0;
        for (i, step) in t.steps.iter().enumerate() {
            let text = step_text(step);
            let Some((a, b)) = m.find(&text) else {
                continue;
            };
            found.runs.insert(key.clone());
            if listed < HITS_PER_RUN && found.hits.len() < MAX_HITS {
                found.hits.push(hit(key, i as u64 + 1, &text, a, b));
                listed += 1;
            }
        }
    }
}

/// The hit at `a..b` of `text`, with up to [`CONTEXT`] characters on each side, on one line.
fn hit(key: &TrajectoryKey, step: u64, text: &str, a: usize, b: usize) -> SearchHit {
    let before = repoprobe_core::text::suffix(&text[..a], CONTEXT).0;
    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    SearchHit {
        key: key.clone(),
        step,
        before: flat(before),
        matched: flat(&text[a..b]),
        after: flat(repoprobe_core::text::prefix(&text[b..], CONTEXT).0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::model::trajectory::{Step, StepSource, Trajectory, TrajectoryAgent};
    use repoprobe_core::trajectories::file;

    fn run(q: &str, texts: &[&str]) -> (TrajectoryKey, Trajectory) {
        let mut t = Trajectory::new(TrajectoryAgent::default());
        for x in texts {
            t.push(Step::new(StepSource::Agent, *x));
        }
        let key = TrajectoryKey {
            question_id: q.into(),
            model: "m".into(),
            attempt: 0,
        };
        (key, t)
    }

    fn search(runs: &[(TrajectoryKey, Trajectory)], m: &Matcher, cap: u64) -> Found {
        let (bytes, index) = file(runs).unwrap();
        let mut store = super::super::trajectory::Store::<Vec<u8>>::default();
        let json = serde_json::to_vec(&index).unwrap();
        assert!(store.add("r.trajectories.jsonl", bytes.clone(), bytes.len() as u64));
        assert!(store.add("r.trajectories.index.json", json.clone(), json.len() as u64));
        for w in store.work() {
            if let super::super::trajectory::Work::ReadIndex { file, .. } = w {
                store.index_read(&file, Ok(json.clone()));
            }
        }
        let mut found = Found::default();
        let batches = line_reads(&store, cap);
        assert!(!batches.is_empty());
        for b in &batches {
            let read = &bytes[b.offset as usize..(b.offset + b.length) as usize];
            search_batch(b, read, m, &mut found);
        }
        found
    }

    #[test]
    fn a_string_in_one_step_of_one_run_is_found_there_in_any_batching() {
        let runs = vec![
            run("q1", &["nothing here", "cat src/lib.rs"]),
            run(
                "q2",
                &["ls", "the NEEDLE_42 is in step two", "and NEEDLE_42 again"],
            ),
            run("q3", &["needle_4 is not it"]),
        ];
        for cap in [1, 200, BATCH_BYTES] {
            let f = search(&runs, &Matcher::new("needle_42", false).unwrap(), cap);
            assert_eq!(f.runs.len(), 1, "cap {cap}");
            let steps: Vec<(String, u64)> = f
                .hits
                .iter()
                .map(|h| (h.key.question_id.clone(), h.step))
                .collect();
            assert_eq!(steps, [("q2".to_string(), 2), ("q2".to_string(), 3)]);
            assert_eq!(f.hits[0].matched, "NEEDLE_42");
            assert_eq!(f.hits[0].before, "the");
            assert_eq!(f.hits[0].after, "is in step two");
            assert!(f.errors.is_empty());
        }
        let f = search(
            &runs,
            &Matcher::new(r"needle_\d+ is", true).unwrap(),
            BATCH_BYTES,
        );
        let qs: std::collections::BTreeSet<&str> =
            f.runs.iter().map(|k| k.question_id.as_str()).collect();
        assert_eq!(
            qs,
            ["q3"].into(),
            "regex is case-sensitive unless asked: (?i)"
        );
        let f = search(
            &runs,
            &Matcher::new(r"(?i)needle_\d+ is", true).unwrap(),
            BATCH_BYTES,
        );
        assert_eq!(f.runs.len(), 2);
    }

    #[test]
    fn a_bad_query_says_why_and_context_is_cut_on_character_boundaries() {
        assert!(matches!(Matcher::new("  ", false), Err(QueryError::Empty)));
        let bad = Matcher::new("(", true).unwrap_err();
        assert!(matches!(bad, QueryError::Regex(_)), "{bad}");
        assert!(bad.to_string().contains("regular expression"));
        // No Unicode classes (`regex-lite`): said, not searched as something else.
        assert!(matches!(
            Matcher::new(r"\p{Greek}", true),
            Err(QueryError::Regex(_))
        ));
        let long = format!("{}ZZ{}", "é".repeat(100), "ü".repeat(100));
        let runs = vec![run("q", &[&long])];
        let f = search(&runs, &Matcher::new("zz", false).unwrap(), BATCH_BYTES);
        assert_eq!(f.hits[0].before.chars().count(), CONTEXT);
        assert_eq!(f.hits[0].after.chars().count(), CONTEXT);
        // `.` is a character, not a byte.
        let f = search(
            &[run("q", &["a xéy"])],
            &Matcher::new("x.", true).unwrap(),
            BATCH_BYTES,
        );
        assert_eq!(
            (f.hits[0].matched.as_str(), f.hits[0].after.as_str()),
            ("xé", "y")
        );
    }
}
