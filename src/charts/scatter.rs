//! Knowledge against clarity, one labelled point per model.

use super::{ChartError, TEXT, clamp_pct, cut, err, frame, no_data, text_style, text_width};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

pub(crate) const DOT: RGBColor = RGBColor(0xC4, 0x4E, 0x1F);
const DOT_RADIUS: i32 = 4;

/// One model: `x` = Knowledge, `y` = Clarity, both in percent.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub x: f64,
    pub y: f64,
}

/// A labelled point per model on 0–100 % axes. Labels go beside their point where they do not
/// cover another label or run off the chart (first right, then left, above, below, then
/// further down).
pub fn scatter<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    points: &[Point],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    if points.is_empty() {
        return no_data(&body, "no data");
    }
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(40)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..100f64, 0f64..100f64)
        .map_err(err)?;
    super::house_mesh(&mut chart.configure_mesh())
        .x_labels(6)
        .y_labels(6)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .x_desc("Knowledge (%)")
        .y_desc("Clarity (%)")
        .draw()
        .map_err(err)?;

    let plot = chart.plotting_area();
    let base = body.get_base_pixel();
    let (bw, bh) = body.dim_in_pixel();
    let bounds = (base.0, base.1, base.0 + bw as i32, base.1 + bh as i32);
    let style = text_style(12, TEXT, HPos::Left, VPos::Center);
    let coords: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (clamp_pct(p.x), clamp_pct(p.y)))
        .collect();
    let dots: Vec<Rect> = coords
        .iter()
        .map(|c| {
            let (x, y) = chart.backend_coord(c);
            (
                x - DOT_RADIUS,
                y - DOT_RADIUS,
                x + DOT_RADIUS,
                y + DOT_RADIUS,
            )
        })
        .collect();
    for c in &coords {
        plot.draw(&Circle::new(*c, DOT_RADIUS, DOT.filled()))
            .map_err(err)?;
    }
    let mut taken: Vec<Rect> = Vec::new();
    for (p, c) in points.iter().zip(&coords) {
        let label = cut(&p.label, super::MAX_LABEL);
        let w = text_width(&body, &label, &style) as i32;
        let h = 14;
        let at = chart.backend_coord(c);
        let (dx, dy, h_pos) = place(at, (w, h), bounds, &taken, &dots);
        taken.push(label_box(at, (w, h), (dx, dy, h_pos)));
        let style = text_style(12, TEXT, h_pos, VPos::Center);
        plot.draw(&(EmptyElement::at(*c) + Text::new(label, (dx, dy), style)))
            .map_err(err)?;
    }
    Ok(())
}

/// A box in backend pixels: (left, top, right, bottom).
type Rect = (i32, i32, i32, i32);

