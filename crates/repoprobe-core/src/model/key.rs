//! An answer's key, (question, model, attempt): what names one run of one model on one question
//! in every record about it — the answer, its judgments, its trajectory, its grades — and in
//! every table of runs. One type for the core, the CLI and the site.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Which answer: the question, the model and its attempt (0 when a record leaves it out).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema))]
pub struct AnswerKey {
    pub question_id: String,
    pub model: String,
    pub attempt: u32,
}

impl AnswerKey {
    pub fn new(question_id: &str, model: &str, attempt: u32) -> AnswerKey {
        AnswerKey {
            question_id: question_id.to_string(),
            model: model.to_string(),
            attempt,
        }
    }

    /// As an address writes it: `QUESTION|MODEL|ATTEMPT`.
    pub fn to_param(&self) -> String {
        format!("{}|{}|{}", self.question_id, self.model, self.attempt)
    }

    /// `QUESTION|MODEL|ATTEMPT` read back (a model may hold `|`: the question is before the
    /// first, the attempt after the last).
    pub fn from_param(s: &str) -> Option<AnswerKey> {
        let (question_id, rest) = s.split_once('|')?;
        let (model, attempt) = rest.rsplit_once('|')?;
        Some(AnswerKey::new(
            question_id,
            model,
            attempt.trim().parse().ok()?,
        ))
    }
}

/// An answer's key borrowed from the record that holds it: the map key of one pass over records
/// (judgments grouped by answer, labels by answer), ordered as [`AnswerKey`] is, so a pass never
/// copies a string to find a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyRef<'a> {
    pub question_id: &'a str,
    pub model: &'a str,
    pub attempt: u32,
}

impl KeyRef<'_> {
    pub fn to_key(self) -> AnswerKey {
        AnswerKey::new(self.question_id, self.model, self.attempt)
    }
}

impl AnswerKey {
    pub fn as_key_ref(&self) -> KeyRef<'_> {
        KeyRef {
            question_id: &self.question_id,
            model: &self.model,
            attempt: self.attempt,
        }
    }
}

/// A record about one answer: the answer itself, a judgment of it, its failure label.
pub trait Keyed {
    fn key(&self) -> KeyRef<'_>;
}

/// The records that carry the three fields of the key under their own names (a table's row
/// implements it where it is defined).
macro_rules! keyed {
    ($($t:ty),*) => {$(
        impl crate::model::Keyed for $t {
            fn key(&self) -> crate::model::KeyRef<'_> {
                crate::model::KeyRef {
                    question_id: &self.question_id,
                    model: &self.model,
                    attempt: self.attempt,
                }
            }
        }
    )*};
}

pub(crate) use keyed;

keyed!(
    AnswerKey,
    super::Answer,
    super::Judgment,
    super::ScalarJudgment,
    super::FailureLabel
);

/// `QUESTION / MODEL / attempt N`, as messages and progress lines name an answer.
impl std::fmt::Display for AnswerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / attempt {}",
            self.question_id, self.model, self.attempt
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_key_reads_back_from_its_param_and_says_itself() {
        let k = AnswerKey::new("q1", "org/m|x", 2);
        assert_eq!(k.to_param(), "q1|org/m|x|2");
        assert_eq!(AnswerKey::from_param(&k.to_param()), Some(k.clone()));
        assert_eq!(AnswerKey::from_param("q1|m|two"), None);
        assert_eq!(AnswerKey::from_param("q1"), None);
        assert_eq!(k.to_string(), "q1 / org/m|x / attempt 2");
        assert_eq!(k.key().to_key(), k);
        assert_eq!(k.as_key_ref(), k.key());
    }
}
