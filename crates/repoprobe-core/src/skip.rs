//! The `skip_serializing_if` predicates of the core's types, which a positional encoding can
//! switch off.
//!
//! The file formats and the CLI's JSON leave a field out when it is empty (`None`, `[]`,
//! `false`): that is their documented shape. A format that reads fields by position (the site's
//! page–worker messages, postcard) cannot follow a field left out: every field after it would
//! be read as the one before. [`whole`] writes every field for the time of one encoding, so the
//! same types travel by position without a second, wire-only copy of each, and without their
//! JSON changing.

use std::cell::Cell;

thread_local! {
    static WHOLE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `write` with fields left out when empty (`whole = false`, the JSON formats') or none
/// left out (`whole = true`, a positional encoding's); the mode before is back afterwards, also
/// when `write` panics, so JSON text written inside a positional message can switch it off.
pub fn whole<R>(whole: bool, write: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            WHOLE.with(|w| w.set(self.0));
        }
    }
    let _restore = Restore(WHOLE.with(|w| w.replace(whole)));
    write()
}

fn leaving_out() -> bool {
    !WHOLE.with(Cell::get)
}

/// `None` is left out.
pub fn none<T>(v: &Option<T>) -> bool {
    v.is_none() && leaving_out()
}

/// An empty list is left out.
pub fn empty<T>(v: &[T]) -> bool {
    v.is_empty() && leaving_out()
}

/// An empty text is left out.
pub fn empty_text(v: &str) -> bool {
    v.is_empty() && leaving_out()
}

/// `false` is left out.
pub fn not(v: &bool) -> bool {
    !*v && leaving_out()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Row {
        #[serde(skip_serializing_if = "none")]
        a: Option<u8>,
        #[serde(skip_serializing_if = "empty")]
        b: Vec<u8>,
        #[serde(skip_serializing_if = "not")]
        c: bool,
        d: u8,
    }

    const ROW: Row = Row {
        a: None,
        b: Vec::new(),
        c: false,
        d: 7,
    };

    #[test]
    fn empty_fields_are_left_out_unless_whole() {
        let json = || serde_json::to_string(&ROW).unwrap();
        assert_eq!(json(), r#"{"d":7}"#);
        assert_eq!(whole(true, json), r#"{"a":null,"b":[],"c":false,"d":7}"#);
        // Nested: JSON text written inside a whole encoding leaves them out again.
        assert_eq!(whole(true, || whole(false, json)), r#"{"d":7}"#);
        assert_eq!(json(), r#"{"d":7}"#, "the mode before is back");
    }

    #[test]
    fn the_mode_comes_back_after_a_panic() {
        let r = std::panic::catch_unwind(|| whole(true, || panic!("in the middle")));
        assert!(r.is_err());
        assert_eq!(serde_json::to_string(&ROW).unwrap(), r#"{"d":7}"#);
    }
}
