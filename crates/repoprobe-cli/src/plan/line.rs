//! A stage of a plan as a value: the command's own arguments (the very struct clap fills from
//! its flags), set field by field from the plan, so that a field renamed in a command fails to
//! compile here instead of a plan failing at run time. What the plan does not say stays the
//! command's: its defaults, and the flags of the plan's `args` (as typed), read by the
//! command's own clap definition. Beside the value, the same as the command line a user could
//! type, printed before the stage runs; a test reads every such line back with clap and finds
//! the same value.

use crate::commands::{answer, bundle, classify_failures, judge, judge_scalar, score};
use crate::exit::Exit;
use crate::live::{LiveArgs, ShardArg};
use clap::parser::ValueSource;
use clap::{ArgAction, FromArgMatches};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A command of the plan, ready to run: its arguments as the command takes them.
#[derive(Debug, Clone)]
pub enum Invocation {
    Answer(Box<answer::Args>),
    Judge(Box<judge::Args>),
    JudgeScalar(Box<judge_scalar::Args>),
    ClassifyFailures(Box<classify_failures::Args>),
    Bundle(bundle::Args),
    Score(Box<score::Args>),
}

impl Invocation {
    /// Runs the command in this process, as `repoprobe` does once it has read the flags.
    pub fn run(self) -> anyhow::Result<Exit> {
        crate::execute(self.into())
    }

    /// The answers it reads (a judge's, a classifier's), which must hold some before it runs.
    pub fn answers(&self) -> Option<&Path> {
        match self {
            // The plan gives the benchmark first, then the answers (`plan::stages`).
            Invocation::Judge(a) => a.inputs.files.get(1).map(PathBuf::as_path),
            Invocation::JudgeScalar(a) => a.inputs.files.get(1).map(PathBuf::as_path),
            Invocation::ClassifyFailures(a) => a.files.get(1).map(PathBuf::as_path),
            _ => None,
        }
    }
}

impl From<Invocation> for crate::Command {
    fn from(i: Invocation) -> crate::Command {
        match i {
            Invocation::Answer(a) => crate::Command::Answer(a),
            Invocation::Judge(a) => crate::Command::Judge(*a),
            Invocation::JudgeScalar(a) => crate::Command::JudgeScalar(*a),
            Invocation::ClassifyFailures(a) => crate::Command::ClassifyFailures(*a),
            Invocation::Bundle(a) => crate::Command::Bundle(a),
            Invocation::Score(a) => crate::Command::Score(*a),
        }
    }
}

/// A command whose model is called through its API: its [`LiveArgs`].
pub trait Live {
    fn live(&mut self) -> &mut LiveArgs;
}

