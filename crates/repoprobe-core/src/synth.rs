//! A large, clearly labelled synthetic benchmark with answers and judgments, for benchmarks and
//! demos. Deterministic for a seed, on every platform: only integer-seeded ChaCha and basic
//! arithmetic (no transcendental functions, whose last bits differ between libms).
//!
//! The shape is meant to look like real results: per-model skill, questions in groups that share
//! a repository and its difficulty (the repository effect: scores of one repository's questions
//! move together, as the benchmark's do, so that an interval clustered by repository is wider
//! than one that takes the questions as independent), per-question difficulty, partial credit on
//! multi-tier items, judge runs that mostly agree, a low-score tail, a few failed runs,
//! failure-mode labels for answers below 60 %, and rationales of realistic length. On request
//! ([`Design`]) more model judges and a synthetic person's grades of the same answers, for the
//! Judges view; they are drawn from a generator of their own, so that the first judge's numbers
//! are those of a bundle without them.

mod trajectories;

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

/// How the questions are grouped and who judges them, beyond [`SynthOptions`]'s sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    /// Consecutive questions share a repository (name, url, commit, language, theme and the
    /// repository's difficulty) in groups of this many; the last group may be smaller. ≥ 1.
    pub questions_per_repo: u32,
    /// Model judges: [`JUDGE`] with every judge run, then `synth-judge-2`, … with run 0 of every
    /// answer, each correlated with the first but with a leaning and noise of its own.
    pub judges: u32,
    /// Answers of each model that a synthetic person ([`GRADER`]) grades (attempt 0, run 0): close to the
    /// answers' quality, with less noise than a model judge.
    pub human_grades: u32,
    /// Attempts of each model at each question (`attempt` 0, 1, …): each a new answer of the same
    /// model and question, judged like the first. ≥ 1.
    pub attempts: u32,
}

impl Default for Design {
    /// Ten questions to a repository (the benchmark's ≈10), one judge, no person's grades.
    fn default() -> Self {
        Design {
            questions_per_repo: 10,
            judges: 1,
            human_grades: 0,
            attempts: 1,
        }
    }
}

/// The first judge's name (the scalar baseline's too).
pub const JUDGE: &str = "synth-judge";
/// The synthetic person's judge name: a `human:` judge, as the Grade view writes them.
pub const GRADER: &str = "human:synthetic-grader";

/// Standard deviation of a repository's difficulty offset, shared by its questions.
const REPO_SD: f64 = 1.0;
/// Standard deviation of a question's own difficulty around its repository's.
const QUESTION_SD: f64 = 0.4;

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

/// Generates the bundle of the default [`Design`]. Sizes are as given; `runs` ≥ 1.
pub fn generate(o: SynthOptions) -> ResultsBundle {
    generate_designed(o, Design::default())
}

