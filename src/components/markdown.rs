//! Untrusted text made readable, and never anything but text: answers' Markdown (the worker's
//! parsed tree, `crate::markdown::Md`, made DOM nodes one by one — raw HTML arrives as text, a
//! link only to an http(s) URL through `external_href`), and repository paths (`src/lib.rs`,
//! `src/lib.rs:12`, `src/lib.rs#L12-L20`) in answers and rationales made links to the file at the
//! question's pinned commit when the repository is on a known forge. Which text is a path is
//! the core's `repoprobe_core::cited` (the same paths `repoprobe evidence` counts); this module
//! only makes links of them.

use crate::external_href;
use crate::markdown::{Md, MdKind};
use leptos::prelude::*;
use repoprobe_core::cited::{Piece, pieces};

/// Where the files of one repository at one commit live: the link of a path is `base` + path +
/// the forge's line anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLinks {
    base: String,
    forge: Forge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forge {
    GitHub,
    GitLab,
    Gitea,
}

impl FileLinks {
    /// The links of a repository `url` at `commit`, when the URL is http(s) on a forge we know
    /// (GitHub, GitLab, Codeberg) and the commit is a hex id; otherwise paths stay text.
    pub fn new(url: &str, commit: &str) -> Option<FileLinks> {
        let url = external_href(url)?;
        let commit_ok =
            (7..=64).contains(&commit.len()) && commit.bytes().all(|b| b.is_ascii_hexdigit());
        if !commit_ok {
            return None;
        }
        let url = url.trim_end_matches('/');
        let url = url.strip_suffix(".git").unwrap_or(url);
        let (_, rest) = url.split_once("://")?;
        let (host, repo) = rest.split_once('/')?;
        // owner/name (GitLab allows groups): no query, fragment, credentials or dot segments.
        let repo_ok = repo.split('/').count() >= 2
            && repo.split('/').all(|s| {
                !s.is_empty()
                    && s != "."
                    && s != ".."
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            });
        if !repo_ok || host.contains('@') {
            return None;
        }
        let (forge, tree) = match host.to_ascii_lowercase().as_str() {
            "github.com" | "www.github.com" => (Forge::GitHub, "blob"),
            "gitlab.com" => (Forge::GitLab, "-/blob"),
            "codeberg.org" => (Forge::Gitea, "src/commit"),
            _ => return None,
        };
        Some(FileLinks {
            base: format!("{url}/{tree}/{commit}/"),
            forge,
        })
    }

    /// The link of `path` (lines `from`–`to` when given).
    pub fn href(&self, path: &str, lines: Option<(u32, Option<u32>)>) -> String {
        let anchor = match (lines, self.forge) {
            (None, _) => String::new(),
            (Some((a, None)), _) => format!("#L{a}"),
            (Some((a, Some(b))), Forge::GitLab) => format!("#L{a}-{b}"),
            (Some((a, Some(b))), _) => format!("#L{a}-L{b}"),
        };
        format!("{}{}{anchor}", self.base, path.trim_start_matches("./"))
    }
}

/// A repository path given as one (evidence, a file an agent read) as a link to the file at the
/// pinned commit: only when it is a normalised repository path of plain characters (letters,
/// digits, `_-./`), so that `javascript:alert(1)` or `../x` from an agent's output stays text.
pub fn path_link(path: &str, lines: Option<[u32; 2]>, links: Option<&FileLinks>) -> AnyView {
    let plain = repoprobe_core::model::repo_path::normalise(path).is_ok_and(|p| p == path)
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    match links.filter(|_| plain) {
        Some(l) => {
            let lines = lines.map(|[a, b]| (a, (b != a).then_some(b)));
            view! { <a class="path" href=l.href(path, lines) rel="noopener noreferrer">{path.to_string()}</a> }
                .into_any()
        }
        None => view! { <span class="path">{path.to_string()}</span> }.into_any(),
    }
}

/// Text with its repository paths linked (when `links` is given); everything else a text node.
/// A path written as Markdown code in plain text (`` `src/lib.rs` ``, the fallback of a text not
/// parsed yet) is a code-styled link, its backticks dropped.
pub fn linked_text(text: &str, links: Option<&FileLinks>) -> AnyView {
    let Some(links) = links else {
        return text.to_string().into_any();
    };
    in_backticks(pieces(text))
        .into_iter()
        .map(|(p, code)| match p {
            Piece::Text(t) => t.to_string().into_any(),
            Piece::Path { text, path, lines } => {
                let a = view! {
                    <a class="path" href=links.href(path, lines) rel="noopener noreferrer">{text.to_string()}</a>
                };
                if code {
                    view! { <code>{a}</code> }.into_any()
                } else {
                    a.into_any()
                }
            }
        })
        .collect_view()
        .into_any()
}

