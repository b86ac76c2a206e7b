//! Failure-mode shares as stacked horizontal bars, one per group (model), with a legend.

use super::{ChartError, TEXT, err, fit, frame, ink_on, no_data, text_style, text_width};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Okabe–Ito: told apart with the common colour-vision deficiencies.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x99, 0x99, 0x99),
];
const SWATCH: i32 = 12;
const LEGEND_LINE: i32 = 18;
const MAX_BAR_PX: f64 = 28.0;

/// The colour of part `p`: the palette, then lighter rounds of it.
pub(crate) fn part_color(p: usize) -> RGBColor {
    let base = PALETTE[p % PALETTE.len()];
    let round = (p / PALETTE.len()) as f64;
    let t = 1.0 - 0.6f64.powf(round);
    let mix = |c: u8| (c as f64 + (255.0 - c as f64) * t * 0.8).round() as u8;
    RGBColor(mix(base.0), mix(base.1), mix(base.2))
}

/// One stacked bar per group, in the order given (first on top): `shares[group][part]` in
/// percent (each group sums to about 100; negative or missing shares count as 0), with each
/// share written in its segment where it fits and a legend of the parts below.
pub fn stacked_shares<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    groups: &[String],
    parts: &[String],
    shares: &[Vec<f64>],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    if groups.is_empty() || parts.is_empty() {
        return no_data(&body, "no data");
    }
    let share = |g: usize, p: usize| {
        shares
            .get(g)
            .and_then(|r| r.get(p))
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(0.0)
    };
    let (w, h) = body.dim_in_pixel();

    // The legend's items, wrapped into lines across the width.
    let legend_style = text_style(12, TEXT, HPos::Left, VPos::Center);
    let items = legend_items(&body, parts, &legend_style, w);
    let lines = items.last().map_or(1, |(_, _, line)| line + 1);
    let legend_h = (lines * LEGEND_LINE + 10) as u32;
    let (top, legend) = body.split_vertically(h.saturating_sub(legend_h).max(1));

    let label_style = text_style(13, TEXT, HPos::Right, VPos::Center);
    let (labels, label_w) = group_labels(&top, groups, &label_style, w);
    let widest = (0..groups.len())
        .map(|g| (0..parts.len()).map(|p| share(g, p)).sum::<f64>())
        .fold(100.0, f64::max);
    let n = groups.len() as f64;
    let mut chart = ChartBuilder::on(&top)
        .margin(8)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(label_w)
        .build_cartesian_2d(0f64..widest, 0f64..n)
        .map_err(err)?;
    super::house_mesh(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .x_desc("share (%)")
        .draw()
        .map_err(err)?;

    let row_px = chart.plotting_area().dim_in_pixel().1 as f64 / n;
    let half = (0.32f64).min(MAX_BAR_PX / 2.0 / row_px.max(1.0));
    let plot = chart.plotting_area();
    for (g, label) in labels.iter().enumerate() {
        let yc = n - g as f64 - 0.5;
        let mut acc = 0.0;
        for p in 0..parts.len() {
            let v = share(g, p);
            if v <= 0.0 {
                continue;
            }
            let color = part_color(p);
            plot.draw(&Rectangle::new(
                [(acc, yc - half), (acc + v, yc + half)],
                color.filled(),
            ))
            .map_err(err)?;
            let text = format!("{v:.0}");
            let style = text_style(11, ink_on(color), HPos::Center, VPos::Center);
            let (a, b) = (
                chart.backend_coord(&(acc, yc)).0,
                chart.backend_coord(&(acc + v, yc)).0,
            );
            if text_width(&top, &text, &style) as i32 + 4 <= b - a {
                plot.draw(&Text::new(text, (acc + v / 2.0, yc), style))
                    .map_err(err)?;
            }
            acc += v;
        }
        plot.draw(
            &(EmptyElement::at((0.0, yc)) + Text::new(label.clone(), (-8, 0), label_style.clone())),
        )
        .map_err(err)?;
    }

    draw_legend(&legend, items, &legend_style)
}

/// The groups' labels, cut to fit two fifths of the width `w`, and the room they take.
fn group_labels<DB: DrawingBackend>(
    top: &DrawingArea<DB, Shift>,
    groups: &[String],
    style: &TextStyle,
    w: u32,
) -> (Vec<String>, u32) {
    let labels: Vec<String> = groups
        .iter()
        .map(|g| fit(top, g, style, w * 2 / 5))
        .collect();
    let width = labels
        .iter()
        .map(|l| text_width(top, l, style))
        .max()
        .unwrap_or(0)
        + 14;
    (labels, width)
}

