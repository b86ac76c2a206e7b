//! Parts of the page that are not views: the switches every table view shares (they read and
//! set the URL's options) and the theme switch.
pub mod controls;
pub mod theme;
pub mod window;
