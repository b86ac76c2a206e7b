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
    }
}
