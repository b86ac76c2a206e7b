//! A run's files read back: its ATIF trajectory (named by the record's `agent.transcript`) and
//! the agent's raw output beside it (`<name>.raw.json`). Every trajectory read here is also
//! left in `target/tmp/atif/` (by `name`), where `scripts/test.sh` validates each against the
//! ATIF models as published (PyPI `atif`, `scripts/check-atif.py`) after `cargo test`.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the trajectories the tests wrote are left for the ATIF check.
pub fn atif_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("atif")
}

/// The trajectory of `rec` (an answer record whose paths are relative to `dir`), kept as
/// `target/tmp/atif/<name>.json`.
pub fn trajectory(dir: &Path, rec: &Value, name: &str) -> Value {
    let path = dir.join(
        rec["agent"]["transcript"]
            .as_str()
            .expect("agent.transcript"),
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::create_dir_all(atif_dir()).unwrap();
    std::fs::write(atif_dir().join(format!("{name}.json")), &text).unwrap();
    // The raw output too, apart (for a look at what the converter read).
    let raws = atif_dir().with_file_name("atif-raw");
    std::fs::create_dir_all(&raws).unwrap();
    let _ = std::fs::copy(raw_path(dir, rec), raws.join(format!("{name}.raw.json")));
    serde_json::from_str(&text).unwrap()
}

/// The path of the raw output beside the trajectory of `rec`.
pub fn raw_path(dir: &Path, rec: &Value) -> PathBuf {
    let t = rec["agent"]["transcript"]
        .as_str()
        .expect("agent.transcript");
    dir.join(t.strip_suffix(".json").unwrap_or(t).to_string() + ".raw.json")
}

/// The raw output beside the trajectory of `rec`.
pub fn raw(dir: &Path, rec: &Value) -> Value {
    let path = raw_path(dir, rec);
    serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The tool calls of a trajectory, in order: (function name, arguments, result text).
pub fn tool_calls(t: &Value) -> Vec<(String, Value, String)> {
    let mut out = Vec::new();
    for step in t["steps"].as_array().into_iter().flatten() {
        for c in step["tool_calls"].as_array().into_iter().flatten() {
            let id = &c["tool_call_id"];
            let result = step["observation"]["results"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|r| &r["source_call_id"] == id)
                .and_then(|r| r["content"].as_str())
                .unwrap_or("")
                .to_string();
            out.push((
                c["function_name"].as_str().unwrap_or("").to_string(),
                c["arguments"].clone(),
                result,
            ));
        }
    }
    out
}
