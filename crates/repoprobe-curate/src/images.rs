//! `curate filter`'s rule: a thread whose question or accepted answer relies on images is
//! dropped, because a benchmark question must stand alone as text (paper §3.2).
//!
//! What counts, read with a CommonMark parser rather than patterns, so that a reference-style
//! image counts and a `![x](y)` inside code does not:
//! - a Markdown image (`![alt](url)`, `![alt][ref]`);
//! - an HTML `<img>`, `<picture>` or `<video>` tag (outside HTML comments, which GitHub does not
//!   show);
//! - a link to a GitHub attachment, anywhere in the text, a link or HTML: `github.com/user-attachments/…`
//!   (images, videos and files), `user-images.githubusercontent.com`,
//!   `private-user-images.githubusercontent.com`, and the older `github.com/OWNER/REPO/assets/…`.
//!
//! **Code is text**: inside a code span or a fenced or indented code block, none of these count —
//! GitHub shows them as the characters written (a question about a Markdown renderer quotes
//! `![x](y)`; a log quotes a URL), so the reader needs no picture to follow.

use crate::record::Thread;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// How a text uses an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Markdown,
    Html,
    Attachment,
}

impl ImageKind {
    fn describe(self) -> &'static str {
        match self {
            ImageKind::Markdown => "a Markdown image",
            ImageKind::Html => "an HTML image",
            ImageKind::Attachment => "a GitHub attachment",
        }
    }
}

/// One image a text relies on: its kind and what it points at (as written, possibly empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageUse {
    pub kind: ImageKind,
    pub target: String,
}

/// Every image `markdown` relies on, in order.
pub fn images(markdown: &str) -> Vec<ImageUse> {
    let mut found = Vec::new();
    let mut code_blocks = 0usize;
    let mut html = String::new();
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(markdown, opts) {
        if !matches!(event, Event::Html(_) | Event::InlineHtml(_)) && !html.is_empty() {
            scan_html(&std::mem::take(&mut html), &mut found);
        }
        match event {
            Event::Start(Tag::CodeBlock(_)) => code_blocks += 1,
            Event::End(TagEnd::CodeBlock) => code_blocks = code_blocks.saturating_sub(1),
            Event::Start(Tag::Image { dest_url, .. }) => found.push(ImageUse {
                kind: ImageKind::Markdown,
                target: dest_url.to_string(),
            }),
            Event::Start(Tag::Link { dest_url, .. }) if is_attachment(&dest_url) => {
                found.push(ImageUse {
                    kind: ImageKind::Attachment,
                    target: dest_url.to_string(),
                })
            }
            Event::Text(t) if code_blocks == 0 => scan_urls(&t, &mut found),
            Event::Html(h) | Event::InlineHtml(h) => html.push_str(&h),
            _ => {}
        }
    }
    if !html.is_empty() {
        scan_html(&html, &mut found);
    }
    // A link whose text is the URL itself (`<https://…>`, GFM's bare URLs are text) is one use.
    found.dedup();
    found
}

/// The reason `thread` is dropped, or `None` when it stands as text.
pub fn relies_on_images(thread: &Thread) -> Option<String> {
    for (part, text) in [
        ("question", &thread.body),
        ("accepted answer", &thread.answer.body),
    ] {
        let uses = images(text);
        if let Some(first) = uses.first() {
            let more = match uses.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return Some(format!(
                "the {part} relies on images: {}{more}: {}",
                first.kind.describe(),
                repoprobe_core::text::quote(&first.target)
            ));
        }
    }
    None
}

