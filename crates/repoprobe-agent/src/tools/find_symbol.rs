//! `find_symbol`: where an identifier is defined, by one pattern per language family (best
//! effort: no parser, so a definition written unusually is missed and a look-alike is shown).

use super::boundary::quote;
use super::input::parse;
use super::searcher::{format_hits, matcher, search_files};
use super::{Sandbox, Tool, ToolError, resolve};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;

const NAME: &str = "find_symbol";
/// Most definitions `find_symbol` shows.
const MAX_SYMBOL_RESULTS: usize = 100;

pub(super) const TOOL: Tool = Tool {
    name: NAME,
    spec,
    run,
};

fn spec() -> (String, Value) {
    (
        "Find where a function, method, class, struct, enum, trait, interface, type, constant, \
         module or macro is defined, by name, in Rust, Python, JavaScript/TypeScript, Go, \
         Java, Kotlin, C#, C and C++ (best effort, by pattern). Prints `path:line: text`."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The identifier, e.g. \"parse_args\" or \"HttpClient\" (for \"a::b\" or \"A.b\" the last part is looked up)."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FindSymbolInput {
    name: String,
}

/// Definition patterns per language family, `NAME` standing for the identifier.
const DEFINITION_PATTERNS: &[&str] = &[
    // Rust items.
    r#"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|default|extern(?:\s+"[^"]*")?)\s+)*(?:fn|struct|enum|trait|type|union|const|static|mod)\s+NAME\b"#,
    r"^\s*(?:#\[macro_export\]\s*)?macro_rules!\s*NAME\b",
    // Python, Ruby.
    r"^\s*(?:async\s+)?(?:def|class|module)\s+(?:self\.)?NAME\b",
    // JavaScript / TypeScript declarations.
    r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\s*\*?|class|interface|type|enum|namespace|const|let|var)\s*NAME\b",
    // JavaScript / TypeScript: `name = function`, `name: (a) =>`, `name = async (…) =>`.
    r"^\s*(?:(?:public|private|protected|static|readonly|async)\s+)*NAME\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)",
    // JavaScript / TypeScript / Java methods in a class body: `name(args) {`.
    r"^\s*(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*NAME\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^{;]+)?\{\s*$",
    // Go.
    r"^func\s+(?:\([^)]*\)\s*)?NAME\b",
    r"^\s*type\s+NAME\b",
    // Java, Kotlin, C#, C++, Scala, Swift type declarations.
    r"^\s*(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|inline|partial|export|virtual|readonly|enum|case|annotation|value)\s+)*(?:class|struct|interface|enum|record|object|union|trait|protocol)\s+NAME\b",
    r"^\s*(?:typedef\s+)?(?:struct|enum|union)\s+NAME\b",
    // Kotlin, Swift, Scala functions.
    r"^\s*(?:\w+\s+)*(?:fun|func|def)\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?NAME\b",
    // C macros.
    r"^\s*#\s*define\s+NAME\b",
    // C-like function definitions (return type, then the name, then parameters; no `;`).
    r"^\s*(?:[\w:<>,*&\[\]]+\s+)+[*&]*(?:\w+::)*NAME\s*\([^;]*$",
];

/// Words that start a statement, never a definition: lines starting with them are dropped from
/// `find_symbol`'s loose C-like pattern (`return foo(`, `else if (`).
const STATEMENT_WORDS: &[&str] = &[
    "return", "else", "new", "throw", "await", "yield", "case", "if", "while", "for", "switch",
    "delete", "sizeof", "goto", "do", "print", "echo", "assert", "raise", "not", "and", "or", "in",
    "is", "when", "match",
];

fn run(sandbox: &Sandbox, input: &Value, stop: &AtomicBool) -> Result<String, ToolError> {
    let input: FindSymbolInput = parse(NAME, input)?;
    let raw = input.name.trim();
    let name = raw
        .rsplit([':', '.', '#'])
        .next()
        .unwrap_or(raw)
        .trim_end_matches("()");
    let valid = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if !valid {
        return Err(ToolError::NotIdentifier(raw.into()));
    }
    let escaped = name.replace('$', r"\$");
    let pattern = DEFINITION_PATTERNS
        .iter()
        .map(|p| format!("(?:{})", p.replace("NAME", &escaped)))
        .collect::<Vec<_>>()
        .join("|");
    let m = matcher(&pattern).map_err(ToolError::DefinitionPattern)?;
    let root = resolve(sandbox, None)?;
    let keep = |line: &str| {
        let first = line
            .trim_start()
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        !STATEMENT_WORDS.contains(&first)
    };
    let found = search_files(sandbox, &root, None, &m, MAX_SYMBOL_RESULTS, &keep, stop)?;
    if found.hits.is_empty() {
        return Ok(format!(
            "no definition found ({} files searched); try search with a regular expression: {}",
            found.files,
            quote(name)
        ));
    }
    let (mut out, bytes_cut) = format_hits(&found.hits);
    if found.cut || bytes_cut {
        let _ = writeln!(
            out,
            "[stopped after {} definitions; use search with a path or glob to narrow]",
            found.hits.len()
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::tools::fixture::{fixture, run};
    use serde_json::json;

    #[test]
    fn find_symbol_finds_definitions_across_languages() {
        let (_d, _o, sb) = fixture();
        let parser = run(&sb, "find_symbol", json!({"name": "Parser"}));
        assert_eq!(
            parser.content,
            "src/lib.rs:2: pub struct Parser {\nsrc/nested/tool.py:3: class Parser:\n"
        );
        let pa = run(&sb, "find_symbol", json!({"name": "tool::parse_args"}));
        assert_eq!(
            pa.content,
            "src/lib.rs:6: pub fn parse_args(x: u32) -> u32 {\nsrc/nested/tool.py:4:     def parse_args(self):\n"
        );
        for (name, expect) in [
            ("shout", "src/lib.rs:10: macro_rules! shout"),
            ("parseArgs", "src/app.ts:2: export const parseArgs"),
            ("Options", "src/app.ts:1: export interface Options {}"),
            ("App", "src/app.ts:3: export default class App {}"),
            ("Serve", "main.go:3: func (s *Server) Serve() error {"),
            ("Server", "main.go:6: type Server struct{}"),
            ("MAX_LEN", "util.c:1: #define MAX_LEN 10"),
        ] {
            let out = run(&sb, "find_symbol", json!({"name": name}));
            assert!(out.content.starts_with(expect), "{name}: {}", out.content);
        }
        // The definition, not the call (`return`) nor the declaration (`;`).
        let cw = run(&sb, "find_symbol", json!({"name": "count_words"}));
        assert_eq!(
            cw.content,
            "util.c:2: static int count_words(const char *s) {\n"
        );
        let none = run(&sb, "find_symbol", json!({"name": "Nothing"}));
        assert!(!none.is_error && none.content.starts_with("no definition found"));
        assert!(run(&sb, "find_symbol", json!({"name": "a b"})).is_error);
    }
}
