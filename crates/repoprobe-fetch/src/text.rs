//! A page's body as text for the model: which content types are read, how bytes become
//! characters, HTML without its markup, scripts and styles. The cut to
//! [`FetchLimits::max_text_chars`](crate::FetchLimits) is the shared `repoprobe_text::text::prefix`.
//!
//! - **Read**: `text/html` and `application/xhtml+xml` (turned into text), `application/json`,
//!   and every `text/*` (`text/plain`, `text/markdown`, `text/x-markdown`, `text/x-rst`, source
//!   files served as text …: a link to a raw file is context too). Anything else (images, PDFs,
//!   archives, `application/octet-stream`) is not read, and neither is a reply without a content
//!   type: sniffing would guess at bytes a stranger chose.
//! - **Charset**: a byte order mark, else the content type's `charset`, else (HTML) a
//!   `<meta charset>` in the first KiB, else UTF-8; decoded with `encoding_rs` (already in the
//!   build), malformed bytes as U+FFFD, so no body is refused for its bytes.
//! - **HTML**: `html2text` (html5ever's parser, as a browser parses): `<script>`, `<style>` and
//!   `<head>` are dropped, no CSS read, no link footnotes (a page's navigation would fill the
//!   budget).
//!   A page nested deeper than [`MAX_DEPTH`] (html2text's time grows with depth) is read by a
//!   tag stripper of our own instead, in one pass.
//! - **Tidy**: control characters but newline and tab removed, runs of blank lines made one.

/// How a content type is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Text,
}

/// Line width of the HTML rendering: long enough that prose is rarely wrapped mid-sentence.
const HTML_WIDTH: usize = 100;

/// The kind of a `Content-Type` value, `None` when it is not read.
pub fn kind_of(content_type: &str) -> Option<Kind> {
    let essence = essence(content_type);
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "application/json" => Some(Kind::Text),
        e if e.starts_with("text/") && e.len() > 5 => Some(Kind::Text),
        _ => None,
    }
}

/// `type/subtype`, lower case, without parameters.
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a content type.
fn charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']))
    })
}

/// A `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">` in the first KiB.
fn meta_charset(body: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = &body[..body.len().min(1024)];
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let label: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_:.".contains(*c))
        .collect();
    encoding_rs::Encoding::for_label(label.as_bytes())
}

/// The body as characters.
pub fn decode(body: &[u8], content_type: &str, kind: Kind) -> String {
    let declared = charset(content_type)
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .or_else(|| (kind == Kind::Html).then(|| meta_charset(body)).flatten())
        .unwrap_or(encoding_rs::UTF_8);
    // `decode` prefers a byte order mark over the label, as browsers do.
    let (text, _, _) = declared.decode(body);
    text.into_owned()
}

/// The deepest nesting of elements handed to `html2text`: its time grows with the number of
/// elements times their depth (20,000 nested `<div>`s take seconds), and no real page nests
/// this deep (Blink, for one, caps a DOM's depth at 512). A deeper page is read by
/// [`strip_tags`], in one pass.
const MAX_DEPTH: usize = 256;

/// HTML's text (the caller runs this where a panic or a deep stack cannot hurt).
pub fn html_to_text(html: &str) -> Result<String, html2text::Error> {
    if nesting_depth(html) > MAX_DEPTH {
        return Ok(strip_tags(html));
    }
    html2text::config::plain_no_decorate()
        .allow_width_overflow()
        .no_table_borders()
        .string_from_read(html.as_bytes(), HTML_WIDTH)
}

/// Elements whose end tag may be left out, or that have none: not counted as nesting.
const UNNESTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody",
    "tfoot", "colgroup", "caption", "rb", "rt", "rp", "html", "head", "body",
];

/// Elements whose content is not text.
const RAW: &[&str] = &[
    "script", "style", "template", "noscript", "textarea", "title",
];

/// Inline elements: no line break where they start or end.
const INLINE: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q",
    "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var",
];

