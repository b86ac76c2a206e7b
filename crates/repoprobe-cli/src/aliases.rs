//! The old spellings of the command line (docs/cli.md#conventions), kept working: before clap
//! reads the arguments, each old spelling is rewritten into today's and one line on stderr says
//! so. The old spellings are not in clap's tree at all — `--help`, the docs test and the
//! completions see one grammar — and the scripts people already wrote keep running.
//!
//! The rewrite walks the arguments with clap's own tree beside it, so it knows which flags take
//! a value and never mistakes a value (`--agent-arg --seed`) for a flag.

use clap::Command;
use std::ffi::OsString;

/// One old spelling, where it was used, and what replaced it.
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    /// The commands it applies in (`"score"`, `"curate repos"`); for a renamed command, the old
    /// name itself.
    pub commands: &'static [&'static str],
    pub change: Change,
    /// A command line with the old spelling and the same line as written today: the tests
    /// rewrite the one, compare it with the other and parse the result.
    #[cfg_attr(not(test), expect(dead_code, reason = "the tests read it"))]
    pub example: (&'static str, &'static str),
}

/// What changed.
#[derive(Debug, Clone, Copy)]
pub enum Change {
    /// A command renamed (`judges` → `judge-agreement`), or moved (`make-checklist` →
    /// `curate make-checklist`).
    Command {
        old: &'static str,
        new: &'static [&'static str],
    },
    /// A flag renamed; its value is unchanged.
    Flag {
        old: &'static str,
        new: &'static str,
    },
    /// A flag that named an input file, now a positional `FILE`: the flag goes, its values stay.
    Positional { old: &'static str },
    /// A value of a flag renamed (`--format text` → `--format table`).
    Value {
        flag: &'static str,
        old: &'static str,
        new: &'static str,
    },
    /// A comma-separated list, now the flag repeated (`--panel a,b` → `--panel a --panel b`).
    Repeat {
        old: &'static str,
        new: &'static str,
    },
    /// Milliseconds, now seconds (`--backoff-ms 1500` → `--backoff-s 1.5`).
    Millis {
        old: &'static str,
        new: &'static str,
    },
}

/// The live commands that read the model's API flags (`ApiArgs`).
const LIVE: &[&str] = &[
    "judge",
    "judge-scalar",
    "classify-failures",
    "curate make-checklist",
    "answer",
    "curate themes",
    "curate classify",
    "curate enhance",
    "curate verify",
];

