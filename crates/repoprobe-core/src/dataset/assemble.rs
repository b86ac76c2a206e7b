//! The rules that need more than one record (unknown question, items against the checklist,
//! duplicate keys, judgments of failed runs), applied while records come in ([`Assembler`], the
//! loader's [`Assemble`]) or kind by kind over every parsed record ([`assemble`]): every valid
//! record kept in the [`Dataset`], every other one reported.

use super::{Dataset, LoadOptions, Loaded, RawRecords, Spans};
use crate::issue::{Issue, IssueKind, Place, Problem, Severity};
use crate::load::{Assemble, FileSummary, Located, Location, Parsed, Records, Span};
use crate::model::*;
use crate::text::quote;
use crate::validate;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::value::RawValue;

/// The records of every file, parsed, made into a dataset (the rules of the module docs).
pub(super) fn assemble(parsed: Parsed, options: LoadOptions) -> Loaded {
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
    take!(reviews, reviews);
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
pub(super) struct Assembler {
    ds: Dataset,
    /// The issues found, one list per kind: a dataset's issues come kind by kind.
    issues: [Vec<Issue>; crate::load::KINDS],
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
    review_keys: HashSet<(String, String, ReviewRole)>,
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
    reviews: KindLog<Review>,
}

/// Where a record kind lives — the dataset's records, their raw texts and spans, the log —
/// and its index among the issues' kinds: one place per kind, so that keeping or reporting a
/// record is written once ([`Assembler::settle`]).
trait Slot: Sized {
    const KIND: usize;
    fn records(ds: &mut Dataset) -> &mut Vec<Self>;
    fn raw(r: &mut RawRecords) -> &mut Vec<Box<RawValue>>;
    fn spans(s: &mut Spans) -> &mut Vec<Span>;
    fn log(l: &mut Log) -> &mut KindLog<Self>;
}

/// `Slot` for a record type whose field is named the same in `Dataset`, `RawRecords`, `Spans`
/// and `Log`.
macro_rules! slot {
    ($t:ty, $kind:expr, $field:ident) => {
        impl Slot for $t {
            const KIND: usize = $kind;
            fn records(ds: &mut Dataset) -> &mut Vec<Self> {
                &mut ds.$field
            }
            fn raw(r: &mut RawRecords) -> &mut Vec<Box<RawValue>> {
                &mut r.$field
            }
            fn spans(s: &mut Spans) -> &mut Vec<Span> {
                &mut s.$field
            }
            fn log(l: &mut Log) -> &mut KindLog<Self> {
                &mut l.$field
            }
        }
    };
}

slot!(Question, 0, questions);
slot!(Answer, 1, answers);
slot!(Judgment, 2, judgments);
slot!(ScalarJudgment, 3, scalar_judgments);
slot!(FailureLabel, 4, failure_labels);
slot!(ReportedValue, 5, reported);
slot!(Review, 6, reviews);

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

/// A record's fate: kept, or left out with these problems.
type Verdict = Result<(), Vec<Problem>>;

/// Left out as a duplicate: `message` says of what, and that the first is kept.
fn duplicate(message: String) -> Verdict {
    Err(vec![Problem::new(IssueKind::DuplicateRecord, message)])
}

impl Assembler {
    /// `undoable`: keep the log that [`Assembler::undo`] needs.
    pub(super) fn new(options: LoadOptions, undoable: bool) -> Self {
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
            review_keys: HashSet::default(),
            unchecked: [0; 3],
            log: undoable.then(Box::default),
        }
    }

    /// File number `file` is called `name` in issues.
    pub(super) fn name(&mut self, file: usize, name: &str) {
        if self.names.len() <= file {
            self.names.resize(file + 1, String::new());
        }
        if self.names[file] != name {
            self.names[file] = name.to_string();
        }
    }

    /// Takes the next part (in input order) of file `file`, kind by kind.
    fn take(&mut self, file: usize, part: Records) {
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
            reviews,
        } = part;
        self.questions(n, questions);
        self.answers(n, answers);
        self.judgments(n, judgments);
        self.scalar_judgments(n, scalar_judgments);
        self.failure_labels(n, failure_labels);
        self.reported(n, reported);
        self.reviews(n, reviews);
    }

    /// The dataset: `issues` (the parse's) first, then those found here, kind by kind.
    pub(super) fn finish(self, mut issues: Vec<Issue>, files: Vec<FileSummary>) -> Loaded {
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

    /// "unknown question `id`" when a benchmark is loaded and holds no such question (without
    /// one, nothing can be said: the record is kept unchecked).
    fn unknown(&self, have_benchmark: bool, id: &str) -> Option<Problem> {
        (have_benchmark && !self.index.contains_key(id)).then(|| {
            Problem::new(
                IssueKind::UnknownQuestion,
                format!("unknown question {}", quote(id)),
            )
        })
    }

    /// Keeps `loc` or reports it, as `verdict` says, and logs it.
    fn settle<R: Slot>(&mut self, part: u32, loc: Located<R>, verdict: Verdict) {
        let kind = R::KIND;
        match verdict {
            Ok(()) => {
                if let Some(l) = self.log.as_deref_mut() {
                    let l = R::log(l);
                    l.taken.push((part, loc.location));
                    if self.ds.spans.is_none() {
                        l.spans.push(loc.span);
                    }
                    if self.ds.raw.is_some() && loc.raw.is_none() {
                        l.no_raw.push(l.taken.len() - 1);
                    }
                }
                if let (Some(all), Some(r)) = (self.ds.raw.as_mut(), loc.raw) {
                    R::raw(all).push(r);
                }
                if let Some(all) = self.ds.spans.as_mut() {
                    R::spans(all).push(loc.span);
                }
                R::records(&mut self.ds).push(loc.record);
            }
            Err(messages) => {
                let file = self.names.get(loc.file).cloned().unwrap_or_default();
                for p in messages {
                    self.issues[kind].push(Issue::new(
                        file.clone(),
                        Place::record(loc.location),
                        p.kind,
                        p.message,
                        Severity::Record,
                    ));
                }
                if let Some(l) = self.log.as_deref_mut() {
                    let l = R::log(l);
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
                    .map(|e| e.worded(|e| format!("invalid question {}: {e}", quote(&q.id))))
                    .collect())
            } else if !self.question_ids.insert(q.id.clone()) {
                duplicate(format!(
                    "duplicate question id {}: the first occurrence is kept",
                    quote(&q.id)
                ))
            } else {
                self.index.insert(q.id.clone(), self.ds.questions.len());
                Ok(())
            };
            self.settle(part, loc, verdict);
        }
    }

    // Answers before judgments: a judgment of a failed run is reported.
    fn answers(&mut self, part: u32, records: Vec<Located<Answer>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let a = &loc.record;
            let verdict = if let Some(why) = self.unknown(have_benchmark, &a.question_id) {
                Err(vec![why.worded(|why| format!("answer to {why}"))])
            } else {
                let names = &mut self.interner;
                let key = (
                    names.id_at(QUESTION, &a.question_id),
                    names.id_at(MODEL, &a.model),
                    a.attempt,
                );
                if !self.answer_keys.insert(key) {
                    duplicate(format!(
                        "duplicate answer for question {}, model {}, attempt {}: the first is kept",
                        quote(&a.question_id),
                        quote(&a.model),
                        a.attempt
                    ))
                } else {
                    if a.error.is_some() {
                        self.failed_runs.insert(key);
                    }
                    Ok(())
                }
            };
            self.settle(part, loc, verdict);
        }
    }

    fn judgments(&mut self, part: u32, records: Vec<Located<Judgment>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let verdict = self.judgment(&loc.record, have_benchmark);
            self.settle(part, loc, verdict);
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
                return Err(vec![Problem::new(
                    IssueKind::UnknownQuestion,
                    format!("judgment of unknown question {}", quote(&j.question_id)),
                )]);
            };
            let errs = validate::judgment_items(j, &self.ds.questions[qi]);
            if !errs.is_empty() {
                return Err(errs
                    .into_iter()
                    .map(|e| e.worded(|e| format!("invalid judgment: {e}")))
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
            return Err(vec![Problem::new(
                IssueKind::JudgmentOfFailedRun,
                format!(
                    "judgment of a failed run (the answer of model {} to {} has `error` set): not scored",
                    quote(&j.model),
                    quote(&j.question_id)
                ),
            )]);
        }
        if !self
            .judgment_keys
            .insert((q, m, j.attempt, names.id_at(JUDGE, &j.judge), j.judge_run))
        {
            return duplicate(format!(
                "duplicate judgment (question {}, model {}, attempt {}, judge {}, judge_run {}): the first is kept",
                quote(&j.question_id),
                quote(&j.model),
                j.attempt,
                quote(&j.judge),
                j.judge_run
            ));
        }
        Ok(())
    }

    fn scalar_judgments(&mut self, part: u32, records: Vec<Located<ScalarJudgment>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let s = &loc.record;
            let mut errs = validate::scalar(s);
            if let Some(why) = self.unknown(have_benchmark, &s.question_id) {
                errs.push(why);
            } else if !have_benchmark {
                self.unchecked[1] += 1;
            }
            let verdict = if !errs.is_empty() {
                Err(errs
                    .into_iter()
                    .map(|e| e.worded(|e| format!("invalid scalar judgment: {e}")))
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
                    duplicate(format!(
                        "duplicate scalar judgment (question {}, model {}, judge {}, judge_run {}): the first is kept",
                        quote(&s.question_id),
                        quote(&s.model),
                        quote(&s.judge),
                        s.judge_run
                    ))
                } else {
                    Ok(())
                }
            };
            self.settle(part, loc, verdict);
        }
    }

    fn failure_labels(&mut self, part: u32, records: Vec<Located<FailureLabel>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let f = &loc.record;
            let verdict = if let Some(why) = self.unknown(have_benchmark, &f.question_id) {
                Err(vec![
                    why.worded(|why| format!("failure-mode label of {why}")),
                ])
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
                    duplicate(format!(
                        "duplicate failure-mode label (question {}, model {}, classifier {}): the first is kept",
                        quote(&f.question_id),
                        quote(&f.model),
                        quote(&f.classifier)
                    ))
                } else {
                    Ok(())
                }
            };
            self.settle(part, loc, verdict);
        }
    }

    fn reported(&mut self, part: u32, records: Vec<Located<ReportedValue>>) {
        for loc in records {
            let r = &loc.record;
            let verdict = if !r.value.is_finite() {
                Err(vec![Problem::new(
                    IssueKind::ScoreOutOfRange,
                    "invalid reported value: `value` is not a finite number",
                )])
            } else {
                let key = (
                    r.table.clone(),
                    r.group.clone(),
                    r.row.clone(),
                    r.column.clone(),
                );
                if !self.reported_keys.insert(key) {
                    duplicate(format!(
                        "duplicate reported value (table {}, row {}, column {}): the first is kept",
                        quote(&r.table),
                        quote(&r.row),
                        quote(&r.column)
                    ))
                } else {
                    Ok(())
                }
            };
            self.settle(part, loc, verdict);
        }
    }
}

