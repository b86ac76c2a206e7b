//! `repoprobe curate repos`: the repositories to harvest. Either GitHub's search
//! (`created:A..B stars:>=N`), whose answers stop at 1,000 results: a slice whose
//! `repositoryCount` is over that is halved by creation time until each fits (as
//! SWE-bench-Live's crawler does), and how many were seen is said; or the `--repo` list.
//! Each repository is kept when its Discussions are on and a category of the names asked for is
//! answerable with at least `--min-answered` answered threads; the others go to the excluded
//! journal with the rule they failed. A rerun skips the repositories already decided.

use super::{GitHubArgs, block_on, exclude, now_rfc3339, open_journals};
use crate::exit::Exit;
use crate::output::{Journal, text};
use anyhow::bail;
use repoprobe_core::date::{format_utc, parse_utc};
use repoprobe_curate::{
    AnsweredRule, Category, RepoProvenance, Repository, Rule, Stage, THEMES, theme_named,
};
use repoprobe_github::GitHub;
use repoprobe_github::queries::RepoNode;
use std::collections::HashSet;
use std::path::PathBuf;

/// The most results one search gives.
const SEARCH_CAP: u64 = 1000;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Repositories created on or after this date (YYYY-MM-DD or an RFC 3339 time, UTC).
    #[arg(long, value_name = "DATE", default_value = "2024-01-01")]
    created_after: String,
    /// … and on or before this one (a bare date is the whole day) [default: now]; pin it to make
    /// a run repeatable.
    #[arg(long, value_name = "DATE")]
    created_before: Option<String>,
    /// Repositories with at least this many stars.
    #[arg(long, default_value_t = 1000)]
    min_stars: u64,
    /// A discussion category to harvest, by name (case-insensitive); repeatable. Only
    /// answerable ones count.
    #[arg(long = "category", value_name = "NAME", default_values = ["Q&A", "Help"])]
    categories: Vec<String>,
    /// Answered threads a repository needs (see --answered-rule).
    #[arg(long, default_value_t = 10)]
    min_answered: u64,
    /// How --min-answered counts: `together`, the answered threads of every named category
    /// summed (the paper's sentence, §3.2), or `each`, every category on its own (only those
    /// reaching it are harvested). Recorded on every repository.
    #[arg(long, value_enum, default_value_t = RuleFlag::Together)]
    answered_rule: RuleFlag,
    /// The theme of a repository, one of the paper's eight (Table 4: "LLM Framework", "Cloud
    /// DevOps", "Developer SDK", "Editor UI", "Monitoring Tools", "Desktop Apps", "Data
    /// Processing", "Security"), as `OWNER/NAME=THEME`; repeatable. It becomes the `repo.theme`
    /// of the repository's questions.
    #[arg(long = "theme", value_name = "OWNER/NAME=THEME")]
    themes: Vec<String>,
    /// Check these repositories (`owner/name`, repeatable) instead of searching; stars and
    /// creation date are not checked.
    #[arg(long = "repo", value_name = "OWNER/NAME")]
    repos: Vec<String>,
    /// Search results per page (at most 100; halved after a 502/504).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100))]
    page_size: u32,
    /// The kept repositories (JSONL, appended to); excluded ones go to
    /// <out>.excluded.ndjson.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    github: GitHubArgs,
}

/// `--answered-rule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RuleFlag {
    Together,
    Each,
}

/// What a repository is decided by.
struct Rules {
    wanted: Vec<String>,
    min_answered: u64,
    rule: AnsweredRule,
    /// `--theme`, by lower-case `owner/name`.
    themes: std::collections::HashMap<String, &'static str>,
}

