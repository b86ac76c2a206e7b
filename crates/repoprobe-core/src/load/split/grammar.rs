//! The little JSON grammar the splitter checks at the levels it watches (the array of records,
//! the container object): which byte may come in which phase, and how the JSON parser words it
//! when one may not. Deeper levels are left to each record's parse.

use crate::issue::IssueKind;

/// Where the scan stands in an array (of records) or in the container object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Just after `[` or `{`: a value (key) or the close.
    Open,
    /// After a comma: a value (key).
    Next,
    /// Inside a key (objects).
    Key,
    /// After a key: `:`.
    Colon,
    /// After `:`: a value.
    Value,
    /// Inside a value.
    In,
    /// After a value: a comma or the close.
    After,
}

/// A problem in the structure, at an index of the slice being scanned, of a kind.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Fatal(pub(super) usize, pub(super) IssueKind, pub(super) String);

impl Fatal {
    /// Broken JSON at `i`, as the JSON parser would word it.
    pub(super) fn broken(i: usize, message: impl Into<String>) -> Self {
        Fatal(i, IssueKind::BrokenJson, message.into())
    }
}

/// A closing bracket of the watched array or object in `phase`.
pub(super) fn close_allowed(phase: Phase, i: usize) -> Result<(), Fatal> {
    match phase {
        Phase::Open | Phase::After => Ok(()),
        Phase::Next => Err(Fatal::broken(i, "trailing comma")),
        Phase::Colon => Err(Fatal::broken(i, "expected `:`")),
        Phase::Value | Phase::In => Err(Fatal::broken(i, "expected value")),
        Phase::Key => Err(Fatal::broken(i, "key must be a string")),
    }
}

/// A comma in the watched array (`array`) or object in `phase`.
pub(super) fn comma_allowed(phase: Phase, i: usize, array: bool) -> Result<(), Fatal> {
    match phase {
        Phase::After => Ok(()),
        Phase::Colon => Err(Fatal::broken(i, "expected `:`")),
        _ if array => Err(Fatal::broken(i, "expected value")),
        Phase::Value => Err(Fatal::broken(i, "expected value")),
        _ => Err(Fatal::broken(i, "key must be a string")),
    }
}

/// What the JSON parser says when a value comes where a separator or `close` was due.
pub(super) fn expected_after(close: u8) -> String {
    format!("expected `,` or `{}`", close as char)
}

#[cfg(test)]
mod tests {
    use super::{Fatal, Phase, close_allowed, comma_allowed, expected_after};

    fn message(r: Result<(), Fatal>) -> Option<String> {
        r.err().map(|Fatal(_, _, m)| m)
    }

    #[test]
    fn a_close_is_allowed_only_when_empty_or_after_a_value() {
        assert_eq!(close_allowed(Phase::Open, 3), Ok(()));
        assert_eq!(close_allowed(Phase::After, 3), Ok(()));
        let no = |p| message(close_allowed(p, 3));
        assert_eq!(no(Phase::Next).as_deref(), Some("trailing comma"));
        assert_eq!(no(Phase::Colon).as_deref(), Some("expected `:`"));
        assert_eq!(no(Phase::Value).as_deref(), Some("expected value"));
        assert_eq!(no(Phase::In).as_deref(), Some("expected value"));
        assert_eq!(no(Phase::Key).as_deref(), Some("key must be a string"));
        assert_eq!(close_allowed(Phase::Next, 7).unwrap_err().0, 7);
    }

    /// A comma only follows a value; what is missing before it is worded for an array (a value)
    /// or an object (a key, or its value).
    #[test]
    fn a_comma_is_allowed_only_after_a_value() {
        assert_eq!(comma_allowed(Phase::After, 0, true), Ok(()));
        assert_eq!(comma_allowed(Phase::After, 0, false), Ok(()));
        let no = |p, array| message(comma_allowed(p, 0, array));
        assert_eq!(no(Phase::Open, true).as_deref(), Some("expected value"));
        assert_eq!(no(Phase::Next, true).as_deref(), Some("expected value"));
        assert_eq!(
            no(Phase::Open, false).as_deref(),
            Some("key must be a string")
        );
        assert_eq!(no(Phase::Value, false).as_deref(), Some("expected value"));
        assert_eq!(no(Phase::Colon, false).as_deref(), Some("expected `:`"));
        assert_eq!(no(Phase::Colon, true).as_deref(), Some("expected `:`"));
    }

    #[test]
    fn expected_after_names_the_close() {
        assert_eq!(expected_after(b']'), "expected `,` or `]`");
        assert_eq!(expected_after(b'}'), "expected `,` or `}`");
    }
}
