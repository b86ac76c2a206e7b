//! `repoprobe curate finalize`: the benchmark of a release from the candidates and their human
//! reviews (docs/review.md#finalize): the kept candidates written as they were read, the others
//! in `<out>.excluded.ndjson` with why, and the release manifest beside them
//! (`<out>.manifest.json`: version, date, selection, funnel, agreement, every file's SHA-256).
//! The rules are the core's (`repoprobe_curate::finalize`); this reads, hashes and writes.

use super::excluded_path;
use super::report::{StageFiles, Stages};
use crate::exit::Exit;
use crate::input::{load_paths, print_issues, write_atomically};
use crate::run_files::manifest::InputFile;
use anyhow::{Context, bail};
use repoprobe_core::dataset::Dataset;
use repoprobe_core::date::{format_utc, parse_utc};
use repoprobe_core::text::quote;
use repoprobe_core::{LoadOptions, Question, Review};
use repoprobe_curate::agreement::agreement;
use repoprobe_curate::finalize::{
    CreatedRange, FileHash, KeptBy, MANIFEST_FORMAT, Manifest, ReviewCount, Selection, decide,
};
use repoprobe_curate::{Excluded, Funnel, Rule, Stage, StageOutput};
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `curate verify`'s output: the candidates (its excluded journal beside it is counted).
    #[arg(long)]
    candidates: PathBuf,
    /// The review files (docs/format.md#review); one or more.
    #[arg(value_name = "FILE", required = true)]
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
    /// created before this day is said on stderr.
    #[arg(long, value_name = "DATE")]
    created_after: Option<String>,
    /// … and one created after this day (a question of the day itself is inside).
    #[arg(long, value_name = "DATE")]
    created_before: Option<String>,
    /// The earlier stages' outputs, counted in the manifest's funnel as `curate report` counts
    /// them (each with its excluded journal).
    #[command(flatten)]
    stages: StageFiles,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let date = checked_date(&a)?;
    let inputs: Vec<PathBuf> = std::iter::once(a.candidates.clone())
        .chain(a.reviews.iter().cloned())
        .collect();
    let [excluded_out, manifest_out] = outputs(&a, &inputs)?;

    // Candidates and reviews in one load: a review of a question not among the candidates is
    // reported; the candidates' own text is kept to be written as it was read.
    let loaded = load_paths(
        &inputs,
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
    let reviewed = Reviewed::of(ds, raw);
    let (funnel, read, bad) = funnel(&a, &reviewed)?;
    if bad > 0 && exit == Exit::Ok {
        exit = Exit::InvalidRecords;
    }
    let created = CreatedRange::of(reviewed.kept.iter().map(|(q, _)| q.created_at()));
    note_created_outside(&a, &reviewed.kept);

    // Outputs first (atomically), then the manifest with their hashes.
    write_outputs(&a.out, &excluded_out, &reviewed)?;
    let count = reviewed.count;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        version: a.version_name.clone(),
        date,
        selection: Selection {
            criteria: a.criteria.clone(),
            created_after: a.created_after.clone(),
            created_before: a.created_before.clone(),
            created,
            answered_rule: answered_rule(&read),
        },
        review: count.clone(),
        funnel,
        agreement: agreement(&ds.reviews),
        files: hashes(&read, &a, &excluded_out, &manifest_out)?,
    };
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    write_atomically(&manifest_out, json.as_bytes())
        .with_context(|| format!("cannot write {}", manifest_out.display()))?;
    eprintln!(
        "curate finalize: {} of {} candidate(s) kept ({} by an adjudicator), {} rejected, {} unresolved, {} unreviewed; {}, {}, {}",
        count.kept,
        count.candidates,
        count.kept_by_adjudicator,
        count.rejected,
        count.unresolved,
        count.unreviewed,
        a.out.display(),
        excluded_out.display(),
        manifest_out.display()
    );
    Ok(exit)
}

/// The release date (`--date`, else today in UTC), once every date flag and the version name
/// are checked.
fn checked_date(a: &Args) -> anyhow::Result<String> {
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
    Ok(date)
}

