//! `repoprobe score FILE...`: the paper's tables from result files, in the format asked for.

use crate::exit::Exit;
use crate::input::{load_paths, print_issues};
use anyhow::Context;
use repoprobe_core::metrics::cluster::{CiMethod, Cluster};
use repoprobe_core::metrics::panel::{Panel, PanelRule};
use repoprobe_core::report;
use repoprobe_core::{LoadOptions, Loaded, MissingPolicy, ScoreOptions, ScoreReport, Stratum};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct Args {
    /// Files (JSON, JSONL, bundles) or directories of them; the benchmark must be among them.
    #[arg(required = true)]
    pub(crate) files: Vec<PathBuf>,
    /// How to print the report: table (the terminal), json (every number, unrounded), csv,
    /// markdown or latex.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// How a question without a valid judgment counts: as 0, or left out.
    #[arg(long, value_enum, default_value = "zero")]
    missing: Missing,
    /// The judge for strata, reliability and comparisons (default: the one with most judgments).
    #[arg(long)]
    judge: Option<String>,
    /// Stratify by this axis (table, csv, markdown, latex); JSON then holds only this axis.
    #[arg(long, value_enum)]
    by: Option<By>,
    /// What the standard errors and intervals treat as independent: the questions of one
    /// repository together (the benchmark's design), each question, or every cell alone
    /// (docs/metrics.md#clustered-uncertainty).
    #[arg(long, value_enum, default_value = "repo")]
    cluster: ClusterFlag,
    /// How the 95% intervals are made: mean ± 1.96 × the clustered SE, or a seeded
    /// bootstrap that resamples whole clusters (--bootstrap resamples, --bootstrap-seed).
    #[arg(long, value_enum, default_value = "clt")]
    ci: CiFlag,
    /// Bootstrap resamples under --ci bootstrap (0 turns the intervals off).
    #[arg(long, default_value_t = 1000)]
    bootstrap: u32,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0)]
    bootstrap_seed: u64,
    /// Paired comparison of two models on the same questions.
    #[arg(long, num_args = 2, value_names = ["MODEL_A", "MODEL_B"])]
    compare: Option<Vec<String>>,
    /// Include per-item attainment and judge agreement (JSON).
    #[arg(long)]
    items: bool,
    /// Leave this question (by id) and every record about it out of every number; repeatable.
    /// The report's policy names the questions dropped.
    #[arg(long = "drop-question", value_name = "ID")]
    drop_questions: Vec<String>,
    /// Weigh checklist items otherwise: QUESTION/ITEM=W, with `*` for every question and
    /// `@knowledge` / `@clarity` for every item of a kind (e.g. `*/@clarity=0`, or
    /// `*/@knowledge=1` for knowledge items that count alike); repeatable. A question's own rule
    /// beats `*`, an item id beats a kind. Items keep their judged attainment (score / own
    /// weight); the report's policy names the rules.
    #[arg(long = "weight", value_name = "RULE", value_parser = repoprobe_core::WeightRule::parse)]
    weights: Vec<repoprobe_core::WeightRule>,
    /// Add the evidence of the runs per model (mean cost, tokens, turns and seconds per answer,
    /// share of runs that edited the repository), from the answer records: one more table, or
    /// an `evidence` array in JSON; the site's leaderboard shows the same table. Not with CSV.
    #[arg(long)]
    evidence: bool,
    /// Print this one table instead of the report's tables (table, csv, markdown, latex):
    /// `retrieval`, how much of the questions' evidence each model's runs read and how their
    /// verdicts went with it. JSON always holds it, as the `retrieval` array.
    #[arg(long, value_enum, conflicts_with_all = ["by", "evidence"])]
    table: Option<OneTable>,
    /// A contamination window: score only the questions whose discussion was created on or
    /// after DATE (YYYY-MM-DD; `curation.source.created_at`, docs/review.md). Questions without
    /// a creation date are left out; every table says how many questions are in force.
    #[arg(long, value_name = "DATE")]
    created_after: Option<String>,
    /// A panel of judges scored as one more judge (and the judge in force unless --judge names
    /// another): one `--panel JUDGE` per member. It judges an answer when more than half its members did;
    /// its item score is --panel-rule over the members' (docs/metrics.md#a-panel-of-judges).
    #[arg(long, value_name = "JUDGE")]
    panel: Vec<String>,
    /// How the panel's members' scores of an item make the panel's: median or mean (snapped
    /// to the rubric's nearest allowed score, ties down), or majority (ties down).
    #[arg(long, value_enum, default_value = "median", requires = "panel")]
    panel_rule: PanelRuleFlag,
}

