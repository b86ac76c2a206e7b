//! The prompt protocols: what is said to a model and how its reply is checked, pure (no I/O, no
//! clock, no network; the calls are `repoprobe-llm`'s and the run loop the CLI's).
//!
//! Each structured protocol — the checklist judge ([`judge`]), the scalar judge ([`scalar`]),
//! the failure classifier ([`classify`]) and the checklist writer ([`checklist_gen`]) — and
//! the curation's, in `repoprobe-curate` — implements [`Protocol`] once: version, template, reply name, tool description, prompt, reply
//! schema, re-ask and reply check. The answer prompt ([`answer`]) has a prompt only: an agent's
//! answer is free text, with no schema to impose or check. What they share is in [`prompt`]
//! (template sections, substitution, reply-format section, re-ask) and [`reply`] (finding the
//! reply's object, flat replies), public for the curation's protocols; their tests share
//! `crate::fixtures`.

pub mod answer;
pub mod checklist_gen;
pub mod classify;
pub mod judge;
pub mod prompt;
pub mod reply;
pub mod scalar;

pub use prompt::JudgePrompt;

/// A prompt protocol for one call: a value of the implementing type holds what the call is
/// about (a question and an answer, a failed answer, a source record).
pub trait Protocol {
    /// What a valid reply gives.
    type Reply;
    /// The prompt's version; every record made from a reply carries it.
    const VERSION: &'static str;
    /// The prompt template (`crates/repoprobe-core/prompts/<VERSION>.md`).
    const TEMPLATE: &'static str;
    /// The reply schema's name (OpenAI `json_schema.name`) and the forced tool's (tool mode).
    const REPLY_NAME: &'static str;
    /// The forced tool's description (tool mode): what calling it records.
    const TOOL_DESCRIPTION: &'static str;
    /// The system message and the first user message; with `describe_schema` (prompt-only JSON
    /// mode) the user message spells out the reply schema.
    fn prompt(&self, describe_schema: bool) -> JudgePrompt;
    /// The reply schema as JSON text, keys in the order the model should write them.
    fn reply_schema_json(&self) -> String;
    /// The message sent back after an invalid reply: every violation, then what to do.
    fn reask_message(&self, violations: &[String]) -> String;
    /// Checks a reply: the value, or one message per violation.
    fn parse_reply(&self, text: &str) -> Result<Self::Reply, Vec<String>>;
}

/// A borrowed protocol is the protocol (a caller that owns its inputs lends them).
impl<P: Protocol + ?Sized> Protocol for &P {
    type Reply = P::Reply;
    const VERSION: &'static str = P::VERSION;
    const TEMPLATE: &'static str = P::TEMPLATE;
    const REPLY_NAME: &'static str = P::REPLY_NAME;
    const TOOL_DESCRIPTION: &'static str = P::TOOL_DESCRIPTION;
    fn prompt(&self, describe_schema: bool) -> JudgePrompt {
        (**self).prompt(describe_schema)
    }
    fn reply_schema_json(&self) -> String {
        (**self).reply_schema_json()
    }
    fn reask_message(&self, violations: &[String]) -> String {
        (**self).reask_message(violations)
    }
    fn parse_reply(&self, text: &str) -> Result<P::Reply, Vec<String>> {
        (**self).parse_reply(text)
    }
}

#[cfg(test)]
mod tests {
    use super::checklist_gen::Source;
    use super::classify::Candidate;
    use super::judge::ChecklistJudge;
    use super::scalar::ScalarJudge;
    use super::*;
    use crate::fixtures;

    #[test]
    fn each_protocol_describes_its_own_tool() {
        let descriptions = [
            <ChecklistJudge<'_> as Protocol>::TOOL_DESCRIPTION,
            <ScalarJudge<'_> as Protocol>::TOOL_DESCRIPTION,
            <Candidate<'_> as Protocol>::TOOL_DESCRIPTION,
            <Source as Protocol>::TOOL_DESCRIPTION,
        ];
        assert_eq!(
            descriptions[0],
            "Record the grading of every checklist item."
        );
        for (i, d) in descriptions.iter().enumerate() {
            assert!(!descriptions[..i].contains(d), "{d:?} is said twice");
        }
    }

    #[test]
    fn the_trait_gives_what_the_module_functions_give() {
        let q = fixtures::question();
        let judge = ChecklistJudge {
            question: &q,
            answer: "Y.",
        };
        assert_eq!(judge.prompt(true), judge::prompt(&q, "Y.", true));
        assert_eq!(judge.reply_schema_json(), judge::reply_schema_json(&q));
        // A borrowed protocol is the protocol.
        fn reask_of<P: Protocol>(p: P) -> String {
            p.reask_message(&["x".into()])
        }
        let source = checklist_gen::parse_source(&serde_json::json!({"id": "q1", "repo": "o/r",
            "category": "Business Logic", "question": "Why?", "reference_answer": "Y."}))
        .unwrap();
        assert_eq!(
            reask_of(&source),
            checklist_gen::reask_message(&["x".into()])
        );
        assert_eq!(source.prompt(true), checklist_gen::prompt(&source, true));
        let scalar = ScalarJudge {
            question: &q,
            answer: "Y.",
            max: 20,
        };
        assert_eq!(scalar.prompt(false), scalar::prompt(&q, "Y.", 20, false));
        assert_eq!(scalar.reply_schema_json(), scalar::reply_schema_json(20));
    }
}