/// HTML (one or more consecutive HTML events): image tags outside comments, attachment URLs.
fn scan_html(html: &str, found: &mut Vec<ImageUse>) {
    let mut rest = html;
    let mut visible = String::new();
    while let Some(start) = rest.find("<!--") {
        visible.push_str(&rest[..start]);
        rest = match rest[start + 4..].find("-->") {
            Some(end) => &rest[start + 4 + end + 3..],
            None => "",
        };
    }
    visible.push_str(rest);
    let lower = visible.to_ascii_lowercase();
    for tag in ["<img", "<picture", "<video"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(tag) {
            let at = from + i;
            let after = lower[at + tag.len()..].chars().next();
            from = at + tag.len();
            if after.is_none_or(|c| c.is_ascii_whitespace() || c == '>' || c == '/') {
                found.push(ImageUse {
                    kind: ImageKind::Html,
                    target: src_of(&visible[at..]),
                });
            }
        }
    }
    scan_urls(&visible, found);
}

/// The `src` of the tag at the start of `tag` (best effort; empty when there is none).
fn src_of(tag: &str) -> String {
    let end = tag.find('>').unwrap_or(tag.len());
    let tag = &tag[..end];
    let lower = tag.to_ascii_lowercase();
    let Some(i) = lower.find("src=") else {
        return String::new();
    };
    let value = &tag[i + 4..];
    match value.chars().next() {
        Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or("").to_string(),
        _ => value
            .split(|c: char| c.is_ascii_whitespace())
            .next()
            .unwrap_or("")
            .to_string(),
    }
}

/// Attachment URLs in plain text.
fn scan_urls(text: &str, found: &mut Vec<ImageUse>) {
    let mut from = 0;
    while let Some(i) = text[from..].find("http") {
        let at = from + i;
        let url: &str = text[at..]
            .split(|c: char| c.is_whitespace() || "()<>\"'[]`".contains(c))
            .next()
            .unwrap_or("");
        from = at + url.len().max(4);
        if (url.starts_with("https://") || url.starts_with("http://")) && is_attachment(url) {
            found.push(ImageUse {
                kind: ImageKind::Attachment,
                target: url.to_string(),
            });
        }
    }
}

