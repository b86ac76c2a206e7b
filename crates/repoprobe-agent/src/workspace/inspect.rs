//! What a question's run left behind: the files that differ from the pinned commit and where
//! HEAD points ([`Worktree::changes`]), and what was planted in the cache's git directory
//! ([`inspect_cache`]). Read without trusting anything the agent could write: git runs in a
//! `Shadow`, HEAD is read from its files, the cache's config is parsed, not loaded.

use super::shadow::Shadow;
use super::{Change, ChangeKind, Changes, QUOTE_CHARS, WorkspaceError, Worktree};
use crate::git;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Most findings of [`inspect_cache`] named one by one (the rest are counted).
const MAX_FINDINGS: usize = 20;

/// Config keys `git clone --bare` writes (and older git versions did), with any value: anything
/// else in a cache's `config` was put there by someone else.
const CLONE_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.logallrefupdates",
    "remote.origin.url",
    "remote.origin.fetch",
    "extensions.objectformat",
    "extensions.refstorage",
];

impl Worktree {
    /// What differs from the pinned commit: `git status --porcelain=v1 -z --untracked-files=all
    /// --ignored=matching` (ignored directories are listed once, not file by file) run in a
    /// `Shadow` against a fresh index of the pinned commit; whether HEAD moved (read from the
    /// worktree's own HEAD file, not by git); and what [`inspect_cache`] finds in the cache.
    pub fn changes(&self) -> Result<Changes, WorkspaceError> {
        let cache_tampered = inspect_cache(&self.git_dir);
        let shadow = Shadow::new(&self.commit).map_err(|e| WorkspaceError::Io {
            context: "creating a private git directory in the temporary directory".into(),
            source: e,
        })?;
        let index = shadow.dir.path().join("index");
        shadow
            .git(self, &index)
            .arg("read-tree")
            .arg(&self.commit)
            .run()
            .map_err(|e| self.error("read-tree", e))?;
        let out = shadow
            .git(self, &index)
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--ignored=matching",
                "--no-renames",
                // A submodule the agent populated shows when its HEAD is not the recorded
                // commit; git never runs inside it.
                "--ignore-submodules=dirty",
            ])
            .run()
            .map_err(|e| self.error("status", e))?;
        let files = parse_status(&out);
        let head = read_head(&self.admin_dir, &self.git_dir);
        Ok(Changes {
            files,
            head_moved_to: (head != self.commit).then_some(head),
            cache_tampered,
        })
    }
}

/// What in a cached clone's git directory a clone of ours never holds and an agent (whose
/// worktree shares that directory) could have planted: config keys outside `CLONE_KEYS`
/// (`core.fsmonitor`, `core.hooksPath`, `include.path`, `filter.*`, `extensions.worktreeConfig`
/// …), a `config.worktree` (the cache's or a worktree's), hooks (anything in `hooks/` but git's
/// `*.sample` files, which clones made before `--template=` hold), files in `info/` other than `exclude` (`attributes`, `grafts`,
/// `sparse-checkout`) and alternates. One line per finding, untrusted values quoted last; empty
/// when the cache is clean.
pub fn inspect_cache(git_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    match git::config_entries(&git_dir.join("config")) {
        Ok(entries) => {
            for (key, value) in entries {
                if !CLONE_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
                    found.push(format!(
                        "config sets {key} = {}",
                        git::quote(&value, QUOTE_CHARS)
                    ));
                }
            }
        }
        Err(e) => found.push(format!(
            "config cannot be read: {}",
            git::quote(&e.to_string(), QUOTE_CHARS)
        )),
    }
    let listing = |rel: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(git_dir.join(rel))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let exists = |rel: &str| git_dir.join(rel).symlink_metadata().is_ok();
    if exists("config.worktree") {
        found.push("config.worktree exists".into());
    }
    for id in listing("worktrees") {
        let rel = format!("worktrees/{id}/config.worktree");
        if exists(&rel) {
            found.push(format!("{rel} exists"));
        }
    }
    for hook in listing("hooks") {
        if !hook.ends_with(".sample") {
            found.push(format!(
                "hook {}",
                git::quote(&format!("hooks/{hook}"), QUOTE_CHARS)
            ));
        }
    }
    for info in listing("info") {
        if info != "exclude" {
            found.push(format!(
                "{} exists",
                git::quote(&format!("info/{info}"), QUOTE_CHARS)
            ));
        }
    }
    for alt in ["objects/info/alternates", "objects/info/http-alternates"] {
        if exists(alt) {
            found.push(format!("{alt} exists"));
        }
    }
    if found.len() > MAX_FINDINGS {
        let more = found.len() - MAX_FINDINGS;
        found.truncate(MAX_FINDINGS);
        found.push(format!("and {more} more"));
    }
    found
}

