//! Synthetic runs for the demo set: each answer gets a trajectory (listing, searches, reads, now
//! and then an edit the sandbox refuses, the answer) whose reads are drawn against its
//! question's evidence, more of it for the answers the judge scored higher, and the answer
//! record's `agent` block is then the core's `Facts` of that trajectory, so that files read,
//! evidence, tool calls and edits agree by construction. Every file, path and output says
//! SYNTHETIC. Drawn from a generator of its own (seeded from the bundle's seed), so that a
//! bundle with runs is the bundle without them plus evidence, facts and cost.

use crate::facts::Facts;
use crate::model::trajectory::{
    Observation, ObservationResult, Step, StepMetrics, StepSource, ToolCall, Trajectory,
    TrajectoryAgent,
};
use crate::model::{FailureMode, ItemKind, Question, ResultsBundle};
use crate::trajectories::TrajectoryKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Files per synthetic repository.
const FILES: usize = 14;
const DIRS: [&str; 5] = ["src", "lib", "core", "internal", "pkg"];
const STEMS: [&str; 14] = [
    "router",
    "plugins",
    "cache",
    "config",
    "session",
    "scheduler",
    "cli",
    "storage",
    "events",
    "auth",
    "render",
    "pipeline",
    "client",
    "errors",
];

fn extension(language: &str) -> &'static str {
    match language {
        "Python" => "py",
        "TypeScript" => "ts",
        "Go" => "go",
        "Rust" => "rs",
        "Java" => "java",
        "JavaScript" => "js",
        "C++" => "cpp",
        "C" => "c",
        "C#" => "cs",
        "Ruby" => "rb",
        "PHP" => "php",
        "Swift" => "swift",
        "Shell" => "sh",
        "Lua" => "lua",
        _ => "txt",
    }
}

/// A repository's files: `DIR/STEM.EXT`, the same for every question of the repository.
fn files_of(repo: &str, language: &str) -> Vec<String> {
    let n: usize = repo.bytes().map(usize::from).sum();
    (0..FILES)
        .map(|i| {
            format!(
                "{}/{}.{}",
                DIRS[(n + i) % DIRS.len()],
                STEMS[(n + 3 * i) % STEMS.len()],
                extension(language)
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Gives the bundle's knowledge items evidence and every answer a trajectory; returns the
/// trajectories in the answers' order.
pub fn add(bundle: &mut ResultsBundle, seed: u64) -> Vec<(TrajectoryKey, Trajectory)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_7a1e_c701_0001);
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for q in &mut bundle.benchmark {
        let pool = files
            .entry(q.repo.name.clone())
            .or_insert_with(|| files_of(&q.repo.name, &q.repo.language));
        for item in q
            .checklist
            .iter_mut()
            .filter(|c| c.kind == ItemKind::Knowledge)
        {
            let n = rng.random_range(1..=2usize);
            for _ in 0..n {
                let p = pool[rng.random_range(0..pool.len() as u32) as usize].clone();
                if !item.evidence.iter().any(|e| e.path == p) {
                    item.evidence
                        .push(crate::model::evidence::EvidencePath::new(p));
                }
            }
        }
    }
    let first_run: BTreeMap<(String, String, u32), u32> = bundle
        .judgments
        .iter()
        .filter(|j| j.judge_run == 0 && j.judge == super::JUDGE)
        .map(|j| {
            (
                (j.question_id.clone(), j.model.clone(), j.attempt),
                j.total(),
            )
        })
        .collect();
    let edit_bias: std::collections::BTreeSet<(String, String, u32)> = bundle
        .failure_modes
        .iter()
        .filter(|l| l.mode == FailureMode::EditBias)
        .map(|l| (l.question_id.clone(), l.model.clone(), l.attempt))
        .collect();
    let questions: BTreeMap<&str, &Question> = bundle
        .benchmark
        .iter()
        .map(|q| (q.id.as_str(), q))
        .collect();
    let mut out = Vec::with_capacity(bundle.answers.len());
    for a in &mut bundle.answers {
        let Some(q) = questions.get(a.question_id.as_str()) else {
            continue;
        };
        let key = (a.question_id.clone(), a.model.clone(), a.attempt);
        let plan = SyntheticRun {
            q,
            files: &files[&q.repo.name],
            // 0–10; a failed run (no judgment) explores like a weak one.
            quality: first_run.get(&key).copied().unwrap_or(2),
            edits: edit_bias.contains(&key),
            answer: a.answer.as_deref(),
            error: a.error.as_deref(),
            model: &a.model,
        };
        let t = plan.trajectory(&mut rng);
        let facts = Facts::of(&t);
        let usage = a.usage.get_or_insert_with(Default::default);
        // A price of $3 / $15 per million tokens: plausible, invented like everything here.
        usage.cost_usd = Some(
            (usage.input_tokens.unwrap_or(0) * 3 + usage.output_tokens.unwrap_or(0) * 15) as f64
                / 1e6,
        );
        a.agent = serde_json::from_value(json!({
            "name": "synthetic",
            "turns": facts.turns,
            "tool_calls": facts.tool_calls,
            "files_read": facts.files_read,
            "files_searched": facts.files_searched,
            "worktree_changed": false,
            "sandbox": "synthetic (edits refused)",
        }))
        .ok();
        out.push((
            TrajectoryKey {
                question_id: a.question_id.clone(),
                model: a.model.clone(),
                attempt: a.attempt,
            },
            t,
        ));
    }
    out
}

/// What one run is to do.
struct SyntheticRun<'a> {
    q: &'a Question,
    files: &'a [String],
    quality: u32,
    edits: bool,
    answer: Option<&'a str>,
    error: Option<&'a str>,
    model: &'a str,
}

/// The worktree the synthetic agent saw (paths in its calls are made relative to it).
fn worktree(repo: &str) -> String {
    format!("/synthetic/worktrees/{}", repo.replace('/', "-"))
}

impl SyntheticRun<'_> {
    fn trajectory(&self, rng: &mut ChaCha8Rng) -> Trajectory {
        let mut t = Trajectory::new(TrajectoryAgent {
            name: "synthetic".into(),
            version: "0".into(),
            model_name: Some(self.model.to_string()),
            tool_definitions: None,
            extra: None,
        });
        let root = worktree(&self.q.repo.name);
        t.extra = Some(Map::from_iter([
            ("worktree".to_string(), Value::String(root.clone())),
            ("synthetic".to_string(), Value::Bool(true)),
        ]));
        t.notes =
            Some("SYNTHETIC run made by `repoprobe synth --trajectories`: no model ran".into());
        t.push(Step::new(StepSource::User, self.q.question.clone()));
        let mut calls = Calls {
            t: &mut t,
            n: 0,
            rng,
        };
        calls.call("list_dir", json!({"path": "."}), listing(self.files), false);
        let evidence: Vec<&str> = self
            .q
            .checklist
            .iter()
            .flat_map(|c| c.evidence.iter().map(|e| e.path.as_str()))
            .collect();
        // The better the answer was judged, the likelier each evidence file was read.
        let p_read = 0.1 + 0.085 * f64::from(self.quality);
        let mut to_read: Vec<String> = Vec::new();
        for e in &evidence {
            if unit(calls.rng) < p_read && !to_read.iter().any(|r| r == e) {
                to_read.push(e.to_string());
            }
        }
        for _ in 0..calls.rng.random_range(1..=3u32) {
            let f = &self.files[calls.rng.random_range(0..self.files.len() as u32) as usize];
            if !to_read.contains(f) {
                to_read.insert(
                    calls.rng.random_range(0..=to_read.len() as u32) as usize,
                    f.clone(),
                );
            }
        }
        let hits: Vec<&String> = to_read.iter().take(2).collect();
        calls.call(
            "search",
            json!({"pattern": "SYNTHETIC", "path": "."}),
            hits.iter()
                .map(|h| format!("{h}:1: # SYNTHETIC"))
                .collect::<Vec<_>>()
                .join("\n"),
            false,
        );
        for (i, f) in to_read.iter().enumerate() {
            // Now and then by absolute path, as agents do.
            let path = if i % 3 == 2 {
                format!("{root}/{f}")
            } else {
                f.clone()
            };
            calls.call("read_file", json!({"path": path}), contents(f), false);
        }
        if self.edits || unit(calls.rng) < 0.04 {
            let f = to_read
                .first()
                .cloned()
                .unwrap_or_else(|| self.files[0].clone());
            calls.call(
                "write_file",
                json!({"path": f, "content": "# SYNTHETIC fix\n"}),
                "refused: the repository is read-only in this sandbox (SYNTHETIC)".into(),
                true,
            );
        }
        match (self.error, self.answer) {
            (Some(e), _) => {
                let s = t.push(Step::new(StepSource::Agent, ""));
                s.set_extra("error", Value::String(e.to_string()));
            }
            (None, text) => {
                t.push(Step::new(
                    StepSource::Agent,
                    text.unwrap_or_default().to_string(),
                ));
            }
        }
        t.final_metrics = Some(t.summed_metrics());
        t
    }
}

