//! How sure the numbers are, in the site's words (issue 53, docs/metrics.md#clustered-uncertainty):
//! the leaderboard's uncertainty columns (the core's models table: Overall ± half its interval,
//! the clustered SE, the 95 % interval, the rank range; a column it lacks added), the groups of
//! models that no pair separates, the paired comparison's figures, and the sentences that say
//! how each figure was computed. The numbers are the core's (`ScoreReport`); this module only
//! lays them out.

use crate::components::report_table::{RowExtra, RowExtras};
use leptos::prelude::*;
use repoprobe_core::ScoreReport;
use repoprobe_core::metrics::ModelScore;
use repoprobe_core::metrics::Paired;
use repoprobe_core::metrics::cluster::{CiMethod, Cluster};
use repoprobe_core::report::{Cell, Mark, Table};
use repoprobe_core::sort::CollectTree;
use std::collections::BTreeMap;

/// The column heads of the core's models table this module sees to (found case-insensitively;
/// a column the core's table lacks, where no model has the figure, is added with "—"s). Overall's
/// cell says "54.3 ± 2.1" itself, as the CLI prints it.
pub const RANK: &str = "Rank";
pub const SE: &str = "SE";
pub const CI: &str = "95% CI";

/// The id of the sentence that says how the intervals and ranks were computed (the cells'
/// `aria-describedby`).
pub const METHOD_ID: &str = "uncertainty-method";

/// Half the width of a 95 % interval, `(hi − lo) / 2`.
pub fn half_width(ci: Option<[f64; 2]>) -> Option<f64> {
    ci.map(|[lo, hi]| (hi - lo) / 2.0).filter(|v| v.is_finite())
}

/// A rank range as the leaderboard writes it: "1–2", or "3" when both ends are equal.
pub fn rank_text(rank: Option<[usize; 2]>) -> String {
    match rank {
        Some([lo, hi]) if lo == hi => lo.to_string(),
        Some([lo, hi]) => format!("{lo}–{hi}"),
        None => "—".to_string(),
    }
}

/// What the clusters are, in words.
pub fn cluster_words(c: Cluster) -> &'static str {
    match c {
        Cluster::Repo => "clustered by repository (the questions of one repository move together)",
        Cluster::Question => {
            "clustered by question (a question's attempts and judge runs move together)"
        }
        Cluster::None => {
            "not clustered (every question × attempt × judge run counted as independent)"
        }
    }
}

/// How the 95 % intervals were made, in words (the policy of `r`).
pub fn method_words(r: &ScoreReport) -> String {
    let p = &r.policy;
    match p.ci {
        CiMethod::Clt => "CLT: Overall ± 1.96 × the clustered standard error".to_string(),
        CiMethod::Bootstrap => {
            let unit = match p.cluster {
                Cluster::Repo => "whole repositories",
                Cluster::Question => "whole questions",
                Cluster::None => "single cells",
            };
            // The tables come first on large data, scored without the bootstrap (B = 0 in
            // their policy): the intervals are on their way, not turned off.
            if p.bootstrap == 0 {
                format!("bootstrap resampling {unit} (being computed)")
            } else {
                format!(
                    "bootstrap resampling {unit} (B = {}, seed {})",
                    p.bootstrap, p.seed
                )
            }
        }
    }
}

/// The sentence under the leaderboard: what ± and the rank range are and how they were made.
pub fn method_sentence(r: &ScoreReport) -> String {
    format!(
        "± is half the 95% interval of Overall ({}); standard errors {}. A rank range runs from 1 + the models surely ahead to N − the models surely behind, \"surely\" meaning that the clustered paired 95% interval of the difference lies wholly on one side of 0; models sharing a rank range are one group, said in their rank cell and shaded apart from the next group: no pair of them is separated.",
        method_words(r),
        cluster_words(r.policy.cluster)
    )
}

/// A model's hover on its ± and interval: the method, the clusters, the interval.
fn interval_title(r: &ScoreReport, m: &ModelScore) -> String {
    let ci = m
        .ci95
        .map_or("none".to_string(), |[lo, hi]| format!("{lo:.2}–{hi:.2}"));
    format!(
        "95% interval {ci}; {}; SE {} over {} cluster(s)",
        method_words(r),
        cluster_words(r.policy.cluster),
        m.clusters
    )
}

