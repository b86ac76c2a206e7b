//! A line of a live command's failures journal (`<out>.failures.ndjson`,
//! docs/format.md#failure-record): how a key ended when it gave no record, typed once.
//! `status` tells a key whose call was made and refused ([`Status::Failed`]: a reply still invalid after its re-asks, a candidate not
//! written) from one that [`Status::CouldNotRun`] at all, with its [`Cause`]: authentication,
//! a quota or rate limit, the network, the API, the sandbox, the machine, the agent CLI, the
//! checkout. Neither is ever scored; a rerun tries both again.
//!
//! Written by every live command of the CLI and read back by its journals and `status`; the
//! types are here so that writer and readers cannot disagree on a string.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a key that has no record ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The call was made and gave nothing usable (a reply still invalid after its re-asks, a
    /// refused request that says nothing of the service).
    Failed,
    /// The run or call could not happen; `cause` says why. Says nothing about the model.
    CouldNotRun,
}

/// Why a run could not happen, in terms a user and a retry policy can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumString, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Cause {
    /// No usable credentials: a missing, rejected or expired key or login (HTTP 401/403).
    Auth,
    /// A quota, billing or rate limit (HTTP 402/429): wait, or raise the limit.
    RateLimit,
    /// The API could not be reached (connection, DNS, TLS, a timeout).
    Network,
    /// The API answered with a server error or an unusable reply, after its retries.
    Api,
    /// The agent's configuration was refused (an unknown model, a bad request of ours).
    Config,
    /// The sandbox could not be set up, or refused the agent's tools.
    Sandbox,
    /// The machine failed the run: files, the worktree, every tool call failing.
    Environment,
    /// The agent CLI is missing or cannot start.
    CliMissing,
    /// The repository or its pinned commit could not be had.
    Checkout,
}

impl Cause {
    /// Every cause, in the order summaries list them.
    pub const ALL: &'static [Cause] = <Cause as strum::VariantArray>::VARIANTS;

    /// The cause an HTTP error status of a model API names.
    pub fn of_http_status(status: u16) -> Cause {
        match status {
            401 | 403 | 407 => Cause::Auth,
            402 | 429 => Cause::RateLimit,
            408 => Cause::Network,
            400 | 404 | 405 | 413 | 415 | 422 => Cause::Config,
            _ => Cause::Api,
        }
    }

    /// Whether waiting can cure it: a retry after a backoff is worth its cost. Authentication,
    /// configuration, a missing CLI or checkout and a broken sandbox need a person first.
    pub fn passes_with_time(self) -> bool {
        matches!(self, Cause::RateLimit | Cause::Network | Cause::Api)
    }

    /// The name written in records (`"auth"`, `"rate_limit"`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The cause in words, for summaries.
    pub fn describe(self) -> &'static str {
        match self {
            Cause::Auth => "authentication",
            Cause::RateLimit => "quota or rate limit",
            Cause::Network => "network",
            Cause::Api => "the API's errors",
            Cause::Config => "configuration refused",
            Cause::Sandbox => "the sandbox",
            Cause::Environment => "the environment",
            Cause::CliMissing => "the agent CLI missing",
            Cause::Checkout => "the checkout",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A run that could not happen: its cause and the words of whatever said so (the CLI's own,
/// the API's body, the checkout's error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CouldNotRun {
    pub cause: Cause,
    pub why: String,
}

impl CouldNotRun {
    pub fn new(cause: Cause, why: impl Into<String>) -> CouldNotRun {
        CouldNotRun {
            cause,
            why: why.into(),
        }
    }
}

impl fmt::Display for CouldNotRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "could not run ({}): {}", self.cause.describe(), self.why)
    }
}

/// What a failures journal's reader needs of a line: whether it is a failure record at all, and
/// how it ended. Unknown statuses read as not a failure record (the line is then a result's).
#[derive(Debug, Clone, Deserialize)]
pub struct FailureHead {
    pub status: Status,
    #[serde(default)]
    pub cause: Option<Cause>,
}

impl FailureHead {
    /// The head of `line`'s record when it is a failure record.
    pub fn of(v: &serde_json::Value) -> Option<FailureHead> {
        v.get("status")?;
        FailureHead::deserialize(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_status_and_a_cause_are_written_once_and_read_back() {
        let v = json!({"status": Status::CouldNotRun, "cause": Cause::RateLimit});
        assert_eq!(v, json!({"status": "could_not_run", "cause": "rate_limit"}));
        let head = FailureHead::of(&v).unwrap();
        assert_eq!(
            (head.status, head.cause),
            (Status::CouldNotRun, Some(Cause::RateLimit))
        );
        // The records written before causes existed still read as failures.
        let old = FailureHead::of(&json!({"id": "q", "status": "failed"})).unwrap();
        assert_eq!((old.status, old.cause), (Status::Failed, None));
        // A result's own `status` (a fetched page's 200) is no failure record.
        assert!(FailureHead::of(&json!({"status": 200})).is_none());
        assert!(FailureHead::of(&json!({"id": "q"})).is_none());
        for c in Cause::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), json!(c.as_str()));
        }
    }

    #[test]
    fn http_statuses_name_their_cause() {
        let of = Cause::of_http_status;
        assert_eq!([of(401), of(403)], [Cause::Auth; 2]);
        assert_eq!([of(429), of(402)], [Cause::RateLimit; 2]);
        assert_eq!([of(500), of(503), of(529)], [Cause::Api; 3]);
        assert_eq!(of(404), Cause::Config);
        assert!(Cause::RateLimit.passes_with_time() && !Cause::Auth.passes_with_time());
    }
}
