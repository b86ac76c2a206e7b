//! The dataset a load gives: the valid records of every file, kind by kind, with what the load
//! kept beside them (raw texts, spans), and the load's entry points ([`load()`],
//! [`StreamLoader`]), which read records with [`mod@crate::load`] and assemble them with the
//! rules that need more than one record (unknown question, items against the checklist,
//! duplicate keys, judgments of failed runs, in `assemble`): every valid record kept, every
//! other one reported.

mod assemble;

use crate::issue::{Issue, Severity};
use crate::load::{FileSummary, Finished, Record, RecordKind, RecordStream, SourceFile, Span};
use crate::model::*;
use assemble::Assembler;
use serde_json::value::RawValue;

/// Kept here too: the options were the dataset's before reading and assembling were layered.
pub use crate::load::LoadOptions;

/// The valid records of every loaded file, in input order.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub questions: Vec<Question>,
    pub answers: Vec<Answer>,
    pub judgments: Vec<Judgment>,
    pub scalar_judgments: Vec<ScalarJudgment>,
    pub failure_labels: Vec<FailureLabel>,
    pub reported: Vec<ReportedValue>,
    /// Reviews of candidate questions (docs/format.md#review), in input order.
    pub reviews: Vec<Review>,
    /// Each kept record's JSON text, unknown fields included, parallel to the vectors above;
    /// present only when loaded with [`LoadOptions::keep_raw`].
    pub raw: Option<RawRecords>,
    /// Where each kept record lies in its file, parallel to the vectors above; present when
    /// loaded with [`LoadOptions::skip_text`], so that the texts it skipped can be read back
    /// ([`Dataset::fill_texts`]).
    pub spans: Option<Spans>,
}

/// Why a window of creation dates could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowError {
    #[error("{} is not a date: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ", crate::text::quote(.0))]
    NotADate(String),
    /// The window holds no question: its sentence ([`CreatedWindow::sentence`]).
    #[error("{0}: nothing to score")]
    Empty(String),
}

