//! Problems found while loading, as data: every bad record becomes an [`Issue`] with the file,
//! where in it, and a reason a person can act on. Nothing here aborts a load.

use serde::{Deserialize, Serialize};

/// How bad an issue is; decides the exit code of `repoprobe validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// One record is invalid or a duplicate; it is left out, the rest of the file loads.
    Record,
    /// The file (or the rest of it) cannot be read at all: not UTF-8, not JSON, unknown shape.
    File,
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Issue {
    pub file: String,
    /// `line 12` for JSONL, a JSON path such as `$.judgments[3].items[1].score` for JSON, or
    /// `line 4, column 7` for a syntax error.
    pub location: String,
    pub message: String,
    pub severity: Severity,
}

/// Untrusted values quoted in messages are cut to this many characters.
const QUOTE_MAX: usize = 60;

/// Quotes an untrusted value for a message, cut so that a 10 MB string cannot flood a report.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(QUOTE_MAX) + 4);
    out.push('"');
    let mut chars = value.chars();
    for c in chars.by_ref().take(QUOTE_MAX) {
        out.extend(c.escape_debug());
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_long_values_and_escapes_controls() {
        let long = "x".repeat(1000);
        let q = quote(&long);
        assert!(q.chars().count() < 70, "{q}");
        assert!(q.ends_with("…\""));
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
    }
}
