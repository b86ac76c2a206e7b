//! Rule d: a page (`src/pages/**/*.rs`) computes no metric; it shows what the core computed.
//!
//! The checkable form, in a page's non-test code (the insides of `view!` included): no
//! reduction of values (`.sum`, `.product`, `.fold`) and no division but by a literal (`v /
//! 100.0` turns a percent into a CSS fraction; `x / n` is a mean, the core's to compute).

use crate::source::{crates, fail_with};
use proc_macro2::{Spacing, TokenStream, TokenTree};

const REDUCTIONS: &[&str] = &["sum", "product", "fold"];

/// (line, what) of each breach in `tokens`.
fn breaches_in(tokens: TokenStream, out: &mut Vec<(usize, String)>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Group(g) => breaches_in(g.stream(), out),
            TokenTree::Punct(p) if p.as_char() == '.' => {
                if let Some(TokenTree::Ident(m)) = tokens.get(i + 1)
                    && REDUCTIONS.contains(&m.to_string().as_str())
                {
                    out.push((m.span().start().line, format!("`.{m}` reduces values")));
                }
            }
            TokenTree::Punct(p) if p.as_char() == '/' => {
                let punct = |at: Option<usize>, c: char| matches!(at.and_then(|at| tokens.get(at)), Some(TokenTree::Punct(q)) if q.as_char() == c);
                // `</td>` and `<br />` in `view!` are markup, not a division.
                if punct(i.checked_sub(1), '<') || punct(Some(i + 1), '>') {
                    continue;
                }
                // `/=` is '/' joint with '='; `a / b` is '/' alone.
                let after = if p.spacing() == Spacing::Joint {
                    i + 2
                } else {
                    i + 1
                };
                if !matches!(tokens.get(after), Some(TokenTree::Literal(_))) {
                    out.push((p.span().start().line, "a division by a value".into()));
                }
            }
            _ => {}
        }
    }
}

#[test]
fn pages_compute_no_metric() {
    let site = crates()
        .into_iter()
        .find(|c| c.name == "repoprobe-site")
        .expect("the site (root package)");
    let mut breaches = Vec::new();
    for f in site
        .files
        .iter()
        .filter(|f| f.path.starts_with("src/pages/"))
    {
        let mut found = Vec::new();
        for item in f.non_test_tokens() {
            breaches_in(item, &mut found);
        }
        breaches.extend(
            found
                .into_iter()
                .map(|(line, what)| format!("{}:{line}: {what}", f.path)),
        );
    }
    fail_with(
        "no metric computed in a page (src/pages/**/*.rs, non-test code: no .sum/.product/.fold, \
         no division but by a literal)",
        "compute it in the core (crates/repoprobe-core/src/metrics/ or report/, with a unit \
         test) and call that from the page, so the CLI and the site show the same number",
        &breaches,
    );
}

#[test]
fn the_pages_rule_sees_a_mean_and_lets_a_scale_by_a_constant_through() {
    let mut found = Vec::new();
    let code: TokenStream =
        "fn f() { view! { <td>{v / 100.0}</td> <br /> <td>{xs.iter().sum::<f64>() / n}</td> } }"
            .parse()
            .unwrap();
    breaches_in(code, &mut found);
    let what: Vec<&str> = found.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(what, ["`.sum` reduces values", "a division by a value"]);
}
