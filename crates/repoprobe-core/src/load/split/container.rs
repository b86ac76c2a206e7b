//! The container object of a bundle or of reported tables: what each key's value is for (a
//! record array of a kind, the format, the version, the meta, or nothing), a repeated key
//! reported, and the version checked once the object ends. Also read while a top-level object's
//! shape is still open (`Mode::Head`), for its `format`.

use super::super::record::RecordKind;
use super::super::visitors::{CONTAINER_ARRAYS, json_error_kind, strip_position};
use super::super::{BUNDLE_FORMAT, REPORTED_FORMAT};
use super::Splitter;
use super::cut::{Output, What};
use super::shape::{Container, Mode};
use crate::issue::{Issue, IssueKind, Place, RecordAt, Severity};

/// What the value of the container's current key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Skip,
    Format,
    Version,
    Meta,
    Records(&'static str, RecordKind),
}

/// The container's keys seen so far and the fields read from it.
#[derive(Debug)]
pub(super) struct Fields {
    /// What the current key's value is for.
    pub(super) role: Role,
    /// Each key with the number of times it came.
    seen_keys: Vec<(String, usize)>,
    version: Option<serde_json::Value>,
    pub(super) meta: Option<serde_json::Value>,
    /// The container's version was checked.
    checked: bool,
}

impl Fields {
    pub(super) fn new() -> Self {
        Fields {
            role: Role::Skip,
            seen_keys: Vec::new(),
            version: None,
            meta: None,
            checked: false,
        }
    }

    /// Counts one more occurrence of `key`: how many there have been.
    fn occurrence(&mut self, key: &str) -> usize {
        match self.seen_keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.seen_keys.push((key.to_string(), 1));
                1
            }
        }
    }
}

/// What the value of a container's first `key` is for, in `mode`.
fn role_of(mode: Mode, key: &str) -> Role {
    match (mode, key) {
        (_, "format") => Role::Format,
        (Mode::Container(_), "version") => Role::Version,
        (Mode::Container(_), "meta") => Role::Meta,
        (Mode::Container(c), k) => {
            let kind = match c {
                Container::Bundle => RecordKind::from_bundle_key(k),
                Container::Reported => (k == "values").then_some(RecordKind::Reported),
            };
            match (kind, CONTAINER_ARRAYS.iter().find(|a| **a == k)) {
                (Some(kind), Some(name)) => Role::Records(name, kind),
                _ => Role::Skip,
            }
        }
        _ => Role::Skip,
    }
}

/// The container mode a `format` value (its JSON text) names, if it names one.
fn container_of_format(value: &[u8]) -> Option<Mode> {
    match serde_json::from_slice::<Option<String>>(value) {
        Ok(Some(f)) if f == BUNDLE_FORMAT => Some(Mode::Container(Container::Bundle)),
        Ok(Some(f)) if f == REPORTED_FORMAT => Some(Mode::Container(Container::Reported)),
        _ => None,
    }
}

/// Why a container of `version` is not read, if it is not.
fn unsupported(version: &serde_json::Value) -> Option<Issue> {
    if version.as_u64() == Some(u64::from(crate::FORMAT_VERSION)) {
        return None;
    }
    Some(Issue::new(
        String::new(),
        Place::inside(RecordAt::Root, "version"),
        IssueKind::UnsupportedVersion,
        format!(
            "unsupported version {version}: this tool reads version {}",
            crate::FORMAT_VERSION
        ),
        Severity::File,
    ))
}

impl Splitter {
    /// The container key just read: what its value is for. A repeated key is reported and its
    /// value skipped (the first is kept).
    pub(super) fn key_role(&mut self, out: &mut impl Output) -> Role {
        let key: String = serde_json::from_slice(&self.carry.key).unwrap_or_default();
        let n = self.fields.occurrence(&key);
        if n > 1 {
            if let Mode::Container(_) = self.mode {
                self.issue(
                    Place::inside(RecordAt::Root, &key),
                    IssueKind::DuplicateKey,
                    format!("duplicate key `{key}` (occurrence {n}): the first is kept"),
                    Severity::Record,
                    out,
                );
            }
            return Role::Skip;
        }
        role_of(self.mode, &key)
    }

    /// A container field other than a record array was read into `scratch`.
    pub(super) fn field_read(&mut self, out: &mut impl Output) {
        match self.fields.role {
            Role::Format => {
                if self.mode == Mode::Head
                    && let Some(mode) = container_of_format(&self.carry.scratch)
                {
                    self.restart = Some(mode);
                }
            }
            Role::Version | Role::Meta => {
                let (name, slot) = match self.fields.role {
                    Role::Version => ("version", &mut self.fields.version),
                    _ => ("meta", &mut self.fields.meta),
                };
                match serde_json::from_slice::<serde_json::Value>(&self.carry.scratch) {
                    Ok(v) => *slot = Some(v),
                    Err(e) => {
                        let message = format!("invalid JSON: {}", strip_position(&e));
                        let kind = json_error_kind(&e, &self.carry.scratch);
                        let place = Place::inside(RecordAt::Root, name);
                        self.issue(place, kind, message, Severity::Record, out);
                    }
                }
            }
            Role::Skip | Role::Records(..) => {}
        }
        self.carry.scratch = Vec::new();
    }

