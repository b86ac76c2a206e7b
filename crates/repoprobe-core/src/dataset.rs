//! Assembles parsed records into a [`Dataset`]: applies the rules that need more than one record
//! (unknown question, items against the checklist, duplicate keys, judgments of failed runs),
//! keeps every valid record and reports every other one.

use crate::issue::{Issue, Severity, quote};
use crate::load::{
    FileSummary, Located, Parsed, Record, RecordKind, Records, SourceFile, Span, StreamLoader,
};
use crate::model::*;
use crate::validate;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::value::RawValue;

/// The valid records of every loaded file, in input order.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub questions: Vec<Question>,
    pub answers: Vec<Answer>,
    pub judgments: Vec<Judgment>,
    pub scalar_judgments: Vec<ScalarJudgment>,
    pub failure_labels: Vec<FailureLabel>,
    pub reported: Vec<ReportedValue>,
    /// Each kept record's JSON text, unknown fields included, parallel to the vectors above;
    /// present only when loaded with [`LoadOptions::keep_raw`].
    pub raw: Option<RawRecords>,
    /// Where each kept record lies in its file, parallel to the vectors above; present when
    /// loaded with [`LoadOptions::skip_text`], so that the texts it skipped can be read back
    /// ([`Dataset::fill_texts`]).
    pub spans: Option<Spans>,
}

impl Dataset {
    /// The dataset without the questions named in `drop` and every record about them (answers,
    /// judgments, scalar judgments, failure labels); reported values are kept. Raw texts are
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
            raw: None,
            spans: None,
        }
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
    ) -> Result<(), String> {
        let parsed = crate::load::parse_one(kind, bytes)
            .map_err(|e| format!("the {} at this place is unreadable now: {e}", kind.noun()))?;
        let changed = || {
            format!(
                "another {} is at this place now: the file changed",
                kind.noun()
            )
        };
        let missing = || format!("no {} number {index}", kind.noun());
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
            // Questions and reported values keep every text.
            (RecordKind::Question | RecordKind::Reported, _) => {}
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
        }
    }

    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }
}

/// Options of [`load`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Keep each record's JSON text (for `bundle`, which must keep unknown fields).
    pub keep_raw: bool,
    /// Leave long free texts (rationales, answers) empty: for scoring only, where they are
    /// never read, it saves copying most of a results file. Ignored when `keep_raw` is set.
    /// The records' [`Spans`] are kept instead, to read the texts back.
    pub skip_text: bool,
    /// Threads that parse records while the caller's thread cuts them out of the files; 0 or
    /// 1 parses on the caller's thread. Only with the `parallel` feature (never in the site's
    /// wasm); the result is the same whatever the number.
    pub threads: usize,
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

