//! Rule i: what a problem is, is never read back from its words. A message or an error's text is
//! searched for a fragment (`message.contains("missing field")`, `e.to_string().starts_with(…)`)
//! in no crate's non-test code: the kind is a type set where the problem is found
//! (`repoprobe_core::issue::IssueKind`, an error enum's variant, serde_json's `classify()`), so a
//! reworded message never changes what a summary counts or what a caller decides.

use crate::source::{crates, fail_with, gates, item_attrs};
use syn::visit::{self, Visit};

/// The string searches that read a kind out of a text.
const SEARCHES: &[&str] = &[
    "contains",
    "starts_with",
    "ends_with",
    "find",
    "rfind",
    "strip_prefix",
    "strip_suffix",
    "matches",
];

/// Why the loader reads serde's words (`load::visitors::data_error_kind`).
const SERDE_WORDS: &str = "serde's words for which `de::Error` method a record's type \
         called: serde_json keeps no other record of it (`classify()` says `Data` for all), and reading the record again \
         with an error type that keeps it was a second copy of every record type's \
         `Deserialize` in the site's worker (issue 56); `load::path_at`'s test holds these words \
         to that reading on 67,738 records, so a rewording in serde fails it";

/// Another program's words, read because it says the kind in no other way: (file, the fragment
/// searched for, why). A ratchet: an entry no longer met fails the test.
const OTHERS_WORDS: &[(&str, &str, &str)] = &[
    (
        "crates/repoprobe-agent/src/external/gemini.rs",
        "[API Error",
        "Gemini CLI's stream result carries a failed API call only as `parseAndFormatApiError`'s \
         text, no code of its own",
    ),
    (
        "crates/repoprobe-agent/src/external/gemini.rs",
        "\"code\":",
        "the HTTP status inside the API's error body that Gemini CLI quotes in that text",
    ),
    (
        "crates/repoprobe-core/src/load/visitors.rs",
        "missing field `",
        SERDE_WORDS,
    ),
    (
        "crates/repoprobe-core/src/load/visitors.rs",
        "invalid type: ",
        SERDE_WORDS,
    ),
    (
        "crates/repoprobe-core/src/load/visitors.rs",
        "duplicate field `",
        SERDE_WORDS,
    ),
    (
        "crates/repoprobe-core/src/load/visitors.rs",
        "invalid length ",
        SERDE_WORDS,
    ),
    (
        "crates/repoprobe-core/src/load/visitors.rs",
        "unknown variant `",
        SERDE_WORDS,
    ),
];

/// Names that hold a problem's words: a message, or an error.
const MESSAGES: &[&str] = &[
    "message", "msg", "messages", "err", "error", "why", "reason",
];

/// Names that hold an error only when turned into text (`e.to_string()`).
const ERRORS: &[&str] = &["e", "inner", "source"];

/// The last name of an expression: `a.b.message` → `message`, `msg` → `msg`, `x.error()` →
/// `error`; through `.to_string()`, `.as_str()`, `.to_lowercase()`, `&` and `*`, with whether
/// it was turned into text on the way.
fn tail(e: &syn::Expr, texted: bool) -> Option<(String, bool)> {
    match e {
        syn::Expr::Path(p) => p.path.get_ident().map(|i| (i.to_string(), texted)),
        syn::Expr::Field(f) => match &f.member {
            syn::Member::Named(i) => Some((i.to_string(), texted)),
            syn::Member::Unnamed(_) => None,
        },
        syn::Expr::MethodCall(m) => {
            let name = m.method.to_string();
            match name.as_str() {
                "to_string" | "to_lowercase" => tail(&m.receiver, true),
                "as_str" | "as_ref" | "as_deref" | "trim" => tail(&m.receiver, texted),
                _ => Some((name, texted)),
            }
        }
        syn::Expr::Reference(r) => tail(&r.expr, texted),
        syn::Expr::Unary(u) => tail(&u.expr, texted),
        syn::Expr::Paren(p) => tail(&p.expr, texted),
        _ => None,
    }
}

/// Why this call reads a kind out of a text, if it does: the fragment searched for, and the
/// call in words.
fn why(call: &syn::ExprMethodCall) -> Option<(String, String)> {
    let method = call.method.to_string();
    if !SEARCHES.contains(&method.as_str()) {
        return None;
    }
    let Some(syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(fragment),
        ..
    })) = call.args.first()
    else {
        return None;
    };
    let (name, texted) = tail(&call.receiver, false)?;
    let messagey = MESSAGES.contains(&name.as_str()) || (texted && ERRORS.contains(&name.as_str()));
    let fragment = fragment.value();
    messagey.then(|| (format!("`{name}.{method}({fragment:?})`"), fragment))
}

struct Finder {
    found: Vec<(usize, (String, String))>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if let Some(w) = why(call) {
            self.found.push((call.method.span().start().line, w));
        }
        visit::visit_expr_method_call(self, call);
    }
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !gates(item_attrs(item)).test {
            visit::visit_item(self, item);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !gates(&f.attrs).test {
            visit::visit_impl_item_fn(self, f);
        }
    }
}

#[test]
fn no_kind_is_read_out_of_a_message() {
    let mut breaches = Vec::new();
    let mut allowed = Vec::new();
    for c in crates() {
        for f in c.files.iter().filter(|f| !f.test_only) {
            let mut finder = Finder { found: Vec::new() };
            finder.visit_file(&f.ast);
            for (line, (what, fragment)) in finder.found {
                match OTHERS_WORDS
                    .iter()
                    .find(|(file, frag, _)| *file == f.path && *frag == fragment)
                {
                    Some(entry) => allowed.push(entry),
                    None => breaches.push(format!("{}:{line}: {what}", f.path)),
                }
            }
        }
    }
    let stale: Vec<String> = OTHERS_WORDS
        .iter()
        .filter(|e| !allowed.contains(e))
        .map(|(file, frag, _)| format!("{file}: {frag:?} is allowed but no longer searched for"))
        .collect();
    fail_with(
        "no kind read out of a message: its allow-list only shrinks",
        "remove the entry from OTHERS_WORDS in crates/repoprobe-tidy/tests/tidy/no_string_kinds.rs",
        &stale,
    );
    fail_with(
        "no kind read out of a message (ARCHITECTURE.md, rule i)",
        "say the kind where the problem is found: a variant of the error's enum, an \
         `IssueKind` on the issue (crates/repoprobe-core/src/issue.rs), or the error's own \
         classification (serde_json's `classify()`, io's `kind()`, an HTTP status)",
        &breaches,
    );
}

#[test]
fn the_kinds_rule_sees_a_search_of_a_message_and_lets_others_through() {
    let call = |s: &str| -> syn::ExprMethodCall { syn::parse_str(s).expect(s) };
    for bad in [
        r#"issue.message.contains("missing field")"#,
        r#"msg.starts_with("invalid")"#,
        r#"e.to_string().contains("EOF")"#,
        r#"err.as_str().ends_with("x")"#,
        r#"self.error().find("timeout")"#,
    ] {
        assert!(why(&call(bad)).is_some(), "{bad}");
    }
    for fine in [
        r#"name.ends_with(".localhost")"#,
        r#"e.contains("x")"#,
        r#"message.contains(needle)"#,
        r#"line.starts_with("line ")"#,
        r#"message.push_str("x")"#,
    ] {
        assert!(why(&call(fine)).is_none(), "{fine}");
    }
}
