//! What a shell command an agent ran did, as far as retrieval is concerned: the files it printed
//! (`cat`, `head`, `tail`, `sed -n`, `nl`, `less`, `more`, `bat`), or whether it searched (`rg`,
//! `grep`, `find`, `fd`, `git grep`) or listed (`ls`, `tree`). Only the common cases are parsed
//! (docs/format.md#what-the-agent-read): a glob, a variable or a command substitution is never
//! expanded, and a file printed into a redirection was not seen.

/// What one command line did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ShellFacts {
    /// Files printed, as written (relative to the directory the command started in, after any
    /// `cd` it made).
    pub read: Vec<String>,
    pub searched: bool,
    pub listed: bool,
    /// Files the command set out to change or create (`> f`, `tee f`, `sed -i … f`, `rm`,
    /// `mv`, `cp`, `touch`, `mkdir`, `patch`, …), as written; `.` for a git command that changes
    /// the worktree or its history (`git apply`, `checkout`, `commit`, …). Whether it succeeded
    /// is not known here: an attempt counts.
    pub written: Vec<String>,
}

/// Reads a command line: `bash -lc '…'`, `sh -c …` unwrapped, then each command of `a && b; c |
/// d` in turn.
pub fn read_command(command: &str) -> ShellFacts {
    let mut facts = ShellFacts::default();
    let mut cwd: Vec<String> = Vec::new();
    read_script(command, &mut cwd, &mut facts, 0);
    facts
}

/// As [`read_command`], for a command given as its argument vector (Codex's `["bash", "-lc",
/// "…"]`).
pub fn read_argv(argv: &[String]) -> ShellFacts {
    let mut facts = ShellFacts::default();
    let mut cwd = Vec::new();
    read_words(argv, &mut cwd, &mut facts, 0);
    facts
}

fn read_script(script: &str, cwd: &mut Vec<String>, facts: &mut ShellFacts, depth: u8) {
    // Newlines separate commands as `;` does; shlex would read them as blanks.
    for line in script.lines() {
        let Some(words) = shlex::split(&spaced_operators(line)) else {
            continue;
        };
        read_words(&words, cwd, facts, depth);
    }
}

/// `a&&b`, `a;b`, `a|b` with blanks around their operators, outside quotes, so that shlex gives
/// the operators as words of their own.
fn spaced_operators(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in line.chars() {
        if escaped {
            escaped = false;
            out.push(c);
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                out.push(c);
            }
            '\'' if !double => {
                single = !single;
                out.push(c);
            }
            '"' if !single => {
                double = !double;
                out.push(c);
            }
            ';' | '|' | '&' if !single && !double => {
                out.push(' ');
                out.push(c);
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

fn read_words(words: &[String], cwd: &mut Vec<String>, facts: &mut ShellFacts, depth: u8) {
    let mut command: Vec<&str> = Vec::new();
    let mut at = 0;
    while at <= words.len() {
        let w = words.get(at).map(String::as_str);
        match w {
            None | Some(";" | "|" | "&") => {
                one_command(&command, cwd, facts, depth);
                command.clear();
            }
            // `&&` and `||` come as two operator words after spacing.
            Some(w) => command.push(w),
        }
        at += 1;
    }
}

/// One simple command: its program and arguments, redirections and assignments left out.
fn one_command(words: &[&str], cwd: &mut Vec<String>, facts: &mut ShellFacts, depth: u8) {
    let mut args: Vec<&str> = Vec::new();
    let mut redirected = false;
    let mut skip_next = false;
    for (i, w) in words.iter().enumerate() {
        if skip_next {
            skip_next = false;
            continue;
        }
        if is_redirection(w) {
            // `> file` (stdout away: nothing was seen) or `2>/dev/null` (harmless).
            let to_stdout = !w.starts_with('2') && !w.starts_with('<');
            if to_stdout && !w.contains("&") {
                redirected = true;
            }
            skip_next = w.ends_with('>') || *w == "<";
            let target = if skip_next {
                words.get(i + 1).copied()
            } else {
                w.rsplit(['>', '<']).next().filter(|t| !t.is_empty())
            };
            if w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&')
                .starts_with('>')
                && let Some(t) = target
            {
                push_written(facts, cwd, std::iter::once(t));
            }
            continue;
        }
        if args.is_empty() && is_assignment(w) {
            continue;
        }
        args.push(w);
    }
    let Some((&program, rest)) = args.split_first() else {
        return;
    };
    let program = program.rsplit('/').next().unwrap_or(program);
    if writes(program, rest, cwd, facts) {
        return;
    }
    match program {
        "bash" | "sh" | "zsh" | "dash" if depth < 3 => {
            if let Some(i) = rest
                .iter()
                .position(|a| a.starts_with('-') && a.contains('c'))
                && let Some(script) = rest.get(i + 1)
            {
                read_script(script, cwd, facts, depth + 1);
            }
        }
        "cd" => match rest.first() {
            Some(dir) if !dir.starts_with('/') && !dir.starts_with('~') && *dir != "-" => {
                cwd.extend(dir.split('/').filter(|p| !p.is_empty()).map(str::to_string));
            }
            _ => cwd.clear(),
        },
        "cat" | "less" | "more" | "bat" | "batcat" if !redirected => {
            push_files(
                facts,
                cwd,
                rest.iter().filter(|a| !a.starts_with('-')).copied(),
            );
        }
        "head" | "tail" if !redirected => push_files(facts, cwd, operands(rest, &["-n", "-c"])),
        "nl" if !redirected => push_files(
            facts,
            cwd,
            operands(
                rest,
                &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
            ),
        ),
        "sed" if !redirected => sed(rest, cwd, facts),
        "rg" | "grep" | "egrep" | "fgrep" | "ag" | "ack" | "find" | "fd" | "fdfind" => {
            facts.searched = true
        }
        "git" if rest.first() == Some(&"grep") => facts.searched = true,
        "ls" | "tree" => facts.listed = true,
        _ => {}
    }
}

/// `sed -n 'X,Yp' FILE…` (or `sed -n -e … FILE`): the files after the script. Without `-n` sed
/// prints the whole file as well, so it reads it too; `-i` edits instead.
fn sed(args: &[&str], cwd: &[String], facts: &mut ShellFacts) {
    if args
        .iter()
        .any(|a| a.starts_with("-i") || *a == "--in-place")
    {
        return;
    }
    let mut files = Vec::new();
    let mut script_given = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-e" || a == "-f" || a == "--expression" {
            script_given = true;
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            i += 1;
            continue;
        }
        if script_given {
            files.push(a);
        } else {
            script_given = true;
        }
        i += 1;
    }
    push_files(facts, cwd, files.into_iter());
}

/// The arguments that are not options nor an option's value (`-n 20`; `-n20`, `-20` and
/// `--lines=20` are one word).
fn operands<'a>(args: &[&'a str], with_value: &[&str]) -> impl Iterator<Item = &'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if with_value.contains(&a) {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        out.push(a);
        i += 1;
    }
    out.into_iter()
}

