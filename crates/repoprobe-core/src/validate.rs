//! The rules of docs/format.md#question and docs/format.md#loading-rules for single records, each violation its own message.
//! Functions here are pure: a record (and its question) in, a list of reasons out.

use crate::issue::{IssueKind, Problem};
use crate::model::repo_path;
use crate::model::*;
use crate::text::quote;
use std::collections::BTreeSet;

/// Every checklist rule a question breaks (docs/format.md#question; paper §3.2 and §4.1).
pub fn question(q: &Question) -> Vec<Problem> {
    let mut errs = Vec::new();
    if q.id.trim().is_empty() {
        errs.push(Problem::new(IssueKind::InvalidQuestion, "`id` is empty"));
    }
    if !CATEGORIES.contains(&q.category.as_str()) {
        errs.push(Problem::new(
            IssueKind::InvalidQuestion,
            format!(
                "`category` is {}: it must be one of \"Project Architecture\", \"Business Logic\", \"Implementation Details\"",
                quote(&q.category)
            ),
        ));
    }
    if q.repo.name.trim().is_empty() {
        errs.push(Problem::new(
            IssueKind::InvalidQuestion,
            "`repo.name` is empty",
        ));
    }
    let mut checklist = Vec::new();
    checklist_shape(q, &mut checklist);
    let mut ids = BTreeSet::new();
    for (n, item) in q.checklist.iter().enumerate() {
        let name = format!("checklist[{n}] ({})", quote(&item.id));
        if item.id.trim().is_empty() {
            checklist.push(format!("checklist[{n}] has an empty `id`"));
        } else if !ids.insert(item.id.as_str()) {
            checklist.push(format!("{name}: item id used twice in this question"));
        }
        if item.kind == ItemKind::Knowledge && item.weight == 0 {
            checklist.push(format!(
                "{name}: weight is 0: a knowledge item weighs at least 1"
            ));
        }
        rubric(item, &name, &mut checklist);
    }
    let checklist = checklist
        .into_iter()
        .map(|m| Problem::new(IssueKind::InvalidChecklist, m));
    errs.extend(checklist);
    errs
}

/// The checklist's shape (paper §3.2): 1 to 4 knowledge items weighing 9 in all, and one
/// clarity item of weight 1 scored 0 or 1.
fn checklist_shape(q: &Question, errs: &mut Vec<String>) {
    let knowledge: Vec<&ChecklistItem> = q
        .checklist
        .iter()
        .filter(|i| i.kind == ItemKind::Knowledge)
        .collect();
    let clarity: Vec<&ChecklistItem> = q
        .checklist
        .iter()
        .filter(|i| i.kind == ItemKind::Clarity)
        .collect();
    if knowledge.is_empty() || knowledge.len() > 4 {
        errs.push(format!(
            "the checklist has {} knowledge items: it must have 1 to 4",
            knowledge.len()
        ));
    }
    let kn_sum: u64 = knowledge.iter().map(|i| u64::from(i.weight)).sum();
    if kn_sum != u64::from(KNOWLEDGE_WEIGHT) {
        errs.push(format!(
            "the knowledge weights sum to {kn_sum}: they must sum to {KNOWLEDGE_WEIGHT}"
        ));
    }
    if clarity.len() != 1 {
        errs.push(format!(
            "the checklist has {} clarity items: it must have exactly one",
            clarity.len()
        ));
    }
    for c in &clarity {
        if c.weight != 1 {
            errs.push(format!(
                "clarity item {} has weight {}: it must be 1",
                quote(&c.id),
                c.weight
            ));
        }
        if c.allowed_scores() != [0, 1] {
            errs.push(format!(
                "clarity item {} allows scores {:?}: it must allow exactly 0 and 1",
                quote(&c.id),
                c.allowed_scores()
            ));
        }
    }
}

/// An item's rubric (`name` says which item): not empty, each score once, from 0 to the
/// item's weight, both ends present.
fn rubric(item: &ChecklistItem, name: &str, errs: &mut Vec<String>) {
    if item.rubric.is_empty() {
        errs.push(format!("{name}: the rubric is empty"));
        return;
    }
    let mut seen = BTreeSet::new();
    for tier in &item.rubric {
        if !seen.insert(tier.score) {
            errs.push(format!(
                "{name}: rubric score {} is listed twice",
                tier.score
            ));
        }
        if tier.score > item.weight {
            errs.push(format!(
                "{name}: rubric score {} exceeds the weight {}",
                tier.score, item.weight
            ));
        }
    }
    if !seen.contains(&0) {
        errs.push(format!("{name}: the rubric has no score 0"));
    }
    if !seen.contains(&item.weight) {
        errs.push(format!(
            "{name}: the rubric has no full score {} (= the weight)",
            item.weight
        ));
    }
}