/// The excluded journal and the manifest written beside `--out`, none of the three an input.
fn outputs(a: &Args, inputs: &[PathBuf]) -> anyhow::Result<[PathBuf; 2]> {
    let written = [
        excluded_path(&a.out),
        crate::output::beside(&a.out, "manifest.json"),
    ];
    for o in std::iter::once(&a.out).chain(&written) {
        if inputs.iter().any(|i| same_file(i, o)) {
            bail!("{} is an input: give another --out", o.display());
        }
    }
    Ok(written)
}

/// The review's decision on every candidate: the kept ones (their text as read) and the
/// excluded ones with why, and the counts of the manifest.
struct Reviewed<'d> {
    kept_text: String,
    /// Each kept question with its funnel key (id, repository).
    kept: Vec<(&'d Question, (String, String))>,
    excluded: Vec<Excluded>,
    count: ReviewCount,
    /// The funnel keys of the candidates with at least one review.
    reviewed: Vec<(String, String)>,
}

impl<'d> Reviewed<'d> {
    fn of(ds: &'d Dataset, raw: &[Box<RawValue>]) -> Reviewed<'d> {
        let mut by_question: BTreeMap<&str, Vec<&Review>> = BTreeMap::new();
        for r in &ds.reviews {
            by_question
                .entry(r.question_id.as_str())
                .or_default()
                .push(r);
        }
        let mut out = Reviewed {
            kept_text: String::new(),
            kept: Vec::new(),
            excluded: Vec::new(),
            count: ReviewCount {
                candidates: ds.questions.len(),
                ..Default::default()
            },
            reviewed: Vec::new(),
        };
        for (q, text) in ds.questions.iter().zip(raw) {
            let reviews = by_question.get(q.id.as_str()).cloned().unwrap_or_default();
            out.decide(q, text.get(), &reviews);
        }
        out
    }

    fn decide(&mut self, q: &'d Question, text: &str, reviews: &[&Review]) {
        let count = &mut self.count;
        let key = (q.id.clone(), q.repo.name.clone());
        if !reviews.is_empty() {
            count.reviewed += 1;
            self.reviewed.push(key.clone());
        }
        match decide(&q.id, reviews) {
            Ok(by) => {
                count.kept += 1;
                if by == KeptBy::Adjudicator {
                    count.kept_by_adjudicator += 1;
                }
                self.kept_text.push_str(text);
                self.kept_text.push('\n');
                self.kept.push((q, key));
            }
            Err((rule, reason)) => {
                match rule {
                    Rule::Rejected => count.rejected += 1,
                    Rule::Unresolved => count.unresolved += 1,
                    _ => count.unreviewed += 1,
                }
                self.excluded.push(Excluded {
                    stage: Stage::Review,
                    key: q.id.clone(),
                    repo: q.repo.name.clone(),
                    rule,
                    reason,
                });
            }
        }
    }
}

/// Every stage file read, with what it was given as (`repos`, `verify.excluded`, …).
type ReadFiles = Vec<(String, PathBuf)>;

/// The funnel: the earlier stages given, the candidates (with verify's excluded journal), then
/// reviewed and kept, with the review's drops. Also the stage files read (to hash) and the
/// count of their lines that are no record.
fn funnel(a: &Args, reviewed: &Reviewed<'_>) -> anyhow::Result<(Funnel, ReadFiles, usize)> {
    let Stages {
        repos,
        harvested,
        mut outputs,
        excluded: mut all_excluded,
        bad,
        read,
    } = a.stages.read(Some(a.candidates.as_path()))?;
    outputs.push(StageOutput {
        stage: "reviewed".into(),
        records: reviewed.reviewed.clone(),
    });
    outputs.push(StageOutput {
        stage: "kept".into(),
        records: reviewed.kept.iter().map(|(_, k)| k.clone()).collect(),
    });
    all_excluded.extend(reviewed.excluded.iter().cloned());
    let funnel = Funnel::of(&repos, &harvested, &outputs, &all_excluded);
    Ok((funnel, read, bad))
}

/// Says on stderr how many kept questions were created outside the cut-off dates given.
fn note_created_outside(a: &Args, kept: &[(&Question, (String, String))]) {
    let after = a.created_after.as_deref().and_then(parse_utc);
    // A bare date is the whole day, as in `curate repos`.
    let before = a
        .created_before
        .as_deref()
        .and_then(|s| parse_utc(s).map(|t| if s.trim().len() == 10 { t + 86_399 } else { t }));
    let outside = kept
        .iter()
        .filter_map(|(q, _)| q.created_at().and_then(parse_utc))
        .filter(|&t| after.is_some_and(|from| t < from) || before.is_some_and(|until| t > until))
        .count();
    if outside > 0 {
        eprintln!(
            "note: {outside} kept question(s) were created outside --created-after/--created-before"
        );
    }
}

/// The benchmark (the kept candidates as read) and the excluded journal, each atomically.
fn write_outputs(out: &Path, excluded_out: &Path, reviewed: &Reviewed<'_>) -> anyhow::Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::input::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomically(out, reviewed.kept_text.as_bytes())
        .with_context(|| format!("cannot write {}", out.display()))?;
    let mut ex_text = String::new();
    for e in &reviewed.excluded {
        ex_text.push_str(&serde_json::to_string(e)?);
        ex_text.push('\n');
    }
    write_atomically(excluded_out, ex_text.as_bytes())
        .with_context(|| format!("cannot write {}", excluded_out.display()))
}

/// Every file of the release and what it was read or written as, with its SHA-256: the stages
/// read (verify's output as the candidates), the reviews, the benchmark and its excluded journal.
/// Each named relative to the manifest's directory, so the release moves as one directory.
fn hashes(
    read: &[(String, PathBuf)],
    a: &Args,
    excluded_out: &Path,
    manifest_out: &Path,
) -> anyhow::Result<Vec<FileHash>> {
    let dir = crate::input::dir_of(manifest_out);
    let mut files = Vec::new();
    let mut hash = |role: &str, p: &Path| -> anyhow::Result<()> {
        let h = InputFile::hash(p)?;
        files.push(FileHash {
            role: role.to_string(),
            path: seen_from(dir, p).unwrap_or(h.path),
            sha256: h.sha256,
        });
        Ok(())
    };
    for (role, p) in read {
        match role.as_str() {
            "verify" => hash("candidates", p)?,
            "verify.excluded" => hash("candidates.excluded", p)?,
            _ => hash(role, p)?,
        }
    }
    for r in &a.reviews {
        hash("reviews", r)?;
    }
    hash("benchmark", &a.out)?;
    hash("excluded", excluded_out)?;
    Ok(files)
}

/// The answered-thread rules of the repositories file read (`repos`), distinct and sorted.
fn answered_rule(read: &[(String, PathBuf)]) -> Option<String> {
    let (_, path) = read.iter().find(|(role, _)| role == "repos")?;
    let mut rules: Vec<String> = crate::input::read_json_records(path)
        .ok()?
        .into_iter()
        .filter_map(|(_, r)| r.ok())
        .map(|v| v["answered_rule"].as_str().unwrap_or("each").to_string())
        .collect();
    rules.sort();
    rules.dedup();
    (!rules.is_empty()).then(|| rules.join(","))
}

/// `p` as seen from the directory `dir`: `benchmark.jsonl`, `../cur/repos.jsonl`; `None` when
/// either cannot be resolved.
fn seen_from(dir: &Path, p: &Path) -> Option<String> {
    let (dir, file) = (dir.canonicalize().ok()?, p.canonicalize().ok()?);
    let common = dir
        .components()
        .zip(file.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut rel = PathBuf::new();
    for _ in common..dir.components().count() {
        rel.push("..");
    }
    for c in file.components().skip(common) {
        rel.push(c);
    }
    Some(rel.to_string_lossy().into_owned())
}

/// Whether two paths name one file (the second need not exist).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