/// The legend: each part's swatch and label where `legend_items` placed them.
fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    items: Vec<(String, i32, i32)>,
    style: &TextStyle,
) -> Result<(), ChartError> {
    for (p, (label, x, line)) in items.into_iter().enumerate() {
        let y = 6 + line * LEGEND_LINE;
        legend
            .draw(&Rectangle::new(
                [(x, y), (x + SWATCH, y + SWATCH)],
                part_color(p).filled(),
            ))
            .map_err(err)?;
        legend
            .draw(&Text::new(
                label,
                (x + SWATCH + 5, y + SWATCH / 2),
                style.clone(),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// The legend's items, wrapped into lines across the width `w`: (label, x, line).
fn legend_items<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    parts: &[String],
    style: &TextStyle<'_>,
    w: u32,
) -> Vec<(String, i32, i32)> {
    let mut items = Vec::new();
    let (mut x, mut line) = (12, 0);
    for p in parts {
        let label = fit(body, p, style, w / 2);
        let item_w = SWATCH + 5 + text_width(body, &label, style) as i32 + 16;
        if x > 12 && x + item_w > w as i32 {
            x = 12;
            line += 1;
        }
        items.push((label, x, line));
        x += item_w;
    }
    items
}

#[cfg(test)]
mod tests {
    use super::super::svg;
    use super::super::tests::{attr, elements, fill};
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn stacked(groups: &[String], parts: &[String], shares: &[Vec<f64>]) -> String {
        svg(720, 380, |a| {
            stacked_shares(a, "Failure modes", groups, parts, shares)
        })
        .unwrap()
    }

    #[test]
    fn stacked_shares_draw_a_segment_per_share_and_a_legend() {
        let groups = s(&["Claude Opus 4.6", "GPT-5.2"]);
        let parts = s(&["Incomplete", "Incorrect", "Hallucinated", "Off-topic"]);
        let shares = vec![vec![50.0, 30.0, 20.0, 0.0], vec![40.0, 40.0, 10.0, 10.0]];
        let svg = stacked(&groups, &parts, &shares);
        for (p, part) in parts.iter().enumerate() {
            let nonzero = shares.iter().filter(|r| r[p] > 0.0).count();
            // Each non-zero share is a segment, plus one legend swatch.
            assert_eq!(
                elements(&svg, "rect", &[&fill(part_color(p))]).len(),
                nonzero + 1,
                "{part}: {svg}"
            );
            assert!(svg.contains(&format!(">\n{part}\n</text>")), "{part}");
        }
        for g in &groups {
            assert!(svg.contains(&format!(">\n{g}\n</text>")), "{g}");
        }
        // A group's segments fill the bar: its widths add up to the width of 100 %.
        let widths = |g: usize| -> f64 {
            (0..parts.len())
                .filter(|&p| shares[g][p] > 0.0)
                .map(|p| {
                    let rects = elements(&svg, "rect", &[&fill(part_color(p))]);
                    let row: usize = shares[..g].iter().filter(|r| r[p] > 0.0).count();
                    attr(rects[row], "width")
                })
                .sum()
        };
        assert!(
            (widths(0) - widths(1)).abs() <= 4.0,
            "{} vs {}",
            widths(0),
            widths(1)
        );
        assert!(svg.contains(">\n50\n</text>"));
    }

    #[test]
    fn many_parts_wrap_the_legend_and_keep_distinct_colours() {
        let parts: Vec<String> = (0..12)
            .map(|i| format!("failure mode number {i}"))
            .collect();
        let shares = vec![vec![100.0 / 12.0; 12]];
        let svg = stacked(&s(&["m"]), &parts, &shares);
        for p in &parts {
            assert!(svg.contains(p.as_str()));
        }
        let colours: std::collections::BTreeSet<_> = (0..12).map(|p| fill(part_color(p))).collect();
        assert_eq!(colours.len(), 12);
    }

    #[test]
    fn stacked_edges() {
        assert!(stacked(&[], &s(&["a"]), &[]).contains("no data"));
        assert!(stacked(&s(&["g"]), &[], &[]).contains("no data"));
        let parts = s(&["a", "b"]);
        let zeros = stacked(&s(&["g", "h"]), &parts, &[vec![0.0, 0.0], vec![]]);
        // Only the legend swatches.
        assert_eq!(elements(&zeros, "rect", &[&fill(part_color(0))]).len(), 1);
        let full = stacked(&s(&["g"]), &parts, &[vec![100.0, 0.0]]);
        assert_eq!(elements(&full, "rect", &[&fill(part_color(0))]).len(), 2);
        assert!(full.contains(">\n100\n</text>"));
        // Sums a little over 100 still fit on the axis; NaN and negatives count as 0.
        let over = stacked(&s(&["g"]), &parts, &[vec![60.0, 40.4]]);
        assert_eq!(elements(&over, "rect", &[&fill(part_color(1))]).len(), 2);
        let odd = stacked(&s(&["g"]), &parts, &[vec![f64::NAN, -4.0]]);
        assert_eq!(elements(&odd, "rect", &[&fill(part_color(0))]).len(), 1);
    }
}
