//! Agreement of raters on nominal values, any number of raters, gaps allowed: percent
//! agreement, Cohen's κ (two raters) and Krippendorff's α. One copy for the human reviewers'
//! agreement (`repoprobe-curate`'s `agreement`) and the judges' (`agreement.rs`, κ over
//! attainments as categories). Pure functions of their arguments.

use std::collections::BTreeMap;

/// Percent agreement over the units with at least two values: for each such unit, the share
/// of its pairs of values (each unordered pair of raters once) that are equal; the mean of those
/// shares over the units, × 100. `None` when no unit has two values.
pub fn percent_agreement<T: Eq>(units: &[Vec<T>]) -> Option<f64> {
    let shares: Vec<f64> = units
        .iter()
        .filter(|u| u.len() >= 2)
        .map(|u| {
            let (mut pairs, mut same) = (0u64, 0u64);
            for (i, a) in u.iter().enumerate() {
                for b in &u[i + 1..] {
                    pairs += 1;
                    same += u64::from(a == b);
                }
            }
            same as f64 / pairs as f64
        })
        .collect();
    if shares.is_empty() {
        return None;
    }
    Some(100.0 * shares.iter().sum::<f64>() / shares.len() as f64)
}

/// Cohen's κ of two raters over the items both rated, one (first rater's, second rater's)
/// pair each: (p_o − p_e) / (1 − p_e), p_o the share of equal pairs, p_e Σ_c p₁(c)·p₂(c) from
/// each rater's own shares. `None` with no item, or when p_e is 1 (both raters gave one and the
/// same value throughout: κ is 0/0).
pub fn cohen_kappa<T: Ord>(pairs: &[(T, T)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let mut first: BTreeMap<&T, f64> = BTreeMap::new();
    let mut second: BTreeMap<&T, f64> = BTreeMap::new();
    let mut same = 0.0;
    for (a, b) in pairs {
        *first.entry(a).or_default() += 1.0;
        *second.entry(b).or_default() += 1.0;
        if a == b {
            same += 1.0;
        }
    }
    let p_o = same / n;
    let p_e: f64 = first
        .iter()
        .map(|(c, k)| k * second.get(c).copied().unwrap_or(0.0))
        .sum::<f64>()
        / (n * n);
    if p_e >= 1.0 {
        return None;
    }
    Some((p_o - p_e) / (1.0 - p_e))
}

/// Krippendorff's α for nominal data, from the coincidence matrix (Krippendorff, "Computing
/// Krippendorff's Alpha-Reliability", 2011): each unit holds the values its raters gave (a
/// rater who did not rate it is simply absent); units with fewer than two values are left out.
/// A unit of m values adds, for each ordered pair of its values (c, k) from two different
/// raters, 1/(m − 1) to o_ck; n_c = Σ_k o_ck, n = Σ_c n_c; then
/// α = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k. `None` when no two values are pairable
/// or every pairable value is the same (the expected disagreement is 0: α is 0/0).
pub fn krippendorff_alpha<T: Ord>(units: &[Vec<T>]) -> Option<f64> {
    // o_ck over the values' distinct categories.
    let mut o: BTreeMap<(&T, &T), f64> = BTreeMap::new();
    for u in units.iter().filter(|u| u.len() >= 2) {
        let mut counts: BTreeMap<&T, f64> = BTreeMap::new();
        for v in u {
            *counts.entry(v).or_default() += 1.0;
        }
        let m = u.len() as f64;
        for (c, nc) in &counts {
            for (k, nk) in &counts {
                let pairs = if c == k { nc * (nc - 1.0) } else { nc * nk };
                if pairs > 0.0 {
                    *o.entry((*c, *k)).or_default() += pairs / (m - 1.0);
                }
            }
        }
    }
    let mut n_c: BTreeMap<&T, f64> = BTreeMap::new();
    for ((c, _), v) in &o {
        *n_c.entry(*c).or_default() += v;
    }
    let n: f64 = n_c.values().sum();
    let observed: f64 = o.iter().filter(|((c, k), _)| c != k).map(|(_, v)| v).sum();
    let expected: f64 = n_c.values().map(|a| a * (n - a)).sum();
    if n < 2.0 || expected <= 0.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * observed / expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: Option<f64>, want: f64) {
        let g = got.expect("a value");
        assert!((g - want).abs() < 1e-12, "{g} vs {want}");
    }

    #[test]
    fn perfect_agreement_is_100_percent_and_1_for_kappa_and_alpha() {
        let units = vec![vec![true, true], vec![false, false], vec![true, true]];
        close(percent_agreement(&units), 100.0);
        close(krippendorff_alpha(&units), 1.0);
        let pairs = [(true, true), (false, false), (true, true)];
        close(cohen_kappa(&pairs), 1.0);
    }

    /// The example of Cohen's κ on Wikipedia ("Cohen's kappa", simple example): 50 proposals,
    /// both yes 20, A yes B no 5, A no B yes 10, both no 15: p_o = 0.7, p_e = 0.5, κ = 0.4.
    #[test]
    fn kappa_of_the_textbook_example_is_0_4() {
        let mut pairs = Vec::new();
        pairs.extend(std::iter::repeat_n(("yes", "yes"), 20));
        pairs.extend(std::iter::repeat_n(("yes", "no"), 5));
        pairs.extend(std::iter::repeat_n(("no", "yes"), 10));
        pairs.extend(std::iter::repeat_n(("no", "no"), 15));
        close(cohen_kappa(&pairs), 0.4);
    }

    #[test]
    fn kappa_and_alpha_are_undefined_when_everyone_gives_one_value() {
        assert_eq!(cohen_kappa(&[(1, 1), (1, 1)]), None);
        assert_eq!(cohen_kappa::<u8>(&[]), None);
        assert_eq!(krippendorff_alpha(&[vec![1, 1], vec![1, 1, 1]]), None);
        assert_eq!(krippendorff_alpha(&[vec![1], vec![2]]), None);
        assert_eq!(percent_agreement(&[vec![1], vec![2]]), None);
    }

    /// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
    /// observers, twelve units, values 1–5, with missing data; α nominal is published as
    /// 0.743. By hand from its coincidence matrix: n_c = (9, 13, 10, 5, 3), n = 40, the
    /// off-diagonal coincidences sum to 8, Σ_{c≠k} n_c·n_k = 40² − 384 = 1216, so
    /// α = 1 − 39 · 8 / 1216 = 113/152 = 0.74342…
    #[test]
    fn alpha_of_krippendorffs_example_with_missing_data_is_0_743() {
        // Rows: observers A, B, C, D; columns: units 1..12; 0 is "not rated".
        let data: [[u8; 12]; 4] = [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3],
            [0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0],
        ];
        let units: Vec<Vec<u8>> = (0..12)
            .map(|u| data.iter().map(|row| row[u]).filter(|&v| v != 0).collect())
            .collect();
        let alpha = krippendorff_alpha(&units).unwrap();
        assert!((alpha - 0.743).abs() < 5e-4, "{alpha}");
        close(Some(alpha), 113.0 / 152.0);
    }
}
