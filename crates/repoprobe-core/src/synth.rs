//! A large, clearly labelled synthetic benchmark with answers and judgments, for benchmarks and
//! demos. Deterministic for a seed, on every platform: only integer-seeded ChaCha and basic
//! arithmetic (no transcendental functions, whose last bits differ between libms).
//!
//! The shape is meant to look like real results: per-model skill, per-question difficulty,
//! partial credit on multi-tier items, judge runs that mostly agree, a low-score tail, a few
//! failed runs, failure-mode labels for answers below 60 %, and rationales of realistic length.

mod runs;

use crate::model::trajectory::Trajectory;
use crate::model::*;
use crate::trajectories::TrajectoryKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SynthOptions {
    pub models: u32,
    pub questions: u32,
    pub runs: u32,
    pub seed: u64,
}

const LANGUAGES: [&str; 15] = [
    "Python",
    "TypeScript",
    "Go",
    "Rust",
    "Java",
    "JavaScript",
    "C++",
    "C",
    "C#",
    "Ruby",
    "PHP",
    "Swift",
    "Shell",
    "Lua",
    "QML",
];
const THEMES: [&str; 8] = [
    "LLM Framework",
    "Developer SDK",
    "Data Processing",
    "Editor Interface",
    "Cloud & DevOps",
    "Security",
    "Monitoring Tools",
    "Desktop App",
];
const COMPONENTS: [&str; 12] = [
    "the request router",
    "the plugin loader",
    "the cache layer",
    "the config resolver",
    "the session store",
    "the scheduler",
    "the CLI entry point",
    "the storage adapter",
    "the event bus",
    "the auth middleware",
    "the markdown renderer",
    "the build pipeline",
];
const VERBS: [&str; 8] = [
    "initialises",
    "validates",
    "serialises",
    "dispatches",
    "memoises",
    "retries",
    "normalises",
    "persists",
];

/// Uniform in [0, 1) from 53 random bits: exact on every platform.
fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.random::<u64>() >> 11) as f64 / (1u64 << 53) as f64
}

/// Roughly standard normal (Irwin–Hall of 4 uniforms, scaled): no `ln`/`cos` needed.
fn normalish(rng: &mut ChaCha8Rng) -> f64 {
    let s: f64 = (0..4).map(|_| unit(rng)).sum();
    (s - 2.0) * (3.0f64).sqrt()
}

/// A smooth squashing to (0, 1) without `exp`.
fn squash(x: f64) -> f64 {
    0.5 + 0.5 * x / (1.0 + x.abs())
}

fn pick<'a>(rng: &mut ChaCha8Rng, xs: &[&'a str]) -> &'a str {
    xs[rng.random_range(0..xs.len() as u32) as usize]
}

fn sentence(rng: &mut ChaCha8Rng) -> String {
    format!(
        "{} {} the {} before {} hands it to {}",
        capitalise(pick(rng, &COMPONENTS)),
        pick(rng, &VERBS),
        pick(
            rng,
            &[
                "payload", "settings", "handle", "token", "manifest", "index", "buffer"
            ]
        ),
        pick(rng, &COMPONENTS),
        pick(rng, &COMPONENTS)
    )
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn paragraph(rng: &mut ChaCha8Rng, sentences: u32) -> String {
    (0..sentences)
        .map(|_| sentence(rng))
        .collect::<Vec<_>>()
        .join(". ")
        + "."
}

fn checklist(rng: &mut ChaCha8Rng) -> Vec<ChecklistItem> {
    // Split 9 points into 1–4 knowledge items.
    let k = rng.random_range(1..=4u32);
    let mut weights = vec![1u32; k as usize];
    for _ in 0..(9 - k) {
        let i = rng.random_range(0..k) as usize;
        weights[i] += 1;
    }
    let mut items: Vec<ChecklistItem> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let mut rubric = vec![RubricTier {
                score: w,
                criterion: format!("Fully explains {}", pick(rng, &COMPONENTS)),
            }];
            if w >= 3 {
                rubric.push(RubricTier {
                    score: w / 2,
                    criterion: "Names the right component but not how it works".into(),
                });
            }
            rubric.push(RubricTier {
                score: 0,
                criterion: "Missing or wrong".into(),
            });
            ChecklistItem {
                id: format!("k{}", i + 1),
                kind: ItemKind::Knowledge,
                key_point: format!(
                    "Explains how {} {} its input",
                    pick(rng, &COMPONENTS),
                    pick(rng, &VERBS)
                ),
                weight: w,
                rubric,
                evidence: Vec::new(),
            }
        })
        .collect();
    items.push(ChecklistItem {
        id: "clarity".into(),
        kind: ItemKind::Clarity,
        key_point: "Clarity & Organization".into(),
        weight: 1,
        rubric: vec![
            RubricTier {
                score: 1,
                criterion: "Well organised, no serious hallucination".into(),
            },
            RubricTier {
                score: 0,
                criterion: "Incoherent or seriously hallucinated".into(),
            },
        ],
        evidence: Vec::new(),
    });
    items
}

