//! `curate finalize`'s rules (docs/review.md#finalize): which candidates the human review keeps
//! ([`decide`]), and the release manifest written beside the benchmark ([`Manifest`]). Pure:
//! the CLI reads the files, hashes them and reads the clock.

use crate::agreement::Agreement;
use crate::funnel::Funnel;
use crate::record::Rule;
use repoprobe_core::model::{Review, ReviewCriteria, ReviewDecision, ReviewRole};
use repoprobe_core::text::quote;
use serde::{Deserialize, Serialize};

/// Who kept a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeptBy {
    /// An adjudicator accepted it (whatever the reviewers said).
    Adjudicator,
    /// No adjudicator; every reviewer accepted it with all four criteria passed.
    Reviewers,
}

/// What the review made of one candidate: kept, or dropped with a rule and why.
pub type Decision = Result<KeptBy, (Rule, String)>;

/// The review's verdict on candidate `id` from its reviews (of any role; others are ignored):
///
/// - with an adjudicator's record: kept when every adjudicator accepted it, `rejected` when one
///   rejected it (the reviewers' records are not read);
/// - else with reviewers' records: kept when every reviewer accepted it and passed all four
///   criteria, `rejected` when every reviewer rejected it, `unresolved` otherwise (they
///   disagree, or one accepted with a criterion failed: an adjudicator must decide);
/// - with no record: `unreviewed`.
pub fn decide(id: &str, reviews: &[&Review]) -> Decision {
    let reviews: Vec<&Review> = reviews
        .iter()
        .copied()
        .filter(|r| r.question_id == id)
        .collect();
    let of =
        |role| -> Vec<&Review> { reviews.iter().copied().filter(|r| r.role == role).collect() };
    let (adjudicators, reviewers) = (of(ReviewRole::Adjudicator), of(ReviewRole::Reviewer));
    if !adjudicators.is_empty() {
        let rejected: Vec<&Review> = adjudicators
            .iter()
            .copied()
            .filter(|r| r.decision == ReviewDecision::Reject)
            .collect();
        if rejected.is_empty() {
            return Ok(KeptBy::Adjudicator);
        }
        return Err((
            Rule::Rejected,
            format!(
                "{id}: rejected by the adjudicator: {}",
                rejected
                    .iter()
                    .map(|r| said(r))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    if reviewers.is_empty() {
        return Err((Rule::Unreviewed, format!("{id}: no review")));
    }
    let accepted = |r: &&Review| r.decision == ReviewDecision::Accept && r.criteria.all();
    if reviewers.iter().all(accepted) {
        return Ok(KeptBy::Reviewers);
    }
    let all = reviewers
        .iter()
        .map(|r| said(r))
        .collect::<Vec<_>>()
        .join("; ");
    if reviewers
        .iter()
        .all(|r| r.decision == ReviewDecision::Reject)
    {
        return Err((
            Rule::Rejected,
            format!("{id}: rejected by every reviewer: {all}"),
        ));
    }
    Err((
        Rule::Unresolved,
        format!("{id}: the reviewers disagree and no adjudicator decided: {all}"),
    ))
}

/// One review in a few words: who, the decision, the criteria failed, the note (quoted).
fn said(r: &Review) -> String {
    let failed: Vec<&str> = ReviewCriteria::NAMES
        .iter()
        .zip(r.criteria.values())
        .filter(|(_, v)| !v)
        .map(|(n, _)| *n)
        .collect();
    let mut s = format!("{} {}", quote(&r.reviewer), r.decision.as_str());
    if !failed.is_empty() {
        s.push_str(&format!(" (failed {})", failed.join(", ")));
    }
    if let Some(n) = r.note.as_deref().filter(|n| !n.trim().is_empty()) {
        s.push_str(&format!(": {}", quote(n)));
    }
    s
}

/// An input or output file of a release, and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileHash {
    /// What it is: `candidates`, `reviews`, `benchmark`, `excluded`, or the funnel flag it was
    /// given to (`repos`, `threads`, …; its excluded journal `repos.excluded`, …).
    pub role: String,
    /// The path relative to the manifest's directory (as given when it cannot be resolved).
    pub path: String,
    /// Lowercase hex.
    pub sha256: String,
}

/// The discussion creation dates of the kept questions (`curation.source.created_at`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedRange {
    /// The earliest and latest, as written; `None` when no kept question has a date.
    pub min: Option<String>,
    pub max: Option<String>,
    /// Kept questions without a readable creation date.
    pub undated: usize,
}

impl CreatedRange {
    /// The range of the dates given (`None`: a question without one).
    pub fn of<'a>(dates: impl IntoIterator<Item = Option<&'a str>>) -> CreatedRange {
        let mut r = CreatedRange::default();
        let mut min: Option<(i64, &str)> = None;
        let mut max: Option<(i64, &str)> = None;
        for d in dates {
            match d.and_then(|d| repoprobe_core::date::parse_utc(d).map(|t| (t, d))) {
                Some(t) => {
                    if min.is_none_or(|m| t.0 < m.0) {
                        min = Some(t);
                    }
                    if max.is_none_or(|m| t.0 > m.0) {
                        max = Some(t);
                    }
                }
                None => r.undated += 1,
            }
        }
        r.min = min.map(|m| m.1.to_string());
        r.max = max.map(|m| m.1.to_string());
        r
    }
}

/// The selection a release was made by, as given to `curate finalize`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// Free text (`--criteria`).
    pub criteria: Option<String>,
    /// The cut-off dates of the discussions (`--created-after`, `--created-before`), recorded.
    pub created_after: Option<String>,
    pub created_before: Option<String>,
    /// What the kept questions' dates are.
    pub created: CreatedRange,
    /// How `curate repos` counted the answered threads of a repository's categories
    /// (`together`, `each`; both, comma-separated, when its records differ), from the
    /// `--repos` file given; `None` without one.
    #[serde(default, skip_serializing_if = "repoprobe_core::skip::none")]
    pub answered_rule: Option<String>,
}

