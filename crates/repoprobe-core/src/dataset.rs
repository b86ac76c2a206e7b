//! Assembles parsed records into a [`Dataset`]: applies the rules that need more than one record
//! (unknown question, items against the checklist, duplicate keys, judgments of failed runs),
//! keeps every valid record and reports every other one.

use crate::issue::{Issue, Severity, quote};
use crate::load::{FileSummary, Located, Parsed, Record, RecordKind, SourceFile, parse_files};
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

impl Dataset {
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
    pub skip_text: bool,
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

/// Loads files into one dataset. Never panics and never aborts: see the module docs.
pub fn load(files: &[SourceFile<'_>], options: LoadOptions) -> Loaded {
    let parsed = parse_files(files, options);
    assemble(parsed, options)
}

fn assemble(parsed: Parsed, options: LoadOptions) -> Loaded {
    let Parsed {
        records,
        mut issues,
        files,
    } = parsed;
    let mut b = Builder {
        ds: Dataset {
            raw: options.keep_raw.then(RawRecords::default),
            ..Dataset::default()
        },
        issues: Vec::new(),
        files: &files,
        notes: Vec::new(),
    };

    // Questions first, from every file, so that file order never decides whether a judgment's
    // question is known.
    let (questions, rest): (Vec<Located>, Vec<Located>) = records
        .into_iter()
        .partition(|r| r.record.kind() == RecordKind::Question);
    let mut question_ids = HashSet::default();
    for loc in questions {
        let Record::Question(q) = &loc.record else {
            continue;
        };
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
        b.keep(loc);
    }
    let index: HashMap<String, usize> =
        b.ds.questions
            .iter()
            .enumerate()
            .map(|(i, q)| (q.id.clone(), i))
            .collect();
    let have_benchmark = !index.is_empty();

    // Answers before judgments: a judgment of a failed run is reported.
    let (answers, rest): (Vec<Located>, Vec<Located>) = rest
        .into_iter()
        .partition(|r| r.record.kind() == RecordKind::Answer);
    let mut names = Interner::default();
    let mut failed_runs: HashSet<(u32, u32, u32)> = HashSet::default();
    let mut answer_keys = HashSet::default();
    for loc in answers {
        let Record::Answer(a) = &loc.record else {
            continue;
        };
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
        b.keep(loc);
    }

    let mut unchecked = [0usize; 3];
    let mut judgment_keys = HashSet::default();
    let mut scalar_keys = HashSet::default();
    let mut label_keys = HashSet::default();
    let mut reported_keys = HashSet::default();
    for loc in rest {
        match &loc.record {
            Record::Judgment(j) => {
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
                let key = (
                    j.question_id.clone(),
                    j.model.clone(),
                    j.attempt,
                    j.judge.clone(),
                    j.judge_run,
                );
                if !judgment_keys.insert(key) {
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
            }
            Record::ScalarJudgment(s) => {
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
                    s.question_id.clone(),
                    s.model.clone(),
                    s.attempt,
                    s.judge.clone(),
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
            }
            Record::FailureLabel(f) => {
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
                    f.question_id.clone(),
                    f.model.clone(),
                    f.attempt,
                    f.classifier.clone(),
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
            }
            Record::Reported(r) => {
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
            }
            Record::Question(_) | Record::Answer(_) => {}
        }
        b.keep(loc);
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
    fn issue(&mut self, loc: &Located, message: String) {
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

    fn keep(&mut self, loc: Located) {
        let raw = loc.raw;
        let ds = &mut self.ds;
        macro_rules! put {
            ($field:ident, $v:expr) => {{
                ds.$field.push($v);
                if let (Some(all), Some(r)) = (ds.raw.as_mut(), raw) {
                    all.$field.push(r);
                }
            }};
        }
        match loc.record {
            Record::Question(v) => put!(questions, v),
            Record::Answer(v) => put!(answers, v),
            Record::Judgment(v) => put!(judgments, v),
            Record::ScalarJudgment(v) => put!(scalar_judgments, v),
            Record::FailureLabel(v) => put!(failure_labels, v),
            Record::Reported(v) => put!(reported, v),
        }
    }
}
