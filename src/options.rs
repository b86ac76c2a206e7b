//! The options of a view as the URL states them (`?missing=exclude&judge=...&drop=q1,q2&w=q1/k1=2
//! &cluster=question&ci=bootstrap`),
//! read by one function for the page (its router's query) and the worker (the query it was
//! started with, for the first load): a link reproduces a view because both read it alike.

use crate::protocol::{Origin, ViewOptions};
use repoprobe_core::metrics::cluster::{CiMethod, Cluster};
use repoprobe_core::metrics::weights;
use repoprobe_core::sort::CollectTree;
use repoprobe_core::{MissingPolicy, Question, ScoreOptions, WeightRule};

impl ViewOptions {
    /// The options of a URL's query, `get` giving a parameter's value.
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> ViewOptions {
        ViewOptions {
            missing: match get("missing").as_deref() {
                Some("exclude") => MissingPolicy::Exclude,
                _ => MissingPolicy::Zero,
            },
            judge: get("judge").filter(|j| !j.is_empty()),
            // A name the core does not know is the default, as `missing`'s.
            cluster: get("cluster")
                .and_then(|c| Cluster::parse(c.trim()))
                .unwrap_or_default(),
            ci: get("ci")
                .and_then(|c| CiMethod::parse(c.trim()))
                .unwrap_or_default(),
            drop: parse_drop(&get("drop").unwrap_or_default()),
            weights: parse_weights(&get("w").unwrap_or_default()),
            created_after: get("created_after")
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty()),
            keep_bundled: keep_bundled(
                get("keep").as_deref(),
                get("set").as_deref(),
                get("data").is_some(),
            ),
        }
    }
}

/// Whether a file counts in the numbers. The bundled set is an example: files the user adds
/// (drop, picker, `?data=`) replace it, unless the user keeps it (`keep`). With no file of the
/// user's, the bundled set is what there is.
pub fn counted(origin: Origin, keep_bundled: bool, user_files: bool) -> bool {
    origin != Origin::Bundled || keep_bundled || !user_files
}

/// The `keep` of the URL: `keep=1`/`keep=0` say it; without it, the bundled set is kept only
/// when the URL names both a set and data (`?set=paper&data=…`), never for `?data=…` alone.
/// (`bin/repoprobe-worker-start.js` reads it the same way, only to know whether the bundled
/// set's fetch failures matter.)
pub fn keep_bundled(keep: Option<&str>, set: Option<&str>, data: bool) -> bool {
    match keep {
        Some(k) => k == "1",
        None => data && set.is_some_and(|s| !s.is_empty() && s != "none"),
    }
}

/// The `drop` parameter of the URL: comma-separated question ids → sorted, unique, no blanks.
pub fn parse_drop(param: &str) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = param
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect_set();
    set.into_iter().collect()
}

/// The `w` parameter of the URL: comma-separated weight rules, each in the form the CLI prints
/// it, a later rule for the same question and item replacing the earlier. A rule that does not
/// parse is kept as written: scoring then says what is wrong with it.
pub fn parse_weights(param: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in param.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let rule = WeightRule::parse(text).map_or_else(|_| text.to_string(), |r| r.to_string());
        let target = selector(&rule).to_string();
        out.retain(|r| selector(r) != target);
        out.push(rule);
    }
    out
}

/// `QUESTION/ITEM` of a rule: what it applies to.
fn selector(rule: &str) -> &str {
    rule.rsplit_once('=').map_or(rule, |(s, _)| s)
}

/// `rules` with the rule for `selector` (`QUESTION/ITEM`) set to `weight`, or removed.
pub fn set_weight(rules: &[String], target: &str, weight: Option<u32>) -> Vec<String> {
    let mut out: Vec<String> = rules
        .iter()
        .filter(|r| selector(r) != target)
        .cloned()
        .collect();
    if let Some(w) = weight {
        out.push(format!("{target}={w}"));
    }
    out
}

/// The weight each checklist item of `q` has under the URL's rules (a rule that does not parse
/// changes nothing here; the tables say what is wrong with it). The rule that wins is the core's
/// (`weights::in_force`), the one `score` applies.
pub fn weights_in_force(rules: &[String], q: &Question) -> Vec<u32> {
    weights::in_force(&parsed_rules(rules), q)
}

/// The rules of the URL that parse (the others change nothing but say what is wrong with them
/// in the tables).
pub fn parsed_rules(rules: &[String]) -> Vec<WeightRule> {
    rules
        .iter()
        .filter_map(|r| WeightRule::parse(r).ok())
        .collect()
}