/// The records of every file, parsed, made into a dataset (the rules of the module docs).
pub(crate) fn assemble(parsed: Parsed, options: LoadOptions) -> Loaded {
    let Parsed {
        records: mut parts,
        mut issues,
        files,
    } = parsed;
    // One kind at a time, part by part; each part's vector of that kind is freed once read.
    macro_rules! take {
        ($field:ident) => {
            parts.iter_mut().flat_map(|p| std::mem::take(&mut p.$field))
        };
    }
    let count = |f: fn(&Records) -> usize| parts.iter().map(f).sum::<usize>();
    let (n_questions, n_answers, n_judgments) = (
        count(|r| r.questions.len()),
        count(|r| r.answers.len()),
        count(|r| r.judgments.len()),
    );
    let mut b = Builder {
        ds: Dataset {
            raw: options.keep_raw.then(RawRecords::default),
            spans: (options.skip_text && !options.keep_raw).then(Spans::default),
            questions: Vec::with_capacity(n_questions),
            answers: Vec::with_capacity(n_answers),
            judgments: Vec::with_capacity(n_judgments),
            ..Dataset::default()
        },
        issues: Vec::new(),
        files: &files,
        notes: Vec::new(),
    };

    // Questions first, from every file, so that file order never decides whether a judgment's
    // question is known.
    let mut question_ids = HashSet::default();
    for loc in take!(questions) {
        let q = &loc.record;
        let errs = validate::question(q);
        if !errs.is_empty() {
            for e in errs {
                b.issue(&loc, format!("invalid question {}: {e}", quote(&q.id)));
            }
            continue;
        }
        if !question_ids.insert(q.id.clone()) {
            b.issue(
                &loc,
                format!(
                    "duplicate question id {}: the first occurrence is kept",
                    quote(&q.id)
                ),
            );
            continue;
        }
        b.keep(
            loc,
            |ds| &mut ds.questions,
            |r| &mut r.questions,
            |s| &mut s.questions,
        );
    }
    let index: HashMap<String, usize> =
        b.ds.questions
            .iter()
            .enumerate()
            .map(|(i, q)| (q.id.clone(), i))
            .collect();
    let have_benchmark = !index.is_empty();

    // Answers before judgments: a judgment of a failed run is reported.
    let mut names = Interner::default();
    let mut failed_runs: HashSet<(u32, u32, u32)> = HashSet::default();
    let mut answer_keys = HashSet::default();
    for loc in take!(answers) {
        let a = &loc.record;
        if have_benchmark && !index.contains_key(&a.question_id) {
            b.issue(
                &loc,
                format!("answer to unknown question {}", quote(&a.question_id)),
            );
            continue;
        }
        let key = (names.id(&a.question_id), names.id(&a.model), a.attempt);
        if !answer_keys.insert(key) {
            b.issue(
                &loc,
                format!(
                    "duplicate answer for question {}, model {}, attempt {}: the first is kept",
                    quote(&a.question_id),
                    quote(&a.model),
                    a.attempt
                ),
            );
            continue;
        }
        if a.error.is_some() {
            failed_runs.insert(key);
        }
        b.keep(
            loc,
            |ds| &mut ds.answers,
            |r| &mut r.answers,
            |s| &mut s.answers,
        );
    }

    let mut unchecked = [0usize; 3];
    let mut judgment_keys = HashSet::default();
    for loc in take!(judgments) {
        let j = &loc.record;
        if have_benchmark {
            let Some(&qi) = index.get(&j.question_id) else {
                b.issue(
                    &loc,
                    format!("judgment of unknown question {}", quote(&j.question_id)),
                );
                continue;
            };
            let errs = validate::judgment_items(j, &b.ds.questions[qi]);
            if !errs.is_empty() {
                for e in errs {
                    b.issue(&loc, format!("invalid judgment: {e}"));
                }
                continue;
            }
        } else {
            unchecked[0] += 1;
        }
        let (q, m) = (names.id(&j.question_id), names.id(&j.model));
        if failed_runs.contains(&(q, m, j.attempt)) {
            b.issue(
                &loc,
                format!(
                    "judgment of a failed run (the answer of model {} to {} has `error` set): not scored",
                    quote(&j.model),
                    quote(&j.question_id)
                ),
            );
            continue;
        }
        if !judgment_keys.insert((q, m, j.attempt, names.id(&j.judge), j.judge_run)) {
            b.issue(
                &loc,
                format!(
                    "duplicate judgment (question {}, model {}, attempt {}, judge {}, judge_run {}): the first is kept",
                    quote(&j.question_id),
                    quote(&j.model),
                    j.attempt,
                    quote(&j.judge),
                    j.judge_run
                ),
            );
            continue;
        }
        b.keep(
            loc,
            |ds| &mut ds.judgments,
            |r| &mut r.judgments,
            |s| &mut s.judgments,
        );
    }

    let mut scalar_keys = HashSet::default();
    for loc in take!(scalar_judgments) {
        let s = &loc.record;
        let mut errs = validate::scalar(s);
        if have_benchmark && !index.contains_key(&s.question_id) {
            errs.push(format!("unknown question {}", quote(&s.question_id)));
        } else if !have_benchmark {
            unchecked[1] += 1;
        }
        if !errs.is_empty() {
            for e in errs {
                b.issue(&loc, format!("invalid scalar judgment: {e}"));
            }
            continue;
        }
        let key = (
            names.id(&s.question_id),
            names.id(&s.model),
            s.attempt,
            names.id(&s.judge),
            s.judge_run,
        );
        if !scalar_keys.insert(key) {
            b.issue(
                &loc,
                format!(
                    "duplicate scalar judgment (question {}, model {}, judge {}, judge_run {}): the first is kept",
                    quote(&s.question_id),
                    quote(&s.model),
                    quote(&s.judge),
                    s.judge_run
                ),
            );
            continue;
        }
        b.keep(
            loc,
            |ds| &mut ds.scalar_judgments,
            |r| &mut r.scalar_judgments,
            |s| &mut s.scalar_judgments,
        );
    }

    let mut label_keys = HashSet::default();
    for loc in take!(failure_labels) {
        let f = &loc.record;
        if have_benchmark && !index.contains_key(&f.question_id) {
            b.issue(
                &loc,
                format!(
                    "failure-mode label of unknown question {}",
                    quote(&f.question_id)
                ),
            );
            continue;
        } else if !have_benchmark {
            unchecked[2] += 1;
        }
        let key = (
            names.id(&f.question_id),
            names.id(&f.model),
            f.attempt,
            names.id(&f.classifier),
        );
        if !label_keys.insert(key) {
            b.issue(
                &loc,
                format!(
                    "duplicate failure-mode label (question {}, model {}, classifier {}): the first is kept",
                    quote(&f.question_id),
                    quote(&f.model),
                    quote(&f.classifier)
                ),
            );
            continue;
        }
        b.keep(
            loc,
            |ds| &mut ds.failure_labels,
            |r| &mut r.failure_labels,
            |s| &mut s.failure_labels,
        );
    }

    let mut reported_keys = HashSet::default();
    for loc in take!(reported) {
        let r = &loc.record;
        if !r.value.is_finite() {
            b.issue(
                &loc,
                "invalid reported value: `value` is not a finite number".to_string(),
            );
            continue;
        }
        let key = (
            r.table.clone(),
            r.group.clone(),
            r.row.clone(),
            r.column.clone(),
        );
        if !reported_keys.insert(key) {
            b.issue(
                &loc,
                format!(
                    "duplicate reported value (table {}, row {}, column {}): the first is kept",
                    quote(&r.table),
                    quote(&r.row),
                    quote(&r.column)
                ),
            );
            continue;
        }
        b.keep(
            loc,
            |ds| &mut ds.reported,
            |r| &mut r.reported,
            |s| &mut s.reported,
        );
    }

    for (n, what) in unchecked
        .iter()
        .zip(["judgments", "scalar judgments", "failure-mode labels"])
    {
        if *n > 0 {
            b.notes.push(format!(
                "{n} {what} were not checked against a checklist: no benchmark questions were loaded \
                 (give the benchmark file too to validate and score them)"
            ));
        }
    }
    let Builder {
        ds,
        issues: found,
        notes,
        ..
    } = b;
    issues.extend(found);
    Loaded {
        dataset: ds,
        issues,
        files,
        notes,
    }
}

