//! Assembles parsed records into a [`Dataset`]: applies the rules that need more than one record
//! (unknown question, items against the checklist, duplicate keys, judgments of failed runs),
//! keeps every valid record and reports every other one.

use crate::issue::{Issue, Severity, quote};
use crate::load::{
    FileSummary, Located, Location, Parsed, Record, RecordKind, Records, SourceFile, Span,
    StreamLoader,
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
    /// Threads that parse records while the caller's thread cuts them out of the files (with
    /// more than one, one more thread assembles the dataset as they come); 0 or 1 parses and
    /// assembles on the caller's thread. Only with the `parallel` feature (never in the site's
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
        issues,
        files,
    } = parsed;
    let count = |f: fn(&Records) -> usize| parts.iter().map(f).sum::<usize>();
    let mut a = Assembler::new(options, false);
    a.ds.questions.reserve_exact(count(|r| r.questions.len()));
    a.ds.answers.reserve_exact(count(|r| r.answers.len()));
    a.ds.judgments.reserve_exact(count(|r| r.judgments.len()));
    for (n, f) in files.iter().enumerate() {
        a.name(n, &f.name);
    }
    // One kind at a time, part by part (each kind's rules need every record of the kinds
    // before it); each part's vector of that kind is freed once read.
    macro_rules! take {
        ($field:ident, $method:ident) => {
            for p in &mut parts {
                a.$method(0, std::mem::take(&mut p.$field));
            }
        };
    }
    take!(questions, questions);
    take!(answers, answers);
    take!(judgments, judgments);
    take!(scalar_judgments, scalar_judgments);
    take!(failure_labels, failure_labels);
    take!(reported, reported);
    a.finish(issues, files)
}

/// Assembles the dataset part by part, as parsed parts come in input order, while later parts
/// are still being read and parsed (the loader's `Merge`), or kind by kind over every part
/// ([`assemble`]).
///
/// Each kind's rules need every record of the kinds they look at (a judgment its question and
/// the failed runs, an answer its question): taken part by part, the result is
/// [`assemble`]'s as long as no record of such a kind comes after one that looked at it — the
/// case of every bundle and of files given benchmark first. The loader checks that before
/// part ([`Assembler::would_differ`]); when a part would break it, the records taken so
/// far are given back as the parts they came in ([`Assembler::undo`], with the log kept for it)
/// and the load is assembled kind by kind at its end, as before.
pub(crate) struct Assembler {
    ds: Dataset,
    /// The issues found, one list per kind: a dataset's issues come kind by kind.
    issues: [Vec<Issue>; 6],
    notes: Vec<String>,
    names: Vec<String>,
    question_ids: HashSet<String>,
    /// Question id → its place in `ds.questions`.
    index: HashMap<String, usize>,
    interner: Interner,
    /// The last judgment's question and its place in `index`.
    last_question: Option<(String, usize)>,
    failed_runs: HashSet<(u32, u32, u32)>,
    answer_keys: HashSet<(u32, u32, u32)>,
    judgment_keys: HashSet<(u32, u32, u32, u32, u32)>,
    scalar_keys: HashSet<(u32, u32, u32, u32, u32)>,
    label_keys: HashSet<(u32, u32, u32, u32)>,
    reported_keys: HashSet<(String, String, String, String)>,
    unchecked: [usize; 3],
    /// What [`Assembler::undo`] needs, when kept.
    log: Option<Box<Log>>,
}

/// Each record taken, in order, by kind: where it was and which part it came in; a record
/// left out is kept whole (a kept one is in the dataset).
#[derive(Default)]
struct Log {
    /// The file of each part taken, in order.
    parts: Vec<usize>,
    questions: KindLog<Question>,
    answers: KindLog<Answer>,
    judgments: KindLog<Judgment>,
    scalar_judgments: KindLog<ScalarJudgment>,
    failure_labels: KindLog<FailureLabel>,
    reported: KindLog<ReportedValue>,
}

struct KindLog<R> {
    /// Every record taken: its part and location.
    taken: Vec<(u32, Location)>,
    /// The spans of the records kept, when the dataset does not keep them.
    spans: Vec<Span>,
    /// The places in `taken` of records kept without a raw text while the dataset keeps them.
    no_raw: Vec<usize>,
    /// The records left out, with their place in `taken`.
    left: Vec<(usize, Located<R>)>,
}