impl Assembler {
    /// Reviews: each valid (`validate::review`), of a known question when questions are
    /// loaded, one per (question, reviewer, role): the first is kept, as for every other kind.
    fn reviews(&mut self, part: u32, records: Vec<Located<Review>>) {
        let have_benchmark = self.have_benchmark();
        for loc in records {
            let r = &loc.record;
            let mut errs: Vec<Problem> = validate::review(r)
                .into_iter()
                .map(|e| e.worded(|e| format!("invalid review: {e}")))
                .collect();
            if errs.is_empty()
                && let Some(why) = self.unknown(have_benchmark, &r.question_id)
            {
                errs.push(why.worded(|why| format!("review of {why}")));
            }
            if errs.is_empty()
                && !self
                    .review_keys
                    .insert((r.question_id.clone(), r.reviewer.clone(), r.role))
            {
                errs.push(Problem::new(
                    IssueKind::DuplicateRecord,
                    format!(
                        "duplicate review of question {} by {} ({}): the first is kept",
                        quote(&r.question_id),
                        quote(&r.reviewer),
                        r.role.as_str()
                    ),
                ));
            }
            let verdict = if errs.is_empty() { Ok(()) } else { Err(errs) };
            self.settle(part, loc, verdict);
        }
    }
}

/// The assembler the loader hands parts to as they come (see [`Assembler`]).
impl Assemble for Assembler {
    fn start(options: LoadOptions) -> Self {
        Assembler::new(options, true)
    }

