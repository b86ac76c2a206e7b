//! The audit of reported tables (docs/metrics.md): identities that published numbers must satisfy within
//! rounding. Every paper table prints one decimal, so each printed value is within 0.05 of the
//! truth, and a sum or weighted sum of printed values may drift by the sum of those bounds.
//!
//! Conventions of reported values (see `public-data/reported/`): Table 3 rows are models with
//! columns overall/knowledge/clarity/perfect; Table 5 groups scalar/checklist with columns
//! mean/std/range; Table 7 rows are failure modes and columns are the table's model columns,
//! with `Average` the mean of the others.

use crate::model::ReportedValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Half a unit of the last printed digit.
const HALF_UNIT: f64 = 0.05;
/// Room for binary floating point in comparisons of decimal values.
const EPS: f64 = 1e-9;

/// One identity that a reported table breaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub table: String,
    pub group: String,
    pub row: String,
    pub column: String,
    pub reported: f64,
    /// What the identity implies.
    pub expected: f64,
    pub tolerance: f64,
    pub message: String,
}

/// Checks every identity the reported values allow.
pub fn audit(values: &[ReportedValue]) -> Vec<Finding> {
    let mut out = percentages(values);
    out.extend(row_identities(values));
    out.extend(table7_column_sums(values));
    out.extend(table7_averages(values));
    out
}

/// Every value is a percentage, 0–100.
fn percentages(values: &[ReportedValue]) -> Vec<Finding> {
    let mut out = Vec::new();
    for v in values {
        if !(0.0..=100.0 + EPS).contains(&v.value) {
            out.push(finding(
                v.table.as_str(),
                &v.group,
                &v.row,
                &v.column,
                v.value,
                v.value.clamp(0.0, 100.0),
                0.0,
                "a percentage outside 0–100".to_string(),
            ));
        }
    }
    out
}

