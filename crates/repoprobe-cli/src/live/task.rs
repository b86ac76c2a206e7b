//! What a key of a live call is: its [`Task`] (a key and the core's protocol of its call), how it
//! ended ([`Outcome`]) and the provenance and failure records written for it.

use super::events::Event;
use repoprobe_core::model::failure::{Cause, CouldNotRun, Status};
use repoprobe_core::protocol::Protocol;
use repoprobe_llm::Tokens;
use serde::Serialize;
use std::fmt::Display;

/// What one key asks: the prompt, the reply schema and the check of a reply.
///
/// A command names the key and the core's [`Protocol`] of its call (prompt, schema, check,
/// re-ask: one implementation each, in the core); the rest is provided here.
pub trait Task: Send + 'static {
    /// The record key; serialised at the head of its failure record.
    type Key: Clone + Display + Serialize + Send + 'static;
    /// What a valid reply gives, for the command's record.
    type Value: Send + 'static;
    /// The core's protocol of this key's call, borrowing the task's inputs.
    type Protocol<'a>: Protocol
    where
        Self: 'a;
    fn key(&self) -> &Self::Key;
    fn protocol(&self) -> Self::Protocol<'_>;
    /// The record's value from the protocol's checked reply (with what the task adds to it).
    fn value(&self, reply: <Self::Protocol<'_> as Protocol>::Reply) -> Self::Value;

    /// The system message and first user message; with `describe_schema` (prompt-only JSON
    /// mode) the user message spells out the schema.
    fn prompt(&self, describe_schema: bool) -> (String, String) {
        let p = self.protocol().prompt(describe_schema);
        (p.system, p.user)
    }
    /// The reply schema's name and JSON text (key order kept).
    fn schema(&self) -> (&'static str, String) {
        (
            <Self::Protocol<'_> as Protocol>::REPLY_NAME,
            self.protocol().reply_schema_json(),
        )
    }
    /// What the forced tool records (tool mode).
    fn tool_description(&self) -> &'static str {
        <Self::Protocol<'_> as Protocol>::TOOL_DESCRIPTION
    }
    /// The core's check of a reply: the value, or one message per violation.
    fn check(&self, reply: &str) -> Result<Self::Value, Vec<String>> {
        let checked = self.protocol().parse_reply(reply)?;
        Ok(self.value(checked))
    }
    /// The reply's expected size in tokens, for `--estimate` (an assumption of each protocol).
    fn expected_output_tokens(&self) -> u64 {
        400
    }
    /// The message sent back after an invalid reply.
    fn reask(&self, violations: &[String]) -> String {
        self.protocol().reask_message(violations)
    }
}

/// Token usage of one key, as written on its record.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct UsageOut {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub calls: u32,
    pub retries: u32,
    /// Calls whose reply said nothing of usage (a server that reports it only in streams with
    /// `stream_options.include_usage`, or not at all): their tokens are not in the counts.
    #[serde(skip_serializing_if = "is_zero")]
    pub calls_without_usage: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The provenance every record of a live call carries after its own fields.
#[derive(Serialize)]
pub struct Provenance<'a> {
    pub prompt_version: &'a str,
    pub provider: &'a str,
    pub structured: &'a str,
    pub usage: UsageOut,
    pub raw_reply: &'a str,
}

/// A line of the failures journal of every live command (docs/format.md#failure-record): the
/// key, how it ended (`status`, and `cause` when it could not run) and why. Never a result.
/// The judges' provenance (`provider`, `structured`, `usage`) is left out where no model call
/// of ours is the key's (`answer`'s agent, `curate verify`).
#[derive(Serialize)]
pub(crate) struct FailureRecord<'a, K> {
    #[serde(flatten)]
    pub key: &'a K,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    pub reason: &'a str,
    pub violations: &'a [String],
    pub prompt_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageOut>,
    pub raw_reply: Option<&'a str>,
}

/// How a key ended: its value, or why it has none; and what it spent.
pub(crate) struct Outcome<K, V> {
    pub key: K,
    pub result: Result<V, Failed>,
    pub http_retries: u32,
    pub reasks: u32,
    pub calls: u32,
    pub tokens: Tokens,
    /// Of `calls`, those whose reply reported no usage.
    pub without_usage: u32,
}

impl<K, V> Outcome<K, V> {
    /// What the key spent, as the event that counts it.
    pub fn spent(&self) -> Event<'static> {
        Event::Spent {
            calls: self.calls,
            http_retries: self.http_retries,
            reasks: self.reasks,
            tokens: self.tokens,
            without_usage: self.without_usage,
        }
    }

    /// A key that has not ended yet (it could not run until it says otherwise).
    pub fn begun(key: K) -> Outcome<K, V> {
        Outcome {
            key,
            result: Err(Failed::could_not_run(CouldNotRun::new(
                Cause::Environment,
                "the key never ran",
            ))),
            http_retries: 0,
            reasks: 0,
            calls: 0,
            tokens: Tokens::default(),
            without_usage: 0,
        }
    }
}

/// Why a key has no record: it [could not run](Failed::could_not_run) (a cause, never the
/// model's doing) or it [failed](Failed::refused) (a reply still invalid, a record not made).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failed {
    /// `Some` when the key could not run.
    pub cause: Option<Cause>,
    pub reason: String,
    pub violations: Vec<String>,
    pub raw_reply: Option<String>,
}

impl Failed {
    pub fn could_not_run(c: CouldNotRun) -> Failed {
        Failed {
            cause: Some(c.cause),
            reason: c.why,
            violations: Vec::new(),
            raw_reply: None,
        }
    }

    /// A key that ran and gave nothing usable, for `reason`.
    pub fn refused(reason: impl Into<String>) -> Failed {
        Failed {
            cause: None,
            reason: reason.into(),
            violations: Vec::new(),
            raw_reply: None,
        }
    }

    pub fn status(&self) -> Status {
        match self.cause {
            Some(_) => Status::CouldNotRun,
            None => Status::Failed,
        }
    }

    /// The failure record of `key` (its reason scrubbed by the caller), without a judge's
    /// provenance.
    pub fn record<'a, K>(&'a self, key: &'a K, prompt_version: &'a str) -> FailureRecord<'a, K> {
        FailureRecord {
            key,
            status: self.status(),
            cause: self.cause,
            reason: &self.reason,
            violations: &self.violations,
            prompt_version,
            provider: None,
            structured: None,
            usage: None,
            raw_reply: self.raw_reply.as_deref(),
        }
    }

    /// The event that reports it.
    pub fn event<'a>(&'a self, key: &'a dyn Display) -> Event<'a> {
        Event::Failed {
            key,
            cause: self.cause,
            reason: &self.reason,
            violations: &self.violations,
        }
    }
}
