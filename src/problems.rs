//! What the site says, on the view in front of the user, of what it did not count: the files in
//! use that had problems (one line under the "Numbers from …" line, on every view), the
//! `?data=` URLs that could not be fetched, and, where a view has nothing to show, why, per file.
//! The words of each file's problems are the core's (`issue::by_file`, `FileIssues::line`), as
//! the CLI's are. Everything here is text: file names, URLs and messages come from the user's
//! data and are only ever rendered as text nodes.

use crate::protocol::{FetchFailure, Snapshot};
use crate::state::{AppState, Busy, Origin};
use crate::view_href;
use leptos::prelude::*;
use repoprobe_core::RecordKind;
use repoprobe_core::issue::{self, FileIssues};
use repoprobe_core::sort::SharedSort;

/// How many files the line names before "and N more".
const FILES_NAMED: usize = 3;

/// The line of the files of `snapshot` with problems: each file's sentence (the core's), at most
/// `FILES_NAMED` of them, then how many more; `None` when no file had a problem.
pub fn problems_line(snapshot: &Snapshot) -> Option<String> {
    let mut files = issue::by_file(&snapshot.issues);
    // In the order the files were given (the issues come kind by kind).
    files.shared_sort_by_key(|f| {
        snapshot
            .files
            .iter()
            .position(|s| s.name == f.file)
            .unwrap_or(usize::MAX)
    });
    if files.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = files
        .iter()
        .take(FILES_NAMED)
        .map(FileIssues::line)
        .collect();
    if files.len() > FILES_NAMED {
        let more = files.len() - FILES_NAMED;
        parts.push(format!("and {more} more file(s) with problems"));
    }
    Some(parts.join("; ") + ".")
}

/// What the numbers are from when a `?data=` URL failed: `counted`, the names of the files
/// that count (`bundled`: whether they are the bundled set, named `set`).
pub fn instead(counted: &[String], bundled: bool, set: &str) -> String {
    if counted.is_empty() {
        "Nothing else is loaded: there are no numbers.".into()
    } else if bundled {
        format!("The numbers are from the bundled “{set}” set instead, an example.")
    } else {
        format!("The numbers are from {} instead.", counted.join(", "))
    }
}

/// One failed `?data=` URL in words.
pub fn fetch_line(f: &FetchFailure) -> String {
    format!("Could not fetch {}: {}.", f.url, f.reason)
}

