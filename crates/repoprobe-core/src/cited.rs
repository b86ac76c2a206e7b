//! Repository paths cited in prose (`src/lib.rs`, `src/lib.rs:12`, `src/lib.rs#L12-L20`,
//! `src/parser/`), found one way for everyone who looks for them: the site links them to the
//! file at the pinned commit, and `repoprobe evidence` turns the ones a checklist cites into the
//! items' evidence. One recogniser, so that what the page links is what the command counts.
//!
//! A path is recognised only where it stands on its own (not inside a URL or an e-mail address)
//! and only when it looks like one: a `/` between parts (or a leading `./` for a file at the
//! root), no empty, `.` or `..` part, and either a file name with an extension or a trailing
//! `/` (a directory). Bare names (`README.md`, `Node.js`) are not paths here: prose is full of
//! dotted words that are not files.

use crate::model::repo_path;

/// A piece of text: plain, or a repository path with its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Path {
        /// The text as written, lines included (`src/lib.rs:12`).
        text: &'a str,
        /// The path alone, as written (`src/lib.rs`, `./a.rs`, `src/parser/`).
        path: &'a str,
        /// The first line and, for a range, the last.
        lines: Option<(u32, Option<u32>)>,
    },
}

/// A path cited in a text, [normalised](repo_path::normalise), with its lines as evidence
/// writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cited {
    pub path: String,
    /// `[start, end]`, 1-based and inclusive; `None` when no line was given, or when the lines
    /// given are no range (a line 0, an end before the start): the path still counts.
    pub lines: Option<[u32; 2]>,
}

/// Every path cited in `text`, in the order written (repeats kept: the caller decides what a
/// second citation means). A recognised path that is no repository path once normalised is
/// left out.
pub fn cited(text: &str) -> Vec<Cited> {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Path { path, lines, .. } => Some(Cited {
                path: repo_path::normalise(path).ok()?,
                lines: lines.and_then(range),
            }),
            Piece::Text(_) => None,
        })
        .collect()
}

/// A path written with its lines (`src/a.rs:12`, `src/a.rs:12-40`, `src/a.rs#L12-L40`), as a
/// model may write an evidence path: the path before them and the lines as evidence writes
/// them. Text without such an ending is the path as given, with no lines.
pub fn split_lines(s: &str) -> (&str, Option<[u32; 2]>) {
    if let Some(at) = s.rfind([':', '#'])
        && let Some((lines, used)) = lines_after(&s[at..])
        && at + used == s.len()
        && at > 0
    {
        return (&s[..at], range(lines));
    }
    (s, None)
}

/// `(from, to)` as evidence lines, when it is a range of lines.
fn range((from, to): (u32, Option<u32>)) -> Option<[u32; 2]> {
    let to = to.unwrap_or(from);
    (from >= 1 && to >= from).then_some([from, to])
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Whether `s` looks like a relative path (see the module's comment).
fn looks_like_path(s: &str) -> bool {
    let (s, dotted) = match s.strip_prefix("./") {
        Some(rest) => (rest, true),
        None => (s, false),
    };
    if s.starts_with('/') || (!dotted && !s.contains('/')) {
        return false;
    }
    if let Some(dir) = s.strip_suffix('/') {
        return looks_like_dir(dir);
    }
    if s.split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return false;
    }
    let last = s.rsplit('/').next().unwrap_or("");
    match last.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=10).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && ext.bytes().any(|b| b.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// A directory written with its trailing `/` removed: parts that are names (a letter in each,
/// no `.` or `..`), the first of at least two characters, so that `w/` ("with") or `I/O/` is
/// not a directory.
fn looks_like_dir(s: &str) -> bool {
    !s.is_empty()
        && s.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg.bytes().any(|b| b.is_ascii_alphabetic())
        })
        && s.split('/').next().is_some_and(|first| first.len() >= 2)
}

/// Reads lines after a path: `:12`, `:12-20`, `:L12-L20`, `#L12`, `#L12-L20` (`-` or `–`).
fn lines_after(s: &str) -> Option<((u32, Option<u32>), usize)> {
    let first = s.chars().next()?;
    if first != ':' && first != '#' {
        return None;
    }
    let rest = &s[first.len_utf8()..];
    let (rest, skipped) = match rest.strip_prefix('L') {
        Some(r) => (r, 1),
        None if first == '#' => return None,
        None => (rest, 0),
    };
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(rest);
    if n == 0 || n > 7 {
        return None;
    }
    let from: u32 = rest[..n].parse().ok()?;
    let mut used = first.len_utf8() + skipped + n;
    let after = &rest[n..];
    let dash = after
        .strip_prefix('-')
        .map(|r| (r, 1))
        .or_else(|| after.strip_prefix('–').map(|r| (r, '–'.len_utf8())));
    let mut to = None;
    if let Some((r, dl)) = dash {
        let (r, l) = match r.strip_prefix('L') {
            Some(r) => (r, 1),
            None => (r, 0),
        };
        let m = digits(r);
        if m > 0 && m <= 7 {
            to = r[..m].parse().ok();
            used += dl + l + m;
        }
    }
    Some(((from, to), used))
}

