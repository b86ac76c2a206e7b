//! The docs against the command line: every `repoprobe …` command line of README.md and
//! docs/*.md — in a fenced block or in inline code — names a subcommand the CLI has, and every
//! `--flag` it uses is a flag of that subcommand that `--help` shows (not hidden: the old
//! spellings the CLI still accepts are not in its tree, so a page that still uses one is
//! flagged), with a value the flag takes when it takes a fixed set. The tree is the CLI's own
//! (`repoprobe_cli::command()`), never a list kept here. And every command and flag of that
//! tree has a line of help.
//!
//! What counts as a command line: the word `repoprobe` (not part of a path or a crate name)
//! followed by a space and a subcommand, in code; `\`-continued lines are joined, and so are a
//! synopsis's indented lines that go on with `[--flag …]` or `--flag`. The command ends at a
//! shell separator (`;`, `&&`, `||`, ` | `, a redirection) or a `#` comment; quoted text is one
//! word and never a flag. A word in capitals (`COMMAND`, `FILE…`) or `…` after `repoprobe` is a
//! placeholder, not a subcommand, and the line is not checked.

use clap::Command;
use std::path::Path;

/// The page's name as a failure says it: `docs/cli.md`.
fn shown(page: &Path) -> String {
    let parent = page
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let name = page.file_name().unwrap().to_string_lossy().into_owned();
    match parent.as_deref() {
        Some("docs") => format!("docs/{name}"),
        _ => name,
    }
}

/// A piece of code on a page: its text (lines joined) and the line it starts on.
#[derive(Debug)]
struct Code {
    line: usize,
    text: String,
}

/// The code of a Markdown page: each fenced block's logical lines (continuations joined), and
/// each inline code span (which may run over a line break, not over a blank line).
fn code_of(text: &str) -> Vec<Code> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    // The prose between fences, as (line number, text) paragraphs.
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if let Some(fence) = ["```", "~~~"].iter().find(|f| trimmed.starts_with(**f)) {
            inline_spans(&paragraph, &mut out);
            paragraph.clear();
            i += 1;
            let start = i;
            while i < lines.len() && !lines[i].trim_start().starts_with(fence) {
                i += 1;
            }
            fenced_lines(&lines[start..i], start + 1, &mut out);
            i += 1;
            continue;
        }
        if trimmed.is_empty() {
            inline_spans(&paragraph, &mut out);
            paragraph.clear();
        } else {
            paragraph.push((i + 1, lines[i]));
        }
        i += 1;
    }
    inline_spans(&paragraph, &mut out);
    out
}

/// A fenced block's logical lines: a line ending in `\` goes on with the next, and a line with
/// a `repoprobe` command goes on with the indented lines below it that start with `[`, `--` or
/// `|` (a synopsis written over several lines).
fn fenced_lines(block: &[&str], first: usize, out: &mut Vec<Code>) {
    let mut i = 0;
    while i < block.len() {
        let line = first + i;
        let mut text = block[i].to_string();
        i += 1;
        loop {
            if let Some(stripped) = text.strip_suffix('\\') {
                text = stripped.to_string();
                if i < block.len() {
                    text.push(' ');
                    text.push_str(block[i].trim());
                    i += 1;
                    continue;
                }
            }
            let goes_on = i < block.len()
                && block[i].starts_with(char::is_whitespace)
                && ["[", "--", "|"]
                    .iter()
                    .any(|p| block[i].trim_start().starts_with(p))
                && !invocations(&text).is_empty();
            if goes_on {
                text.push(' ');
                text.push_str(block[i].trim());
                i += 1;
                continue;
            }
            break;
        }
        out.push(Code { line, text });
    }
}