impl<R> Default for KindLog<R> {
    fn default() -> Self {
        KindLog {
            taken: Vec::new(),
            spans: Vec::new(),
            no_raw: Vec::new(),
            left: Vec::new(),
        }
    }
}

/// A record's fate: kept, or left out with these messages.
type Verdict = Result<(), Vec<String>>;

impl Assembler {
    /// `undoable`: keep the log that [`Assembler::undo`] needs.
    pub(crate) fn new(options: LoadOptions, undoable: bool) -> Self {
        Assembler {
            ds: Dataset {
                raw: options.keep_raw.then(RawRecords::default),
                spans: (options.skip_text && !options.keep_raw).then(Spans::default),
                ..Dataset::default()
            },
            issues: Default::default(),
            notes: Vec::new(),
            names: Vec::new(),
            question_ids: HashSet::default(),
            index: HashMap::default(),
            interner: Interner::default(),
            last_question: None,
            failed_runs: HashSet::default(),
            answer_keys: HashSet::default(),
            judgment_keys: HashSet::default(),
            scalar_keys: HashSet::default(),
            label_keys: HashSet::default(),
            reported_keys: HashSet::default(),
            unchecked: [0; 3],
            log: undoable.then(Box::default),
        }
    }

    /// File number `file` is called `name` in issues.
    pub(crate) fn name(&mut self, file: usize, name: &str) {
        if self.names.len() <= file {
            self.names.resize(file + 1, String::new());
        }
        if self.names[file] != name {
            self.names[file] = name.to_string();
        }
    }

    /// True when taking `part` after records of the kinds `taken` (by [`RecordKind`] order)
    /// could give another dataset than taking every part kind by kind at the end: it holds
    /// records of a kind that records taken before looked at.
    pub(crate) fn would_differ(taken: [bool; 6], part: &Records) -> bool {
        let [_, answers, judgments, scalars, labels, _] = taken;
        (!part.questions.is_empty() && (answers || judgments || scalars || labels))
            || (!part.answers.is_empty() && judgments)
    }

    /// Takes the next part (in input order) of file `file`, kind by kind.
    pub(crate) fn add(&mut self, file: usize, part: Records) {
        let n = match self.log.as_mut() {
            Some(log) => {
                log.parts.push(file);
                (log.parts.len() - 1) as u32
            }
            None => 0,
        };
        let Records {
            questions,
            answers,
            judgments,
            scalar_judgments,
            failure_labels,
            reported,
        } = part;
        self.questions(n, questions);
        self.answers(n, answers);
        self.judgments(n, judgments);
        self.scalar_judgments(n, scalar_judgments);
        self.failure_labels(n, failure_labels);
        self.reported(n, reported);
    }

    /// Gives back every record taken, as the parts they came in (file, records), in order.
    pub(crate) fn undo(mut self) -> Vec<(usize, Records)> {
        let Some(log) = self.log.take() else {
            return Vec::new();
        };
        let Log {
            parts: files,
            questions,
            answers,
            judgments,
            scalar_judgments,
            failure_labels,
            reported,
        } = *log;
        let mut parts: Vec<(usize, Records)> =
            files.iter().map(|&f| (f, Records::default())).collect();
        let mut ds = std::mem::take(&mut self.ds);
        let raws = ds.raw.is_some();
        let mut raw = ds.raw.take().unwrap_or_default();
        let mut spans = ds.spans.take();
        macro_rules! give_back {
            ($field:ident, $log:ident) => {
                give_back(
                    ds.$field,
                    raws.then(|| std::mem::take(&mut raw.$field)),
                    spans.as_mut().map(|s| std::mem::take(&mut s.$field)),
                    $log,
                    &mut parts,
                    |r| &mut r.$field,
                );
            };
        }
        give_back!(questions, questions);
        give_back!(answers, answers);
        give_back!(judgments, judgments);
        give_back!(scalar_judgments, scalar_judgments);
        give_back!(failure_labels, failure_labels);
        give_back!(reported, reported);
        parts
    }

