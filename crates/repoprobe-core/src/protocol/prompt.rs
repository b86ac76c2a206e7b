//! What every prompt of `prompts/` shares: the rendered [`JudgePrompt`], the template's
//! sections, `{{name}}` substitution, the repository line, the reply-format section and the
//! re-ask text.

use crate::model::Question;

const SYSTEM_MARKER: &str = "<!-- system -->";
const USER_MARKER: &str = "<!-- user -->";

/// A rendered prompt: the system message and the first user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgePrompt {
    pub system: String,
    pub user: String,
}

impl JudgePrompt {
    /// The template's `system` and `user` sections with `vars` put in, each trimmed: every
    /// protocol's prompt is made this one way.
    pub fn render(system: &str, user: &str, vars: &[(&str, &str)]) -> JudgePrompt {
        JudgePrompt {
            system: substitute(system, vars).trim().to_string(),
            user: substitute(user, vars).trim().to_string(),
        }
    }
}

/// A prompt template's system and user sections (shared by every prompt of `prompts/`).
pub fn sections(template: &'static str) -> (&'static str, &'static str) {
    let after_system = template
        .split_once(SYSTEM_MARKER)
        .map_or(template, |(_, rest)| rest);
    after_system
        .split_once(USER_MARKER)
        .unwrap_or(("", after_system))
}

/// Replaces `{{name}}` placeholders in one left-to-right pass: inserted text (an answer that
/// contains `{{reference_answer}}`, say) is never expanded. Unknown placeholders stay as they
/// are.
pub fn substitute(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 1024);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = &after[..end];
                match vars.iter().find(|(k, _)| *k == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push_str("{{");
                        out.push_str(name);
                        out.push_str("}}");
                    }
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The repository as the prompts name it: `name (commit sha)`.
pub fn repo_line(q: &Question) -> String {
    if q.repo.commit.is_empty() {
        q.repo.name.clone()
    } else {
        format!("{} (commit {})", q.repo.name, q.repo.commit)
    }
}

/// The `{{reply_format}}` section of a prompt: the schema in full when the provider does not
/// enforce it (`--structured prompt`), else a one-line reminder of the shape.
pub fn reply_format(describe_schema: bool, schema: &str, shape: &str) -> String {
    if describe_schema {
        format!(
            "## Reply format\n\nReply with one JSON object and nothing else (no prose, no code \
             fences): {shape}; no other keys. It must validate against this JSON Schema:\n\n\
             {schema}\n"
        )
    } else {
        format!("## Reply format\n\nReply with the structured output provided: {shape}.\n")
    }
}

/// A re-ask: every violation, one a line, then what to do (shared by every prompt).
pub fn reask_with(violations: &[String], closing: &str) -> String {
    let mut s = String::from("Your reply cannot be accepted. It breaks these rules:\n");
    for v in violations {
        s.push_str("- ");
        s.push_str(v);
        s.push('\n');
    }
    s.push_str(closing);
    s
}
