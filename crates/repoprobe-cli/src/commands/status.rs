//! `repoprobe status RUN...`: where a run (of any live command, split in shards or not) stands,
//! from its files alone: per shard the keys done, failed and left, the tokens and cost spent,
//! when it last wrote; the totals and an estimate of the time left. Exit 0 only when every shard
//! of every run named is complete (every key done, nothing foreign), 1 otherwise: a cluster
//! job's last step can check it.

use crate::exit::Exit;
use crate::run_files::manifest::Manifest;
use crate::run_files::state::{RunState, ShardState, manifests, read_run};
use crate::run_files::unix_now;
use repoprobe_core::text::terminal_safe;
use repoprobe_llm::Tokens;
use repoprobe_llm::price::Price;
use std::path::PathBuf;
use std::time::SystemTime;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A run's manifest (`*.manifest`), a directory of runs, or a shard's output file.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    let mut all_complete = true;
    for path in &a.runs {
        for m in manifests(path)? {
            let run = read_run(&m)?;
            let (text, complete) = render(&run, unix_now(), SystemTime::now());
            // The notes and manifest are files anyone could have written: no escape sequence
            // reaches the terminal.
            print!("{}", repoprobe_core::text::terminal_safe_lines(&text));
            all_complete &= complete;
        }
    }
    Ok(if all_complete {
        Exit::Ok
    } else {
        Exit::InvalidRecords
    })
}

/// The report of one run at `now` (seconds since 1970, and as a clock for the files' times),
/// and whether the run is complete.
fn render(run: &RunState, now_s: u64, now: SystemTime) -> (String, bool) {
    let m = &run.manifest;
    let model = m
        .settings
        .get("model")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    let price = Price::of(model, None, None);
    let mut out = format!(
        "{}: {} of {}, {} shard(s), {} key(s)\n",
        run.manifest_path.display(),
        m.command,
        terminal_safe(model),
        m.shards,
        m.keys_per_shard.iter().sum::<u64>()
    );
    out.push_str(&format!(
        "  {:<14} {:>7} {:>7} {:>7} {:>12} {:>10} {:>9}  {}\n",
        "shard", "done", "failed", "left", "tokens", "cost", "written", "state"
    ));
    let (mut done, mut failed, mut left, mut keys) = (0u64, 0u64, 0u64, 0u64);
    let mut tokens = Tokens::default();
    let mut incomplete = Vec::new();
    let mut finish = Vec::new();
    for s in &run.shards {
        let row = shard_row(s, m, price, now);
        out.push_str(&row.line);
        if let Some((why, to_finish)) = row.incomplete {
            incomplete.push(why);
            finish.extend(to_finish);
        }
        done += s.done;
        failed += s.failed;
        left += s.left();
        keys += s.keys;
        tokens += s.tokens;
    }
    let elapsed = now_s.saturating_sub(m.created_unix_s);
    let eta = eta(left, done, elapsed);
    out.push_str(&format!(
        "  {:<14} {:>7} {:>7} {:>7} {:>12} {:>10}  of {keys}; started {} ago; time left: {eta}\n",
        "total",
        done,
        failed,
        left,
        tokens.input_tokens + tokens.output_tokens,
        cost(price, tokens),
        duration(elapsed as f64),
    ));
    let complete = incomplete.is_empty();
    if complete {
        out.push_str("  complete: every key of every shard is done\n");
    } else {
        out.push_str(&format!("  incomplete: {}\n", incomplete.join(", ")));
        for f in &finish {
            out.push_str(f);
        }
    }
    (out, complete)
}

/// One shard's line of the table and, when it is not complete, why and how to finish it.
struct ShardRow {
    line: String,
    incomplete: Option<(String, Option<String>)>,
}

