//! What the worker asks of the browser, as a trait (`Host`): posting an answer, running a task
//! beside the queue, reading a file (as a stream, whole, or a slice), a Range request, a clock
//! and User Timing marks. `crate::worker_io::Browser` is the browser's; the native tests have a
//! fake. Also the decisions around those calls: the phases' measures (`Phases`), a Range
//! request's header and the checks of its answer (`range_header`, `range_status`, `range_bytes`).

use super::Handle;
use crate::protocol::{ReadError, Response, ViewOptions};

/// A stream the browser stopped: how many bytes came before it did, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct Stopped {
    pub read: u64,
    pub error: ReadError,
}

/// The browser as the worker sees it. Every read starts when called (reads asked for at once
/// run together), not when its future is first polled.
pub trait Host: 'static {
    /// A file's handle: a `Blob` in the browser.
    type Blob: Handle + 'static;
    /// Posts `r` to the page.
    fn reply(&self, r: &Response);
    /// Says `why` on the worker's console.
    fn log_error(&self, why: &str);
    /// Runs `task` beside the one being served (its own task of the event loop).
    fn spawn(&self, task: impl Future<Output = ()> + 'static);
    /// The options of the query the worker was started with (those of the first load).
    fn start_options(&self) -> ViewOptions;
    /// Reads `blob` through as a stream, handing each chunk to `f`: the bytes read, or those
    /// read before the browser stopped and why; where the time went in `times`.
    fn stream(
        &self,
        blob: &Self::Blob,
        times: &mut ReadTimes,
        f: &mut dyn FnMut(&[u8]),
    ) -> impl Future<Output = Result<u64, Stopped>>;
    /// `blob`'s bytes, whole.
    fn read_all(&self, blob: &Self::Blob) -> impl Future<Output = Result<Vec<u8>, ReadError>>;
    /// `blob`'s bytes `start..end`.
    fn read_slice(
        &self,
        blob: &Self::Blob,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<Vec<u8>, ReadError>>;
    /// The bytes `offset..offset+length` of the file at `url` by a Range request (checked with
    /// `range_status` before its body is read and `range_bytes` after).
    fn fetch_range(
        &self,
        url: &str,
        offset: u64,
        length: u64,
    ) -> impl Future<Output = Result<Vec<u8>, ReadError>>;
    /// Now, in ms (0 without a clock).
    fn now(&self) -> f64;
    /// User Timing: a mark, forgetting every earlier mark and measure first if `clear`.
    fn mark(&self, name: &str, clear: bool);
    /// User Timing: a measure from mark `from` to mark `to`.
    fn measure(&self, name: &str, from: &str, to: &str);
    /// User Timing: a measure of `ms` from `start` (ms).
    fn measure_total(&self, name: &str, start: f64, ms: f64);
}

/// Where a load's reading time goes: waiting for the browser, copying into wasm memory, and
/// (measured by the caller) parsing.
#[derive(Default, Debug, PartialEq)]
pub struct ReadTimes {
    pub wait: f64,
    pub copy: f64,
}

/// The phases of a task as User Timing measures, each from the end of the one before: the
/// browser's profiler shows them, and e2e/speed.mjs prints them. Without `timed`, none.
pub struct Phases<'h, H: Host> {
    host: &'h H,
    timed: bool,
    last: String,
}

impl<'h, H: Host> Phases<'h, H> {
    /// Phases from now on, named after `start`; a load (`clear`) forgets earlier ones.
    pub fn start(host: &'h H, start: &str, clear: bool) -> Self {
        host.mark(start, clear);
        Phases {
            host,
            timed: true,
            last: start.into(),
        }
    }

    /// No measures (hashing, which runs beside the other tasks).
    pub fn untimed(host: &'h H) -> Self {
        Phases {
            host,
            timed: false,
            last: String::new(),
        }
    }

    /// Ends phase `name` (a measure from the last end, or the start).
    pub fn end(&mut self, name: &str) {
        if self.timed {
            let mark = format!("{name}:end");
            self.host.mark(&mark, false);
            self.host.measure(name, &self.last, &mark);
            self.last = mark;
        }
    }

    /// Now, in ms (0 untimed).
    pub fn now(&self) -> f64 {
        if self.timed { self.host.now() } else { 0.0 }
    }

    /// A measure `name` of `ms` in all, from `start`: the sum of a phase's slices (reading,
    /// parsing) that alternate inside one measure.
    pub fn total(&self, name: &str, start: f64, ms: f64) {
        if self.timed {
            self.host.measure_total(name, start, ms);
        }
    }
}

/// The `Range` header asking for bytes `offset..offset+length`.
pub fn range_header(offset: u64, length: u64) -> String {
    format!("bytes={offset}-{}", (offset + length).saturating_sub(1))
}

/// Whether a Range request's answer of HTTP `status` is the range (only 206 is).
pub fn range_status(status: u16) -> Result<(), ReadError> {
    if status == 206 {
        return Ok(());
    }
    Err(ReadError::NotRange(status))
}

/// The body of a Range request for `length` bytes, if it is that long.
pub fn range_bytes(bytes: Vec<u8>, length: u64) -> Result<Vec<u8>, ReadError> {
    if bytes.len() as u64 != length {
        return Err(ReadError::Short {
            sent: bytes.len() as u64,
            asked: length,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_asked_for_by_its_last_byte_and_only_206_of_its_length_is_taken() {
        assert_eq!(range_header(100, 50), "bytes=100-149");
        assert_eq!(range_header(0, 1), "bytes=0-0");
        assert!(range_status(206).is_ok());
        let whole = range_status(200).unwrap_err();
        assert_eq!(whole, ReadError::NotRange(200));
        let whole = whole.to_string();
        assert!(
            whole.contains("HTTP 200") && whole.contains("206 expected"),
            "{whole}"
        );
        assert_eq!(range_bytes(vec![1, 2, 3], 3), Ok(vec![1, 2, 3]));
        assert_eq!(
            range_bytes(vec![1, 2], 3),
            Err(ReadError::Short { sent: 2, asked: 3 })
        );
        assert_eq!(
            range_bytes(vec![1, 2], 3).unwrap_err().to_string(),
            "the server sent 2 bytes for a range of 3"
        );
    }
}