/// The inline code spans of a paragraph (a span of N backticks ends at the next run of exactly
/// N), each with the line it starts on.
fn inline_spans(paragraph: &[(usize, &str)], out: &mut Vec<Code>) {
    if paragraph.is_empty() {
        return;
    }
    let mut text = String::new();
    let mut starts = Vec::new(); // (byte offset, line number)
    for (n, l) in paragraph {
        starts.push((text.len(), *n));
        text.push_str(l);
        text.push('\n');
    }
    let line_at = |offset: usize| {
        starts
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map(|(_, n)| *n)
            .unwrap_or(paragraph[0].0)
    };
    let bytes = text.as_bytes();
    let run = |from: usize| bytes[from..].iter().take_while(|b| **b == b'`').count();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let open = i + n;
        let mut j = open;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let m = run(j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(c) => {
                out.push(Code {
                    line: line_at(open),
                    text: text[open..c].replace('\n', " "),
                });
                i = c + n;
            }
            None => i = open,
        }
    }
}

/// Where `repoprobe` starts a command in `code`: the byte offsets just after `repoprobe `.
fn invocations(code: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("repoprobe ") {
        let at = from + at;
        let before = code[..at].chars().next_back();
        let starts_a_word = match before {
            None => true,
            Some(c) => c.is_whitespace() || "(;&|`\"'".contains(c),
        };
        if starts_a_word {
            found.push(at + "repoprobe ".len());
        }
        from = at + "repoprobe ".len();
    }
    found
}

/// The words of a command up to its end (a shell separator, a redirection, a comment, the end
/// of the code or the next `repoprobe`): quotes removed, quoted text one word, marked quoted.
fn words(rest: &str) -> Vec<(String, bool)> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = rest.chars().peekable();
    let mut prev = ' ';
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let q = c;
                in_word = true;
                quoted = true;
                for d in chars.by_ref() {
                    if d == q {
                        break;
                    }
                    word.push(d);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push((std::mem::take(&mut word), quoted));
                    in_word = false;
                    quoted = false;
                }
            }
            ';' | '>' | '<' | '&' | '`' | ')' => break,
            '#' if prev.is_whitespace() => break,
            '|' if prev.is_whitespace() && chars.peek().is_some_and(|n| n.is_whitespace()) => {
                break;
            }
            '|' if chars.peek() == Some(&'|') => break,
            c => {
                in_word = true;
                word.push(c);
            }
        }
        prev = c;
    }
    if in_word {
        words.push((word, quoted));
    }
    // A second `repoprobe` in the same code starts a command of its own.
    if let Some(at) = words.iter().position(|(w, q)| !q && w == "repoprobe") {
        words.truncate(at);
    }
    words
}

/// The command as a failure shows it: `repoprobe` and its words, quoted ones in quotes.
fn command_line(rest: &str) -> String {
    let mut line = String::from("repoprobe");
    for (w, quoted) in words(rest) {
        line.push(' ');
        match quoted {
            true => line.push_str(&format!("'{w}'")),
            false => line.push_str(&w),
        }
    }
    line
}

/// A placeholder where a subcommand would be: `COMMAND`, `…`, `<command>`, `$CMD`.
fn placeholder(word: &str) -> bool {
    word.contains('…')
        || word.contains("...")
        || word.starts_with(['<', '$', '{', '['])
        || (word.chars().any(|c| c.is_ascii_uppercase())
            && !word.chars().any(|c| c.is_ascii_lowercase()))
}

/// One thing wrong with a command line of a page.
fn problem(page: &str, line: usize, command: &str, what: String) -> String {
    let mut command = command.trim().to_string();
    if command.chars().count() > 110 {
        command = command.chars().take(107).collect::<String>() + "...";
    }
    format!("{page}:{line}: `{command}`: {what}")
}

