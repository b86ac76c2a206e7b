//! Answers' Markdown parsed into a small tree in the worker (pulldown-cmark, no HTML writer), so
//! that the page's wasm carries no parser: the page only turns the tree into DOM nodes
//! (`components::markdown`). Raw HTML, math and footnote marks become text; an image becomes its
//! alt text (nothing is fetched); a link keeps its destination, which the page makes a link only
//! when it is http(s).

use pulldown_cmark::{Event, Parser, Tag};
use serde::{Deserialize, Serialize};

/// The elements a Markdown answer may become.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MdKind {
    Root,
    Paragraph,
    Heading,
    Quote,
    CodeBlock,
    Ordered,
    Bullets,
    Item,
    Emphasis,
    Strong,
    Strike,
    Span,
}

/// A node of a parsed answer: an element with children, a link (its destination as written), a
/// text or inline code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Md {
    El(MdKind, Vec<Md>),
    Link(String, Vec<Md>),
    Text(String),
    Code(String),
    Break,
    Rule,
}

/// An element being read: its kind, or a link's destination, and the children so far.
struct Open {
    kind: MdKind,
    link: Option<String>,
    image: bool,
    children: Vec<Md>,
}

impl Open {
    fn close(self) -> Md {
        match (self.link, self.image) {
            // An image is shown as its alt text: nothing is fetched.
            (_, true) => Md::El(
                MdKind::Span,
                std::iter::once(Md::Text("[image: ".into()))
                    .chain(self.children)
                    .chain([Md::Text("]".into())])
                    .collect(),
            ),
            (Some(dest), false) => Md::Link(dest, self.children),
            (None, false) => Md::El(self.kind, self.children),
        }
    }
}

/// The tree of a Markdown text.
pub fn parse(text: &str) -> Md {
    let open = |kind| Open {
        kind,
        link: None,
        image: false,
        children: Vec::new(),
    };
    let mut stack: Vec<Open> = vec![open(MdKind::Root)];
    let push = |stack: &mut Vec<Open>, node: Md| {
        if let Some(top) = stack.last_mut() {
            top.children.push(node);
        }
    };
    for ev in Parser::new(text) {
        match ev {
            Event::Start(tag) => {
                let mut o = open(match &tag {
                    Tag::Paragraph => MdKind::Paragraph,
                    Tag::Heading { .. } => MdKind::Heading,
                    Tag::BlockQuote(_) => MdKind::Quote,
                    Tag::CodeBlock(_) => MdKind::CodeBlock,
                    Tag::List(Some(_)) => MdKind::Ordered,
                    Tag::List(None) => MdKind::Bullets,
                    Tag::Item => MdKind::Item,
                    Tag::Emphasis => MdKind::Emphasis,
                    Tag::Strong => MdKind::Strong,
                    Tag::Strikethrough => MdKind::Strike,
                    _ => MdKind::Span,
                });
                match tag {
                    Tag::Link { dest_url, .. } => o.link = Some(dest_url.into_string()),
                    Tag::Image { .. } => o.image = true,
                    _ => {}
                }
                stack.push(o);
            }
            Event::End(_) => {
                if stack.len() > 1
                    && let Some(o) = stack.pop()
                {
                    let node = o.close();
                    push(&mut stack, node);
                }
            }
            // Raw HTML, math and footnote marks are shown as the text they are.
            Event::Text(t)
            | Event::Html(t)
            | Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t)
            | Event::FootnoteReference(t) => push(&mut stack, Md::Text(t.into_string())),
            Event::Code(t) => push(&mut stack, Md::Code(t.into_string())),
            Event::SoftBreak => push(&mut stack, Md::Text("\n".into())),
            Event::HardBreak => push(&mut stack, Md::Break),
            Event::Rule => push(&mut stack, Md::Rule),
            Event::TaskListMarker(done) => push(
                &mut stack,
                Md::Text(if done { "[x] " } else { "[ ] " }.into()),
            ),
        }
    }
    // Unclosed elements (never from pulldown-cmark, but cheap to be sure of) fold into the root.
    while stack.len() > 1 {
        if let Some(o) = stack.pop() {
            let node = o.close();
            push(&mut stack, node);
        }
    }
    stack
        .pop()
        .map_or(Md::El(MdKind::Root, Vec::new()), Open::close)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(m: &Md) -> String {
        match m {
            Md::Text(t) | Md::Code(t) => t.clone(),
            Md::El(_, c) | Md::Link(_, c) => c.iter().map(text).collect(),
            Md::Break | Md::Rule => "\n".into(),
        }
    }

    #[test]
    fn raw_html_and_images_stay_text() {
        let t = parse("<b>x</b> ![alt](http://e/i.png)\n\n<script>alert(1)</script>");
        let all = text(&t);
        assert!(all.contains("<b>x</b>"), "{all}");
        assert!(all.contains("[image: alt]"), "{all}");
        assert!(all.contains("<script>alert(1)</script>"), "{all}");
    }

    #[test]
    fn lists_code_blocks_and_links_are_elements() {
        let Md::El(MdKind::Root, c) =
            parse("- a\n- b\n\n```\nfn f() {}\n```\n\n[x](javascript:alert(1))")
        else {
            panic!("root")
        };
        assert!(matches!(&c[0], Md::El(MdKind::Bullets, items) if items.len() == 2));
        assert!(matches!(&c[1], Md::El(MdKind::CodeBlock, _)));
        assert!(
            matches!(&c[2], Md::El(MdKind::Paragraph, p) if matches!(&p[0], Md::Link(d, _) if d == "javascript:alert(1)"))
        );
    }
}