/// A command that changes files: what it writes, into `facts`; `false` for any other.
fn writes(program: &str, rest: &[&str], cwd: &[String], facts: &mut ShellFacts) -> bool {
    match program {
        "sed" | "perl" if in_place(program, rest) => {
            // The script is the first operand (`sed -i SCRIPT`, `perl -pi -e SCRIPT`): the
            // files follow it.
            push_written(
                facts,
                cwd,
                rest.iter().filter(|a| !a.starts_with('-')).skip(1).copied(),
            )
        }
        // `git stash list` and `git stash show` only read.
        "git"
            if rest.first() == Some(&"stash") && matches!(rest.get(1), Some(&"list" | &"show")) =>
        {
            return false;
        }
        "git" if rest.first().is_some_and(|c| GIT_WRITES.contains(c)) => {
            facts.written.push(".".to_string())
        }
        // A copy or link writes its last operand only.
        "cp" | "ln" | "install" => push_written(
            facts,
            cwd,
            rest.iter()
                .rfind(|a| !a.starts_with('-'))
                .copied()
                .into_iter(),
        ),
        "tee" | "rm" | "rmdir" | "mv" | "touch" | "mkdir" | "truncate" | "patch" => push_written(
            facts,
            cwd,
            rest.iter().filter(|a| !a.starts_with('-')).copied(),
        ),
        _ => return false,
    }
    true
}

/// `sed -i`/`--in-place`, `perl -i` (also bundled: `-pi`, `-i.bak`).
fn in_place(program: &str, args: &[&str]) -> bool {
    args.iter().any(|a| match program {
        "perl" => a.starts_with('-') && !a.starts_with("--") && a.contains('i'),
        _ => a.starts_with("-i") || *a == "--in-place" || a.starts_with("--in-place="),
    })
}

/// Git subcommands that change the worktree, the index or the history.
const GIT_WRITES: [&str; 14] = [
    "apply",
    "am",
    "checkout",
    "switch",
    "restore",
    "reset",
    "commit",
    "merge",
    "rebase",
    "cherry-pick",
    "stash",
    "rm",
    "mv",
    "clean",
];

/// Paths a command writes, joined to its directory; the terminal's and the void's devices are
/// no file of the repository.
fn push_written<'a>(facts: &mut ShellFacts, cwd: &[String], files: impl Iterator<Item = &'a str>) {
    for f in files {
        if f.is_empty() || f == "-" || f.starts_with("/dev/") || f.starts_with('&') {
            continue;
        }
        facts.written.push(joined(cwd, f));
    }
}