#[derive(Debug, Default, Clone, Copy, clap::ValueEnum)]
enum PanelRuleFlag {
    #[default]
    Median,
    Mean,
    Majority,
}

impl From<PanelRuleFlag> for PanelRule {
    fn from(r: PanelRuleFlag) -> Self {
        match r {
            PanelRuleFlag::Median => PanelRule::Median,
            PanelRuleFlag::Mean => PanelRule::Mean,
            PanelRuleFlag::Majority => PanelRule::Majority,
        }
    }
}

/// `--cluster`, of `score` and `judge-agreement` alike.
#[derive(Debug, Default, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ClusterFlag {
    #[default]
    Repo,
    Question,
    None,
}

impl From<ClusterFlag> for Cluster {
    fn from(c: ClusterFlag) -> Self {
        match c {
            ClusterFlag::Repo => Cluster::Repo,
            ClusterFlag::Question => Cluster::Question,
            ClusterFlag::None => Cluster::None,
        }
    }
}

#[derive(Debug, Default, Clone, Copy, clap::ValueEnum)]
enum CiFlag {
    #[default]
    Clt,
    Bootstrap,
}

impl From<CiFlag> for CiMethod {
    fn from(c: CiFlag) -> Self {
        match c {
            CiFlag::Clt => CiMethod::Clt,
            CiFlag::Bootstrap => CiMethod::Bootstrap,
        }
    }
}

/// The tables `--table` prints alone (those the report has beyond the paper's, and not per axis).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum OneTable {
    Retrieval,
}

#[derive(Debug, Default, Clone, Copy, clap::ValueEnum)]
enum Format {
    #[default]
    Table,
    Json,
    Csv,
    Markdown,
    Latex,
}