/// A model's hover on its rank range.
fn rank_title(r: &ScoreReport, m: &ModelScore, n: usize) -> String {
    format!(
        "Rank range among the {n} model(s) of judge {}: 1 + the models surely ahead to {n} − the models surely behind, by the clustered paired CLT 95% interval of each difference; {} ({} cluster(s))",
        m.judge,
        cluster_words(r.policy.cluster),
        m.clusters
    )
}

/// Column `name`'s index in `t`, the column added (after column `after`, or at the end) with
/// empty cells when the table lacks it.
fn column(t: &mut Table, name: &str, after: Option<usize>) -> usize {
    if let Some(i) = t.headers.iter().position(|h| h.eq_ignore_ascii_case(name)) {
        return i;
    }
    let at = after.map_or(t.headers.len(), |a| (a + 1).min(t.headers.len()));
    t.headers.insert(at, name.to_string());
    t.numeric.insert(at, true);
    for row in &mut t.rows {
        row.insert(at.min(row.len()), Cell::from(String::new()));
    }
    at
}

fn cell(text: String, value: Option<f64>) -> Cell {
    Cell {
        text,
        mark: Mark::None,
        value: value.filter(|v| v.is_finite()),
    }
}

/// The leaderboard's table: the core's models table (what the exports carry, what the CLI
/// prints: Overall ± half the interval, SE, 95 % CI, rank range), with the SE, interval and
/// rank columns there even where no model has them ("—"). `pending`: the intervals are still
/// being computed (the bootstrap's, on large data): their cells say so ("…").
pub fn leaderboard_table(r: &ScoreReport, pending: bool) -> Table {
    let mut t = repoprobe_core::report::models_table(r);
    let se = column(&mut t, SE, None);
    let ci = column(&mut t, CI, Some(se));
    column(&mut t, RANK, None);
    let rows: BTreeMap<(&str, &str), &ModelScore> = r
        .models
        .iter()
        .map(|m| ((m.model.as_str(), m.judge.as_str()), m))
        .collect_map();
    for row in &mut t.rows {
        let key = (
            row.first().map_or("", |c| c.text.as_str()).to_string(),
            row.get(1).map_or("", |c| c.text.as_str()).to_string(),
        );
        let Some(m) = rows.get(&(key.0.as_str(), key.1.as_str())) else {
            continue;
        };
        // The columns added here: filled as the core fills its own.
        for (c, filled) in [
            (se, cell(repoprobe_core::report::pct(m.se), m.se)),
            (ci, repoprobe_core::report::interval(m.ci95)),
        ] {
            if row[c].text.is_empty() {
                row[c] = filled;
            }
        }
        if let Some(c) = t.headers.iter().position(|h| h.eq_ignore_ascii_case(RANK))
            && row[c].text.is_empty()
        {
            row[c] = cell(rank_text(m.rank), None);
        }
        if pending {
            row[ci] = cell("…".to_string(), None);
        }
    }
    if pending && let Some(n) = t.note.as_mut() {
        n.push_str("; 95% CI: being computed…");
    }
    t
}