/// Candidates → reviewed → kept, and the rules of those dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewCount {
    pub candidates: usize,
    /// Candidates with at least one review record (of any role).
    pub reviewed: usize,
    pub kept: usize,
    /// Kept by an adjudicator's accept.
    pub kept_by_adjudicator: usize,
    pub rejected: usize,
    pub unresolved: usize,
    pub unreviewed: usize,
}

/// The release manifest (`<out>.manifest.json`, docs/review.md#the-release-manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `"repoprobe-release"` ([`MANIFEST_FORMAT`]).
    pub format: String,
    /// The release's name (`--version-name`).
    pub version: String,
    /// `YYYY-MM-DD` (`--date`, default the day it was made, UTC).
    pub date: String,
    pub selection: Selection,
    pub review: ReviewCount,
    /// The funnel of every stage given, the review's included (`curate report`'s).
    pub funnel: Funnel,
    /// `curate agreement`'s figures over the reviews.
    pub agreement: Agreement,
    /// Every input and output file with its SHA-256, inputs first.
    pub files: Vec<FileHash>,
}

/// The `format` of a release manifest.
pub const MANIFEST_FORMAT: &str = "repoprobe-release";

impl Manifest {
    /// A manifest as `curate finalize` wrote it, from its bytes: the site reads dropped ones.
    /// An error says where the JSON is wrong, or that it is another kind of file.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        #[derive(Deserialize)]
        struct Format {
            format: Option<String>,
        }
        let f: Format =
            serde_json::from_slice(bytes).map_err(|e| ManifestError::NotJson(e.to_string()))?;
        match f.format.as_deref() {
            Some(MANIFEST_FORMAT) => {}
            Some(other) => return Err(ManifestError::OtherFormat(other.to_string())),
            None => return Err(ManifestError::NoFormat),
        }
        serde_json::from_slice(bytes).map_err(|e| ManifestError::DoesNotRead(e.to_string()))
    }
}

