//! How a run ended ([`Verdict`]), decided once per run from typed facts of its output and
//! carried as a type to the journal: an answer, the agent's own failure (scored 0), or a run
//! that could not happen ([`CouldNotRun`], with its [`Cause`]: never scored, tried again).

pub use repoprobe_core::model::failure::{Cause, CouldNotRun};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The agent answered.
    Answered(String),
    /// The agent ran and gave no answer (a limit, an error result, an empty reply): an answer
    /// record with `error`, scored 0 under the default policy.
    AgentFailed(String),
    /// The run could not happen: a failure record with its cause, tried again by the next run.
    CouldNotRun(CouldNotRun),
}

impl Verdict {
    /// A run that could not happen for `why`.
    pub fn could_not_run(cause: Cause, why: impl Into<String>) -> Verdict {
        Verdict::CouldNotRun(CouldNotRun::new(cause, why))
    }

    /// The text a trajectory's closing note says, when the run gave no answer.
    pub fn failure_text(&self) -> Option<String> {
        match self {
            Verdict::Answered(_) => None,
            Verdict::AgentFailed(why) => Some(why.clone()),
            Verdict::CouldNotRun(c) => Some(c.to_string()),
        }
    }
}

/// The cause a failed model call names: the HTTP status the API answered, else the network.
pub fn cause_of(e: &repoprobe_llm::CallError) -> Cause {
    match e {
        repoprobe_llm::CallError::Status { status, .. } => Cause::of_http_status(*status),
        repoprobe_llm::CallError::Transport { .. } => Cause::Network,
        // A person must act: a longer context or a shorter input.
        repoprobe_llm::CallError::TooLong(_) => Cause::Config,
    }
}