/// Generates the bundle. Sizes are as given; `runs` ≥ 1.
///
/// Every helper below draws from the one generator in a fixed order: reordering a draw (even two
/// fields of one struct literal) changes every byte after it, and the snapshots pin those bytes.
pub fn generate(o: SynthOptions) -> ResultsBundle {
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let runs = o.runs.max(1);
    let (benchmark, difficulty) = questions(&mut rng, o.questions);
    // A scalar judge's run-wide leniency: the drift that makes scalar scores vary between runs.
    let run_mood: Vec<f64> = (0..runs).map(|_| 0.25 * normalish(&mut rng)).collect();
    let mut r = Records::default();
    for m in 0..o.models {
        let model = format!("synth-model-{:02}", m + 1);
        // Skills spread from weak to strong, with a little noise.
        let skill =
            -0.6 + 1.8 * (m as f64 + 0.5) / o.models.max(1) as f64 + 0.2 * normalish(&mut rng);
        // Each model has its own leaning among failure modes.
        let lean: Vec<f64> = (0..5).map(|_| 0.2 + unit(&mut rng)).collect();
        for (qi, q) in benchmark.iter().enumerate() {
            let failed = rng.random_range(0..1000u32) < 8;
            r.answers.push(answer(&mut rng, q, &model, failed));
            if failed {
                continue;
            }
            let given = Marked {
                q,
                model: &model,
                // A latent per-answer quality; judge runs add small noise around it.
                base: skill - difficulty[qi],
                scalar: m < 3,
            };
            let run0_total = given.judge(&mut rng, &run_mood, &mut r);
            if run0_total < 6 {
                r.failure_modes
                    .push(failure_label(&mut rng, &lean, q, &model));
            }
        }
    }
    ResultsBundle {
        format: BUNDLE_FORMAT.into(),
        version: crate::FORMAT_VERSION,
        meta: Some(serde_json::json!({
            "synthetic": true,
            "note": "SYNTHETIC DATA generated by `repoprobe synth`: not results of any real model or benchmark",
            "generator": {"models": o.models, "questions": o.questions, "runs": runs, "seed": o.seed},
        })),
        benchmark,
        answers: r.answers,
        judgments: r.judgments,
        scalar_judgments: r.scalar_judgments,
        failure_modes: r.failure_modes,
        reported: Vec::new(),
    }
}

/// The bundle of [`generate`] with a run behind every answer: the knowledge items get evidence
/// paths, each answer a synthetic trajectory (returned, in the answers' order) and the `agent`
/// facts of it (turns, tool calls, files read and searched) and a cost. The rest of the bundle is
/// [`generate`]'s, byte for byte.
pub fn generate_with_runs(o: SynthOptions) -> (ResultsBundle, Vec<(TrajectoryKey, Trajectory)>) {
    let mut bundle = generate(o);
    let runs = runs::add(&mut bundle, o.seed);
    (bundle, runs)
}

/// The records generated for the models' answers, in the bundle's order.
#[derive(Default)]
struct Records {
    answers: Vec<Answer>,
    judgments: Vec<Judgment>,
    scalar_judgments: Vec<ScalarJudgment>,
    failure_modes: Vec<FailureLabel>,
}

/// The questions, one repository per ten, with each question's hidden difficulty.
fn questions(rng: &mut ChaCha8Rng, count: u32) -> (Vec<Question>, Vec<f64>) {
    let repos = (count / 10).max(1);
    let repo_meta: Vec<(String, &str, &str)> = (0..repos)
        .map(|r| {
            (
                format!("synthetic/repo-{:03}", r + 1),
                pick(rng, &LANGUAGES),
                pick(rng, &THEMES),
            )
        })
        .collect();
    let mut benchmark = Vec::with_capacity(count as usize);
    let mut difficulty = Vec::with_capacity(count as usize);
    for i in 0..count {
        let (name, language, theme) = &repo_meta[(i % repos) as usize];
        difficulty.push(normalish(rng) * 0.9);
        benchmark.push(Question {
            id: format!("synth-q-{:04}", i + 1),
            repo: Repo {
                name: name.clone(),
                url: format!("https://example.invalid/{name}"),
                commit: format!("{:040x}", rng.random::<u128>()),
                language: language.to_string(),
                theme: theme.to_string(),
            },
            category: CATEGORIES[rng.random_range(0..3u32) as usize].to_string(),
            question: format!(
                "SYNTHETIC: how does {}? {}",
                sentence(rng).to_lowercase(),
                paragraph(rng, 2)
            ),
            reference_answer: paragraph(rng, 4),
            external_context: rng.random_range(0..100u32) < 45,
            curation: None,
            checklist: checklist(rng),
        });
    }
    (benchmark, difficulty)
}

