//! A release's funnel (`curate report`, the release manifest): how many threads each stage of
//! the curation kept, as the paper draws 5,233 → 2,613 → 1,107 → 500.

use super::bars::BAR;
use super::{ChartError, TEXT, err, fit, frame, no_data, text_style, text_width};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The thickest a bar gets, in pixels.
const MAX_BAR_PX: f64 = 30.0;

/// `n` with a thousands separator, as the paper writes counts (5,233).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Each step's bar, centred and as wide as its count against the widest, in the order given
/// (first on top), labelled with its stage on the left and its count and share of the first
/// step on the right.
pub fn funnel<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    steps: &[(String, u64)],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    let max = steps.iter().map(|s| s.1).max().unwrap_or(0);
    if steps.is_empty() || max == 0 {
        return no_data(&body, "no stage kept anything");
    }
    let label_style = text_style(13, TEXT, HPos::Right, VPos::Center);
    let (w, _) = body.dim_in_pixel();
    let labels: Vec<String> = steps
        .iter()
        .map(|(stage, _)| fit(&body, stage, &label_style, w / 4))
        .collect();
    let label_w = labels
        .iter()
        .map(|l| text_width(&body, l, &label_style))
        .max()
        .unwrap_or(0)
        + 14;
    let first = steps[0].1;
    let values: Vec<String> = steps
        .iter()
        .map(|&(_, n)| match first {
            0 => thousands(n),
            f => format!("{} ({:.1}%)", thousands(n), 100.0 * n as f64 / f as f64),
        })
        .collect();
    let value_style = text_style(12, TEXT, HPos::Left, VPos::Center);
    let value_w = values
        .iter()
        .map(|v| text_width(&body, v, &value_style))
        .max()
        .unwrap_or(0)
        + 12;
    let n = steps.len() as f64;
    let half_x = max as f64 / 2.0;
    let chart = ChartBuilder::on(&body)
        .margin(8)
        .margin_right(value_w)
        .y_label_area_size(label_w)
        .build_cartesian_2d(-half_x..half_x, 0f64..n)
        .map_err(err)?;
    let row_px = chart.plotting_area().dim_in_pixel().1 as f64 / n;
    let half = (0.34f64).min(MAX_BAR_PX / 2.0 / row_px.max(1.0));
    let plot = chart.plotting_area();
    for (i, ((&(_, count), label), value)) in steps.iter().zip(&labels).zip(&values).enumerate() {
        let yc = n - i as f64 - 0.5;
        let x = count as f64 / 2.0;
        plot.draw(&Rectangle::new(
            [(-x, yc - half), (x, yc + half)],
            BAR.filled(),
        ))
        .map_err(err)?;
        plot.draw(
            &(EmptyElement::at((half_x, yc))
                + Text::new(value.clone(), (6, 0), value_style.clone())),
        )
        .map_err(err)?;
        plot.draw(
            &(EmptyElement::at((-half_x, yc))
                + Text::new(label.clone(), (-8, 0), label_style.clone())),
        )
        .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::svg;
    use super::super::tests::{attr, elements, fill};
    use super::*;

    fn steps(v: &[(&str, u64)]) -> Vec<(String, u64)> {
        v.iter().map(|&(s, n)| (s.to_string(), n)).collect()
    }

    #[test]
    fn each_stage_is_a_bar_as_wide_as_its_count_with_its_count_and_share() {
        let paper = steps(&[
            ("harvested", 5233),
            ("classify", 2613),
            ("verify", 1107),
            ("kept", 500),
        ]);
        let s = svg(720, 300, |a| funnel(a, "Funnel", &paper)).unwrap();
        let rects = elements(&s, "rect", &[&fill(BAR)]);
        assert_eq!(rects.len(), 4, "{s}");
        let widths: Vec<f64> = rects.iter().map(|r| attr(r, "width")).collect();
        for (w, (_, n)) in widths.iter().zip(&paper) {
            let expected = widths[0] * *n as f64 / 5233.0;
            assert!((w - expected).abs() <= 1.5, "{w} vs {expected}");
        }
        // Centred: each bar's middle is the first's.
        let mid = |r: &str| attr(r, "x") + attr(r, "width") / 2.0;
        for r in &rects {
            assert!((mid(r) - mid(rects[0])).abs() <= 1.0);
        }
        for text in [
            "harvested",
            "5,233 (100.0%)",
            "2,613 (49.9%)",
            "1,107 (21.2%)",
            "500 (9.6%)",
        ] {
            assert!(s.contains(&format!(">\n{text}\n</text>")), "{text}: {s}");
        }
    }

    #[test]
    fn a_hostile_stage_name_is_text_and_an_empty_funnel_says_so() {
        let s = svg(600, 200, |a| {
            funnel(a, "F", &steps(&[("<script>x</script>", 3), ("kept", 0)]))
        })
        .unwrap();
        assert!(!s.contains("<script>"), "{s}");
        assert!(s.contains("&lt;script&gt;"));
        let none = svg(600, 200, |a| funnel(a, "F", &steps(&[("kept", 0)]))).unwrap();
        assert!(none.contains("no stage kept anything"));
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
