//! `curate enhance`'s first step: the external links of a thread, the pages worth fetching as
//! context, and the links left out with why.
//!
//! Found, read with a CommonMark parser rather than patterns (as [`crate::images`] reads images):
//! - Markdown links, inline (`[x](url)`), by reference (`[x][1]` with `[1]: url`), autolinks
//!   (`<https://…>`, `<a@b.example>` as `mailto:`);
//! - the `href` of HTML `<a>` tags (outside HTML comments, which GitHub does not show);
//! - bare URLs in the text (GitHub links them), their ends found by `linkify`, which leaves
//!   trailing punctuation and unbalanced brackets out (`(see https://x.example/a).`).
//!
//! **Code is text**: a URL inside a code span, a fenced or indented code block, or an HTML
//! `<code>`/`<pre>` element is a quotation (a log, a config file), not a page the thread points
//! the reader to. A reference definition no link uses is not shown by GitHub and not found here.
//!
//! Every URL is parsed as a browser does (WHATWG, the `url` crate), so `http://2130706433/` is
//! `http://127.0.0.1/` and `HTTP://Example.COM` is `http://example.com/`; the fragment is removed
//! (a page is fetched whole) and links are deduplicated on what is left, in order of first
//! appearance. Left out, with a reason ([`LeftOut`]):
//! - what is not a web page: any scheme but http and https (`mailto:`, `javascript:`, `file:`,
//!   `data:`, `ftp:` …), relative links (they point into GitHub's own pages), Markdown images;
//! - internal references: an IP-literal host that [`crate::address::refusal`] refuses
//!   (loopback, private, link-local, cloud metadata …), `localhost` and `*.localhost`, a name
//!   without a dot (an intranet name), and the special-use suffixes `.local` (mDNS),
//!   `.internal` and `.home.arpa` (private networks' names);
//! - a user name or password in the address (the fetcher sends no credentials);
//! - the repository's own pages, `github.com/OWNER/NAME` and below (its code, issues and
//!   discussions): the benchmark asks about the repository itself, so its pages are not
//!   external context;
//! - a URL longer than [`MAX_URL_LEN`].
//!
//! A name's addresses are not known here (no DNS in the core): the fetcher checks every address
//! it connects to again, after DNS and at every redirect.

use crate::address::refusal;
use crate::record::Thread;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use std::collections::HashSet;
use url::{Host, Url};

/// The longest URL looked at; browsers and servers refuse far shorter ones in practice.
pub const MAX_URL_LEN: usize = 8192;

/// The links of a text: the ones to fetch and the ones left out, each in order of first
/// appearance, no URL twice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    pub fetch: Vec<Link>,
    pub left_out: Vec<LeftOut>,
}

/// A link to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Normalised (WHATWG serialisation, no fragment): what the fetcher asks for.
    pub url: String,
    /// As written in the text (its first appearance).
    pub written: String,
}

/// A link not fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// As written in the text (its first appearance).
    pub url: String,
    /// Why, in a sentence's worth of words ("127.0.0.1 is a loopback address: …").
    pub reason: String,
}

/// The links of `markdown`, a thread's question or answer, in the repository `repo`
/// (`owner/name`, whose own GitHub pages are left out).
pub fn external_links(markdown: &str, repo: &str) -> Links {
    let mut links = Collector::new(repo);
    links.scan(markdown);
    links.links
}

/// The links of a thread: its question, then its accepted answer, deduplicated across both.
pub fn thread_links(thread: &Thread) -> Links {
    let mut links = Collector::new(&thread.repo);
    links.scan(&thread.body);
    links.scan(&thread.answer.body);
    links.links
}

/// What a text yields, one URL at a time.
struct Collector {
    owner: String,
    name: String,
    seen: HashSet<String>,
    links: Links,
}

/// Where a URL was written, for the few rules that depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    Link,
    Image,
}

impl Collector {
    fn new(repo: &str) -> Collector {
        let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
        Collector {
            owner: owner.trim().to_ascii_lowercase(),
            name: name.trim().to_ascii_lowercase(),
            seen: HashSet::new(),
            links: Links::default(),
        }
    }