/// The extras of the leaderboard's rows: each row's hovers on ±, rank and interval; the
/// models that share a rank range (no pair of them separated: `ModelScore::rank`) as one
/// group, shaded apart from the next group and saying so in the rank cell.
pub fn leaderboard_extras(r: &ScoreReport, t: &Table) -> RowExtras {
    let col = |name: &str| t.headers.iter().position(|h| h.eq_ignore_ascii_case(name));
    let (overall, rank, ci) = (col("Overall"), col(RANK), col(CI));
    // The models of each judge, and of each (judge, rank range).
    let mut per_judge: BTreeMap<&str, usize> = BTreeMap::new();
    let mut groups: BTreeMap<(&str, [usize; 2]), usize> = BTreeMap::new();
    for m in &r.models {
        *per_judge.entry(m.judge.as_str()).or_default() += 1;
        if let Some(k) = m.rank {
            *groups.entry((m.judge.as_str(), k)).or_default() += 1;
        }
    }
    // Groups numbered in the table's order, so that every other one is shaded.
    let mut order: Vec<(&str, [usize; 2])> = Vec::new();
    let mut rows = Vec::new();
    for row in &t.rows {
        let (model, judge) = (
            row.first().map_or("", |c| c.text.as_str()),
            row.get(1).map_or("", |c| c.text.as_str()),
        );
        let Some(m) = r
            .models
            .iter()
            .find(|m| m.model == model && m.judge == judge)
        else {
            continue;
        };
        let mut e = RowExtra::default();
        let interval = interval_title(r, m);
        for c in [overall, ci].into_iter().flatten() {
            e.titles.push((c, interval.clone()));
            e.described_by.push((c, METHOD_ID.to_string()));
        }
        e.half_width = overall.zip(half_width(m.ci95));
        if let Some(c) = rank {
            let n = per_judge.get(m.judge.as_str()).copied().unwrap_or(0);
            e.titles.push((c, rank_title(r, m, n)));
            e.described_by.push((c, METHOD_ID.to_string()));
        }
        if let Some(k) = m.rank {
            let size = groups.get(&(m.judge.as_str(), k)).copied().unwrap_or(0);
            if size > 1 {
                let g = order
                    .iter()
                    .position(|x| *x == (m.judge.as_str(), k))
                    .unwrap_or_else(|| {
                        order.push((m.judge.as_str(), k));
                        order.len() - 1
                    });
                e.group = Some(format!("{} · {}", m.judge, rank_text(Some(k))));
                e.shaded = g % 2 == 0;
                if let Some(c) = rank {
                    e.notes
                        .push((c, format!("one group of {size}: no pair separated")));
                }
            }
        }
        rows.push(((model.to_string(), judge.to_string()), e));
    }
    RowExtras { rows }
}

/// One figure of the paired comparison: its term, its text and its unrounded value
/// (`data-value`), and what it means.
fn figure(
    id: &'static str,
    term: &'static str,
    text: String,
    value: Option<f64>,
    what: String,
) -> impl IntoView + use<> {
    view! {
        <div>
            <dt>{term}</dt>
            <dd id=id data-value=value.filter(|v| v.is_finite()).map(|v| v.to_string())>
                {text}
                {(!what.is_empty()).then(|| view! { <span class="muted">{format!(" — {what}")}</span> })}
            </dd>
        </div>
    }
}