/// One model's answer to `q`: text, or the timeout of a failed run.
fn answer(rng: &mut ChaCha8Rng, q: &Question, model: &str, failed: bool) -> Answer {
    Answer {
        question_id: q.id.clone(),
        model: model.to_string(),
        attempt: 0,
        answer: (!failed).then(|| paragraph(rng, 3)),
        agent: Some(Box::new(crate::model::agent::AgentBlock {
            name: Some("synthetic".into()),
            ..Default::default()
        })),
        usage: Some(Usage {
            input_tokens: Some(rng.random_range(20_000..400_000)),
            output_tokens: Some(rng.random_range(300..4_000)),
            cost_usd: None,
        }),
        duration_s: Some(f64::from(rng.random_range(20..600u32))),
        error: failed.then(|| "synthetic agent timeout".to_string()),
    }
}

/// An answer that was given, to be judged: its question, model and latent quality.
struct Marked<'a> {
    q: &'a Question,
    model: &'a str,
    base: f64,
    /// Whether the scalar baseline judges it too (the first three models).
    scalar: bool,
}

impl Marked<'_> {
    /// Every judge run over the answer (and the scalar baseline's, when it judges it); returns
    /// the first run's total.
    fn judge(&self, rng: &mut ChaCha8Rng, run_mood: &[f64], r: &mut Records) -> u32 {
        let latent: Vec<f64> = self
            .q
            .checklist
            .iter()
            .map(|_| self.base + 0.8 * normalish(rng))
            .collect();
        let mut run0_total = 0;
        for (run, &mood) in run_mood.iter().enumerate() {
            let run = run as u32;
            let items: Vec<ItemScore> = self
                .q
                .checklist
                .iter()
                .zip(&latent)
                .map(|(c, &l)| item_score(rng, c, l))
                .collect();
            let total: u32 = items.iter().map(|i| i.score).sum();
            if run == 0 {
                run0_total = total;
            }
            r.judgments.push(Judgment {
                question_id: self.q.id.clone(),
                model: self.model.to_string(),
                attempt: 0,
                judge: "synth-judge".into(),
                judge_run: run,
                items,
            });
            if self.scalar {
                r.scalar_judgments
                    .push(self.scalar_judgment(rng, run, mood));
            }
        }
        run0_total
    }

    /// The scalar baseline: generous and noisier (Table 5's pattern).
    fn scalar_judgment(&self, rng: &mut ChaCha8Rng, run: u32, mood: f64) -> ScalarJudgment {
        let mut dims = std::collections::BTreeMap::new();
        for d in [
            "correctness",
            "completeness",
            "relevance",
            "clarity",
            "reasoning",
        ] {
            let v = 6.0 + 4.5 * squash(self.base + 0.6 + mood + 0.9 * normalish(rng));
            dims.insert(d.to_string(), (v as u32).clamp(1, 10));
        }
        ScalarJudgment {
            question_id: self.q.id.clone(),
            model: self.model.to_string(),
            attempt: 0,
            judge: "synth-judge".into(),
            judge_run: run,
            dimensions: dims,
            max_per_dimension: 10,
            rationale: paragraph(rng, 2),
        }
    }
}

/// One judge run's score of item `c` for an answer of latent quality `l` on it.
fn item_score(rng: &mut ChaCha8Rng, c: &ChecklistItem, l: f64) -> ItemScore {
    let p = squash(
        1.3 * (l + 0.15 * normalish(rng))
            + if c.kind == ItemKind::Clarity {
                1.6
            } else {
                0.0
            },
    );
    let allowed = c.allowed_scores();
    // Highest tier whose threshold p clears.
    let idx = ((p * allowed.len() as f64) as usize).min(allowed.len() - 1);
    let score = allowed[idx];
    ItemScore {
        id: c.id.clone(),
        rationale: format!(
            "The answer {} {}. {} Against the rubric this earns {score} of {}.",
            if score == c.weight {
                "covers"
            } else if score == 0 {
                "misses"
            } else {
                "partly covers"
            },
            c.key_point.to_lowercase(),
            paragraph(rng, 2),
            c.weight
        ),
        score,
    }
}

