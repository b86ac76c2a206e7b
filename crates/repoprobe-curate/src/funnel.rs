//! The funnel of `curate report`: how many records each stage kept, in total and per
//! repository, and why the others were dropped — counted from the records themselves (the
//! stages' outputs and `excluded` journals), never from a log, as the paper reports
//! 5,233 → 2,613 → 1,107 → 500.

use crate::record::{Excluded, Repository, Rule, Stage, Thread};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One repository's row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoFunnel {
    /// Kept by `curate repos` (a repository may appear only through its threads).
    pub kept: bool,
    /// Answered threads of its kept categories, as the API counted them at `curate repos`.
    #[serde(skip_serializing_if = "repoprobe_core::skip::none")]
    pub answered: Option<u64>,
    pub harvested: u64,
    /// Threads (or questions) kept after each later stage given, by the stage's name.
    pub after: BTreeMap<String, u64>,
    /// Threads dropped, by stage.
    pub dropped: BTreeMap<Stage, u64>,
}

/// The records a stage after the harvest wrote: its name (`filter`, `classify`, `enhance`,
/// `make-checklist`, `verify`) and each record's key and repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageOutput {
    pub stage: String,
    pub records: Vec<(String, String)>,
}

/// How many distinct records a later stage kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageCount {
    pub stage: String,
    pub kept: u64,
}

/// The funnel so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Funnel {
    /// Repositories `curate repos` looked at: kept and excluded.
    pub repositories_seen: u64,
    pub repositories_kept: u64,
    /// Threads written by `curate harvest`.
    pub threads_harvested: u64,
    /// What each later stage given kept, in pipeline order.
    pub after: Vec<StageCount>,
    /// Dropped records by stage and rule.
    pub dropped: BTreeMap<Stage, BTreeMap<Rule, u64>>,
    /// Rows by repository (`owner/name`), in name order.
    pub per_repository: BTreeMap<String, RepoFunnel>,
}

impl Funnel {
    /// Counts each key once (a record written twice, or excluded twice, counts once).
    pub fn of(
        repos: &[Repository],
        harvested: &[Thread],
        later: &[StageOutput],
        excluded: &[Excluded],
    ) -> Funnel {
        let mut f = Funnel::default();
        let mut kept = BTreeSet::new();
        for r in repos {
            if !kept.insert(r.repo.as_str()) {
                continue;
            }
            let row = f.per_repository.entry(r.repo.clone()).or_default();
            row.kept = true;
            row.answered = Some(r.kept_categories().filter_map(|c| c.answered).sum());
        }
        f.repositories_kept = kept.len() as u64;
        let mut seen_excluded = BTreeSet::new();
        let mut dropped_repos = BTreeSet::new();
        for e in excluded {
            if !seen_excluded.insert((e.stage, e.key.as_str())) {
                continue;
            }
            *f.dropped
                .entry(e.stage)
                .or_default()
                .entry(e.rule)
                .or_default() += 1;
            if e.stage == Stage::Repos {
                if !kept.contains(e.key.as_str()) {
                    dropped_repos.insert(e.key.as_str());
                }
            } else {
                *f.per_repository
                    .entry(e.repo.clone())
                    .or_default()
                    .dropped
                    .entry(e.stage)
                    .or_default() += 1;
            }
        }
        f.repositories_seen = (kept.len() + dropped_repos.len()) as u64;
        let harvested: Vec<(String, String)> = harvested
            .iter()
            .map(|t| (t.key.clone(), t.repo.clone()))
            .collect();
        f.threads_harvested =
            count_into(&mut f.per_repository, &harvested, |row| &mut row.harvested);
        for out in later {
            for row in f.per_repository.values_mut() {
                row.after.insert(out.stage.clone(), 0);
            }
            let n = count_into(&mut f.per_repository, &out.records, |row| {
                row.after.entry(out.stage.clone()).or_insert(0)
            });
            f.after.push(StageCount {
                stage: out.stage.clone(),
                kept: n,
            });
        }
        f
    }

