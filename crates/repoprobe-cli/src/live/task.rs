//! What a key of a live call is: its [`Task`] (a key and the core's protocol of its call), how it
//! ended ([`Outcome`]) and the provenance and failure records written for it.

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

/// A line of the failures journal: the key, `"status": "failed"` and why. Never a result.
#[derive(Serialize)]
pub(super) struct FailureRecord<'a, K> {
    #[serde(flatten)]
    pub(super) key: &'a K,
    pub(super) status: &'a str,
    pub(super) reason: &'a str,
    pub(super) violations: &'a [String],
    pub(super) prompt_version: &'a str,
    pub(super) provider: &'a str,
    pub(super) structured: &'a str,
    pub(super) usage: UsageOut,
    pub(super) raw_reply: Option<&'a str>,
}

/// How a key ended.
pub(super) struct Outcome<K, V> {
    pub key: K,
    pub result: Result<(V, String), Failed>,
    pub http_retries: u32,
    pub reasks: u32,
    pub calls: u32,
    pub tokens: Tokens,
}

pub(super) struct Failed {
    pub reason: String,
    pub violations: Vec<String>,
    pub raw_reply: Option<String>,
}
