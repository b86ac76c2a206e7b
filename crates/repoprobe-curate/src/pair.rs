//! From a classified thread to the question/answer pair `make-checklist` reads: the record
//! `curate enhance` writes (docs/curate.md#pairs). The question is the discussion's title and
//! body; the reference answer its accepted answer; the repository is pinned at the commit the
//! harvest found; the `curation` block rides along to the candidates file.

use crate::curation::{Curation, Enhancement, SourceThread, StageVerdict};
use crate::record::Thread;
use repoprobe_core::model::Repo;
use serde::{Deserialize, Serialize};

/// A line of `curate classify`'s output: the thread as harvested, every field kept, with the
/// category the model named and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassifiedThread {
    #[serde(flatten)]
    pub thread: Thread,
    /// One of the three categories of docs/format.md#question.
    pub question_category: String,
    pub classify: StageVerdict,
}

/// A line of `curate enhance`'s output: a `make-checklist` source record (docs/format.md's
/// question without its checklist) and its curation block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// The thread's key, `owner/name#number`: unique across repositories, and a reader finds
    /// the discussion from it.
    pub id: String,
    pub repo: Repo,
    pub category: String,
    pub question: String,
    pub reference_answer: String,
    /// The thread linked to external pages: the pair depends on them (`curate verify` checks
    /// that they resolve and matter).
    pub external_context: bool,
    pub curation: Curation,
}

/// The question as a benchmark question reads it: the title, a blank line, the body.
pub fn question_text(t: &Thread) -> String {
    let (title, body) = (t.title.trim(), t.body.trim());
    match (title.is_empty(), body.is_empty()) {
        (_, true) => title.to_string(),
        (true, false) => body.to_string(),
        (false, false) => format!("{title}\n\n{body}"),
    }
}

/// The repository's page: the discussion's URL up to `/discussions/` (GitHub Enterprise's
/// hosts included), else `https://github.com/OWNER/NAME`.
pub fn repo_url(t: &Thread) -> String {
    match t.url.find("/discussions/") {
        Some(at) if t.url.starts_with("https://") || t.url.starts_with("http://") => {
            t.url[..at].to_string()
        }
        _ => format!("https://github.com/{}", t.repo),
    }
}

impl Pair {
    /// The pair of a classified thread, with the texts and the enhancement given (the
    /// originals and an empty enhancement for a thread without links).
    pub fn of(
        c: &ClassifiedThread,
        question: String,
        answer: String,
        enhance: Enhancement,
    ) -> Pair {
        let t = &c.thread;
        Pair {
            id: t.key.clone(),
            repo: Repo {
                name: t.repo.clone(),
                url: repo_url(t),
                commit: t.commit.oid.clone(),
                language: t.language.clone(),
                theme: t.theme.clone(),
            },
            category: c.question_category.clone(),
            question,
            reference_answer: answer,
            external_context: !enhance.sources.is_empty(),
            curation: Curation {
                source: SourceThread::of(t),
                commit: t.commit.clone(),
                classify: c.classify.clone(),
                enhance,
                checklist: None,
                verify: None,
            },
        }
    }

    /// A thread whose texts stand as harvested.
    pub fn unchanged(c: &ClassifiedThread, enhance: Enhancement) -> Pair {
        let (q, a) = (
            question_text(&c.thread),
            c.thread.answer.body.trim().to_string(),
        );
        Pair::of(c, q, a, enhance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::classify::tests::thread;

    fn classified() -> ClassifiedThread {
        ClassifiedThread {
            thread: thread("The body.\n"),
            question_category: "Implementation Details".into(),
            classify: StageVerdict {
                prompt_version: "curate-classify-v1".into(),
                model: "m".into(),
                passed: true,
                rationale: "About the scheduler's code.".into(),
            },
        }
    }

    #[test]
    fn a_pair_is_a_source_record_pinned_at_the_threads_commit() {
        let c = classified();
        let mut e = Enhancement {
            original_question: question_text(&c.thread),
            original_answer: c.thread.answer.body.clone(),
            ..Enhancement::default()
        };
        let p = Pair::unchanged(&c, e.clone());
        assert_eq!(p.id, "acme/rocket#7");
        assert_eq!(
            p.question,
            "How does the scheduler pick a worker?\n\nThe body."
        );
        assert_eq!(p.repo.url, "https://github.com/acme/rocket");
        assert_eq!(p.repo.commit, "a".repeat(40));
        assert!(!p.external_context);
        assert_eq!(p.curation.source.answer_chosen_at, "2024-03-02T10:00:00Z");
        // A record make-checklist reads, the curation block kept as an extra field.
        let v = serde_json::to_value(&p).unwrap();
        let source = repoprobe_core::protocol::checklist_gen::parse_source(&v).unwrap();
        assert_eq!(source.id, "acme/rocket#7");
        assert_eq!(source.repo.commit, "a".repeat(40));
        assert_eq!(v["curation"]["classify"]["passed"], true);
        e.sources.push(crate::LinkSource {
            url: "https://docs.example.org/".into(),
            final_url: None,
            fetched_at: "2024-06-01T00:00:00Z".into(),
            status: Some(404),
            content_type: None,
            bytes: None,
            sha256: None,
            error: Some("HTTP 404".into()),
            relevant: None,
            summary: None,
        });
        assert!(Pair::unchanged(&c, e).external_context);
        // A classified thread reads back as it was written.
        let line = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<ClassifiedThread>(&line).unwrap(), c);
    }
}