impl Live for judge::Args {
    fn live(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl Live for judge_scalar::Args {
    fn live(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

impl Live for classify_failures::Args {
    fn live(&mut self) -> &mut LiveArgs {
        &mut self.live
    }
}

/// Why a stage of the plan is no command: a flag of its `args` or one the plan sets.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The plan's `args`, as the command's clap definition reads them (clap's words).
    #[error("its args: {}", .0.render())]
    Args(Box<clap::Error>),
    /// A flag the plan sets that the command does not have (renamed since the plan's code was
    /// written).
    #[error("`repoprobe {command}` has no {flag}")]
    NoSuchFlag { command: String, flag: String },
    /// A flag of the plan's `args` that the plan sets already.
    #[error(
        "its args: the argument '{flag}' cannot be used multiple times: the plan sets it already"
    )]
    SetTwice { flag: String },
    /// A required flag of the command that the plan does not set.
    #[error("`repoprobe {command}` needs {flag}, which the plan does not set")]
    Unset { command: String, flag: String },
    /// The stage of a model, refused for `problem`.
    #[error("[[model]] {name:?}: {problem}")]
    OfModel {
        name: String,
        problem: Box<LineError>,
    },
}

/// A command of the plan being made, flag by flag: each call sets a field of the arguments and
/// writes the flag that says the same on the command line.
pub struct Line<A> {
    args: A,
    /// The command's clap definition: which flag is which argument.
    command: clap::Command,
    /// The command line so far, without the program's name: the command, then the plan's flags.
    line: Vec<OsString>,
    /// The plan's further flags, as typed: the end of the line.
    extra: Vec<OsString>,
    /// The arguments the plan set, and those its further flags gave (but the repeatable ones).
    set: Vec<clap::Id>,
    given: Vec<clap::Id>,
    /// The first flag the command does not have (a flag renamed since this was written).
    unknown: Option<String>,
}

impl<A: Default + clap::Args + FromArgMatches> Line<A> {
    /// The command `name` with its defaults, and the plan's further flags `extra` (as typed)
    /// read over them by the command's clap definition. The command's required flags are the
    /// plan's to set: until then they hold `A::default()`'s blanks, and [`Line::finish`] refuses
    /// one left unset.
    pub fn new(name: &'static str, extra: &[String]) -> Result<Line<A>, LineError> {
        let command = A::augment_args(
            clap::Command::new(name)
                .no_binary_name(true)
                .bin_name(format!("repoprobe {name}")),
        );
        let relaxed = command.clone().mut_args(|a| a.required(false));
        let extra = todays_spelling(name, extra);
        let mut matches = relaxed
            .try_get_matches_from(&extra)
            .map_err(|e| LineError::Args(Box::new(e)))?;
        let given = command
            .get_arguments()
            .filter(|a| {
                let by_hand =
                    matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine);
                by_hand && !matches!(a.get_action(), ArgAction::Append | ArgAction::Count)
            })
            .map(|a| a.get_id().clone())
            .collect();
        // Every argument with a default is in the matches: the update takes them all, and the
        // ones given.
        let mut args = A::default();
        args.update_from_arg_matches_mut(&mut matches)
            .map_err(|e| LineError::Args(Box::new(e)))?;
        Ok(Line {
            args,
            command,
            line: vec![name.into()],
            extra,
            set: Vec::new(),
            given,
            unknown: None,
        })
    }

    /// `flag VALUE`: the field `slot` set to `value`.
    pub fn value<T: Shown>(&mut self, flag: &str, slot: impl FnOnce(&mut A) -> &mut T, value: T) {
        self.mark(flag);
        self.line.push(flag.into());
        self.line.push(value.shown());
        *slot(&mut self.args) = value;
    }

    /// `flag VALUE` where the plan says it: the field set to `value`; else the command's own.
    pub fn value_if<T: Shown>(
        &mut self,
        flag: &str,
        slot: impl FnOnce(&mut A) -> &mut T,
        value: Option<T>,
    ) {
        if let Some(v) = value {
            self.value(flag, slot, v);
        }
    }

    /// `flag VALUE` where the plan says it: the field set to `Some(value)`.
    pub fn some<T: Shown>(
        &mut self,
        flag: &str,
        slot: impl FnOnce(&mut A) -> &mut Option<T>,
        value: Option<T>,
    ) {
        if let Some(v) = value {
            self.value(flag, |a| slot(a), Some(v));
        }
    }

    /// `flag VALUE` for each value (a repeatable flag), before those of the plan's `args`.
    pub fn each<T: Shown>(
        &mut self,
        flag: &str,
        slot: impl FnOnce(&mut A) -> &mut Vec<T>,
        values: impl IntoIterator<Item = T>,
    ) {
        let values: Vec<T> = values.into_iter().collect();
        for v in &values {
            self.mark(flag);
            self.line.push(flag.into());
            self.line.push(v.shown());
        }
        prepend(slot(&mut self.args), values);
    }

    /// `flag` alone where `on`: the field set to true.
    pub fn switch(&mut self, flag: &str, slot: impl FnOnce(&mut A) -> &mut bool, on: bool) {
        if on {
            self.mark(flag);
            self.line.push(flag.into());
            *slot(&mut self.args) = true;
        }
    }