fn push_files<'a>(facts: &mut ShellFacts, cwd: &[String], files: impl Iterator<Item = &'a str>) {
    for f in files {
        if f == "-" || f.contains(['*', '?', '[', '$', '`', '{']) {
            continue;
        }
        facts.read.push(joined(cwd, f));
    }
}

/// `f` from the directory `cwd` (relative to where the command started): `..` parts taken off
/// `cwd` while it has parts, kept otherwise (and the path is then refused where it is used).
fn joined(cwd: &[String], f: &str) -> String {
    if f.starts_with('/') {
        return f.to_string();
    }
    let mut parts: Vec<&str> = cwd.iter().map(String::as_str).collect();
    let mut above = 0;
    for p in f.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.is_empty() => above += 1,
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut out = vec![".."; above];
    out.extend(parts);
    out.join("/")
}

fn is_redirection(w: &str) -> bool {
    let w = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    w.starts_with('>') || w.starts_with('<')
}

/// `NAME=value` before the program.
fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(cmd: &str) -> Vec<String> {
        read_command(cmd).read
    }

    #[test]
    fn the_common_ways_of_printing_a_file_are_reads() {
        assert_eq!(read("cat src/lib.rs"), ["src/lib.rs"]);
        assert_eq!(read("cat -n a.rs b.rs"), ["a.rs", "b.rs"]);
        assert_eq!(read("head -n 50 README.md"), ["README.md"]);
        assert_eq!(read("tail -20 log.txt"), ["log.txt"]);
        assert_eq!(read("sed -n '1,120p' src/main.rs"), ["src/main.rs"]);
        assert_eq!(read("sed -n -e 5p x.py"), ["x.py"]);
        assert_eq!(read("nl -ba src/a.rs | sed -n '10,40p'"), ["src/a.rs"]);
        assert_eq!(read("nl -b a src/a.rs"), ["src/a.rs"]);
        assert_eq!(read("less docs/x.md"), ["docs/x.md"]);
    }

    #[test]
    fn wrapped_and_chained_commands_are_read_in_turn() {
        assert_eq!(
            read("bash -lc 'cd src && cat lib.rs; head -5 ../Cargo.toml'"),
            ["src/lib.rs", "Cargo.toml"]
        );
        assert_eq!(
            read("/bin/bash -lc \"cat a.rs&&cat b.rs\""),
            ["a.rs", "b.rs"]
        );
        assert_eq!(
            read_argv(&["bash".into(), "-lc".into(), "cat a.rs 2>/dev/null".into()]).read,
            ["a.rs"]
        );
        assert_eq!(read("LC_ALL=C cat x\ncat y"), ["x", "y"]);
    }

    #[test]
    fn what_was_not_printed_is_not_read() {
        assert!(read("ls -la src").is_empty());
        assert!(read("cat a.rs > /tmp/copy").is_empty());
        assert!(read("cat src/*.rs").is_empty());
        assert!(read("sed -i 's/a/b/' x.rs").is_empty());
        assert!(read("echo 'cat x.rs'").is_empty());
        assert!(read("rg -n parse src").is_empty());
        assert!(read("cat 'unterminated").is_empty());
        let f = read_command("rg -n parse src | head -5");
        assert!(f.searched && f.read.is_empty(), "{f:?}");
        assert!(read_command("ls src").listed);
        assert!(read_command("git grep foo").searched);
    }

    fn written(cmd: &str) -> Vec<String> {
        read_command(cmd).written
    }

    #[test]
    fn commands_that_change_files_are_writes_wherever_they_point() {
        assert_eq!(written("echo x > src/a.rs"), ["src/a.rs"]);
        assert_eq!(written("cd src && cat a.rs >>b.rs"), ["src/b.rs"]);
        assert_eq!(written("sed -i 's/a/b/' x.rs y.rs"), ["x.rs", "y.rs"]);
        assert_eq!(written("perl -pi -e 's/a/b/' x.rs"), ["x.rs"]);
        assert_eq!(written("printf x | tee -a notes.md"), ["notes.md"]);
        assert_eq!(written("rm -rf build && touch a"), ["build", "a"]);
        assert_eq!(written("cp -r src/a.rs src/b.rs"), ["src/b.rs"]);
        assert_eq!(written("git apply fix.patch"), ["."]);
        assert_eq!(written("bash -lc 'git checkout -- src'"), ["."]);
        // A write outside the repository is still written down here; the caller decides.
        assert_eq!(written("cat a.rs > /tmp/copy"), ["/tmp/copy"]);
    }

    #[test]
    fn reading_and_discarding_output_writes_nothing() {
        assert!(written("cat a.rs 2>/dev/null").is_empty());
        assert!(written("rg x > /dev/null").is_empty());
        assert!(written("cat a.rs 2>&1 | head").is_empty());
        assert!(written("git status && git log -1 && git diff").is_empty());
        assert!(written("git stash list").is_empty());
        assert!(written("sed -n '1,5p' a.rs").is_empty());
        assert!(written("ls -la").is_empty());
    }
}