/// Splits `text` into plain text and repository paths; the pieces, joined, are `text`.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut plain_from = 0;
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let boundary = i == 0
            || !text[..i]
                .chars()
                .next_back()
                .is_some_and(|p| path_char(p) || p == ':' || p == '@');
        if !(path_char(c) && boundary) {
            i += c.len_utf8();
            continue;
        }
        let len = text[i..]
            .find(|c: char| !path_char(c))
            .unwrap_or(text.len() - i);
        // Sentence punctuation after a path is not part of it.
        let token = text[i..i + len].trim_end_matches(['.', '-']);
        let mut end = i + token.len();
        if looks_like_path(token) {
            let lines = if end == i + len && !token.ends_with('/') {
                lines_after(&text[end..])
            } else {
                None
            };
            if let Some((_, used)) = lines {
                end += used;
            }
            if plain_from < i {
                out.push(Piece::Text(&text[plain_from..i]));
            }
            out.push(Piece::Path {
                text: &text[i..end],
                path: token,
                lines: lines.map(|l| l.0),
            });
            plain_from = end;
            i = end;
        } else {
            i += len.max(1);
        }
    }
    if plain_from < text.len() {
        out.push(Piece::Text(&text[plain_from..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    type Found<'a> = (&'a str, &'a str, Option<(u32, Option<u32>)>);

    fn paths(text: &str) -> Vec<Found<'_>> {
        pieces(text)
            .into_iter()
            .filter_map(|x| match x {
                Piece::Path { text, path, lines } => Some((text, path, lines)),
                Piece::Text(_) => None,
            })
            .collect()
    }

    #[test]
    fn paths_and_lines_are_found_in_prose() {
        let text = "See src/lib.rs:12, and `a/b.py#L3-L9`. Not e.g. or 1.5 or http://x/y.rs.";
        assert_eq!(
            paths(text),
            [
                ("src/lib.rs:12", "src/lib.rs", Some((12, None))),
                ("a/b.py#L3-L9", "a/b.py", Some((3, Some(9))))
            ]
        );
        let back: String = pieces(text)
            .iter()
            .map(|x| match x {
                Piece::Text(t) => *t,
                Piece::Path { text, .. } => *text,
            })
            .collect();
        assert_eq!(back, text);
        assert_eq!(
            pieces("x/y.rs:L12–L20")[0],
            Piece::Path {
                text: "x/y.rs:L12–L20",
                path: "x/y.rs",
                lines: Some((12, Some(20)))
            }
        );
    }

    #[test]
    fn directories_and_root_files_written_as_paths_are_paths_and_bare_words_are_not() {
        assert_eq!(
            paths("the parser in src/parser/. and ./README.md"),
            [
                ("src/parser/", "src/parser/", None),
                ("./README.md", "./README.md", None)
            ]
        );
        for prose in [
            "README.md",
            "Node.js and ASP.NET",
            "w/ caching",
            "I/O/ bound",
            "and/or",
            "mail a@b/c.rs",
            "v1.2/3.4",
        ] {
            assert_eq!(paths(prose), [], "{prose:?}");
        }
    }

    #[test]
    fn citations_are_normalised_with_their_lines_as_evidence_writes_them() {
        let c = cited("src/a.rs:12 then ./src/b.rs:12-40, src/c.rs:9-3, src/d.rs:0 and src/e/");
        let got: Vec<(&str, Option<[u32; 2]>)> =
            c.iter().map(|c| (c.path.as_str(), c.lines)).collect();
        assert_eq!(
            got,
            [
                ("src/a.rs", Some([12, 12])),
                ("src/b.rs", Some([12, 40])),
                ("src/c.rs", None),
                ("src/d.rs", None),
                ("src/e", None)
            ]
        );
    }

    #[test]
    fn lines_are_split_off_a_path() {
        assert_eq!(split_lines("src/a.rs:12"), ("src/a.rs", Some([12, 12])));
        assert_eq!(split_lines("src/a.rs:12-40"), ("src/a.rs", Some([12, 40])));
        assert_eq!(split_lines("src/a.rs#L3-L9"), ("src/a.rs", Some([3, 9])));
        assert_eq!(split_lines("src/a.rs:40-12"), ("src/a.rs", None));
        assert_eq!(split_lines("src/a.rs"), ("src/a.rs", None));
        assert_eq!(split_lines("src/a.rs:12x"), ("src/a.rs:12x", None));
        assert_eq!(split_lines(":12"), (":12", None));
        assert_eq!(split_lines("a#b"), ("a#b", None));
    }

    #[test]
    fn no_text_makes_it_panic_or_loop() {
        for t in [
            "",
            ":",
            "#L",
            "a/b.rs:",
            "a/b.rs#L",
            "a/b.rs:99999999",
            "é/ü.rs:1–",
            "./",
            "../x.rs",
            "/abs/x.rs",
            "a//b.rs",
            "ü",
            "a/b.rs:1-",
            "a/b.rs:L1-L",
        ] {
            let back: String = pieces(t)
                .iter()
                .map(|x| match x {
                    Piece::Text(t) => *t,
                    Piece::Path { text, .. } => *text,
                })
                .collect();
            assert_eq!(back, t);
            let _ = cited(t);
        }
        assert!(cited("../x.rs /abs/x.rs").is_empty());
    }
}