/// The CLI's defaults, so that the site shows what `repoprobe score` prints; an error names a
/// weight rule that does not parse.
pub fn score_options(o: &ViewOptions) -> Result<ScoreOptions, weights::WeightRuleError> {
    Ok(ScoreOptions {
        missing: o.missing,
        judge: o.judge.clone(),
        cluster: o.cluster,
        ci: o.ci,
        items: true,
        drop_questions: o.drop.iter().cloned().collect(),
        weights: o
            .weights
            .iter()
            .map(|r| WeightRule::parse(r))
            .collect::<Result<_, _>>()?,
        created_after: o.created_after.clone(),
        // The leaderboard's evidence table, over the questions in force as the CLI's.
        evidence: true,
        // The model page's histogram, likewise.
        histograms: true,
        ..ScoreOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::testdata::golden;
    use std::collections::BTreeMap;

    fn query(pairs: &[(&str, &str)]) -> ViewOptions {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ViewOptions::from_query(|k| map.get(k).cloned())
    }

    #[test]
    fn a_query_reads_as_the_options_it_states() {
        assert_eq!(query(&[]), ViewOptions::default());
        let o = query(&[
            ("missing", "exclude"),
            ("judge", "J"),
            ("drop", " q2,q1,,q2 "),
            ("w", "q1/k1 = 2,*/@clarity=0"),
            ("set", "paper"),
            ("data", "https://x.org/a.jsonl"),
            ("created_after", " 2025-01-01 "),
            ("cluster", "question"),
            ("ci", "bootstrap"),
        ]);
        assert_eq!(
            o,
            ViewOptions {
                missing: MissingPolicy::Exclude,
                judge: Some("J".into()),
                cluster: Cluster::Question,
                ci: CiMethod::Bootstrap,
                drop: vec!["q1".into(), "q2".into()],
                weights: vec!["q1/k1=2".into(), "*/@clarity=0".into()],
                keep_bundled: true,
                created_after: Some("2025-01-01".into()),
            }
        );
        assert_eq!(
            query(&[
                ("judge", ""),
                ("missing", "x"),
                ("created_after", ""),
                ("cluster", "galaxy"),
                ("ci", ""),
            ]),
            ViewOptions::default()
        );
        assert_eq!(query(&[("cluster", "none")]).cluster, Cluster::None);
        let o = score_options(&o).unwrap();
        assert_eq!((o.cluster, o.ci), (Cluster::Question, CiMethod::Bootstrap));
        assert_eq!(o.created_after.as_deref(), Some("2025-01-01"));
        assert_eq!(
            o.drop_questions.into_iter().collect::<Vec<_>>(),
            ["q1", "q2"]
        );
    }

    #[test]
    fn weight_rules_of_the_url_are_canonical_and_settable() {
        // Spaces go, a later rule for the same item replaces the earlier, a bad one stays as
        // written so that scoring can say what is wrong with it.
        assert_eq!(
            parse_weights(" q1/k1 = 2 ,*/@clarity=0,, q1/k1=3,oops"),
            ["*/@clarity=0", "q1/k1=3", "oops"]
        );
        let bad = ViewOptions {
            weights: parse_weights("q1/k1=x"),
            ..ViewOptions::default()
        };
        assert!(
            score_options(&bad)
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        let rules = parse_weights("*/@clarity=0,q1/k1=3");
        assert_eq!(
            set_weight(&rules, "q1/k1", Some(5)),
            ["*/@clarity=0", "q1/k1=5"]
        );
        assert_eq!(
            set_weight(&rules, "q2/k2", Some(0)),
            ["*/@clarity=0", "q1/k1=3", "q2/k2=0"]
        );
        assert_eq!(set_weight(&rules, "*/@clarity", None), ["q1/k1=3"]);
        // The weights the question view shows and the difficulty sort uses: a question's own
        // rule beats `*`, a rule that does not parse changes nothing.
        let l = golden();
        let q = |id: &str| l.dataset.questions.iter().find(|q| q.id == id).unwrap();
        let rules = parse_weights("*/@knowledge=1,q1/k1=3,oops");
        assert_eq!(weights_in_force(&rules, q("q1")), [3, 1, 1]);
        assert_eq!(weights_in_force(&rules, q("q2")), [1, 1, 1]);
        assert_eq!(weights_in_force(&[], q("q2")), [5, 4, 1]);
    }

    #[test]
    fn added_files_replace_the_bundled_set_unless_it_is_kept() {
        // The URL: `?data=` alone replaces, `?set=NAME&data=` keeps, `keep=` says it outright.
        assert!(!keep_bundled(None, None, false));
        assert!(!keep_bundled(None, Some("paper"), false));
        assert!(!keep_bundled(None, None, true));
        assert!(keep_bundled(None, Some("paper"), true));
        assert!(!keep_bundled(None, Some("none"), true));
        assert!(keep_bundled(Some("1"), None, false));
        assert!(!keep_bundled(Some("0"), Some("paper"), true));
        // Which files count.
        assert!(
            counted(Origin::Bundled, false, false),
            "nothing of the user's yet"
        );
        assert!(
            !counted(Origin::Bundled, false, true),
            "the user's files replace it"
        );
        assert!(counted(Origin::Bundled, true, true), "kept");
        for o in [Origin::Dropped, Origin::Url] {
            assert!(counted(o, false, true) && counted(o, true, true));
        }
    }
}

/// The Runs view's filter and order as the URL states them (`?view=runs&model=…&verdict=failure
/// &noevidence=1&edit=1&min=0&max=30&sort=cost:desc`): values the core does not know are left
/// out (an unknown verdict filters nothing), never an error.
pub fn runs_filter(
    get: impl Fn(&str) -> Option<String>,
) -> (
    repoprobe_core::metrics::runs::RunFilter,
    Option<repoprobe_core::metrics::runs::Order>,
) {
    use repoprobe_core::FailureMode;
    use repoprobe_core::metrics::runs::{Order, RunFilter, Verdict};
    let text = |k: &str| {
        get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let number = |k: &str| {
        text(k)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    let filter = RunFilter {
        model: text("model"),
        question: text("question"),
        category: text("category"),
        verdict: text("verdict").and_then(|v| Verdict::parse(&v)),
        failure_mode: text("mode").and_then(|m| FailureMode::parse(&m)),
        read_no_evidence: get("noevidence").as_deref() == Some("1"),
        attempted_edit: get("edit").as_deref() == Some("1"),
        min_score: number("min"),
        max_score: number("max"),
    };
    (filter, text("sort").and_then(|s| Order::parse(&s).ok()))
}

/// A run as the side-by-side view's address names it: `MODEL` (attempt 0) or `MODEL:N`; a
/// model whose name holds a colon keeps it when what follows the last one is not a number.
pub fn run_param(s: &str) -> Option<(String, u32)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    match s.rsplit_once(':') {
        Some((m, n)) if !m.is_empty() && n.parse::<u32>().is_ok() => {
            Some((m.to_string(), n.parse().unwrap_or(0)))
        }
        _ => Some((s.to_string(), 0)),
    }
}

#[cfg(test)]
mod runs_tests {
    use super::{run_param, runs_filter};

    #[test]
    fn a_run_is_a_model_and_an_attempt() {
        assert_eq!(run_param("m"), Some(("m".into(), 0)));
        assert_eq!(run_param("m:2"), Some(("m".into(), 2)));
        assert_eq!(
            run_param("vendor/m:free"),
            Some(("vendor/m:free".into(), 0))
        );
        assert_eq!(
            run_param("vendor/m:free:1"),
            Some(("vendor/m:free".into(), 1))
        );
        assert_eq!(run_param(" "), None);
    }
    use repoprobe_core::metrics::runs::Verdict;

    #[test]
    fn the_runs_filter_reads_the_url_and_ignores_what_it_does_not_know() {
        let q = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let (f, o) = runs_filter(q(&[
            ("model", "m1"),
            ("verdict", "failure"),
            ("noevidence", "1"),
            ("min", "10"),
            ("max", "x"),
            ("sort", "cost:desc"),
        ]));
        assert_eq!(f.model.as_deref(), Some("m1"));
        assert_eq!(f.verdict, Some(Verdict::Failure));
        assert!(f.read_no_evidence && !f.attempted_edit);
        assert_eq!((f.min_score, f.max_score), (Some(10.0), None));
        assert_eq!(o.unwrap().as_string(), "cost:desc");
        let (f, o) = runs_filter(q(&[
            ("verdict", "great"),
            ("sort", "nope"),
            ("edit", "yes"),
        ]));
        assert!(f.is_empty() && o.is_none());
    }
}