/// One piece of HTML as [`tokens`] cuts it.
enum Token<'a> {
    Text(&'a str),
    /// A tag's name (lower case), and whether it is an end tag or self-closing.
    Tag {
        name: String,
        end: bool,
        closed: bool,
    },
}

/// HTML cut into text and tags, comments and the content of [`RAW`] elements skipped (a rough
/// tokenizer, linear in the input: for the depth check and the fallback reader only).
fn tokens(html: &str, mut each: impl FnMut(Token<'_>)) {
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        if lt > 0 {
            each(Token::Text(&rest[..lt]));
        }
        let at = &rest[lt..];
        if let Some(after) = at.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |e| &after[e + 3..]);
            continue;
        }
        let end = at[1..].starts_with('/');
        let name: String = at[1 + usize::from(end)..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() && !at[1..].starts_with(['!', '?']) {
            each(Token::Text("<"));
            rest = &at[1..];
            continue;
        }
        let close = at.find('>').map_or(at.len(), |i| i + 1);
        let closed = at[..close].ends_with("/>");
        rest = &at[close..];
        if !end && RAW.contains(&name.as_str()) {
            let lower = rest.to_ascii_lowercase();
            let stop = lower.find(&format!("</{name}")).unwrap_or(rest.len());
            rest = &rest[stop..];
        }
        if !name.is_empty() {
            each(Token::Tag { name, end, closed });
        }
    }
    if !rest.is_empty() {
        each(Token::Text(rest));
    }
}

/// How deep elements nest, roughly (end tags left out of [`UNNESTED`] elements not counted).
fn nesting_depth(html: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    tokens(html, |t| {
        if let Token::Tag { name, end, closed } = t {
            if UNNESTED.contains(&name.as_str()) || closed {
                return;
            }
            if end {
                depth = depth.saturating_sub(1);
            } else {
                depth += 1;
                deepest = deepest.max(depth);
            }
        }
    });
    deepest
}

/// The text of HTML without a parser: tags dropped (a line break for a block's), the content of
/// scripts and styles skipped, the common character references decoded.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    tokens(html, |t| match t {
        Token::Text(text) => out.push_str(&unescape(text)),
        Token::Tag { name, .. } if !INLINE.contains(&name.as_str()) => out.push('\n'),
        Token::Tag { .. } => {}
    });
    out
}

