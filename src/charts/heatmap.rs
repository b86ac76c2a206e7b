//! Overall per model (rows) and stratum (columns), coloured by value, each column labelled with
//! its question count.

use super::{
    ChartError, GRID, MUTED, TEXT, cut, err, fit, frame, ink_on, no_data, pct, text_style,
    text_width,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The colour scale from 0 % to 100 % (light to dark blue), as equally spaced stops.
const SCALE: [RGBColor; 5] = [
    RGBColor(0xF7, 0xFB, 0xFF),
    RGBColor(0xC6, 0xDB, 0xEF),
    RGBColor(0x6B, 0xAE, 0xD6),
    RGBColor(0x21, 0x71, 0xB5),
    RGBColor(0x08, 0x30, 0x6B),
];
/// Steps of the colour key under the grid.
pub(crate) const KEY_STEPS: usize = 10;
const MAX_CELL_H: u32 = 40;
const LINE: u32 = 16;
const KEY_H: u32 = 30;

/// The colour of `v` percent.
pub(crate) fn shade(v: f64) -> RGBColor {
    let t = (v.clamp(0.0, 100.0) / 100.0) * (SCALE.len() - 1) as f64;
    let i = (t.floor() as usize).min(SCALE.len() - 2);
    let f = t - i as f64;
    let (a, b) = (SCALE[i], SCALE[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A grid of `values[row][col]` (percent; `None` or a missing entry is a blank cell), rows
/// labelled by `rows`, columns by `cols` and "n = `counts[col]`". Column labels that don't fit
/// across a cell are turned upright.
pub fn heatmap<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    rows: &[String],
    cols: &[String],
    values: &[Vec<Option<f64>>],
    counts: &[usize],
) -> Result<(), ChartError> {
    let body = frame(&area, title)?;
    if rows.is_empty() || cols.is_empty() {
        return no_data(&body, "no data");
    }
    let body = body.margin(6, 6, 10, 16);
    let (w, h) = body.dim_in_pixel();
    let row_style = text_style(13, TEXT, HPos::Right, VPos::Center);
    let row_labels: Vec<String> = rows
        .iter()
        .map(|r| fit(&body, r, &row_style, w * 2 / 5))
        .collect();
    let left = row_labels
        .iter()
        .map(|l| text_width(&body, l, &row_style))
        .max()
        .unwrap_or(0)
        + 10;
    let grid_w = w.saturating_sub(left).max(cols.len() as u32);
    let cell_w = grid_w as f64 / cols.len() as f64;

    let labels = ColumnLabels::new(&body, cols, counts, cell_w, h);
    let header = labels.height;
    let grid_h = h.saturating_sub(header + KEY_H).max(rows.len() as u32);
    let cell_h = (grid_h as f64 / rows.len() as f64).min(MAX_CELL_H as f64);
    let grid_bottom = (cell_h * rows.len() as f64).round() as i32;
    let left = left as i32;
    let x_of = |j: usize| left + (cell_w * j as f64).round() as i32;
    let y_of = |i: usize| (cell_h * i as f64).round() as i32;

    for (i, label) in row_labels.iter().enumerate() {
        let (y0, y1) = (y_of(i), y_of(i + 1));
        body.draw(&Text::new(
            label.clone(),
            (left - 8, (y0 + y1) / 2),
            row_style.clone(),
        ))
        .map_err(err)?;
        for j in 0..cols.len() {
            let (x0, x1) = (x_of(j), x_of(j + 1));
            let v = values
                .get(i)
                .and_then(|r| r.get(j))
                .copied()
                .flatten()
                .filter(|v| v.is_finite());
            cell(&body, (x0, y0), (x1, y1), v)?;
        }
    }
    labels.draw(&body, counts, x_of, grid_bottom)?;
    color_key(&body, left, grid_bottom + header as i32)
}

/// "n = …" under column `j`.
fn n_text(counts: &[usize], j: usize) -> Option<String> {
    counts.get(j).map(|n| format!("n = {n}"))
}

/// The column labels: each name over "n = …" when every one fits across its cell, else
/// upright (the name cut to fit, the count after it).
struct ColumnLabels {
    across: bool,
    names: Vec<String>,
    upright: Vec<String>,
    /// The height they take under the grid.
    height: u32,
}

impl ColumnLabels {
    fn col_style() -> TextStyle<'static> {
        text_style(12, TEXT, HPos::Center, VPos::Top)
    }

    fn upright_style() -> TextStyle<'static> {
        text_style(12, TEXT, HPos::Right, VPos::Center).transform(FontTransform::Rotate270)
    }

    /// The labels of `cols` for cells `cell_w` wide, in a chart `h` high.
    fn new<DB: DrawingBackend>(
        body: &DrawingArea<DB, Shift>,
        cols: &[String],
        counts: &[usize],
        cell_w: f64,
        h: u32,
    ) -> ColumnLabels {
        let col_style = Self::col_style();
        let names: Vec<String> = cols.iter().map(|c| cut(c, super::MAX_LABEL)).collect();
        let across = names.iter().enumerate().all(|(j, name)| {
            let nw = n_text(counts, j).map_or(0, |t| text_width(body, &t, &col_style));
            text_width(body, name, &col_style).max(nw) as f64 <= cell_w - 4.0
        });
        if across {
            return ColumnLabels {
                across,
                names,
                upright: Vec::new(),
                height: LINE * 2 + 6,
            };
        }
        let upright_style = Self::upright_style();
        let room = h * 2 / 5;
        let upright: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(j, c)| {
                let n = n_text(counts, j)
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                let room = room.saturating_sub(text_width(body, &n, &upright_style));
                format!("{}{n}", fit(body, c, &upright_style, room))
            })
            .collect();
        let height = upright
            .iter()
            .map(|l| text_width(body, l, &upright_style))
            .max()
            .unwrap_or(0)
            + 10;
        ColumnLabels {
            across,
            names,
            upright,
            height,
        }
    }

    /// Draws them under the grid (`x_of(j)`: where column `j` starts).
    fn draw<DB: DrawingBackend>(
        &self,
        body: &DrawingArea<DB, Shift>,
        counts: &[usize],
        x_of: impl Fn(usize) -> i32,
        grid_bottom: i32,
    ) -> Result<(), ChartError> {
        let (col_style, upright_style) = (Self::col_style(), Self::upright_style());
        for j in 0..self.names.len() {
            let xc = (x_of(j) + x_of(j + 1)) / 2;
            if self.across {
                body.draw(&Text::new(
                    self.names[j].clone(),
                    (xc, grid_bottom + 4),
                    col_style.clone(),
                ))
                .map_err(err)?;
                if let Some(n) = n_text(counts, j) {
                    let style = text_style(11, MUTED, HPos::Center, VPos::Top);
                    body.draw(&Text::new(n, (xc, grid_bottom + 4 + LINE as i32), style))
                        .map_err(err)?;
                }
            } else {
                body.draw(&Text::new(
                    self.upright[j].clone(),
                    (xc, grid_bottom + 6),
                    upright_style.clone(),
                ))
                .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// One cell from (`x0`, `y0`) to (`x1`, `y1`): shaded by its value, which it shows where it
/// fits; a blank outline without one.
fn cell<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    v: Option<f64>,
) -> Result<(), ChartError> {
    let Some(v) = v else {
        return body
            .draw(&Rectangle::new([(x0 + 1, y0 + 1), (x1 - 1, y1 - 1)], GRID))
            .map_err(err);
    };
    let bg = shade(v);
    body.draw(&Rectangle::new(
        [(x0 + 1, y0 + 1), (x1 - 1, y1 - 1)],
        bg.filled(),
    ))
    .map_err(err)?;
    let text = pct(v);
    let style = text_style(12, ink_on(bg), HPos::Center, VPos::Center);
    if text_width(body, &text, &style) as i32 + 4 <= x1 - x0 && y1 - y0 >= 14 {
        body.draw(&Text::new(text, ((x0 + x1) / 2, (y0 + y1) / 2), style))
            .map_err(err)?;
    }
    Ok(())
}

/// The colour scale from 0 to 100 % as a row of steps, at (`x`, `y`).
fn color_key<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x: i32,
    y: i32,
) -> Result<(), ChartError> {
    let (step, hgt) = (14, 10);
    let y = y + 8;
    let small = |h| text_style(11, MUTED, h, VPos::Center);
    area.draw(&Text::new("0 %", (x, y + hgt / 2), small(HPos::Left)))
        .map_err(err)?;
    let x0 = x + 28;
    for k in 0..KEY_STEPS {
        let v = 100.0 * (k as f64 + 0.5) / KEY_STEPS as f64;
        let a = x0 + step * k as i32;
        area.draw(&Rectangle::new(
            [(a, y), (a + step, y + hgt)],
            shade(v).filled(),
        ))
        .map_err(err)?;
    }
    let end = x0 + step * KEY_STEPS as i32 + 6;
    area.draw(&Text::new(
        "100 % Overall",
        (end, y + hgt / 2),
        small(HPos::Left),
    ))
    .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::super::svg;
    use super::super::tests::{count, elements, stroke};
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn heat(
        rows: &[String],
        cols: &[String],
        values: &[Vec<Option<f64>>],
        counts: &[usize],
    ) -> String {
        svg(720, 360, |a| {
            heatmap(a, "Overall by category", rows, cols, values, counts)
        })
        .unwrap()
    }

    /// Filled rectangles other than the white background: cells and the colour key.
    fn filled(svg: &str) -> usize {
        elements(svg, "rect", &["stroke=\"none\""])
            .iter()
            .filter(|r| !r.contains("fill=\"#FFFFFF\""))
            .count()
    }

    #[test]
    fn heatmap_colours_each_cell_and_leaves_missing_ones_blank() {
        let rows = s(&["Claude Opus 4.6", "GPT-5.2"]);
        let cols = s(&["Architecture", "Logic", "Details"]);
        let values = vec![
            vec![Some(80.0), Some(72.5), None],
            vec![Some(30.0), None, Some(12.25)],
        ];
        let svg = heat(&rows, &cols, &values, &[12, 9, 30]);
        assert_eq!(filled(&svg), 4 + KEY_STEPS, "{svg}");
        assert_eq!(
            elements(&svg, "rect", &[&stroke(GRID), "fill=\"none\""]).len(),
            2
        );
        for t in ["80.0", "72.5", "30.0", "12.2", "n = 12", "n = 9", "n = 30"] {
            assert!(svg.contains(&format!(">\n{t}\n</text>")), "{t}: {svg}");
        }
        for l in rows.iter().chain(&cols) {
            assert!(svg.contains(&format!(">\n{l}\n</text>")), "{l}");
        }
        // Darker for higher: 80 % is darker than 30 %.
        let lum = |c: RGBColor| c.0 as u32 + c.1 as u32 + c.2 as u32;
        assert!(lum(shade(80.0)) < lum(shade(30.0)));
        assert!(svg.contains(&format!(
            "fill=\"#{:02X}{:02X}{:02X}\"",
            shade(80.0).0,
            shade(80.0).1,
            shade(80.0).2
        )));
    }

    #[test]
    fn crowded_columns_are_labelled_upright_with_their_count() {
        let rows = s(&["a", "b"]);
        let cols: Vec<String> = (0..20).map(|i| format!("Language number {i}")).collect();
        let values = vec![vec![Some(50.0); 20]; 2];
        let counts: Vec<usize> = (0..20).collect();
        let svg = heat(&rows, &cols, &values, &counts);
        assert_eq!(count(&svg, "rotate(270"), 20, "{svg}");
        assert!(svg.contains("(n = 19)"));
        assert_eq!(filled(&svg), 40 + KEY_STEPS);
    }

    #[test]
    fn heatmap_edges() {
        assert!(heat(&[], &s(&["x"]), &[], &[]).contains("no data"));
        assert!(heat(&s(&["x"]), &[], &[], &[]).contains("no data"));
        let rows = s(&["a", "b"]);
        let cols = s(&["x", "y"]);
        let zeros = heat(&rows, &cols, &vec![vec![Some(0.0); 2]; 2], &[1, 2]);
        assert_eq!(filled(&zeros), 4 + KEY_STEPS);
        assert_eq!(count(&zeros, ">\n0.0\n</text>"), 4);
        let full = heat(&rows, &cols, &vec![vec![Some(100.0); 2]; 2], &[1, 2]);
        assert_eq!(count(&full, ">\n100.0\n</text>"), 4);
        // All blank, short rows, no counts: still a grid, no panic.
        let blank = heat(&rows, &cols, &[vec![None], vec![]], &[]);
        assert_eq!(filled(&blank), KEY_STEPS);
        assert_eq!(
            elements(&blank, "rect", &[&stroke(GRID), "fill=\"none\""]).len(),
            4
        );
        assert!(!blank.contains("n = "));
    }

    #[test]
    fn shade_runs_light_to_dark() {
        assert_eq!(shade(0.0), SCALE[0]);
        assert_eq!(shade(100.0), SCALE[4]);
        assert_eq!(shade(50.0), SCALE[2]);
        assert_eq!(shade(-3.0), SCALE[0]);
        assert_eq!(shade(250.0), SCALE[4]);
    }
}