fn shard_row(s: &ShardState, m: &Manifest, price: Option<Price>, now: SystemTime) -> ShardRow {
    let name = s
        .shard
        .map_or_else(|| "(whole run)".to_string(), |x| x.label());
    let problems = s.problems(m);
    let complete = s.complete(m);
    let state = if complete {
        "complete".to_string()
    } else {
        problems.join("; ")
    };
    let incomplete = (!complete).then(|| {
        let to_finish = s.shard.map(|shard| {
            format!(
                "  to finish {name}: run the same `{}` again with --shard {shard}, or submit \
                 its task alone (Slurm: sbatch --array={} <the job script>, --shard auto \
                 reads the count from this manifest; Kubernetes: that index again)\n",
                m.command, shard.index
            )
        });
        (format!("{name} ({})", problems.join("; ")), to_finish)
    });
    let line = format!(
        "  {:<14} {:>7} {:>7} {:>7} {:>12} {:>10} {:>9}  {}\n",
        name,
        s.done,
        s.failed,
        s.left(),
        s.tokens.input_tokens + s.tokens.output_tokens,
        cost(price, s.tokens),
        s.last_write.map_or("never".into(), |t| ago(now, t)),
        state
    );
    ShardRow { line, incomplete }
}

/// The time left, from the pace so far.
fn eta(left: u64, done: u64, elapsed: u64) -> String {
    if left == 0 {
        "none left".to_string()
    } else if done == 0 || elapsed == 0 {
        "unknown (nothing done yet)".to_string()
    } else {
        let per_key = elapsed as f64 / done as f64;
        format!("about {}", duration(per_key * left as f64))
    }
}

fn cost(price: Option<Price>, t: Tokens) -> String {
    price.map_or("?".into(), |p| format!("${:.2}", p.cost(t)))
}

fn ago(now: SystemTime, t: SystemTime) -> String {
    let s = now.duration_since(t).map_or(0.0, |d| d.as_secs_f64());
    format!("{} ago", duration(s))
}

/// A duration in the largest unit that keeps it readable: `42 s`, `7 min`, `3.5 h`, `2.1 d`.
fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} d", s / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_files::ShardNote;
    use crate::run_files::manifest::Manifest;
    use crate::run_files::state::ShardState;
    use crate::shard::Shard;
    use std::time::Duration;

    #[test]
    fn the_status_of_a_run_reads_as_its_snapshot() {
        let created = 1_796_000_000u64;
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(created + 600);
        let manifest = Manifest {
            format: crate::run_files::manifest::FORMAT.into(),
            version: 1,
            run_id: "r1".into(),
            created_unix_s: created,
            command: crate::run_files::kind::RunKind::Judge,
            out: "judgments-{shard}.jsonl".into(),
            shards: 3,
            shard_in_file: None,
            keys_per_shard: vec![10, 12, 9],
            inputs: Default::default(),
            settings: [("model".to_string(), serde_json::json!("gpt-5"))].into(),
            scope: Default::default(),
        };
        let shard = |index, done, failed, note: Option<&str>, ago: Option<u64>| ShardState {
            shard: Some(Shard { index, count: 3 }),
            out: format!("runs/judgments-{index:04}-of-0003.jsonl").into(),
            keys: manifest.keys_per_shard[index as usize],
            done,
            failed,
            // A failed shard's failures: one of them could not run (the key rejected).
            could_not_run: if failed > 0 {
                [(repoprobe_core::model::failure::Cause::Auth, 1)].into()
            } else {
                Default::default()
            },
            duplicates: 0,
            elsewhere: 0,
            unreadable: 0,
            tokens: Tokens {
                input_tokens: 1000 * done,
                output_tokens: 100 * done,
            },
            last_write: ago.map(|s| now - Duration::from_secs(s)),
            note: note.map(|id| ShardNote {
                run_id: id.into(),
                shard: None,
                host: "node1".into(),
                pid: 1,
                started_unix_s: created,
            }),
            records: Vec::new(),
            excluded: Vec::new(),
        };
        let run = RunState {
            manifest_path: "runs/judgments.manifest".into(),
            shards: vec![
                shard(0, 10, 0, Some("r1"), Some(30)),
                shard(1, 9, 1, Some("r1"), Some(5)),
                shard(2, 0, 0, None, None),
            ],
            manifest,
        };
        let (text, complete) = render(&run, created + 600, now);
        assert!(!complete);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(420.0), "7 min");
        assert_eq!(duration(3.5 * 3600.0), "3.5 h");
        assert_eq!(duration(3.0 * 86400.0), "3.0 d");
    }
}
