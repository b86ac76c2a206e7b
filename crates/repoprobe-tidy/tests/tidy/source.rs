//! The workspace's sources as the rules see them: each crate's targets walked from their root
//! files through `mod` declarations (so a file declared under `#[cfg(test)]` is test code), and
//! per file the facts of its non-test code: paths (with their line and whether the code is
//! gated by the `parallel` feature), functions with the lines they span.

use proc_macro2::{TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use syn::visit::{self, Visit};

/// The workspace's root directory.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

/// A crate's directory relative to the root: `"."` is the site (the root package).
pub fn crate_dirs() -> Vec<(String, PathBuf)> {
    let root = root();
    let mut out = vec![("repoprobe-site".to_string(), PathBuf::from("."))];
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    for d in dirs {
        out.push((d.clone(), Path::new("crates").join(d)));
    }
    out
}

/// One path met in the code: its segments (`use` trees flattened, `crate::a::b`), its line.
#[derive(Debug, Clone)]
pub struct PathUse {
    pub segments: Vec<String>,
    pub line: usize,
    /// Inside code gated by `#[cfg(feature = "parallel")]`.
    pub parallel: bool,
}

impl PathUse {
    pub fn starts_with(&self, prefix: &[&str]) -> bool {
        self.segments.len() >= prefix.len() && self.segments.iter().zip(prefix).all(|(a, b)| a == b)
    }
    pub fn text(&self) -> String {
        self.segments.join("::")
    }
}

/// A function with a body (free, method, or a trait's default) in non-test code.
#[derive(Debug, Clone)]
pub struct Function {
    /// `name`, or `Type::name` for a method.
    pub name: String,
    pub first: usize,
    pub last: usize,
}

impl Function {
    pub fn lines(&self) -> usize {
        self.last + 1 - self.first
    }
}

/// One source file of a crate target, with the facts of its non-test code.
pub struct SourceFile {
    /// Relative to the workspace root, with `/`.
    pub path: String,
    /// The module path inside its target (`["metrics", "grid"]`; empty for the root file).
    pub module: Vec<String>,
    /// The whole file is test code (declared under `#[cfg(test)]`).
    pub test_only: bool,
    pub ast: syn::File,
    pub paths: Vec<PathUse>,
    pub functions: Vec<Function>,
}

impl SourceFile {
    /// The file's non-test items as tokens (what `view!` and other macros hold included).
    pub fn non_test_tokens(&self) -> Vec<TokenStream> {
        use quote::ToTokens as _;
        if self.test_only {
            return Vec::new();
        }
        self.ast
            .items
            .iter()
            .filter(|i| !gates(item_attrs(i)).test)
            .map(|i| i.to_token_stream())
            .collect()
    }
}

/// A crate and the files of all its targets (lib, main, `src/bin/*`), each file once.
pub struct Crate {
    pub name: String,
    pub files: Vec<SourceFile>,
}

pub fn crates() -> Vec<Crate> {
    crate_dirs()
        .into_iter()
        .map(|(name, dir)| {
            let mut files = Vec::new();
            let src = dir.join("src");
            let mut roots = vec![src.join("lib.rs"), src.join("main.rs")];
            if let Ok(bins) = std::fs::read_dir(root().join(&src).join("bin")) {
                let mut bins: Vec<_> = bins
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                    .map(|p| src.join("bin").join(p.file_name().unwrap()))
                    .collect();
                bins.sort();
                roots.extend(bins);
            }
            for r in roots {
                if root().join(&r).is_file() {
                    let dir = r.parent().unwrap().to_path_buf();
                    walk(&r, &dir, Vec::new(), false, &mut files);
                }
            }
            Crate { name, files }
        })
        .collect()
}

/// A file of code given as text, as the walk would read it at `path` (module `module`): what
/// a rule's own test breaks the rule with.
pub fn parsed(path: &str, module: &[&str], text: &str) -> SourceFile {
    let ast = syn::parse_file(text).expect("the test's code parses");
    let mut facts = Facts::default();
    facts.visit_file(&ast);
    SourceFile {
        path: path.to_string(),
        module: module.iter().map(|m| m.to_string()).collect(),
        test_only: false,
        ast,
        paths: facts.paths,
        functions: facts.functions,
    }
}

/// Reads `file` (module path `module`, its child modules in `mod_dir`) and the files it declares.
fn walk(file: &Path, mod_dir: &Path, module: Vec<String>, test: bool, out: &mut Vec<SourceFile>) {
    let rel = file.to_string_lossy().trim_start_matches("./").to_string();
    if out.iter().any(|f| f.path == rel) {
        return;
    }
    let text = std::fs::read_to_string(root().join(file))
        .unwrap_or_else(|e| panic!("cannot read {rel}: {e}"));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| {
        let at = e.span().start();
        panic!(
            "{rel}:{}:{}: not Rust syn can parse: {e}",
            at.line, at.column
        )
    });
    let mut facts = Facts::default();
    if !test {
        facts.visit_file(&ast);
    }
    let mut children = Vec::new();
    declared_modules(&ast.items, mod_dir, &module, test, &mut children);
    out.push(SourceFile {
        path: rel,
        module,
        test_only: test,
        ast,
        paths: facts.paths,
        functions: facts.functions,
    });
    for (file, dir, module, test) in children {
        walk(&file, &dir, module, test, out);
    }
}

