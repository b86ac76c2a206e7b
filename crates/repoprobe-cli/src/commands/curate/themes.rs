//! `repoprobe curate themes`: the model gives each kept repository one of the paper's eight
//! themes (Table 4; the core's `protocol::curate_theme`), so a benchmark made with `curate` can be
//! stratified by theme. A repository whose theme the user set (`curate repos --theme`) keeps it
//! and costs no call. Writes the repository records again, `theme` and `theme_by` filled: harvest
//! reads them as it reads `curate repos`' output. On the run loop of every live call
//! (`crate::live`): `--concurrency`, `--rpm`/`--tpm`, re-asks, the failures journal, `--shard`,
//! SIGTERM → exit 75, `--batch`, `--estimate`.

use crate::exit::Exit;
use crate::live::{LiveArgs, Provenance, Task};
use crate::run_files::keys::RepoKey;
use crate::run_files::manifest::RunSpec;
use anyhow::bail;
use repoprobe_curate::protocol::theme::{PROMPT_VERSION, RepoToTheme, Themed};
use repoprobe_curate::{Repository, StageVerdict};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The kept repositories (`curate repos`' output).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    #[command(flatten)]
    live: LiveArgs,
}

struct ThemeJob {
    key: RepoKey,
    repo: Repository,
}

impl Task for ThemeJob {
    type Key = RepoKey;
    type Value = (Repository, Themed);
    type Protocol<'a> = RepoToTheme<'a>;
    fn key(&self) -> &RepoKey {
        &self.key
    }
    fn protocol(&self) -> RepoToTheme<'_> {
        RepoToTheme { repo: &self.repo }
    }
    fn value(&self, t: Themed) -> (Repository, Themed) {
        (self.repo.clone(), t)
    }
    /// A theme and a sentence or two.
    fn expected_output_tokens(&self) -> u64 {
        120
    }
}

/// A line of `--out`: the repository, its theme, then the call's provenance (none when the user
/// set the theme).
#[derive(Serialize)]
struct ThemedRecord<'a> {
    #[serde(flatten)]
    repo: &'a Repository,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    provenance: Option<Provenance<'a>>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.input == a.live.run.out {
        bail!("the input FILE and --out are the same file");
    }
    let settings = if a.live.estimate {
        None
    } else {
        Some(a.live.settings()?)
    };
    let (repos, bad) = super::read_records::<Repository>(&a.input, "repository")?;
    if repos.is_empty() && bad == 0 {
        bail!("no repository in {}", a.input.display());
    }
    let Some(settings) = settings else {
        let done = a.live.done_keys(RepoKey::of)?;
        let (jobs, given, already) = jobs(repos, |k| done.contains(k));
        a.live
            .print_estimate("curate themes", &jobs, already + given.len())?;
        return Ok(Exit::Ok);
    };
    let model = a.live.model().to_string();
    let mut live = a.live.start(
        settings,
        RepoKey::of,
        "repository",
        PROMPT_VERSION,
        RunSpec::new(crate::run_files::kind::RunKind::CurateThemes).input("in", &a.input),
    )?;
    let (jobs, given, already_done) = jobs(repos, |k| live.is_done(k));
    for r in &given {
        live.out.append(&ThemedRecord {
            repo: r,
            provenance: None,
        })?;
        live.out.done.insert(RepoKey {
            repo: r.repo.clone(),
        });
    }
    let tally = live.run(jobs, |out, key, (mut repo, t), provenance| {
        repo.theme = Some(t.theme.to_string());
        repo.theme_by = Some(StageVerdict {
            prompt_version: PROMPT_VERSION.to_string(),
            model: model.clone(),
            passed: true,
            rationale: t.rationale,
        });
        out.append(&ThemedRecord {
            repo: &repo,
            provenance: Some(provenance),
        })?;
        out.done.insert(key.clone());
        Ok(())
    })?;
    if !given.is_empty() {
        eprintln!(
            "curate themes: {} repositor(ies) with the theme given to `curate repos --theme` kept it",
            given.len()
        );
    }
    Ok(live.finish(
        "curate themes",
        "themed",
        already_done,
        &[],
        &tally,
        bad > 0,
    ))
}

/// The jobs of the repositories not `done` and without a theme, those whose theme the user gave
/// (written as they are), and how many were done (each key once).
fn jobs(
    repos: Vec<(serde_json::Value, Repository)>,
    done: impl Fn(&RepoKey) -> bool,
) -> (Vec<ThemeJob>, Vec<Repository>, usize) {
    let (mut jobs, mut given, mut already) = (Vec::new(), Vec::new(), 0);
    let mut seen = std::collections::HashSet::new();
    for (_, repo) in repos {
        let key = RepoKey {
            repo: repo.repo.clone(),
        };
        if !seen.insert(key.clone()) {
            continue;
        }
        if done(&key) {
            already += 1;
        } else if repo.theme.is_some() {
            given.push(repo);
        } else {
            jobs.push(ThemeJob { key, repo });
        }
    }
    (jobs, given, already)
}
