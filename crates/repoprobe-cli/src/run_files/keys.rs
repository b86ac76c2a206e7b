//! The key of each kind of run's records, one type per kind: read from a record's fields here
//! and printed here. A command shards its tasks by a key's printed form and `status`, `merge`
//! and the shard check read the same key back from the journals with the same type, so the
//! words hashed on both sides cannot drift apart.
//!
//! Each key reads in two ways: `fields` takes the key's fields of any line that carries them
//! (a record, or a failure record, which carries the key's fields under the same names), `of`
//! only of a record of the command's own kind (what the journal counts as done).

use crate::output::{count, text};
use repoprobe_core::RecordKind;
use serde::Serialize;
use serde_json::Value;
use std::fmt::{self, Display};

/// The key of an answer record (docs/format.md#answer): the core's one answer key.
pub use repoprobe_core::AnswerKey;

/// The key of a judgment-like record (docs/format.md#checklist-judgment,
/// docs/format.md#scalar-judgment): (question_id, model, attempt, judge, judge_run),
/// `attempt` and `judge_run` 0 when absent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct JudgmentKey {
    pub question_id: String,
    pub model: String,
    pub attempt: u32,
    pub judge: String,
    pub judge_run: u32,
}

impl JudgmentKey {
    pub fn fields(v: &Value) -> Option<JudgmentKey> {
        Some(JudgmentKey {
            question_id: text(v, "question_id")?,
            model: text(v, "model")?,
            attempt: count(v, "attempt")?,
            judge: text(v, "judge")?,
            judge_run: count(v, "judge_run")?,
        })
    }

    /// The key of a record of kind `kind` (checklist or scalar judgment), as the core tells a
    /// record's kind ([`RecordKind::of_value`]); `None` for anything else.
    pub fn of(v: &Value, kind: RecordKind) -> Option<JudgmentKey> {
        (RecordKind::of_value(v) == Some(kind)).then_some(())?;
        JudgmentKey::fields(v)
    }
}

impl Display for JudgmentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {} / attempt {} / run {}",
            self.question_id, self.model, self.attempt, self.judge_run
        )
    }
}

/// An answer's key from the fields of any line that carries them.
pub fn answer_fields(v: &Value) -> Option<AnswerKey> {
    Some(AnswerKey {
        question_id: text(v, "question_id")?,
        model: text(v, "model")?,
        attempt: count(v, "attempt")?,
    })
}

/// The key of an answer record, as the core tells a record's kind ([`RecordKind::of_value`]).
pub fn answer_key(v: &Value) -> Option<AnswerKey> {
    (RecordKind::of_value(v) == Some(RecordKind::Answer)).then_some(())?;
    answer_fields(v)
}

/// The key of a failure-mode label (docs/format.md#failure-mode-label): an answer and its
/// classifier. It prints as its answer: a run has one classifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct LabelKey {
    pub question_id: String,
    pub model: String,
    pub attempt: u32,
    pub classifier: String,
}

impl LabelKey {
    pub fn fields(v: &Value) -> Option<LabelKey> {
        Some(LabelKey {
            question_id: text(v, "question_id")?,
            model: text(v, "model")?,
            attempt: count(v, "attempt")?,
            classifier: text(v, "classifier")?,
        })
    }

    pub fn of(v: &Value) -> Option<LabelKey> {
        (RecordKind::of_value(v) == Some(RecordKind::FailureLabel)).then_some(())?;
        LabelKey::fields(v)
    }
}

impl Display for LabelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} / {} / attempt {}",
            self.question_id, self.model, self.attempt
        )
    }
}

/// Declares a key that is one string field of its records, checked to be of its command's
/// kind by `is_record`.
macro_rules! one_field_key {
    ($(#[$doc:meta])* $name:ident { $field:ident }, $is_record:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
        pub struct $name {
            pub $field: String,
        }

        impl $name {
            pub fn fields(v: &Value) -> Option<$name> {
                Some($name {
                    $field: text(v, stringify!($field))?,
                })
            }

            pub fn of(v: &Value) -> Option<$name> {
                let is_record: fn(&Value) -> bool = $is_record;
                is_record(v).then_some(())?;
                $name::fields(v)
            }
        }

        impl Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.$field)
            }
        }
    };
}

one_field_key!(
    /// A question's id: `make-checklist`'s questions, `curate verify`'s candidates.
    QuestionKey { id },
    |v| RecordKind::of_value(v) == Some(RecordKind::Question)
);

one_field_key!(
    /// `curate enhance`'s pair: its question id (the thread's key).
    PairKey { id },
    |v| v.get("curation").is_some()
);

one_field_key!(
    /// `curate classify`'s thread: `owner/name#number`.
    ThreadKey { key },
    |v| v.get("classify").is_some()
);

one_field_key!(
    /// `curate themes`' repository: `owner/name`.
    RepoKey { repo },
    |v| v.get("theme").is_some()
);

/// A record's key, as its run's kind reads it. Two records are of one key when their keys are
/// equal (a judgment's key holds its judge, a label's its classifier: two judges' records of
/// one answer are two keys); it prints as the command's own key, which is what it shards by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecordKey {
    Judgment(JudgmentKey),
    Answer(AnswerKey),
    Label(LabelKey),
    Question(QuestionKey),
    Pair(PairKey),
    Thread(ThreadKey),
    Repository(RepoKey),
}

impl Display for RecordKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordKey::Judgment(k) => k.fmt(f),
            RecordKey::Answer(k) => k.fmt(f),
            RecordKey::Label(k) => k.fmt(f),
            RecordKey::Question(k) => k.fmt(f),
            RecordKey::Pair(k) => k.fmt(f),
            RecordKey::Thread(k) => k.fmt(f),
            RecordKey::Repository(k) => k.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A key reads the same from a record and from its failure record (status counts both),
    /// only a record of its command's kind is done (the journal's `of`), and it prints as the
    /// command shards it: a label as its answer.
    #[test]
    fn a_key_reads_alike_from_record_and_failure_and_prints_as_it_is_sharded() {
        let record = json!({"repo": "o/n", "theme": "Web"});
        let failure = json!({"repo": "o/n", "status": "failed", "reason": "r"});
        assert_eq!(RepoKey::of(&record), RepoKey::fields(&failure));
        assert_eq!(RepoKey::of(&failure), None);
        let key = RecordKey::Repository(RepoKey::fields(&failure).unwrap());
        assert_eq!(key.to_string(), "o/n");
        let label = json!({"question_id": "q", "model": "m", "attempt": 2, "classifier": "c"});
        let label = RecordKey::Label(LabelKey::fields(&label).unwrap());
        assert_eq!(label.to_string(), AnswerKey::new("q", "m", 2).to_string());
        let judgment = json!({"question_id": "q", "model": "m", "judge": "j", "judge_run": 1});
        let judgment = JudgmentKey::fields(&judgment).unwrap();
        assert_eq!(judgment.to_string(), "q / m / attempt 0 / run 1");
    }
}
