//! Rule f: no function over 100 lines (from `fn` to its closing brace), in any crate's non-test
//! code (free functions, methods, trait defaults, the site's components).

use crate::source::{crates, fail_with};

const MAX_LINES: usize = 100;

/// Long functions not split yet, as `file: name` (`Type::method` for a method). A ratchet: an
/// entry that is no longer over the limit (or gone) fails the test, so remove it when the
/// function is split.
const NOT_YET: &[&str] = &[
    // Empty: every function is within the limit. A function that cannot be split at once is
    // named here as "path: name", and the test fails again once it is short.
];

#[test]
fn no_function_is_over_100_lines() {
    let mut over = Vec::new();
    for c in crates() {
        for f in &c.files {
            for func in &f.functions {
                if func.lines() > MAX_LINES {
                    over.push((f.path.clone(), func.name.clone(), func.first, func.lines()));
                }
            }
        }
    }
    let breaches: Vec<String> = over
        .iter()
        .filter(|(file, name, _, _)| !NOT_YET.contains(&format!("{file}: {name}").as_str()))
        .map(|(file, name, line, n)| format!("{file}:{line}: `{name}` is {n} lines"))
        .collect();
    fail_with(
        "function length (no function over 100 lines, non-test code, every crate and the site)",
        "split it by meaning: name its steps (read, decide, write; a component's parts) as \
         functions or components of their own",
        &breaches,
    );
    let stale: Vec<String> = NOT_YET
        .iter()
        .filter(|entry| {
            !over
                .iter()
                .any(|(f, n, _, _)| **entry == format!("{f}: {n}"))
        })
        .map(|entry| format!("{entry}: allowed, but no longer over 100 lines"))
        .collect();
    fail_with(
        "function length: its allow-list only shrinks",
        "remove the entry from NOT_YET in crates/repoprobe-tidy/tests/tidy/fn_length.rs",
        &stale,
    );
}

/// The 40 longest functions, longest first: where to look before one crosses the limit
/// (`cargo test -p repoprobe-tidy -- --ignored --nocapture the_longest_functions`).
#[test]
#[ignore = "a listing, not a rule"]
fn the_longest_functions() {
    let mut all = Vec::new();
    for c in crates() {
        for f in &c.files {
            for func in &f.functions {
                all.push((
                    func.lines(),
                    format!("{}:{}: `{}`", f.path, func.first, func.name),
                ));
            }
        }
    }
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (n, at) in all.into_iter().take(40) {
        println!("{n:4} {at}");
    }
}
