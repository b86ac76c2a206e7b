//! Rule k: the site's seams. The worker's binary (`src/bin/repoprobe-worker.rs`) is its message
//! loop only, at most 150 lines: what it decides is `src/worker/` (tested natively), its browser
//! I/O `src/worker_io.rs`. And the browser's storage is touched by one module,
//! `src/storage.rs`: no other file of the site names `local_storage`, `session_storage`,
//! `Storage` or a `"localStorage"`/`"sessionStorage"` string (comments and docs may).

use crate::source::{crates, fail_with, root};
use proc_macro2::{TokenStream, TokenTree};

const WORKER_BINARY: &str = "src/bin/repoprobe-worker.rs";
const MAX_LINES: usize = 150;
const STORAGE_MODULE: &str = "src/storage.rs";

#[test]
fn the_worker_binary_is_its_message_loop_only() {
    let text = std::fs::read_to_string(root().join(WORKER_BINARY)).expect(WORKER_BINARY);
    let lines = text.lines().count();
    let mut breaches = Vec::new();
    if lines > MAX_LINES {
        breaches.push(format!(
            "{WORKER_BINARY}:{lines}: {lines} lines, over {MAX_LINES}"
        ));
    }
    fail_with(
        "the worker's binary is its message loop only, at most 150 lines (ARCHITECTURE.md, its row)",
        "move what it decides into src/worker/ (`worker::serve`, with native tests) and its \
         browser I/O into src/worker_io.rs; the binary hands each message to the `Service`",
        &breaches,
    );
}

/// (line, what) of each name of the browser's storage in `tokens`, attributes (docs) left out.
fn storage_in(tokens: TokenStream, out: &mut Vec<(usize, String)>) {
    let mut attribute = false;
    for t in tokens {
        match &t {
            TokenTree::Punct(p) if p.as_char() == '#' => attribute = true,
            // `#![…]`
            TokenTree::Punct(p) if p.as_char() == '!' && attribute => {}
            TokenTree::Group(_) if attribute => attribute = false,
            TokenTree::Group(g) => storage_in(g.stream(), out),
            TokenTree::Ident(i)
                if ["local_storage", "session_storage", "Storage"]
                    .contains(&i.to_string().as_str()) =>
            {
                out.push((i.span().start().line, format!("`{i}`")));
            }
            TokenTree::Literal(l)
                if ["localStorage", "sessionStorage"]
                    .iter()
                    .any(|n| l.to_string().contains(n)) =>
            {
                out.push((l.span().start().line, format!("{l}")));
            }
            _ => attribute = false,
        }
    }
}

#[test]
fn only_the_storage_module_touches_the_browsers_storage() {
    let site = crates()
        .into_iter()
        .find(|c| c.name == "repoprobe-site")
        .expect("the site (root package)");
    assert!(
        site.files.iter().any(|f| f.path == STORAGE_MODULE),
        "{STORAGE_MODULE} was not found"
    );
    let mut breaches = Vec::new();
    for f in site.files.iter().filter(|f| f.path != STORAGE_MODULE) {
        let mut found = Vec::new();
        for item in f.non_test_tokens() {
            storage_in(item, &mut found);
        }
        breaches.extend(
            found.into_iter().map(|(line, what)| {
                format!("{}:{line}: {what} names the browser's storage", f.path)
            }),
        );
    }
    fail_with(
        "the browser's storage is touched by src/storage.rs only (ARCHITECTURE.md, its row)",
        "call `storage::stored` / `storage::keep` (add what is missing there)",
        &breaches,
    );
}

#[test]
fn the_storage_rule_sees_code_and_leaves_docs_alone() {
    let mut found = Vec::new();
    let code: TokenStream = "/// Kept in `localStorage`.\nfn f() -> Option<web_sys::Storage> { \
        window()?.local_storage().ok()?; get(\"sessionStorage\") }"
        .parse()
        .unwrap();
    storage_in(code, &mut found);
    let what: Vec<&str> = found.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(what, ["`Storage`", "`local_storage`", "\"sessionStorage\""]);
}