/// The evidence entries of `q` that cannot be used (docs/format.md#question): each is dropped
/// from `q` and returned with where it was (a path inside the record, `checklist[0].evidence[2]`)
/// and why; every entry kept has its path normalised ([`repo_path::normalise`]). Unlike the
/// checklist rules these never cost the question: evidence is an optional aid to the retrieval
/// metrics, and a bad entry only means one path fewer to compare.
pub fn evidence(q: &mut Question) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let qid = quote(&q.id);
    for (n, item) in q.checklist.iter_mut().enumerate() {
        if item.evidence.is_empty() {
            continue;
        }
        let name = format!("question {qid}, item {}", quote(&item.id));
        if item.kind == ItemKind::Clarity {
            out.push((
                format!("checklist[{n}].evidence"),
                format!(
                    "{name}: a clarity item has no evidence (clarity is not read from the \
                     repository): its {} entry(ies) are ignored",
                    item.evidence.len()
                ),
            ));
            item.evidence.clear();
            continue;
        }
        let mut kept = Vec::with_capacity(item.evidence.len());
        for (e, mut entry) in std::mem::take(&mut item.evidence).into_iter().enumerate() {
            let at = format!("checklist[{n}].evidence[{e}]");
            let problem = match (&entry.unreadable, entry.lines) {
                (Some(why), _) => Some(format!("evidence entry {why}")),
                (None, Some([start, end])) if start == 0 || start > end => Some(format!(
                    "evidence entry {}: lines [{start}, {end}] are no range of lines \
                     (they count from 1, the start at most the end)",
                    quote(&entry.path)
                )),
                (None, _) => match repo_path::normalise(&entry.path) {
                    Ok(path) => {
                        entry.path = path;
                        None
                    }
                    Err(p) => Some(format!("evidence path {} {p}", quote(&entry.path))),
                },
            };
            match problem {
                Some(p) => out.push((at, format!("{name}: {p}: the entry is ignored"))),
                None => kept.push(entry),
            }
        }
        item.evidence = kept;
    }
    out
}

