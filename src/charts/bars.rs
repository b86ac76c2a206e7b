//! Bar charts: Overall per model with its confidence interval, and the histogram of total
//! scores.

use super::{ChartError, TEXT, clamp_pct, err, fit, frame, no_data, pct, text_style, text_width};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

pub(crate) const BAR: RGBColor = RGBColor(0x3B, 0x6E, 0xA8);
pub(crate) const WHISKER: RGBColor = RGBColor(0x1B, 0x1B, 0x1B);
/// A bar with a non-zero count is at least this tall, so a tail of single judgments shows.
const MIN_BAR_PX: f64 = 3.0;
/// The thickest a bar gets, in pixels.
const MAX_BAR_PX: f64 = 28.0;

/// One model's bar: `value` and `ci` (lower, upper) in percent.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: Option<[f64; 2]>,
}

/// Horizontal bars of Overall (0–100 %) per model, in the order given (first on top), each
/// with its value and, where given, a whisker for its confidence interval.
pub fn score_bars<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    bars: &[Bar],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    if bars.is_empty() {
        return no_data(&body, "no data");
    }
    let label_style = text_style(13, TEXT, HPos::Right, VPos::Center);
    let (w, _) = body.dim_in_pixel();
    let labels: Vec<String> = bars
        .iter()
        .map(|b| fit(&body, &b.label, &label_style, w * 2 / 5))
        .collect();
    let label_w = labels
        .iter()
        .map(|l| text_width(&body, l, &label_style))
        .max()
        .unwrap_or(0)
        + 14;
    let n = bars.len() as f64;
    let mut chart = ChartBuilder::on(&body)
        .margin(8)
        .margin_right(44)
        .x_label_area_size(40)
        .y_label_area_size(label_w)
        .build_cartesian_2d(0f64..100f64, 0f64..n)
        .map_err(err)?;
    super::house_mesh(&mut chart.configure_mesh())
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .x_desc("Overall (%)")
        .draw()
        .map_err(err)?;

    let row_px = chart.plotting_area().dim_in_pixel().1 as f64 / n;
    let half = (0.32f64).min(MAX_BAR_PX / 2.0 / row_px.max(1.0));
    let value_style = text_style(12, TEXT, HPos::Left, VPos::Center);
    let plot = chart.plotting_area();
    for (i, (b, label)) in bars.iter().zip(&labels).enumerate() {
        let yc = n - i as f64 - 0.5;
        let v = clamp_pct(b.value);
        plot.draw(&Rectangle::new(
            [(0.0, yc - half), (v, yc + half)],
            BAR.filled(),
        ))
        .map_err(err)?;
        let mut end = v;
        if let Some([lo, hi]) = b.ci {
            let (lo, hi) = (clamp_pct(lo.min(hi)), clamp_pct(lo.max(hi)));
            let style = WHISKER.stroke_width(1);
            plot.draw(&PathElement::new(vec![(lo, yc), (hi, yc)], style))
                .map_err(err)?;
            for x in [lo, hi] {
                plot.draw(
                    &(EmptyElement::at((x, yc)) + PathElement::new(vec![(0, -5), (0, 5)], style)),
                )
                .map_err(err)?;
            }
            end = end.max(hi);
        }
        plot.draw(
            &(EmptyElement::at((end, yc)) + Text::new(pct(b.value), (5, 0), value_style.clone())),
        )
        .map_err(err)?;
        plot.draw(
            &(EmptyElement::at((0.0, yc)) + Text::new(label.clone(), (-8, 0), label_style.clone())),
        )
        .map_err(err)?;
    }
    Ok(())
}