/// The problems of one command line: `rest` is what follows `repoprobe `.
fn check(tree: &Command, rest: &str) -> Vec<String> {
    let words = words(rest);
    let mut cmd = tree;
    let mut path = vec!["repoprobe".to_string()];
    let mut k = 0;
    let mut problems = Vec::new();
    // The subcommand path: words naming a subcommand, until the first flag or other word.
    while k < words.len() {
        let (w, quoted) = &words[k];
        if *quoted || w.starts_with('-') || !cmd.has_subcommands() {
            break;
        }
        match cmd.find_subcommand(w) {
            Some(sub) => {
                if sub.is_hide_set() {
                    problems.push(format!("`{} {w}` is a hidden command", path.join(" ")));
                }
                cmd = sub;
                path.push(w.clone());
                k += 1;
            }
            None if placeholder(w) => {
                if k == 0 {
                    return Vec::new();
                }
                break;
            }
            // A command of commands that takes no word of its own: the word is no command.
            None if cmd.get_positionals().next().is_none() => {
                problems.push(format!("`{}` has no command `{w}`", path.join(" ")));
                return problems;
            }
            None => break,
        }
    }
    let at = path.join(" ");
    // The flags, and the values of those that take a fixed set.
    while k < words.len() {
        let (w, quoted) = &words[k];
        k += 1;
        if *quoted {
            continue;
        }
        let w = w.trim_start_matches(['[', '(']);
        if !w.starts_with("--") || w == "--" {
            continue;
        }
        for flag in w.split(['/', '|']).filter(|f| f.starts_with("--")) {
            let flag = flag.trim_end_matches([']', ')', ',', '.', ':', '…']);
            let (name, inline) = match flag[2..].split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (&flag[2..], None),
            };
            if name.is_empty() || name.starts_with(|c: char| !c.is_ascii_alphanumeric()) {
                continue;
            }
            let Some(arg) = cmd.get_arguments().find(|a| {
                a.get_long() == Some(name)
                    || a.get_all_aliases().is_some_and(|al| al.contains(&name))
            }) else {
                problems.push(format!("`--{name}` is not a flag of `{at}`"));
                continue;
            };
            if arg.is_hide_set() {
                problems.push(format!("`--{name}` is a hidden flag of `{at}`"));
            }
            if !arg.get_action().takes_values() {
                continue;
            }
            let values = arg.get_possible_values();
            if values.is_empty() {
                continue;
            }
            let given = inline.or_else(|| {
                words
                    .get(k)
                    .filter(|(v, q)| *q || !v.starts_with('-'))
                    .map(|(v, _)| v.clone())
            });
            let Some(given) = given else { continue };
            let given = given.trim_end_matches([']', ')', ',']);
            for v in given.split('|') {
                let literal = v.chars().any(|c| c.is_ascii_alphanumeric())
                    && v.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c));
                if literal
                    && !values
                        .iter()
                        .any(|p| !p.is_hide_set() && p.matches(v, false))
                {
                    let names: Vec<&str> = values
                        .iter()
                        .filter(|p| !p.is_hide_set())
                        .map(|p| p.get_name())
                        .collect();
                    problems.push(format!(
                        "`--{name} {v}`: `{v}` is not one of {}",
                        names.join(", ")
                    ));
                }
            }
        }
    }
    problems
}

/// Command lines that use an old spelling on purpose, each with why: (page, the command line's
/// start, the reason).
const ALLOWED: &[(&str, &str, &str)] = &[(
    "docs/cli.md",
    "repoprobe score --seed",
    "the Conventions show the note an old spelling prints",
)];

/// The CLI's command tree, built (global flags given to every subcommand, `--help` added).
fn tree() -> Command {
    let mut tree = repoprobe_cli::command();
    tree.build();
    tree
}

/// Every problem of every `repoprobe` command line of every page, each with its page and line.
fn problems_in_docs() -> (usize, Vec<String>) {
    let tree = tree();
    let mut checked = 0;
    let mut problems = Vec::new();
    for page in crate::common::doc_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = shown(&page);
        for code in code_of(&text) {
            for start in invocations(&code.text) {
                checked += 1;
                let rest = &code.text[start..];
                let shown_command = command_line(rest);
                let allowed = ALLOWED
                    .iter()
                    .any(|(p, line, _)| *p == name && shown_command.starts_with(line));
                if allowed {
                    continue;
                }
                for p in check(&tree, rest) {
                    problems.push(problem(&name, code.line, &shown_command, p));
                }
            }
        }
    }
    (checked, problems)
}

