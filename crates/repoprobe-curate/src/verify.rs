//! `curate verify`'s rules, pure (paper §3.2, Figure 2, the quality check): whether a question
//! that depends on external pages has them ([`links_unresolved`], from `curate enhance`'s
//! record), which checklist items the agent's checked reply grounds once every evidence entry
//! is asked of the repository ([`ground`], the repository asked through a predicate the
//! command gives), and the candidate record written for a question that passes
//! ([`candidate`]: a benchmark question with its verified evidence and its curation block,
//! without `make-checklist`'s provenance at the top).

use crate::curation::{ChecklistProvenance, Curation, Enhancement, LinkSource, StageVerdict};
use repoprobe_core::model::repo_path::normalise;
use repoprobe_core::model::{ChecklistItem, EvidencePath, ItemKind, Question};
use repoprobe_core::text::quote;
use serde_json::{Map, Value};

/// Version of `curate verify`'s prompt (`protocol::curate_verify`, which re-exports it with the
/// prompt it names); every verdict carries it.
pub const PROMPT_VERSION: &str = "curate-verify-v1";

/// The `source` of the evidence entries a passing question's items are given.
pub const EVIDENCE_SOURCE: &str = "verified";

/// One question to verify.
#[derive(Debug, Clone, Copy)]
pub struct Verification<'q> {
    pub question: &'q Question,
}

/// What the agent said of one item, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemCheck {
    /// 1-based, as the prompt numbers it.
    pub number: usize,
    /// The checklist item's id.
    pub id: String,
    pub grounded: bool,
    /// Normalised paths, each once (with its lines, when given); possibly empty when not
    /// grounded.
    pub evidence: Vec<EvidencePath>,
    pub reason: String,
}

impl<'q> Verification<'q> {
    /// The items to ground: the knowledge items, in checklist order (item `n` is `items()[n-1]`).
    pub fn items(&self) -> Vec<&'q ChecklistItem> {
        self.question
            .checklist
            .iter()
            .filter(|i| i.kind == ItemKind::Knowledge)
            .collect()
    }
}

/// `make-checklist`'s fields at a record's top level, moved into `curation.checklist`.
pub const PROVENANCE_FIELDS: [&str; 5] = [
    "prompt_version",
    "provider",
    "structured",
    "usage",
    "raw_reply",
];

