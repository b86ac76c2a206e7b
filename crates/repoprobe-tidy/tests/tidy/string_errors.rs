//! Rule j: errors are types. A `Result<_, String>` in non-test code carries an error a caller can
//! only print: what went wrong is not a variant to match, and its words are all there is. Library
//! code returns a `thiserror` enum whose messages say what to do; a `String` error stays only
//! where the listed reason holds (a clap value parser, whose error clap prints as it is; a reply
//! sent back to the model, which reads words).

use crate::source::{crates, fail_with, gates, item_attrs};
use syn::visit::{self, Visit};

/// The `Result<_, String>`s that stay, as "path: item" with the reason. At most 20.
const ALLOWED: &[(&str, &str)] = &[
    (
        "crates/repoprobe-core/src/protocol/judge.rs: extract_object",
        "what is wrong with a judge's reply, in words sent back to the model for its next try",
    ),
    (
        "crates/repoprobe-core/src/protocol/reply.rs: extract_object_of",
        "what is wrong with a model's reply, in words sent back to the model for its next try",
    ),
    (
        "crates/repoprobe-agent/src/builtin.rs: run_checked",
        "the caller's check of a final reply: its Err is the words the model reads next turn",
    ),
    (
        "crates/repoprobe-agent/src/run.rs: Check",
        "the same check as run_checked's, passed through a run: words the model reads next",
    ),
    (
        "crates/repoprobe-curate/src/finalize.rs: Decision",
        "the kind is the Rule; the words are the excluded record's `detail`, data for a reader",
    ),
    (
        "crates/repoprobe-cli/src/commands/curate/repos.rs: decide",
        "the kind is the Rule; the words are the excluded record's `detail`, data for a reader",
    ),
    (
        "crates/repoprobe-curate/src/links.rs: Collector::judge",
        "the words are the skipped link's `reason` in the curation record, data for a reader",
    ),
];

/// Whether `ty` is `String`, or a tuple holding one (`(u64, String)`: a reason in words beside
/// other values is still a reason in words).
fn is_words(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(e) => e.path.is_ident("String"),
        syn::Type::Tuple(t) => t.elems.iter().any(is_words),
        syn::Type::Paren(p) => is_words(&p.elem),
        _ => false,
    }
}

/// Whether `ty` is `Result<_, String>` (any path ending in `Result`, `String` as its error, or
/// in a tuple that is its error).
fn is_string_result(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else {
        return false;
    };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    let types: Vec<&syn::Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    last.ident == "Result" && types.len() == 2 && is_words(types[1])
}

/// Every `Result<_, String>` of a file's non-test code, by the item it is in (`fn`, `Type::fn`,
/// a type or a struct), with its line.
struct Finder {
    item: Vec<String>,
    found: Vec<(usize, String)>,
}

impl Finder {
    fn inside(&mut self, name: String, f: impl FnOnce(&mut Self)) {
        self.item.push(name);
        f(self);
        self.item.pop();
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_type(&mut self, ty: &'ast syn::Type) {
        if is_string_result(ty) {
            let line = match ty {
                syn::Type::Path(p) => p
                    .path
                    .segments
                    .last()
                    .map_or(0, |s| s.ident.span().start().line),
                _ => 0,
            };
            let item = self.item.join("::");
            if !self.found.iter().any(|(_, i)| *i == item) {
                self.found.push((line, item));
            }
        }
        visit::visit_type(self, ty);
    }
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if gates(item_attrs(item)).test {
            return;
        }
        let name = match item {
            syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            syn::Item::Type(t) => Some(t.ident.to_string()),
            syn::Item::Trait(t) => Some(t.ident.to_string()),
            syn::Item::Impl(i) => match &*i.self_ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            _ => None,
        };
        match name {
            Some(n) => self.inside(n, |me| visit::visit_item(me, item)),
            None => visit::visit_item(self, item),
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !gates(&f.attrs).test {
            self.inside(f.sig.ident.to_string(), |me| {
                visit::visit_impl_item_fn(me, f)
            });
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.inside(f.sig.ident.to_string(), |me| {
            visit::visit_trait_item_fn(me, f)
        });
    }
}

/// Every `Result<_, String>` of the workspace's non-test code, as ("path: item", line).
fn all() -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for c in crates() {
        for f in c.files.iter().filter(|f| !f.test_only) {
            let mut finder = Finder {
                item: Vec::new(),
                found: Vec::new(),
            };
            finder.visit_file(&f.ast);
            for (line, item) in finder.found {
                out.push((format!("{}: {item}", f.path), line));
            }
        }
    }
    out
}

#[test]
fn library_errors_are_types_and_a_string_error_says_why() {
    let found = all();
    let listed = |e: &str| ALLOWED.iter().any(|(a, _)| *a == e);
    let breaches: Vec<String> = found
        .iter()
        .filter(|(e, _)| !listed(e))
        .map(|(e, line)| {
            let (path, item) = e.split_once(": ").unwrap_or((e, ""));
            format!("{path}:{line}: `{item}` returns or holds Result<_, String>")
        })
        .collect();
    fail_with(
        "errors are types (ARCHITECTURE.md, rule j)",
        "return a thiserror enum whose messages say what to do (see crates/repoprobe-llm's \
         errors), or, where a String is the API (a clap value parser), list it in ALLOWED in \
         crates/repoprobe-tidy/tests/tidy/string_errors.rs with the reason",
        &breaches,
    );
    let stale: Vec<String> = ALLOWED
        .iter()
        .map(|(a, _)| *a)
        .filter(|e| !found.iter().any(|(f, _)| f == e))
        .map(|e| format!("{e}: listed, but no longer a Result<_, String>"))
        .collect();
    fail_with(
        "errors are types: the list only shrinks",
        "remove the entry from ALLOWED in crates/repoprobe-tidy/tests/tidy/string_errors.rs",
        &stale,
    );
    assert!(
        ALLOWED.len() <= 20 && ALLOWED.iter().all(|(_, why)| why.len() > 20),
        "at most 20 String errors stay, each with its reason"
    );
}

/// The list of every `Result<_, String>` left (those of ALLOWED, and any new one)
/// (`cargo test -p repoprobe-tidy -- --ignored --nocapture string_errors_listing`).
#[test]
#[ignore = "a listing, not a rule"]
fn string_errors_listing() {
    for (e, _) in all() {
        println!("    \"{e}\",");
    }
}

#[test]
fn the_string_errors_rule_sees_a_string_error_and_lets_others_through() {
    let ty = |s: &str| -> syn::Type { syn::parse_str(s).expect(s) };
    assert!(is_string_result(&ty("Result<u32, String>")));
    assert!(is_string_result(&ty("std::result::Result<(), String>")));
    assert!(is_string_result(&ty("Result<u64, (u64, String)>")));
    assert!(!is_string_result(&ty("Result<String, Error>")));
    assert!(!is_string_result(&ty("Result<u64, (u64, Error)>")));
    assert!(!is_string_result(&ty("anyhow::Result<String>")));
    assert!(!is_string_result(&ty("Option<String>")));
}