/// Every old spelling, newest grammar first (docs/cli.md#conventions names the rules).
pub const ALIASES: &[Alias] = &[
    Alias {
        commands: &["judges"],
        change: Change::Command {
            old: "judges",
            new: &["judge-agreement"],
        },
        example: ("judges d --a x", "judge-agreement d --a x"),
    },
    Alias {
        commands: &["runs"],
        change: Change::Command {
            old: "runs",
            new: &["list-runs"],
        },
        example: ("runs d --count", "list-runs d --count"),
    },
    Alias {
        commands: &["make-checklist"],
        change: Change::Command {
            old: "make-checklist",
            new: &["curate", "make-checklist"],
        },
        example: (
            "make-checklist p.jsonl --model m --out q.jsonl",
            "curate make-checklist p.jsonl --model m --out q.jsonl",
        ),
    },
    Alias {
        commands: &[
            "judge",
            "judge-scalar",
            "classify-failures",
            "answer",
            "evidence",
        ],
        change: Change::Positional { old: "--benchmark" },
        example: (
            "judge --benchmark b.jsonl a.jsonl --model m --out j.jsonl",
            "judge b.jsonl a.jsonl --model m --out j.jsonl",
        ),
    },
    Alias {
        commands: &["judge", "judge-scalar", "classify-failures"],
        change: Change::Positional { old: "--answers" },
        example: (
            "judge b.jsonl --answers a.jsonl --model m --out j.jsonl",
            "judge b.jsonl a.jsonl --model m --out j.jsonl",
        ),
    },
    Alias {
        commands: &["classify-failures"],
        change: Change::Positional { old: "--judgments" },
        example: (
            "classify-failures b a --judgments j.jsonl --model m --out f.jsonl",
            "classify-failures b a j.jsonl --model m --out f.jsonl",
        ),
    },
    Alias {
        commands: &["curate make-checklist"],
        change: Change::Positional { old: "--questions" },
        example: (
            "make-checklist --questions p.jsonl --model m --out q.jsonl",
            "curate make-checklist p.jsonl --model m --out q.jsonl",
        ),
    },
    Alias {
        commands: &[
            "curate themes",
            "curate filter",
            "curate classify",
            "curate enhance",
            "curate verify",
        ],
        change: Change::Positional { old: "--in" },
        example: (
            "curate filter --in t.jsonl --out f.jsonl",
            "curate filter t.jsonl --out f.jsonl",
        ),
    },
    Alias {
        commands: &["curate harvest"],
        change: Change::Positional { old: "--repos" },
        example: (
            "curate harvest --repos r.jsonl --out t.jsonl",
            "curate harvest r.jsonl --out t.jsonl",
        ),
    },
    Alias {
        commands: &["curate finalize"],
        change: Change::Positional { old: "--reviews" },
        example: (
            "curate finalize --candidates c.jsonl --reviews r1 r2 --out b.jsonl --version-name v",
            "curate finalize --candidates c.jsonl r1 r2 --out b.jsonl --version-name v",
        ),
    },
    Alias {
        commands: &["answer", "evidence", "curate verify"],
        change: Change::Flag {
            old: "--repos",
            new: "--clone-cache",
        },
        example: (
            "evidence b.jsonl --repos cache --out e.jsonl",
            "evidence b.jsonl --clone-cache cache --out e.jsonl",
        ),
    },
    Alias {
        commands: &["validate", "curate agreement"],
        change: Change::Value {
            flag: "--format",
            old: "text",
            new: "table",
        },
        example: ("validate d --format text", "validate d --format table"),
    },
    Alias {
        commands: &["judge-agreement"],
        change: Change::Value {
            flag: "--format",
            old: "terminal",
            new: "table",
        },
        example: (
            "judges d --format terminal",
            "judge-agreement d --format table",
        ),
    },
    Alias {
        commands: &["curate repos"],
        change: Change::Flag {
            old: "--created-since",
            new: "--created-after",
        },
        example: (
            "curate repos --created-since 2024-01-01 --out r.jsonl",
            "curate repos --created-after 2024-01-01 --out r.jsonl",
        ),
    },
    Alias {
        commands: &["curate repos"],
        change: Change::Flag {
            old: "--created-until",
            new: "--created-before",
        },
        example: (
            "curate repos --created-until 2025-01-01 --out r.jsonl",
            "curate repos --created-before 2025-01-01 --out r.jsonl",
        ),
    },
    Alias {
        commands: &["score"],
        change: Change::Repeat {
            old: "--panel",
            new: "--panel",
        },
        example: ("score d --panel a,b", "score d --panel a --panel b"),
    },
    Alias {
        commands: &["curate repos"],
        change: Change::Repeat {
            old: "--categories",
            new: "--category",
        },
        example: (
            "curate repos --categories Q&A,Help --out r.jsonl",
            "curate repos --category Q&A --category Help --out r.jsonl",
        ),
    },
    Alias {
        commands: LIVE,
        change: Change::Millis {
            old: "--backoff-ms",
            new: "--backoff-s",
        },
        example: (
            "judge b a --model m --out j --backoff-ms 1500",
            "judge b a --model m --out j --backoff-s 1.5",
        ),
    },
    Alias {
        commands: &["score", "judge-agreement"],
        change: Change::Flag {
            old: "--seed",
            new: "--bootstrap-seed",
        },
        example: ("score d --seed 7", "score d --bootstrap-seed 7"),
    },
    Alias {
        commands: LIVE,
        change: Change::Flag {
            old: "--seed",
            new: "--sampling-seed",
        },
        example: (
            "judge b a --model m --out j --seed 7",
            "judge b a --model m --out j --sampling-seed 7",
        ),
    },
];

