//! `repoprobe judge-agreement`' report as tables and CSV (docs/metrics.md#agreement-between-judges): per
//! pair the figures overall (with their 95 % intervals, unless the sample is too small to say),
//! per item kind and per model, and the items they disagree on most. The site's agreement view
//! shows the same tables.

use super::render::csv_field;
use super::tables::{Cell, Mark, Table, num, pct, three};
use crate::metrics::agreement::PairFigures;
use crate::metrics::cluster::Cluster;
use crate::metrics::judges::{JudgePair, JudgesReport, MIN_UNITS};
use std::fmt::Write as _;

/// The scopes of a pair in order: all units, each item kind, each model.
pub fn scopes(p: &JudgePair) -> Vec<(String, &PairFigures)> {
    std::iter::once(("all".to_string(), &p.overall))
        .chain(p.by_kind.iter().map(|(k, f)| (format!("kind {k}"), f)))
        .chain(p.by_model.iter().map(|(m, f)| (format!("model {m}"), f)))
        .collect()
}

/// The bias sentence of a pair: `Overall A − B +1.5 pp [−0.3, +3.1] over 12 answer(s) both
/// judged`; the interval only when the sample is not too small to say.
pub fn bias_sentence(p: &JudgePair) -> String {
    let signed = |v: f64| {
        if v > 0.0 {
            format!("+{v:.1}")
        } else {
            pct(Some(v))
        }
    };
    match p.bias_pp {
        None => "no answer judged by both".to_string(),
        Some(b) => format!(
            "Overall A − B {} pp{} over {} answer(s) both judged",
            signed(b),
            p.bias_ci95
                .filter(|_| !p.too_small)
                .map(|[lo, hi]| format!(" [{}, {}]", signed(lo), signed(hi)))
                .unwrap_or_default(),
            p.answers
        ),
    }
}

/// What clusters `cluster` makes of the answers, in words (plural).
fn clusters_noun(cluster: Cluster) -> &'static str {
    match cluster {
        Cluster::Repo => "repositories",
        Cluster::Question => "questions",
        Cluster::None => "answers",
    }
}

/// What a pair's intervals are, or why it shows none: too few units (fewer than
/// [`MIN_UNITS`]), no bootstrap, or fewer than two clusters. `cluster` and `bootstrap` are the
/// report's.
pub fn intervals_sentence(p: &JudgePair, cluster: Cluster, bootstrap: u32) -> String {
    let noun = clusters_noun(cluster);
    if p.too_small {
        format!(
            "the sample is too small to say: {} unit(s), fewer than {MIN_UNITS}, so no interval is shown",
            p.overall.items
        )
    } else if bootstrap == 0 {
        "no interval (no bootstrap)".to_string()
    } else if p.clusters < 2 {
        format!(
            "no interval: a bootstrap of whole {noun} needs two with an answer both judged, and \
             there {} {}",
            if p.clusters == 1 { "is" } else { "are" },
            p.clusters
        )
    } else {
        format!(
            "95 % intervals (κ, α and F1 in parentheses, the bias in brackets): percentile \
             bootstrap, {bootstrap} resamples of the {} {noun} with an answer both judged, each \
             drawn whole",
            p.clusters
        )
    }
}

/// An overall figure with its 95 % interval when one is shown: `0.620 (0.480–0.740)`.
fn with_interval(x: Option<f64>, ci: Option<[f64; 2]>, shown: bool) -> Cell {
    let mut cell = three(x);
    if let (true, Some(_), Some([lo, hi])) = (shown, x, ci) {
        cell.text = format!("{} ({lo:.3}–{hi:.3})", cell.text);
    }
    cell
}

/// One table per pair: a row per scope, the intervals in the overall row (`cluster` and
/// `bootstrap`: the report's).
pub fn pair_table(p: &JudgePair, cluster: Cluster, bootstrap: u32) -> Table {
    let shown = !p.too_small;
    let rows = scopes(p)
        .into_iter()
        .enumerate()
        .map(|(n, (scope, f))| {
            // The first scope is every unit: the figures the intervals are of.
            let ci = |c: Option<[f64; 2]>| c.filter(|_| n == 0);
            vec![
                Cell::from(scope),
                Cell {
                    text: f.items.to_string(),
                    mark: Mark::None,
                    value: Some(f.items as f64),
                },
                num(f.exact.map(|e| 100.0 * e)),
                with_interval(f.kappa, ci(p.kappa_ci95), shown),
                with_interval(f.alpha_interval, ci(p.alpha_interval_ci95), shown),
                with_interval(f.f1_full_credit, ci(p.f1_full_credit_ci95), shown),
            ]
        })
        .collect();
    Table {
        title: format!("Judge A {} vs judge B {}", p.a, p.b),
        headers: [
            "units",
            "items",
            "exact %",
            "Cohen's κ",
            "α interval",
            "F1 full credit",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true],
        rows,
        note: Some(format!(
            "{}; {}; {} item(s) scored differently. Units: items of answers both judged in judge \
             run 0; values: attainment (score ÷ weight); F1 with B as the reference",
            bias_sentence(p),
            intervals_sentence(p, cluster, bootstrap),
            p.disagreements.len()
        )),
    }
}

