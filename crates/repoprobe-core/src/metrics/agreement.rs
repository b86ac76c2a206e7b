//! How far two judges agree on the same checklist items (docs/metrics.md#agreement-between-judges):
//! a judge against people (`human:NAME`), against another model, or against itself with the
//! items shuffled. A unit is one item of one answer that both scored; its value for each judge is
//! the item's attainment, score ÷ weight. The figures are the ones graders are measured by
//! elsewhere (HealthBench's balanced F1, Cohen's κ, Krippendorff's α), each defined to equal a
//! reference implementation: scikit-learn's `cohen_kappa_score` and `f1_score(average="macro")`,
//! PyPI `krippendorff`'s `alpha(level_of_measurement="interval")`.

use crate::sort::SharedSort;
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

/// The categories (distinct attainments) of a set of units, in order: what [`Sums`] count by.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Categories(Vec<Category>);

impl Categories {
    /// Every attainment of A or B in `pairs`.
    pub fn of(pairs: &[(f64, f64)]) -> Categories {
        let mut all: Vec<Category> = pairs
            .iter()
            .flat_map(|&(a, b)| [Category::of(a), Category::of(b)])
            .collect();
        all.shared_sort();
        all.dedup();
        Categories(all)
    }

    fn index(&self, x: f64) -> u32 {
        self.0
            .binary_search(&Category::of(x))
            .expect("an attainment of the units the categories were made of") as u32
    }

    /// An empty [`Total`] over these categories.
    pub fn total(&self) -> Total {
        Total {
            counts: vec![[0; 2]; self.0.len()],
            ..Total::default()
        }
    }
}

/// What the figures of a set of units (a cluster's) come from, summed: the bootstrap of
/// [`super::judges`] adds the sums of the clusters it draws into a [`Total`] instead of walking
/// their units again. Counts are whole numbers; the sums of squares of α are floating point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sums {
    items: u64,
    /// Units whose two attainments are one category.
    same: u64,
    /// (category, A's units in it, B's units in it), the categories with any, in order.
    cats: Vec<(u32, u64, u64)>,
    /// Units by full credit: `[neither, B only, A only, both]` (index 2·A + B).
    full: [u64; 4],
    /// Σ 2(a − b)², Σ v and Σ v² over both values of every unit.
    observed: f64,
    sum: f64,
    squares: f64,
}

impl Sums {
    /// The sums of `pairs`, whose attainments are all in `cats`.
    pub fn of(pairs: &[(f64, f64)], cats: &Categories) -> Sums {
        let mut s = Sums::default();
        let mut counts: std::collections::BTreeMap<u32, [u64; 2]> = Default::default();
        for &(a, b) in pairs {
            let (ca, cb) = (cats.index(a), cats.index(b));
            counts.entry(ca).or_default()[0] += 1;
            counts.entry(cb).or_default()[1] += 1;
            s.items += 1;
            s.same += u64::from(ca == cb);
            s.full[2 * usize::from(a == 1.0) + usize::from(b == 1.0)] += 1;
            s.observed += 2.0 * (a - b).powi(2);
            s.sum += a + b;
            s.squares += a * a + b * b;
        }
        s.cats = counts.into_iter().map(|(c, [x, y])| (c, x, y)).collect();
        s
    }
}

/// [`Sums`] added up (a bootstrap resample's), dense over the categories; its [`Total::figures`]
/// are [`figures`]'s definitions on the units summed: κ and F1 to the bit (sums of whole
/// numbers), α but for the order of its floating-point additions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Total {
    items: u64,
    same: u64,
    counts: Vec<[u64; 2]>,
    full: [u64; 4],
    observed: f64,
    sum: f64,
    squares: f64,
}

impl Total {
    pub fn add(&mut self, s: &Sums) {
        self.items += s.items;
        self.same += s.same;
        for &(c, x, y) in &s.cats {
            let slot = &mut self.counts[c as usize];
            slot[0] += x;
            slot[1] += y;
        }
        for k in 0..4 {
            self.full[k] += s.full[k];
        }
        self.observed += s.observed;
        self.sum += s.sum;
        self.squares += s.squares;
    }

    /// Back to no unit, the categories kept.
    pub fn clear(&mut self) {
        let mut counts = std::mem::take(&mut self.counts);
        counts.iter_mut().for_each(|c| *c = [0; 2]);
        *self = Total {
            counts,
            ..Total::default()
        };
    }

    /// κ, α (interval) and the full-credit F1 of the units summed (`exact` as well).
    pub fn figures(&self) -> PairFigures {
        if self.items == 0 {
            return PairFigures::default();
        }
        let n = self.items as f64;
        // Cohen's κ as [`cohen_kappa`] computes it: whole counts, exact in any order.
        let p_o = self.same as f64 / n;
        let p_e = self
            .counts
            .iter()
            .map(|&[x, y]| x as f64 * y as f64)
            .sum::<f64>()
            / (n * n);
        let kappa = (p_e < 1.0).then(|| (p_o - p_e) / (1.0 - p_e));
        // α as [`alpha_interval`]; undefined when every value is one category (a sum of
        // squares that rounding left a hair above 0 is no disagreement to divide by).
        let values = 2.0 * n;
        let distinct = self.counts.iter().filter(|c| c[0] + c[1] > 0).count();
        let expected =
            (2.0 * values * self.squares - 2.0 * self.sum * self.sum) / (values * (values - 1.0));
        let alpha =
            (distinct > 1 && expected > 0.0).then(|| 1.0 - (self.observed / values) / expected);
        // F1 as [`f1_full_credit`]: per class 2·TP / (2·TP + FP + FN), over the classes seen.
        let [neither, b_only, a_only, both] = self.full;
        let f1s: Vec<f64> = [(both, a_only, b_only), (neither, b_only, a_only)]
            .into_iter()
            .filter(|&(tp, fp, fn_)| tp + fp + fn_ > 0)
            .map(|(tp, fp, fn_)| 2.0 * tp as f64 / (2 * tp + fp + fn_) as f64)
            .collect();
        PairFigures {
            items: self.items as usize,
            exact: Some(p_o),
            kappa,
            alpha_interval: alpha,
            f1_full_credit: Some(f1s.iter().sum::<f64>() / f1s.len() as f64),
        }
    }
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

    /// Sums of any split of the units, added up, give [`figures`]'s figures: κ, F1 and the exact
    /// share to the bit, α to rounding.
    #[test]
    fn summed_splits_give_the_figures_of_the_units() {
        let units = pairs();
        let cats = Categories::of(&units);
        for cut in 0..=units.len() {
            let (x, y) = units.split_at(cut);
            let mut t = cats.total();
            t.add(&Sums::of(y, &cats));
            t.add(&Sums::of(x, &cats));
            let (got, want) = (t.figures(), figures(&units));
            assert_eq!(
                (got.items, got.exact, got.kappa, got.f1_full_credit),
                (want.items, want.exact, want.kappa, want.f1_full_credit)
            );
            close(got.alpha_interval, want.alpha_interval.unwrap());
            t.clear();
            assert_eq!(t.figures(), PairFigures::default());
        }
        // One value throughout: κ and α undefined, as [`figures`] has them.
        let same = [(0.5, 0.5), (0.5, 0.5)];
        let cats = Categories::of(&same);
        let mut t = cats.total();
        t.add(&Sums::of(&same, &cats));
        assert_eq!(t.figures(), figures(&same));
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