/// Counts of total scores s = 0, 1, … (`counts[s]`, 11 bins for 0–10), each bin labelled with
/// its count; a non-zero bin is never thinner than a few pixels, so the low-score tail shows
/// beside a tall peak.
pub fn histogram<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    counts: &[usize],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    if counts.is_empty() {
        return no_data(&body, "no data");
    }
    let n = counts.len();
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let top = max * 1.12;
    let mut chart = ChartBuilder::on(&body)
        .margin(8)
        .margin_right(16)
        .x_label_area_size(44)
        .y_label_area_size(52)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top)
        .map_err(err)?;
    super::house_mesh(&mut chart.configure_mesh())
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .y_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-9 {
                format!("{v:.0}")
            } else {
                String::new()
            }
        })
        .x_desc("total score s")
        .y_desc("judgments")
        .draw()
        .map_err(err)?;

    let plot_h = chart.plotting_area().dim_in_pixel().1.max(1) as f64;
    let min_h = top * MIN_BAR_PX / plot_h;
    let count_style = text_style(11, TEXT, HPos::Center, VPos::Bottom);
    let tick_style = text_style(12, TEXT, HPos::Center, VPos::Top);
    let plot = chart.plotting_area();
    for (s, &c) in counts.iter().enumerate() {
        let x = s as f64;
        if c > 0 {
            let h = (c as f64).max(min_h);
            plot.draw(&Rectangle::new(
                [(x - 0.38, 0.0), (x + 0.38, h)],
                BAR.filled(),
            ))
            .map_err(err)?;
            plot.draw(
                &(EmptyElement::at((x, h))
                    + Text::new(c.to_string(), (0, -3), count_style.clone())),
            )
            .map_err(err)?;
        }
        plot.draw(
            &(EmptyElement::at((x, 0.0)) + Text::new(s.to_string(), (0, 8), tick_style.clone())),
        )
        .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::svg;
    use super::super::tests::{attr, count, elements, fill, stroke};
    use super::*;

    fn bar(label: &str, value: f64, ci: Option<[f64; 2]>) -> Bar {
        Bar {
            label: label.to_string(),
            value,
            ci,
        }
    }

    fn bars_svg(bars: &[Bar]) -> String {
        svg(640, 360, |a| score_bars(a, "Overall", bars)).unwrap()
    }

    #[test]
    fn score_bars_draw_one_bar_and_label_per_model() {
        let bars = [
            bar("Claude Opus 4.6", 80.0, Some([70.0, 88.5])),
            bar("GPT-5.2", 30.0, Some([22.0, 41.0])),
            bar("Qwen3-Max", 27.3, None),
        ];
        let s = bars_svg(&bars);
        assert_eq!(elements(&s, "rect", &[&fill(BAR)]).len(), 3, "{s}");
        for b in &bars {
            assert!(
                s.contains(&format!(">\n{}\n</text>", b.label)),
                "{}",
                b.label
            );
            assert!(s.contains(&format!(">\n{}\n</text>", pct(b.value))));
        }
        assert!(s.contains("Overall (%)"));
        // Two bars with a CI: a whisker and two caps each.
        assert_eq!(
            elements(&s, "polyline", &[&stroke(WHISKER)]).len(),
            6,
            "{s}"
        );
    }

    #[test]
    fn whisker_spans_the_interval_on_the_bar_scale() {
        let s = bars_svg(&[bar("m", 50.0, Some([40.0, 60.0]))]);
        let rect = elements(&s, "rect", &[&fill(BAR)])[0];
        let (x0, width) = (attr(rect, "x"), attr(rect, "width"));
        let px = |v: f64| x0 + width * v / 50.0;
        let lines = elements(&s, "polyline", &[&stroke(WHISKER)]);
        let points: Vec<Vec<(f64, f64)>> = lines
            .iter()
            .map(|l| {
                let p = l.split("points=\"").nth(1).unwrap();
                p[..p.find('"').unwrap()]
                    .split_whitespace()
                    .map(|xy| {
                        let (x, y) = xy.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect();
        let whisker = &points[0];
        assert!(
            (whisker[0].0 - px(40.0)).abs() <= 1.5,
            "{whisker:?} vs {}",
            px(40.0)
        );
        assert!(
            (whisker[1].0 - px(60.0)).abs() <= 1.5,
            "{whisker:?} vs {}",
            px(60.0)
        );
        // The caps stand at the ends, across the whisker.
        for (cap, end) in [(&points[1], whisker[0].0), (&points[2], whisker[1].0)] {
            assert_eq!(cap[0].0, end);
            assert_eq!(cap[1].0, end);
            assert!(
                cap[0].1 < whisker[0].1 && cap[1].1 > whisker[0].1,
                "{cap:?}"
            );
        }
    }

    #[test]
    fn score_bars_without_data_say_so() {
        let s = bars_svg(&[]);
        assert!(s.contains("no data"));
        assert!(elements(&s, "rect", &[&fill(BAR)]).is_empty());
    }

    #[test]
    fn score_bars_at_the_edges() {
        let zero = bars_svg(&[bar("a", 0.0, Some([0.0, 0.0])), bar("b", 0.0, None)]);
        assert!(zero.contains(">\n0.0\n</text>"));
        let full = bars_svg(&[bar("a", 100.0, Some([100.0, 100.0])), bar("b", 100.0, None)]);
        let rects = elements(&full, "rect", &[&fill(BAR)]);
        assert_eq!(rects.len(), 2);
        // Full bars are equally long; out-of-range values and NaN are clamped, not drawn wild.
        assert_eq!(attr(rects[0], "width"), attr(rects[1], "width"));
        let wild = bars_svg(&[
            bar("a", 130.0, Some([-5.0, f64::NAN])),
            bar("b", 100.0, None),
        ]);
        let w = elements(&wild, "rect", &[&fill(BAR)]);
        assert_eq!(attr(w[0], "width"), attr(w[1], "width"));
    }

    #[test]
    fn long_labels_are_cut() {
        let long = "x".repeat(200);
        let s = bars_svg(&[bar(&long, 50.0, None)]);
        assert!(!s.contains(&long));
        assert!(s.contains('…'));
    }

    #[test]
    fn histogram_draws_the_low_tail() {
        let counts = [1, 0, 0, 0, 0, 0, 0, 0, 2, 50, 1000];
        let s = svg(640, 360, |a| histogram(a, "Scores", &counts)).unwrap();
        let rects = elements(&s, "rect", &[&fill(BAR)]);
        assert_eq!(rects.len(), 4, "one bar per non-empty bin");
        // s = 0 with a single judgment beside a peak of 1000 is still visible.
        assert!(attr(rects[0], "height") >= MIN_BAR_PX - 1.0, "{}", rects[0]);
        for c in ["1", "2", "50", "1000"] {
            assert!(s.contains(&format!(">\n{c}\n</text>")), "count {c}");
        }
        for t in 0..=10 {
            assert!(s.contains(&format!(">\n{t}\n</text>")), "tick {t}");
        }
        assert!(s.contains("total score s"));
    }

    #[test]
    fn histogram_edges() {
        let empty = svg(400, 300, |a| histogram(a, "Scores", &[])).unwrap();
        assert!(empty.contains("no data"));
        let zeros = svg(400, 300, |a| histogram(a, "Scores", &[0; 11])).unwrap();
        assert!(elements(&zeros, "rect", &[&fill(BAR)]).is_empty());
        let one_bin = svg(400, 300, |a| {
            histogram(a, "Scores", &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 13])
        })
        .unwrap();
        assert_eq!(elements(&one_bin, "rect", &[&fill(BAR)]).len(), 1);
        assert_eq!(count(&one_bin, ">\n13\n</text>"), 1);
    }
}
