//! One candidate as a reviewer reads it: the question, the reference answer, the checklist with
//! its evidence files linked at the pinned commit (the question view's own item), and its
//! `curation` block (docs/curate.md#the-curation-block): the source discussion, the pinned
//! commit, each stage's verdict and rationale, and what `curate enhance` merged in and from
//! where. The block is read loosely (a field of another shape is left out, never an error);
//! every text is a text node, and a URL a link only through `external_href` (http(s)).

use crate::components::markdown::{FileLinks, Markdown, linked_text};
use crate::external_href;
use crate::pages::question::checklist::plain_item;
use leptos::prelude::*;
use repoprobe_core::Question;
use serde_json::Value;

/// The string at `path` in `v`, if it is one.
fn text<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_str)
}

/// `url` as a link when it is http(s), else as text that says it is not one.
fn url_view(url: &str) -> AnyView {
    match external_href(url) {
        Some(href) => view! { <a href=href rel="noopener noreferrer" class="url-text">{url.to_string()}</a> }.into_any(),
        None => view! {
            <span class="url-text" title="not an http(s) URL, so not a link">{url.to_string()}</span>
            <span class="muted">" (not an http(s) URL, so not a link)"</span>
        }
        .into_any(),
    }
}

/// A stage's verdict: kept or dropped (in words), the model and prompt, the rationale.
fn verdict(name: &'static str, v: Option<&Value>) -> impl IntoView + use<> {
    let Some(v) = v.filter(|v| v.is_object()) else {
        return view! { <div class="verdict"><dt>{name}</dt><dd class="muted">"not run"</dd></div> }.into_any();
    };
    let passed = match v.get("passed").and_then(Value::as_bool) {
        Some(true) => "passed",
        Some(false) => "dropped",
        None => "verdict not given",
    };
    let by = [text(v, &["model"]), text(v, &["prompt_version"])]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
    let rationale = text(v, &["rationale"]).unwrap_or_default().to_string();
    view! {
        <div class="verdict">
            <dt>{name}</dt>
            <dd>
                <strong>{passed}</strong>
                {(!by.is_empty()).then(|| format!(" ({by})"))}
                {(!rationale.is_empty()).then(|| view! { <p class="prose rationale">{rationale}</p> })}
            </dd>
        </div>
    }
    .into_any()
}

/// One external page of `curate enhance`: where from, what became of it, its summary.
fn source_page(s: &Value) -> impl IntoView + use<> {
    let url = text(s, &["url"]).unwrap_or_default().to_string();
    let final_url = text(s, &["final_url"])
        .filter(|f| *f != url)
        .map(str::to_string);
    let status = s.get("status").and_then(Value::as_u64);
    let relevant = s.get("relevant").and_then(Value::as_bool);
    let mut said = Vec::new();
    if let Some(st) = status {
        said.push(format!("HTTP {st}"));
    }
    if let Some(e) = text(s, &["error"]) {
        said.push(format!("not read: {e}"));
    }
    match relevant {
        Some(true) => said.push("relevant: merged in".into()),
        Some(false) => said.push("not relevant: left out".into()),
        None => {}
    }
    let summary = text(s, &["summary"]).map(str::to_string);
    view! {
        <li>
            {url_view(&url)}
            {final_url.map(|f| view! { " → " {url_view(&f)} })}
            {(!said.is_empty()).then(|| format!(" — {}", said.join(", ")))}
            {summary.map(|t| view! { <p class="prose summary">{t}</p> })}
        </li>
    }
}

/// The candidate `q`: question, reference answer, checklist, where it comes from, the stages'
/// verdicts and what enhance merged in.
pub fn candidate(q: &Question) -> impl IntoView + use<> {
    let links = FileLinks::new(&q.repo.url, &q.repo.commit);
    let none = Value::Null;
    let c = q.curation.as_ref().unwrap_or(&none);
    let repo_link = external_href(&q.repo.url).map(|h| {
        view! { <a href=h rel="noopener noreferrer">{q.repo.name.clone()}</a> }.into_any()
    });
    let repo = repo_link.unwrap_or_else(|| q.repo.name.clone().into_any());
    view! {
        <article class="candidate" aria-labelledby="candidate-h">
            <h2 id="candidate-h">{q.id.clone()}</h2>
            <p class="meta">
                {format!("{} · {} · {} · ", q.category, q.repo.language, q.repo.theme)}
                {repo}
                {format!(" at {}", repoprobe_core::text::prefix(&q.repo.commit, 12).0)}
            </p>
            <h3>"Question"</h3>
            <p class="prose question-text">{linked_text(&q.question, links.as_ref())}</p>
            <h3>"Reference answer"</h3>
            <Markdown tree=None fallback=q.reference_answer.clone() links=links.clone() />
            <h3>{format!("Checklist ({} items)", q.checklist.len())}</h3>
            <ol class="checklist">
                {q.checklist.iter().map(|it| plain_item(it, links.as_ref())).collect_view()}
            </ol>
            <h3>"Where it comes from"</h3>
            {origin(q, c)}
            <h3>"The stages' verdicts"</h3>
            <dl class="evidence verdicts">
                {verdict("classify", c.get("classify"))}
                {verdict("verify", c.get("verify"))}
            </dl>
            <h3>"What curate enhance merged in"</h3>
            {merged_in(q, c.get("enhance").unwrap_or(&none))}
        </article>
    }
}