impl Rules {
    fn of(a: &Args) -> anyhow::Result<Rules> {
        let mut themes = std::collections::HashMap::new();
        for t in &a.themes {
            let Some((repo, theme)) = t.split_once('=') else {
                bail!("--theme {t:?}: write OWNER/NAME=THEME");
            };
            let Some(theme) = theme_named(theme) else {
                bail!(
                    "--theme {t:?}: {theme:?} is not one of the paper's themes: {}",
                    THEMES.join(", ")
                );
            };
            check_repos(std::slice::from_ref(&repo.trim().to_string()))?;
            themes.insert(repo.trim().to_lowercase(), theme);
        }
        Ok(Rules {
            wanted: wanted_categories(a)?,
            min_answered: a.min_answered,
            rule: match a.answered_rule {
                RuleFlag::Together => AnsweredRule::Together,
                RuleFlag::Each => AnsweredRule::Each,
            },
            themes,
        })
    }
}

/// A repository to decide on, and where it was found.
struct Candidate {
    node: RepoNode,
    source: &'static str,
    query: Option<String>,
}

/// What the search saw.
#[derive(Default)]
struct SearchSeen {
    slices: usize,
    whole_count: u64,
    listed: usize,
    over_cap: Vec<String>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let rules = Rules::of(&a)?;
    check_repos(&a.repos)?;
    let (since, until) = created_range(&a)?;
    let mut gh = a.github.client()?;
    let (mut out, mut excluded) = open_journals(&a.out, |v| text(v, "repo"), "repository")?;
    let already = out.done.len() + excluded.done.len();
    block_on(async {
        let candidates = if a.repos.is_empty() {
            searched(&mut gh, &a, (since, until)).await?
        } else {
            named(&mut gh, &a.repos, &out, &mut excluded).await?
        };
        let (mut kept, mut dropped) = (0, 0);
        for c in candidates {
            let repo = c.node.name_with_owner.clone();
            if out.done.contains(&repo) || excluded.done.contains(&repo) {
                continue;
            }
            match decide(&mut gh, c, &rules).await? {
                Ok(record) => {
                    out.append(&record)?;
                    out.done.insert(repo);
                    kept += 1;
                }
                Err((rule, reason)) => {
                    exclude(&mut excluded, Stage::Repos, &repo, &repo, rule, reason)?;
                    dropped += 1;
                }
            }
        }
        eprintln!(
            "curate repos: {kept} kept, {dropped} excluded ({}){}; {} requests, {} points",
            excluded.path.display(),
            if already > 0 {
                format!(", {already} decided before")
            } else {
                String::new()
            },
            gh.stats.requests,
            gh.stats.cost
        );
        anyhow::Ok(())
    })??;
    Ok(Exit::Ok)
}

/// The categories of `--category`, lower case.
fn wanted_categories(a: &Args) -> anyhow::Result<Vec<String>> {
    let wanted: Vec<String> = a
        .categories
        .iter()
        .map(|c| c.trim().to_lowercase())
        .filter(|c| !c.is_empty())
        .collect();
    if wanted.is_empty() {
        bail!("--category names no category");
    }
    Ok(wanted)
}

/// Every `--repo` is OWNER/NAME.
fn check_repos(repos: &[String]) -> anyhow::Result<()> {
    for r in repos {
        let ok = r.split_once('/').is_some_and(|(o, n)| {
            !o.is_empty() && !n.is_empty() && !n.contains('/') && !r.contains(char::is_whitespace)
        });
        if !ok {
            bail!(
                "--repo must be OWNER/NAME, not {}",
                repoprobe_core::text::quote(r)
            );
        }
    }
    Ok(())
}

/// `--created-after` and `--created-before` (default now; a bare date is the whole day) as Unix
/// seconds.
fn created_range(a: &Args) -> anyhow::Result<(i64, i64)> {
    let Some(since) = parse_utc(&a.created_after) else {
        bail!(
            "--created-after must be YYYY-MM-DD or an RFC 3339 UTC time, not {}",
            repoprobe_core::text::quote(&a.created_after)
        );
    };
    let until = match &a.created_before {
        None => repoprobe_github::unix_now(),
        // A bare date is the whole day.
        Some(s) if s.trim().len() == 10 => parse_utc(s).map(|t| t + 86_399).ok_or_else(|| {
            anyhow::anyhow!(
                "--created-before must be YYYY-MM-DD or an RFC 3339 UTC time, not {}",
                repoprobe_core::text::quote(s)
            )
        })?,
        Some(s) => parse_utc(s).ok_or_else(|| {
            anyhow::anyhow!(
                "--created-before must be YYYY-MM-DD or an RFC 3339 UTC time, not {}",
                repoprobe_core::text::quote(s)
            )
        })?,
    };
    if until < since {
        bail!("--created-before is before --created-after");
    }
    Ok((since, until))
}