/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and numeric references; others as written.
fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let semi = after.find(';').filter(|&i| i <= 10);
        let decoded = semi.and_then(|i| {
            let name = &after[..i];
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let n = name.strip_prefix('#')?;
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, i))
        });
        match decoded {
            Some((c, i)) => {
                out.push(c);
                rest = &after[i + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Control characters (but newline and tab) removed, line ends made `\n`, trailing blanks of
/// each line and runs of blank lines dropped.
pub fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0usize;
    for line in text.split('\n') {
        let line: String = line
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect();
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_types_are_read_and_the_rest_is_not() {
        for (ct, kind) in [
            ("text/html", Some(Kind::Html)),
            ("Text/HTML; charset=UTF-8", Some(Kind::Html)),
            ("application/xhtml+xml", Some(Kind::Html)),
            ("text/plain", Some(Kind::Text)),
            ("text/markdown; variant=GFM", Some(Kind::Text)),
            ("text/x-markdown", Some(Kind::Text)),
            ("text/x-rst", Some(Kind::Text)),
            ("application/json", Some(Kind::Text)),
            ("image/png", None),
            ("application/pdf", None),
            ("application/octet-stream", None),
            ("text/", None),
            ("", None),
            ("texthtml", None),
        ] {
            assert_eq!(kind_of(ct), kind, "{ct}");
        }
    }

    #[test]
    fn charsets_come_from_the_bom_the_header_the_meta_tag_or_utf8() {
        assert_eq!(
            decode(b"caf\xe9", "text/plain; charset=ISO-8859-1", Kind::Text),
            "café"
        );
        assert_eq!(
            decode(
                b"caf\xe9",
                "text/plain; charset=\"windows-1252\"",
                Kind::Text
            ),
            "café"
        );
        assert_eq!(
            decode(
                b"<meta charset=\"iso-8859-1\"><p>caf\xe9</p>",
                "text/html",
                Kind::Html
            ),
            "<meta charset=\"iso-8859-1\"><p>café</p>"
        );
        // A BOM wins over the label.
        assert_eq!(
            decode(
                b"\xef\xbb\xbfcaf\xc3\xa9",
                "text/plain; charset=latin1",
                Kind::Text
            ),
            "café"
        );
        // Not UTF-8, no label: replacement characters, not a refusal.
        assert_eq!(decode(b"a\xffb", "text/plain", Kind::Text), "a\u{fffd}b");
        assert_eq!(
            decode(b"a", "text/plain; charset=nonsense", Kind::Text),
            "a"
        );
    }

    #[test]
    fn html_text_has_the_words_and_no_script_or_style() {
        let text = html_to_text(
            "<html><head><title>T</title><style>body { color: red }</style>\
             <script>var secret = 1;</script></head>\
             <body><h1>Install</h1><p>Run <b>cargo</b> <a href=\"/x\">build</a>.</p>\
             <script>alert('x')</script><noscript>enable js</noscript></body></html>",
        )
        .unwrap();
        assert!(text.contains("Install"), "{text}");
        // Headings and links keep a mark of what they were (`# `, `[…]`); no URL footnotes.
        assert!(text.contains("# Install"), "{text}");
        assert!(text.contains("Run cargo [build]."), "{text}");
        assert!(!text.contains("/x"), "{text}");
        for gone in ["secret", "alert", "color: red", "<"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }

    #[test]
    fn hostile_html_gives_text_or_an_error_never_a_panic() {
        for html in [
            String::new(),
            "<".into(),
            "<html".into(),
            "</p></div></table>".into(),
            "<table><tr><td colspan=100000 rowspan=100000>x</td></tr></table>".into(),
            "<ol start=-9223372036854775808><li>x</li></ol>".into(),
            "<ol start=99999999999999999999><li>x</li></ol>".into(),
            "<div>".repeat(5000),
            "<div>".repeat(MAX_DEPTH),
            "<blockquote>".repeat(2000),
            "<table><tr><td>".repeat(300),
            "<ul><li>".repeat(2000),
            "\u{0}\u{feff}<p>\u{202e}x</p>".into(),
        ] {
            let big_stack = std::thread::Builder::new().stack_size(64 << 20);
            let html2 = html.clone();
            let joined = big_stack
                .spawn(move || html_to_text(&html2).map(|t| t.len()))
                .unwrap()
                .join();
            assert!(
                joined.is_ok(),
                "panicked on {:?}",
                &html[..html.len().min(40)]
            );
        }
    }

    #[test]
    fn a_page_nested_too_deep_for_html2text_is_read_by_the_tag_stripper_quickly() {
        assert_eq!(
            nesting_depth("<div><p>a<p>b<br><img src=x><span>c</span></div>"),
            2
        );
        assert_eq!(
            nesting_depth("<script>\"<div><div>\"</script><div></div>"),
            1
        );
        let deep = format!(
            "<style>x{{}}</style><script>var x = '<div>';</script>{}<b>Deep</b> text &amp; more&#33; &bogus; &#xZZ;{}",
            "<div>".repeat(400_000),
            "</div>".repeat(10)
        );
        assert!(nesting_depth(&deep) > MAX_DEPTH);
        let started = std::time::Instant::now();
        let text = tidy(&html_to_text(&deep).unwrap());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(text, "Deep text & more! &bogus; &#xZZ;");
        assert_eq!(strip_tags("<p>a &lt;b&gt;</p>x<"), "\na <b>\nx<");
    }

    #[test]
    fn tidy_removes_control_characters_and_extra_blank_lines() {
        assert_eq!(
            tidy("\n\na\u{0}b\r\n\n\n\nc \t\n\u{1b}[31md\n\n"),
            "ab\n\nc\n[31md"
        );
        assert_eq!(tidy("x\ty"), "x\ty");
    }
}
