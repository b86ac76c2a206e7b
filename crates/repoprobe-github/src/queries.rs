//! The GraphQL queries of `repoprobe curate` and the shapes of their data. Every field is
//! GitHub's own: a unit test writes each document of `ALL` to `target/tmp/graphql/`, where
//! `scripts/check-graphql.mjs` (run by `scripts/test.sh`) validates it against `schema.graphql`
//! of npm `@octokit/graphql-schema` 15.26.1. Each query names its operation, which the tests'
//! fake server answers by.
//!
//! Replies are read into these types leniently where GitHub says a value may be null (a
//! deleted author, an empty repository) and strictly elsewhere: a reply of another shape is a
//! [`GhError::Shape`] naming the field, never a panic.

use super::{GhError, GitHub, Reply};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The repository fields `curate repos` decides on: a fragment, part of each document that
/// spreads it (a macro, so that those documents are whole constants, as sent and as checked).
macro_rules! repo_fields {
    () => {
        " fragment RepoFields on Repository { id nameWithOwner url \
        stargazerCount createdAt hasDiscussionsEnabled defaultBranchRef { name } \
        primaryLanguage { name } description \
        repositoryTopics(first: 20) { nodes { topic { name } } } \
        discussionCategories(first: 100) { nodes { id name isAnswerable } } }"
    };
}

/// Every query document `curate` sends, by its operation name: the one list the tests write
/// out for the schema check, so a query left out of it is never sent unchecked (a test holds
/// each `const OP` of this file to it). Only the tests read it.
#[cfg(test)]
pub const ALL: [(&str, &str); 5] = [
    ("SearchRepositories", SEARCH),
    ("Repository", REPOSITORY),
    ("AnsweredCount", ANSWERED_COUNT),
    ("AnsweredDiscussions", DISCUSSIONS),
    ("PinnedCommit", PINNED_COMMIT),
];

pub const SEARCH: &str = concat!(
    "query SearchRepositories($q: String!, $first: Int!, $after: String) { \
    rateLimit { cost remaining resetAt } \
    search(type: REPOSITORY, query: $q, first: $first, after: $after) { repositoryCount \
    pageInfo { endCursor hasNextPage } nodes { __typename ... on Repository { ...RepoFields } } } }",
    repo_fields!()
);

pub const REPOSITORY: &str = concat!(
    "query Repository($owner: String!, $name: String!) { \
    rateLimit { cost remaining resetAt } \
    repository(owner: $owner, name: $name) { ...RepoFields } }",
    repo_fields!()
);

pub const ANSWERED_COUNT: &str = "query AnsweredCount($owner: String!, $name: String!, $category: ID!) { \
    rateLimit { cost remaining resetAt } \
    repository(owner: $owner, name: $name) { \
    discussions(categoryId: $category, answered: true) { totalCount } } }";

/// Oldest first (`CREATED_AT`, `ASC`): the default order, by update time, moves threads
/// between pages while we read them.
pub const DISCUSSIONS: &str = "query AnsweredDiscussions($owner: String!, $name: String!, \
    $category: ID!, $first: Int!, $after: String) { \
    rateLimit { cost remaining resetAt } \
    repository(owner: $owner, name: $name) { \
    discussions(categoryId: $category, answered: true, first: $first, after: $after, \
    orderBy: {field: CREATED_AT, direction: ASC}) { totalCount \
    pageInfo { endCursor hasNextPage } \
    nodes { id number url title body createdAt upvoteCount author { login } \
    category { id name } answerChosenAt \
    answer { id url body authorAssociation author { login } } } } } }";

