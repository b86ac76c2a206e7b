//! A plan as the commands that carry it out, in their order: each model's answers, its
//! checklist judgments (with the reliability stage's runs for its models), the scalar judgments
//! of the reliability stage, the failure labels, then the bundle and the tables. Each stage is
//! a command line a user could type; its output sits at a fixed place under the plan's `out`, so
//! running the plan again resumes every stage where its journal stopped.

use super::{Endpoint, ModelUnderTest, Plan, slug};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One command of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// `answers`, `judgments`, `scalar`, `failures`, `bundle`, `tables`.
    pub stage: &'static str,
    /// The model it is about (its plan name), or `all`.
    pub who: String,
    /// The command line, without the program's name.
    pub args: Vec<OsString>,
    /// Its output file.
    pub out: PathBuf,
}

/// How the plan is run this time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// `answer --retry-failed` on every answers stage.
    pub retry_failed: bool,
    /// This process's shard of the plan (a task of a Slurm array or a Kubernetes Indexed Job):
    /// its answers are the answer keys the shard owns, and every later stage works on those
    /// answers only, so no task waits for another; the tables are made once all have ended.
    pub shard: Option<crate::shard::Shard>,
}

/// The plan's files, its paths taken relative to the plan file's directory `base`.
#[derive(Debug, Clone)]
pub struct Files {
    pub benchmark: PathBuf,
    pub out: PathBuf,
    pub repos: PathBuf,
    /// A shard's files carry its label (`GLM-5-0001-of-0004.jsonl`).
    pub shard: Option<crate::shard::Shard>,
}

impl Files {
    pub fn of(plan: &Plan, base: &Path) -> Files {
        let out = base.join(&plan.out);
        Files {
            benchmark: base.join(&plan.benchmark),
            repos: plan
                .repos
                .as_ref()
                .map_or_else(|| out.join("repos"), |r| base.join(r)),
            out,
            shard: None,
        }
    }

    /// A stage's output for a model: `<out>/<stage>/<name>.jsonl`, or with this shard's label.
    pub fn stage(&self, stage: &str, name: &str) -> PathBuf {
        let label = self
            .shard
            .map_or(String::new(), |s| format!("-{}", s.label()));
        self.out
            .join(stage)
            .join(format!("{}{label}.jsonl", slug(name)))
    }

    pub fn answers(&self, name: &str) -> PathBuf {
        self.stage("answers", name)
    }

    /// What `answer --out` is given: under a shard, the template with `{shard}` that every
    /// task shares (one run, one manifest), which `answer` renders as [`Files::answers`].
    pub fn answers_template(&self, name: &str) -> PathBuf {
        match self.shard {
            Some(_) => self.out.join("answers").join(format!(
                "{}-{}.jsonl",
                slug(name),
                crate::runs::SHARD_MARK
            )),
            None => self.answers(name),
        }
    }

    pub fn judgments(&self, name: &str) -> PathBuf {
        self.stage("judgments", name)
    }

    pub fn scalar(&self, name: &str) -> PathBuf {
        self.stage("scalar", name)
    }

    pub fn failures(&self, name: &str) -> PathBuf {
        self.stage("failures", name)
    }

    /// Every output of a stage for a model, the whole run's or its shards' (`<name>.jsonl`,
    /// `<name>-0001-of-0004.jsonl`), whatever this process's shard.
    pub fn all_of(&self, stage: &str, name: &str) -> Vec<PathBuf> {
        let base = slug(name);
        let ours = |file: &str| {
            let Some(rest) = file.strip_prefix(base.as_str()) else {
                return false;
            };
            rest == ".jsonl"
                || rest
                    .strip_prefix('-')
                    .and_then(|r| r.strip_suffix(".jsonl"))
                    .is_some_and(|l| {
                        let mut parts = l.split("-of-");
                        let digits = |p: Option<&str>| {
                            p.is_some_and(|p| {
                                !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
                            })
                        };
                        digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
                    })
        };
        crate::input::dir_files(&self.out.join(stage))
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|f| ours(&f.to_string_lossy())))
            .collect()
    }

    pub fn bundle(&self) -> PathBuf {
        self.out.join("bundle.json")
    }
}

