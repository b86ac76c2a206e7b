//! The files of an agent's run, for every command that runs one (`answer`, `curate verify`):
//! its trajectory (ATIF) and its raw output written beside the records, scrubbed of every
//! secret of ours, and the records themselves scrubbed the same way. The run itself is the
//! agent crate's one call (`repoprobe_agent::run`).

use repoprobe_agent::run::Run;
use repoprobe_core::model::failure::{Cause, CouldNotRun};
use repoprobe_llm::key::scrub_env;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Writes `run`'s trajectory to `<dir>/<name>.json` and its raw output to `<dir>/<name>.raw.json`;
/// returns the trajectory's path. A file that cannot be written is the machine's failure.
pub fn write_files(dir: &Path, name: &str, run: &Run) -> Result<PathBuf, CouldNotRun> {
    let trajectory = dir.join(format!("{name}.json"));
    let raw = dir.join(format!("{name}.raw.json"));
    serde_json::to_value(&run.trajectory)
        .map_err(|e| e.to_string())
        .and_then(|t| write_json(&trajectory, &t))
        .and_then(|()| write_json(&raw, &run.raw))
        .map_err(|e| CouldNotRun::new(Cause::Environment, e))?;
    Ok(trajectory)
}

/// Writes a JSON file, scrubbed of every secret of our environment.
fn write_json(path: &Path, v: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    crate::input::write_atomically(path, scrub_env(&text).as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `v` with every secret of our environment replaced in its strings (a secret holds no quote
/// or backslash once found in JSON text, so the replacement keeps the JSON whole).
pub fn scrubbed(v: Value) -> Value {
    scrubbed_with(v, scrub_env)
}

/// [`scrubbed`] with the scrubber given (the tests' own secrets).
fn scrubbed_with(v: Value, scrub: impl Fn(&str) -> String) -> Value {
    let text = v.to_string();
    let clean = scrub(&text);
    if clean == text {
        return v;
    }
    serde_json::from_str(&clean).unwrap_or_else(|_| json!({"error": "[redacted record]"}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_scrubbed_of_secrets_stays_json() {
        let secrets = ["sk-test-0123456789".to_string()];
        let scrub = |t: &str| repoprobe_llm::key::scrub_all(&secrets, t);
        let v = json!({"answer": "my key is sk-test-0123456789", "n": 1,
            "agent": {"meta": {"echo": ["x sk-test-0123456789 y"]}}});
        assert_eq!(
            scrubbed_with(v, scrub),
            json!({"answer": "my key is [redacted]", "n": 1,
                "agent": {"meta": {"echo": ["x [redacted] y"]}}})
        );
        let clean = json!({"answer": "ok", "n": 1});
        assert_eq!(scrubbed_with(clean.clone(), scrub), clean);
    }
}