    /// The container's version is checked once its object has ended (or the file has): with a
    /// version this tool does not read, none of its records count.
    pub(super) fn end_container(&mut self, out: &mut impl Output) {
        if self.fields.checked || !matches!(self.mode, Mode::Container(_)) {
            return;
        }
        self.fields.checked = true;
        if let Some(issue) = self.fields.version.as_ref().and_then(unsupported) {
            self.push(What::Void(issue), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::record::RecordKind;
    use super::{Fields, Mode, Role, container_of_format, role_of, unsupported};
    use crate::issue::IssueKind;
    use crate::load::split::shape::Container;

    const BUNDLE: Mode = Mode::Container(Container::Bundle);
    const REPORTED: Mode = Mode::Container(Container::Reported);

    /// A bundle's record arrays are records of their kind; `format` is read in every object,
    /// `version` and `meta` only in a container; anything else is skipped.
    #[test]
    fn keys_say_what_their_values_are_for() {
        assert_eq!(role_of(Mode::Head, "format"), Role::Format);
        assert_eq!(role_of(BUNDLE, "format"), Role::Format);
        assert_eq!(role_of(BUNDLE, "version"), Role::Version);
        assert_eq!(role_of(Mode::Head, "version"), Role::Skip);
        assert_eq!(role_of(REPORTED, "meta"), Role::Meta);
        assert_eq!(
            role_of(BUNDLE, "judgments"),
            Role::Records("judgments", RecordKind::Judgment)
        );
        assert_eq!(role_of(BUNDLE, "values"), Role::Skip);
        assert_eq!(
            role_of(REPORTED, "values"),
            Role::Records("values", RecordKind::Reported)
        );
        assert_eq!(role_of(REPORTED, "judgments"), Role::Skip);
        assert_eq!(role_of(Mode::Head, "judgments"), Role::Skip);
        assert_eq!(role_of(BUNDLE, "notes"), Role::Skip);
    }

    #[test]
    fn occurrences_of_a_key_are_counted() {
        let mut fields = Fields::new();
        assert_eq!(fields.occurrence("meta"), 1);
        assert_eq!(fields.occurrence("answers"), 1);
        assert_eq!(fields.occurrence("meta"), 2);
        assert_eq!(fields.occurrence("meta"), 3);
    }

    #[test]
    fn only_the_two_formats_name_a_container() {
        assert_eq!(container_of_format(b"\"repoprobe-results\""), Some(BUNDLE));
        assert_eq!(
            container_of_format(b" \"repoprobe-reported\""),
            Some(REPORTED)
        );
        assert_eq!(container_of_format(b"\"repoprobe\""), None);
        assert_eq!(container_of_format(b"null"), None);
        assert_eq!(container_of_format(b"3"), None);
    }

    #[test]
    fn only_the_version_this_tool_reads_is_supported() {
        let this = serde_json::json!(crate::FORMAT_VERSION);
        assert!(unsupported(&this).is_none());
        for other in [
            serde_json::json!(99),
            serde_json::json!("1"),
            serde_json::json!(-1),
        ] {
            let issue = unsupported(&other).expect("another version is not read");
            assert_eq!(issue.kind, IssueKind::UnsupportedVersion);
        }
    }

    /// A repeated key is reported and its value skipped; a version not read voids the file's
    /// records after they are cut; a broken `meta` is the meta's problem, not the file's.
    #[test]
    fn the_containers_fields_are_checked() {
        use super::super::sink::cut_every_way;
        let (_, units) = cut_every_way(
            b"{\"format\":\"repoprobe-results\",\"answers\":[{\"a\":1}],\"meta\":{},\"answers\":[{\"b\":2}]}",
        );
        assert_eq!(
            units,
            [
                "record Index(Some(\"answers\"), 0) @1:42 {\"a\":1}",
                "issue DuplicateKey duplicate key `answers` (occurrence 2): the first is kept",
            ]
        );
        let (_, units) = cut_every_way(
            b"{\"format\":\"repoprobe-results\",\"version\":7,\"answers\":[{\"a\":1}]}",
        );
        assert_eq!(
            units[1],
            "void unsupported version 7: this tool reads version 1"
        );
        let (_, units) = cut_every_way(b"{\"format\":\"repoprobe-results\",\"meta\":{\"a\":}}");
        assert_eq!(units, ["issue BrokenJson invalid JSON: expected value"]);
    }
}
