//! What a command prints on stdout goes through here: a reader that stops reading early
//! (`repoprobe score … | head`) closes the pipe, and Rust's `print!` panics on the error that
//! follows. A closed stdout is not a failure of the command — the reader has what it wanted —
//! so it ends the output quietly; any other write error is returned to say so.

use std::io::{ErrorKind, Write};

/// Writes `bytes` to stdout and flushes; a closed pipe counts as written.
pub fn write(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