/// Every way a judgment fails to match its question's checklist (docs/format.md#checklist-judgment, docs/format.md#loading-rules).
pub fn judgment_items(j: &Judgment, q: &Question) -> Vec<Problem> {
    // Nearly every judgment scores each item of the checklist once, in its order (item ids are
    // unique in a valid question): nothing to look up, nothing to allocate.
    if j.items.len() == q.checklist.len()
        && j.items
            .iter()
            .zip(&q.checklist)
            .all(|(it, c)| it.id == c.id && c.allows(it.score))
    {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (n, it) in j.items.iter().enumerate() {
        match q.checklist.iter().find(|c| c.id == it.id) {
            None => errs.push(Problem::new(
                IssueKind::ItemNotInChecklist,
                format!(
                    "items[{n}]: item {} is not in the checklist of question {}",
                    quote(&it.id),
                    quote(&q.id)
                ),
            )),
            Some(c) => {
                if !seen.insert(it.id.as_str()) {
                    errs.push(Problem::new(
                        IssueKind::ItemScoredTwice,
                        format!("items[{n}]: item {} is scored twice", quote(&it.id)),
                    ));
                } else if !c.allows(it.score) {
                    errs.push(Problem::new(
                        IssueKind::ScoreNotAllowed,
                        format!(
                            "items[{n}]: score {} for item {} is not allowed: the rubric allows {:?}",
                            it.score,
                            quote(&it.id),
                            c.allowed_scores()
                        ),
                    ));
                }
            }
        }
    }
    let missing: Vec<String> = q
        .checklist
        .iter()
        .filter(|c| !seen.contains(c.id.as_str()))
        .map(|c| quote(&c.id))
        .collect();
    if !missing.is_empty() {
        errs.push(Problem::new(
            IssueKind::MissingItem,
            format!("missing item(s) {}", missing.join(", ")),
        ));
    }
    errs
}

/// The rules for a scalar judgment (docs/format.md#scalar-judgment).
pub fn scalar(s: &ScalarJudgment) -> Vec<Problem> {
    let mut errs = Vec::new();
    if s.max_per_dimension == 0 {
        errs.push(Problem::new(
            IssueKind::ScoreOutOfRange,
            "`max_per_dimension` is 0: it must be at least 1",
        ));
    }
    if s.dimensions.is_empty() {
        errs.push(Problem::new(
            IssueKind::ValueNotAllowed,
            "`dimensions` is empty",
        ));
    }
    for (name, &v) in &s.dimensions {
        if v > s.max_per_dimension {
            errs.push(Problem::new(
                IssueKind::ScoreOutOfRange,
                format!(
                    "dimension {} scores {v}, above `max_per_dimension` {}",
                    quote(name),
                    s.max_per_dimension
                ),
            ));
        }
    }
    errs
}

/// Every rule of docs/format.md#review a review breaks (its fields' types and the allowed
/// values of `role` and `decision` are the parse's).
pub fn review(r: &Review) -> Vec<Problem> {
    let mut errs = Vec::new();
    if r.question_id.trim().is_empty() {
        errs.push("`question_id` is empty".to_string());
    }
    if r.reviewer.trim().is_empty() {
        errs.push("`reviewer` is empty".to_string());
    }
    if !rfc3339(&r.reviewed_at) {
        errs.push(format!(
            "`reviewed_at` is {}: it must be an RFC 3339 date and time with a time zone \
             (2026-03-01T12:00:00Z)",
            quote(&r.reviewed_at)
        ));
    }
    errs.into_iter()
        .map(|m| Problem::new(IssueKind::InvalidReview, m))
        .collect()
}

/// `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds, then `Z` or `±HH:MM` (RFC 3339's
/// `date-time`; a real calendar day, a time of day).
pub fn rfc3339(s: &str) -> bool {
    let (rest, zone_ok) = if let Some(r) = s.strip_suffix(['Z', 'z']) {
        (r, true)
    } else if s.len() > 6 && s.is_char_boundary(s.len() - 6) {
        let (r, zone) = s.split_at(s.len() - 6);
        let b = zone.as_bytes();
        let ok = matches!(b[0], b'+' | b'-')
            && b[1..3].iter().all(u8::is_ascii_digit)
            && b[3] == b':'
            && b[4..6].iter().all(u8::is_ascii_digit)
            && zone[1..3].parse::<u8>().is_ok_and(|h| h < 24)
            && zone[4..6].parse::<u8>().is_ok_and(|m| m < 60);
        (r, ok)
    } else {
        (s, false)
    };
    zone_ok
        && rest.len() >= 19
        && matches!(rest.as_bytes()[10], b'T' | b't')
        && crate::date::parse_utc(rest).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(problems: &[Problem]) -> String {
        let m: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        m.join("\n")
    }

    #[test]
    fn rfc3339_wants_a_date_a_time_and_a_zone() {
        for ok in [
            "2026-03-01T12:00:00Z",
            "2026-03-01t12:00:00.123z",
            "2024-02-29T23:59:60+05:30",
            "2026-03-01T12:00:00-08:00",
        ] {
            assert!(rfc3339(ok), "{ok}");
        }
        for bad in [
            "",
            "2026-03-01",
            "2026-03-01T12:00:00",
            "2026-03-01 12:00:00Z",
            "2026-02-30T12:00:00Z",
            "2026-03-01T25:00:00Z",
            "2026-03-01T12:00:00+5:30",
            "2026-03-01T12:00:00+24:00",
            "yesterday",
            "2026-03-01T12:00:00Zé",
        ] {
            assert!(!rfc3339(bad), "{bad}");
        }
    }

    fn item(id: &str, kind: ItemKind, weight: u32, scores: &[u32]) -> ChecklistItem {
        ChecklistItem {
            id: id.into(),
            kind,
            key_point: "k".into(),
            weight,
            rubric: scores
                .iter()
                .map(|&s| RubricTier {
                    score: s,
                    criterion: String::new(),
                })
                .collect(),
            evidence: Vec::new(),
        }
    }

    pub(crate) fn good_question() -> Question {
        Question {
            id: "q1".into(),
            repo: Repo {
                name: "o/r".into(),
                url: String::new(),
                commit: String::new(),
                language: "Rust".into(),
                theme: "Developer SDK".into(),
            },
            category: "Business Logic".into(),
            question: "?".into(),
            reference_answer: "!".into(),
            external_context: false,
            curation: None,
            checklist: vec![
                item("k1", ItemKind::Knowledge, 5, &[5, 3, 0]),
                item("k2", ItemKind::Knowledge, 4, &[4, 2, 0]),
                item("clarity", ItemKind::Clarity, 1, &[1, 0]),
            ],
        }
    }

    #[test]
    fn evidence_is_normalised_and_bad_entries_are_dropped_with_where_and_why() {
        let mut q = good_question();
        let e = |p: &str| EvidencePath::new(p);
        q.checklist[0].evidence = vec![
            e("./src//lib.rs"),
            e("/etc/passwd"),
            e("src/../../x"),
            EvidencePath {
                lines: Some([5, 2]),
                ..e("a.rs")
            },
            EvidencePath {
                lines: Some([0, 2]),
                ..e("a.rs")
            },
            EvidencePath {
                lines: Some([2, 2]),
                ..e("b.rs")
            },
            EvidencePath {
                unreadable: Some("is a number: …".into()),
                ..EvidencePath::default()
            },
        ];
        q.checklist[2].evidence = vec![e("README.md")];
        let found = evidence(&mut q);
        let at: Vec<&str> = found.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(
            at,
            [
                "checklist[0].evidence[1]",
                "checklist[0].evidence[2]",
                "checklist[0].evidence[3]",
                "checklist[0].evidence[4]",
                "checklist[0].evidence[6]",
                "checklist[2].evidence",
            ]
        );
        let joined: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        assert!(
            joined[0].starts_with(
                "question \"q1\", item \"k1\": evidence path \"/etc/passwd\" is absolute"
            ),
            "{}",
            joined[0]
        );
        assert!(joined[1].contains("`..` part"), "{}", joined[1]);
        assert!(joined[2].contains("lines [5, 2]"), "{}", joined[2]);
        assert!(joined[4].contains("is a number"), "{}", joined[4]);
        assert!(
            joined[5].contains("clarity item has no evidence"),
            "{}",
            joined[5]
        );
        assert!(found.iter().all(|(_, m)| m.contains("ignored")));
        let kept: Vec<&str> = q.checklist[0]
            .evidence
            .iter()
            .map(|x| x.path.as_str())
            .collect();
        assert_eq!(kept, ["src/lib.rs", "b.rs"]);
        assert!(q.checklist[2].evidence.is_empty());
        assert!(question(&q).is_empty(), "the question stays valid");
        assert!(
            evidence(&mut q).is_empty(),
            "a cleaned question has nothing more to say"
        );
    }

    #[test]
    fn a_well_formed_question_has_no_issues() {
        assert_eq!(question(&good_question()), Vec::<Problem>::new());
    }

    #[test]
    fn each_checklist_rule_has_its_own_message() {
        let mut q = good_question();
        q.category = "Other".into();
        q.checklist[0].weight = 6; // sum 10, and rubric lacks 6
        q.checklist[1].rubric.push(RubricTier {
            score: 2,
            criterion: String::new(),
        }); // duplicate 2
        q.checklist[1].rubric.push(RubricTier {
            score: 7,
            criterion: String::new(),
        }); // > weight
        q.checklist[2].id = "k1".into(); // duplicate id
        q.checklist[2].weight = 2;
        let errs = question(&q);
        let joined = words(&errs);
        for needle in [
            "`category`",
            "sum to 10",
            "no full score 6",
            "listed twice",
            "exceeds the weight",
            "used twice",
            "has weight 2",
        ] {
            assert!(joined.contains(needle), "missing {needle:?} in:\n{joined}");
        }
    }

    #[test]
    fn too_many_knowledge_items_and_two_clarity_items_are_reported() {
        let mut q = good_question();
        q.checklist = vec![
            item("a", ItemKind::Knowledge, 2, &[2, 0]),
            item("b", ItemKind::Knowledge, 2, &[2, 0]),
            item("c", ItemKind::Knowledge, 2, &[2, 0]),
            item("d", ItemKind::Knowledge, 2, &[2, 0]),
            item("e", ItemKind::Knowledge, 1, &[1, 0]),
            item("x", ItemKind::Clarity, 1, &[1, 0]),
            item("y", ItemKind::Clarity, 1, &[1, 0]),
        ];
        let joined = words(&question(&q));
        assert!(joined.contains("5 knowledge items"), "{joined}");
        assert!(joined.contains("2 clarity items"), "{joined}");
    }

    #[test]
    fn judgment_with_missing_extra_and_disallowed_items_is_reported() {
        let q = good_question();
        let j = Judgment {
            question_id: "q1".into(),
            model: "m".into(),
            attempt: 0,
            judge: "j".into(),
            judge_run: 0,
            items: vec![
                ItemScore {
                    id: "k1".into(),
                    rationale: String::new(),
                    score: 4,
                },
                ItemScore {
                    id: "zz".into(),
                    rationale: String::new(),
                    score: 1,
                },
                ItemScore {
                    id: "clarity".into(),
                    rationale: String::new(),
                    score: 1,
                },
                ItemScore {
                    id: "clarity".into(),
                    rationale: String::new(),
                    score: 0,
                },
            ],
        };
        let joined = words(&judgment_items(&j, &q));
        assert!(
            joined.contains("score 4 for item \"k1\" is not allowed"),
            "{joined}"
        );
        assert!(
            joined.contains("\"zz\" is not in the checklist"),
            "{joined}"
        );
        assert!(joined.contains("scored twice"), "{joined}");
        assert!(joined.contains("missing item(s) \"k2\""), "{joined}");
    }
}
