//! The rules of `ARCHITECTURE.md` ("Rules (checked by `crates/repoprobe-tidy`)"), one module
//! each. Each reads the sources (`source.rs`) or `cargo metadata`, and fails with every breach's
//! file:line, the rule, and how to fix it. An allow-list (a file or function a rule does not yet
//! hold for, while someone else edits it) is a ratchet: an entry that no longer breaks the rule
//! fails the test too, so the list only shrinks.

mod curate_place;
mod fn_length;
mod import_circles;
mod layering;
mod map;
mod map_claims;
mod metrics_root;
mod no_string_kinds;
mod one_io_module;
mod pages_compute_nothing;
mod pure_core;
mod source;
mod string_errors;
mod whole_fields;
mod worker_binary;