/// Rewrites the old spellings in `args` (the program name first) into today's, against the
/// command tree `cli`; returns the arguments clap is to read and one note per old spelling met.
pub fn rewrite(args: Vec<OsString>, cli: &Command) -> (Vec<OsString>, Vec<String>) {
    let mut notes = Vec::new();
    let mut it = args.into_iter();
    let mut out: Vec<OsString> = it.next().into_iter().collect();
    let rest = renamed_command(it.collect(), &mut notes);
    // The command's path (`curate repos`) and its node of the tree.
    let mut path: Vec<String> = Vec::new();
    let mut cmd = cli;
    let mut rest = rest.into_iter().peekable();
    while let Some(name) = rest.peek().and_then(|a| a.to_str())
        && let Some(sub) = cmd.find_subcommand(name)
    {
        path.push(name.to_string());
        out.push(rest.next().unwrap_or_default());
        cmd = sub;
    }
    let mut walk = Walk {
        here: path.join(" "),
        cmd,
        queue: rest.rev().collect(),
        out,
        notes,
    };
    while let Some(arg) = walk.queue.pop() {
        match arg.to_str().map(str::to_string) {
            Some(text) if text == "--" => {
                walk.out.push(arg);
                walk.out.extend(walk.queue.drain(..).rev());
            }
            Some(text) if text.starts_with("--") => walk.flag(arg, &text),
            _ => walk.out.push(arg),
        }
    }
    (walk.out, walk.notes)
}

/// The arguments after the program's name with a renamed command replaced by today's.
fn renamed_command(mut rest: Vec<OsString>, notes: &mut Vec<String>) -> Vec<OsString> {
    let Some(first) = rest.first().and_then(|a| a.to_str()).map(str::to_string) else {
        return rest;
    };
    for alias in ALIASES {
        if let Change::Command { old, new } = alias.change
            && old == first
        {
            notes.push(format!(
                "`repoprobe {old}` is now `repoprobe {}`",
                new.join(" ")
            ));
            rest.splice(0..1, new.iter().map(OsString::from));
        }
    }
    rest
}

/// The arguments of one command being rewritten: those still to read (last first), those
/// written, and the notes.
struct Walk<'c> {
    here: String,
    cmd: &'c Command,
    queue: Vec<OsString>,
    out: Vec<OsString>,
    notes: Vec<String>,
}

impl Walk<'_> {
    /// A `--flag` or `--flag=value` of the command line, and the values it takes.
    fn flag(&mut self, arg: OsString, text: &str) {
        let (flag, inline) = match text.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(OsString::from(v))),
            None => (text.to_string(), None),
        };
        let here = self.here.clone();
        let old = ALIASES
            .iter()
            .filter(|a| a.commands.contains(&here.as_str()))
            .find(|a| match a.change {
                Change::Flag { old, .. }
                | Change::Positional { old }
                | Change::Repeat { old, .. }
                | Change::Millis { old, .. } => old == flag,
                Change::Command { .. } | Change::Value { .. } => false,
            });
        match old.map(|a| a.change) {
            Some(Change::Flag { old, new }) => {
                self.notes.push(note(&here, old, new));
                self.out.push(new.into());
                self.out.extend(inline);
            }
            Some(Change::Positional { old }) => {
                self.notes.push(format!(
                    "`repoprobe {here} {old} FILE` is now `repoprobe {here} FILE` (input files are \
                     positional)"
                ));
                self.out.extend(inline);
            }
            Some(Change::Repeat { old, new }) => {
                let Some(v) = inline.or_else(|| self.queue.pop()) else {
                    self.out.push(new.into());
                    return;
                };
                let v = v.to_string_lossy().into_owned();
                if v.contains(',') || old != new {
                    self.notes.push(format!(
                        "`repoprobe {here} {old} A,B` is now `{new} A {new} B` (a list is the \
                         flag repeated)"
                    ));
                }
                for item in v.split(',').filter(|s| !s.is_empty()) {
                    self.out.push(new.into());
                    self.out.push(item.into());
                }
            }
            Some(Change::Millis { old, new }) => {
                self.notes
                    .push(note(&here, old, &format!("{new} (seconds)")));
                self.out.push(new.into());
                if let Some(v) = inline.or_else(|| self.queue.pop()) {
                    self.out
                        .push(match v.to_string_lossy().trim().parse::<f64>() {
                            Ok(ms) => OsString::from(format!("{}", ms / 1000.0)),
                            // Not a number: clap says so about the new flag.
                            Err(_) => v,
                        });
                }
            }
            Some(Change::Command { .. } | Change::Value { .. }) | None => {
                // A flag of today's: copy it and the values it takes, a renamed value rewritten.
                self.out.push(arg);
                if inline.is_none() {
                    for _ in 0..self.values_taken(&flag) {
                        let Some(v) = self.queue.pop() else { break };
                        let v = renamed_value(&here, &flag, v, &mut self.notes);
                        self.out.push(v);
                    }
                }
            }
        }
    }

    /// How many values today's `flag` takes after it (0 for a switch or an unknown flag).
    fn values_taken(&self, flag: &str) -> usize {
        self.cmd
            .get_arguments()
            .find(|a| a.get_long() == flag.strip_prefix("--"))
            .map_or(0, |a| {
                if a.get_action().takes_values() {
                    a.get_num_args().map_or(1, |n| n.min_values().max(1))
                } else {
                    0
                }
            })
    }
}