#[derive(Debug, Default, Clone, Copy, clap::ValueEnum)]
enum Missing {
    #[default]
    Zero,
    Exclude,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum By {
    Category,
    Theme,
    Language,
}

impl From<By> for Stratum {
    fn from(b: By) -> Self {
        match b {
            By::Category => Stratum::Category,
            By::Theme => Stratum::Theme,
            By::Language => Stratum::Language,
        }
    }
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    // Scores never read rationales or answers: skip copying them.
    let loaded = load_paths(
        &a.files,
        LoadOptions {
            skip_text: true,
            ..Default::default()
        },
    );
    print_issues(&loaded);
    let dataset = &loaded.dataset;
    if loaded.dataset.questions.is_empty() {
        // Reported tables alone are enough for their audit (`score public-data/reported`).
        if loaded.dataset.reported.is_empty() {
            anyhow::bail!(
                "no valid benchmark questions were loaded: give the benchmark file (or a bundle with one)"
            );
        }
        eprintln!(
            "note: no benchmark questions were loaded: only the audit of the reported tables is computed"
        );
    }
    let by = a.by.map(Stratum::from);
    let opts = options(&a, by);
    if a.evidence && matches!(a.format, Format::Csv) {
        anyhow::bail!(
            "--evidence adds a table, which one CSV cannot hold: use --format table, markdown, latex or json"
        );
    }
    let r = match repoprobe_core::score(dataset, &loaded.issues, &opts) {
        Err(repoprobe_core::metrics::ScoreError::Window(why)) => {
            anyhow::bail!("--created-after: {why}")
        }
        r => r.context("cannot score")?,
    };
    if a.table.is_some() && r.retrieval.is_empty() && !matches!(a.format, Format::Json) {
        eprintln!(
            "note: no question has evidence (a checklist item's `evidence`, docs/format.md#question): \
             retrieval is not measured"
        );
    }
    crate::stdout::write(rendered(&r, &a, by)?.as_bytes())?;
    notes(&r, &loaded, a.format);
    // The process ends here: handing the memory back piece by piece would only cost time.
    std::mem::forget(loaded);
    Ok(Exit::Ok)
}

/// The core's options from the flags.
fn options(a: &Args, by: Option<Stratum>) -> ScoreOptions {
    ScoreOptions {
        missing: match a.missing {
            Missing::Zero => MissingPolicy::Zero,
            Missing::Exclude => MissingPolicy::Exclude,
        },
        judge: a.judge.clone(),
        cluster: a.cluster.into(),
        ci: a.ci.into(),
        bootstrap: a.bootstrap,
        seed: a.bootstrap_seed,
        strata: by.map_or_else(|| Stratum::ALL.to_vec(), |b| vec![b]),
        compare: a.compare.as_ref().map(|v| (v[0].clone(), v[1].clone())),
        items: a.items,
        drop_questions: a.drop_questions.iter().cloned().collect(),
        weights: a.weights.clone(),
        created_after: a.created_after.clone(),
        evidence: a.evidence,
        histograms: false,
        panel: (!a.panel.is_empty()).then(|| Panel {
            members: a.panel.clone(),
            rule: a.panel_rule.into(),
        }),
    }
}

/// The report in `--format`: the report's tables, then (with --evidence) the evidence table
/// when any answer carries any; with --table, that table alone.
fn rendered(r: &ScoreReport, a: &Args, by: Option<Stratum>) -> anyhow::Result<String> {
    let tables = || {
        if let Some(OneTable::Retrieval) = a.table {
            return report::retrieval_table(r).into_iter().collect();
        }
        // Each table says the contamination window in force (the core's `in_window`).
        let mut t = report::tables(r, by);
        t.extend(report::report_evidence_table(r));
        t.extend(r.panel.as_ref().map(report::panel_table));
        t
    };
    let out = match a.format {
        Format::Json => serde_json::to_string_pretty(r)? + "\n",
        Format::Csv => match (a.table, by) {
            (Some(OneTable::Retrieval), _) => report::retrieval_csv(r),
            (None, Some(b)) => report::strata_csv(r, b),
            (None, None) => report::models_csv(r),
        },
        Format::Table => {
            let ansi = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            join(tables().iter().map(|t| report::render_text(t, ansi)))
        }
        Format::Markdown => join(tables().iter().map(report::render_markdown)),
        Format::Latex => join(tables().iter().map(report::render_latex)),
    };
    Ok(out)
}

/// The notes on stderr after the report: the window (a CSV has no place for it), models that
/// never answered, the input's issues in the site's sentences.
fn notes(r: &ScoreReport, loaded: &Loaded, format: Format) {
    if let (Some(w), Format::Csv) = (&r.created_after, format) {
        // A CSV has no place for a sentence.
        eprintln!("note: {}", w.sentence());
    }
    for m in &r.models {
        if let Some(note) = m.never_answered_note(r.policy.missing) {
            eprintln!(
                "note: model {} (judge {}): {note} — no answer and no judgment at all (not failed \
                 runs); `--missing exclude` leaves them out",
                repoprobe_core::text::terminal_safe(&format!("{:?}", m.model)),
                repoprobe_core::text::terminal_safe(&format!("{:?}", m.judge)),
            );
        }
    }
    if !loaded.issues.is_empty() {
        eprintln!(
            "{} issue(s) in the input (listed above); scores use the valid records only:",
            loaded.issues.len()
        );
        // The sentences the site shows under its "Numbers from …" line, from the same core.
        for line in repoprobe_core::issue::summary_lines(&loaded.issues) {
            eprintln!("  {}", repoprobe_core::text::terminal_safe_lines(&line));
        }
    }
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join("\n")
}
