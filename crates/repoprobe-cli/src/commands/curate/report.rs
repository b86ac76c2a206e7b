//! `repoprobe curate report`: the funnel so far (the core's `curate::Funnel`), from the stages'
//! outputs and the excluded journals beside them: repositories seen and kept, threads
//! harvested and after each later stage given, what was dropped by rule, per repository. The
//! table goes to stdout, the JSON to `--out`.

use super::{excluded_path, read_records};
use crate::exit::Exit;
use crate::input::write_atomically;
use anyhow::{Context, bail};
use repoprobe_curate::{Excluded, Funnel, Repository, StageOutput, Thread};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    stages: StageFiles,
    /// `curate verify`'s output: the candidates (and its excluded journal).
    #[arg(long)]
    candidates: Option<PathBuf>,
    /// The funnel as JSON (written atomically) [default: only the table on stdout].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The stages' outputs before the candidates, as `curate report` and `curate finalize` take
/// them (each with the excluded journal beside it).
#[derive(Debug, clap::Args)]
pub(super) struct StageFiles {
    /// `curate repos`' output (its excluded journal beside it is read too).
    #[arg(long)]
    repos: Option<PathBuf>,
    /// `curate harvest`'s output (and its excluded journal).
    #[arg(long)]
    threads: Option<PathBuf>,
    /// `curate filter`'s output (and its excluded journal).
    #[arg(long)]
    filtered: Option<PathBuf>,
    /// `curate classify`'s output (and its excluded journal).
    #[arg(long)]
    classified: Option<PathBuf>,
    /// `curate enhance`'s output: the pairs.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// `make-checklist`'s output on the pairs: the questions.
    #[arg(long)]
    questions: Option<PathBuf>,
}

impl StageFiles {
    /// Reads the files given and, as the `verify` stage, `candidates`.
    pub(super) fn read(&self, candidates: Option<&Path>) -> anyhow::Result<Stages> {
        let later = [
            ("filter", self.filtered.as_deref()),
            ("classify", self.classified.as_deref()),
            ("enhance", self.pairs.as_deref()),
            ("make-checklist", self.questions.as_deref()),
            ("verify", candidates),
        ];
        read_stages(self.repos.as_deref(), self.threads.as_deref(), &later)
    }

    fn none_given(&self) -> bool {
        [
            &self.repos,
            &self.threads,
            &self.filtered,
            &self.classified,
            &self.pairs,
            &self.questions,
        ]
        .iter()
        .all(|p| p.is_none())
    }
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.stages.none_given() && a.candidates.is_none() {
        bail!(
            "give at least one of --repos, --threads, --filtered, --classified, --pairs, \
             --questions, --candidates"
        );
    }
    let Stages {
        repos,
        harvested,
        outputs,
        excluded,
        bad,
        ..
    } = a.stages.read(a.candidates.as_deref())?;
    let funnel = Funnel::of(&repos, &harvested, &outputs, &excluded);
    crate::stdout::write(
        repoprobe_core::text::terminal_safe_lines(&funnel.render_text()).as_bytes(),
    )?;
    if let Some(out) = &a.out {
        let mut json = serde_json::to_string_pretty(&funnel)?;
        json.push('\n');
        write_atomically(out, json.as_bytes())
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(if bad > 0 {
        Exit::InvalidRecords
    } else {
        Exit::Ok
    })
}

/// What a funnel is counted from: the stages' records and the excluded journals beside them.
pub(super) struct Stages {
    pub repos: Vec<Repository>,
    pub harvested: Vec<Thread>,
    pub outputs: Vec<StageOutput>,
    pub excluded: Vec<Excluded>,
    /// Lines that are no record of their file's kind (each printed on stderr).
    pub bad: usize,
    /// Every file read, with what it was given as (`repos`, `repos.excluded`, …), in order.
    pub read: Vec<(String, PathBuf)>,
}

/// Reads `curate repos`' and `curate harvest`'s outputs and the later stages' (each a stage's
/// name and its file), with the excluded journal beside each.
fn read_stages(
    repos: Option<&Path>,
    threads: Option<&Path>,
    later: &[(&str, Option<&Path>)],
) -> anyhow::Result<Stages> {
    let mut s = Stages {
        repos: Vec::new(),
        harvested: Vec::new(),
        outputs: Vec::new(),
        excluded: Vec::new(),
        bad: 0,
        read: Vec::new(),
    };
    let read_excluded = |path: &Path, role: &str, s: &mut Stages| -> anyhow::Result<()> {
        let ex = excluded_path(path);
        if ex.exists() {
            let (records, b) = read_records::<Excluded>(&ex, "excluded")?;
            s.bad += b;
            s.excluded.extend(records.into_iter().map(|(_, e)| e));
            s.read.push((format!("{role}.excluded"), ex));
        }
        Ok(())
    };
    if let Some(p) = repos {
        let (r, b) = read_records::<Repository>(p, "repository")?;
        s.bad += b;
        s.repos = r.into_iter().map(|(_, r)| r).collect();
        s.read.push(("repos".into(), p.to_path_buf()));
        read_excluded(p, "repos", &mut s)?;
    }
    if let Some(p) = threads {
        let (t, b) = read_records::<Thread>(p, "thread")?;
        s.bad += b;
        s.harvested = t.into_iter().map(|(_, t)| t).collect();
        s.read.push(("threads".into(), p.to_path_buf()));
        read_excluded(p, "threads", &mut s)?;
    }
    for &(stage, path) in later {
        let Some(p) = path else { continue };
        let (records, b) = read_records::<serde_json::Value>(p, "record")?;
        let mut keyed = Vec::new();
        let mut unkeyed = 0;
        for (v, _) in records {
            match key_and_repo(&v) {
                Some(k) => keyed.push(k),
                None => unkeyed += 1,
            }
        }
        if unkeyed > 0 {
            eprintln!(
                "  {}: {unkeyed} record(s) without a key (`key` or `id`) and a repository: not counted",
                p.display()
            );
        }
        s.bad += b + unkeyed;
        s.read.push((stage.to_string(), p.to_path_buf()));
        read_excluded(p, stage, &mut s)?;
        s.outputs.push(StageOutput {
            stage: stage.to_string(),
            records: keyed,
        });
    }
    Ok(s)
}

/// A later stage's record's key and repository: threads write `key` and `repo` (a name),
/// questions `id` and `repo.name`.
fn key_and_repo(v: &serde_json::Value) -> Option<(String, String)> {
    let key = v.get("key").or_else(|| v.get("id"))?.as_str()?;
    let repo = match v.get("repo")? {
        serde_json::Value::String(s) => s.as_str(),
        r => r.get("name")?.as_str()?,
    };
    Some((key.to_string(), repo.to_string()))
}