    /// The dataset: `issues` (the parse's) first, then those found here, kind by kind.
    pub(crate) fn finish(self, mut issues: Vec<Issue>, files: Vec<FileSummary>) -> Loaded {
        let Assembler {
            ds,
            issues: found,
            mut notes,
            unchecked,
            ..
        } = self;
        for (n, what) in
            unchecked
                .iter()
                .zip(["judgments", "scalar judgments", "failure-mode labels"])
        {
            if *n > 0 {
                notes.push(format!(
                    "{n} {what} were not checked against a checklist: no benchmark questions were loaded \
                     (give the benchmark file too to validate and score them)"
                ));
            }
        }
        issues.extend(found.into_iter().flatten());
        Loaded {
            dataset: ds,
            issues,
            files,
            notes,
        }
    }

    fn have_benchmark(&self) -> bool {
        !self.index.is_empty()
    }

    /// Keeps `loc` or reports it, as `verdict` says, and logs it.
    #[allow(clippy::too_many_arguments)]
    fn settle<R>(
        &mut self,
        part: u32,
        kind: usize,
        loc: Located<R>,
        verdict: Verdict,
        records: impl FnOnce(&mut Dataset) -> &mut Vec<R>,
        raw: impl FnOnce(&mut RawRecords) -> &mut Vec<Box<RawValue>>,
        spans: impl FnOnce(&mut Spans) -> &mut Vec<Span>,
        log: impl FnOnce(&mut Log) -> &mut KindLog<R>,
    ) {
        match verdict {
            Ok(()) => {
                if let Some(l) = self.log.as_deref_mut() {
                    let l = log(l);
                    l.taken.push((part, loc.location));
                    if self.ds.spans.is_none() {
                        l.spans.push(loc.span);
                    }
                    if self.ds.raw.is_some() && loc.raw.is_none() {
                        l.no_raw.push(l.taken.len() - 1);
                    }
                }
                if let (Some(all), Some(r)) = (self.ds.raw.as_mut(), loc.raw) {
                    raw(all).push(r);
                }
                if let Some(all) = self.ds.spans.as_mut() {
                    spans(all).push(loc.span);
                }
                records(&mut self.ds).push(loc.record);
            }
            Err(messages) => {
                let file = self.names.get(loc.file).cloned().unwrap_or_default();
                for message in messages {
                    self.issues[kind].push(Issue {
                        file: file.clone(),
                        location: loc.location.to_string(),
                        message,
                        severity: Severity::Record,
                    });
                }
                if let Some(l) = self.log.as_deref_mut() {
                    let l = log(l);
                    l.taken.push((part, loc.location));
                    l.left.push((l.taken.len() - 1, loc));
                }
            }
        }
    }

    // Questions first, from every file, so that file order never decides whether a judgment's
    // question is known.
    fn questions(&mut self, part: u32, records: Vec<Located<Question>>) {
        for loc in records {
            let q = &loc.record;
            let errs = validate::question(q);
            let verdict = if !errs.is_empty() {
                Err(errs
                    .into_iter()
                    .map(|e| format!("invalid question {}: {e}", quote(&q.id)))
                    .collect())
            } else if !self.question_ids.insert(q.id.clone()) {
                Err(vec![format!(
                    "duplicate question id {}: the first occurrence is kept",
                    quote(&q.id)
                )])
            } else {
                self.index.insert(q.id.clone(), self.ds.questions.len());
                Ok(())
            };
            self.settle(
                part,
                0,
                loc,
                verdict,
                |ds| &mut ds.questions,
                |r| &mut r.questions,
                |s| &mut s.questions,
                |l| &mut l.questions,
            );
        }
    }