/// Why a question that depends on its external pages (`external_context`) cannot stand: a
/// link judged relevant that did not resolve, or no relevant link that did. `None` when it
/// stands, or when it depends on none.
pub fn links_unresolved(q: &Question, enhance: &Enhancement) -> Option<String> {
    if !q.external_context {
        return None;
    }
    let relevant: Vec<&LinkSource> = enhance
        .sources
        .iter()
        .filter(|s| s.relevant == Some(true))
        .collect();
    let broken: Vec<String> = relevant
        .iter()
        .filter(|s| !s.resolved())
        .map(|s| format!("{} ({})", quote(&s.url), state(s)))
        .collect();
    if !broken.is_empty() {
        return Some(format!(
            "it depends on external pages (external_context) and {} relevant link(s) did not \
             resolve: {}",
            broken.len(),
            broken.join(", ")
        ));
    }
    if relevant.is_empty() {
        let seen = if enhance.sources.is_empty() {
            "the thread has no external link".to_string()
        } else {
            enhance
                .sources
                .iter()
                .map(|s| {
                    let judged = match s.relevant {
                        Some(false) => "judged not relevant",
                        _ => "not judged",
                    };
                    format!("{} ({}, {judged})", quote(&s.url), state(s))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some(format!(
            "it depends on external pages (external_context) but no link was judged relevant \
             and read: {seen}"
        ));
    }
    None
}

/// What became of a link, in a few words.
fn state(s: &LinkSource) -> String {
    match (&s.error, s.status) {
        _ if s.resolved() => format!("read, HTTP {}", s.status.unwrap_or(200)),
        (Some(e), _) => quote(e),
        (None, Some(status)) => format!("HTTP {status}"),
        (None, None) => "not fetched".to_string(),
    }
}

/// What the check found of one knowledge item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemVerdict {
    /// 1-based, as the prompt numbered it.
    pub number: usize,
    pub id: String,
    pub key_point: String,
    /// The agent said so and at least one of its entries holds at the commit.
    pub grounded: bool,
    /// The agent's entries that hold, with `source` set to [`EVIDENCE_SOURCE`].
    pub evidence: Vec<EvidencePath>,
    /// The agent's reason.
    pub reason: String,
    /// The agent's entries that do not hold: the path and why.
    pub refused: Vec<(String, String)>,
}

/// Every knowledge item's verdict, in item order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grounding {
    pub items: Vec<ItemVerdict>,
}

/// Judges a checked reply against the repository: `holds` says whether an entry is there at
/// the pinned commit (its path a file or directory there, its lines within the file), or why
/// not. An entry that does not hold grounds nothing.
pub fn ground<E: std::fmt::Display>(
    v: &Verification<'_>,
    checks: Vec<ItemCheck>,
    holds: impl Fn(&EvidencePath) -> Result<(), E>,
) -> Grounding {
    let items = v.items();
    let verdicts = checks
        .into_iter()
        .map(|c| {
            let (mut evidence, mut refused) = (Vec::new(), Vec::new());
            for e in c.evidence {
                match holds(&e) {
                    Ok(()) => evidence.push(EvidencePath {
                        source: Some(EVIDENCE_SOURCE.to_string()),
                        ..e
                    }),
                    Err(why) => refused.push((e.path, why.to_string())),
                }
            }
            let key_point = items
                .get(c.number - 1)
                .map_or(String::new(), |i| i.key_point.clone());
            ItemVerdict {
                number: c.number,
                id: c.id,
                key_point,
                grounded: c.grounded && !evidence.is_empty(),
                evidence: if c.grounded { evidence } else { Vec::new() },
                reason: c.reason,
                refused,
            }
        })
        .collect();
    Grounding { items: verdicts }
}

impl Grounding {
    /// Every item grounded.
    pub fn passed(&self) -> bool {
        self.items.iter().all(|i| i.grounded)
    }

    /// The items' reasons, one a line (`item 1 (k1): ...`), with the entries that did not hold.
    pub fn rationale(&self) -> String {
        self.items
            .iter()
            .map(|i| {
                let mut line = format!("item {} ({}): {}", i.number, i.id, i.reason);
                if !i.refused.is_empty() {
                    line.push_str(&format!(" [{}]", refused(i)));
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Why the question is unanswerable: each item not grounded, its key point, and why (the
    /// agent's reason, the entries that did not hold).
    pub fn unanswerable_reason(&self) -> String {
        let failed: Vec<String> = self
            .items
            .iter()
            .filter(|i| !i.grounded)
            .map(|i| {
                let why = if i.refused.is_empty() {
                    "not grounded".to_string()
                } else {
                    refused(i)
                };
                format!(
                    "item {} ({}, {}): {why}; the agent: {}",
                    i.number,
                    i.id,
                    quote(&i.key_point),
                    quote(&i.reason)
                )
            })
            .collect();
        format!(
            "{} of {} checklist item(s) not grounded in the code: {}",
            failed.len(),
            self.items.len(),
            failed.join("; ")
        )
    }

    /// `curation.verify`: the prompt, the model, passed or not, the rationale.
    pub fn verdict(&self, model: &str) -> StageVerdict {
        StageVerdict {
            prompt_version: PROMPT_VERSION.to_string(),
            model: model.to_string(),
            passed: self.passed(),
            rationale: self.rationale(),
        }
    }
}

fn refused(i: &ItemVerdict) -> String {
    i.refused
        .iter()
        .map(|(p, why)| format!("{} {why}", quote(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An item's evidence with the verified entries merged in: an entry already there for a
/// verified path becomes the verified one (in its place, keeping its lines when the agent gave
/// none); the other verified paths follow, each path once.
pub fn merge_evidence(existing: &[EvidencePath], verified: &[EvidencePath]) -> Vec<EvidencePath> {
    let mut out: Vec<EvidencePath> = Vec::new();
    for e in existing.iter().filter(|e| e.unreadable.is_none()) {
        let Ok(path) = normalise(&e.path) else {
            continue;
        };
        if out.iter().any(|o| o.path == path) {
            continue;
        }
        out.push(match verified.iter().find(|v| v.path == path) {
            Some(v) => EvidencePath {
                lines: v.lines.or(e.lines),
                ..v.clone()
            },
            None => EvidencePath { path, ..e.clone() },
        });
    }
    for v in verified {
        if !out.iter().any(|o| o.path == v.path) {
            out.push(v.clone());
        }
    }
    out
}

/// `make-checklist`'s provenance of a record, if it has any (`prompt_version` at its top).
pub fn checklist_provenance(raw: &Map<String, Value>) -> Option<ChecklistProvenance> {
    let text = |k: &str| raw.get(k).and_then(Value::as_str).map(str::to_string);
    Some(ChecklistProvenance {
        prompt_version: text("prompt_version")?,
        provider: text("provider"),
        structured: text("structured"),
        usage: raw.get("usage").cloned(),
        raw_reply: text("raw_reply"),
    })
}

/// The candidate record of a question that passed: its record as read (`raw`, other fields
/// kept) without [`PROVENANCE_FIELDS`], each grounded item's evidence merged
/// ([`merge_evidence`], from the question's own `q`), and `curation` as given.
pub fn candidate(
    raw: &Map<String, Value>,
    q: &Question,
    grounding: &Grounding,
    curation: &Curation,
) -> Result<Value, serde_json::Error> {
    let mut out = raw.clone();
    for f in PROVENANCE_FIELDS {
        out.remove(f);
    }
    if let Some(Value::Array(items)) = out.get_mut("checklist") {
        for item in items.iter_mut() {
            let Some(id) = item.get("id").and_then(Value::as_str) else {
                continue;
            };
            let (Some(verdict), Some(typed)) = (
                grounding.items.iter().find(|v| v.id == id),
                q.checklist.iter().find(|i| i.id == id),
            ) else {
                continue;
            };
            let merged = merge_evidence(&typed.evidence, &verdict.evidence);
            if let Some(obj) = item.as_object_mut() {
                obj.insert("evidence".into(), serde_json::to_value(merged)?);
            }
        }
    }
    out.insert("curation".into(), serde_json::to_value(curation)?);
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::fixtures;
    use serde_json::json;

    fn link(
        url: &str,
        status: Option<u16>,
        error: Option<&str>,
        relevant: Option<bool>,
    ) -> LinkSource {
        LinkSource {
            url: url.into(),
            final_url: None,
            fetched_at: "2026-01-01T00:00:00Z".into(),
            status,
            content_type: None,
            bytes: None,
            sha256: None,
            error: error.map(str::to_string),
            relevant,
            summary: None,
        }
    }

    fn enhancement(sources: Vec<LinkSource>) -> Enhancement {
        Enhancement {
            sources,
            ..Enhancement::default()
        }
    }

    #[test]
    fn a_question_on_external_pages_needs_every_relevant_one_read_and_at_least_one() {
        let mut q = fixtures::question();
        let broken = enhancement(vec![
            link("https://a.example/doc", Some(200), None, Some(true)),
            link("https://b.example/gone", Some(404), None, Some(true)),
            link(
                "https://c.example/x",
                None,
                Some("refused address"),
                Some(false),
            ),
        ]);
        // Without external context the links do not matter.
        assert_eq!(links_unresolved(&q, &broken), None);
        q.external_context = true;
        assert_eq!(
            links_unresolved(&q, &broken).unwrap(),
            "it depends on external pages (external_context) and 1 relevant link(s) did not \
             resolve: \"https://b.example/gone\" (HTTP 404)"
        );
        let none_relevant = enhancement(vec![
            link("https://a.example/doc", Some(200), None, Some(false)),
            link("https://c.example/x", None, Some("refused address"), None),
        ]);
        assert_eq!(
            links_unresolved(&q, &none_relevant).unwrap(),
            "it depends on external pages (external_context) but no link was judged relevant \
             and read: \"https://a.example/doc\" (read, HTTP 200, judged not relevant), \
             \"https://c.example/x\" (\"refused address\", not judged)"
        );
        assert!(
            links_unresolved(&q, &enhancement(vec![]))
                .unwrap()
                .ends_with("the thread has no external link")
        );
        let good = enhancement(vec![
            link("https://a.example/doc", Some(200), None, Some(true)),
            link("https://b.example/gone", Some(404), None, Some(false)),
        ]);
        assert_eq!(links_unresolved(&q, &good), None);
    }

    fn check(number: usize, id: &str, grounded: bool, paths: &[&str]) -> ItemCheck {
        ItemCheck {
            number,
            id: id.into(),
            grounded,
            evidence: paths.iter().map(|p| EvidencePath::new(*p)).collect(),
            reason: format!("reason {number}"),
        }
    }

    #[test]
    fn an_item_is_grounded_only_by_an_entry_that_holds_at_the_commit() {
        let q = fixtures::question();
        let v = Verification { question: &q };
        let holds = |e: &EvidencePath| {
            if e.path.starts_with("src/") {
                Ok(())
            } else {
                Err("does not exist at the commit".to_string())
            }
        };
        let g = ground(
            &v,
            vec![
                check(1, "k1", true, &["src/a.py", "nope.py"]),
                check(2, "k2", true, &["missing.py"]),
            ],
            holds,
        );
        assert!(g.items[0].grounded && !g.items[1].grounded && !g.passed());
        assert_eq!(g.items[0].evidence[0].source.as_deref(), Some("verified"));
        assert_eq!(g.items[0].evidence.len(), 1);
        assert_eq!(
            g.unanswerable_reason(),
            format!(
                "1 of 2 checklist item(s) not grounded in the code: item 2 (k2, {}): \
                 \"missing.py\" does not exist at the commit; the agent: \"reason 2\"",
                quote(&q.checklist[1].key_point)
            )
        );
        assert_eq!(
            g.rationale(),
            "item 1 (k1): reason 1 [\"nope.py\" does not exist at the commit]\n\
             item 2 (k2): reason 2 [\"missing.py\" does not exist at the commit]"
        );
        let g = ground(
            &v,
            vec![
                check(1, "k1", true, &["src/a.py"]),
                check(2, "k2", false, &["src/b.py"]),
            ],
            holds,
        );
        assert!(!g.items[1].grounded && g.items[1].evidence.is_empty());
        assert!(
            g.unanswerable_reason().contains("item 2 (k2, ")
                && g.unanswerable_reason()
                    .contains("): not grounded; the agent: \"reason 2\"")
        );
        let v = g.verdict("m1");
        assert_eq!(
            (v.prompt_version.as_str(), v.model.as_str(), v.passed),
            ("curate-verify-v1", "m1", false)
        );
    }

    #[test]
    fn verified_evidence_replaces_the_same_path_and_follows_the_rest() {
        let existing = vec![
            EvidencePath {
                path: "./src/a.py".into(),
                lines: Some([1, 5]),
                source: Some("make-checklist-v2".into()),
                unreadable: None,
            },
            EvidencePath::new("docs/x.md"),
            EvidencePath {
                unreadable: Some("is a number".into()),
                ..EvidencePath::default()
            },
        ];
        let verified = |p: &str, lines| EvidencePath {
            path: p.into(),
            lines,
            source: Some("verified".into()),
            unreadable: None,
        };
        let merged = merge_evidence(
            &existing,
            &[
                verified("src/a.py", None),
                verified("src/b.py", Some([2, 3])),
            ],
        );
        assert_eq!(
            merged,
            vec![
                verified("src/a.py", Some([1, 5])),
                EvidencePath::new("docs/x.md"),
                verified("src/b.py", Some([2, 3])),
            ]
        );
    }

    #[test]
    fn a_candidate_is_the_question_with_its_evidence_and_curation_and_no_provenance() {
        let q = fixtures::question();
        let mut raw = serde_json::to_value(&q).unwrap();
        raw["prompt_version"] = json!("make-checklist-v2");
        raw["provider"] = json!("openai");
        raw["usage"] = json!({"calls": 1});
        raw["raw_reply"] = json!("{}");
        raw["note"] = json!("kept");
        let raw = raw.as_object().unwrap();
        let prov = checklist_provenance(raw).unwrap();
        assert_eq!(prov.prompt_version, "make-checklist-v2");
        assert_eq!(prov.structured, None);
        assert_eq!(prov.usage, Some(json!({"calls": 1})));
        let v = Verification { question: &q };
        let g = ground(
            &v,
            vec![
                check(1, "k1", true, &["src/a.py"]),
                check(2, "k2", true, &["src/b.py"]),
            ],
            |_| Ok::<(), String>(()),
        );
        let curation: Curation = serde_json::from_value(json!({
            "source": {"key": "o/r#1", "url": "u", "category": "Q&A", "title": "t",
                "created_at": "c", "answer_chosen_at": "a", "answer_url": "au",
                "answer_author_association": "MEMBER", "upvotes": 1, "harvested_at": "h",
                "api_url": "api", "discussion_id": "D", "answer_id": "DC"},
            "commit": {"oid": "abc", "committed_at": "c", "branch": "main"},
            "classify": {"prompt_version": "p", "model": "m", "passed": true, "rationale": "r"},
            "enhance": {"original_question": "q", "original_answer": "a", "sources": []}
        }))
        .unwrap();
        let out = candidate(raw, &q, &g, &curation).unwrap();
        for f in PROVENANCE_FIELDS {
            assert!(out.get(f).is_none(), "{f} left at the top");
        }
        assert_eq!(out["note"], "kept");
        assert_eq!(
            out["checklist"][0]["evidence"],
            json!([{"path": "src/a.py", "source": "verified"}])
        );
        assert!(out["checklist"][2].get("evidence").is_none());
        assert_eq!(out["curation"]["commit"]["oid"], "abc");
        assert!(out["curation"].get("verify").is_none());
        let back: Question = serde_json::from_value(out).unwrap();
        assert!(repoprobe_core::validate::question(&back).is_empty());
    }
}
