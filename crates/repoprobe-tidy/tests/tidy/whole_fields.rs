//! Rule n: a field is left out of the JSON only through `repoprobe_core::skip`. The site's
//! page–worker messages carry the core's, the curation's and the site's own types by position
//! (postcard), where a field left out shifts every field after it; `skip::whole` writes them
//! all for a message, and it can only do so for the predicates it owns. A plain
//! `Option::is_none` on a type a message carries made a release manifest without
//! `answered_rule` unreadable in the page.

use crate::source::{crates, fail_with};
use proc_macro2::{TokenStream, TokenTree};

/// The crates whose types the site's messages may carry.
const CARRIED: &[&str] = &["repoprobe-core", "repoprobe-curate", "repoprobe-site"];

/// The predicates `skip::whole` can switch off.
const OWNED: &[&str] = &["crate::skip::", "repoprobe_core::skip::"];

/// The `skip_serializing_if` predicates inside `serde(…)` in `tokens` (nested items and
/// attributes included) that are not `skip`'s: (line, predicate).
fn foreign(tokens: TokenStream) -> Vec<(usize, String)> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut found = Vec::new();
    for (i, t) in trees.iter().enumerate() {
        let TokenTree::Group(g) = t else { continue };
        let in_serde = matches!(i.checked_sub(1).map(|j| &trees[j]),
            Some(TokenTree::Ident(id)) if id == "serde");
        if in_serde {
            found.extend(predicates(g.stream()));
        } else {
            found.extend(foreign(g.stream()));
        }
    }
    found
}

fn predicates(serde: TokenStream) -> Vec<(usize, String)> {
    let trees: Vec<TokenTree> = serde.into_iter().collect();
    trees
        .windows(3)
        .filter_map(|w| match w {
            [
                TokenTree::Ident(key),
                TokenTree::Punct(eq),
                TokenTree::Literal(lit),
            ] if key == "skip_serializing_if" && eq.as_char() == '=' => {
                let text = lit.to_string();
                let predicate = text.trim_matches('"');
                (!OWNED.iter().any(|o| predicate.starts_with(o)))
                    .then(|| (lit.span().start().line, predicate.to_string()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn fields_are_left_out_only_through_skip() {
    let carried: Vec<_> = crates()
        .into_iter()
        .filter(|c| CARRIED.contains(&c.name.as_str()))
        .collect();
    assert_eq!(carried.len(), CARRIED.len(), "crates {CARRIED:?}");
    let mut breaches = Vec::new();
    for f in carried
        .iter()
        .flat_map(|c| &c.files)
        .filter(|f| !f.test_only)
    {
        for (line, predicate) in f.non_test_tokens().into_iter().flat_map(foreign) {
            breaches.push(format!(
                "{}:{line}: `skip_serializing_if = \"{predicate}\"`",
                f.path
            ));
        }
    }
    fail_with(
        "fields left out only through repoprobe_core::skip (ARCHITECTURE.md, rule n)",
        "name `crate::skip::none` / `empty` / `not` (in the core) or `repoprobe_core::skip::…` \
         (elsewhere), or add the predicate to crates/repoprobe-core/src/skip.rs",
        &breaches,
    );
}

#[test]
fn the_rule_sees_a_foreign_predicate_and_lets_skips_own_through() {
    let attr = |s: &str| -> TokenStream { format!("{s} struct S;").parse().expect(s) };
    for bad in [
        r#"#[serde(skip_serializing_if = "Option::is_none")]"#,
        r#"#[serde(default, skip_serializing_if = "Vec::is_empty")]"#,
        r#"fn f() { #[derive(Serialize)] struct T { #[serde(skip_serializing_if = "Option::is_none")] a: Option<u8> } }"#,
    ] {
        assert_eq!(foreign(attr(bad)).len(), 1, "{bad}");
    }
    for fine in [
        r#"#[serde(skip_serializing_if = "crate::skip::none")]"#,
        r#"#[serde(default, skip_serializing_if = "repoprobe_core::skip::empty")]"#,
        r#"#[serde(default)]"#,
        r#"#[doc = "skip_serializing_if = \"Option::is_none\""]"#,
    ] {
        assert!(foreign(attr(fine)).is_empty(), "{fine}");
    }
}
