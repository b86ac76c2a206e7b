//! The results site. Until the site issue lands this is only a placeholder that proves the site
//! package links against the core; `trunk build` is not wired yet.
fn main() {
    let _ = repoprobe_core::FORMAT_VERSION;
}