    // Answers before judgments: a judgment of a failed run is reported.
    fn answers(&mut self, part: u32, records: Vec<Located<Answer>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let a = &loc.record;
            let verdict = if have_benchmark && !self.index.contains_key(&a.question_id) {
                Err(vec![format!(
                    "answer to unknown question {}",
                    quote(&a.question_id)
                )])
            } else {
                let names = &mut self.interner;
                let key = (
                    names.id_at(QUESTION, &a.question_id),
                    names.id_at(MODEL, &a.model),
                    a.attempt,
                );
                if !self.answer_keys.insert(key) {
                    Err(vec![format!(
                        "duplicate answer for question {}, model {}, attempt {}: the first is kept",
                        quote(&a.question_id),
                        quote(&a.model),
                        a.attempt
                    )])
                } else {
                    if a.error.is_some() {
                        self.failed_runs.insert(key);
                    }
                    Ok(())
                }
            };
            self.settle(
                part,
                1,
                loc,
                verdict,
                |ds| &mut ds.answers,
                |r| &mut r.answers,
                |s| &mut s.answers,
                |l| &mut l.answers,
            );
        }
    }

    fn judgments(&mut self, part: u32, records: Vec<Located<Judgment>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let verdict = self.judgment(&loc.record, have_benchmark);
            self.settle(
                part,
                2,
                loc,
                verdict,
                |ds| &mut ds.judgments,
                |r| &mut r.judgments,
                |s| &mut s.judgments,
                |l| &mut l.judgments,
            );
        }
    }

    fn judgment(&mut self, j: &Judgment, have_benchmark: bool) -> Verdict {
        if have_benchmark {
            // Judgments come in runs of the same question.
            let found = match &self.last_question {
                Some((id, qi)) if *id == j.question_id => Some(*qi),
                _ => {
                    let found = self.index.get(&j.question_id).copied();
                    if let Some(qi) = found {
                        self.last_question = Some((j.question_id.clone(), qi));
                    }
                    found
                }
            };
            let Some(qi) = found else {
                return Err(vec![format!(
                    "judgment of unknown question {}",
                    quote(&j.question_id)
                )]);
            };
            let errs = validate::judgment_items(j, &self.ds.questions[qi]);
            if !errs.is_empty() {
                return Err(errs
                    .into_iter()
                    .map(|e| format!("invalid judgment: {e}"))
                    .collect());
            }
        } else {
            self.unchecked[0] += 1;
        }
        let names = &mut self.interner;
        let (q, m) = (
            names.id_at(QUESTION, &j.question_id),
            names.id_at(MODEL, &j.model),
        );
        if self.failed_runs.contains(&(q, m, j.attempt)) {
            return Err(vec![format!(
                "judgment of a failed run (the answer of model {} to {} has `error` set): not scored",
                quote(&j.model),
                quote(&j.question_id)
            )]);
        }
        if !self
            .judgment_keys
            .insert((q, m, j.attempt, names.id_at(JUDGE, &j.judge), j.judge_run))
        {
            return Err(vec![format!(
                "duplicate judgment (question {}, model {}, attempt {}, judge {}, judge_run {}): the first is kept",
                quote(&j.question_id),
                quote(&j.model),
                j.attempt,
                quote(&j.judge),
                j.judge_run
            )]);
        }
        Ok(())
    }

    fn scalar_judgments(&mut self, part: u32, records: Vec<Located<ScalarJudgment>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let s = &loc.record;
            let mut errs = validate::scalar(s);
            if have_benchmark && !self.index.contains_key(&s.question_id) {
                errs.push(format!("unknown question {}", quote(&s.question_id)));
            } else if !have_benchmark {
                self.unchecked[1] += 1;
            }
            let verdict = if !errs.is_empty() {
                Err(errs
                    .into_iter()
                    .map(|e| format!("invalid scalar judgment: {e}"))
                    .collect())
            } else {
                let names = &mut self.interner;
                let key = (
                    names.id(&s.question_id),
                    names.id(&s.model),
                    s.attempt,
                    names.id(&s.judge),
                    s.judge_run,
                );
                if !self.scalar_keys.insert(key) {
                    Err(vec![format!(
                        "duplicate scalar judgment (question {}, model {}, judge {}, judge_run {}): the first is kept",
                        quote(&s.question_id),
                        quote(&s.model),
                        quote(&s.judge),
                        s.judge_run
                    )])
                } else {
                    Ok(())
                }
            };
            self.settle(
                part,
                3,
                loc,
                verdict,
                |ds| &mut ds.scalar_judgments,
                |r| &mut r.scalar_judgments,
                |s| &mut s.scalar_judgments,
                |l| &mut l.scalar_judgments,
            );
        }
    }

    fn failure_labels(&mut self, part: u32, records: Vec<Located<FailureLabel>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let f = &loc.record;
            let verdict = if have_benchmark && !self.index.contains_key(&f.question_id) {
                Err(vec![format!(
                    "failure-mode label of unknown question {}",
                    quote(&f.question_id)
                )])
            } else {
                if !have_benchmark {
                    self.unchecked[2] += 1;
                }
                let names = &mut self.interner;
                let key = (
                    names.id(&f.question_id),
                    names.id(&f.model),
                    f.attempt,
                    names.id(&f.classifier),
                );
                if !self.label_keys.insert(key) {
                    Err(vec![format!(
                        "duplicate failure-mode label (question {}, model {}, classifier {}): the first is kept",
                        quote(&f.question_id),
                        quote(&f.model),
                        quote(&f.classifier)
                    )])
                } else {
                    Ok(())
                }
            };
            self.settle(
                part,
                4,
                loc,
                verdict,
                |ds| &mut ds.failure_labels,
                |r| &mut r.failure_labels,
                |s| &mut s.failure_labels,
                |l| &mut l.failure_labels,
            );
        }
    }

    fn reported(&mut self, part: u32, records: Vec<Located<ReportedValue>>) {
        for loc in records {
            let r = &loc.record;
            let verdict = if !r.value.is_finite() {
                Err(vec![
                    "invalid reported value: `value` is not a finite number".to_string(),
                ])
            } else {
                let key = (
                    r.table.clone(),
                    r.group.clone(),
                    r.row.clone(),
                    r.column.clone(),
                );
                if !self.reported_keys.insert(key) {
                    Err(vec![format!(
                        "duplicate reported value (table {}, row {}, column {}): the first is kept",
                        quote(&r.table),
                        quote(&r.row),
                        quote(&r.column)
                    )])
                } else {
                    Ok(())
                }
            };
            self.settle(
                part,
                5,
                loc,
                verdict,
                |ds| &mut ds.reported,
                |r| &mut r.reported,
                |s| &mut s.reported,
                |l| &mut l.reported,
            );
        }
    }
}

