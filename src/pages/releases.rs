//! The release manifests loaded (`curate finalize`, docs/review.md#the-release-manifest), in
//! the Data view: what a benchmark release was made by — its funnel as a chart and a table
//! (the paper's 5,233 → 2,613 → 1,107 → 500), the selection criteria and cut-off dates, the
//! review's counts and agreement, and the SHA-256 of every file. Everything in a manifest is
//! shown as text.

use crate::charts::{ChartData, thousands};
use crate::components::chart::Chart;
use crate::components::report_table::ReportTable;
use crate::protocol::Release;
use leptos::prelude::*;
use repoprobe_curate::finalize::Manifest;

/// The review's counts in one sentence.
pub fn review_sentence(m: &Manifest) -> String {
    let r = &m.review;
    format!(
        "{} candidates, {} reviewed, {} kept ({} by an adjudicator); {} rejected, {} unresolved, {} unreviewed",
        thousands(r.candidates as u64),
        thousands(r.reviewed as u64),
        thousands(r.kept as u64),
        r.kept_by_adjudicator,
        r.rejected,
        r.unresolved,
        r.unreviewed
    )
}

/// The selection, as (term, description) pairs: what a reader checks a release against.
pub fn selection_terms(m: &Manifest) -> Vec<(&'static str, String)> {
    let s = &m.selection;
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "not given".to_string());
    let created = match (&s.created.min, &s.created.max) {
        (Some(a), Some(b)) => format!("{a} to {b}"),
        _ => "no kept question has a creation date".to_string(),
    };
    vec![
        ("Criteria", or_none(&s.criteria)),
        ("Created after (cut-off)", or_none(&s.created_after)),
        ("Created before (cut-off)", or_none(&s.created_before)),
        (
            "Kept questions created",
            format!("{created}; {} without a date", s.created.undated),
        ),
        ("Review", review_sentence(m)),
        (
            "Answered threads a repository needs",
            match s.answered_rule.as_deref() {
                Some("together") => "counted across its named categories together".to_string(),
                Some("each") => "counted in each category on its own".to_string(),
                Some(other) => format!("counted as {other}"),
                None => "not recorded".to_string(),
            },
        ),
    ]
}

fn release_view(i: usize, r: &Release) -> impl IntoView + use<> {
    let m = &r.manifest;
    let steps = m.funnel.steps();
    let height = 70 + 44 * steps.len() as u32;
    let terms = selection_terms(m)
        .into_iter()
        .map(|(t, d)| view! { <dt>{t}</dt><dd>{d}</dd> })
        .collect_view();
    let agreement = (m.agreement.items > 0).then(|| {
        view! { <ReportTable table=repoprobe_curate::agreement_table(&m.agreement) id=format!("release-{i}-agreement") /> }
    });
    let files = m
        .files
        .iter()
        .map(|f| {
            view! {
                <tr>
                    <td>{f.role.clone()}</td>
                    <th scope="row">{f.path.clone()}</th>
                    <td class="hash">{f.sha256.clone()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="release" aria-labelledby=format!("release-{i}")>
            <h3 id=format!("release-{i}")>{format!("Release {} of {}", m.version, m.date)}</h3>
            <p class="hint">{format!("From {}.", r.file)}</p>
            <dl class="release-selection">{terms}</dl>
            <Chart
                id=format!("release-{i}-funnel")
                title=format!("Funnel of release {}", m.version)
                width=720
                height=height
                data=ChartData::Funnel(steps)
            />
            <ReportTable table=repoprobe_curate::funnel_table(&m.funnel) id=format!("release-{i}-funnel-table") />
            {agreement}
            <div class="table-scroll">
                <table class="release-files">
                    <caption>"Files of the release and their SHA-256"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Role"</th>
                            <th scope="col">"Path"</th>
                            <th scope="col">"SHA-256"</th>
                        </tr>
                    </thead>
                    <tbody>{files}</tbody>
                </table>
            </div>
        </section>
    }
}

/// The releases held, each in its section; nothing when none is.
pub fn releases(list: &[Release]) -> impl IntoView + use<> {
    (!list.is_empty()).then(|| {
        view! {
            <h2 id="releases">"Releases"</h2>
            {list.iter().enumerate().map(|(i, r)| release_view(i, r)).collect_view()}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_curate::finalize::{CreatedRange, ReviewCount, Selection};

    #[test]
    fn the_selection_says_every_cut_off_and_the_reviews_counts() {
        let m = Manifest {
            format: "repoprobe-release".into(),
            version: "v1".into(),
            date: "2026-03-15".into(),
            selection: Selection {
                criteria: Some("≥ 1,000 stars".into()),
                created_after: Some("2024-01-01".into()),
                created_before: None,
                created: CreatedRange {
                    min: Some("2024-01-15T10:00:00Z".into()),
                    max: Some("2024-05-15T10:00:00Z".into()),
                    undated: 0,
                },
                answered_rule: Some("together".into()),
            },
            review: ReviewCount {
                candidates: 1107,
                reviewed: 1107,
                kept: 500,
                kept_by_adjudicator: 12,
                rejected: 600,
                unresolved: 7,
                unreviewed: 0,
            },
            funnel: Default::default(),
            agreement: Default::default(),
            files: Vec::new(),
        };
        let terms = selection_terms(&m);
        assert_eq!(terms[0].1, "≥ 1,000 stars");
        assert_eq!(terms[1].1, "2024-01-01");
        assert_eq!(terms[2].1, "not given");
        assert_eq!(
            terms[3].1,
            "2024-01-15T10:00:00Z to 2024-05-15T10:00:00Z; 0 without a date"
        );
        assert_eq!(
            terms[4].1,
            "1,107 candidates, 1,107 reviewed, 500 kept (12 by an adjudicator); 600 rejected, 7 unresolved, 0 unreviewed"
        );
        assert_eq!(terms[5].1, "counted across its named categories together");
    }
}
