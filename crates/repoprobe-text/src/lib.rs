//! `repoprobe-text`: the text and date helpers every crate shares, in a crate of their own so
//! that the HTTP clients and the link fetcher (`repoprobe-llm`, `repoprobe-github`,
//! `repoprobe-fetch`) need not build the whole core for them. The core re-exports both modules
//! at their old paths (`repoprobe_core::text`, `repoprobe_core::date`), so its users and the site
//! are unchanged.
//!
//! Pure like the core: no file system, clock, environment or threads; builds for wasm.

#![forbid(unsafe_code)]

pub mod date;
pub mod text;