/// Puts the records of one kind back into the parts they came in, in their order: those kept
/// (`kept`, with their raw texts and spans where the dataset kept them) and those left out (in
/// the log).
fn give_back<R>(
    kept: Vec<R>,
    raw: Option<Vec<Box<RawValue>>>,
    spans: Option<Vec<Span>>,
    log: KindLog<R>,
    parts: &mut [(usize, Records)],
    field: impl Fn(&mut Records) -> &mut Vec<Located<R>>,
) {
    let raws = raw.is_some();
    let (mut kept, mut raw, mut spans, mut no_raw, mut left) = (
        kept.into_iter(),
        raw.unwrap_or_default().into_iter(),
        spans.unwrap_or(log.spans).into_iter(),
        log.no_raw.into_iter().peekable(),
        log.left.into_iter().peekable(),
    );
    for (n, (part, location)) in log.taken.into_iter().enumerate() {
        let loc = if left.peek().is_some_and(|(at, _)| *at == n) {
            left.next().map(|(_, loc)| loc)
        } else {
            let has_raw = raws && no_raw.next_if_eq(&n).is_none();
            match (kept.next(), spans.next()) {
                (Some(record), Some(span)) => Some(Located {
                    file: span.file as usize,
                    location,
                    record,
                    raw: if has_raw { raw.next() } else { None },
                    span,
                }),
                _ => None,
            }
        };
        if let (Some(loc), Some((_, p))) = (loc, parts.get_mut(part as usize)) {
            field(p).push(loc);
        }
    }
}

/// Small integer ids for the names in record keys, so that duplicate checks hash integers and
/// never copy strings.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, u32>,
    /// The last name looked up at each of a few places ([`Interner::id_at`]): records come in
    /// runs of the same question, model and judge, and comparing with the last one is cheaper
    /// than hashing.
    last: [(String, u32); 3],
}

/// The places of [`Interner::id_at`].
const QUESTION: usize = 0;
const MODEL: usize = 1;
const JUDGE: usize = 2;