    /// The positional arguments.
    pub fn positional<T: Shown>(
        &mut self,
        slot: impl FnOnce(&mut A) -> &mut Vec<T>,
        values: impl IntoIterator<Item = T>,
    ) {
        let values: Vec<T> = values.into_iter().collect();
        if let Some(a) = self.command.get_arguments().find(|a| a.is_positional()) {
            self.set.push(a.get_id().clone());
        }
        self.line.extend(values.iter().map(Shown::shown));
        prepend(slot(&mut self.args), values);
    }

    /// The arguments and their command line; refused: a flag the command does not have, a
    /// required one the plan did not set, one the plan sets that its `args` give again.
    pub fn finish(mut self) -> Result<(A, Vec<OsString>), LineError> {
        let command = self.command.get_name().to_string();
        if let Some(flag) = self.unknown {
            return Err(LineError::NoSuchFlag { command, flag });
        }
        let arg = |id: &clap::Id| self.command.get_arguments().find(|a| a.get_id() == id);
        let flag = |id: &clap::Id| {
            arg(id).map_or(id.to_string(), |a| {
                a.get_long().map_or(id.to_string(), |l| format!("--{l}"))
            })
        };
        if let Some(id) = self.given.iter().find(|id| self.set.contains(id)) {
            return Err(LineError::SetTwice { flag: flag(id) });
        }
        let mut required = self.command.get_arguments().filter(|a| a.is_required_set());
        if let Some(a) = required.find(|a| !self.set.contains(a.get_id())) {
            return Err(LineError::Unset {
                command,
                flag: flag(a.get_id()),
            });
        }
        self.line.append(&mut self.extra);
        Ok((self.args, self.line))
    }

    /// Notes that the plan sets `flag`'s argument.
    fn mark(&mut self, flag: &str) {
        let long = flag.strip_prefix("--");
        match self.command.get_arguments().find(|a| a.get_long() == long) {
            Some(a) => self.set.push(a.get_id().clone()),
            None => {
                self.unknown.get_or_insert_with(|| flag.to_string());
            }
        }
    }
}

/// A plan's `args` for `name` with the CLI's old spellings rewritten into today's, each said
/// once on stderr, as on the command line (`aliases`): a plan written before a rename runs.
fn todays_spelling(name: &str, extra: &[String]) -> Vec<OsString> {
    let argv = ["repoprobe", name]
        .into_iter()
        .map(OsString::from)
        .chain(extra.iter().map(OsString::from))
        .collect();
    let (argv, notes) =
        crate::aliases::rewrite(argv, &<crate::Cli as clap::CommandFactory>::command());
    for note in notes {
        eprintln!("note: the plan's args: {note}; the old spelling still works for now");
    }
    argv.into_iter().skip(2).collect()
}

/// `values` put before what `slot` holds (the plan's flags come before its `args`).
fn prepend<T>(slot: &mut Vec<T>, mut values: Vec<T>) {
    values.append(slot);
    *slot = values;
}

/// A value as it is written on the command line.
pub trait Shown {
    fn shown(&self) -> OsString;
}

impl Shown for String {
    fn shown(&self) -> OsString {
        self.into()
    }
}

impl Shown for PathBuf {
    fn shown(&self) -> OsString {
        self.into()
    }
}

impl<T: Shown> Shown for Option<T> {
    fn shown(&self) -> OsString {
        self.as_ref().map(Shown::shown).unwrap_or_default()
    }
}

macro_rules! shown_as_text {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(&self) -> OsString {
                self.to_string().into()
            }
        }
    )*};
}
shown_as_text!(u32, u64, f64);

impl Shown for ShardArg {
    fn shown(&self) -> OsString {
        match self {
            ShardArg::Fixed(s) => s.to_string().into(),
            ShardArg::Auto => "auto".into(),
        }
    }
}

/// A flag that takes one of a list's names: the name.
impl Shown for answer::AgentKind {
    fn shown(&self) -> OsString {
        self.as_str().into()
    }
}

impl Shown for repoprobe_llm::Provider {
    fn shown(&self) -> OsString {
        self.as_str().into()
    }
}
