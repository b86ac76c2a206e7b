//! The rules of `ARCHITECTURE.md` ("Rules (checked by `crates/repoprobe-tidy`)") as tests, in the
//! spirit of rust-analyzer's `tidy` tests: `tests/tidy/` reads the workspace's sources and
//! `cargo metadata`, and fails naming the file and line that break a rule and how to fix it.
//! This library is empty; `cargo test -p repoprobe-tidy` runs the rules.