/// Generates the bundle. Sizes are as given; `runs` ≥ 1.
///
/// Every helper below draws from the one generator in a fixed order: reordering a draw (even two
/// fields of one struct literal) changes every byte after it, and the snapshots pin those bytes.
/// The extra judges and the person draw from a second generator, `extra`.
pub fn generate_designed(o: SynthOptions, d: Design) -> ResultsBundle {
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let mut extra = Extra {
        rng: ChaCha8Rng::seed_from_u64(o.seed ^ 0x7a1d_9e5b_c0de_0002),
        judges: d.judges.max(1),
        graded: Vec::new(),
    };
    let runs = o.runs.max(1);
    let per_repo = d.questions_per_repo.max(1);
    let attempts = d.attempts.max(1);
    let (benchmark, difficulty) = questions(&mut rng, o.questions, per_repo);
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
        extra.draw_graded(o.questions, d.human_grades);
        for (qi, q) in benchmark.iter().enumerate() {
            for attempt in 0..attempts {
                let failed = rng.random_range(0..1000u32) < 8;
                r.answers.push(answer(&mut rng, q, &model, attempt, failed));
                if failed {
                    continue;
                }
                let given = Marked {
                    q,
                    model: &model,
                    attempt,
                    // A latent per-answer quality; judge runs add small noise around it.
                    base: skill - difficulty[qi],
                    scalar: m < 3,
                };
                let run0_total = given.judge(&mut rng, &mut extra, qi, &run_mood, &mut r);
                if run0_total < 6 {
                    r.failure_modes
                        .push(failure_label(&mut rng, &lean, q, &model, attempt));
                }
            }
        }
    }
    let mut note = String::from(
        "SYNTHETIC DATA generated by `repoprobe synth`: not results of any real model or benchmark",
    );
    if d.judges > 1 || d.human_grades > 0 {
        note.push_str(&format!(
            "; every judge is synthetic too (judges {JUDGE}{}{}): no model judged and no person graded",
            if d.judges > 1 { ", synth-judge-N" } else { "" },
            if d.human_grades > 0 {
                format!(" and {GRADER}, a synthetic person's grades")
            } else {
                String::new()
            }
        ));
    }
    ResultsBundle {
        format: BUNDLE_FORMAT.into(),
        version: crate::FORMAT_VERSION,
        meta: Some(serde_json::json!({
            "synthetic": true,
            "note": note,
            "generator": {
                "models": o.models,
                "questions": o.questions,
                "runs": runs,
                "seed": o.seed,
                "questions_per_repo": per_repo,
                "judges": extra.judges,
                "human_grades": d.human_grades,
                "attempts": attempts,
            },
        })),
        benchmark,
        answers: r.answers,
        judgments: r.judgments,
        scalar_judgments: r.scalar_judgments,
        failure_modes: r.failure_modes,
        reported: Vec::new(),
    }
}

/// The bundle of [`generate_designed`] with a run behind every answer: the knowledge items get
/// evidence paths, each answer a synthetic trajectory (returned, in the answers' order) and the
/// `agent` facts of it (turns, tool calls, files read and searched) and a cost. The rest of the
/// bundle is [`generate_designed`]'s, byte for byte.
pub fn generate_with_runs(
    o: SynthOptions,
    d: Design,
) -> (ResultsBundle, Vec<(TrajectoryKey, Trajectory)>) {
    let mut bundle = generate_designed(o, d);
    let runs = trajectories::add(&mut bundle, o.seed);
    (bundle, runs)
}

/// The second generator's state: the extra judges and the person's sample of a model's answers.
struct Extra {
    rng: ChaCha8Rng,
    judges: u32,
    /// Whether the person grades each question's answer of the model being generated.
    graded: Vec<bool>,
}

impl Extra {
    /// Draws which `per_model` of `questions` answers the person grades (a partial shuffle).
    fn draw_graded(&mut self, questions: u32, per_model: u32) {
        self.graded.clear();
        if per_model == 0 {
            return;
        }
        let n = questions as usize;
        let mut order: Vec<u32> = (0..questions).collect();
        let k = (per_model as usize).min(n);
        for i in 0..k {
            let j = i + self.rng.random_range(0..(n - i) as u32) as usize;
            order.swap(i, j);
        }
        self.graded = vec![false; n];
        for &q in &order[..k] {
            self.graded[q as usize] = true;
        }
    }
}

/// The records generated for the models' answers, in the bundle's order.
#[derive(Default)]
struct Records {
    answers: Vec<Answer>,
    judgments: Vec<Judgment>,
    scalar_judgments: Vec<ScalarJudgment>,
    failure_modes: Vec<FailureLabel>,
}

/// A repository of the synthetic benchmark, shared by a group of consecutive questions.
struct RepoDraw {
    repo: Repo,
    /// How much harder than average its questions are, for every model.
    offset: f64,
}