/// `3 scalar judgments`, from a bundle key and a count.
fn records(key: &str, n: usize) -> String {
    let noun = RecordKind::ALL
        .iter()
        .find(|k| k.bundle_key() == key)
        .map_or(key, |k| k.noun());
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Why a view that needs records of `needs` has none, one sentence per file of `user` (the
/// user's files that count, by name) that gave none: could not be read, its records left out
/// (and the first problem, located), or it holds other kinds only, or nothing.
pub fn why_empty(needs: RecordKind, user: &[String], snapshot: &Snapshot) -> Vec<String> {
    let key = needs.bundle_key();
    let by_file = issue::by_file(&snapshot.issues);
    let mut out = Vec::new();
    // (A file not in the snapshot is not loaded yet: nothing to say of it.)
    for name in user
        .iter()
        .filter(|n| snapshot.files.iter().any(|f| &f.name == *n))
    {
        let gave = snapshot.gave(name);
        if gave.iter().any(|(k, n)| k == key && *n > 0) {
            continue;
        }
        let short = name.rsplit('/').next().unwrap_or(name);
        let problems = by_file.iter().find(|f| &f.file == name);
        if let Some(f) = problems.filter(|f| f.unreadable.is_some() && !f.read_in_part) {
            out.push(f.line() + ".");
            continue;
        }
        let mut text = if gave.is_empty() {
            format!("{short} gave no valid record")
        } else {
            let list: Vec<String> = gave.iter().map(|(k, n)| records(k, *n)).collect();
            format!("{short} holds {} and no {}", list.join(", "), needs.noun())
        };
        match problems {
            Some(f) => {
                text += &format!(": {}", f.line());
                if let Some(first) = snapshot.issues.iter().find(|i| &i.file == name)
                    && f.unreadable.is_none()
                {
                    text += &format!("; the first, at {}: {}", first.location, first.message);
                }
            }
            None if gave.is_empty() => text += ": it holds no record",
            None => {}
        }
        out.push(text + ".");
    }
    out
}

/// The names of the user's files that count now (dropped, picked, fetched).
fn user_files(state: AppState) -> Vec<String> {
    state
        .counted_files()
        .into_iter()
        .filter(|f| f.origin != Origin::Bundled)
        .map(|f| f.name)
        .collect()
}

/// Under the "Numbers from …" line, on every view: the `?data=` URLs that failed (with what
/// the numbers are from instead) and the files in use that had problems, with a link to the
/// Data view's list. Nothing when there is nothing to say.
#[component]
pub fn LoadProblems(state: AppState) -> impl IntoView {
    move || {
        let failed = state.fetch_failures.get();
        let line = state.snapshot.with(|s| problems_line(s));
        if failed.is_empty() && line.is_none() {
            return None;
        }
        let instead = (!failed.is_empty()).then(|| {
            let counted = state.counted_files();
            let bundled = counted.iter().any(|f| f.origin == Origin::Bundled);
            let names: Vec<String> = counted
                .iter()
                .map(|f| f.name.rsplit('/').next().unwrap_or(&f.name).to_string())
                .collect();
            let set = state.bundled_set.get().map(|s| s.name).unwrap_or_default();
            // While the other files are still being read, what counts is not known yet.
            (state.busy.with(Busy::is_idle) || !counted.is_empty())
                .then(|| instead(&names, bundled, &set))
        });
        Some(view! {
            <div class="load-problems" role="note">
                {failed
                    .iter()
                    .map(|f| view! { <p class="fetch-failed">{fetch_line(f)}</p> })
                    .collect_view()}
                {instead.flatten().map(|t| view! { <p class="instead">{t}</p> })}
                {line.map(|t| view! {
                    <p class="not-counted">
                        {t} " — " <a href=view_href(crate::View::Data, &[]) + "#issues">"details"</a>
                    </p>
                })}
            </div>
        })
    }
}

/// A view's empty state when no valid record of `needs` came: why, per file of the user's
/// (and per `?data=` URL that failed); `fallback` when the user gave no file (nothing was
/// dropped: there is nothing to explain).
#[component]
pub fn WhyEmpty(state: AppState, needs: RecordKind, fallback: &'static str) -> impl IntoView {
    move || {
        // Not "none" while files are still being read: the snapshot is the last load's.
        if state.busy.with(Busy::is_loading) {
            return view! { <p class="empty">"Loading…"</p> }.into_any();
        }
        let user = user_files(state);
        let failed = state.fetch_failures.get();
        let mut reasons: Vec<String> = failed.iter().map(fetch_line).collect();
        reasons.extend(state.snapshot.with(|s| why_empty(needs, &user, s)));
        if reasons.is_empty() {
            // The files gave some, but the view still has none: the notes say why (judgments
            // without their benchmark, ...).
            reasons = state.snapshot.with(|s| s.notes.clone());
        }
        let plural = format!("{}s", needs.noun());
        if user.is_empty() && failed.is_empty() {
            return view! { <p class="empty">{fallback}</p> }.into_any();
        }
        if reasons.is_empty() {
            let text = format!("No {plural} to show for these files and options.");
            return view! { <p class="empty">{text}</p> }.into_any();
        }
        view! {
            <div class="empty why-empty">
                <p>{format!("No {plural} to show: none of your files gave a valid one.")}</p>
                <ul>{reasons.into_iter().map(|r| view! { <li>{r}</li> }).collect_view()}</ul>
            </div>
        }
        .into_any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use repoprobe_core::{LoadOptions, SourceFile, StreamLoader};

    const BENCH: &[u8] = include_bytes!("../testdata/golden/benchmark.jsonl");
    const SCALARS: &[u8] = include_bytes!("../testdata/golden/scalar_judgments.jsonl");
    const JUDGMENTS: &[u8] = include_bytes!("../testdata/golden/judgments.jsonl");

    /// The snapshot of the files as the worker loads them (texts skipped).
    fn snapshot(files: &[SourceFile]) -> Snapshot {
        let mut loader = StreamLoader::new(LoadOptions {
            skip_text: true,
            ..LoadOptions::default()
        });
        for f in files {
            loader.begin_file(f.name);
            loader.feed(f.bytes);
            loader.end_file();
        }
        Snapshot::of(&loader.finish())
    }

    #[test]
    fn each_file_that_gave_no_judgment_says_why() {
        let files = [
            SourceFile {
                name: "benchmark.jsonl",
                bytes: BENCH,
            },
            SourceFile {
                name: "garbage.bin",
                bytes: b"\xd0\xcf\x11\xe0",
            },
            SourceFile {
                name: "https://x.org/a/scalar.jsonl",
                bytes: SCALARS,
            },
            SourceFile {
                name: "package.json",
                bytes: br#"{"name": "x"}"#,
            },
            SourceFile {
                name: "empty.json",
                bytes: b"[]",
            },
            SourceFile {
                name: "judgments.jsonl",
                bytes: JUDGMENTS,
            },
        ];
        let s = snapshot(&files);
        let names: Vec<String> = files.iter().map(|f| f.name.to_string()).collect();
        let why = why_empty(RecordKind::Judgment, &names, &s);
        assert_eq!(
            why,
            [
                "benchmark.jsonl holds 3 questions and no judgment.",
                "garbage.bin could not be read: not JSON: a RepoProbe file starts with `[`, `{` or a JSON object per line, found byte 0xd0 (line 1, column 1).",
                "scalar.jsonl holds 2 scalar judgments and no judgment: 1 record of scalar.jsonl was not counted (score out of range); the first, at line 3: invalid scalar judgment: dimension \"correctness\" scores 11, above `max_per_dimension` 10.",
                "package.json gave no valid record: 1 record of package.json was not counted (not a RepoProbe record); the first, at $: cannot tell what this record is: it has none of `checklist` (question), `answer`, `items` (judgment), `dimensions` (scalar judgment), `mode` (failure-mode label) or `reviewer` (review).",
                "empty.json gave no valid record: it holds no record.",
            ]
        );
        // The line under "Numbers from …": three files named, then how many more.
        assert_eq!(
            problems_line(&s).unwrap(),
            "garbage.bin could not be read: not JSON: a RepoProbe file starts with `[`, `{` or a JSON object per line, found byte 0xd0 (line 1, column 1); 1 record of scalar.jsonl was not counted (score out of range); 1 record of package.json was not counted (not a RepoProbe record); and 1 more file(s) with problems."
        );
        assert_eq!(problems_line(&Snapshot::default()), None);
    }

    #[test]
    fn a_failed_url_says_what_the_numbers_are_from_instead() {
        let f = FetchFailure {
            url: "https://x.org/j.jsonl".into(),
            reason: "the server answered HTTP 404 Not Found".into(),
        };
        assert_eq!(
            fetch_line(&f),
            "Could not fetch https://x.org/j.jsonl: the server answered HTTP 404 Not Found."
        );
        assert_eq!(
            instead(&["a.jsonl".into()], true, "paper"),
            "The numbers are from the bundled “paper” set instead, an example."
        );
        assert_eq!(
            instead(&["a.jsonl".into(), "b.json".into()], false, ""),
            "The numbers are from a.jsonl, b.json instead."
        );
        assert_eq!(
            instead(&[], false, "paper"),
            "Nothing else is loaded: there are no numbers."
        );
    }
}