#[test]
fn every_repoprobe_command_line_in_the_docs_is_one_the_cli_takes() {
    let (checked, problems) = problems_in_docs();
    assert!(
        checked > 100,
        "only {checked} command lines found: the extraction is broken"
    );
    assert!(
        problems.is_empty(),
        "{} problem(s) in the docs' command lines ({checked} checked):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Every command the CLI shows, and every argument it shows, has a line of help.
#[test]
fn every_command_and_every_flag_has_help() {
    fn walk(cmd: &Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let text = arg
                .get_help()
                .or(arg.get_long_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if text.trim().is_empty() {
                let shown = match arg.get_long() {
                    Some(l) => format!("--{l}"),
                    None => arg
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| id.to_string()),
                };
                missing.push(format!("`{path} {shown}` has no help"));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let sub_path = format!("{path} {}", sub.get_name());
            if sub.get_name() != "help" {
                let about = sub
                    .get_about()
                    .or(sub.get_long_about())
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if about.trim().is_empty() {
                    missing.push(format!("`{sub_path}` has no help line"));
                }
            }
            walk(sub, &sub_path, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&tree(), "repoprobe", &mut missing);
    assert!(
        missing.is_empty(),
        "{} without help:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The extraction itself, on lines of the kinds the docs hold.
#[test]
fn the_docs_test_finds_commands_where_the_docs_write_them() {
    let page = "Prose says repoprobe is a tool, `repoprobe score a.json --by language` inline,\n\
                and a span over a break: `repoprobe judge-agreement FILES --a\nX`.\n\n\
                ```sh\n\
                OPENAI_API_KEY=... repoprobe judge b.jsonl a.jsonl \\\n    --out j.jsonl --model m  # a comment --nope\n\
                repoprobe answer --agent command --command 'my-agent --model {model}' > log\n\
                crates/repoprobe-cli and ~/.cache/repoprobe are paths\n\
                ```\n\n\
                ```\n\
                repoprobe judge FILE... --out J.jsonl --provider openai|anthropic\n\
                \x20               [--base-url URL] [--price-in/--price-out]\n\
                ```\n";
    let code = code_of(page);
    let found: Vec<(usize, String)> = code
        .iter()
        .flat_map(|c| {
            invocations(&c.text).into_iter().map(|s| {
                let w: Vec<String> = words(&c.text[s..]).into_iter().map(|(w, _)| w).collect();
                (c.line, w.join(" "))
            })
        })
        .collect();
    assert_eq!(
        found,
        vec![
            (1, "score a.json --by language".to_string()),
            (2, "judge-agreement FILES --a X".to_string()),
            (
                6,
                "judge b.jsonl a.jsonl --out j.jsonl --model m".to_string()
            ),
            (
                8,
                "answer --agent command --command my-agent --model {model}".to_string()
            ),
            (
                13,
                "judge FILE... --out J.jsonl --provider openai|anthropic [--base-url URL] \
                 [--price-in/--price-out]"
                    .to_string()
            ),
        ]
    );
    let tree = tree();
    assert!(check(&tree, "score a.json --by language").is_empty());
    assert!(check(&tree, "answer --agent command --command 'x --nope'").is_empty());
    assert!(check(&tree, "COMMAND --help").is_empty());
    let wrong = check(&tree, "score a.json --no-such-flag --format text|json");
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    assert!(wrong[0].contains("--no-such-flag"), "{wrong:?}");
    assert!(wrong[1].contains("`text`"), "{wrong:?}");
    assert_eq!(check(&tree, "no-such-command x").len(), 1);
}