/// The first `max` disagreements of a pair, each rationale passed through `cut`; the note says
/// how many more there are and `rest`, where they can be read.
pub fn disagreements_table(
    p: &JudgePair,
    max: usize,
    cut: &dyn Fn(&str) -> String,
    rest: &str,
) -> Table {
    let rows = p
        .disagreements
        .iter()
        .take(max)
        .map(|d| {
            vec![
                Cell::from(d.question_id.as_str()),
                Cell::from(format!("{} #{}", d.model, d.attempt)),
                Cell::from(d.item_id.as_str()),
                Cell::from(format!("{}/{}", d.score_a, d.weight)),
                Cell::from(format!("{}/{}", d.score_b, d.weight)),
                Cell::from(cut(&d.rationale_a)),
                Cell::from(cut(&d.rationale_b)),
            ]
        })
        .collect();
    Table {
        title: format!("Where {} and {} differ most", p.a, p.b),
        headers: [
            "question",
            "model",
            "item",
            "A",
            "B",
            "A's rationale",
            "B's rationale",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, false, false, true, true, false, false],
        rows,
        note: (p.disagreements.len() > max)
            .then(|| format!("{} more; {rest}", p.disagreements.len() - max)),
    }
}

/// Every pair's table, then its disagreements (when any).
pub fn judges_tables(r: &JudgesReport, max: usize, cut: &dyn Fn(&str) -> String) -> Vec<Table> {
    let mut out = Vec::new();
    for p in &r.pairs {
        out.push(pair_table(p, r.cluster, r.bootstrap));
        if !p.disagreements.is_empty() && max > 0 {
            out.push(disagreements_table(
                p,
                max,
                cut,
                "--format json lists every one",
            ));
        }
    }
    out
}

/// CSV with unrounded values: a row per pair and scope.
pub fn judges_csv(r: &JudgesReport) -> String {
    let n = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let mut out = String::from(
        "a,b,scope,items,exact,kappa,alpha_interval,f1_full_credit,answers,bias_pp,bias_ci95_lo,bias_ci95_hi,\
         kappa_ci95_lo,kappa_ci95_hi,alpha_interval_ci95_lo,alpha_interval_ci95_hi,\
         f1_full_credit_ci95_lo,f1_full_credit_ci95_hi,clusters,too_small\n",
    );
    for p in &r.pairs {
        for (i, (scope, f)) in scopes(p).into_iter().enumerate() {
            // The intervals are of the overall figures: on the first scope's row alone.
            let ci = |c: Option<[f64; 2]>| {
                let c = c.filter(|_| i == 0);
                format!("{},{}", n(c.map(|c| c[0])), n(c.map(|c| c[1])))
            };
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&p.a),
                csv_field(&p.b),
                csv_field(&scope),
                f.items,
                n(f.exact),
                n(f.kappa),
                n(f.alpha_interval),
                n(f.f1_full_credit),
                p.answers,
                n(p.bias_pp),
                n(p.bias_ci95.map(|c| c[0])),
                n(p.bias_ci95.map(|c| c[1])),
                ci(p.kappa_ci95),
                ci(p.alpha_interval_ci95),
                ci(p.f1_full_credit_ci95),
                p.clusters,
                p.too_small,
            );
        }
    }
    out
}

/// `score --panel`'s table: the panel's counts, and each member against the panel.
pub fn panel_table(p: &crate::metrics::panel::PanelReport) -> Table {
    let rows = p
        .agreement
        .iter()
        .map(|m| {
            vec![
                Cell::from(m.a.as_str()),
                Cell {
                    text: m.overall.items.to_string(),
                    mark: Mark::None,
                    value: Some(m.overall.items as f64),
                },
                num(m.overall.exact.map(|e| 100.0 * e)),
                three(m.overall.kappa),
                three(m.overall.alpha_interval),
                three(m.overall.f1_full_credit),
                num(m.bias_pp),
            ]
        })
        .collect();
    Table {
        title: format!(
            "Panel {}: {} judgment(s), the {} of its members' scores",
            p.judge,
            p.judgments,
            p.rule.as_str()
        ),
        headers: [
            "member",
            "items",
            "exact %",
            "Cohen's κ",
            "α interval",
            "F1 full credit",
            "bias pp",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, true, true, true],
        rows,
        note: Some(format!(
            "each member as A, the panel as B; {} answer(s) judged by fewer than a quorum (more \
             than half the members) have no panel judgment",
            p.short_of_quorum
        )),
    }
}