/// The commit the worktree's HEAD names, read from its files as git would (a detached sha, or a
/// branch in the loose refs or `packed-refs`) without running git; anything else is described.
fn read_head(admin_dir: &Path, git_dir: &Path) -> String {
    // A ref file is one line; the agent may have written anything there.
    let read = |p: PathBuf| -> std::io::Result<String> {
        use std::io::Read;
        let mut text = String::new();
        File::open(p)?.take(512).read_to_string(&mut text)?;
        Ok(text.trim().to_string())
    };
    let Ok(mut text) = read(admin_dir.join("HEAD")) else {
        return "(HEAD is missing or unreadable)".into();
    };
    for _ in 0..5 {
        let Some(name) = text.strip_prefix("ref:").map(str::trim) else {
            let sha = matches!(text.len(), 40 | 64) && text.chars().all(|c| c.is_ascii_hexdigit());
            return if sha {
                text
            } else {
                format!("(HEAD holds {})", git::quote(&text, QUOTE_CHARS))
            };
        };
        let valid = name.starts_with("refs/")
            && !name.split('/').any(|c| c.is_empty() || c.starts_with('.'))
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
        if !valid {
            return format!("(HEAD names the ref {})", git::quote(name, QUOTE_CHARS));
        }
        let per_worktree = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"]
            .iter()
            .any(|p| name.starts_with(p));
        let base = if per_worktree { admin_dir } else { git_dir };
        if let Ok(next) = read(base.join(name)) {
            text = next;
            continue;
        }
        let packed = std::fs::read_to_string(git_dir.join("packed-refs")).unwrap_or_default();
        return packed
            .lines()
            .filter(|l| !l.starts_with(['#', '^']))
            .find_map(|l| {
                l.split_once(' ')
                    .filter(|(_, r)| *r == name)
                    .map(|(sha, _)| sha.to_string())
            })
            .unwrap_or_else(|| format!("(HEAD is the unborn branch {name})"));
    }
    "(HEAD: too many symbolic refs)".into()
}