/// The pieces with each path directly between two backticks marked (`true`) and those two
/// backticks taken out of the texts around it.
fn in_backticks(pieces: Vec<Piece<'_>>) -> Vec<(Piece<'_>, bool)> {
    let mut out: Vec<(Piece<'_>, bool)> = Vec::with_capacity(pieces.len());
    let mut iter = pieces.into_iter().peekable();
    while let Some(p) = iter.next() {
        let quoted = matches!(p, Piece::Path { .. })
            && matches!(out.last(), Some((Piece::Text(t), _)) if t.ends_with('`'))
            && matches!(iter.peek(), Some(Piece::Text(t)) if t.starts_with('`'));
        if !quoted {
            out.push((p, false));
            continue;
        }
        if let Some((Piece::Text(t), _)) = out.last_mut() {
            *t = &t[..t.len() - 1];
        }
        out.push((p, true));
        if let Some(Piece::Text(t)) = iter.next() {
            out.push((Piece::Text(&t[1..]), false));
        }
    }
    out.retain(|(p, _)| !matches!(p, Piece::Text("")));
    out
}

/// Untrusted plain text (a rationale) with its paths linked.
#[component]
pub fn LinkedText(#[prop(into)] text: String, links: Option<FileLinks>) -> impl IntoView {
    view! { <span class="prose">{linked_text(&text, links.as_ref())}</span> }
}

fn render(node: &Md, links: Option<&FileLinks>) -> AnyView {
    let inner = |children: &[Md]| children.iter().map(|c| render(c, links)).collect_view();
    match node {
        Md::Text(t) => linked_text(t, links),
        Md::Code(t) => view! { <code>{linked_text(t, links)}</code> }.into_any(),
        Md::Break => view! { <br /> }.into_any(),
        Md::Rule => view! { <hr /> }.into_any(),
        // Checked again here: only an http(s) URL becomes a link.
        Md::Link(dest, children) => match external_href(dest) {
            Some(h) => {
                view! { <a href=h rel="noopener noreferrer">{inner(children)}</a> }.into_any()
            }
            None => view! { <span class="url-text">{inner(children)}</span> }.into_any(),
        },
        Md::El(kind, children) => {
            let inner = inner(children);
            match kind {
                MdKind::Root => view! { <div class="markdown">{inner}</div> }.into_any(),
                MdKind::Paragraph => view! { <p>{inner}</p> }.into_any(),
                MdKind::Heading => {
                    view! { <p class="md-heading"><strong>{inner}</strong></p> }.into_any()
                }
                MdKind::Quote => view! { <blockquote>{inner}</blockquote> }.into_any(),
                MdKind::CodeBlock => view! { <pre><code>{inner}</code></pre> }.into_any(),
                MdKind::Ordered => view! { <ol>{inner}</ol> }.into_any(),
                MdKind::Bullets => view! { <ul>{inner}</ul> }.into_any(),
                MdKind::Item => view! { <li>{inner}</li> }.into_any(),
                MdKind::Emphasis => view! { <em>{inner}</em> }.into_any(),
                MdKind::Strong => view! { <strong>{inner}</strong> }.into_any(),
                MdKind::Strike => view! { <del>{inner}</del> }.into_any(),
                MdKind::Span => view! { <span>{inner}</span> }.into_any(),
            }
        }
    }
}

/// An answer's Markdown (parsed by the worker) as DOM nodes, its repository paths linked; the
/// plain text (`fallback`) until the worker's tree is there.
#[component]
pub fn Markdown(
    tree: Option<Md>,
    #[prop(into)] fallback: String,
    links: Option<FileLinks>,
) -> impl IntoView {
    match tree {
        Some(t) => render(&t, links.as_ref()),
        None => {
            view! { <div class="markdown prose">{linked_text(&fallback, links.as_ref())}</div> }
                .into_any()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_path_in_backticks_in_plain_text_loses_its_backticks_and_only_then() {
        let shown = |text: &str| -> Vec<(String, bool)> {
            in_backticks(pieces(text))
                .into_iter()
                .map(|(p, code)| match p {
                    Piece::Text(t) => (t.to_string(), code),
                    Piece::Path { text, .. } => (format!("<{text}>"), code),
                })
                .collect()
        };
        let owned = |v: &[(&str, bool)]| {
            v.iter()
                .map(|(s, c)| (s.to_string(), *c))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            shown("See `src/lib.rs` and src/main.rs."),
            owned(&[
                ("See ", false),
                ("<src/lib.rs>", true),
                (" and ", false),
                ("<src/main.rs>", false),
                (".", false)
            ])
        );
        assert_eq!(shown("`src/lib.rs`"), owned(&[("<src/lib.rs>", true)]));
        // One backtick only, or none: the text is kept as written.
        assert_eq!(
            shown("a `src/lib.rs b"),
            owned(&[("a `", false), ("<src/lib.rs>", false), (" b", false)])
        );
    }

    #[test]
    fn github_paths_link_to_the_pinned_commit_with_lines() {
        let l = FileLinks::new("https://github.com/o/r.git", C).unwrap();
        assert_eq!(
            l.href("src/lib.rs", Some((12, None))),
            format!("https://github.com/o/r/blob/{C}/src/lib.rs#L12")
        );
        assert_eq!(
            l.href("src/lib.rs", Some((12, Some(20)))),
            format!("https://github.com/o/r/blob/{C}/src/lib.rs#L12-L20")
        );
        let g = FileLinks::new("https://gitlab.com/g/s/r", C).unwrap();
        assert_eq!(
            g.href("a/b.py", Some((3, Some(4)))),
            format!("https://gitlab.com/g/s/r/-/blob/{C}/a/b.py#L3-4")
        );
    }

    #[test]
    fn unknown_hosts_other_schemes_and_odd_commits_give_no_links() {
        assert_eq!(FileLinks::new("https://example.invalid/o/r", C), None);
        assert_eq!(
            FileLinks::new("javascript:alert(1)//github.com/o/r", C),
            None
        );
        assert_eq!(FileLinks::new("git@github.com:o/r.git", C), None);
        assert_eq!(FileLinks::new("https://github.com/o/r", "main; rm"), None);
        assert_eq!(FileLinks::new("https://github.com/o/r?x=1", C), None);
    }
}
