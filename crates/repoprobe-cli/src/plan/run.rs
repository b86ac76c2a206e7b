//! `repoprobe run PLAN`: an experiment as one declared run. The plan (TOML, docs/reproduce.md)
//! is read and checked whole, every price resolved (a model without one is refused, named,
//! unless the plan goes on without), then its stages run in order in this process — each the
//! very command line a user could type, printed before it starts — and end with the bundle and
//! the tables. Stopped anywhere, the same command resumes: every stage's journal skips what is
//! done. A stage that ends with keys failed or not run is run again after a backoff, up to
//! `--stage-retries` times, and then reported.

use super::stages::{self, Files, Options, Stage, shown};
use super::{Plan, estimate};
use crate::exit::Exit;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The plan (TOML): benchmark, out, [[model]]…, [judge], [reliability], [failures].
    plan: PathBuf,
    /// Print every stage's calls, tokens and dollars per model, with the source of each price,
    /// and exit: nothing is sent, no key is read, no file is written.
    #[arg(long)]
    estimate: bool,
    /// With --estimate: answers of a pilot run (any agent; the built-in agent's record every
    /// turn's tokens) whose measured calls and tokens scale the modelled agent runs.
    #[arg(long, requires = "estimate")]
    calibrate: Vec<PathBuf>,
    /// Print where the plan stands, per stage and model (done, agent failed, failed, could not
    /// run by cause, left), from its files (every shard's), and exit: 0 when complete.
    #[arg(long, conflicts_with = "estimate")]
    status: bool,
    /// Print the stages' command lines and exit.
    #[arg(long, conflicts_with_all = ["estimate", "status"])]
    dry_run: bool,
    /// Answer again the answers whose agent failed (`answer --retry-failed` on every model).
    #[arg(long)]
    retry_failed: bool,
    /// Runs again of a stage that ended with keys failed or not run, before it is reported.
    #[arg(long, default_value_t = 2)]
    stage_retries: u32,
    /// Seconds before the first run again of a stage; doubled each time.
    #[arg(long, default_value_t = 30.0)]
    retry_backoff_s: f64,
    /// Run shard I of N of the plan (`auto`: this task of a Slurm job array or a Kubernetes
    /// Indexed Job, as the live commands read it): its answers are the answer keys the shard
    /// owns and every later stage works on those answers only, so the tasks never wait for
    /// one another; the endpoints' --rpm/--tpm are shared, 1/N each. Once every task has
    /// ended, `run PLAN --tables` makes the bundle and the tables from all of them.
    #[arg(long, value_name = "I/N|auto", conflicts_with_all = ["estimate", "tables"])]
    shard: Option<crate::shard::ShardArg>,
    /// The shard count of `--shard auto` in a Kubernetes Indexed Job (its `completions`).
    #[arg(long, requires = "shard")]
    shards: Option<u32>,
    /// Only the bundle and the tables, from every stage output there is (a sharded plan's
    /// last step).
    #[arg(long, conflicts_with_all = ["estimate", "status", "dry_run"])]
    tables: bool,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if !(a.retry_backoff_s.is_finite() && a.retry_backoff_s >= 0.0) {
        anyhow::bail!("--retry-backoff-s must be a non-negative number of seconds");
    }
    let text =
        crate::input::read(&a.plan).with_context(|| format!("cannot read {}", a.plan.display()))?;
    let plan = Plan::parse(&String::from_utf8_lossy(&text), &a.plan)?;
    let base = a
        .plan
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut files = Files::of(&plan, &base);
    if a.estimate {
        return estimate::print(&plan, &files, &a.calibrate);
    }
    if a.status {
        let (ds, _) = crate::live::load_inputs(std::slice::from_ref(&files.benchmark))?;
        let lines = super::status::lines(&plan, &files, ds.questions.len());
        let (text, complete) = super::status::render(&lines);
        crate::stdout::write(text.as_bytes())?;
        return Ok(if complete {
            Exit::Ok
        } else {
            Exit::InvalidRecords
        });
    }
    if a.tables {
        return tables(&plan, &files);
    }
    files.shard = crate::shard::resolve(a.shard, a.shards, |k| std::env::var(k).ok())?;
    let opts = Options {
        retry_failed: a.retry_failed,
        shard: files.shard,
    };
    let stages = stages::stages(&plan, &files, opts)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.plan.display()))?;
    if a.dry_run {
        for s in &stages {
            println!("# {} · {}\n{}", s.stage, s.who, shown(&s.line));
        }
        return Ok(Exit::Ok);
    }
    plan.check_prices().map_err(|problem| super::PlanError {
        path: a.plan.clone(),
        problem,
    })?;
    let mut worst = Exit::Ok;
    for s in &stages {
        match run_one(s, &a, &files)? {
            Exit::Requeue => return Ok(Exit::Requeue),
            Exit::Ok => {}
            other => worst = other,
        }
    }
    if let Some(s) = files.shard {
        eprintln!(
            "\nshard {s} of the plan: every stage ended; once every task has ended, `repoprobe run \
             {} --tables` makes the bundle and the tables",
            a.plan.display()
        );
        return Ok(worst);
    }
    let tabled = tables(&plan, &files)?;
    if worst != Exit::Ok {
        eprintln!(
            "\nsome stage ended with keys failed or left out after {} run(s) again: see its \
             failures journal; `repoprobe run {} --status` shows where each stands",
            a.stage_retries,
            a.plan.display()
        );
    }
    Ok(if worst == Exit::Ok { tabled } else { worst })
}

