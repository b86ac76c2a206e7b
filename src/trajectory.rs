//! The page's copy of the one trajectory it shows: the pages of steps the worker sent, merged
//! (a "more steps" page appended, a page of another filter or start in place of the steps
//! shown), and what the view derives from them (the outline's turns, which step an address
//! asks for and whether it is here). No browser, no signal: natively tested.

use crate::protocol::{
    OutlineEntry, RunError, ShownStep, StepKind, StepSource, TrajectoryHead, TrajectoryKey,
    TrajectoryPage,
};

/// The steps shown of one run, and how they were asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryView {
    pub key: TrajectoryKey,
    pub head: Option<TrajectoryHead>,
    /// The filter the steps are of (all kinds when empty).
    pub kinds: Vec<StepKind>,
    /// The step the steps shown were asked from (the first page's `from`): a step asked for
    /// that is not of the filter's kinds is not shown, and not asked again either.
    pub from: u64,
    pub steps: Vec<ShownStep>,
    /// Where the next page starts.
    pub next: Option<u64>,
    /// Why the run could not be read (its file changed, an index of another file).
    pub error: Option<RunError>,
}

impl TrajectoryView {
    /// Whether step `n` is among those shown.
    pub fn has(&self, n: u64) -> bool {
        self.steps.binary_search_by_key(&n, |s| s.step).is_ok()
    }

    /// Whether the page holds what an address asks for: its filter, and the step asked for
    /// (shown, or asked from already).
    pub fn serves(&self, kinds: &[StepKind], step: Option<u64>) -> bool {
        self.kinds == kinds
            && (self.error.is_some() || step.is_none_or(|n| self.has(n) || self.from == n))
    }
}

/// The view after the worker's answer `page` for run `key`, given the one shown before.
pub fn merge(
    prev: Option<&TrajectoryView>,
    key: TrajectoryKey,
    page: Result<TrajectoryPage, RunError>,
) -> TrajectoryView {
    let same = prev.filter(|p| p.key == key);
    let head_before = same.and_then(|p| p.head.clone());
    match page {
        Err(e) => TrajectoryView {
            key,
            head: head_before,
            kinds: same.map(|p| p.kinds.clone()).unwrap_or_default(),
            from: 1,
            steps: Vec::new(),
            next: None,
            error: Some(e),
        },
        Ok(p) => {
            let head = p.head.or(head_before);
            let follows = same.filter(|v| v.kinds == p.kinds && v.next == Some(p.from));
            // A page that ends where the steps shown begin ("earlier steps") goes before them.
            let precedes = same.filter(|v| {
                v.kinds == p.kinds && p.next.is_some() && p.next == v.steps.first().map(|s| s.step)
            });
            let (from, steps, next) = match (follows, precedes) {
                (Some(v), _) => (
                    v.from,
                    v.steps.iter().cloned().chain(p.steps).collect(),
                    p.next,
                ),
                (None, Some(v)) => (
                    p.from,
                    p.steps.into_iter().chain(v.steps.iter().cloned()).collect(),
                    v.next,
                ),
                (None, None) => (p.from, p.steps, p.next),
            };
            TrajectoryView {
                key,
                head,
                kinds: p.kinds,
                from,
                steps,
                next,
                error: None,
            }
        }
    }
}

/// The outline's turns: the agent's steps, numbered 1, 2, 3, … (turn, entry).
pub fn turns(head: &TrajectoryHead) -> Vec<(usize, &OutlineEntry)> {
    head.outline
        .iter()
        .filter(|e| e.source == StepSource::Agent)
        .enumerate()
        .map(|(i, e)| (i + 1, e))
        .collect()
}

/// The step an address asks for (`&step=N`), if it is a step of the run.
pub fn step_asked(param: Option<&str>, head: Option<&TrajectoryHead>) -> Option<u64> {
    let n: u64 = param?.trim().parse().ok()?;
    match head {
        // A preview's count is of its first steps only.
        Some(h) if n == 0 || (n > h.steps && !h.partial) => None,
        _ => (n > 0).then_some(n),
    }
}

/// The filter of an address (`&kind=read`), if it names a kind.
pub fn kind_asked(param: Option<&str>) -> Vec<StepKind> {
    param.and_then(StepKind::parse).into_iter().collect()
}

/// How many steps of the run are of `kinds` (all when empty), from the outline.
pub fn count_of(head: &TrajectoryHead, kinds: &[StepKind]) -> usize {
    head.outline
        .iter()
        .filter(|e| kinds.is_empty() || e.kinds.iter().any(|k| kinds.contains(k)))
        .count()
}