/// The search's candidates over `range`, with what it saw said on stderr.
async fn searched(
    gh: &mut GitHub,
    a: &Args,
    (since, until): (i64, i64),
) -> anyhow::Result<Vec<Candidate>> {
    let mut candidates = Vec::new();
    let mut seen = SearchSeen::default();
    search(
        gh,
        (since, until),
        a.min_stars,
        a.page_size,
        &mut candidates,
        &mut seen,
    )
    .await?;
    eprintln!(
        "search: {} repositories listed in {} slice(s) of created:{}..{} \
         stars:>={} (GitHub counted {} in the whole range)",
        seen.listed,
        seen.slices,
        format_utc(since),
        format_utc(until),
        a.min_stars,
        seen.whole_count
    );
    for s in &seen.over_cap {
        eprintln!(
            "warning: the slice {s} holds over {SEARCH_CAP} repositories in one \
             second: only the first {SEARCH_CAP} were listed"
        );
    }
    Ok(candidates)
}

/// The candidates of `--repo`, each once and not decided before; one GitHub does not know is
/// excluded as not found.
async fn named(
    gh: &mut GitHub,
    repos: &[String],
    out: &Journal<String>,
    excluded: &mut Journal<String>,
) -> anyhow::Result<Vec<Candidate>> {
    let mut candidates = Vec::new();
    let mut named = HashSet::new();
    for r in repos {
        if !named.insert(r.to_lowercase()) || out.done.contains(r) {
            continue;
        }
        if excluded.done.contains(r) {
            continue;
        }
        match gh.repository(r).await? {
            Some(node) => candidates.push(Candidate {
                node,
                source: "list",
                query: None,
            }),
            None => exclude(
                excluded,
                Stage::Repos,
                r,
                r,
                Rule::NotFound,
                format!("GitHub does not know {r} (or the token cannot see it)"),
            )?,
        }
    }
    Ok(candidates)
}

/// Lists the repositories of `created:range stars:>=min_stars`, halving the range while a
/// slice counts more than GitHub will list.
async fn search(
    gh: &mut GitHub,
    range: (i64, i64),
    min_stars: u64,
    page_size: u32,
    out: &mut Vec<Candidate>,
    seen: &mut SearchSeen,
) -> anyhow::Result<()> {
    let mut page_size = page_size;
    let mut names = HashSet::new();
    // Oldest slice first: the stack holds the later halves.
    let mut stack = vec![range];
    let mut first = true;
    while let Some((a, b)) = stack.pop() {
        let q = format!(
            "created:{}..{} stars:>={min_stars}",
            format_utc(a),
            format_utc(b)
        );
        let mut page = gh.search(&q, &mut page_size, None).await?;
        if first {
            seen.whole_count = page.repository_count;
            first = false;
        }
        if page.repository_count > SEARCH_CAP && b > a {
            let mid = a + (b - a) / 2;
            stack.push((mid + 1, b));
            stack.push((a, mid));
            continue;
        }
        if page.repository_count > SEARCH_CAP {
            seen.over_cap.push(q.clone());
        }
        seen.slices += 1;
        loop {
            for node in std::mem::take(&mut page.repos) {
                seen.listed += 1;
                if names.insert(node.name_with_owner.to_lowercase()) {
                    out.push(Candidate {
                        node,
                        source: "search",
                        query: Some(q.clone()),
                    });
                }
            }
            if !page.page.has_next_page {
                break;
            }
            let Some(after) = page.page.end_cursor.clone() else {
                break;
            };
            page = gh.search(&q, &mut page_size, Some(&after)).await?;
        }
    }
    Ok(())
}