/// A value of `flag` with its old spelling rewritten.
fn renamed_value(here: &str, flag: &str, v: OsString, notes: &mut Vec<String>) -> OsString {
    for alias in ALIASES.iter().filter(|a| a.commands.contains(&here)) {
        if let Change::Value { flag: f, old, new } = alias.change
            && f == flag
            && v.to_str() == Some(old)
        {
            notes.push(note(here, &format!("{f} {old}"), &format!("{f} {new}")));
            return new.into();
        }
    }
    v
}

fn note(here: &str, old: &str, new: &str) -> String {
    format!("`repoprobe {here} {old}` is now `{new}`")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    fn words(line: &str) -> Vec<OsString> {
        std::iter::once("repoprobe")
            .chain(line.split_whitespace())
            .map(OsString::from)
            .collect()
    }

    /// Each old spelling: its example rewrites into today's line, says so once, and today's
    /// line is one clap reads (so the new spelling is real).
    #[test]
    fn every_old_spelling_becomes_todays() {
        let cli = crate::Cli::command();
        for alias in ALIASES {
            let (old, new) = alias.example;
            let (got, notes) = rewrite(words(old), &cli);
            assert_eq!(got, words(new), "{alias:?}");
            assert!(!notes.is_empty(), "no note for {old}");
            let (again, none) = rewrite(words(new), &cli);
            assert_eq!(again, words(new), "today's line is rewritten: {new}");
            assert!(none.is_empty(), "today's line noted: {new}: {none:?}");
            if let Err(e) = crate::Cli::try_parse_from(words(new)) {
                panic!("{new}: {e}");
            }
        }
    }

    #[test]
    fn values_of_other_flags_are_left_alone() {
        let cli = crate::Cli::command();
        let line = "answer b.jsonl --agent claude-code --model m --out a --clone-cache c \
                    --agent-arg --seed --agent-arg=--repos";
        let (got, notes) = rewrite(words(line), &cli);
        assert_eq!(got, words(line));
        assert!(notes.is_empty(), "{notes:?}");
        // After `--`, nothing is read as ours.
        let (got, _) = rewrite(words("score d -- --seed 3"), &cli);
        assert_eq!(got, words("score d -- --seed 3"));
    }

    #[test]
    fn inline_values_and_millis() {
        let cli = crate::Cli::command();
        let (got, notes) = rewrite(words("score d --seed=3 --panel=a,b"), &cli);
        assert_eq!(got, words("score d --bootstrap-seed 3 --panel a --panel b"));
        assert_eq!(notes.len(), 2, "{notes:?}");
        // A value that is not a number is left for clap to refuse under the new name.
        let (got, _) = rewrite(words("judge b --backoff-ms soon"), &cli);
        assert_eq!(got, words("judge b --backoff-s soon"));
    }

    /// A spelling is an alias only where it was used: `--repos` in `curate report` is today's.
    #[test]
    fn aliases_apply_only_in_their_commands() {
        let cli = crate::Cli::command();
        let line = "curate report --repos r.jsonl --threads t.jsonl";
        let (got, notes) = rewrite(words(line), &cli);
        assert_eq!(got, words(line));
        assert!(notes.is_empty());
    }
}