    fn scan(&mut self, markdown: &str) {
        let opts = Options::ENABLE_TABLES
            | Options::ENABLE_STRIKETHROUGH
            | Options::ENABLE_TASKLISTS
            | Options::ENABLE_FOOTNOTES;
        let mut code_blocks = 0usize;
        let mut html = Html::default();
        let mut html_buf = String::new();
        let mut text = String::new();
        for event in Parser::new_ext(markdown, opts) {
            if !matches!(event, Event::Html(_) | Event::InlineHtml(_)) && !html_buf.is_empty() {
                for (url, found) in html.scan(&std::mem::take(&mut html_buf)) {
                    self.add(&url, found);
                }
            }
            if !matches!(event, Event::Text(_)) && !text.is_empty() {
                self.bare(&std::mem::take(&mut text));
            }
            match event {
                Event::Start(Tag::CodeBlock(_)) => code_blocks += 1,
                Event::End(TagEnd::CodeBlock) => code_blocks = code_blocks.saturating_sub(1),
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    ..
                }) => {
                    if link_type == LinkType::Email {
                        self.add(&format!("mailto:{dest_url}"), Found::Link);
                    } else {
                        self.add(&dest_url, Found::Link);
                    }
                }
                Event::Start(Tag::Image { dest_url, .. }) => self.add(&dest_url, Found::Image),
                // Text inside code, Markdown's or HTML's, is a quotation.
                Event::Text(t) if code_blocks == 0 && html.code == 0 => text.push_str(&t),
                Event::Html(h) | Event::InlineHtml(h) => html_buf.push_str(&h),
                _ => {}
            }
        }
        if !html_buf.is_empty() {
            for (url, found) in html.scan(&html_buf) {
                self.add(&url, found);
            }
        }
        if !text.is_empty() {
            self.bare(&text);
        }
    }

    /// Bare URLs in text.
    fn bare(&mut self, text: &str) {
        let mut finder = linkify::LinkFinder::new();
        finder.kinds(&[linkify::LinkKind::Url]);
        let found: Vec<String> = finder.links(text).map(|l| l.as_str().to_string()).collect();
        for url in found {
            self.add(&url, Found::Link);
        }
    }

    fn add(&mut self, written: &str, found: Found) {
        let written = written.trim();
        if written.is_empty() {
            return;
        }
        let verdict = self.judge(written, found);
        let key = match &verdict {
            Ok(url) => url.clone(),
            Err((Some(url), _)) => url.clone(),
            Err((None, _)) => written.to_string(),
        };
        if !self.seen.insert(key) {
            return;
        }
        match verdict {
            Ok(url) => self.links.fetch.push(Link {
                url,
                written: written.to_string(),
            }),
            Err((_, reason)) => self.links.left_out.push(LeftOut {
                url: written.to_string(),
                reason,
            }),
        }
    }

    /// The normalised URL to fetch, or why not (with the normalised URL when it parsed).
    fn judge(&self, written: &str, found: Found) -> Result<String, (Option<String>, String)> {
        if written.len() > MAX_URL_LEN {
            return Err((
                None,
                format!("longer than {MAX_URL_LEN} bytes: not a link anyone reads"),
            ));
        }
        let mut url = match Url::parse(written) {
            Ok(url) => url,
            Err(url::ParseError::RelativeUrlWithoutBase) => {
                return Err((
                    None,
                    "a relative link: it points into GitHub's own pages, not to an external page"
                        .to_string(),
                ));
            }
            Err(e) => return Err((None, format!("not a valid URL ({e})"))),
        };
        url.set_fragment(None);
        let normal = url.to_string();
        let refuse = |reason: String| Err((Some(normal.clone()), reason));
        if found == Found::Image {
            return refuse("an image, not a page to read".to_string());
        }
        if !matches!(url.scheme(), "http" | "https") {
            return refuse(format!(
                "not a web page: only http and https links are fetched, not {}:",
                url.scheme()
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return refuse(
                "carries a user name or password in its address, and credentials are never sent"
                    .to_string(),
            );
        }
        match url.host() {
            None => return refuse("has no host".to_string()),
            Some(Host::Ipv4(ip)) => {
                if let Some(why) = refusal(ip.into()) {
                    return refuse(format!("{ip} is {why}: an internal address"));
                }
            }
            Some(Host::Ipv6(ip)) => {
                if let Some(why) = refusal(ip.into()) {
                    return refuse(format!("[{ip}] is {why}: an internal address"));
                }
            }
            Some(Host::Domain(domain)) => {
                if let Some(why) = internal_name(domain) {
                    return refuse(why);
                }
                if self.is_own_repo(domain, &url) {
                    return refuse(format!(
                        "a page of the repository {}/{} itself, not external context",
                        self.owner, self.name
                    ));
                }
            }
        }
        Ok(normal)
    }

    /// `github.com/OWNER/NAME` and anything below it (case-insensitive, `NAME.git` too).
    fn is_own_repo(&self, domain: &str, url: &Url) -> bool {
        if self.owner.is_empty() || self.name.is_empty() {
            return false;
        }
        let domain = domain.trim_end_matches('.');
        if !domain.eq_ignore_ascii_case("github.com")
            && !domain.eq_ignore_ascii_case("www.github.com")
        {
            return false;
        }
        let mut segments = url.path_segments().into_iter().flatten();
        let owner = segments.next().unwrap_or("");
        let name = segments.next().unwrap_or("");
        let name = name.strip_suffix(".git").unwrap_or(name);
        owner.eq_ignore_ascii_case(&self.owner) && name.eq_ignore_ascii_case(&self.name)
    }
}

/// Why a host name (already lower case, as the URL parser leaves it) names no public host.
fn internal_name(domain: &str) -> Option<String> {
    let name = domain.trim_end_matches('.');
    if name == "localhost" || name.ends_with(".localhost") {
        return Some(format!(
            "{domain} is this machine (localhost): an internal name"
        ));
    }
    if !name.contains('.') {
        return Some(format!(
            "{domain} has no dot: an intranet name, not a public host"
        ));
    }
    for suffix in [".local", ".internal", ".home.arpa"] {
        if name.ends_with(suffix) {
            return Some(format!(
                "{domain} is a name of a private network ({suffix}): an internal name"
            ));
        }
    }
    None
}

/// The state of HTML read across a text's HTML events: `<code>`/`<pre>` elements open (their
/// text is a quotation, in HTML events or in the Markdown text between inline tags).
#[derive(Default)]
struct Html {
    code: usize,
}

impl Html {
    /// The URLs of one stretch of HTML: `<a href>` and bare URLs in its visible text, in order.
    fn scan(&mut self, html: &str) -> Vec<(String, Found)> {
        let mut found = Vec::new();
        let mut visible = String::new();
        let mut rest = html;
        while let Some(lt) = rest.find('<') {
            if self.code == 0 {
                visible.push_str(&rest[..lt]);
            }
            let at = &rest[lt..];
            if let Some(after) = at.strip_prefix("<!--") {
                rest = after.find("-->").map_or("", |end| &after[end + 3..]);
                continue;
            }
            let starts_tag = at[1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!' || c == '?');
            if !starts_tag {
                if self.code == 0 {
                    visible.push('<');
                }
                rest = &at[1..];
                continue;
            }
            let end = tag_end(at);
            let tag = &at[..end];
            rest = &at[end..];
            let closing = tag[1..].starts_with('/');
            let name: String = tag[1..]
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            // A tag ends the text before it: a URL does not run into the next element.
            visible.push(' ');
            match name.as_str() {
                "code" | "pre" if closing => self.code = self.code.saturating_sub(1),
                "code" | "pre" if !tag.ends_with("/>") => self.code += 1,
                "a" if !closing && self.code == 0 => {
                    if let Some(href) = attribute(tag, "href") {
                        flush_bare(&mut visible, &mut found);
                        found.push((unescape(&href), Found::Link));
                    }
                }
                _ => {}
            }
        }
        if self.code == 0 {
            visible.push_str(rest);
        }
        flush_bare(&mut visible, &mut found);
        found
    }
}

fn flush_bare(visible: &mut String, found: &mut Vec<(String, Found)>) {
    let text = unescape(&std::mem::take(visible));
    let mut finder = linkify::LinkFinder::new();
    finder.kinds(&[linkify::LinkKind::Url]);
    found.extend(
        finder
            .links(&text)
            .map(|l| (l.as_str().to_string(), Found::Link)),
    );
}

/// The length of the tag at the start of `html` (up to its `>` outside quotes, or all of it).
fn tag_end(html: &str) -> usize {
    let mut quote = None;
    for (i, c) in html.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return i + 1,
            _ => {}
        }
    }
    html.len()
}

