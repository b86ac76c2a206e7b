//! One module per subcommand.
pub mod answer;
pub mod bundle;
pub mod classify_failures;
pub mod curate;
pub mod evidence;
pub mod judge;
pub mod judge_scalar;
pub mod judges;
pub mod make_checklist;
pub mod merge;
pub mod runs_list;
pub mod schema;
pub mod score;
pub mod status;
pub mod synth;
pub mod validate;