/// Whether `url` points at a file uploaded to GitHub with a comment.
fn is_attachment(url: &str) -> bool {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    match host.as_str() {
        "user-images.githubusercontent.com" | "private-user-images.githubusercontent.com" => true,
        "github.com" | "www.github.com" => {
            let mut parts = path.split('/');
            let first = parts.next().unwrap_or("");
            // OWNER/REPO/assets/…: attachments of 2023.
            first == "user-attachments"
                || (parts.next().is_some() && parts.next() == Some("assets"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<ImageKind> {
        images(text).into_iter().map(|u| u.kind).collect()
    }

    #[test]
    fn markdown_images_inline_and_by_reference_count() {
        assert_eq!(
            images("See ![the error](https://example.com/e.png) here."),
            [ImageUse {
                kind: ImageKind::Markdown,
                target: "https://example.com/e.png".into()
            }]
        );
        assert_eq!(
            kinds("Look: ![shot][1]\n\n[1]: https://example.com/s.png"),
            [ImageKind::Markdown]
        );
        // An undefined reference is only text.
        assert!(images("Look: ![shot][nowhere]").is_empty());
        // A plain link to a picture is a link, not an image shown.
        assert!(images("[the logo](https://example.com/logo.png)").is_empty());
    }

    #[test]
    fn html_image_tags_count_outside_comments() {
        assert_eq!(
            images(r#"Here <img width="300" src="https://example.com/a.png"> it is"#),
            [ImageUse {
                kind: ImageKind::Html,
                target: "https://example.com/a.png".into()
            }]
        );
        assert_eq!(
            kinds("<details>\n<summary>shot</summary>\n\n<IMG SRC=x.png />\n</details>"),
            [ImageKind::Html]
        );
        assert_eq!(
            kinds("<picture><source srcset=a.webp></picture>"),
            [ImageKind::Html]
        );
        assert!(images("<!-- <img src=old.png> -->\nNo picture now.").is_empty());
        // Words that start like the tag are not the tag.
        assert!(images("<imgur-link> and <image-of-x>").is_empty());
    }

    #[test]
    fn github_attachments_count_as_text_links_or_html() {
        for text in [
            "https://github.com/user-attachments/assets/0f1e2d3c-aaaa-bbbb-cccc-1234567890ab",
            "log: https://github.com/user-attachments/files/123/log.txt",
            "[video](https://github.com/user-attachments/assets/abc)",
            "https://user-images.githubusercontent.com/1/2-3.png",
            "<a href=\"https://private-user-images.githubusercontent.com/x.png?jwt=y\">x</a>",
            "https://github.com/owner/repo/assets/12345/0f1e2d3c-aaaa",
        ] {
            assert_eq!(kinds(text), [ImageKind::Attachment], "{text}");
        }
        for text in [
            "https://github.com/owner/repo/blob/main/assets/logo.png",
            "https://github.com/owner/repo/issues/3",
            "https://example.com/user-attachments/x",
            "httpbin and https://githubusercontent.com.evil.example/x",
        ] {
            assert!(images(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn images_inside_code_are_text() {
        let fenced = "Why does this not render?\n\n```md\n![x](https://example.com/x.png)\n<img src=a.png>\nhttps://github.com/user-attachments/assets/1\n```\n";
        assert!(images(fenced).is_empty(), "{:?}", images(fenced));
        assert!(images("~~~\n![x](y.png)\n~~~").is_empty());
        assert!(images("Write `![alt](url)` or `<img src=u>`.").is_empty());
        assert!(
            images("Code:\n\n    ![x](y.png)\n").is_empty(),
            "indented code"
        );
        // An unclosed fence runs to the end of the text, as GitHub shows it.
        assert!(images("```\n![x](y.png)").is_empty());
        // After the fence closes, an image counts again.
        assert_eq!(
            kinds("```\ncode\n```\n\n![x](y.png)"),
            [ImageKind::Markdown]
        );
    }

    #[test]
    fn hostile_text_never_panics() {
        for text in [
            "",
            "<img",
            "<img src=",
            "<img src=\"",
            "<!--",
            "<!-- <img",
            "http",
            "https://",
            "![",
            "![](",
            "é<IMG\u{0}src=é>",
            "<ımg src=x>",
            "\u{feff}![a](b)",
            &"[".repeat(10_000),
            &"<img ".repeat(1000),
        ] {
            let _ = images(text);
        }
    }

    fn thread(body: &str, answer: &str) -> Thread {
        let json = serde_json::json!({
            "key": "o/r#1", "repo": "o/r", "category": "Q&A", "number": 1,
            "url": "https://github.com/o/r/discussions/1", "title": "t", "body": body,
            "author": "a", "created_at": "2024-02-01T00:00:00Z", "upvotes": 0,
            "answer": {"body": answer, "author": null, "author_association": "NONE",
                       "chosen_at": "2024-02-02T00:00:00Z",
                       "url": "https://github.com/o/r/discussions/1#discussioncomment-1"},
            "commit": {"oid": "a".repeat(40), "committed_at": "2024-02-01T00:00:00Z",
                       "branch": "main"},
            "provenance": {"source_url": "u", "api_url": "a", "harvested_at": "h",
                           "repository_id": "R", "category_id": "C", "discussion_id": "D",
                           "answer_id": "DC"}
        });
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_reason_names_the_part_the_kind_and_the_target() {
        assert_eq!(relies_on_images(&thread("plain", "plain")), None);
        assert_eq!(
            relies_on_images(&thread("plain", "Like this: ![a](x.png) ![b](y.png)")).unwrap(),
            "the accepted answer relies on images: a Markdown image (and 1 more): \"x.png\""
        );
        let r = relies_on_images(&thread("<img src=\"q.png\">", "![a](x.png)")).unwrap();
        assert!(
            r.starts_with("the question relies on images: an HTML image"),
            "{r}"
        );
    }
}