pub const PINNED_COMMIT: &str = "query PinnedCommit($owner: String!, $name: String!, $until: GitTimestamp!) { \
    rateLimit { cost remaining resetAt } \
    repository(owner: $owner, name: $name) { defaultBranchRef { name target { __typename \
    ... on Commit { history(first: 1, until: $until) { nodes { oid committedDate } } } } } } }";

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RepoNode {
    pub id: String,
    pub name_with_owner: String,
    pub url: String,
    pub stargazer_count: u64,
    pub created_at: String,
    pub has_discussions_enabled: bool,
    pub default_branch_ref: Option<Named>,
    #[serde(default)]
    pub primary_language: Option<Named>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub repository_topics: Option<Nodes<TopicNode>>,
    pub discussion_categories: Nodes<CategoryNode>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Named {
    pub name: String,
}

/// `repositoryTopics.nodes[]`: a topic of a repository.
#[derive(Debug, Clone, Deserialize)]
pub struct TopicNode {
    pub topic: Named,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Nodes<T> {
    /// Null entries (items the token cannot see) are skipped by the readers.
    pub nodes: Vec<Option<T>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryNode {
    pub id: String,
    pub name: String,
    pub is_answerable: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    pub end_cursor: Option<String>,
    pub has_next_page: bool,
}

/// One page of a search.
#[derive(Debug)]
pub struct SearchPage {
    pub repository_count: u64,
    pub page: PageInfo,
    /// The repositories on it (other node types and nulls left out).
    pub repos: Vec<RepoNode>,
}

/// One page of a category's answered discussions, with the nodes as the API wrote them (kept
/// so that a resumed harvest reads them again instead of asking again).
#[derive(Debug)]
pub struct DiscussionsPage {
    pub total_count: u64,
    pub page: PageInfo,
    pub nodes: Vec<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscussionNode {
    pub id: String,
    pub number: u64,
    pub url: String,
    pub title: String,
    pub body: String,
    pub created_at: String,
    pub upvote_count: i64,
    pub author: Option<Login>,
    pub category: Option<Named>,
    pub answer_chosen_at: Option<String>,
    pub answer: Option<AnswerNode>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Login {
    pub login: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerNode {
    pub id: String,
    pub url: String,
    pub body: String,
    pub author_association: String,
    pub author: Option<Login>,
}

/// The default branch's commit at a time.
#[derive(Debug, Clone)]
pub struct Pinned {
    pub branch: String,
    pub oid: String,
    pub committed_at: String,
}

fn shape<T: DeserializeOwned>(op: &'static str, what: &str, v: Value) -> Result<T, GhError> {
    serde_json::from_value(v).map_err(|e| GhError::Shape {
        op,
        why: format!("{what}: {e}"),
    })
}

fn owner_name(repo: &str) -> (&str, &str) {
    repo.split_once('/').unwrap_or((repo, ""))
}

/// `repository` of a reply: `None` when GitHub says it does not exist (or the token cannot
/// see it).
fn repository<'r>(op: &'static str, reply: &'r Reply) -> Result<Option<&'r Value>, GhError> {
    match reply.data.get("repository") {
        Some(Value::Null) | None => {
            if reply.errors.is_empty()
                || reply
                    .errors
                    .iter()
                    .any(|e| e.kind.as_deref() == Some("NOT_FOUND"))
            {
                Ok(None)
            } else {
                Err(GhError::GraphQl {
                    op,
                    messages: super::describe(&reply.errors),
                })
            }
        }
        Some(v) => Ok(Some(v)),
    }
}

/// `repository` of a reply about `repo`, which was there when the stage found it: its absence
/// is an error.
fn existing<'r>(op: &'static str, repo: &str, reply: &'r Reply) -> Result<&'r Value, GhError> {
    repository(op, reply)?.ok_or_else(|| GhError::Shape {
        op,
        why: format!("repository {repo} is gone"),
    })
}

impl GitHub {
    /// A paged query asked for `*first` nodes (`vars` given that number): after a 502/504, the
    /// query too slow for GitHub, asked again at once for half as many, down to one; `*first`
    /// stays so for the next pages. Not a retry (no wait, another request): the waits are
    /// [`GitHub::query`]'s.
    async fn page(
        &mut self,
        op: &'static str,
        doc: &str,
        first: &mut u32,
        vars: impl Fn(u32) -> Value,
    ) -> Result<Reply, GhError> {
        loop {
            match self.query(op, doc, vars(*first)).await {
                Err(GhError::Gateway { .. }) if *first > 1 => *first /= 2,
                other => return other,
            }
        }
    }

    /// A page of `search(type: REPOSITORY, query: q)`.
    /// `first` is halved after each 502/504 and kept so for the next pages.
    pub async fn search(
        &mut self,
        q: &str,
        first: &mut u32,
        after: Option<&str>,
    ) -> Result<SearchPage, GhError> {
        const OP: &str = "SearchRepositories";
        let vars = |first| json!({"q": q, "first": first, "after": after});
        let reply = self.page(OP, SEARCH, first, vars).await?;
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Search {
            repository_count: u64,
            page_info: PageInfo,
            nodes: Vec<Value>,
        }
        let s: Search = shape(
            OP,
            "search",
            reply.data.get("search").cloned().unwrap_or_default(),
        )?;
        let mut repos = Vec::new();
        for node in s.nodes {
            if node.get("__typename").and_then(Value::as_str) == Some("Repository") {
                repos.push(shape(OP, "search.nodes[]", node)?);
            }
        }
        Ok(SearchPage {
            repository_count: s.repository_count,
            page: s.page_info,
            repos,
        })
    }

    /// `repository(owner, name)`; `None` when it is not found.
    pub async fn repository(&mut self, repo: &str) -> Result<Option<RepoNode>, GhError> {
        const OP: &str = "Repository";
        let (owner, name) = owner_name(repo);
        let reply = self
            .query(OP, REPOSITORY, json!({"owner": owner, "name": name}))
            .await?;
        match repository(OP, &reply)? {
            None => Ok(None),
            Some(v) => Ok(Some(shape(OP, "repository", v.clone())?)),
        }
    }

    /// The answered threads of a category.
    pub async fn answered_count(&mut self, repo: &str, category: &str) -> Result<u64, GhError> {
        const OP: &str = "AnsweredCount";
        let (owner, name) = owner_name(repo);
        let reply = self
            .query(
                OP,
                ANSWERED_COUNT,
                json!({"owner": owner, "name": name, "category": category}),
            )
            .await?;
        let r = existing(OP, repo, &reply)?;
        r.pointer("/discussions/totalCount")
            .and_then(Value::as_u64)
            .ok_or_else(|| GhError::Shape {
                op: OP,
                why: "repository.discussions.totalCount is not a count".into(),
            })
    }

    /// A page of a category's answered discussions, oldest first.
    /// `first` is halved after each 502/504 and kept so for the next pages.
    pub async fn discussions(
        &mut self,
        repo: &str,
        category: &str,
        first: &mut u32,
        after: Option<&str>,
    ) -> Result<DiscussionsPage, GhError> {
        const OP: &str = "AnsweredDiscussions";
        let (owner, name) = owner_name(repo);
        let vars = |first| {
            json!({"owner": owner, "name": name, "category": category,
                   "first": first, "after": after})
        };
        let reply = self.page(OP, DISCUSSIONS, first, vars).await?;
        let r = existing(OP, repo, &reply)?;
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Conn {
            total_count: u64,
            page_info: PageInfo,
            nodes: Vec<Value>,
        }
        let c: Conn = shape(
            OP,
            "repository.discussions",
            r.get("discussions").cloned().unwrap_or_default(),
        )?;
        Ok(DiscussionsPage {
            total_count: c.total_count,
            page: c.page_info,
            nodes: c.nodes.into_iter().filter(|n| !n.is_null()).collect(),
        })
    }

    /// The default branch's last commit at `until` (RFC 3339); `None` when the branch has none
    /// by then (or the repository is empty).
    pub async fn pinned_commit(
        &mut self,
        repo: &str,
        until: &str,
    ) -> Result<Option<Pinned>, GhError> {
        const OP: &str = "PinnedCommit";
        let (owner, name) = owner_name(repo);
        let reply = self
            .query(
                OP,
                PINNED_COMMIT,
                json!({"owner": owner, "name": name, "until": until}),
            )
            .await?;
        let r = existing(OP, repo, &reply)?;
        let Some(branch) = r.get("defaultBranchRef").filter(|b| !b.is_null()) else {
            return Ok(None);
        };
        let name = branch
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| GhError::Shape {
                op: OP,
                why: "defaultBranchRef.name is not a string".into(),
            })?;
        let node = branch.pointer("/target/history/nodes/0");
        let Some(node) = node.filter(|n| !n.is_null()) else {
            return Ok(None);
        };
        let oid = node.get("oid").and_then(Value::as_str).unwrap_or("");
        if oid.len() != 40 || !oid.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(GhError::Shape {
                op: OP,
                why: format!(
                    "history's oid is not a full commit id: {}",
                    repoprobe_text::text::quote(oid)
                ),
            });
        }
        Ok(Some(Pinned {
            branch: name.to_string(),
            oid: oid.to_ascii_lowercase(),
            committed_at: node
                .get("committedDate")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }))
    }
}

/// A discussion node read back (from a reply or the pages journal).
pub fn discussion(node: &Value) -> Result<DiscussionNode, GhError> {
    shape("AnsweredDiscussions", "discussions.nodes[]", node.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    /// The operation a document declares (`query NAME(`).
    fn operation(doc: &str) -> &str {
        let rest = doc
            .strip_prefix("query ")
            .expect("a document starts with `query `");
        &rest[..rest.find(['(', ' ', '{']).unwrap_or(rest.len())]
    }

    /// `target/tmp`, as `CARGO_TARGET_TMPDIR` names it for the integration tests (the ATIF
    /// trajectories go to its `atif/`); Cargo does not set that for unit tests, so it is found
    /// from this test's own binary: the target directory is the ancestor Cargo tagged with
    /// `CACHEDIR.TAG` (`CARGO_TARGET_DIR` or the workspace's `target`).
    fn target_tmpdir() -> PathBuf {
        let exe = std::env::current_exe().unwrap();
        let target = exe
            .ancestors()
            .find(|d| d.join("CACHEDIR.TAG").is_file())
            .unwrap_or_else(|| panic!("no target directory above {}", exe.display()));
        target.join("tmp")
    }

    /// Each query is left as `target/tmp/graphql/<OperationName>.graphql`, where
    /// `scripts/test.sh` validates it against GitHub's schema (`scripts/check-graphql.mjs`).
    #[test]
    fn every_query_is_written_out_for_the_schema_check() {
        let names: BTreeSet<&str> = ALL.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            BTreeSet::from([
                "AnsweredCount",
                "AnsweredDiscussions",
                "PinnedCommit",
                "Repository",
                "SearchRepositories",
            ]),
            "a query added or removed: change ALL, this list and the --expect of scripts/test.sh"
        );
        assert_eq!(names.len(), ALL.len(), "an operation name twice in ALL");
        // The name each function sends as `operationName` is one of ALL's, and each of ALL's
        // is sent by one: a query sent but missing from ALL would go unchecked.
        let ops: BTreeSet<&str> = include_str!("queries.rs")
            .lines()
            .filter_map(|l| l.trim().strip_prefix("const OP: &str = \""))
            .filter_map(|l| l.strip_suffix("\";"))
            .collect();
        assert_eq!(ops, names, "the `const OP`s of queries.rs against ALL");
        let dir = target_tmpdir().join("graphql");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, doc) in ALL {
            assert_eq!(operation(doc), name, "the operation {name} declares");
            std::fs::write(dir.join(format!("{name}.graphql")), format!("{doc}\n")).unwrap();
        }
    }
}