/// The value of attribute `name` of a start tag (best effort, as a browser reads it).
fn attribute(tag: &str, name: &str) -> Option<String> {
    let inner = tag.strip_prefix('<')?;
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    // Skip the tag's name.
    let mut rest = inner.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let key_len = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '/' || c == '>')
            .unwrap_or(rest.len())
            .max(1);
        let key = &rest[..key_len];
        rest = rest[key_len..].trim_start_matches(|c: char| c.is_ascii_whitespace());
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start_matches(|c: char| c.is_ascii_whitespace());
            match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let body = &after[1..];
                    let end = body.find(q).unwrap_or(body.len());
                    rest = body.get(end + 1..).unwrap_or("");
                    &body[..end]
                }
                _ => {
                    let end = after
                        .find(|c: char| c.is_ascii_whitespace())
                        .unwrap_or(after.len());
                    rest = &after[end..];
                    &after[..end]
                }
            }
        } else {
            ""
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value.to_string());
        }
    }
}

/// The character references URLs and link text commonly carry (`&amp;` in a query string); the
/// rest is left as written (a URL with another reference is rare, and harmless as written).
fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPO: &str = "Owner/Name";

    fn fetched(text: &str) -> Vec<String> {
        external_links(text, REPO)
            .fetch
            .into_iter()
            .map(|l| l.url)
            .collect()
    }

    fn left_out(text: &str) -> Vec<(String, String)> {
        external_links(text, REPO)
            .left_out
            .into_iter()
            .map(|l| (l.url, l.reason))
            .collect()
    }

    #[test]
    fn markdown_links_of_every_form_are_found_in_order() {
        let text = "See [the docs](https://docs.example.com/guide#install), \
                    [ref][1], <https://auto.example.org/x> and [again][1].\n\n\
                    [1]: https://ref.example.net/page \"Title\"";
        assert_eq!(
            fetched(text),
            [
                "https://docs.example.com/guide",
                "https://ref.example.net/page",
                "https://auto.example.org/x",
            ]
        );
        let links = external_links("[x](https://A.Example.COM/p#frag)", REPO);
        assert_eq!(
            links.fetch,
            [Link {
                url: "https://a.example.com/p".into(),
                written: "https://A.Example.COM/p#frag".into()
            }]
        );
    }

    #[test]
    fn bare_urls_lose_their_trailing_punctuation() {
        assert_eq!(
            fetched(
                "Try https://example.com/a. Or (see https://example.org/b), \
                 or https://example.net/c?x=1&y=2!"
            ),
            [
                "https://example.com/a",
                "https://example.org/b",
                "https://example.net/c?x=1&y=2",
            ]
        );
        assert_eq!(
            fetched("wiki: https://en.wikipedia.org/wiki/Rust_(programming_language)."),
            ["https://en.wikipedia.org/wiki/Rust_(programming_language)"]
        );
        // Emphasis markers around a URL are Markdown's, not the URL's.
        assert_eq!(
            fetched("**https://example.com/x**"),
            ["https://example.com/x"]
        );
        // A URL the parser splits into several text events (underscores, entities) is whole.
        assert_eq!(
            fetched("at https://example.com/a_b_c?x=1&amp;y=2 now"),
            ["https://example.com/a_b_c?x=1&y=2"]
        );
    }

    #[test]
    fn html_links_are_found_outside_comments_and_code() {
        assert_eq!(
            fetched(
                "<p>Read <a class=x href=\"https://example.com/a?b=1&amp;c=2\">this</a></p>\n\n\
                 inline <A HREF='https://example.org/b'>b</A> and <a href=https://example.net/c>c</a>"
            ),
            [
                "https://example.com/a?b=1&c=2",
                "https://example.org/b",
                "https://example.net/c",
            ]
        );
        assert!(fetched("<!-- <a href=\"https://example.com/old\">x</a> -->\n").is_empty());
        assert!(fetched("<!--\nhttps://example.com/hidden\n-->\n").is_empty());
        assert_eq!(
            fetched(
                "<details>\n<summary>log</summary>\nsee https://example.com/in-html\n</details>"
            ),
            ["https://example.com/in-html"]
        );
        // HTML code elements, in a block and inline.
        assert!(fetched("<pre>\ncurl https://example.com/quoted\n</pre>\n").is_empty());
        assert!(fetched("run <code>curl https://example.com/quoted</code> ok").is_empty());
        assert_eq!(
            fetched("<code>x</code> then https://example.com/after"),
            ["https://example.com/after"]
        );
    }

    #[test]
    fn urls_inside_code_are_not_links() {
        let text = "Run `curl https://example.com/span` and\n\n\
                    ```\nGET https://example.com/fenced\n```\n\n    https://example.com/indented\n\n\
                    but https://example.com/text counts.";
        assert_eq!(fetched(text), ["https://example.com/text"]);
        // An unclosed fence runs to the end.
        assert!(fetched("```\nhttps://example.com/x").is_empty());
    }

    #[test]
    fn links_are_deduplicated_without_their_fragment_in_order_of_first_appearance() {
        let links = external_links(
            "https://example.com/a#one [x](https://example.com/a#two) \
             [y](HTTPS://EXAMPLE.COM/a) https://example.com/b [z](http://localhost/) http://localhost/",
            REPO,
        );
        assert_eq!(
            links.fetch,
            [
                Link {
                    url: "https://example.com/a".into(),
                    written: "https://example.com/a#one".into()
                },
                Link {
                    url: "https://example.com/b".into(),
                    written: "https://example.com/b".into()
                },
            ]
        );
        assert_eq!(links.left_out.len(), 1);
    }

    #[test]
    fn schemes_other_than_http_are_left_out_with_the_scheme_named() {
        let out = left_out(
            "[m](mailto:a@example.com) [j](javascript:alert(1)) [f](file:///etc/passwd) \
             [d](data:text/html,hi) [ftp](ftp://example.com/x) <me@example.com>",
        );
        let schemes: Vec<&str> = out.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(
            schemes,
            [
                "mailto:a@example.com",
                "javascript:alert(1)",
                "file:///etc/passwd",
                "data:text/html,hi",
                "ftp://example.com/x",
                "mailto:me@example.com",
            ]
        );
        assert!(out[2].1.contains("not file:"), "{:?}", out[2]);
        assert!(out.iter().all(|(_, r)| r.starts_with("not a web page")));
        assert!(fetched("[m](mailto:a@example.com)").is_empty());
    }

    #[test]
    fn internal_addresses_and_names_are_left_out() {
        for (text, expected) in [
            (
                "http://127.0.0.1:8080/admin",
                "127.0.0.1 is a loopback address",
            ),
            ("http://2130706433/", "127.0.0.1 is a loopback address"),
            ("http://0x7f.1/", "127.0.0.1 is a loopback address"),
            ("http://[::1]/", "[::1] is a loopback address"),
            ("http://[::ffff:127.0.0.1]/", "IPv4-mapped"),
            ("http://10.1.2.3/", "private address"),
            ("http://192.168.1.1/", "private address"),
            (
                "http://169.254.169.254/latest/meta-data/",
                "cloud instance metadata",
            ),
            ("http://[fd00:ec2::254]/", "AWS's IPv6 instance metadata"),
            ("http://0.0.0.0:3000/", "unspecified"),
            ("http://localhost:3000/", "localhost"),
            ("http://LOCALHOST./", "localhost"),
            ("http://app.localhost/", "localhost"),
            ("http://intranet/wiki", "no dot"),
            ("http://printer.local/", ".local"),
            ("http://db.corp.internal/", ".internal"),
            ("http://nas.home.arpa/", ".home.arpa"),
            ("https://user:pw@example.com/", "user name or password"),
        ] {
            let out = left_out(&format!("see [x]({text})"));
            assert_eq!(out.len(), 1, "{text}: {out:?}");
            assert_eq!(out[0].0, text);
            assert!(out[0].1.contains(expected), "{text}: {:?}", out[0].1);
            assert!(fetched(text).is_empty(), "{text}");
        }
        // Public addresses and names pass. (A bare IPv6 literal in text is not a link to
        // linkify, nor to GitHub's autolinker: only written as a link is it one.)
        assert_eq!(
            fetched("http://8.8.8.8/ [v6](http://[2606:4700::1111]/) https://docs.rs/x"),
            [
                "http://8.8.8.8/",
                "http://[2606:4700::1111]/",
                "https://docs.rs/x"
            ]
        );
    }

    #[test]
    fn the_repositorys_own_pages_are_left_out_and_other_repositories_are_fetched() {
        for own in [
            "https://github.com/owner/name",
            "https://github.com/OWNER/NAME/issues/3",
            "https://www.github.com/Owner/Name/blob/main/src/lib.rs#L3",
            "https://github.com/owner/name/discussions/12#discussioncomment-9",
            "https://github.com/owner/name.git",
            "http://GitHub.com/owner/name/",
        ] {
            let out = left_out(own);
            assert_eq!(out.len(), 1, "{own}: {out:?}");
            assert!(out[0].1.contains("repository owner/name itself"), "{out:?}");
        }
        assert_eq!(
            fetched(
                "https://github.com/owner/name-other https://github.com/other/name \
                 https://github.com/owner https://gist.github.com/owner/name"
            ),
            [
                "https://github.com/owner/name-other",
                "https://github.com/other/name",
                "https://github.com/owner",
                "https://gist.github.com/owner/name",
            ]
        );
    }

    #[test]
    fn relative_links_images_and_odd_urls_are_left_out_with_a_reason() {
        let out = left_out(
            "[a](/owner/name/wiki) [b](#top) ![i](https://example.com/i.png) [c](http://[zz/)",
        );
        let reasons: Vec<&str> = out.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(reasons.len(), 4, "{out:?}");
        assert!(reasons[0].starts_with("a relative link"));
        assert!(reasons[1].starts_with("a relative link"));
        assert!(reasons[2].starts_with("an image"));
        assert!(reasons[3].starts_with("not a valid URL"), "{reasons:?}");
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(left_out(&long)[0].1.starts_with("longer than"));
    }

    #[test]
    fn a_thread_is_read_question_then_answer_without_repeats() {
        let json = serde_json::json!({
            "key": "o/r#1", "repo": "o/r", "category": "Q&A", "number": 1,
            "url": "https://github.com/o/r/discussions/1", "title": "t",
            "body": "https://example.com/q https://github.com/o/r/issues/1",
            "author": "a", "created_at": "2024-02-01T00:00:00Z", "upvotes": 0,
            "answer": {"body": "https://example.com/a and https://example.com/q", "author": null,
                       "author_association": "NONE", "chosen_at": "2024-02-02T00:00:00Z",
                       "url": "https://github.com/o/r/discussions/1#discussioncomment-1"},
            "commit": {"oid": "a".repeat(40), "committed_at": "2024-02-01T00:00:00Z",
                       "branch": "main"},
            "provenance": {"source_url": "u", "api_url": "a", "harvested_at": "h",
                           "repository_id": "R", "category_id": "C", "discussion_id": "D",
                           "answer_id": "DC"}
        });
        let thread: Thread = serde_json::from_value(json).unwrap();
        let links = thread_links(&thread);
        let urls: Vec<&str> = links.fetch.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, ["https://example.com/q", "https://example.com/a"]);
        assert_eq!(links.left_out.len(), 1);
    }

    #[test]
    fn hostile_text_never_panics() {
        for text in [
            "",
            "<",
            "<a",
            "<a href",
            "<a href=",
            "<a href=\"",
            "<a href='https://x.example",
            "<!--",
            "<code>",
            "</code></pre></code>",
            "http://",
            "https://[",
            "[x](",
            "[x](<>)",
            "é<a\u{0}href=é>",
            "<a href=\"https://é.example/ü\">",
            "\u{feff}https://example.com",
            &"[".repeat(10_000),
            &"<a href=x ".repeat(1000),
            &"https://a.example/ ".repeat(1000),
            &"<code>".repeat(1000),
        ] {
            let _ = external_links(text, REPO);
            let _ = external_links(text, "");
            let _ = external_links(text, "/");
        }
    }
}
