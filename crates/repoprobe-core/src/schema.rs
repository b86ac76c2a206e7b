//! JSON Schemas of every record kind (docs/format.md), generated from the types in [`crate::model`].
//! Committed under `public-data/schema/`; a test fails when they are out of date.

use crate::model::*;
use schemars::{JsonSchema, generate::SchemaSettings};

fn one<T: JsonSchema>(title: &str, description: &str) -> String {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    schema.insert("title".into(), title.into());
    schema.insert("description".into(), description.into());
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

/// (file stem, schema text) for every record kind, in a fixed order.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        (
            "question",
            one::<Question>(
                "RepoProbe benchmark question",
                "docs/format.md#question. Checklist rules (1–4 knowledge items summing to 9, one clarity item of weight 1, rubric scores distinct and in [0, weight] including 0 and the weight) are enforced by `repoprobe validate`. Unknown fields are allowed.",
            ),
        ),
        (
            "answer",
            one::<Answer>(
                "RepoProbe answer",
                "docs/format.md#answer. An answer with `error` set is a failed run.",
            ),
        ),
        (
            "judgment",
            one::<Judgment>(
                "RepoProbe checklist judgment",
                "docs/format.md#checklist-judgment. One entry per checklist item, scores from the item's rubric.",
            ),
        ),
        (
            "scalar_judgment",
            one::<ScalarJudgment>(
                "RepoProbe scalar judgment",
                "docs/format.md#scalar-judgment. Score rate = sum / (dimensions × max_per_dimension).",
            ),
        ),
        (
            "failure_label",
            one::<FailureLabel>(
                "RepoProbe failure-mode label",
                "docs/format.md#failure-mode-label.",
            ),
        ),
        (
            "reported_value",
            one::<ReportedValue>(
                "A value of a published table",
                "docs/format.md#reported-values, one cell of a paper's table, tagged with its table.",
            ),
        ),
        (
            "review",
            one::<Review>(
                "RepoProbe review of a candidate question",
                "docs/format.md#review. One record per (question_id, reviewer, role); `reviewed_at` is RFC 3339 with a time zone; the first record of a key is kept.",
            ),
        ),
        (
            "trajectory",
            one::<trajectory::Trajectory>(
                "A run's trajectory (ATIF)",
                "docs/format.md#trajectory. The Agent Trajectory Interchange Format (Harbor RFC 0001) as `repoprobe answer` writes it, `schema_version` \"ATIF-v1.8\"; our own fields under `extra`. Written with the RFC's fields only; read leniently (unknown fields ignored).",
            ),
        ),
        (
            "trajectories_index",
            one::<crate::trajectories::Index>(
                "Index of a trajectories file",
                "docs/format.md#trajectories-file. `format` is \"repoprobe-trajectories-index\", `version` 1; `bytes` the indexed file's size; each entry a run's key and its line's byte range.",
            ),
        ),
        (
            "bundle",
            one::<ResultsBundle>(
                "RepoProbe results bundle",
                "docs/format.md#results-bundle. `format` is \"repoprobe-results\", `version` 1; every array optional.",
            ),
        ),
    ]
}
