//! Which command a run is of, as a type: each kind names itself in the run's manifest and reads
//! its own records' keys, so `status`, `merge` and the shard check take a record's key from the
//! kind the manifest names, and a command can only write a run ([`super::manifest::RunSpec`])
//! whose keys are read back. A name matched as a string lets a new command write runs whose
//! every record reads as unreadable.

pub use super::keys::RecordKey;
use super::keys::{JudgmentKey, LabelKey, PairKey, QuestionKey, RepoKey, ThreadKey, answer_fields};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt::{self, Display};

/// A command that writes a run through [`super::Layout`] and a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    Judge,
    JudgeScalar,
    Answer,
    ClassifyFailures,
    MakeChecklist,
    CurateClassify,
    CurateEnhance,
    CurateThemes,
    CurateVerify,
}

impl RunKind {
    /// Every kind, so that a name is looked up among all of them and a test covers each.
    pub const ALL: [RunKind; 9] = [
        RunKind::Judge,
        RunKind::JudgeScalar,
        RunKind::Answer,
        RunKind::ClassifyFailures,
        RunKind::MakeChecklist,
        RunKind::CurateClassify,
        RunKind::CurateEnhance,
        RunKind::CurateThemes,
        RunKind::CurateVerify,
    ];

    /// The command as the manifest writes it (and as a user types it to run it again): the
    /// manifests already on disk hold these words, so they never change.
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Judge => "judge",
            RunKind::JudgeScalar => "judge-scalar",
            RunKind::Answer => "answer",
            RunKind::ClassifyFailures => "classify-failures",
            RunKind::MakeChecklist => "make-checklist",
            RunKind::CurateClassify => "curate classify",
            RunKind::CurateEnhance => "curate enhance",
            RunKind::CurateThemes => "curate themes",
            RunKind::CurateVerify => "curate verify",
        }
    }

    /// Other names a manifest may hold for this kind: the command reachable under a second
    /// name writes its runs by one, but a manifest written under the other still reads.
    fn aliases(self) -> &'static [&'static str] {
        match self {
            RunKind::MakeChecklist => &["curate make-checklist"],
            _ => &[],
        }
    }

    /// The kind a manifest's `command` names; `None` for a command that writes no run.
    pub fn named(name: &str) -> Option<RunKind> {
        RunKind::ALL
            .into_iter()
            .find(|k| k.name() == name || k.aliases().contains(&name))
    }

    /// The names runs are written under, for a message about a name that is none of them.
    pub fn names() -> String {
        RunKind::ALL.map(RunKind::name).join(", ")
    }

    /// The key of one of this kind's records, or of its failure records (they carry the key's
    /// fields under the same names); `None` for a line that is neither. Each kind reads the
    /// key type its command writes ([`super::keys`]).
    pub fn key_of(self, v: &Value) -> Option<RecordKey> {
        Some(match self {
            RunKind::Judge | RunKind::JudgeScalar => RecordKey::Judgment(JudgmentKey::fields(v)?),
            RunKind::Answer => RecordKey::Answer(answer_fields(v)?),
            RunKind::ClassifyFailures => RecordKey::Label(LabelKey::fields(v)?),
            RunKind::MakeChecklist | RunKind::CurateVerify => {
                RecordKey::Question(QuestionKey::fields(v)?)
            }
            RunKind::CurateEnhance => RecordKey::Pair(PairKey::fields(v)?),
            RunKind::CurateClassify => RecordKey::Thread(ThreadKey::fields(v)?),
            RunKind::CurateThemes => RecordKey::Repository(RepoKey::fields(v)?),
        })
    }

    /// For the kinds that drop keys into an excluded journal beside their output (a curate
    /// stage's `Excluded` records, whose `key` names what was dropped): the key such a record
    /// decides, which is done as much as a kept one.
    pub fn excluded_key(self) -> Option<fn(String) -> RecordKey> {
        match self {
            RunKind::CurateClassify => Some(|key| RecordKey::Thread(ThreadKey { key })),
            RunKind::CurateVerify => Some(|id| RecordKey::Question(QuestionKey { id })),
            _ => None,
        }
    }
}

impl Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for RunKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for RunKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunKind, D::Error> {
        let name = String::deserialize(d)?;
        RunKind::named(&name).ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "{name:?} is no command that writes a run (those are {})",
                RunKind::names()
            ))
        })
    }
}

#[cfg(test)]
mod tests;
