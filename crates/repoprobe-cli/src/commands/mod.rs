//! One module per subcommand.
pub mod bundle;
pub mod judge;
pub mod schema;
pub mod score;
pub mod synth;
pub mod validate;