/// Parses `git status --porcelain=v1 -z`: `XY path\0`, with `XY to\0from\0` for renames and
/// copies.
fn parse_status(out: &str) -> Vec<Change> {
    let mut files = Vec::new();
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let (xy, path) = entry.split_at(3);
        let xy = xy.as_bytes();
        let (x, y) = (xy[0], xy[1]);
        let kind = match (x, y) {
            (b'?', b'?') => ChangeKind::Untracked,
            (b'!', b'!') => ChangeKind::Ignored,
            (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => ChangeKind::Unmerged,
            (b'R', _) => ChangeKind::Renamed,
            (b'C', _) => ChangeKind::Copied,
            (b'D', _) | (_, b'D') => ChangeKind::Deleted,
            (b'A', _) => ChangeKind::Added,
            (b'T', _) | (_, b'T') => ChangeKind::TypeChanged,
            _ => ChangeKind::Modified,
        };
        let from = matches!(kind, ChangeKind::Renamed | ChangeKind::Copied)
            .then(|| fields.next().map(str::to_string))
            .flatten();
        files.push(Change {
            path: path.to_string(),
            kind: Some(kind),
            from,
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::git;
    use crate::workspace::RepoSource;
    use crate::workspace::tests::{origin, repo};

    /// An executable that appends its name and arguments to `mark`.
    fn evil(dir: &Path, mark: &Path) -> PathBuf {
        let p = dir.join("evil.sh");
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", mark.display()),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn edits_new_files_deletions_and_ignored_output_show_in_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        std::fs::create_dir_all(wt.path.join("notes/deep")).unwrap();
        std::fs::write(wt.path.join("notes/deep/new file.md"), "x").unwrap();
        std::fs::remove_file(wt.path.join(".gitignore")).unwrap();
        let changes = wt.changes().unwrap();
        let got: Vec<(&str, Option<ChangeKind>)> = changes
            .files
            .iter()
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        assert!(
            got.contains(&("src/lib.txt", Some(ChangeKind::Modified))),
            "{got:?}"
        );
        assert!(
            got.contains(&("notes/deep/new file.md", Some(ChangeKind::Untracked))),
            "{got:?}"
        );
        assert!(
            got.contains(&(".gitignore", Some(ChangeKind::Deleted))),
            "{got:?}"
        );
        assert!(changes.head_moved_to.is_none());
        assert!(!changes.is_empty());
        let json = serde_json::to_string(&changes.files[0]).unwrap();
        assert!(json.contains("\"kind\":"), "{json}");
    }

    #[test]
    fn ignored_output_and_a_moved_head_show_in_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::create_dir_all(wt.path.join("target/debug")).unwrap();
        std::fs::write(wt.path.join("target/debug/out.bin"), "x").unwrap();
        let changes = wt.changes().unwrap();
        assert_eq!(
            changes.files,
            vec![Change {
                path: "target/".into(),
                kind: Some(ChangeKind::Ignored),
                from: None
            }]
        );
        std::fs::remove_dir_all(wt.path.join("target")).unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "committed by the agent\n").unwrap();
        git(&wt.path, &["commit", "--quiet", "-am", "agent"]);
        let changes = wt.changes().unwrap();
        // A committed edit is still a difference from the pinned commit.
        assert_eq!(
            changes.files,
            vec![Change {
                path: "src/lib.txt".into(),
                kind: Some(ChangeKind::Modified),
                from: None
            }]
        );
        let moved = git(&wt.path, &["rev-parse", "HEAD"]);
        assert_eq!(changes.head_moved_to.as_deref(), Some(moved.as_str()));
        // On a branch (a loose ref, then a packed one), HEAD is read through the ref.
        git(&wt.path, &["checkout", "--quiet", "-b", "agent-branch"]);
        assert_eq!(
            wt.changes().unwrap().head_moved_to.as_deref(),
            Some(moved.as_str())
        );
        git(&wt.path, &["pack-refs", "--all"]);
        assert_eq!(
            wt.changes().unwrap().head_moved_to.as_deref(),
            Some(moved.as_str())
        );
        wt.remove().unwrap();
    }

    #[test]
    fn git_config_planted_through_a_worktree_never_runs_and_the_cache_is_refused_next() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, second) = origin(tmp.path());
        let url = origin.to_str().unwrap();
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(&repo("acme/widget", url, &first), &tmp.path().join("wt"))
            .unwrap();
        let mark = tmp.path().join("ran");
        let evil = evil(tmp.path(), &mark);
        let evil = evil.to_str().unwrap();
        // What an agent in the worktree can do with git alone.
        for (k, v) in [
            ("core.fsmonitor", evil),
            ("filter.x.clean", evil),
            ("filter.x.smudge", evil),
            ("filter.x.required", "true"),
            ("diff.external", evil),
            ("extensions.worktreeConfig", "true"),
        ] {
            git(&wt.path, &["config", k, v]);
        }
        git(
            &wt.path,
            &[
                "config",
                "--worktree",
                "core.hooksPath",
                tmp.path().to_str().unwrap(),
            ],
        );
        std::fs::write(wt.path.join(".gitattributes"), "* filter=x diff=x\n").unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        let cache = tmp.path().join("cache/acme__widget.git");
        assert!(
            !cache.join("hooks").exists(),
            "a clone has no template hooks"
        );
        std::fs::create_dir_all(cache.join("hooks")).unwrap();
        std::fs::create_dir_all(cache.join("info")).unwrap();
        std::fs::copy(evil, cache.join("hooks/post-checkout")).unwrap();
        std::fs::write(cache.join("info/attributes"), "* filter=x\n").unwrap();

        let changes = wt.changes().unwrap();
        let got: Vec<(&str, Option<ChangeKind>)> = changes
            .files
            .iter()
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        assert!(
            got.contains(&("src/lib.txt", Some(ChangeKind::Modified))),
            "{got:?}"
        );
        assert!(
            got.contains(&(".gitattributes", Some(ChangeKind::Untracked))),
            "{got:?}"
        );
        assert!(!changes.is_empty());
        let found = changes.cache_tampered.join("\n");
        for what in [
            "core.fsmonitor",
            "filter.x.clean",
            "extensions.worktreeconfig",
            "config.worktree exists",
            "hooks/post-checkout",
            "info/attributes",
        ] {
            assert!(found.contains(what), "{what} not in {found}");
        }
        let wt_path = wt.path.clone();
        let err = wt.remove().unwrap_err();
        assert!(matches!(err, WorkspaceError::Tampered { .. }), "{err}");
        assert!(!wt_path.exists());
        let err = source
            .prepare(&repo("acme/widget", url, &second), &tmp.path().join("wt2"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("tampered with") && err.contains(&format!("delete {}", cache.display())),
            "{err}"
        );
        assert!(
            err.contains("core.fsmonitor") && err.contains(evil),
            "{err}"
        );
        assert!(!tmp.path().join("wt2").exists());
        assert!(
            !mark.exists(),
            "{}",
            std::fs::read_to_string(&mark).unwrap()
        );

        // The plant is real: git as a user runs it has the filter and hooks run.
        let plain = tmp.path().join("plain");
        git(
            &cache,
            &[
                "worktree",
                "add",
                "--detach",
                "-q",
                plain.to_str().unwrap(),
                &first,
            ],
        );
        assert!(
            mark.exists(),
            "the plant does not work: the test proves nothing"
        );

        // Deleting the cache, as the message says, mends it.
        std::fs::remove_dir_all(&cache).unwrap();
        let wt = source
            .prepare(&repo("acme/widget", url, &second), &tmp.path().join("wt2"))
            .unwrap();
        assert!(wt.changes().unwrap().is_empty());
        wt.remove().unwrap();
    }

    #[test]
    fn a_cache_cloned_by_plain_git_with_its_sample_hooks_is_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        // As repoprobe cloned before `--template=`: git's template, sample hooks and all.
        git(
            &cache,
            &[
                "clone",
                "--bare",
                "-q",
                origin.to_str().unwrap(),
                "acme__widget.git",
            ],
        );
        assert!(cache.join("acme__widget.git/hooks").exists());
        assert_eq!(
            inspect_cache(&cache.join("acme__widget.git")),
            Vec::<String>::new()
        );
        let wt = RepoSource::new(&cache)
            .prepare(
                &repo("acme/widget", "https://invalid.example/x", &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        assert!(wt.changes().unwrap().is_empty());
    }

    #[test]
    fn a_hostile_head_is_described_not_followed_and_a_flood_of_findings_is_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let (admin, common) = (tmp.path().join("admin"), tmp.path().join("common"));
        std::fs::create_dir_all(common.join("refs/heads")).unwrap();
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::write(
            tmp.path().join("secret"),
            "0123456789012345678901234567890123456789",
        )
        .unwrap();
        let head = |text: &str| {
            std::fs::write(admin.join("HEAD"), text).unwrap();
            read_head(&admin, &common)
        };
        assert_eq!(
            head("ref: refs/heads/../../secret\n"),
            "(HEAD names the ref \"refs/heads/../../secret\")"
        );
        assert!(head(&"x".repeat(5000)).starts_with("(HEAD holds \"xxx"));
        assert!(head(&"x".repeat(5000)).len() < 200);
        std::fs::write(common.join("refs/heads/b"), "ref: refs/heads/b\n").unwrap();
        assert_eq!(head("ref: refs/heads/b"), "(HEAD: too many symbolic refs)");
        assert_eq!(
            head("ref: refs/heads/none"),
            "(HEAD is the unborn branch refs/heads/none)"
        );

        std::fs::create_dir_all(common.join("hooks")).unwrap();
        std::fs::write(common.join("config"), "[core]\n\tbare = true\n").unwrap();
        assert!(inspect_cache(&common).is_empty());
        for i in 0..30 {
            std::fs::write(common.join(format!("hooks/h{i:02}")), "").unwrap();
        }
        let found = inspect_cache(&common);
        assert_eq!(found.len(), MAX_FINDINGS + 1);
        assert_eq!(found.last().unwrap(), "and 10 more");
    }

    #[test]
    fn index_flags_set_by_the_agent_hide_no_edit() {
        let tmp = tempfile::tempdir().unwrap();
        let (origin, first, _) = origin(tmp.path());
        let source = RepoSource::new(tmp.path().join("cache"));
        let wt = source
            .prepare(
                &repo("acme/widget", origin.to_str().unwrap(), &first),
                &tmp.path().join("wt"),
            )
            .unwrap();
        std::fs::write(wt.path.join("src/lib.txt"), "edited\n").unwrap();
        git(
            &wt.path,
            &["update-index", "--assume-unchanged", "src/lib.txt"],
        );
        git(&wt.path, &["update-index", "--skip-worktree", ".gitignore"]);
        std::fs::remove_file(wt.path.join(".gitignore")).unwrap();
        assert_eq!(git(&wt.path, &["status", "--porcelain"]), "");
        let got: Vec<(String, Option<ChangeKind>)> = wt
            .changes()
            .unwrap()
            .files
            .into_iter()
            .map(|c| (c.path, c.kind))
            .collect();
        assert_eq!(
            got,
            [
                (".gitignore".to_string(), Some(ChangeKind::Deleted)),
                ("src/lib.txt".to_string(), Some(ChangeKind::Modified))
            ]
        );
        wt.remove().unwrap();
    }

    #[test]
    fn status_parser_reads_renames_with_their_origin() {
        let out = "R  new.rs\0old.rs\0 M a b.txt\0?? x\0!! target/\0";
        let files = parse_status(out);
        assert_eq!(files.len(), 4);
        assert_eq!(files[0].kind, Some(ChangeKind::Renamed));
        assert_eq!(files[0].from.as_deref(), Some("old.rs"));
        assert_eq!(files[1].path, "a b.txt");
        assert_eq!(files[3].kind, Some(ChangeKind::Ignored));
    }
}
