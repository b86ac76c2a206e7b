//! The `repoprobe` command line: argument parsing and dispatch. Each subcommand lives in
//! `commands/`; every format, rule and number comes from `repoprobe-core`.

mod aliases;
mod commands;
mod exit;
mod help;
mod input;
mod live;
mod output;
mod plan;
mod repos;
mod run_files;
mod shard;
mod stdout;

pub use exit::Exit;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

/// Validate, score, bundle and synthesise RepoProbe benchmark results, and judge answers live.
#[derive(Debug, Parser)]
#[command(
    name = "repoprobe",
    version,
    about = "RepoProbe: score agents' answers about code repositories, judge them and make new \
             questions",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check files against the formats and rules; exit 0 all valid, 1 invalid records, 2 unusable input.
    Validate(commands::validate::Args),
    /// Compute the paper's tables (and CIs, strata, reliability, failure modes) from result files.
    Score(commands::score::Args),
    /// Merge many files into one validated results bundle.
    Bundle(commands::bundle::Args),
    /// Generate a large, clearly labelled synthetic benchmark with answers and judgments.
    Synth(commands::synth::Args),
    /// Write the JSON Schemas of every record kind.
    Schema(commands::schema::Args),
    /// Score answers with a live LLM judge against each question's checklist (paper §4.2).
    Judge(commands::judge::Args),
    /// Grade answers on SWE-QA's five scalar dimensions (the baseline of paper §5.3).
    JudgeScalar(commands::judge_scalar::Args),
    /// How far judges agree on the checklist items they both scored (κ, α, full-credit F1, the
    /// bias of their Overalls, the items they differ on): a model against people (`human:NAME`),
    /// another model, or itself with the items shuffled.
    JudgeAgreement(commands::judges::Args),
    /// Label answers scoring below 60 % with one of the five failure modes (paper §5.4).
    ClassifyFailures(commands::classify_failures::Args),
    /// Fill checklist items' evidence with the repository paths their texts and the reference
    /// answer cite that exist at the question's pinned commit.
    Evidence(commands::evidence::Args),
    /// Answer benchmark questions with an agent exploring each repository at its pinned commit.
    Answer(Box<commands::answer::Args>),
    /// Where a run stands, per shard (done, failed, left, tokens, cost, last write) and an ETA;
    /// exit 0 only when it is complete.
    Status(commands::status::Args),
    /// Join the outputs of a run's shards into one, refusing an incomplete run, a key given
    /// twice or files of another run.
    Merge(commands::merge::Args),
    /// Make benchmark questions from GitHub Discussions, stage by stage (paper §3.2, Figure 2):
    /// repos, themes, harvest, filter, classify, enhance, make-checklist, verify, then after the
    /// review agreement and finalize; report counts the funnel (docs/curate.md).
    Curate(commands::curate::Args),
    /// One row per run (question × model × attempt): verdict, score, evidence read and missed,
    /// tool calls, edit attempts, tokens, cost; filtered and sorted as the site's Runs view.
    ListRuns(commands::runs_list::Args),
    /// Carry out a plan (plan.toml): every model's answers, the judgments, the reliability and
    /// failure stages, the bundle and the tables, in order, resumable; `--estimate` prices it
    /// all first (docs/reproduce.md).
    Run(plan::run::Args),
}

/// Runs the command line and returns the process exit code.
///
/// First of all the process marks itself non-dumpable, so that no process of the same user —
/// an agent CLI we start included — can read our `/proc/<pid>/environ` (the keys we hold) or
/// attach to us; agent children are started without the capabilities that would let root read it anyway
/// (`repoprobe_agent::external`).
pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> ExitCode {
    harden();
    let args: Vec<OsString> = args.into_iter().collect();
    // Inside a sealed agent run, this binary is the bridge to the API proxy (not a command of
    // ours: `answer` starts it in the sandbox).
    if args
        .get(1)
        .is_some_and(|a| a == repoprobe_agent::proxy::BRIDGE_SUBCOMMAND)
    {
        let code = repoprobe_agent::proxy::bridge_main(&args[2..]);
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    let tree = help::command(<Cli as clap::CommandFactory>::command());
    let (args, notes) = aliases::rewrite(args, &tree);
    for note in notes {
        eprintln!("note: {note}; the old spelling still works for now");
    }
    let parsed = tree
        .try_get_matches_from(args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Unusable.into()
            } else {
                Exit::Ok.into()
            };
        }
    };
    let result = execute(cli.command);
    match result {
        Ok(code) => code.into(),
        Err(e) => {
            // Errors quote files and model replies: no escape sequence reaches the terminal.
            eprintln!(
                "error: {}",
                repoprobe_core::text::terminal_safe_lines(&format!("{e:#}"))
            );
            Exit::Unusable.into()
        }
    }
}

/// Runs one parsed command (a plan's stages too, built as values: `plan::line`).
fn execute(command: Command) -> anyhow::Result<Exit> {
    match command {
        Command::Validate(a) => commands::validate::run(a),
        Command::Score(a) => commands::score::run(a),
        Command::Bundle(a) => commands::bundle::run(a),
        Command::Synth(a) => commands::synth::run(a),
        Command::Schema(a) => commands::schema::run(a),
        Command::Judge(a) => commands::judge::run(a),
        Command::JudgeScalar(a) => commands::judge_scalar::run(a),
        Command::JudgeAgreement(a) => commands::judges::run(a),
        Command::ClassifyFailures(a) => commands::classify_failures::run(a),
        Command::Evidence(a) => commands::evidence::run(a),
        Command::Answer(a) => commands::answer::run(*a),
        Command::Status(a) => commands::status::run(a),
        Command::Merge(a) => commands::merge::run(a),
        Command::Curate(a) => commands::curate::run(a),
        Command::Run(a) => plan::run::run(a),
        Command::ListRuns(a) => commands::runs_list::run(a),
    }
}

/// `prctl(PR_SET_DUMPABLE, 0)`: our `/proc/<pid>/{environ,mem,…}` become root's and closed to
/// processes without `CAP_SYS_PTRACE`, and ptrace by the same user is refused. Not on other
/// systems (they have no `/proc/<pid>/environ`).
fn harden() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain syscall on our own process; it cannot fail with these arguments.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// The command tree as clap builds it, for the tests that check the docs' command lines and
/// that every flag has help (`tests/cli/docs_flags.rs`); not an interface.
#[doc(hidden)]
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}
