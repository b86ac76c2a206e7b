//! `repoprobe curate finalize`: the benchmark of a release from the candidates and their human
//! reviews (docs/review.md#finalize): the kept candidates written as they were read, the others
//! in `<out>.excluded.ndjson` with why, and the release manifest beside them
//! (`<out>.manifest.json`: version, date, selection, funnel, agreement, every file's SHA-256).
//! The rules are the core's (`repoprobe_core::curate::finalize`); this reads, hashes and writes.

use super::excluded_path;
use super::report::{StageFiles, Stages};
use crate::exit::Exit;
use crate::input::{load_paths, print_issues, write_atomically};
use crate::runs::manifest::InputFile;
use anyhow::{Context, bail};
use repoprobe_core::curate::agreement::agreement;
use repoprobe_core::curate::date::{format_utc, parse_utc};
use repoprobe_core::curate::finalize::{
    CreatedRange, FileHash, KeptBy, MANIFEST_FORMAT, Manifest, ReviewCount, Selection, decide,
};
use repoprobe_core::curate::{Excluded, Funnel, Rule, Stage, StageOutput};
use repoprobe_core::issue::quote;
use repoprobe_core::{LoadOptions, Review};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `curate verify`'s output: the candidates (its excluded journal beside it is counted).
    #[arg(long)]
    candidates: PathBuf,
    /// The review files (docs/format.md#review); one or more.
    #[arg(long, required = true, num_args = 1..)]
    reviews: Vec<PathBuf>,
    /// The benchmark to write (JSONL); `<out>.excluded.ndjson` and `<out>.manifest.json` go
    /// beside it.
    #[arg(long)]
    out: PathBuf,
    /// The release's name, recorded in the manifest (`v1`, `2026-03`).
    #[arg(long)]
    version_name: String,
    /// The release date, YYYY-MM-DD [default: today, UTC].
    #[arg(long)]
    date: Option<String>,
    /// The selection criteria, free text, recorded in the manifest.
    #[arg(long)]
    criteria: Option<String>,
    /// The discussions' cut-off dates (YYYY-MM-DD), recorded in the manifest; a kept question
    /// outside them is said on stderr.
    #[arg(long)]
    created_after: Option<String>,
    #[arg(long)]
    created_before: Option<String>,
    /// The earlier stages' outputs, counted in the manifest's funnel as `curate report` counts
    /// them (each with its excluded journal).
    #[command(flatten)]
    stages: StageFiles,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let date = match &a.date {
        Some(d) => {
            if d.len() != 10 || parse_utc(d).is_none() {
                bail!("--date must be YYYY-MM-DD, not {}", quote(d));
            }
            d.clone()
        }
        None => format_utc(repoprobe_github::unix_now())[..10].to_string(),
    };
    for (flag, v) in [
        ("--created-after", &a.created_after),
        ("--created-before", &a.created_before),
    ] {
        if let Some(v) = v
            && parse_utc(v).is_none()
        {
            bail!("{flag} must be a date (YYYY-MM-DD), not {}", quote(v));
        }
    }
    if a.version_name.trim().is_empty() {
        bail!("--version-name must not be empty");
    }
    let written = [
        excluded_path(&a.out),
        crate::output::beside(&a.out, "manifest.json"),
    ];
    let inputs: Vec<&Path> = std::iter::once(a.candidates.as_path())
        .chain(a.reviews.iter().map(PathBuf::as_path))
        .collect();
    for o in std::iter::once(&a.out).chain(&written) {
        if inputs.iter().any(|i| same_file(i, o)) {
            bail!("{} is an input: give another --out", o.display());
        }
    }

    // Candidates and reviews in one load: a review of a question not among the candidates is
    // reported; the candidates' own text is kept to be written as it was read.
    let paths: Vec<PathBuf> = inputs.iter().map(|p| p.to_path_buf()).collect();
    let loaded = load_paths(
        &paths,
        LoadOptions {
            keep_raw: true,
            ..Default::default()
        },
    );
    print_issues(&loaded);
    let mut exit = Exit::of(&loaded);
    if exit == Exit::Unusable {
        bail!("an input file cannot be used (listed above)");
    }
    let ds = &loaded.dataset;
    if ds.questions.is_empty() {
        bail!(
            "no valid candidate question was loaded from {}",
            a.candidates.display()
        );
    }
    let raw = ds
        .raw
        .as_ref()
        .map(|r| &r.questions)
        .filter(|r| r.len() == ds.questions.len())
        .context("the loader kept no text of the candidates")?;
    let mut by_question: BTreeMap<&str, Vec<&Review>> = BTreeMap::new();
    for r in &ds.reviews {
        by_question
            .entry(r.question_id.as_str())
            .or_default()
            .push(r);
    }

    let mut kept_text = String::new();
    let mut kept = Vec::new();
    let mut excluded = Vec::new();
    let mut count = ReviewCount {
        candidates: ds.questions.len(),
        ..Default::default()
    };
    let mut reviewed = Vec::new();
    for (q, text) in ds.questions.iter().zip(raw) {
        let reviews = by_question.get(q.id.as_str()).cloned().unwrap_or_default();
        let key = (q.id.clone(), q.repo.name.clone());
        if !reviews.is_empty() {
            count.reviewed += 1;
            reviewed.push(key.clone());
        }
        match decide(&q.id, &reviews) {
            Ok(by) => {
                count.kept += 1;
                if by == KeptBy::Adjudicator {
                    count.kept_by_adjudicator += 1;
                }
                kept_text.push_str(text.get());
                kept_text.push('\n');
                kept.push((q, key));
            }
            Err((rule, reason)) => {
                match rule {
                    Rule::Rejected => count.rejected += 1,
                    Rule::Unresolved => count.unresolved += 1,
                    _ => count.unreviewed += 1,
                }
                excluded.push(Excluded {
                    stage: Stage::Review,
                    key: q.id.clone(),
                    repo: q.repo.name.clone(),
                    rule,
                    reason,
                });
            }
        }
    }

    // The funnel: the earlier stages given, the candidates (with verify's excluded journal),
    // then reviewed and kept, with the review's drops.
    let Stages {
        repos,
        harvested,
        mut outputs,
        excluded: mut all_excluded,
        bad,
        read,
    } = a.stages.read(Some(a.candidates.as_path()))?;
    if bad > 0 && exit == Exit::Ok {
        exit = Exit::InvalidRecords;
    }
    outputs.push(StageOutput {
        stage: "reviewed".into(),
        records: reviewed,
    });
    outputs.push(StageOutput {
        stage: "kept".into(),
        records: kept.iter().map(|(_, k)| k.clone()).collect(),
    });
    all_excluded.extend(excluded.iter().cloned());
    let funnel = Funnel::of(&repos, &harvested, &outputs, &all_excluded);

    let created = CreatedRange::of(kept.iter().map(|(q, _)| q.created_at()));
    let outside = kept
        .iter()
        .filter_map(|(q, _)| q.created_at().and_then(parse_utc))
        .filter(|&t| {
            a.created_after
                .as_deref()
                .and_then(parse_utc)
                .is_some_and(|from| t < from)
                || a.created_before
                    .as_deref()
                    .and_then(parse_utc)
                    .is_some_and(|until| t >= until)
        })
        .count();
    if outside > 0 {
        eprintln!(
            "note: {outside} kept question(s) were created outside --created-after/--created-before"
        );
    }

    // Outputs first (atomically), then the manifest with their hashes.
    if let Some(dir) = a.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomically(&a.out, kept_text.as_bytes())
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    let mut ex_text = String::new();
    for e in &excluded {
        ex_text.push_str(&serde_json::to_string(e)?);
        ex_text.push('\n');
    }
    write_atomically(&written[0], ex_text.as_bytes())
        .with_context(|| format!("cannot write {}", written[0].display()))?;

    let mut files = Vec::new();
    let mut hash = |role: &str, p: &Path| -> anyhow::Result<()> {
        let h = InputFile::hash(p)?;
        files.push(FileHash {
            role: role.to_string(),
            path: h.path,
            sha256: h.sha256,
        });
        Ok(())
    };
    for (role, p) in &read {
        if role == "verify" {
            hash("candidates", p)?;
        } else if role == "verify.excluded" {
            hash("candidates.excluded", p)?;
        } else {
            hash(role, p)?;
        }
    }
    for r in &a.reviews {
        hash("reviews", r)?;
    }
    hash("benchmark", &a.out)?;
    hash("excluded", &written[0])?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        version: a.version_name.clone(),
        date,
        selection: Selection {
            criteria: a.criteria.clone(),
            created_after: a.created_after.clone(),
            created_before: a.created_before.clone(),
            created,
        },
        review: count.clone(),
        funnel,
        agreement: agreement(&ds.reviews),
        files,
    };
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    write_atomically(&written[1], json.as_bytes())
        .with_context(|| format!("cannot write {}", written[1].display()))?;
    eprintln!(
        "curate finalize: {} of {} candidate(s) kept ({} by an adjudicator), {} rejected, {} unresolved, {} unreviewed; {}, {}, {}",
        count.kept,
        count.candidates,
        count.kept_by_adjudicator,
        count.rejected,
        count.unresolved,
        count.unreviewed,
        a.out.display(),
        written[0].display(),
        written[1].display()
    );
    Ok(exit)
}

/// Whether two paths name one file (the second need not exist).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