/// A failure-mode label for a low-scoring answer, drawn by the model's leaning.
fn failure_label(rng: &mut ChaCha8Rng, lean: &[f64], q: &Question, model: &str) -> FailureLabel {
    let total: f64 = lean.iter().sum();
    let mut x = unit(rng) * total;
    let mut mode = FailureMode::ALL[4];
    for (i, w) in lean.iter().enumerate() {
        if x < *w {
            mode = FailureMode::ALL[i];
            break;
        }
        x -= w;
    }
    FailureLabel {
        question_id: q.id.clone(),
        model: model.to_string(),
        attempt: 0,
        classifier: "synth-classifier".into(),
        mode,
        rationale: paragraph(rng, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synth_is_deterministic_and_valid() {
        let o = SynthOptions {
            models: 3,
            questions: 12,
            runs: 2,
            seed: 7,
        };
        let a = serde_json::to_string(&generate(o)).unwrap();
        let b = serde_json::to_string(&generate(o)).unwrap();
        assert_eq!(a, b);
        let loaded = crate::load(
            &[crate::SourceFile {
                name: "s.json",
                bytes: a.as_bytes(),
            }],
            Default::default(),
        );
        assert_eq!(loaded.issues, vec![], "synthetic data must be valid");
        assert_eq!(loaded.dataset.questions.len(), 12);
        assert!(loaded.dataset.judgments.len() > 60);
    }

    #[test]
    fn synthetic_runs_agree_with_their_answers_and_the_evidence() {
        let o = SynthOptions {
            models: 4,
            questions: 20,
            runs: 1,
            seed: 3,
        };
        let (bundle, runs) = generate_with_runs(o);
        assert_eq!(runs, generate_with_runs(o).1, "deterministic");
        assert_eq!(runs.len(), bundle.answers.len());
        let text = serde_json::to_string(&bundle).unwrap();
        let loaded = crate::load(
            &[crate::SourceFile {
                name: "s.json",
                bytes: text.as_bytes(),
            }],
            Default::default(),
        );
        assert_eq!(loaded.issues, vec![]);
        // Every answer's facts are its trajectory's.
        for (a, (key, t)) in bundle.answers.iter().zip(&runs) {
            assert_eq!((&a.question_id, &a.model), (&key.question_id, &key.model));
            assert!(t.problems().is_empty(), "{:?}", t.problems());
            let facts = crate::facts::Facts::of(t);
            let block = crate::model::agent::AgentBlock::of(a).unwrap();
            assert_eq!(block.files_read.as_ref(), Some(&facts.files_read));
            assert_eq!(block.turns, Some(facts.turns));
            assert_eq!(
                t.extra_str("worktree").map(|w| w.starts_with('/')),
                Some(true)
            );
        }
        // The runs read evidence, better ones more of it; some read none; some tried an edit.
        let rows = crate::metrics::runs::runs(&loaded.dataset, &Default::default())
            .unwrap()
            .rows;
        let recall = |good: bool| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.score.is_some_and(|s| (s >= 60.0) == good))
                .filter_map(|r| r.evidence_recall)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert!(
            recall(true) > recall(false) + 10.0,
            "{} vs {}",
            recall(true),
            recall(false)
        );
        assert!(rows.iter().any(|r| r.read_no_evidence()));
        assert!(rows.iter().any(|r| r.attempted_edit()));
        assert!(
            rows.iter()
                .all(|r| r.cost_usd.is_some() && r.evidence_read.is_some())
        );
        // The file holds every run where its index says.
        let (bytes, index) = crate::trajectories::file(&runs).unwrap();
        assert_eq!(index.bytes, bytes.len() as u64);
        for (e, (key, t)) in index.entries.iter().zip(&runs) {
            let line = &bytes[e.offset as usize..(e.offset + e.length) as usize];
            assert_eq!(
                crate::trajectories::read_line(line).unwrap(),
                (key.clone(), t.clone())
            );
        }
        // Without runs, the bundle is what it was: the snapshots of `generate` stand.
        let plain = generate(o);
        assert_eq!(plain.judgments, bundle.judgments);
        assert_eq!(plain.benchmark.len(), bundle.benchmark.len());
    }
}