/// The questions, `per_repo` consecutive ones to a repository, with each question's hidden
/// difficulty: its repository's offset plus its own.
fn questions(rng: &mut ChaCha8Rng, count: u32, per_repo: u32) -> (Vec<Question>, Vec<f64>) {
    let repos = count.div_ceil(per_repo).max(1);
    let repo_draws: Vec<RepoDraw> = (0..repos)
        .map(|r| {
            let name = format!("synthetic/repo-{:03}", r + 1);
            let language = pick(rng, &LANGUAGES).to_string();
            let theme = pick(rng, &THEMES).to_string();
            let commit = format!("{:040x}", rng.random::<u128>());
            let offset = REPO_SD * normalish(rng);
            RepoDraw {
                repo: Repo {
                    url: format!("https://example.invalid/{name}"),
                    name,
                    commit,
                    language,
                    theme,
                },
                offset,
            }
        })
        .collect();
    let mut benchmark = Vec::with_capacity(count as usize);
    let mut difficulty = Vec::with_capacity(count as usize);
    for i in 0..count {
        let repo = &repo_draws[(i / per_repo) as usize];
        difficulty.push(repo.offset + QUESTION_SD * normalish(rng));
        benchmark.push(Question {
            id: format!("synth-q-{:04}", i + 1),
            repo: repo.repo.clone(),
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
fn answer(rng: &mut ChaCha8Rng, q: &Question, model: &str, attempt: u32, failed: bool) -> Answer {
    Answer {
        question_id: q.id.clone(),
        model: model.to_string(),
        attempt,
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
    attempt: u32,
    base: f64,
    /// Whether the scalar baseline judges it too (the first three models).
    scalar: bool,
}

impl Marked<'_> {
    /// Every judge run over the answer (and the scalar baseline's, when it judges it), then the
    /// extra judges' and the person's; returns the first run's total.
    fn judge(
        &self,
        rng: &mut ChaCha8Rng,
        extra: &mut Extra,
        qi: usize,
        run_mood: &[f64],
        r: &mut Records,
    ) -> u32 {
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
                .map(|(c, &l)| item_score(rng, c, l, Voice::MODEL))
                .collect();
            let total: u32 = items.iter().map(|i| i.score).sum();
            if run == 0 {
                run0_total = total;
            }
            r.judgments.push(self.judgment(JUDGE, run, items));
            if self.scalar {
                r.scalar_judgments
                    .push(self.scalar_judgment(rng, run, mood));
            }
        }
        for k in 2..=extra.judges {
            // Each further judge leans its own way (alternately lenient and strict) and is noisier.
            let lean = if k % 2 == 0 { 0.3 } else { -0.25 } * (1.0 + f64::from(k / 2 - 1) * 0.2);
            let voice = Voice {
                lean,
                noise: 0.45,
                person: false,
            };
            let items = self.items(&mut extra.rng, &latent, voice);
            r.judgments
                .push(self.judgment(&format!("synth-judge-{k}"), 0, items));
        }
        if self.attempt == 0 && extra.graded.get(qi).copied().unwrap_or(false) {
            let items = self.items(&mut extra.rng, &latent, Voice::PERSON);
            r.judgments.push(self.judgment(GRADER, 0, items));
        }
        run0_total
    }

    fn items(&self, rng: &mut ChaCha8Rng, latent: &[f64], voice: Voice) -> Vec<ItemScore> {
        self.q
            .checklist
            .iter()
            .zip(latent)
            .map(|(c, &l)| item_score(rng, c, l, voice))
            .collect()
    }

    fn judgment(&self, judge: &str, run: u32, items: Vec<ItemScore>) -> Judgment {
        Judgment {
            question_id: self.q.id.clone(),
            model: self.model.to_string(),
            attempt: self.attempt,
            judge: judge.to_string(),
            judge_run: run,
            items,
        }
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
            attempt: self.attempt,
            judge: JUDGE.into(),
            judge_run: run,
            dimensions: dims,
            max_per_dimension: 10,
            rationale: paragraph(rng, 2),
        }
    }
}

/// How a judge scores: its leaning (added to the answer's quality), its noise, and whether it
/// is a person (who writes short rationales).
#[derive(Debug, Clone, Copy)]
struct Voice {
    lean: f64,
    noise: f64,
    person: bool,
}

impl Voice {
    /// The first judge.
    const MODEL: Voice = Voice {
        lean: 0.0,
        noise: 0.15,
        person: false,
    };
    /// The synthetic person: a little strict, and closer to the answer's quality than a judge.
    const PERSON: Voice = Voice {
        lean: -0.1,
        noise: 0.3,
        person: true,
    };
}

/// One judge run's score of item `c` for an answer of latent quality `l` on it.
fn item_score(rng: &mut ChaCha8Rng, c: &ChecklistItem, l: f64, v: Voice) -> ItemScore {
    let p = squash(
        1.3 * (l + v.lean + v.noise * normalish(rng))
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
    let verdict = if score == c.weight {
        "covers"
    } else if score == 0 {
        "misses"
    } else {
        "partly covers"
    };
    let rationale = if v.person {
        format!(
            "SYNTHETIC grade (no person graded this): {verdict} {}; {score} of {}.",
            c.key_point.to_lowercase(),
            c.weight
        )
    } else {
        format!(
            "The answer {verdict} {}. {} Against the rubric this earns {score} of {}.",
            c.key_point.to_lowercase(),
            paragraph(rng, 2),
            c.weight
        )
    };
    ItemScore {
        id: c.id.clone(),
        rationale,
        score,
    }
}

/// A failure-mode label for a low-scoring answer, drawn by the model's leaning.
fn failure_label(
    rng: &mut ChaCha8Rng,
    lean: &[f64],
    q: &Question,
    model: &str,
    attempt: u32,
) -> FailureLabel {
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
        attempt,
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
        let (bundle, runs) = generate_with_runs(o, Design::default());
        assert_eq!(
            runs,
            generate_with_runs(o, Design::default()).1,
            "deterministic"
        );
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

    fn run0_totals(b: &ResultsBundle, judge: &str) -> Vec<(String, String, u32)> {
        b.judgments
            .iter()
            .filter(|j| j.judge == judge && j.judge_run == 0)
            .map(|j| (j.question_id.clone(), j.model.clone(), j.total()))
            .collect()
    }

    #[test]
    fn questions_come_in_groups_that_share_their_repository() {
        let o = SynthOptions {
            models: 2,
            questions: 10,
            runs: 1,
            seed: 4,
        };
        let d = Design {
            questions_per_repo: 4,
            ..Design::default()
        };
        let b = generate_designed(o, d);
        let repos: Vec<&Repo> = b.benchmark.iter().map(|q| &q.repo).collect();
        // 4 + 4 + 2: each group's questions share every field of their repository.
        for (i, r) in repos.iter().enumerate() {
            assert_eq!(*r, repos[i / 4 * 4], "question {i}");
            assert_eq!(r.name, format!("synthetic/repo-{:03}", i / 4 + 1));
            assert_eq!(r.url, format!("https://example.invalid/{}", r.name));
        }
        assert_ne!(repos[3].commit, repos[4].commit);
        assert_eq!(
            b.meta.as_ref().unwrap()["generator"]["questions_per_repo"],
            4
        );
        // The default is the benchmark's ten to a repository.
        let b = generate(SynthOptions { questions: 25, ..o });
        let names: Vec<&str> = b.benchmark.iter().map(|q| q.repo.name.as_str()).collect();
        assert_eq!(names[9], "synthetic/repo-001");
        assert_eq!(names[10], "synthetic/repo-002");
        assert_eq!(names[24], "synthetic/repo-003");
    }

    /// Questions of one repository score alike for every model: the repositories' mean scores
    /// spread far more than means of as many independent questions would.
    #[test]
    fn the_repository_effect_moves_a_repositorys_questions_together() {
        let per_repo = 6;
        let o = SynthOptions {
            models: 6,
            questions: 180,
            runs: 1,
            seed: 11,
        };
        let b = generate_designed(
            o,
            Design {
                questions_per_repo: per_repo,
                ..Design::default()
            },
        );
        let mut by_question: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for (q, _, t) in run0_totals(&b, JUDGE) {
            by_question.entry(q).or_default().push(f64::from(t));
        }
        let q_means: Vec<f64> = by_question
            .values()
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
            .collect();
        let r_means: Vec<f64> = q_means
            .chunks(per_repo as usize)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64)
            .collect();
        let var = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
        };
        // Independent questions: var(repository mean) = var(question mean) / per_repo.
        let ratio = var(&r_means) / (var(&q_means) / f64::from(per_repo));
        assert!(ratio > 3.0, "design effect {ratio}");
    }

    #[test]
    fn more_judges_and_a_persons_grades_judge_the_same_answers() {
        let o = SynthOptions {
            models: 4,
            questions: 30,
            runs: 2,
            seed: 9,
        };
        let d = Design {
            questions_per_repo: 5,
            judges: 2,
            human_grades: 6,
            attempts: 1,
        };
        let b = generate_designed(o, d);
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            serde_json::to_string(&generate_designed(o, d)).unwrap()
        );
        let text = serde_json::to_string(&b).unwrap();
        let loaded = crate::load(
            &[crate::SourceFile {
                name: "s.json",
                bytes: text.as_bytes(),
            }],
            Default::default(),
        );
        assert_eq!(loaded.issues, vec![]);
        // The first judge is the one in force, and is the bundle's without the others.
        assert_eq!(
            crate::metrics::judge_in_force(&loaded.dataset, None).unwrap(),
            Some(JUDGE.to_string())
        );
        let alone = generate_designed(
            o,
            Design {
                judges: 1,
                human_grades: 0,
                ..d
            },
        );
        let first: Vec<&Judgment> = b.judgments.iter().filter(|j| j.judge == JUDGE).collect();
        assert_eq!(first, alone.judgments.iter().collect::<Vec<_>>());
        assert_eq!(b.answers, alone.answers);
        // The second judge judged every answer the first did, once; the person six per model.
        let one = run0_totals(&b, JUDGE);
        let two = run0_totals(&b, "synth-judge-2");
        let person = run0_totals(&b, GRADER);
        assert_eq!(one.len(), two.len());
        assert!(
            b.judgments
                .iter()
                .filter(|j| j.judge != JUDGE)
                .all(|j| j.judge_run == 0)
        );
        assert!((20..=24).contains(&person.len()), "{}", person.len());
        for m in 0..4 {
            let model = format!("synth-model-{:02}", m + 1);
            assert!(person.iter().filter(|p| p.1 == model).count() <= 6);
        }
        // Correlated with the first judge, not identical.
        let first_total: std::collections::BTreeMap<(&str, &str), u32> = one
            .iter()
            .map(|(q, m, t)| ((q.as_str(), m.as_str()), *t))
            .collect();
        let agree = |other: &[(String, String, u32)]| {
            let same = other
                .iter()
                .filter(|(q, m, t)| first_total[&(q.as_str(), m.as_str())] == *t)
                .count();
            let close = other
                .iter()
                .filter(|(q, m, t)| first_total[&(q.as_str(), m.as_str())].abs_diff(*t) <= 2)
                .count();
            (
                same as f64 / other.len() as f64,
                close as f64 / other.len() as f64,
            )
        };
        let (same, close) = agree(&two);
        assert!(same < 0.9 && close > 0.6, "{same} {close}");
        let (same, close) = agree(&person);
        assert!(same < 0.95 && close > 0.6, "{same} {close}");
        let report = crate::metrics::judges::judges(&loaded.dataset, &Default::default()).unwrap();
        assert_eq!(report.pairs.len(), 3);
    }
}