/// The identities within a row: Table 3's Overall = 0.9 × Knowledge + 0.1 × Clarity, Table 5's
/// std ≤ range / √2.
fn row_identities(values: &[ReportedValue]) -> Vec<Finding> {
    // (table, group, row) -> column -> value, sorted so findings come out in a stable order.
    let mut rows: BTreeMap<(&str, &str, &str), BTreeMap<&str, f64>> = BTreeMap::new();
    for v in values {
        rows.entry((&v.table, &v.group, &v.row))
            .or_default()
            .insert(&v.column, v.value);
    }
    let mut out = Vec::new();
    for ((table, group, row), cols) in &rows {
        match *table {
            "3" => {
                if let (Some(&o), Some(&k), Some(&c)) = (
                    cols.get("overall"),
                    cols.get("knowledge"),
                    cols.get("clarity"),
                ) {
                    let expected = 0.9 * k + 0.1 * c;
                    let tol = HALF_UNIT * (1.0 + 0.9 + 0.1);
                    if (o - expected).abs() > tol + EPS {
                        out.push(finding(table, group, row, "overall", o, expected, tol, format!(
                            "Overall should equal 0.9 × Knowledge + 0.1 × Clarity = 0.9 × {k} + 0.1 × {c} = {expected:.2}; \
                             the printed {o} is off by {:.2}, more than rounding ({tol:.2}) allows", (o - expected).abs())));
                    }
                }
            }
            "5" => {
                if let (Some(&s), Some(&r)) = (cols.get("std"), cols.get("range")) {
                    // For any n ≥ 2, a sample std is at most range / √2.
                    let bound = (r + HALF_UNIT) / std::f64::consts::SQRT_2;
                    if s - HALF_UNIT > bound + EPS {
                        out.push(finding(table, group, row, "std", s, bound, HALF_UNIT, format!(
                            "a sample standard deviation of {s} cannot come with a range of {r} (at most range/√2 = {bound:.2})")));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Table 7: each column sums to 100.
fn table7_column_sums(values: &[ReportedValue]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut columns: BTreeMap<(&str, &str), Vec<(&str, f64)>> = BTreeMap::new();
    for v in values.iter().filter(|v| v.table == "7") {
        columns
            .entry((&v.group, &v.column))
            .or_default()
            .push((&v.row, v.value));
    }
    for ((group, column), cells) in &columns {
        let sum: f64 = cells.iter().map(|(_, v)| v).sum();
        let tol = HALF_UNIT * cells.len() as f64;
        if (sum - 100.0).abs() > tol + EPS {
            out.push(finding("7", group, "(sum)", column, round2(sum), 100.0, tol, format!(
                "the shares of column {column:?} sum to {:.1}, not 100 (rounding of {} values allows ±{tol:.2})",
                sum, cells.len())));
        }
    }
    out
}

/// Table 7: `Average` is the mean of the other columns of its row.
fn table7_averages(values: &[ReportedValue]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut by_row: BTreeMap<(&str, &str), BTreeMap<&str, f64>> = BTreeMap::new();
    for v in values.iter().filter(|v| v.table == "7") {
        by_row
            .entry((&v.group, &v.row))
            .or_default()
            .insert(&v.column, v.value);
    }
    for ((group, row), cols) in &by_row {
        let Some(&avg) = cols.get("Average") else {
            continue;
        };
        let others: Vec<f64> = cols
            .iter()
            .filter(|(c, _)| **c != "Average")
            .map(|(_, v)| *v)
            .collect();
        if let Some(mean) = super::stats::mean(&others) {
            let tol = 2.0 * HALF_UNIT;
            if (avg - mean).abs() > tol + EPS {
                out.push(finding(
                    "7",
                    group,
                    row,
                    "Average",
                    avg,
                    mean,
                    tol,
                    format!("the average {avg} should be the mean of the other columns, {mean:.2}"),
                ));
            }
        }
    }
    out
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[allow(clippy::too_many_arguments)]
fn finding(
    table: &str,
    group: &str,
    row: &str,
    column: &str,
    reported: f64,
    expected: f64,
    tolerance: f64,
    message: String,
) -> Finding {
    Finding {
        table: table.to_string(),
        group: group.to_string(),
        row: row.to_string(),
        column: column.to_string(),
        reported,
        expected,
        tolerance,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(table: &str, row: &str, column: &str, value: f64) -> ReportedValue {
        ReportedValue {
            table: table.into(),
            group: String::new(),
            row: row.into(),
            column: column.into(),
            value,
        }
    }

    #[test]
    fn table3_identity_within_rounding_passes_and_beyond_is_flagged() {
        // GPT-5.2: 0.9 × 60.3 + 0.1 × 84.7 = 62.74 → 62.7 fine.
        let ok = [
            v("3", "GPT-5.2", "overall", 62.7),
            v("3", "GPT-5.2", "knowledge", 60.3),
            v("3", "GPT-5.2", "clarity", 84.7),
        ];
        assert!(audit(&ok).is_empty());
        // Qwen3-Max: 0.9 × 26.1 + 0.1 × 39.3 = 27.42 vs printed 27.3: off by 0.12 > 0.10.
        let bad = [
            v("3", "Qwen3-Max", "overall", 27.3),
            v("3", "Qwen3-Max", "knowledge", 26.1),
            v("3", "Qwen3-Max", "clarity", 39.3),
        ];
        let f = audit(&bad);
        assert_eq!(f.len(), 1);
        assert!((f[0].expected - 27.42).abs() < 1e-9);
        assert!(f[0].message.contains("off by 0.12"), "{}", f[0].message);
    }

    #[test]
    fn table7_column_that_does_not_sum_to_100_is_flagged() {
        let col = [10.4, 38.5, 29.2, 17.7, 3.1];
        let modes = [
            "edit_bias",
            "shallow_explanation",
            "misinterpretation",
            "context_miss",
            "hallucination",
        ];
        let vals: Vec<ReportedValue> = modes
            .iter()
            .zip(col)
            .map(|(m, x)| v("7", m, "GPT-5.2", x))
            .collect();
        let f = audit(&vals);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.contains("98.9"), "{}", f[0].message);
    }
}