/// Every stage of `plan`, in order.
pub fn stages(plan: &Plan, files: &Files, opts: Options) -> Vec<Stage> {
    let shards = opts.shard.map_or(1, |s| u64::from(s.count));
    let mut v: Vec<Stage> = plan
        .models
        .iter()
        .map(|m| answers(plan, files, m, opts))
        .collect();
    for j in judged(plan) {
        let mut args = strings(&["judge", "--benchmark"]);
        args.push(files.benchmark.clone().into());
        args.push("--answers".into());
        args.push(files.answers(j.model).into());
        args.extend(strings(&["--runs", &j.runs.to_string()]));
        v.push(api_stage(
            "judgments",
            &j.who,
            args,
            (files.judgments(&j.who), shards),
            j.judge,
        ));
    }
    if let Some(r) = &plan.reliability {
        for name in &r.models {
            let mut args = strings(&["judge-scalar", "--benchmark"]);
            args.push(files.benchmark.clone().into());
            args.push("--answers".into());
            args.push(files.answers(name).into());
            args.extend(strings(&["--runs", &r.runs.to_string()]));
            v.push(api_stage(
                "scalar",
                name,
                args,
                (files.scalar(name), shards),
                &r.scalar,
            ));
        }
    }
    if let Some(f) = &plan.failures {
        for name in &f.models {
            let mut args = strings(&["classify-failures", "--benchmark"]);
            args.push(files.benchmark.clone().into());
            args.push("--answers".into());
            args.push(files.answers(name).into());
            args.push("--judgments".into());
            args.push(files.judgments(name).into());
            args.extend(strings(&["--judge", &plan.judge().model]));
            v.push(api_stage(
                "failures",
                name,
                args,
                (files.failures(name), shards),
                &f.classifier,
            ));
        }
    }
    v
}

/// One judgments stage: a judge on one model's answers.
pub struct Judged<'p> {
    /// The stage's name in lines and files: the model's name for the judge in force, `MODEL.JUDGE`
    /// for every other `[[judge]]`.
    pub who: String,
    /// The model whose answers are judged (its plan name).
    pub model: &'p str,
    pub judge: &'p Endpoint,
    pub runs: u32,
}

/// Every judgments stage of the plan, model by model, the judge in force first: the one list
/// the stages, the status and the estimate read.
pub fn judged(plan: &Plan) -> Vec<Judged<'_>> {
    let mut v = Vec::new();
    for m in &plan.models {
        for (n, j) in plan.judge.iter().enumerate() {
            v.push(Judged {
                who: if n == 0 {
                    m.name.clone()
                } else {
                    format!("{}.{}", m.name, j.model)
                },
                model: &m.name,
                judge: j,
                runs: if n == 0 {
                    judge_runs(plan, &m.name)
                } else {
                    j.runs.unwrap_or(1)
                },
            });
        }
    }
    v
}

/// The judge runs on `name`'s answers by the judge in force: the reliability stage's on its
/// models (Table 5 reads them), else its `runs` (1 when not said).
pub fn judge_runs(plan: &Plan, name: &str) -> u32 {
    let base = plan.judge().runs.unwrap_or(1);
    match &plan.reliability {
        Some(r) if r.models.iter().any(|m| m == name) => base.max(r.runs),
        _ => base,
    }
}