/// Keeps a repository (its record) or says which rule it fails and why.
async fn decide(
    gh: &mut GitHub,
    c: Candidate,
    rules: &Rules,
) -> anyhow::Result<Result<Repository, (Rule, String)>> {
    let n = &c.node;
    let repo = n.name_with_owner.clone();
    if !n.has_discussions_enabled {
        return Ok(Err((
            Rule::NoDiscussions,
            format!("{repo} has Discussions turned off"),
        )));
    }
    let mut categories = Vec::new();
    for cat in n.discussion_categories.nodes.iter().flatten() {
        let named = rules.wanted.contains(&cat.name.trim().to_lowercase());
        let answered = if named && cat.is_answerable {
            Some(gh.answered_count(&repo, &cat.id).await?)
        } else {
            None
        };
        categories.push(Category {
            id: cat.id.clone(),
            name: cat.name.clone(),
            answerable: cat.is_answerable,
            answered,
            kept: false,
        });
    }
    if !categories.iter().any(|c| c.answered.is_some()) {
        return Ok(Err((
            Rule::NoCategory,
            no_category(&repo, &rules.wanted, &categories),
        )));
    }
    let Some(counts) = keep_categories(&mut categories, rules) else {
        let counts = counted(&categories, rules);
        return Ok(Err((Rule::TooFewAnswered, format!("{repo}: {counts}"))));
    };
    Ok(Ok(Repository {
        repo: repo.clone(),
        id: n.id.clone(),
        url: n.url.clone(),
        stars: n.stargazer_count,
        created_at: n.created_at.clone(),
        default_branch: n.default_branch_ref.as_ref().map(|b| b.name.clone()),
        kept_because: format!("Discussions on; {counts}"),
        categories,
        answered_rule: rules.rule,
        language: n.primary_language.as_ref().map(|l| l.name.clone()),
        theme: rules
            .themes
            .get(&repo.to_lowercase())
            .map(|t| t.to_string()),
        theme_by: None,
        description: n.description.clone(),
        topics: n
            .repository_topics
            .iter()
            .flat_map(|t| t.nodes.iter().flatten())
            .map(|t| t.topic.name.clone())
            .collect(),
        provenance: RepoProvenance {
            source: c.source.to_string(),
            query: c.query,
            api_url: gh.url().to_string(),
            seen_at: now_rfc3339(),
        },
    }))
}

/// Marks the categories to harvest by the rule: under `together` every counted category when
/// their sum reaches the minimum, under `each` those that reach it; returns the counts in words
/// when any is kept.
fn keep_categories(categories: &mut [Category], rules: &Rules) -> Option<String> {
    let sum: u64 = categories.iter().filter_map(|c| c.answered).sum();
    for c in categories.iter_mut() {
        c.kept = match (rules.rule, c.answered) {
            (_, None) => false,
            (AnsweredRule::Together, Some(_)) => sum >= rules.min_answered,
            (AnsweredRule::Each, Some(k)) => k >= rules.min_answered,
        };
    }
    categories
        .iter()
        .any(|c| c.kept)
        .then(|| counted(categories, rules))
}

/// The answered counts and the rule, in words.
fn counted(categories: &[Category], rules: &Rules) -> String {
    let counted: Vec<&Category> = categories.iter().filter(|c| c.answered.is_some()).collect();
    let each = counted
        .iter()
        .map(|c| format!("{} has {} answered", c.name, c.answered.unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(", ");
    let min = rules.min_answered;
    match rules.rule {
        AnsweredRule::Together => {
            let sum: u64 = counted.iter().filter_map(|c| c.answered).sum();
            format!("{each}: {sum} together (at least {min} asked, categories counted together)")
        }
        AnsweredRule::Each => format!("{each} (at least {min} asked of a category)"),
    }
}

/// Why a repository has no category to count.
fn no_category(repo: &str, wanted: &[String], categories: &[Category]) -> String {
    let list: Vec<String> = categories
        .iter()
        .map(|c| {
            if c.answerable {
                c.name.clone()
            } else {
                format!("{} (not answerable)", c.name)
            }
        })
        .collect();
    format!(
        "{repo} has no answerable category named {}; its categories: {}",
        wanted.join(" or "),
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(", ")
        }
    )
}