impl Interner {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.ids.len() as u32;
        self.ids.insert(s.to_string(), i);
        i
    }

    /// [`Interner::id`], remembered for the next name looked up at `place`.
    fn id_at(&mut self, place: usize, s: &str) -> u32 {
        if let Some((name, id)) = self.last.get(place)
            && name == s
            && !s.is_empty()
        {
            return *id;
        }
        let id = self.id(s);
        if let Some(last) = self.last.get_mut(place) {
            last.0.clear();
            last.0.push_str(s);
            last.1 = id;
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthOptions, generate};

    /// The load as assembled kind by kind after every record was parsed (`assemble`, the rules'
    /// first form), against the load as assembled while records come in (`StreamLoader`).
    fn both(files: &[SourceFile<'_>], options: LoadOptions) -> (String, String) {
        let print = |l: &Loaded| {
            format!(
                "{:?}\n{:?}\n{:?}\n{:?}",
                l.dataset, l.issues, l.files, l.notes
            )
        };
        let stream = |files: &[SourceFile<'_>]| {
            let mut loader = StreamLoader::new(options);
            for f in files {
                loader.begin_file(f.name);
                // Small chunks: many parts, so that a part can break the assembly midway.
                for c in f.bytes.chunks(4096) {
                    loader.feed(c);
                }
                loader.end_file();
            }
            loader
        };
        let at_end = assemble(stream(files).parsed(), options);
        (print(&stream(files).finish()), print(&at_end))
    }

    /// Whatever order records of each kind come in, and whatever goes wrong with them (invalid,
    /// duplicate, of a failed run, of an unknown question, in a container of another version),
    /// a dataset assembled while its records come in is the one assembled at the end.
    #[test]
    fn assembling_while_reading_gives_the_dataset_of_assembling_at_the_end() {
        let mut b = generate(SynthOptions {
            models: 3,
            questions: 12,
            runs: 2,
            seed: 5,
        });
        // Records left out for every reason.
        b.judgments.push(b.judgments[0].clone());
        b.answers.push(b.answers[1].clone());
        let mut unknown = b.judgments[2].clone();
        unknown.question_id = "nope".into();
        b.judgments.push(unknown);
        let mut bad = b.judgments[3].clone();
        bad.items.clear();
        b.judgments.push(bad);
        b.scalar_judgments.push(b.scalar_judgments[0].clone());
        b.failure_modes.push(b.failure_modes[0].clone());
        b.benchmark.push(b.benchmark[0].clone());
        let line = |v: &dyn erased::Json| v.json() + "\n";
        let lines = |v: &[&dyn erased::Json]| v.iter().map(|x| line(*x)).collect::<String>();
        let bench = lines(&b.benchmark.iter().map(|x| x as _).collect::<Vec<_>>());
        let answers = lines(&b.answers.iter().map(|x| x as _).collect::<Vec<_>>());
        let judgments = lines(&b.judgments.iter().map(|x| x as _).collect::<Vec<_>>());
        let scalars = lines(
            &b.scalar_judgments
                .iter()
                .map(|x| x as _)
                .collect::<Vec<_>>(),
        );
        let labels = lines(&b.failure_modes.iter().map(|x| x as _).collect::<Vec<_>>());
        let bundle = serde_json::to_string(&b).unwrap();
        let mut v2 = b.clone();
        v2.version = 2;
        let v2 = serde_json::to_string(&v2).unwrap();
        // Judgments and answers interleaved: an answer after a judgment.
        let mixed: String = answers
            .lines()
            .zip(judgments.lines())
            .map(|(a, j)| format!("{j}\n{a}\n"))
            .collect();
        let cases: Vec<Vec<&str>> = vec![
            vec![&bundle],
            vec![&bench, &answers, &judgments, &scalars, &labels],
            vec![&judgments, &bench, &answers],
            vec![&answers, &judgments, &bench],
            vec![&bench, &mixed],
            vec![&scalars, &labels, &bench],
            vec![&bundle, &bench],
            vec![&bench, &answers, &v2, &judgments],
            vec![&bundle, &v2],
            vec![&v2, &bundle],
            vec![&judgments, &scalars],
        ];
        for (n, case) in cases.iter().enumerate() {
            let names: Vec<String> = (0..case.len()).map(|i| format!("f{i}.jsonl")).collect();
            let files: Vec<SourceFile> = case
                .iter()
                .zip(&names)
                .map(|(text, name)| SourceFile {
                    name,
                    bytes: text.as_bytes(),
                })
                .collect();
            for options in [
                LoadOptions::default(),
                LoadOptions {
                    skip_text: true,
                    ..LoadOptions::default()
                },
                LoadOptions {
                    keep_raw: true,
                    threads: 3,
                    ..LoadOptions::default()
                },
            ] {
                let (streamed, at_end) = both(&files, options);
                assert_eq!(streamed, at_end, "case {n}, {options:?}");
            }
        }
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

    /// Records of any kind as JSON, for the cases above.
    mod erased {
        pub trait Json {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Json for T {
            fn json(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
        }
    }
}
