//! Components take props only; they never read the URL or the app state.
pub mod chart;
pub mod help;
pub mod markdown;
pub mod report_table;
pub mod stand_in;