/// Why the texts of a record could not be put back ([`Dataset::fill_texts`]): the file changed
/// since it was loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextsError {
    #[error("the {0} at this place is unreadable now: {1}")]
    Unreadable(&'static str, crate::issue::Problem),
    #[error("another {0} is at this place now: the file changed")]
    Changed(&'static str),
    #[error("no {0} number {1}")]
    NoSuchRecord(&'static str, usize),
}

impl Dataset {
    /// The dataset without the questions named in `drop` and every record about them (answers,
    /// judgments, scalar judgments, failure labels, reviews); reported values are kept. Raw texts are
    /// not carried over.
    pub fn without_questions(&self, drop: &std::collections::BTreeSet<String>) -> Dataset {
        let keep = |id: &String| !drop.contains(id);
        Dataset {
            questions: self
                .questions
                .iter()
                .filter(|q| keep(&q.id))
                .cloned()
                .collect(),
            answers: self
                .answers
                .iter()
                .filter(|a| keep(&a.question_id))
                .cloned()
                .collect(),
            judgments: self
                .judgments
                .iter()
                .filter(|j| keep(&j.question_id))
                .cloned()
                .collect(),
            scalar_judgments: self
                .scalar_judgments
                .iter()
                .filter(|s| keep(&s.question_id))
                .cloned()
                .collect(),
            failure_labels: self
                .failure_labels
                .iter()
                .filter(|l| keep(&l.question_id))
                .cloned()
                .collect(),
            reported: self.reported.clone(),
            reviews: self
                .reviews
                .iter()
                .filter(|r| keep(&r.question_id))
                .cloned()
                .collect(),
            raw: None,
            spans: None,
        }
    }
}

/// A contamination window: the questions whose discussion was created on or after a date
/// (docs/review.md#contamination-windows), as [`Dataset::created_on_or_after`] counts them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CreatedWindow {
    /// The date given (`YYYY-MM-DD`, or a date and time in UTC).
    pub created_after: String,
    /// Questions in force: created on or after the date.
    pub questions: usize,
    /// Questions loaded.
    pub of: usize,
    /// Questions without a creation date (`curation.source.created_at` absent or not a date):
    /// left out.
    pub undated: usize,
}

impl CreatedWindow {
    /// The sentence said beside every table.
    pub fn sentence(&self) -> String {
        format!(
            "scored on {} of {} questions created on or after {}; {} have no creation date and are left out",
            self.questions, self.of, self.created_after, self.undated
        )
    }
}

impl Dataset {
    /// The dataset of the questions whose discussion was created on or after `date`
    /// (`curation.source.created_at`, [`Question::created_at`]; `YYYY-MM-DD` is its midnight
    /// UTC), with every record about them ([`Dataset::without_questions`]): what a model
    /// trained before `date` cannot have seen. A question without a creation date is left
    /// out and counted. An error when `date` is not a date.
    pub fn created_on_or_after(&self, date: &str) -> Result<(Dataset, CreatedWindow), WindowError> {
        let (outside, window) = self.created_window(date)?;
        Ok((self.without_questions(&outside), window))
    }

    /// The questions outside the window of [`Dataset::created_on_or_after`] (created before
    /// `date`, or undated) and the window's counts, without copying the dataset.
    pub fn created_window(
        &self,
        date: &str,
    ) -> Result<(std::collections::BTreeSet<String>, CreatedWindow), WindowError> {
        let Some(from) = crate::date::parse_utc(date) else {
            return Err(WindowError::NotADate(date.to_string()));
        };
        let mut outside = std::collections::BTreeSet::new();
        let mut undated = 0;
        for q in &self.questions {
            match q.created_at().and_then(crate::date::parse_utc) {
                Some(t) if t >= from => {}
                Some(_) => {
                    outside.insert(q.id.clone());
                }
                None => {
                    undated += 1;
                    outside.insert(q.id.clone());
                }
            }
        }
        let window = CreatedWindow {
            created_after: date.trim().to_string(),
            questions: self.questions.len() - outside.len(),
            of: self.questions.len(),
            undated,
        };
        Ok((outside, window))
    }
}

/// Raw JSON text of each kept record, in the same order as the typed vectors of [`Dataset`].
#[derive(Debug, Clone, Default)]
pub struct RawRecords {
    pub questions: Vec<Box<RawValue>>,
    pub answers: Vec<Box<RawValue>>,
    pub judgments: Vec<Box<RawValue>>,
    pub scalar_judgments: Vec<Box<RawValue>>,
    pub failure_labels: Vec<Box<RawValue>>,
    pub reported: Vec<Box<RawValue>>,
    pub reviews: Vec<Box<RawValue>>,
}

/// Where each kept record lies in its file, in the same order as the typed vectors of
/// [`Dataset`].
#[derive(Debug, Clone, Default)]
pub struct Spans {
    pub questions: Vec<Span>,
    pub answers: Vec<Span>,
    pub judgments: Vec<Span>,
    pub scalar_judgments: Vec<Span>,
    pub failure_labels: Vec<Span>,
    pub reported: Vec<Span>,
    pub reviews: Vec<Span>,
}

impl Spans {
    /// How many kept records of `kind` each file holds, by the loader's file number (the
    /// order the files were given), over `files` files: what each file gave, for saying why a
    /// view has nothing to show.
    pub fn per_file(&self, kind: RecordKind, files: usize) -> Vec<usize> {
        let spans = match kind {
            RecordKind::Question => &self.questions,
            RecordKind::Answer => &self.answers,
            RecordKind::Judgment => &self.judgments,
            RecordKind::ScalarJudgment => &self.scalar_judgments,
            RecordKind::FailureLabel => &self.failure_labels,
            RecordKind::Reported => &self.reported,
            RecordKind::Review => &self.reviews,
        };
        let mut out = vec![0; files];
        for s in spans {
            if let Some(n) = out.get_mut(s.file as usize) {
                *n += 1;
            }
        }
        out
    }
}

impl Dataset {
    /// Puts back the long texts (answer, rationales) of record `index` of `kind` that a load
    /// with [`LoadOptions::skip_text`] left empty, from `bytes`: those of the record's
    /// [`Span`] in its file. An error when the bytes are not that record (the file changed
    /// since it was loaded); the record is then left as it was.
    pub fn fill_texts(
        &mut self,
        kind: RecordKind,
        index: usize,
        bytes: &[u8],
    ) -> Result<(), TextsError> {
        let parsed = crate::load::parse_one(kind, bytes)
            .map_err(|why| TextsError::Unreadable(kind.noun(), why))?;
        let changed = || TextsError::Changed(kind.noun());
        let missing = || TextsError::NoSuchRecord(kind.noun(), index);
        match (kind, parsed) {
            (RecordKind::Answer, Record::Answer(new)) => {
                let a = self.answers.get_mut(index).ok_or_else(missing)?;
                if (&a.question_id, &a.model, a.attempt)
                    != (&new.question_id, &new.model, new.attempt)
                {
                    return Err(changed());
                }
                a.answer = new.answer;
            }
            (RecordKind::Judgment, Record::Judgment(new)) => {
                let j = self.judgments.get_mut(index).ok_or_else(missing)?;
                let same = (&j.question_id, &j.model, j.attempt, &j.judge, j.judge_run)
                    == (
                        &new.question_id,
                        &new.model,
                        new.attempt,
                        &new.judge,
                        new.judge_run,
                    )
                    && j.items.len() == new.items.len()
                    && j.items
                        .iter()
                        .zip(&new.items)
                        .all(|(a, b)| a.id == b.id && a.score == b.score);
                if !same {
                    return Err(changed());
                }
                for (item, new) in j.items.iter_mut().zip(new.items) {
                    item.rationale = new.rationale;
                }
            }
            (RecordKind::ScalarJudgment, Record::ScalarJudgment(new)) => {
                let s = self.scalar_judgments.get_mut(index).ok_or_else(missing)?;
                if (&s.question_id, &s.model, s.attempt, &s.judge, s.judge_run)
                    != (
                        &new.question_id,
                        &new.model,
                        new.attempt,
                        &new.judge,
                        new.judge_run,
                    )
                {
                    return Err(changed());
                }
                s.rationale = new.rationale;
            }
            (RecordKind::FailureLabel, Record::FailureLabel(new)) => {
                let l = self.failure_labels.get_mut(index).ok_or_else(missing)?;
                if (&l.question_id, &l.model, l.attempt, &l.classifier)
                    != (&new.question_id, &new.model, new.attempt, &new.classifier)
                {
                    return Err(changed());
                }
                l.rationale = new.rationale;
            }
            // Questions, reported values and reviews keep every text.
            (RecordKind::Question | RecordKind::Reported | RecordKind::Review, _) => {}
            _ => return Err(changed()),
        }
        Ok(())
    }

    pub fn count(&self, kind: RecordKind) -> usize {
        match kind {
            RecordKind::Question => self.questions.len(),
            RecordKind::Answer => self.answers.len(),
            RecordKind::Judgment => self.judgments.len(),
            RecordKind::ScalarJudgment => self.scalar_judgments.len(),
            RecordKind::FailureLabel => self.failure_labels.len(),
            RecordKind::Reported => self.reported.len(),
            RecordKind::Review => self.reviews.len(),
        }
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }
}

/// Everything a load produced: the valid records, every issue, what each file held, and
/// notes that are worth saying but are not problems with the data.
#[derive(Debug, Default)]
pub struct Loaded {
    pub dataset: Dataset,
    pub issues: Vec<Issue>,
    pub files: Vec<FileSummary>,
    pub notes: Vec<String>,
}

impl Loaded {
    /// True when some file (or the rest of one) could not be read at all.
    pub fn has_unusable_input(&self) -> bool {
        self.issues.iter().any(|i| i.severity == Severity::File)
    }
}

/// Loads files into one dataset. Never panics and never aborts: see the module docs. The same
/// as giving each file to a [`StreamLoader`].
pub fn load(files: &[SourceFile<'_>], options: LoadOptions) -> Loaded {
    let mut loader = StreamLoader::new(options);
    for f in files {
        loader.begin_file(f.name);
        // Fed as a reader would: the splitter then never copies more than a chunk at once.
        for chunk in f.bytes.chunks(1 << 20) {
            loader.feed(chunk);
        }
        loader.end_file();
    }
    loader.finish()
}

/// Loads files given as streams of bytes: `begin_file`, `feed` each chunk as it comes,
/// `end_file`; then `finish` gives what [`load()`] gives for the same bytes.
///
/// ```
/// use repoprobe_core::{LoadOptions, StreamLoader};
/// let mut loader = StreamLoader::new(LoadOptions::default());
/// loader.begin_file("judgments.jsonl");
/// loader.feed(br#"{"question_id": "q1", "model": "m", "judge": "j", "#);
/// loader.feed(b"\"items\": []}\n");
/// loader.end_file();
/// let loaded = loader.finish();
/// assert_eq!(loaded.dataset.judgments.len(), 1);
/// ```
pub struct StreamLoader {
    stream: RecordStream<Assembler>,
    options: LoadOptions,
}

impl StreamLoader {
    pub fn new(options: LoadOptions) -> Self {
        StreamLoader {
            stream: RecordStream::new(options),
            options,
        }
    }

    /// Starts the next file (ending the one before, if still open). Issues name it `name`;
    /// its records' [`Span`]s carry its number: how many files were begun before it.
    pub fn begin_file(&mut self, name: &str) {
        self.stream.begin_file(name);
    }

    /// The file's next bytes. A chunk may end anywhere, even inside a UTF-8 character.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.stream.feed(chunk);
    }

    /// The file has no more bytes.
    pub fn end_file(&mut self) {
        self.stream.end_file();
    }

    /// Every record of every file, validated and assembled (see the module docs).
    pub fn finish(self) -> Loaded {
        match self.stream.finish() {
            // Assembled while read: the same dataset as assembled now.
            Finished::Assembled(asm, issues, files) => asm.finish(issues, files),
            Finished::Parsed(parsed) => assemble::assemble(parsed, self.options),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contamination_window_keeps_the_questions_created_on_or_after_its_date() {
        let q = |id: &str, created: Option<serde_json::Value>| {
            let mut q = crate::fixtures::question();
            q.id = id.into();
            q.curation = created.map(|c| serde_json::json!({"source": {"created_at": c}}));
            q
        };
        let answer = |id: &str| Answer {
            question_id: id.into(),
            model: "m".into(),
            attempt: 0,
            answer: Some("a".into()),
            agent: None,
            usage: None,
            duration_s: None,
            error: None,
        };
        let ds = Dataset {
            questions: vec![
                q("old", Some("2024-05-31T23:59:59Z".into())),
                q("day", Some("2024-06-01T00:00:00Z".into())),
                q("new", Some("2025-01-02T10:00:00Z".into())),
                q("none", None),
                q("junk", Some(7.into())),
            ],
            answers: ["old", "day", "new", "none"].map(answer).to_vec(),
            ..Dataset::default()
        };
        let (kept, w) = ds.created_on_or_after("2024-06-01").unwrap();
        let ids: Vec<&str> = kept.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["day", "new"]);
        assert_eq!(kept.answers.len(), 2);
        assert_eq!((w.questions, w.of, w.undated), (2, 5, 2));
        assert_eq!(
            w.sentence(),
            "scored on 2 of 5 questions created on or after 2024-06-01; 2 have no creation date and are left out"
        );
        assert!(ds.created_on_or_after("June").is_err());
        // `score` applies the same window itself: the report says it, the evidence is over the
        // questions in force, and every table built from the report carries the sentence.
        let opts = |date: &str| crate::ScoreOptions {
            created_after: Some(date.into()),
            evidence: true,
            bootstrap: 0,
            ..Default::default()
        };
        let r = crate::score(&ds, &[], &opts("2024-06-01")).unwrap();
        assert_eq!(r.created_after.as_ref(), Some(&w));
        assert_eq!(r.evidence.as_ref().unwrap()[0].answers, 2);
        let t = crate::report::report_evidence_table(&r);
        assert!(t.is_none(), "no answer carries evidence fields");
        let m = crate::report::models_table(&r);
        assert!(m.note.unwrap().ends_with(&w.sentence()));
        let plain = crate::score(
            &ds,
            &[],
            &crate::ScoreOptions {
                evidence: true,
                ..opts("x")
            },
        );
        assert!(
            matches!(&plain, Err(crate::metrics::ScoreError::Window(WindowError::NotADate(d))) if d == "x"),
            "{plain:?}"
        );
        let none = crate::score(&ds, &[], &opts("2030-01-01")).unwrap_err();
        assert!(none.to_string().contains("scored on 0 of 5"), "{none}");
        let all = crate::score(
            &ds,
            &[],
            &crate::ScoreOptions {
                created_after: None,
                ..opts("")
            },
        )
        .unwrap();
        assert_eq!(
            (all.created_after, all.evidence.unwrap()[0].answers),
            (None, 4)
        );
    }

    #[test]
    fn spans_say_how_many_kept_records_of_a_kind_each_file_gave() {
        let g = |f: &str| {
            std::fs::read(format!(
                "{}/../../testdata/golden/{f}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
        };
        let (bench, judgments, scalars) = (
            g("benchmark.jsonl"),
            g("judgments.jsonl"),
            g("scalar_judgments.jsonl"),
        );
        let files = [
            SourceFile {
                name: "scalar.jsonl",
                bytes: &scalars,
            },
            SourceFile {
                name: "bench.jsonl",
                bytes: &bench,
            },
            SourceFile {
                name: "judgments.jsonl",
                bytes: &judgments,
            },
        ];
        let options = LoadOptions {
            skip_text: true,
            ..LoadOptions::default()
        };
        let l = load(&files, options);
        let spans = l
            .dataset
            .spans
            .as_ref()
            .expect("spans are kept with skip_text");
        // (Without the answers, the judgment of a failed run is not known as one: 11.)
        assert_eq!(spans.per_file(RecordKind::Judgment, 3), [0, 0, 11]);
        assert_eq!(spans.per_file(RecordKind::ScalarJudgment, 3), [2, 0, 0]);
        assert_eq!(spans.per_file(RecordKind::Question, 3), [0, 3, 0]);
        assert_eq!(spans.per_file(RecordKind::Answer, 2), [0, 0]);
    }
}
