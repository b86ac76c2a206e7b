//! The prompt of `repoprobe answer` (`crates/repoprobe-core/prompts/answer-v1.md`): what an
//! agent is told when it answers a question by exploring the repository. Pure text; running the
//! agent is the CLI's.

use super::JudgePrompt;
use super::prompt::sections;
use crate::model::Question;

/// The version every answer record carries.
pub const PROMPT_VERSION: &str = "answer-v1";

/// The template (documentation, then the system and user sections).
pub const PROMPT_TEMPLATE: &str = include_str!("../../prompts/answer-v1.md");

/// The system and first user message for `q`. `commit` is the sha actually checked out (the
/// question's pin, resolved), so the agent and the record agree on it.
pub fn prompt(q: &Question, commit: &str) -> JudgePrompt {
    let (system, user) = sections(PROMPT_TEMPLATE);
    let vars: [(&str, &str); 3] = [
        ("repo", &q.repo.name),
        ("commit", commit),
        ("question", &q.question),
    ];
    JudgePrompt::render(system, user, &vars)
}

/// Both sections in one text, for agent CLIs that take a single prompt.
pub fn single_prompt(q: &Question, commit: &str) -> String {
    let p = prompt(q, commit);
    format!("{}\n\n{}\n", p.system, p.user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_the_repo_commit_and_question_and_forbids_edits() {
        let q: Question = serde_json::from_value(serde_json::json!({
            "id": "q1", "repo": {"name": "o/r", "commit": "abc"}, "category": "how",
            "question": "How does {{repo}} start?", "reference_answer": "r",
            "checklist": []
        }))
        .unwrap();
        let p = prompt(&q, "0123abcd");
        assert!(
            p.system
                .contains("Do not create, modify or delete any file")
        );
        assert!(!p.system.contains("<!--"), "markers are not sent");
        assert_eq!(
            p.user,
            "Repository: o/r at commit 0123abcd (checked out in your working directory).\n\n\
             Question:\nHow does {{repo}} start?"
        );
        assert!(single_prompt(&q, "0123abcd").starts_with(&p.system));
    }
}