    /// The part holds records of a kind that records taken before looked at (a question after
    /// its answers or judgments, an answer after judgments).
    fn would_differ(taken: [bool; crate::load::KINDS], part: &Records) -> bool {
        let [_, answers, judgments, scalars, labels, _, reviews] = taken;
        (!part.questions.is_empty() && (answers || judgments || scalars || labels || reviews))
            || (!part.answers.is_empty() && judgments)
    }

    fn add(&mut self, file: usize, name: &str, part: Records) {
        self.name(file, name);
        self.take(file, part);
    }

    fn undo(mut self) -> Vec<(usize, Records)> {
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
            reviews,
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
        give_back!(reviews, reviews);
        parts
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
    use crate::{SourceFile, StreamLoader};

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
        let at_end = assemble(stream(files).stream.parsed(), options);
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

    /// Reviews are told by `reviewer`, read as their own type, checked, and one per (question,
    /// reviewer, role) kept: every bad one named with where and why, the others kept.
    #[test]
    fn reviews_are_read_checked_and_the_first_of_a_key_kept() {
        let ok = r#"{"question_id":"q1","reviewer":"ann","role":"reviewer","criteria":{"qa_consistency":true,"checklist_quality":true,"task_validity":false,"code_relevance":true},"decision":"accept","note":"fine","reviewed_at":"2026-03-01T12:00:00Z"}"#;
        let lines = [
            ok.to_string(),
            ok.replace("\"fine\"", "\"again\""),
            ok.replace("\"reviewer\",", "\"adjudicator\","),
            ok.replace("\"decision\":\"accept\",", ""),
            ok.replace("\"role\":\"reviewer\"", "\"role\":\"boss\""),
            ok.replace("2026-03-01T12:00:00Z", "yesterday"),
            ok.replace("\"task_validity\":false", "\"task_validity\":\"no\""),
            ok.replace("\"q1\"", "\"nope\""),
        ];
        let reviews = lines.join("\n") + "\n";
        let bench = include_str!("../../../../testdata/golden/benchmark.jsonl");
        let files = [
            SourceFile {
                name: "benchmark.jsonl",
                bytes: bench.as_bytes(),
            },
            SourceFile {
                name: "reviews.jsonl",
                bytes: reviews.as_bytes(),
            },
        ];
        let loaded = crate::load(&files, LoadOptions::default());
        let ds = &loaded.dataset;
        assert_eq!(ds.reviews.len(), 2, "{:#?}", loaded.issues);
        assert_eq!(ds.reviews[0].note.as_deref(), Some("fine"));
        assert_eq!(ds.reviews[1].role, ReviewRole::Adjudicator);
        assert!(!ds.reviews[0].criteria.task_validity);
        // The parse's issues come first, then the assembly's: in line order here.
        let mut got: Vec<(String, String)> = loaded
            .issues
            .iter()
            .map(|i| (format!("{}: {}", i.file, i.location), i.message.clone()))
            .collect();
        got.sort();
        let want = [
            (
                "line 2",
                "duplicate review of question \"q1\" by \"ann\" (reviewer): the first is kept",
            ),
            ("line 4", "invalid review: missing field `decision`"),
            (
                "line 5, role",
                "invalid review: unknown variant `boss`, expected `reviewer` or `adjudicator`",
            ),
            ("line 6", "invalid review: `reviewed_at` is \"yesterday\""),
            (
                "line 7, criteria.task_validity",
                "invalid review: invalid type: string \"no\", expected a boolean",
            ),
            ("line 8", "review of unknown question \"nope\""),
        ];
        assert_eq!(got.len(), want.len(), "{got:#?}");
        for ((at, msg), (want_at, want_msg)) in got.iter().zip(want) {
            assert_eq!(at, &format!("reviews.jsonl: {want_at}"), "{msg}");
            assert!(msg.starts_with(want_msg), "{msg}");
        }
        // Alone (no questions loaded), a review of any question is kept.
        let alone = crate::load(&files[1..], LoadOptions::default());
        assert_eq!(alone.dataset.reviews.len(), 3);
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
