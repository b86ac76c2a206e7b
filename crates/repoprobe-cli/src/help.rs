//! `repoprobe --help`: the commands in groups — what is free, what spends money, the curation,
//! the tools — a line each, so a newcomer sees at a glance which command calls a model.

use clap::Command;

/// The groups of `repoprobe --help`, in order, each command with its line; every command is in
/// exactly one (a test checks). The lines are short on purpose: `COMMAND --help` says the rest.
pub const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "Score and read (free: nothing leaves the machine)",
        &[
            (
                "validate",
                "Check record files against the formats and rules",
            ),
            (
                "score",
                "The paper's tables, intervals, strata and rank ranges from result files",
            ),
            (
                "judge-agreement",
                "How far two judges (or a judge and people) agree",
            ),
            (
                "list-runs",
                "One row per run: verdict, score, evidence, tools, tokens, cost",
            ),
            ("status", "Where a live run stands, per shard, with an ETA"),
            ("bundle", "Merge result files into one validated bundle"),
            ("merge", "Join the outputs of a run's shards into one"),
        ],
    ),
    (
        "Live (spends money: calls a model or an agent; --estimate prices it and sends nothing)",
        &[
            (
                "answer",
                "Answer the questions with an agent exploring each repository",
            ),
            (
                "judge",
                "Score answers against each question's checklist with an LLM judge",
            ),
            (
                "judge-scalar",
                "Grade answers on SWE-QA's five scalar dimensions (the baseline)",
            ),
            (
                "classify-failures",
                "Label the answers below 60 % with a failure mode",
            ),
            (
                "run",
                "Carry out a whole plan (plan.toml): answers, judgments, tables",
            ),
        ],
    ),
    (
        "Curate (questions from GitHub Discussions; some stages call a model)",
        &[(
            "curate",
            "repos, themes, harvest, filter, classify, enhance, make-checklist, verify, …",
        )],
    ),
    (
        "Tools",
        &[
            (
                "evidence",
                "Fill checklist items' evidence from the paths they cite",
            ),
            (
                "synth",
                "Generate a large, labelled synthetic benchmark with results",
            ),
            ("schema", "Write the JSON Schemas of every record kind"),
            (
                "help",
                "Print this message or the help of the given command",
            ),
        ],
    ),
];

/// The command tree as `repoprobe` shows it: clap's, its command list replaced by the groups.
pub fn command(cli: Command) -> Command {
    let width = GROUPS
        .iter()
        .flat_map(|(_, lines)| lines.iter())
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (title, lines) in GROUPS {
        text.push_str(&format!("{title}:\n"));
        for (name, line) in *lines {
            text.push_str(&format!("  {name:<width$}  {line}\n"));
        }
        text.push('\n');
    }
    cli.before_help(text).help_template(
        "{about-with-newline}\n{usage-heading} {usage}\n\n{before-help}Options:\n{options}\n\n\
         Run `repoprobe COMMAND --help` for a command's flags; docs/cli.md is the manual.\n",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_command_is_in_one_group() {
        let cli = crate::Cli::command();
        let mut names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
        names.push("help");
        for name in &names {
            let n = GROUPS
                .iter()
                .filter(|(_, g)| g.iter().any(|(n, _)| n == name))
                .count();
            assert_eq!(n, 1, "{name} is in {n} groups of `repoprobe --help`");
        }
        for (_, group) in GROUPS {
            for (name, line) in *group {
                assert!(names.contains(name), "{name} is grouped but is no command");
                // One line each at 100 columns: clap would wrap a longer one to column 0.
                assert!(name.len() + line.chars().count() < 96, "{name}: {line}");
            }
        }
    }

    #[test]
    fn the_help_names_every_command_with_a_line() {
        let mut cli = command(crate::Cli::command());
        let help = cli.render_help().to_string();
        for sub in crate::Cli::command().get_subcommands() {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{} ", sub.get_name())))
                .unwrap_or_else(|| panic!("{} missing from:\n{help}", sub.get_name()));
            assert!(line.split_whitespace().count() > 2, "{line}");
        }
        assert!(help.contains("Live (spends money"), "{help}");
    }
}
