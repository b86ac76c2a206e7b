//! Text made fit for a message: cut to a number of characters (never inside one), an error told
//! with its causes. The one copy every crate of ours that talks HTTP uses (this one, the GitHub
//! client, the link fetcher; the agents' git may too). Pure functions of their arguments.
//!
//! Must not scrub secrets or decide what a terminal may show: a caller scrubs a body whole
//! before cutting it (a key cut in two would no longer be found), and the core's
//! `report::terminal_safe*` make text safe to print.

/// The first `max_chars` characters of `text`, and whether any were left off.
pub fn prefix(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => (&text[..at], true),
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

/// `text` cut to its last `max_chars` characters, with `…` before them when any were left off
/// (a command's last lines say what went wrong).
pub fn cut_tail(text: &str, max_chars: usize) -> String {
    let n = text.chars().count();
    if n <= max_chars {
        return text.to_string();
    }
    let tail: String = text.chars().skip(n - max_chars).collect();
    format!("…{tail}")
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
        assert_eq!(cut_tail("héllo", 5), "héllo");
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
}