/// Numbered tool calls, each in a step of its own with its result.
struct Calls<'t, 'r> {
    t: &'t mut Trajectory,
    n: u32,
    rng: &'r mut ChaCha8Rng,
}

impl Calls<'_, '_> {
    fn call(&mut self, name: &str, args: Value, output: String, failed: bool) {
        self.n += 1;
        let id = format!("call_{}", self.n);
        let prompt = 2_000 + 900 * u64::from(self.n) + self.rng.random_range(0..400u64);
        let s = self.t.push(Step::new(StepSource::Agent, ""));
        s.tool_calls = Some(vec![ToolCall::new(&id, name, args)]);
        s.observation = Some(Observation {
            results: vec![ObservationResult::of(&id, output, failed)],
        });
        s.metrics = Some(StepMetrics {
            prompt_tokens: Some(prompt),
            completion_tokens: Some(self.rng.random_range(20..200u64)),
            ..StepMetrics::default()
        });
    }
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.random::<u64>() >> 11) as f64 / (1u64 << 53) as f64
}

fn listing(files: &[String]) -> String {
    let mut dirs: Vec<&str> = files.iter().filter_map(|f| f.split('/').next()).collect();
    dirs.dedup();
    let mut out: Vec<String> = dirs.iter().map(|d| format!("{d}/")).collect();
    out.push("README.md (SYNTHETIC)".into());
    out.join("\n")
}

fn contents(path: &str) -> String {
    let stem = path.rsplit('/').next().unwrap_or(path);
    format!(
        "1\t# SYNTHETIC file {path}: not the code of any real project\n\
         2\t# {stem} hands its payload to the next stage\n\
         3\tdef handle(payload):\n\
         4\t    checked = validate(payload)\n\
         5\t    return dispatch(checked)\n"
    )
}
