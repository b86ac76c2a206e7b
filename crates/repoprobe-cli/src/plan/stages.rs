//! A plan as the commands that carry it out, in their order: each model's answers, its
//! checklist judgments (with the reliability stage's runs for its models), the scalar judgments
//! of the reliability stage, the failure labels, then the bundle and the tables. Each stage is
//! the command's own arguments, set from the plan (`line.rs`), and the command line a user could
//! type for the same; its output sits at a fixed place under the plan's `out`, so running the
//! plan again resumes every stage where its journal stopped.

use super::line::{Invocation, Line, LineError, Live};
use super::{Endpoint, ModelUnderTest, Plan, PriceSpec, slug};
use crate::commands::answer::{self, AgentKind};
use crate::commands::{bundle, classify_failures, judge, judge_scalar, score};
use crate::live::{RunArgs, ShardArg};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One command of the plan.
#[derive(Debug, Clone)]
pub struct Stage {
    /// `answers`, `judgments`, `scalar`, `failures`, `bundle`, `tables`.
    pub stage: &'static str,
    /// The model it is about (its plan name), or `all`.
    pub who: String,
    /// What runs: the command's arguments.
    pub command: Invocation,
    /// The same as the command line a user could type, without the program's name.
    pub line: Vec<OsString>,
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
                crate::run_files::SHARD_MARK
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

/// Every stage of `plan`, in order; refused: a flag of a plan's `args` the command does not
/// take, or that the plan sets already.
pub fn stages(plan: &Plan, files: &Files, opts: Options) -> Result<Vec<Stage>, LineError> {
    let shards = opts.shard.map_or(1, |s| u64::from(s.count));
    let mut v = Vec::new();
    for m in &plan.models {
        v.push(
            answers(plan, files, m, opts).map_err(|e| LineError::OfModel {
                name: m.name.clone(),
                problem: Box::new(e),
            })?,
        );
    }
    for j in judged(plan) {
        let mut l = Line::<judge::Args>::new("judge", &j.judge.args)?;
        answer_inputs(&mut l, files, j.model, j.runs, |a| &mut a.inputs);
        let out = (files.judgments(&j.who), shards);
        v.push(api_stage(
            "judgments",
            &j.who,
            l,
            out,
            j.judge,
            Invocation::Judge,
        )?);
    }
    if let Some(r) = &plan.reliability {
        for name in &r.models {
            let mut l = Line::<judge_scalar::Args>::new("judge-scalar", &r.scalar.args)?;
            answer_inputs(&mut l, files, name, r.runs, |a| &mut a.inputs);
            let out = (files.scalar(name), shards);
            v.push(api_stage(
                "scalar",
                name,
                l,
                out,
                &r.scalar,
                Invocation::JudgeScalar,
            )?);
        }
    }
    if let Some(f) = &plan.failures {
        for name in &f.models {
            let mut l =
                Line::<classify_failures::Args>::new("classify-failures", &f.classifier.args)?;
            l.positional(
                |a| &mut a.files,
                [
                    files.benchmark.clone(),
                    files.answers(name),
                    files.judgments(name),
                ],
            );
            l.some(
                "--judge",
                |a| &mut a.judge,
                Some(plan.judge().model.clone()),
            );
            let out = (files.failures(name), shards);
            v.push(api_stage(
                "failures",
                name,
                l,
                out,
                &f.classifier,
                Invocation::ClassifyFailures,
            )?);
        }
    }
    Ok(v)
}

/// The answers a judge reads: the benchmark, then `model`'s answers (`Invocation::answers`
/// reads them in this order), and `--runs`.
fn answer_inputs<A: Default + clap::Args + clap::FromArgMatches>(
    l: &mut Line<A>,
    files: &Files,
    model: &str,
    runs: u32,
    inputs: fn(&mut A) -> &mut judge::AnswerInputs,
) {
    l.positional(
        |a| &mut inputs(a).files,
        [files.benchmark.clone(), files.answers(model)],
    );
    l.value("--runs", |a| &mut inputs(a).runs, runs);
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
fn answers(
    plan: &Plan,
    files: &Files,
    m: &ModelUnderTest,
    opts: Options,
) -> Result<Stage, LineError> {
    let mut l = Line::<answer::Args>::new("answer", &m.args)?;
    l.positional(|a| &mut a.files, [files.benchmark.clone()]);
    l.value("--out", |a| &mut a.run.out, files.answers_template(&m.name));
    l.some(
        "--shard",
        |a| &mut a.run.shard,
        opts.shard.map(ShardArg::Fixed),
    );
    l.value(
        "--clone-cache",
        |a| &mut a.repo.clone_cache,
        files.repos.clone(),
    );
    l.value("--agent", |a| &mut a.agent, m.agent);
    l.each("--model", |a| &mut a.api.model, [m.model.clone()]);
    l.some("--name", |a| &mut a.name, Some(m.name.clone()));
    l.value("--attempts", |a| &mut a.attempts, m.attempts.unwrap_or(1));
    l.each(
        "--repo-map",
        |a| &mut a.repo.repo_map,
        plan.repo_map.iter().cloned(),
    );
    l.some("--provider", |a| &mut a.api.provider, m.provider);
    if m.agent == AgentKind::Builtin {
        l.some("--base-url", |a| &mut a.api.base_url, m.base_url.clone());
    } else {
        l.some(
            "--agent-api-url",
            |a| &mut a.agent_api_url,
            m.base_url.clone(),
        );
    }
    l.some("--key-env", |a| &mut a.api.key_env, m.key_env.clone());
    l.some(
        "--agent-key-var",
        |a| &mut a.agent_key_var,
        m.key_var.clone(),
    );
    if m.local {
        local(&mut l, |a| &mut a.api.no_key, |a| &mut a.run);
    }
    l.value_if("--max-turns", |a| &mut a.max_turns, m.max_turns);
    l.value_if("--concurrency", |a| &mut a.run.concurrency, m.concurrency);
    l.some("--command", |a| &mut a.command, m.command.clone());
    l.some("--agent-bin", |a| &mut a.agent_bin, m.agent_bin.clone());
    l.each(
        "--sandbox-expose",
        |a| &mut a.sandbox_expose,
        m.sandbox_expose.iter().cloned(),
    );
    price(&mut l, |a| &mut a.run, m.price);
    l.switch("--retry-failed", |a| &mut a.retry_failed, opts.retry_failed);
    let (args, line) = l.finish()?;
    Ok(Stage {
        stage: "answers",
        who: m.name.clone(),
        command: Invocation::Answer(Box::new(args)),
        line,
    })
}

/// A stage of a model called through its API: its own flags, then the endpoint's.
/// `shards`: the tasks the plan runs as, which share the endpoint's `rpm` and `tpm` (each taking
/// 1/N).
fn api_stage<A: Default + clap::Args + clap::FromArgMatches + Live>(
    stage: &'static str,
    who: &str,
    mut l: Line<A>,
    (out, shards): (PathBuf, u64),
    e: &Endpoint,
    invocation: fn(Box<A>) -> Invocation,
) -> Result<Stage, LineError> {
    l.value("--out", |a| &mut a.live().run.out, out);
    l.some(
        "--provider",
        |a| &mut a.live().api.provider,
        Some(e.provider),
    );
    l.each("--model", |a| &mut a.live().api.model, [e.model.clone()]);
    l.some(
        "--base-url",
        |a| &mut a.live().api.base_url,
        e.base_url.clone(),
    );
    l.some(
        "--key-env",
        |a| &mut a.live().api.key_env,
        e.key_env.clone(),
    );
    if e.local {
        local(&mut l, |a| &mut a.live().api.no_key, |a| &mut a.live().run);
    }
    l.value_if(
        "--concurrency",
        |a| &mut a.live().run.concurrency,
        e.concurrency,
    );
    let share = |n: u64| (n / shards).max(1);
    l.some("--rpm", |a| &mut a.live().api.rpm, e.rpm.map(share));
    l.some("--tpm", |a| &mut a.live().api.tpm, e.tpm.map(share));
    l.some(
        "--temperature",
        |a| &mut a.live().api.temperature,
        e.temperature,
    );
    l.some(
        "--max-tokens",
        |a| &mut a.live().api.max_tokens,
        e.max_tokens,
    );
    price(&mut l, |a| &mut a.live().run, e.price);
    let (args, line) = l.finish()?;
    Ok(Stage {
        stage,
        who: who.to_string(),
        command: invocation(Box::new(args)),
        line,
    })
}

/// A `local = true` model's flags: served by the user, so no key (`--no-key`) and no charge
/// (`--price-in 0 --price-out 0`).
fn local<A: Default + clap::Args + clap::FromArgMatches>(
    l: &mut Line<A>,
    no_key: fn(&mut A) -> &mut bool,
    run: fn(&mut A) -> &mut RunArgs,
) {
    l.switch("--no-key", no_key, true);
    price(
        l,
        run,
        Some(PriceSpec {
            input: 0.0,
            output: 0.0,
        }),
    );
}

/// A price's flags: `--price-in`, `--price-out`.
fn price<A: Default + clap::Args + clap::FromArgMatches>(
    l: &mut Line<A>,
    run: fn(&mut A) -> &mut RunArgs,
    p: Option<PriceSpec>,
) {
    l.some("--price-in", |a| &mut run(a).price_in, p.map(|p| p.input));
    l.some(
        "--price-out",
        |a| &mut run(a).price_out,
        p.map(|p| p.output),
    );
}

/// The bundle of `outputs` (the benchmark and every stage output that holds a record).
pub fn bundle(files: &Files, outputs: Vec<PathBuf>) -> Result<Stage, LineError> {
    let mut l = Line::<bundle::Args>::new("bundle", &[])?;
    l.value("--out", |a| &mut a.out, files.bundle());
    l.positional(|a| &mut a.files, outputs);
    let (args, line) = l.finish()?;
    Ok(Stage {
        stage: "bundle",
        who: "all".into(),
        command: Invocation::Bundle(args),
        line,
    })
}

/// The tables, from the bundle.
pub fn score(files: &Files) -> Result<Stage, LineError> {
    let mut l = Line::<score::Args>::new("score", &[])?;
    l.positional(|a| &mut a.files, [files.bundle()]);
    let (args, line) = l.finish()?;
    Ok(Stage {
        stage: "tables",
        who: "all".into(),
        command: Invocation::Score(Box::new(args)),
        line,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Shard;
    use clap::Parser;

    const PAPER: &str = include_str!("../../../../reproduce/paper.toml");

    /// Every field a plan can give a model and an endpoint, and further flags as typed.
    const EVERY_FIELD: &str = r#"benchmark = "b.jsonl"
out = "runs"
repos = "cache"
repo_map = ["acme/widget=/src/widget", "acme/other=/src/other"]
judge = [
    { provider = "openai", model = "judge-a", base_url = "http://127.0.0.1:6/v1", key_env = "JUDGE_KEY", price = { input = 3.0, output = 15.0 }, runs = 2, concurrency = 8, rpm = 100, tpm = 90001, temperature = 0.25, max_tokens = 900, args = ["--structured", "tool", "--timeout-s", "600"] },
    { provider = "anthropic", model = "judge-b", base_url = "http://127.0.0.1:5", local = true },
]

[[model]]
name = "Built in"
agent = "builtin"
provider = "anthropic"
model = "claude-x"
base_url = "http://127.0.0.1:9/v1"
key_env = "MY_KEY"
price = { input = 1.5, output = 7.25 }
attempts = 3
max_turns = 12
concurrency = 2
args = ["--repo-map", "acme/third=/src/third", "--agent-timeout-s", "60", "--question", "q 1"]

[[model]]
name = "Local"
agent = "builtin"
provider = "openai"
model = "qwen"
base_url = "http://127.0.0.1:8/v1"
local = true

[[model]]
name = "Shell's"
agent = "command"
model = "sh"
command = "echo 'the answer'"
key_var = "AGENT_VAR"
key_env = "SHELL_KEY"
base_url = "http://127.0.0.1:7"
agent_bin = "/bin/sh"
sandbox_expose = ["/opt/tools", "/opt/more"]
args = ["--no-sandbox"]

[reliability]
models = ["Built in"]
runs = 5
scalar = { provider = "openai", model = "scalar-x", price = { input = 1.0, output = 2.0 } }

[failures]
models = ["Shell's"]
classifier = { provider = "openai", model = "classifier-x", args = ["--max-retries", "1"] }
"#;

    /// What `repoprobe` itself makes of a stage's command line.
    fn parsed(line: &[OsString]) -> crate::Command {
        let argv = std::iter::once(OsString::from("repoprobe")).chain(line.iter().cloned());
        crate::Cli::try_parse_from(argv)
            .unwrap_or_else(|e| panic!("{}\n{}", shown(line), e.render()))
            .command
    }

    /// Every stage's value is what clap makes of the command line printed for it: the line a
    /// user reads is the command that runs, flag for flag.
    #[test]
    fn each_stage_is_the_command_its_line_says() {
        let shard = Shard { index: 1, count: 4 };
        for (name, text) in [("paper", PAPER), ("every field", EVERY_FIELD)] {
            let plan = Plan::parse(text, Path::new("p.toml")).unwrap();
            let files = Files::of(&plan, Path::new("/plan"));
            for opts in [
                Options::default(),
                Options {
                    retry_failed: true,
                    shard: Some(shard),
                },
            ] {
                let files = Files {
                    shard: opts.shard,
                    ..files.clone()
                };
                let mut all = stages(&plan, &files, opts).unwrap();
                all.push(
                    bundle(&files, vec![files.benchmark.clone(), files.answers("x")]).unwrap(),
                );
                all.push(score(&files).unwrap());
                for s in all {
                    let want = format!("{:?}", parsed(&s.line));
                    let got = format!("{:?}", crate::Command::from(s.command));
                    assert_eq!(
                        got,
                        want,
                        "{name}: {} · {}: {}",
                        s.stage,
                        s.who,
                        shown(&s.line)
                    );
                }
            }
        }
    }

    #[test]
    fn a_plans_own_fields_and_its_args_make_one_command() {
        let plan = Plan::parse(EVERY_FIELD, Path::new("p.toml")).unwrap();
        let files = Files::of(&plan, Path::new("/plan"));
        let all = stages(&plan, &files, Options::default()).unwrap();
        let Invocation::Answer(a) = &all[0].command else {
            panic!("{:?}", all[0].command);
        };
        // The plan's repeatable flags first, then its args'; the rest the command's defaults.
        assert_eq!(
            a.repo.repo_map,
            [
                "acme/widget=/src/widget",
                "acme/other=/src/other",
                "acme/third=/src/third"
            ]
        );
        assert_eq!((a.attempts, a.max_turns, a.run.concurrency), (3, 12, 2));
        assert_eq!(a.api.max_http_retries, 6);
        let Invocation::Judge(j) = &all[3].command else {
            panic!("{:?}", all[3].command);
        };
        assert_eq!(j.live.api.timeout_s, 600.0);
        assert_eq!(j.live.max_retries, 2);
        // Under 4 shards each takes a quarter of the endpoint's rates.
        let sharded = Files {
            shard: Some(Shard { index: 0, count: 4 }),
            ..files.clone()
        };
        let opts = Options {
            retry_failed: false,
            shard: sharded.shard,
        };
        let Invocation::Judge(j) = &stages(&plan, &sharded, opts).unwrap()[3].command else {
            panic!();
        };
        assert_eq!((j.live.api.rpm, j.live.api.tpm), (Some(25), Some(22500)));
    }

    #[test]
    fn a_flag_given_by_the_plan_and_its_args_or_unknown_is_refused_saying_which() {
        let refused = |from: &str, to: &str, says: &str| {
            let text = EVERY_FIELD.replacen(from, to, 1);
            assert_ne!(text, EVERY_FIELD, "{from}");
            let plan = Plan::parse(&text, Path::new("p.toml")).unwrap();
            let files = Files::of(&plan, Path::new("/plan"));
            let e = stages(&plan, &files, Options::default()).unwrap_err();
            assert!(e.to_string().contains(says), "{says}: {e}");
        };
        refused(
            "\"--agent-timeout-s\", \"60\"",
            "\"--max-turns\", \"60\"",
            "[[model]] \"Built in\": its args: the argument '--max-turns' cannot be used \
             multiple times",
        );
        refused("\"--timeout-s\", \"600\"", "\"--rpm\", \"5\"", "'--rpm'");
        refused(
            "\"--max-retries\", \"1\"",
            "\"--max-retires\", \"1\"",
            "--max-retires",
        );
    }

    /// A plan written before a rename runs: its args' old spellings read as today's.
    #[test]
    fn a_plans_args_in_an_old_spelling_read_as_todays() {
        let text = EVERY_FIELD.replacen(
            "\"--timeout-s\", \"600\"",
            "\"--seed\", \"9\", \"--backoff-ms\", \"2500\"",
            1,
        );
        let plan = Plan::parse(&text, Path::new("p.toml")).unwrap();
        let files = Files::of(&plan, Path::new("/plan"));
        let all = stages(&plan, &files, Options::default()).unwrap();
        let Invocation::Judge(j) = &all[3].command else {
            panic!("{:?}", all[3].command);
        };
        assert_eq!(j.live.api.sampling_seed, Some(9));
        assert_eq!(j.live.api.backoff_s, 2.5);
    }
}
