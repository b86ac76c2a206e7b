//! Why `score` could not honour an option (its own module: the weights report through it and
//! `score` returns it, with no import between them and `metrics`).

/// Why `score` could not honour an option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreError {
    #[error("judge {0:?} has no valid judgments; judges present: {1}")]
    UnknownJudge(String, String),
    #[error("model {0:?} has no valid judgments by judge {1:?}")]
    UnknownModel(String, String),
    #[error("question {0:?} cannot be dropped: it is not in the benchmark")]
    UnknownQuestion(String),
    #[error("{0}")]
    Weights(String),
    /// `created_after` is not a date, or leaves no question.
    #[error("the created-after window: {0}")]
    Window(#[from] crate::dataset::WindowError),
    #[error("--panel: {0}")]
    Panel(#[from] super::panel::PanelError),
}
