//! The release manifests the worker holds (`curate finalize`'s `<out>.manifest.json`,
//! docs/review.md#the-release-manifest): never records, so never given to the loader. Told
//! apart by name, like trajectories files, before any byte is read; each is read whole (it is
//! small) and parsed by the core, and the page shows its funnel and selection.

use crate::protocol::{ReadError, Release};
use repoprobe_core::issue::{IssueKind, Place};
use repoprobe_core::{Issue, Severity};
use repoprobe_curate::finalize::{Manifest, ManifestError};

/// How a release manifest's name ends.
pub const MANIFEST: &str = ".manifest.json";

/// The largest manifest read: a manifest lists stages, repositories and files, never records.
pub const MAX_BYTES: u64 = 16 << 20;

/// Whether `name` (a file name or URL) is a release manifest's.
pub fn is_manifest(name: &str) -> bool {
    name.split(['?', '#'])
        .next()
        .unwrap_or(name)
        .ends_with(MANIFEST)
}

/// Why a release manifest was not read: too large to be one, unread, or not a manifest.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// Larger than [`MAX_BYTES`]: never read.
    #[error("{0} bytes: larger than a release manifest can be ({MAX_BYTES})")]
    TooLarge(u64),
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
}

struct File<B> {
    name: String,
    blob: B,
    bytes: u64,
    read: Option<Result<Manifest, ReleaseError>>,
}

/// The manifests given, in the order they came; a second file of the same name replaces the
/// first (as a dropped file does).
pub struct Store<B> {
    files: Vec<File<B>>,
}

impl<B> Default for Store<B> {
    fn default() -> Self {
        Store { files: Vec::new() }
    }
}

impl<B: Clone> Store<B> {
    /// Takes `name` if it is a manifest's (`true`), to be read by [`Store::to_read`].
    pub fn add(&mut self, name: &str, blob: B, bytes: u64) -> bool {
        if !is_manifest(name) {
            return false;
        }
        self.files.retain(|f| f.name != name);
        self.files.push(File {
            name: name.to_string(),
            blob,
            bytes,
            read: None,
        });
        true
    }

    /// The manifests not read yet (a file too large to be one is refused here, unread).
    pub fn to_read(&mut self) -> Vec<(String, B)> {
        let mut out = Vec::new();
        for f in self.files.iter_mut().filter(|f| f.read.is_none()) {
            if f.bytes > MAX_BYTES {
                f.read = Some(Err(ReleaseError::TooLarge(f.bytes)));
            } else {
                out.push((f.name.clone(), f.blob.clone()));
            }
        }
        out
    }

    /// The bytes of manifest `name` (or why they could not be read).
    pub fn read(&mut self, name: &str, bytes: Result<Vec<u8>, ReadError>) {
        if let Some(f) = self.files.iter_mut().find(|f| f.name == name) {
            let parsed = bytes.map_err(ReleaseError::from);
            f.read = Some(parsed.and_then(|b| Ok(Manifest::parse(&b)?)));
        }
    }

    /// The manifests read, for the page.
    pub fn releases(&self) -> Vec<Release> {
        self.files
            .iter()
            .filter_map(|f| match &f.read {
                Some(Ok(m)) => Some(Release {
                    file: f.name.clone(),
                    manifest: m.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The manifests that could not be read, each an issue of its file.
    pub fn issues(&self) -> Vec<Issue> {
        self.files
            .iter()
            .filter_map(|f| match &f.read {
                Some(Err(e)) => Some(Issue::new(
                    f.name.clone(),
                    Place::File,
                    IssueKind::UnreadableFile,
                    e.to_string(),
                    Severity::File,
                )),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_are_told_by_name_read_by_the_core_and_bad_ones_said() {
        let mut s = Store::default();
        assert!(!s.add("benchmark.jsonl", Vec::<u8>::new(), 0));
        assert!(s.add("https://x.org/v1.manifest.json?raw=1", Vec::new(), 10));
        assert!(s.add("run.manifest.json", Vec::new(), 10));
        assert!(s.add("huge.manifest.json", Vec::new(), MAX_BYTES + 1));
        let names: Vec<String> = s.to_read().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            ["https://x.org/v1.manifest.json?raw=1", "run.manifest.json"]
        );
        let manifest = br#"{"format": "repoprobe-release", "version": "v1", "date": "2026-03-15",
            "selection": {"criteria": null, "created_after": null, "created_before": null,
                          "created": {"min": null, "max": null, "undated": 0}},
            "review": {"candidates": 2, "reviewed": 2, "kept": 1, "kept_by_adjudicator": 0,
                       "rejected": 1, "unresolved": 0, "unreviewed": 0},
            "funnel": {"repositories_seen": 0, "repositories_kept": 0, "threads_harvested": 0,
                       "after": [{"stage": "verify", "kept": 2}, {"stage": "kept", "kept": 1}],
                       "dropped": {}, "per_repository": {}},
            "agreement": {"reviewers": [], "items": 0, "criteria": {
                "qa_consistency": {"percent": null, "kappa": null, "alpha": null},
                "checklist_quality": {"percent": null, "kappa": null, "alpha": null},
                "task_validity": {"percent": null, "kappa": null, "alpha": null},
                "code_relevance": {"percent": null, "kappa": null, "alpha": null},
                "decision": {"percent": null, "kappa": null, "alpha": null}},
                "disagreements": []},
            "files": []}"#;
        s.read(
            "https://x.org/v1.manifest.json?raw=1",
            Ok(manifest.to_vec()),
        );
        s.read(
            "run.manifest.json",
            Ok(br#"{"format": "repoprobe-run"}"#.to_vec()),
        );
        assert!(s.to_read().is_empty(), "each is read once");
        let r = s.releases();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].manifest.review.kept, 1);
        let issues = s.issues();
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert!(issues[0].message.contains("repoprobe-run"));
        assert!(issues[1].message.contains("larger than"));
    }
}