/// The files of `mod name;` declarations in `items` (inline modules looked into).
fn declared_modules(
    items: &[syn::Item],
    mod_dir: &Path,
    module: &[String],
    test: bool,
    out: &mut Vec<(PathBuf, PathBuf, Vec<String>, bool)>,
) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        let name = m.ident.to_string();
        let test = test || gates(&m.attrs).test;
        let mut module = module.to_vec();
        module.push(name.clone());
        match &m.content {
            Some((_, items)) => declared_modules(items, &mod_dir.join(&name), &module, test, out),
            None => {
                let flat = mod_dir.join(format!("{name}.rs"));
                let (file, dir) = if root().join(&flat).is_file() {
                    (flat, mod_dir.join(&name))
                } else {
                    let nested = mod_dir.join(&name);
                    (nested.join("mod.rs"), nested)
                };
                out.push((file, dir, module, test));
            }
        }
    }
}

/// What a node's `#[cfg]`/`#[test]` attributes say about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gates {
    pub test: bool,
    pub parallel: bool,
}

/// `#[cfg(test)]`, `#[cfg(all(test, …))]`, `#[test]`, `#[tokio::test]`… are test code;
/// `#[cfg(feature = "parallel")]` (or inside `all(…)`) is parallel code. `not(…)` and `any(…)`
/// gate nothing (the code also builds without them).
pub fn gates(attrs: &[syn::Attribute]) -> Gates {
    let mut g = Gates::default();
    for a in attrs {
        let last = a.path().segments.last().map(|s| s.ident.to_string());
        if matches!(last.as_deref(), Some("test" | "wasm_bindgen_test")) {
            g.test = true;
        }
        if !a.path().is_ident("cfg") {
            continue;
        }
        let syn::Meta::List(list) = &a.meta else {
            continue;
        };
        let text: String = list.tokens.to_string().split_whitespace().collect();
        let required: Vec<&str> =
            if let Some(inner) = text.strip_prefix("all(").and_then(|t| t.strip_suffix(')')) {
                inner.split(',').collect()
            } else {
                vec![text.as_str()]
            };
        for r in required {
            match r {
                "test" => g.test = true,
                "feature=\"parallel\"" => g.parallel = true,
                _ => {}
            }
        }
    }
    g
}

pub fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

fn expr_attrs(e: &syn::Expr) -> &[syn::Attribute] {
    use syn::Expr::*;
    match e {
        Array(e) => &e.attrs,
        Assign(e) => &e.attrs,
        Async(e) => &e.attrs,
        Await(e) => &e.attrs,
        Binary(e) => &e.attrs,
        Block(e) => &e.attrs,
        Break(e) => &e.attrs,
        Call(e) => &e.attrs,
        Cast(e) => &e.attrs,
        Closure(e) => &e.attrs,
        Const(e) => &e.attrs,
        Continue(e) => &e.attrs,
        Field(e) => &e.attrs,
        ForLoop(e) => &e.attrs,
        Group(e) => &e.attrs,
        If(e) => &e.attrs,
        Index(e) => &e.attrs,
        Let(e) => &e.attrs,
        Lit(e) => &e.attrs,
        Loop(e) => &e.attrs,
        Macro(e) => &e.attrs,
        Match(e) => &e.attrs,
        MethodCall(e) => &e.attrs,
        Paren(e) => &e.attrs,
        Path(e) => &e.attrs,
        Range(e) => &e.attrs,
        Reference(e) => &e.attrs,
        Repeat(e) => &e.attrs,
        Return(e) => &e.attrs,
        Struct(e) => &e.attrs,
        Try(e) => &e.attrs,
        TryBlock(e) => &e.attrs,
        Tuple(e) => &e.attrs,
        Unary(e) => &e.attrs,
        Unsafe(e) => &e.attrs,
        While(e) => &e.attrs,
        Yield(e) => &e.attrs,
        _ => &[],
    }
}

/// The walk of one file's non-test code.
#[derive(Default)]
struct Facts {
    paths: Vec<PathUse>,
    functions: Vec<Function>,
    /// Depth of `parallel`-gated nodes we are inside.
    parallel: usize,
    /// The type of the `impl` or `trait` we are inside.
    owner: Option<String>,
}

impl Facts {
    /// Visits a node unless its attributes make it test code; counts its `parallel` gate.
    fn gated(&mut self, attrs: &[syn::Attribute], inner: impl FnOnce(&mut Self)) {
        let g = gates(attrs);
        if g.test {
            return;
        }
        self.parallel += usize::from(g.parallel);
        inner(self);
        self.parallel -= usize::from(g.parallel);
    }

    fn push(&mut self, segments: Vec<String>, line: usize) {
        self.paths.push(PathUse {
            segments,
            line,
            parallel: self.parallel > 0,
        });
    }