/// `answer` for one model.
fn answers(plan: &Plan, files: &Files, m: &ModelUnderTest, opts: Options) -> Stage {
    let out = files.answers(&m.name);
    let mut args = strings(&["answer", "--benchmark"]);
    args.push(files.benchmark.clone().into());
    args.push("--out".into());
    args.push(files.answers_template(&m.name).into());
    if let Some(s) = opts.shard {
        args.extend(strings(&["--shard", &s.to_string()]));
    }
    args.push("--repos".into());
    args.push(files.repos.clone().into());
    args.extend(strings(&[
        "--agent", &m.agent, "--model", &m.model, "--name", &m.name,
    ]));
    args.extend(strings(&[
        "--attempts",
        &m.attempts.unwrap_or(1).to_string(),
    ]));
    for r in &plan.repo_map {
        args.extend(strings(&["--repo-map", r]));
    }
    let flag = |args: &mut Vec<OsString>, name: &str, v: Option<String>| {
        if let Some(v) = v {
            args.extend(strings(&[name, &v]));
        }
    };
    flag(&mut args, "--provider", m.provider.clone());
    let url_flag = if m.agent == "builtin" {
        "--base-url"
    } else {
        "--agent-api-url"
    };
    flag(&mut args, url_flag, m.base_url.clone());
    flag(&mut args, "--key-env", m.key_env.clone());
    flag(&mut args, "--agent-key-var", m.key_var.clone());
    if m.local {
        args.extend(strings(LOCAL));
    }
    flag(&mut args, "--max-turns", m.max_turns.map(|n| n.to_string()));
    flag(
        &mut args,
        "--concurrency",
        m.concurrency.map(|n| n.to_string()),
    );
    flag(&mut args, "--command", m.command.clone());
    if let Some(bin) = &m.agent_bin {
        args.push("--agent-bin".into());
        args.push(bin.clone().into());
    }
    for d in &m.sandbox_expose {
        args.push("--sandbox-expose".into());
        args.push(d.clone().into());
    }
    if let Some(p) = m.price {
        args.extend(strings(&[
            "--price-in",
            &p.input.to_string(),
            "--price-out",
            &p.output.to_string(),
        ]));
    }
    if opts.retry_failed {
        args.push("--retry-failed".into());
    }
    args.extend(m.args.iter().map(OsString::from));
    Stage {
        stage: "answers",
        who: m.name.clone(),
        args,
        out,
    }
}

/// A stage of a model called through its API: `args` and the endpoint's flags.
/// `shards`: the tasks the plan runs as, which share the endpoint's `rpm` and `tpm` (each taking
/// 1/N).
fn api_stage(
    stage: &'static str,
    who: &str,
    mut args: Vec<OsString>,
    (out, shards): (PathBuf, u64),
    e: &Endpoint,
) -> Stage {
    args.push("--out".into());
    args.push(out.clone().into());
    args.extend(strings(&["--provider", &e.provider, "--model", &e.model]));
    let opt = |args: &mut Vec<OsString>, name: &str, v: Option<String>| {
        if let Some(v) = v {
            args.extend(strings(&[name, &v]));
        }
    };
    opt(&mut args, "--base-url", e.base_url.clone());
    opt(&mut args, "--key-env", e.key_env.clone());
    if e.local {
        args.extend(strings(LOCAL));
    }
    opt(
        &mut args,
        "--concurrency",
        e.concurrency.map(|n| n.to_string()),
    );
    let share = |n: u64| (n / shards).max(1).to_string();
    opt(&mut args, "--rpm", e.rpm.map(share));
    opt(&mut args, "--tpm", e.tpm.map(share));
    opt(
        &mut args,
        "--temperature",
        e.temperature.map(|n| n.to_string()),
    );
    opt(
        &mut args,
        "--max-tokens",
        e.max_tokens.map(|n| n.to_string()),
    );
    if let Some(p) = e.price {
        args.extend(strings(&[
            "--price-in",
            &p.input.to_string(),
            "--price-out",
            &p.output.to_string(),
        ]));
    }
    args.extend(e.args.iter().map(OsString::from));
    Stage {
        stage,
        who: who.to_string(),
        args,
        out,
    }
}

/// A `local = true` model's flags: served by the user, so no key and no charge.
const LOCAL: &[&str] = &["--no-key", "--price-in", "0", "--price-out", "0"];

fn strings(s: &[&str]) -> Vec<OsString> {
    s.iter().map(OsString::from).collect()
}

/// A command line as it would be typed (each argument shell-quoted when it needs it).
pub fn shown(args: &[OsString]) -> String {
    std::iter::once("repoprobe".to_string())
        .chain(args.iter().map(|a| {
            let a = a.to_string_lossy();
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
            {
                a.into_owned()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}
