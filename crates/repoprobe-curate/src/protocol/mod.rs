//! The curation's prompt protocols, each on the core's [`Protocol`](repoprobe_core::protocol::Protocol) trait (so the CLI's run loop
//! calls them as it calls the judges): the repository's theme (`curate themes`, [`theme`]), a
//! thread's question and answer (`curate classify`, [`classify`]), the checklist's enhancement
//! from fetched links (`curate enhance`, [`enhance`]), and the answerability check an agent makes
//! (`curate verify`, [`verify`]). Templates in `crates/repoprobe-curate/prompts/`.

pub mod classify;
pub mod enhance;
pub mod theme;
pub mod verify;

#[cfg(test)]
mod tests {
    use repoprobe_core::protocol::Protocol;

    /// A forced tool's description tells the model what calling it records: two protocols that
    /// shared one would blur which reply is which in a provider's logs.
    #[test]
    fn each_protocol_describes_its_own_tool() {
        use repoprobe_core::protocol::{checklist_gen, classify, judge, scalar};
        let core = [
            <judge::ChecklistJudge<'_> as Protocol>::TOOL_DESCRIPTION,
            <scalar::ScalarJudge<'_> as Protocol>::TOOL_DESCRIPTION,
            <classify::Candidate<'_> as Protocol>::TOOL_DESCRIPTION,
            <checklist_gen::Source as Protocol>::TOOL_DESCRIPTION,
        ];
        let verify = <crate::verify::Verification<'_> as Protocol>::TOOL_DESCRIPTION;
        assert!(!verify.is_empty());
        assert!(!core.contains(&verify), "{verify:?} is said twice");
    }
}