/// The element id of step `n`'s card (the deep link scrolls to it).
pub fn step_id(n: u64) -> String {
    format!("step-{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TrajectoryKey {
        TrajectoryKey {
            question_id: "q1".into(),
            model: "m".into(),
            attempt: 0,
        }
    }

    fn step(n: u64) -> ShownStep {
        ShownStep {
            step: n,
            source: StepSource::Agent,
            kinds: vec![StepKind::Text],
            model: None,
            timestamp: None,
            seconds: None,
            text: format!("s{n}"),
            reasoning: None,
            calls: Vec::new(),
            error: None,
            tokens: None,
        }
    }

    fn head(n: u64) -> TrajectoryHead {
        TrajectoryHead {
            agent: "a".into(),
            steps: n,
            outline: (1..=n)
                .map(|i| OutlineEntry {
                    step: i,
                    source: if i == 1 {
                        StepSource::System
                    } else {
                        StepSource::Agent
                    },
                    kinds: if i == 1 {
                        vec![StepKind::System]
                    } else {
                        vec![StepKind::READ]
                    },
                    title: String::new(),
                })
                .collect(),
            notes: None,
            problems: Vec::new(),
            file_notes: Vec::new(),
            partial: false,
        }
    }

    fn page(from: u64, to: u64, next: Option<u64>, with_head: bool) -> TrajectoryPage {
        TrajectoryPage {
            head: with_head.then(|| head(100)),
            kinds: Vec::new(),
            from,
            steps: (from..=to).map(step).collect(),
            next,
        }
    }

    #[test]
    fn a_next_page_is_appended_and_another_start_replaces() {
        let v = merge(None, key(), Ok(page(1, 40, Some(41), true)));
        assert_eq!(v.steps.len(), 40);
        assert!(v.has(40) && !v.has(41));
        let v2 = merge(Some(&v), key(), Ok(page(41, 80, Some(81), false)));
        assert_eq!(v2.steps.len(), 80);
        assert!(v2.head.is_some(), "the head is kept");
        assert_eq!(v2.from, 1);
        let v3 = merge(Some(&v2), key(), Ok(page(90, 99, None, false)));
        assert_eq!(v3.steps.first().map(|s| s.step), Some(90));
        assert_eq!(v3.next, None);
        assert!(v3.serves(&[], Some(95)) && v3.serves(&[], None));
        // Earlier steps go before those shown, which stay.
        let v6 = merge(Some(&v3), key(), Ok(page(50, 89, Some(90), false)));
        assert_eq!((v6.steps.len(), v6.from, v6.next), (50, 50, None));
        assert!(v6.has(95) && v6.has(50));
        assert!(!v3.serves(&[], Some(10)) && !v3.serves(&[StepKind::READ], None));
        // A step asked for that the filter leaves out: asked from once, not again.
        let filtered = TrajectoryPage {
            kinds: vec![StepKind::READ],
            ..page(50, 60, None, false)
        };
        let v5 = merge(
            Some(&v3),
            key(),
            Ok(TrajectoryPage {
                from: 49,
                ..filtered
            }),
        );
        assert!(v5.serves(&[StepKind::READ], Some(49)));
        let other = TrajectoryKey {
            attempt: 1,
            ..key()
        };
        let v4 = merge(Some(&v3), other, Err(RunError::NotGiven));
        assert!(v4.head.is_none() && v4.steps.is_empty());
        assert_eq!(v4.error, Some(RunError::NotGiven));
    }

    #[test]
    fn turns_steps_and_kinds_are_read_from_the_outline_and_address() {
        let h = head(5);
        let t = turns(&h);
        assert_eq!(t.len(), 4);
        assert_eq!((t[0].0, t[0].1.step), (1, 2));
        assert_eq!(step_asked(Some("3"), Some(&h)), Some(3));
        assert_eq!(step_asked(Some("6"), Some(&h)), None);
        let first = TrajectoryHead {
            partial: true,
            ..h.clone()
        };
        assert_eq!(
            step_asked(Some("6"), Some(&first)),
            Some(6),
            "a preview's count"
        );
        assert_eq!(step_asked(Some("x"), None), None);
        assert_eq!(step_asked(Some("0"), None), None);
        assert_eq!(kind_asked(Some("read")), [StepKind::READ]);
        assert!(kind_asked(Some("nope")).is_empty());
        assert_eq!(count_of(&h, &[StepKind::READ]), 4);
        assert_eq!(count_of(&h, &[]), 5);
    }
}