    /// The funnel's steps in order, as its chart draws them: threads harvested, then what each
    /// later stage kept (the paper's 5,233 → 2,613 → 1,107 → 500).
    pub fn steps(&self) -> Vec<(String, u64)> {
        std::iter::once(("harvested".to_string(), self.threads_harvested))
            .chain(self.after.iter().map(|s| (s.stage.clone(), s.kept)))
            .collect()
    }

    /// The funnel as a plain-text table (what `curate report` prints).
    pub fn render_text(&self) -> String {
        let mut out = format!(
            "repositories: {} seen, {} kept\nthreads: {} harvested",
            self.repositories_seen, self.repositories_kept, self.threads_harvested
        );
        for s in &self.after {
            out.push_str(&format!(", {} after {}", s.kept, s.stage));
        }
        out.push('\n');
        for (stage, rules) in &self.dropped {
            let list: Vec<String> = rules
                .iter()
                .map(|(rule, n)| format!("{n} {}", rule_name(*rule)))
                .collect();
            out.push_str(&format!(
                "dropped at {}: {}\n",
                stage.as_str(),
                list.join(", ")
            ));
        }
        if self.per_repository.is_empty() {
            return out;
        }
        let width = self
            .per_repository
            .keys()
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0)
            .max("repository".len());
        let columns: Vec<String> = self
            .after
            .iter()
            .map(|s| format!("after {}", s.stage))
            .collect();
        out.push_str(&format!(
            "\n{:<width$}  {:>8}  {:>9}",
            "repository", "answered", "harvested"
        ));
        for c in &columns {
            out.push_str(&format!("  {c}"));
        }
        out.push('\n');
        let dash = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
        for (repo, row) in &self.per_repository {
            out.push_str(&format!(
                "{repo:<width$}  {:>8}  {:>9}",
                dash(row.answered),
                row.harvested,
            ));
            for (s, c) in self.after.iter().zip(&columns) {
                let n = row.after.get(&s.stage).copied();
                out.push_str(&format!("  {:>w$}", dash(n), w = c.chars().count()));
            }
            out.push('\n');
        }
        out
    }
}

