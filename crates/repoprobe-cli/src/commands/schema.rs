//! `repoprobe schema --out-dir DIR`: the JSON Schemas of every record kind, generated from the
//! Rust types so they cannot drift from what the loader accepts.

use crate::exit::Exit;
use crate::input::write_atomically;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to write `<kind>.schema.json` files into.
    #[arg(long, default_value = "public-data/schema")]
    out_dir: PathBuf,
}

pub fn run(a: Args) -> anyhow::Result<Exit> {
    crate::input::create_dir_all(&a.out_dir)?;
    for (name, text) in repoprobe_core::schema::all() {
        let path = a.out_dir.join(format!("{name}.schema.json"));
        write_atomically(&path, text.as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(Exit::Ok)
}