/// The paired comparison's figures (`report.paired`, docs/metrics.md#paired-comparison): the
/// mean difference with its clustered SE, interval and p-value, the correlation of the two
/// models' per-question scores and why pairing helps, and the smallest difference the
/// benchmark detects; `how`: how the interval was made.
pub fn paired_figures(p: &Paired, how: String) -> impl IntoView + use<> {
    let points = |x: Option<f64>, digits: usize| {
        x.filter(|v| v.is_finite())
            .map_or("—".to_string(), |v| format!("{v:.digits$} points"))
    };
    let diff = p
        .mean_diff
        .filter(|v| v.is_finite())
        .map_or("—".to_string(), |v| format!("{v:+.2} points"));
    let p_text = p
        .p_value
        .filter(|v| v.is_finite())
        .map_or("—".to_string(), |v| {
            if v < 0.001 {
                "< 0.001".to_string()
            } else {
                format!("{v:.3}")
            }
        });
    let r = p
        .correlation
        .filter(|v| v.is_finite())
        .map_or("—".to_string(), |v| format!("{v:.3}"));
    let ci = p.ci95.map(|[lo, hi]| (lo, hi));
    view! {
        <dl class="paired-figures" id="paired-figures">
            {figure(
                "paired-mean-diff",
                "Mean difference",
                diff,
                p.mean_diff,
                format!("{} − {}, judge {}, over {} question(s)", p.a, p.b, p.judge, p.questions),
            )}
            {figure(
                "paired-se",
                "Standard error",
                points(p.se, 2),
                p.se,
                format!("of the difference, over {} cluster(s)", p.clusters),
            )}
            <div>
                <dt>"95% interval"</dt>
                <dd id="paired-ci95">
                    {match ci {
                        Some((lo, hi)) => view! {
                            <span data-value=lo.to_string()>{format!("{lo:+.2}")}</span>
                            " to "
                            <span data-value=hi.to_string()>{format!("{hi:+.2}")}</span>
                            " points"
                        }
                        .into_any(),
                        None => "—".into_any(),
                    }}
                    <span class="muted">{format!(" — {how}")}</span>
                </dd>
            </div>
            {figure(
                "paired-p",
                "p-value",
                p_text,
                p.p_value,
                "of \"no difference\" (two-sided, normal approximation)".to_string(),
            )}
            {figure(
                "paired-correlation",
                "Correlation",
                r,
                p.correlation,
                "of the two models' per-question scores".to_string(),
            )}
            {figure(
                "paired-mde80",
                "Smallest detectable difference",
                points(p.mde80, 2),
                p.mde80,
                "the smallest true difference this benchmark detects 4 times in 5 (80% power at the 5% level)".to_string(),
            )}
            {p.a_better_pct.map(|v| figure(
                "paired-a-better",
                "A ahead in",
                format!("{v:.1}% of resamples"),
                Some(v),
                String::new(),
            ))}
        </dl>
        <p class="hint">
            "Why pairing helps: both models answer the same questions, and a question hard for one tends to be hard for the other (the correlation above). Comparing them question by question cancels what the questions share, so the difference is measured more precisely than two separate scores would allow."
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::score_options;
    use crate::protocol::ViewOptions;
    use crate::worker::testdata::golden;

    #[test]
    fn the_leaderboard_has_each_uncertainty_column_once_and_the_half_widths() {
        let l = golden();
        let o = score_options(&ViewOptions::default()).unwrap();
        let r = repoprobe_core::score(&l.dataset, &l.issues, &o).unwrap();
        let t = leaderboard_table(&r, false);
        for h in [RANK, SE, CI] {
            assert_eq!(
                t.headers
                    .iter()
                    .filter(|x| x.eq_ignore_ascii_case(h))
                    .count(),
                1,
                "{h} in {:?}",
                t.headers
            );
        }
        assert!(t.rows.iter().all(|row| row.len() == t.headers.len()));
        let extras = leaderboard_extras(&r, &t);
        assert_eq!(extras.rows.len(), t.rows.len());
        let overall = t.headers.iter().position(|h| h == "Overall").unwrap();
        for ((model, judge), e) in &extras.rows {
            let m = r
                .models
                .iter()
                .find(|m| &m.model == model && &m.judge == judge)
                .unwrap();
            assert_eq!(
                e.half_width,
                half_width(m.ci95).map(|h| (overall, h)),
                "{model}"
            );
        }
        // A table that has the columns already keeps them.
        let mut again = t.clone();
        column(&mut again, "se", None);
        assert_eq!(again, t);
        let ci = t.headers.iter().position(|h| h == CI).unwrap();
        let pending = leaderboard_table(&r, true);
        assert!(pending.rows.iter().all(|row| row[ci].text == "…"));
        // With no clusters to count, no interval: the columns are there, saying so.
        let none = repoprobe_core::ScoreReport {
            models: r
                .models
                .iter()
                .cloned()
                .map(|mut m| {
                    m.se = None;
                    m.ci95 = None;
                    m.rank = None;
                    m
                })
                .collect(),
            ..r.clone()
        };
        let t = leaderboard_table(&none, false);
        let ci = t.headers.iter().position(|h| h == CI).unwrap();
        assert!(t.rows.iter().all(|row| row[ci].text == "—"));
    }

    #[test]
    fn rank_ranges_and_half_widths_read_as_written() {
        assert_eq!(rank_text(Some([1, 2])), "1–2");
        assert_eq!(rank_text(Some([3, 3])), "3");
        assert_eq!(rank_text(None), "—");
        assert_eq!(half_width(Some([1.0, 4.0])), Some(1.5));
        assert_eq!(half_width(None), None);
    }
}