fn overlaps(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The box of a `w` × `h` label of the point at `at`, drawn at offset (`dx`, `dy`) with the
/// `hp` end of the text there.
fn label_box(at: (i32, i32), (w, h): (i32, i32), (dx, dy, hp): (i32, i32, HPos)) -> Rect {
    let x0 = match hp {
        HPos::Left => at.0 + dx,
        HPos::Right => at.0 + dx - w,
        HPos::Center => at.0 + dx - w / 2,
    };
    (x0, at.1 + dy - h / 2, x0 + w, at.1 + dy + h / 2)
}

/// Where a `w` × `h` label of the point at `at` goes: its offset from the point and which end
/// of the text sits there.
fn place(
    at: (i32, i32),
    (w, h): (i32, i32),
    bounds: Rect,
    taken: &[Rect],
    dots: &[Rect],
) -> (i32, i32, HPos) {
    let gap = DOT_RADIUS + 3;
    let mut candidates = vec![
        (gap, 0, HPos::Left),
        (-gap, 0, HPos::Right),
        (0, -gap - h / 2, HPos::Center),
        (0, gap + h / 2, HPos::Center),
    ];
    for k in 1..=6 {
        for dy in [k * (h + 1), -k * (h + 1)] {
            candidates.push((gap, dy, HPos::Left));
            candidates.push((-gap, dy, HPos::Right));
        }
    }
    let boxed = |&c: &(i32, i32, HPos)| label_box(at, (w, h), c);
    let inside = |r: Rect| r.0 >= bounds.0 && r.1 >= bounds.1 && r.2 <= bounds.2 && r.3 <= bounds.3;
    let free =
        |r: Rect| !taken.iter().any(|t| overlaps(*t, r)) && !dots.iter().any(|d| overlaps(*d, r));
    candidates
        .iter()
        .find(|c| {
            let r = boxed(c);
            inside(r) && free(r)
        })
        .or_else(|| candidates.iter().find(|c| inside(boxed(c))))
        .map(|&(dx, dy, hp)| (dx, dy, hp))
        .unwrap_or((gap, 0, HPos::Left))
}

#[cfg(test)]
mod tests {
    use super::super::svg;
    use super::super::tests::{attr, elements, fill, texts};
    use super::*;

    fn point(label: &str, x: f64, y: f64) -> Point {
        Point {
            label: label.to_string(),
            x,
            y,
        }
    }

    fn scatter_svg(points: &[Point]) -> String {
        svg(640, 420, |a| scatter(a, "Knowledge vs clarity", points)).unwrap()
    }

    #[test]
    fn scatter_draws_a_labelled_point_per_model() {
        let points = [
            point("Claude Opus 4.6", 77.8, 100.0),
            point("GPT-5.2", 22.2, 100.0),
            point("Qwen3-Max", 20.0, 90.0),
        ];
        let s = scatter_svg(&points);
        let dots = elements(&s, "circle", &[&fill(DOT)]);
        assert_eq!(dots.len(), 3, "{s}");
        for p in &points {
            assert!(
                s.contains(&format!(">\n{}\n</text>", p.label)),
                "{}",
                p.label
            );
        }
        // Higher knowledge is further right, lower clarity further down.
        assert!(attr(dots[0], "cx") > attr(dots[1], "cx"));
        assert!(attr(dots[2], "cy") > attr(dots[1], "cy"));
        assert!(s.contains("Knowledge (%)") && s.contains("Clarity (%)"));
    }

    #[test]
    fn labels_of_coincident_points_do_not_overlap() {
        let points: Vec<Point> = (0..5)
            .map(|i| point(&format!("model {i}"), 50.0, 50.0))
            .collect();
        let s = scatter_svg(&points);
        let mut at: Vec<(i64, i64, String)> = texts(&s)
            .into_iter()
            .filter(|(_, content)| content.starts_with("model "))
            .map(|(t, _)| {
                let anchor = t.split("text-anchor=\"").nth(1).unwrap();
                let anchor = anchor[..anchor.find('"').unwrap()].to_string();
                (attr(t, "x") as i64, attr(t, "y") as i64, anchor)
            })
            .collect();
        let n = at.len();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), n, "two labels at the same place: {at:?}");
        assert_eq!(n, 5);
    }

    #[test]
    fn scatter_edges() {
        assert!(scatter_svg(&[]).contains("no data"));
        let corners = scatter_svg(&[
            point("zero", 0.0, 0.0),
            point("full", 100.0, 100.0),
            point("wild", 250.0, f64::NAN),
        ]);
        let dots = elements(&corners, "circle", &[&fill(DOT)]);
        assert_eq!(dots.len(), 3);
        // Out of range is clamped to the edge: "wild" sits at x = 100, y = 0.
        assert_eq!(attr(dots[2], "cx"), attr(dots[1], "cx"));
        assert_eq!(attr(dots[2], "cy"), attr(dots[0], "cy"));
        for l in ["zero", "full", "wild"] {
            assert!(corners.contains(&format!(">\n{l}\n</text>")));
        }
    }

    #[test]
    fn place_prefers_the_right_and_avoids_taken_boxes() {
        let bounds = (0, 0, 400, 300);
        assert_eq!(
            place((100, 100), (50, 14), bounds, &[], &[]).0,
            DOT_RADIUS + 3
        );
        // Near the right edge the label goes left.
        let (dx, _, hp) = place((390, 100), (50, 14), bounds, &[], &[]);
        assert!(dx < 0 && matches!(hp, HPos::Right));
        // With the right taken, it goes elsewhere.
        let taken = [(100, 90, 200, 110)];
        let (dx, dy, _) = place((100, 100), (50, 14), bounds, &taken, &[]);
        assert!(!(dx > 0 && dy == 0));
    }
}