/// The rule's name as records write it.
fn rule_name(rule: Rule) -> String {
    serde_json::to_value(rule)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Adds each distinct record to its repository's counter; returns how many there were.
fn count_into(
    rows: &mut BTreeMap<String, RepoFunnel>,
    records: &[(String, String)],
    counter: impl Fn(&mut RepoFunnel) -> &mut u64,
) -> u64 {
    let mut keys = BTreeSet::new();
    for (key, repo) in records {
        if keys.insert(key.as_str()) {
            *counter(rows.entry(repo.clone()).or_default()) += 1;
        }
    }
    keys.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::*;

    fn repo(name: &str, answered: u64) -> Repository {
        Repository {
            repo: name.into(),
            id: "R".into(),
            url: format!("https://github.com/{name}"),
            stars: 1000,
            created_at: "2024-01-02T00:00:00Z".into(),
            default_branch: Some("main".into()),
            categories: vec![Category {
                id: "C".into(),
                name: "Q&A".into(),
                answerable: true,
                answered: Some(answered),
                kept: true,
            }],
            kept_because: "k".into(),
            answered_rule: AnsweredRule::Together,
            language: None,
            theme: None,
            theme_by: None,
            description: None,
            topics: Vec::new(),
            provenance: RepoProvenance {
                source: "list".into(),
                query: None,
                api_url: "a".into(),
                seen_at: "s".into(),
            },
        }
    }

    fn thread(repo: &str, n: u64) -> Thread {
        Thread {
            key: Thread::key_of(repo, n),
            repo: repo.into(),
            category: "Q&A".into(),
            number: n,
            url: "u".into(),
            title: "t".into(),
            body: "b".into(),
            author: None,
            created_at: "c".into(),
            upvotes: 0,
            answer: Answer {
                body: "a".into(),
                author: None,
                author_association: "NONE".into(),
                chosen_at: "c".into(),
                url: "u".into(),
            },
            commit: PinnedCommit {
                oid: "0".repeat(40),
                committed_at: "c".into(),
                branch: "main".into(),
            },
            language: String::new(),
            theme: String::new(),
            provenance: ThreadProvenance {
                source_url: "u".into(),
                api_url: "a".into(),
                harvested_at: "h".into(),
                repository_id: "R".into(),
                category_id: "C".into(),
                discussion_id: "D".into(),
                answer_id: "A".into(),
            },
        }
    }

    fn output(stage: &str, threads: &[Thread]) -> StageOutput {
        StageOutput {
            stage: stage.into(),
            records: threads
                .iter()
                .map(|t| (t.key.clone(), t.repo.clone()))
                .collect(),
        }
    }

    fn excluded(stage: Stage, key: &str, repo: &str, rule: Rule) -> Excluded {
        Excluded {
            stage,
            key: key.into(),
            repo: repo.into(),
            rule,
            reason: "r".into(),
        }
    }

    #[test]
    fn each_stage_counts_its_records_once_per_key() {
        let repos = [repo("a/x", 3), repo("b/y", 1), repo("a/x", 3)];
        let harvested = [
            thread("a/x", 1),
            thread("a/x", 2),
            thread("b/y", 1),
            thread("a/x", 2),
        ];
        let filtered = [thread("a/x", 1), thread("b/y", 1)];
        let ex = [
            excluded(Stage::Repos, "c/z", "c/z", Rule::NoDiscussions),
            excluded(Stage::Repos, "d/w", "d/w", Rule::TooFewAnswered),
            excluded(Stage::Repos, "d/w", "d/w", Rule::TooFewAnswered),
            excluded(Stage::Harvest, "a/x#3", "a/x", Rule::NoAnswer),
            excluded(Stage::Filter, "a/x#2", "a/x", Rule::Images),
        ];
        let later = [
            output("filter", &filtered),
            StageOutput {
                stage: "verify".into(),
                records: vec![("a/x#1".into(), "a/x".into())],
            },
        ];
        let f = Funnel::of(&repos, &harvested, &later, &ex);
        assert_eq!((f.repositories_seen, f.repositories_kept), (4, 2));
        assert_eq!(f.threads_harvested, 3);
        assert_eq!(
            f.after,
            [
                StageCount {
                    stage: "filter".into(),
                    kept: 2
                },
                StageCount {
                    stage: "verify".into(),
                    kept: 1
                }
            ]
        );
        assert_eq!(f.dropped[&Stage::Repos][&Rule::TooFewAnswered], 1);
        let ax = &f.per_repository["a/x"];
        assert_eq!(
            (
                ax.answered,
                ax.harvested,
                ax.after["filter"],
                ax.after["verify"]
            ),
            (Some(3), 2, 1, 1)
        );
        assert_eq!(ax.dropped[&Stage::Harvest], 1);
        assert_eq!(ax.dropped[&Stage::Filter], 1);
        assert!(!f.per_repository.contains_key("c/z"));
        let text = f.render_text();
        assert!(
            text.starts_with(
                "repositories: 4 seen, 2 kept\nthreads: 3 harvested, 2 after filter, 1 after verify\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("dropped at repos: 1 no-discussions, 1 too-few-answered"),
            "{text}"
        );
        assert!(
            text.contains("a/x                3          2             1             1\nb/y"),
            "{text}"
        );
    }

    #[test]
    fn without_a_later_output_there_is_no_column() {
        let f = Funnel::of(&[repo("a/x", 1)], &[thread("a/x", 1)], &[], &[]);
        assert!(f.after.is_empty());
        assert!(f.per_repository["a/x"].after.is_empty());
        let text = f.render_text();
        assert!(
            text.contains("repository  answered  harvested\na/x                1          1\n"),
            "{text}"
        );
    }
}
