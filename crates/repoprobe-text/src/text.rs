//! Text of untrusted origin made fit for a message, a terminal or a log: cut to a number of
//! characters (never inside one), quoted, made inert. The one copy every crate uses — the core's
//! messages and renderers, the LLM and GitHub clients, the link fetcher, the agents, the CLI —
//! so a value is cut and escaped the same way wherever it is shown. Pure functions.
//!
//! Must not scrub secrets: a caller scrubs a body whole before cutting it (a key cut in two
//! would no longer be found).

/// The first `max_chars` characters of `text`, and whether any were left off.
pub fn prefix(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// The last `max_chars` characters of `text`, and whether any were left off before them.
pub fn suffix(text: &str, max_chars: usize) -> (&str, bool) {
    let Some(last) = max_chars.checked_sub(1) else {
        return ("", !text.is_empty());
    };
    match text.char_indices().rev().nth(last) {
        Some((at, _)) => (&text[at..], at > 0),
        None => (text, false),
    }
}

/// `text` cut to its first `max_chars` characters, with `…` after them when any were left off.
pub fn cut(text: &str, max_chars: usize) -> String {
    match prefix(text, max_chars) {
        (head, true) => format!("{head}…"),
        (whole, false) => whole.to_string(),
    }
}

/// `text` in at most `max_chars` characters all told, the last one `…` when any were left off
/// (a label in a fixed width).
pub fn fit(text: &str, max_chars: usize) -> String {
    match prefix(text, max_chars) {
        (whole, false) => whole.to_string(),
        (_, true) => cut(text, max_chars.saturating_sub(1)),
    }
}

/// `text` cut to its last `max_chars` characters, with `…` before them when any were left off
/// (a command's last lines say what went wrong).
pub fn cut_tail(text: &str, max_chars: usize) -> String {
    match suffix(text, max_chars) {
        (tail, true) => format!("…{tail}"),
        (whole, false) => whole.to_string(),
    }
}

/// An error and its sources, joined by `: ` (reqwest's own message names only the outermost
/// error, not the connection refused or the certificate behind it). Not cut.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
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

/// An untrusted value for the end of a message as a JSON string: its first `max` characters,
/// `…` after them when any were left off (the agent's tools and git show values this way, so a
/// model reads them as data).
pub fn quote_json(value: &str, max: usize) -> String {
    let (head, more) = prefix(value, max);
    let q = if more {
        format!("{head}…")
    } else {
        head.to_string()
    };
    serde_json::to_string(&q).unwrap_or(q)
}

/// Whether a character may not reach a terminal, a spreadsheet or a TeX file as itself: C0
/// and C1 controls (ESC starts ANSI/OSC sequences that recolour, retitle or rewrite the
/// screen), DEL, Unicode's line and paragraph separators, and the bidirectional overrides
/// and isolates that make text read otherwise than it is stored.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Untrusted text (model, judge and stratum names, messages) as one inert terminal line: every
/// control, separator or bidi character is shown escaped (`\u{1b}`, `\n`), everything else as
/// it is. Borrowed when there is nothing to escape, which is nearly always.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_char(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`terminal_safe`] for text of several lines (a progress message, an error): each line is
/// made inert on its own and the line breaks are kept.
pub fn terminal_safe_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| terminal_safe(l.strip_suffix('\r').unwrap_or(l)).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_count_characters_not_bytes() {
        assert_eq!(prefix("héllo", 2), ("hé", true));
        assert_eq!(prefix("héllo", 5), ("héllo", false));
        assert_eq!(prefix("", 0), ("", false));
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("héllo", 5), "héllo");
        assert_eq!(cut_tail("héllo", 3), "…llo");
        assert_eq!(fit("héllo", 5), "héllo");
        assert_eq!(fit("héllo", 4), "hél…");
        assert_eq!(fit("héllo", 0), "…");
        assert_eq!(cut_tail("héllo", 5), "héllo");
        assert_eq!(cut_tail("héllo", 4), "…éllo");
        assert_eq!(suffix("héllo", 0), ("", true));
        assert_eq!(suffix("", 0), ("", false));
        assert_eq!(suffix("héllo", 9), ("héllo", false));
    }

    #[test]
    fn an_error_chain_names_every_cause() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error sending request")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = Outer(std::io::Error::other("connection refused"));
        assert_eq!(error_chain(&e), "error sending request: connection refused");
    }

    #[test]
    fn quote_cuts_long_values_and_escapes_controls() {
        let long = "x".repeat(1000);
        let q = quote(&long);
        assert!(q.chars().count() < 70, "{q}");
        assert!(q.ends_with("…\""));
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
    }

    #[test]
    fn a_json_quote_is_cut_and_escaped() {
        assert_eq!(quote_json("ab\"c", 10), r#""ab\"c""#);
        assert_eq!(quote_json("héllo", 2), r#""hé…""#);
    }

    #[test]
    fn terminal_text_keeps_lines_and_escapes_the_rest() {
        assert_eq!(terminal_safe("plain"), "plain");
        assert_eq!(terminal_safe("a\u{1b}]0;x\u{7}"), "a\\u{1b}]0;x\\u{7}");
        assert_eq!(terminal_safe_lines("a\r\nb\u{202e}"), "a\nb\\u{202e}");
    }
}
