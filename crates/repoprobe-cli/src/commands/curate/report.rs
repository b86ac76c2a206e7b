//! `repoprobe curate report`: the funnel so far (the core's `curate::Funnel`), from the stages'
//! outputs and the excluded journals beside them: repositories seen and kept, threads
//! harvested and after the filter, what was dropped by rule, per repository. The table goes to
//! stdout, the JSON to `--out`.

use super::{excluded_path, read_records};
use crate::exit::Exit;
use crate::input::write_atomically;
use anyhow::{Context, bail};
use repoprobe_core::curate::{Excluded, Funnel, Repository, Thread};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// `curate repos`' output (its excluded journal beside it is read too).
    #[arg(long)]
    repos: Option<PathBuf>,
    /// `curate harvest`'s output (and its excluded journal).
    #[arg(long)]
    threads: Option<PathBuf>,
    /// `curate filter`'s output (and its excluded journal).
    #[arg(long)]
    filtered: Option<PathBuf>,
    /// The funnel as JSON (written atomically) [default: only the table on stdout].
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.repos.is_none() && a.threads.is_none() && a.filtered.is_none() {
        bail!("give at least one of --repos, --threads, --filtered");
    }
    let mut bad = 0;
    let mut excluded = Vec::new();
    let mut read_excluded = |path: &Path, bad: &mut usize| -> anyhow::Result<()> {
        let ex = excluded_path(path);
        if ex.exists() {
            let (records, b) = read_records::<Excluded>(&ex, "excluded")?;
            *bad += b;
            excluded.extend(records.into_iter().map(|(_, e)| e));
        }
        Ok(())
    };
    let mut repos = Vec::new();
    if let Some(p) = &a.repos {
        let (r, b) = read_records::<Repository>(p, "repository")?;
        bad += b;
        repos = r.into_iter().map(|(_, r)| r).collect();
        read_excluded(p, &mut bad)?;
    }
    let mut threads =
        |p: &Option<PathBuf>, bad: &mut usize| -> anyhow::Result<Option<Vec<Thread>>> {
            let Some(p) = p else { return Ok(None) };
            let (t, b) = read_records::<Thread>(p, "thread")?;
            *bad += b;
            read_excluded(p, bad)?;
            Ok(Some(t.into_iter().map(|(_, t)| t).collect()))
        };
    let harvested = threads(&a.threads, &mut bad)?.unwrap_or_default();
    let filtered = threads(&a.filtered, &mut bad)?;
    let funnel = Funnel::of(&repos, &harvested, filtered.as_deref(), &excluded);
    crate::stdout::write(
        repoprobe_core::report::terminal_safe_lines(&funnel.render_text()).as_bytes(),
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