/// Where the candidate comes from (its curation block's `source` and `commit`): the
/// discussion, the accepted answer, the dates and the pinned commit.
fn origin(q: &Question, c: &Value) -> impl IntoView + use<> {
    let none = Value::Null;
    let source = c.get("source").unwrap_or(&none);
    let title = text(source, &["title"]).unwrap_or_default().to_string();
    let discussion = text(source, &["url"]).map(url_view);
    let answer = text(source, &["answer_url"])
        .filter(|u| !u.is_empty())
        .map(url_view);
    let dates = [
        text(source, &["category"]).map(|v| format!("category {v}")),
        text(source, &["created_at"]).map(|v| format!("created {v}")),
        text(source, &["answer_chosen_at"]).map(|v| format!("answer chosen {v}")),
        source
            .get("upvotes")
            .and_then(Value::as_i64)
            .map(|v| format!("{v} upvote(s)")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    let commit = c.get("commit").unwrap_or(&none);
    let commit_line = [
        text(commit, &["oid"]).or(Some(q.repo.commit.as_str())),
        text(commit, &["branch"]),
        text(commit, &["committed_at"]),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    view! {
        <dl class="evidence curation-source">
            <div><dt>"Discussion"</dt><dd>{title} " " {discussion.unwrap_or_else(|| view! { <span class="muted">"no link given"</span> }.into_any())}</dd></div>
            {answer.map(|a| view! { <div><dt>"Accepted answer"</dt><dd>{a}</dd></div> })}
            {(!dates.is_empty()).then(|| view! { <div><dt>"Dates"</dt><dd>{dates}</dd></div> })}
            <div><dt>"Pinned commit"</dt><dd class="url-text">{commit_line}</dd></div>
        </dl>
    }
}

/// What `curate enhance` merged in (its `enhance` block): the pages, the links left out, and
/// the question and answer as harvested when the merge changed them.
fn merged_in(q: &Question, enhance: &Value) -> impl IntoView + use<> {
    let sources: Vec<Value> = enhance
        .get("sources")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let skipped: Vec<(String, String)> = enhance
        .get("skipped")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        text(s, &["url"]).unwrap_or_default().to_string(),
                        text(s, &["reason"]).unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let original_q = text(enhance, &["original_question"])
        .filter(|o| *o != q.question)
        .map(str::to_string);
    let original_a = text(enhance, &["original_answer"])
        .filter(|o| *o != q.reference_answer)
        .map(str::to_string);
    let merged_by = [
        text(enhance, &["model"]),
        text(enhance, &["prompt_version"]),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    view! {
        {if sources.is_empty() && skipped.is_empty() {
            view! { <p class="muted">"No external page: nothing merged in."</p> }.into_any()
        } else {
            view! {
                {(!merged_by.is_empty()).then(|| view! { <p class="muted">{format!("Merged by {merged_by}.")}</p> })}
                <ul class="enhance-sources">{sources.iter().map(source_page).collect_view()}</ul>
                {(!skipped.is_empty()).then(|| view! {
                    <p>"Left out before any fetch:"</p>
                    // Text, never links: these are the internal addresses (loopback, private) enhance refused.
                    <ul>{skipped.into_iter().map(|(u, why)| view! { <li><span class="url-text">{u}</span> {format!(" — {why}")}</li> }).collect_view()}</ul>
                })}
            }
            .into_any()
        }}
        {original_q.map(|t| view! {
            <details><summary>"The question as harvested, before the merge"</summary><p class="prose">{t}</p></details>
        })}
        {original_a.map(|t| view! {
            <details><summary>"The answer as harvested, before the merge"</summary><p class="prose">{t}</p></details>
        })}
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// Candidate `n` (0-based) of the Review view's fixture, rendered to HTML natively.
    fn rendered(n: usize) -> String {
        let line = include_str!("../../../testdata/review-site/candidates.jsonl")
            .lines()
            .nth(n)
            .expect("the fixture's candidate");
        let q: Question = serde_json::from_str(line).expect("a question");
        Owner::new().with(|| candidate(&q).to_html())
    }

    #[test]
    fn hostile_texts_are_text_and_javascript_urls_are_no_links() {
        let html = rendered(2);
        for markup in [
            "<img",
            "<script",
            "<b>bold",
            "<i>",
            "<a href=\"javascript:",
            "href=\"javascript:alert(3)",
            "href=\"javascript:alert(4)",
        ] {
            assert!(!html.contains(markup), "{markup} in {html}");
        }
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;&lt;b&gt;bold?&lt;/b&gt;"));
        assert!(
            html.contains("javascript:alert(3)"),
            "the source URL as text"
        );
        assert!(html.contains("not an http(s) URL, so not a link"));
        assert!(
            !html.contains("href=\"http://127.0.0.1"),
            "a link enhance refused stays text"
        );
        insta::assert_snapshot!("review_candidate_hostile", html);
    }

    #[test]
    fn evidence_links_to_the_pinned_commit_and_every_stage_is_shown() {
        let html = rendered(0);
        assert!(html.contains("href=\"https://github.com/acme/rocket/blob/0123456789abcdef0123456789abcdef01234567/src/engine.rs#L10-L20\""), "{html}");
        assert!(html.contains("href=\"https://github.com/acme/rocket/discussions/1\""));
        assert!(html.contains("href=\"https://docs.example.org/launch\""));
        for said in [
            "A real question about the engine.",
            "Grounded: k1 at src/engine.rs:10 (1).",
            "Summary of page 1: the launch retries.",
            "HTTP 404",
            "loopback address",
            "Merged by enhance-model, curate-enhance-v1.",
            "Original question 1",
        ] {
            assert!(html.contains(said), "{said} in {html}");
        }
    }
}
