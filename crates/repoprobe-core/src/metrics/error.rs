//! Why `score` could not honour an option: above every module whose error it wraps (the
//! weights', the panel's, the created-after window's), so none of them imports it.

/// Why `score` could not honour an option. Serde: the site's worker sends it to its page as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreError {
    #[error("judge {0:?} has no valid judgments; judges present: {1}")]
    UnknownJudge(String, String),
    #[error("model {0:?} has no valid judgments by judge {1:?}")]
    UnknownModel(String, String),
    #[error("question {0:?} cannot be dropped: it is not in the benchmark")]
    UnknownQuestion(String),
    #[error("{0}")]
    Weights(super::weights::WeightsError),
    /// `created_after` is not a date, or leaves no question.
    #[error("the created-after window: {0}")]
    Window(crate::dataset::WindowError),
    #[error("--panel: {0}")]
    Panel(super::panel::PanelError),
}

// The inner error's words are in the message; marked as its source too, they would be printed
// twice by a caller that prints an error's chain (anyhow's `{:#}`). So `From` without `#[from]`.
impl From<crate::dataset::WindowError> for ScoreError {
    fn from(e: crate::dataset::WindowError) -> ScoreError {
        ScoreError::Window(e)
    }
}

impl From<super::weights::WeightsError> for ScoreError {
    fn from(e: super::weights::WeightsError) -> ScoreError {
        ScoreError::Weights(e)
    }
}

impl From<super::panel::PanelError> for ScoreError {
    fn from(e: super::panel::PanelError) -> ScoreError {
        ScoreError::Panel(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose words carry the inner one's has no source: printed as a chain, the inner
    /// words would come twice.
    #[test]
    fn the_inner_words_come_once() {
        let e = ScoreError::from(crate::dataset::WindowError::NotADate("x".into()));
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(
            e.to_string(),
            "the created-after window: \"x\" is not a date: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"
        );
    }
}