/// Small integer ids for the names in record keys, so that duplicate checks hash integers and
/// never copy strings.
#[derive(Default)]
struct Interner(HashMap<String, u32>);

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.0.get(s) {
            return i;
        }
        let i = self.0.len() as u32;
        self.0.insert(s.to_string(), i);
        i
    }
}

struct Builder<'f> {
    ds: Dataset,
    issues: Vec<Issue>,
    files: &'f [FileSummary],
    notes: Vec<String>,
}

impl Builder<'_> {
    fn issue<R>(&mut self, loc: &Located<R>, message: String) {
        let file = self
            .files
            .get(loc.file)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        self.issues.push(Issue {
            file,
            location: loc.location.to_string(),
            message,
            severity: Severity::Record,
        });
    }

    /// Keeps a record, with its raw text and span when those are kept.
    fn keep<R>(
        &mut self,
        loc: Located<R>,
        records: impl FnOnce(&mut Dataset) -> &mut Vec<R>,
        raw: impl FnOnce(&mut RawRecords) -> &mut Vec<Box<RawValue>>,
        spans: impl FnOnce(&mut Spans) -> &mut Vec<Span>,
    ) {
        if let (Some(all), Some(r)) = (self.ds.raw.as_mut(), loc.raw) {
            raw(all).push(r);
        }
        if let Some(all) = self.ds.spans.as_mut() {
            spans(all).push(loc.span);
        }
        records(&mut self.ds).push(loc.record);
    }
}
