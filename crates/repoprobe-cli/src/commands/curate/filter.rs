//! `repoprobe curate filter`: threads whose question or accepted answer relies on images are
//! dropped (the core's `curate::images`: Markdown images, `<img>`, GitHub attachments; code is
//! text), each with the reason in the excluded journal; the others are written as they were
//! read, every field kept. Deterministic, no network; a rerun skips what is written.

use super::{exclude, open_journals, read_records};
use crate::exit::Exit;
use crate::output::text;
use anyhow::bail;
use repoprobe_curate::images::relies_on_images;
use repoprobe_curate::{Rule, Stage, Thread};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The harvested threads (`curate harvest`'s output).
    #[arg(value_name = "FILE")]
    input: PathBuf,
    /// The threads kept (JSONL, appended to); dropped ones go to <out>.excluded.ndjson.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    if a.input == a.out {
        bail!("the input FILE and --out are the same file");
    }
    let (threads, bad) = read_records::<Thread>(&a.input, "thread")?;
    let (mut out, mut excluded) = open_journals(
        &a.out,
        |v| {
            v.get("answer")?;
            text(v, "key")
        },
        "thread",
    )?;
    let (mut kept, mut dropped, mut before) = (0, 0, 0);
    for (raw, t) in &threads {
        if out.done.contains(&t.key) || excluded.done.contains(&t.key) {
            before += 1;
            continue;
        }
        match relies_on_images(t) {
            Some(reason) => {
                exclude(
                    &mut excluded,
                    Stage::Filter,
                    &t.key,
                    &t.repo,
                    Rule::Images,
                    format!("{}: {reason}", t.key),
                )?;
                dropped += 1;
            }
            None => {
                out.append(raw)?;
                out.done.insert(t.key.clone());
                kept += 1;
            }
        }
    }
    eprintln!(
        "curate filter: {kept} kept, {dropped} dropped for images ({}){}",
        excluded.path.display(),
        if before > 0 {
            format!(", {before} done before")
        } else {
            String::new()
        }
    );
    if bad > 0 {
        eprintln!(
            "{bad} line(s) of {} left out (see above)",
            a.input.display()
        );
        return Ok(Exit::InvalidRecords);
    }
    Ok(Exit::Ok)
}