/// Why a file is not a release manifest this tool reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("not a release manifest: {0}")]
    NotJson(String),
    #[error("not a release manifest: its format is {}, not \"{MANIFEST_FORMAT}\"", quote(.0))]
    OtherFormat(String),
    #[error("not a release manifest: it has no `format` (\"{MANIFEST_FORMAT}\")")]
    NoFormat,
    #[error("a release manifest that does not read: {0}")]
    DoesNotRead(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(who: &str, role: ReviewRole, accept: bool, criteria: [bool; 4]) -> Review {
        Review {
            question_id: "q".into(),
            reviewer: who.into(),
            role,
            criteria: ReviewCriteria {
                qa_consistency: criteria[0],
                checklist_quality: criteria[1],
                task_validity: criteria[2],
                code_relevance: criteria[3],
            },
            decision: if accept {
                ReviewDecision::Accept
            } else {
                ReviewDecision::Reject
            },
            note: Some("why".into()),
            reviewed_at: "2026-03-01T12:00:00Z".into(),
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written_and_another_file_is_named_as_such() {
        let m = Manifest {
            format: MANIFEST_FORMAT.to_string(),
            version: "v1".into(),
            date: "2026-03-15".into(),
            selection: Selection {
                criteria: Some("<b>2024+</b>".into()),
                ..Selection::default()
            },
            review: ReviewCount {
                candidates: 3,
                kept: 1,
                ..ReviewCount::default()
            },
            funnel: Funnel {
                threads_harvested: 9,
                after: vec![crate::funnel::StageCount {
                    stage: "kept".into(),
                    kept: 1,
                }],
                ..Funnel::default()
            },
            agreement: Agreement::default(),
            files: vec![FileHash {
                role: "benchmark".into(),
                path: "b.jsonl".into(),
                sha256: "00".into(),
            }],
        };
        let text = serde_json::to_vec(&m).unwrap();
        assert_eq!(Manifest::parse(&text), Ok(m.clone()));
        assert_eq!(
            m.funnel.steps(),
            [("harvested".to_string(), 9), ("kept".to_string(), 1)]
        );
        let run =
            Manifest::parse(br#"{"format": "repoprobe-run", "stage": "answer"}"#).unwrap_err();
        assert_eq!(run, ManifestError::OtherFormat("repoprobe-run".into()));
        assert!(run.to_string().contains("\"repoprobe-run\""), "{run}");
        assert_eq!(Manifest::parse(b"{}"), Err(ManifestError::NoFormat));
        let cut = Manifest::parse(b"{\"format\": ").unwrap_err();
        assert!(
            matches!(&cut, ManifestError::NotJson(_)) && cut.to_string().contains("line 1"),
            "{cut}"
        );
        let bad = Manifest::parse(br#"{"format": "repoprobe-release", "version": 1}"#).unwrap_err();
        assert!(matches!(bad, ManifestError::DoesNotRead(_)), "{bad}");
    }

    const OK: [bool; 4] = [true; 4];
    const BAD: [bool; 4] = [true, false, true, true];

    #[test]
    fn the_review_keeps_what_everyone_accepted_and_the_adjudicator_decides_the_rest() {
        use ReviewRole::{Adjudicator as Adj, Reviewer as Rev};
        let d = |rs: Vec<Review>| decide("q", &rs.iter().collect::<Vec<_>>());
        let rule = |d: Decision| d.expect_err("dropped").0;
        assert_eq!(rule(d(vec![])), Rule::Unreviewed);
        assert_eq!(
            d(vec![review("a", Rev, true, OK), review("b", Rev, true, OK)]),
            Ok(KeptBy::Reviewers)
        );
        // Accepted with a criterion failed is no clean accept.
        assert_eq!(
            rule(d(vec![
                review("a", Rev, true, OK),
                review("b", Rev, true, BAD)
            ])),
            Rule::Unresolved
        );
        assert_eq!(
            rule(d(vec![
                review("a", Rev, true, OK),
                review("b", Rev, false, OK)
            ])),
            Rule::Unresolved
        );
        assert_eq!(
            rule(d(vec![
                review("a", Rev, false, BAD),
                review("b", Rev, false, OK)
            ])),
            Rule::Rejected
        );
        assert_eq!(
            d(vec![
                review("a", Rev, false, OK),
                review("c", Adj, true, BAD)
            ]),
            Ok(KeptBy::Adjudicator)
        );
        let (r, why) = d(vec![
            review("a", Rev, true, OK),
            review("c", Adj, false, OK),
        ])
        .expect_err("the adjudicator rejected it");
        assert_eq!(r, Rule::Rejected);
        assert_eq!(why, "q: rejected by the adjudicator: \"c\" reject: \"why\"");
        let (_, why) = d(vec![
            review("a", Rev, true, BAD),
            review("b", Rev, false, OK),
        ])
        .expect_err("unresolved");
        assert_eq!(
            why,
            "q: the reviewers disagree and no adjudicator decided: \"a\" accept (failed checklist_quality): \"why\"; \"b\" reject: \"why\""
        );
    }

    #[test]
    fn the_created_range_is_read_as_instants_and_undated_ones_counted() {
        let r = CreatedRange::of([
            Some("2024-05-01T10:00:00Z"),
            None,
            Some("2024-01-31T00:00:00Z"),
            Some("not a date"),
            Some("2025-01-01T00:00:00Z"),
        ]);
        assert_eq!(r.min.as_deref(), Some("2024-01-31T00:00:00Z"));
        assert_eq!(r.max.as_deref(), Some("2025-01-01T00:00:00Z"));
        assert_eq!(r.undated, 2);
    }
}
