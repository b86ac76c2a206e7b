//! The `repoprobe` binary: a thin entry over [`repoprobe_cli::run`], where all logic lives so
//! that tests can call it.
use std::process::ExitCode;

fn main() -> ExitCode {
    repoprobe_cli::run(std::env::args_os())
}
