//! The byte searches of the scan: where a string stops, and which bytes matter inside a record.
//! The hot loop of the splitter, so each is written for speed, in safe code.

/// Where the scan of a string stops: its first `"`, `\\` or newline.
///
/// Most strings of a results file are short (keys, ids, model names): on x86-64 their first 64
/// bytes are looked at with memchr's SSE2 searcher (SSE2 is part of every x86-64, so it is
/// always there), which the compiler inlines here, without the generic `memchr3`'s call through
/// a function pointer, which costs more than such a string's scan; longer texts go on with
/// `memchr3`, which picks the widest vectors the machine has. The same answer either way.
#[inline]
pub(super) fn string_stop(s: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(short) = memchr::arch::x86_64::sse2::memchr::Three::new(b'"', b'\\', b'\n') {
        let head = &s[..s.len().min(SHORT_STRING)];
        if let Some(k) = short.find(head) {
            return Some(k);
        }
        if s.len() <= SHORT_STRING {
            return None;
        }
        return memchr::memchr3(b'"', b'\\', b'\n', &s[SHORT_STRING..]).map(|k| SHORT_STRING + k);
    }
    memchr::memchr3(b'"', b'\\', b'\n', s)
}

/// The bytes of a string scanned inline before the generic search takes over.
#[cfg(target_arch = "x86_64")]
const SHORT_STRING: usize = 64;

/// Bytes that matter inside a record: strings, brackets and newlines.
pub(super) static STRUCTURAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t[b'\n' as usize] = true;
    t
};

#[cfg(test)]
mod tests {
    use super::{STRUCTURAL, string_stop};

    /// The inline scan of a string's first bytes finds what memchr3 finds, wherever the stop is
    /// (in the first 64 bytes, past them, in a short tail, nowhere).
    #[test]
    fn string_stop_finds_what_memchr_finds() {
        for len in 0..200 {
            for stop in [None, Some(b'"'), Some(b'\\'), Some(b'\n')] {
                for at in [0, 1, 15, 16, 17, 31, 47, 63, 64, 65, 80, 150, 199] {
                    let mut s: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                    if let (Some(b), Some(x)) = (stop, s.get_mut(at)) {
                        *x = b;
                    }
                    assert_eq!(
                        string_stop(&s),
                        memchr::memchr3(b'"', b'\\', b'\n', &s),
                        "len {len}, {stop:?} at {at}"
                    );
                }
            }
        }
    }

    /// The first of several stops is the one found, and bytes that only look alike (`'`, `/`,
    /// `\r`) are not stops.
    #[test]
    fn string_stop_takes_the_first_of_several() {
        assert_eq!(string_stop(b"ab'/\r\\\"\n"), Some(5));
        assert_eq!(string_stop(b"\"\\"), Some(0));
        let mut long = vec![b'x'; 100];
        long[70] = b'\n';
        long[90] = b'"';
        assert_eq!(string_stop(&long), Some(70));
    }

    #[test]
    fn only_strings_brackets_and_newlines_are_structural() {
        let marked: Vec<u8> = (0..=255u8).filter(|b| STRUCTURAL[*b as usize]).collect();
        assert_eq!(marked, b"\n\"[]{}");
    }
}