    fn function(&mut self, name: &syn::Ident, sig: &syn::Signature, block: &syn::Block) {
        let name = match &self.owner {
            Some(o) => format!("{o}::{name}"),
            None => name.to_string(),
        };
        self.functions.push(Function {
            name,
            first: sig.fn_token.span.start().line,
            last: block.brace_token.span.close().end().line,
        });
    }

    /// Paths written inside a macro's tokens (`format!("{}", std::env::var(…)?)`, `view! {…}`).
    fn macro_paths(&mut self, tokens: TokenStream) {
        let mut current: Vec<String> = Vec::new();
        let mut line = 0;
        let mut colons = 0;
        let flush = |this: &mut Self, current: &mut Vec<String>, line: usize| {
            if current.len() > 1 {
                this.push(std::mem::take(current), line);
            }
            current.clear();
        };
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => {
                    if colons != 2 {
                        flush(self, &mut current, line);
                        line = i.span().start().line;
                    }
                    current.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
                TokenTree::Group(g) => {
                    flush(self, &mut current, line);
                    colons = 0;
                    self.macro_paths(g.stream());
                }
                _ => {
                    flush(self, &mut current, line);
                    colons = 0;
                }
            }
        }
        flush(self, &mut current, line);
    }
}

fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, usize)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut s = prefix.clone();
            s.push(n.ident.to_string());
            out.push((s, n.ident.span().start().line));
        }
        syn::UseTree::Rename(r) => {
            let mut s = prefix.clone();
            s.push(r.ident.to_string());
            out.push((s, r.ident.span().start().line));
        }
        syn::UseTree::Glob(g) => {
            out.push((prefix.clone(), g.star_token.spans[0].start().line));
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Facts {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        self.gated(item_attrs(i), |s| visit::visit_item(s, i));
    }
    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        let owner = self.owner.take();
        self.function(&i.sig.ident, &i.sig, &i.block);
        visit::visit_item_fn(self, i);
        self.owner = owner;
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let owner = match &*i.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let outer = std::mem::replace(&mut self.owner, owner);
        visit::visit_item_impl(self, i);
        self.owner = outer;
    }
    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        let outer = self.owner.replace(i.ident.to_string());
        visit::visit_item_trait(self, i);
        self.owner = outer;
    }
    fn visit_impl_item(&mut self, i: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match i {
            syn::ImplItem::Fn(f) => &f.attrs,
            syn::ImplItem::Const(c) => &c.attrs,
            syn::ImplItem::Type(t) => &t.attrs,
            syn::ImplItem::Macro(m) => &m.attrs,
            _ => &[],
        };
        self.gated(attrs, |s| visit::visit_impl_item(s, i));
    }
    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        self.function(&i.sig.ident, &i.sig, &i.block);
        visit::visit_impl_item_fn(self, i);
    }
    fn visit_trait_item_fn(&mut self, i: &'ast syn::TraitItemFn) {
        self.gated(&i.attrs, |s| {
            if let Some(b) = &i.default {
                s.function(&i.sig.ident, &i.sig, b);
            }
            visit::visit_trait_item_fn(s, i);
        });
    }
    fn visit_stmt(&mut self, i: &'ast syn::Stmt) {
        let attrs: &[syn::Attribute] = match i {
            syn::Stmt::Local(l) => &l.attrs,
            syn::Stmt::Macro(m) => &m.attrs,
            syn::Stmt::Expr(e, _) => expr_attrs(e),
            syn::Stmt::Item(it) => item_attrs(it),
        };
        self.gated(attrs, |s| visit::visit_stmt(s, i));
    }
    fn visit_expr(&mut self, i: &'ast syn::Expr) {
        self.gated(expr_attrs(i), |s| visit::visit_expr(s, i));
    }
    fn visit_arm(&mut self, i: &'ast syn::Arm) {
        self.gated(&i.attrs, |s| visit::visit_arm(s, i));
    }
    fn visit_field(&mut self, i: &'ast syn::Field) {
        self.gated(&i.attrs, |s| visit::visit_field(s, i));
    }
    fn visit_field_value(&mut self, i: &'ast syn::FieldValue) {
        self.gated(&i.attrs, |s| visit::visit_field_value(s, i));
    }
    fn visit_variant(&mut self, i: &'ast syn::Variant) {
        self.gated(&i.attrs, |s| visit::visit_variant(s, i));
    }
    fn visit_item_use(&mut self, i: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&i.tree, &mut Vec::new(), &mut out);
        for (segments, line) in out {
            self.push(segments, line);
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.push(segments, line);
        visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_paths(m.tokens.clone());
        visit::visit_macro(self, m);
    }
}

/// A failure's lines, one per breach, under the rule's name and how to fix it.
pub fn fail_with(rule: &str, fix: &str, breaches: &[String]) {
    if breaches.is_empty() {
        return;
    }
    panic!(
        "\n\nRule broken: {rule}\n{}\n\nHow to fix: {fix}\n(ARCHITECTURE.md, \"Rules (checked by `crates/repoprobe-tidy`)\")\n",
        breaches
            .iter()
            .map(|b| format!("  {b}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
