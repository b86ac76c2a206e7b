//! The one definition of mean, sample standard deviation, range and quantile that every table
//! uses. Inputs are summed in the order given; callers pass values in a sorted order so that
//! results never depend on input order.

/// Arithmetic mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation (n − 1 in the denominator, as the paper's tables); `None` below two
/// values, where it is undefined.
pub fn sample_std(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// max − min; `None` for no values.
pub fn range(values: &[f64]) -> Option<f64> {
    let max = values.iter().copied().fold(None, |acc: Option<f64>, v| {
        Some(acc.map_or(v, |a| a.max(v)))
    })?;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    Some(max - min)
}

/// Quantile of sorted values by linear interpolation between order statistics (Hyndman & Fan
/// type 7, the default of R and numpy). `p` in [0, 1].
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_std_uses_n_minus_one() {
        // values 2, 4, 4, 4, 5, 5, 7, 9: population std 2, sample std sqrt(32/7)
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&v), Some(5.0));
        assert!((sample_std(&v).unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(range(&v), Some(7.0));
        assert_eq!(sample_std(&[1.0]), None);
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), Some(2.5));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(4.0));
        // numpy.quantile([1,2,3,4], 0.025) == 1.075
        assert!((quantile_sorted(&v, 0.025).unwrap() - 1.075).abs() < 1e-12);
    }
}