/// The bundle of every stage output there is (the shards' too), the tables from it, and each
/// stage's estimate beside what its outputs spent.
fn tables(plan: &Plan, files: &Files) -> anyhow::Result<Exit> {
    let bundle = stages::bundle(files, outputs(plan, files))?;
    eprintln!("\n== bundle\n{}", shown(&bundle.line));
    if bundle.command.run()? == Exit::Unusable {
        anyhow::bail!("the bundle could not be made (see above)");
    }
    let score = stages::score(files)?;
    eprintln!("\n== tables\n{}", shown(&score.line));
    let code = score.command.run()?;
    let (ds, _) = crate::live::load_inputs(std::slice::from_ref(&files.benchmark))?;
    let lines = estimate::lines(plan, &ds.questions, None);
    eprint!("\n{}", estimate::beside_spent(&lines, files));
    Ok(code)
}

/// One stage, run again after a backoff while it ends with keys failed or not run.
fn run_one(s: &Stage, a: &Args, files: &Files) -> anyhow::Result<Exit> {
    let holds_some = |p: &&Path| crate::input::file_len(p).is_ok_and(|n| n > 0);
    if let Some(answers) = s.command.answers().filter(|p| !holds_some(p)) {
        eprintln!(
            "\n== {} · {}: skipped, {} holds no answer of this model yet",
            s.stage,
            s.who,
            answers.display()
        );
        return Ok(Exit::InvalidRecords);
    }
    let mut delay = Duration::from_secs_f64(a.retry_backoff_s);
    let mut tried = 0;
    loop {
        eprintln!(
            "\n== {} · {}{}\n{}",
            s.stage,
            s.who,
            again(tried),
            shown(&s.line)
        );
        let code =
            (s.command.clone().run()).with_context(|| format!("stage {} of {}", s.stage, s.who))?;
        if code != Exit::InvalidRecords || tried == a.stage_retries {
            return Ok(code);
        }
        let l = super::status::line(files, s.stage, &s.who, None);
        if l.failed == 0 && l.could_not_run.is_empty() {
            // Exit 1 for records of its input left out: another run would do the same.
            return Ok(code);
        }
        if !l.again_helps {
            let causes: Vec<&str> = l.could_not_run.keys().map(String::as_str).collect();
            eprintln!(
                "{} · {}: {} key(s) could not run ({}): that needs a person first (a login, \
                 a configuration), not another try; fix it and run the plan again",
                s.stage,
                s.who,
                l.could_not_run.values().sum::<usize>(),
                causes.join(", ")
            );
            return Ok(code);
        }
        eprintln!(
            "{} · {}: keys failed or not run; again in {:.0} s",
            s.stage,
            s.who,
            delay.as_secs_f64()
        );
        std::thread::sleep(delay);
        delay *= 2;
        tried += 1;
    }
}

fn again(tried: u32) -> String {
    if tried == 0 {
        String::new()
    } else {
        format!(" (again, {tried})")
    }
}

/// What the bundle is made of: the benchmark and every stage output (the whole run's or its
/// shards') that holds a record (a stage with nothing to do leaves an empty journal).
fn outputs(plan: &Plan, files: &Files) -> Vec<PathBuf> {
    let mut v = vec![files.benchmark.clone()];
    for m in &plan.models {
        for stage in ["answers", "judgments", "scalar", "failures"] {
            v.extend(files.all_of(stage, &m.name));
        }
    }
    // Every other `[[judge]]`'s judgments.
    for j in stages::judged(plan) {
        if j.who != j.model {
            v.extend(files.all_of("judgments", &j.who));
        }
    }
    v.retain(|p| crate::input::file_len(p).is_ok_and(|n| n > 0));
    v
}
