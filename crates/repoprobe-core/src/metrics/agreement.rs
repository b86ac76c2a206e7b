//! How far two judges agree on the same checklist items (docs/metrics.md#agreement-between-judges):
//! a judge against people (`human:NAME`), against another model, or against itself with the
//! items shuffled. A unit is one item of one answer that both scored; its value for each judge is
//! the item's attainment, score ÷ weight. The figures are the ones graders are measured by
//! elsewhere (HealthBench's balanced F1, Cohen's κ, Krippendorff's α), each defined to equal a
//! reference implementation: scikit-learn's `cohen_kappa_score` and `f1_score(average="macro")`,
//! PyPI `krippendorff`'s `alpha(level_of_measurement="interval")`.

use serde::{Deserialize, Serialize};

/// Judge A's and judge B's figures over the units both scored; `None` where undefined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PairFigures {
    /// Units compared.
    pub items: usize,
    /// Share of units with equal attainment.
    pub exact: Option<f64>,
    /// Cohen's κ, unweighted, the attainments as categories ([`cohen_kappa`]).
    pub kappa: Option<f64>,
    /// Krippendorff's α, interval level, on attainment ([`alpha_interval`]).
    pub alpha_interval: Option<f64>,
    /// Macro F1 of "full credit" (attainment 1), judge B the reference ([`f1_full_credit`]).
    pub f1_full_credit: Option<f64>,
}

/// Every figure of [`PairFigures`] over `(a, b)` attainment pairs.
pub fn figures(pairs: &[(f64, f64)]) -> PairFigures {
    let cats: Vec<(Category, Category)> = pairs
        .iter()
        .map(|&(a, b)| (Category::of(a), Category::of(b)))
        .collect();
    PairFigures {
        items: pairs.len(),
        exact: (!pairs.is_empty())
            .then(|| cats.iter().filter(|(a, b)| a == b).count() as f64 / pairs.len() as f64),
        kappa: cohen_kappa(&cats),
        alpha_interval: alpha_interval(pairs),
        f1_full_credit: f1_full_credit(pairs),
    }
}

/// An attainment as a category: equal when the two numbers are (3/5 and 6/10 are one value in
/// floating point, as in the reference, which sees the same divisions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Category(u64);

impl Category {
    fn of(x: f64) -> Category {
        // -0.0 and 0.0 are one category.
        Category((x + 0.0).to_bits())
    }
}

pub use super::nominal::cohen_kappa;

/// Krippendorff's α at the interval level for two coders who both coded every unit:
/// α = 1 − D_o / D_e with δ²(c, k) = (c − k)², over the n = 2N values. Each unit (a, b) adds
/// 2(a − b)² to n·D_o; n(n − 1)·D_e is Σ over ordered pairs of distinct values
/// (vᵢ − vⱼ)² = 2n·Σv² − 2(Σv)². `None` with no unit, or when every value is the same (D_e is
/// 0: the reference refuses such data).
pub fn alpha_interval(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = 2.0 * pairs.len() as f64;
    let observed: f64 = pairs
        .iter()
        .map(|(a, b)| 2.0 * (a - b).powi(2))
        .sum::<f64>()
        / n;
    let (sum, squares) = pairs
        .iter()
        .flat_map(|&(a, b)| [a, b])
        .fold((0.0, 0.0), |(s, q), v| (s + v, q + v * v));
    let expected = (2.0 * n * squares - 2.0 * sum * sum) / (n * (n - 1.0));
    if expected <= 0.0 {
        return None;
    }
    Some(1.0 - observed / expected)
}

/// Macro F1 of "full credit" (attainment 1) with judge B as the reference, over the classes
/// that occur in either (scikit-learn's labels): per class 2·TP / (2·TP + FP + FN), a class
/// never predicted nor true counting 0 (scikit-learn's `zero_division`). `None` with no unit.
pub fn f1_full_credit(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let full = |x: f64| x == 1.0;
    let mut f1s = Vec::new();
    for class in [false, true] {
        let (mut tp, mut fp, mut fn_) = (0u64, 0u64, 0u64);
        for &(a, b) in pairs {
            match (full(a) == class, full(b) == class) {
                (true, true) => tp += 1,
                (true, false) => fp += 1,
                (false, true) => fn_ += 1,
                (false, false) => {}
            }
        }
        if tp + fp + fn_ > 0 {
            f1s.push(2.0 * tp as f64 / (2 * tp + fp + fn_) as f64);
        }
    }
    Some(f1s.iter().sum::<f64>() / f1s.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (A's score, B's score, weight) of eleven items.
    const UNITS: [(u32, u32, u32); 11] = [
        (5, 5, 5),
        (3, 5, 5),
        (0, 0, 5),
        (4, 2, 4),
        (2, 2, 4),
        (0, 4, 4),
        (1, 1, 1),
        (0, 1, 1),
        (6, 3, 10),
        (10, 10, 10),
        (3, 3, 5),
    ];

    fn pairs() -> Vec<(f64, f64)> {
        UNITS
            .iter()
            .map(|&(a, b, w)| (f64::from(a) / f64::from(w), f64::from(b) / f64::from(w)))
            .collect()
    }

    fn close(got: Option<f64>, want: f64) {
        let g = got.expect("a value");
        assert!((g - want).abs() < 1e-12, "{g} vs {want}");
    }

    /// The values the reference implementations gave for [`UNITS`] (scikit-learn 1.9.1 with the
    /// attainments as string labels, krippendorff 0.9.0 with A and B as the two coders).
    #[test]
    fn the_figures_equal_the_reference_implementations() {
        let f = figures(&pairs());
        assert_eq!(f.items, 11);
        close(f.exact, 6.0 / 11.0);
        close(f.kappa, 0.3820224719101123);
        close(f.alpha_interval, 0.23380035026269708);
        close(f.f1_full_credit, 0.6333333333333333);
    }

    #[test]
    fn undefined_figures_are_none_never_a_number() {
        assert_eq!(figures(&[]), PairFigures::default());
        let same = [(0.5, 0.5), (0.5, 0.5)];
        let f = figures(&same);
        assert_eq!((f.kappa, f.alpha_interval), (None, None));
        close(f.exact, 1.0);
        // Neither gives full credit: class "not full" alone, F1 1 (scikit-learn: 1.0).
        close(f.f1_full_credit, 1.0);
        // B gives full credit once, A never: (2/3 + 0) / 2 (scikit-learn: 0.333…).
        close(f1_full_credit(&[(0.0, 1.0), (0.0, 0.0)]), 1.0 / 3.0);
        // One category each, different: κ is 0 (p_e = 0.5 … scikit-learn: 0.0).
        close(cohen_kappa(&[("a", "a"), ("b", "a")]), 0.0);
    }

    #[test]
    fn perfect_agreement_is_1_and_the_categories_are_the_values() {
        let p = [(1.0, 1.0), (0.0, 0.0), (0.6, 3.0 / 5.0), (-0.0, 0.0)];
        let f = figures(&p);
        close(f.exact, 1.0);
        close(f.kappa, 1.0);
        close(f.alpha_interval, 1.0);
        close(f.f1_full_credit, 1.0);
    }
}
