//! One module per view. Pages read the URL and the app state; components take props only.
pub mod breakdown;
pub mod compare;
pub mod data;
pub mod failures;
pub mod grade;
pub mod judges;
pub mod leaderboard;
pub mod model;
pub mod question;
pub mod questions;
pub mod releases;
pub mod reliability;
pub mod review;
pub mod runs;
pub mod uncertainty;
