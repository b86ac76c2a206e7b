//! The site's charts as pure functions over a plotters `DrawingBackend`: each takes a drawing
//! area and plain data and draws one figure. The `Chart` component hands them its one backend,
//! a canvas or the export's SVG (`components::chart`'s `Surface`); `svg` renders the same
//! functions to an SVG string with plotters' SVG backend alone, for the native tests here.
//!
//! Must not touch the DOM or web-sys (text is measured through plotters, which does that on
//! wasm itself). Labels are untrusted (model names, strata): they are cut to one short line and
//! drawn as text only; the SVG backend escapes them.

mod bars;
mod funnel;
mod heatmap;
mod scatter;
mod stacked;

pub use bars::{Bar, histogram, score_bars};
pub use funnel::{funnel, thousands};
pub use heatmap::heatmap;
pub use scatter::{Point, scatter};
pub use stacked::stacked_shares;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The data of one chart, so that a component can draw it on a canvas and export it as SVG
/// with the same function (chart functions are generic over the backend, closures can't be).
#[derive(Clone, Debug, PartialEq)]
pub enum ChartData {
    /// Overall per model with CI whiskers: [`score_bars`].
    ScoreBars(Vec<Bar>),
    /// Counts of total scores s = 0, 1, …: [`histogram`].
    Histogram(Vec<usize>),
    /// Knowledge vs clarity per model: [`scatter`].
    Scatter(Vec<Point>),
    /// Model × stratum Overall: [`heatmap`].
    Heatmap {
        rows: Vec<String>,
        cols: Vec<String>,
        values: Vec<Vec<Option<f64>>>,
        counts: Vec<usize>,
    },
    /// Failure-mode shares per group: [`stacked_shares`].
    StackedShares {
        groups: Vec<String>,
        parts: Vec<String>,
        shares: Vec<Vec<f64>>,
    },
    /// A release's funnel, (stage, kept) in order: [`funnel`].
    Funnel(Vec<(String, u64)>),
}

impl ChartData {
    /// Draws this chart with `title` on `area`.
    pub fn draw<DB: DrawingBackend>(
        &self,
        area: DrawingArea<DB, Shift>,
        title: &str,
    ) -> Result<(), ChartError> {
        match self {
            ChartData::ScoreBars(bars) => score_bars(area, title, bars),
            ChartData::Histogram(counts) => histogram(area, title, counts),
            ChartData::Scatter(points) => scatter(area, title, points),
            ChartData::Heatmap {
                rows,
                cols,
                values,
                counts,
            } => heatmap(area, title, rows, cols, values, counts),
            ChartData::StackedShares {
                groups,
                parts,
                shares,
            } => stacked_shares(area, title, groups, parts, shares),
            ChartData::Funnel(steps) => funnel(area, title, steps),
        }
    }
}

/// Renders `draw` on a `width` × `height` SVG and returns the document.
pub fn svg<F>(width: u32, height: u32, draw: F) -> Result<String, ChartError>
where
    F: FnOnce(DrawingArea<SVGBackend, Shift>) -> Result<(), ChartError>,
{
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        draw(root.clone())?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The font of every chart; sizes are in pixels.
pub(crate) const FONT: &str = "sans-serif";
pub(crate) const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
pub(crate) const GRID: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);
/// The longest label drawn, in characters; longer ones end in "…".
pub(crate) const MAX_LABEL: usize = 32;

/// The house style of every chart's axes and grid: one place for fonts, grid and axis colours.
pub(crate) fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, 12).into_font().color(&TEXT))
        .axis_desc_style((FONT, 13).into_font().color(&TEXT))
        .bold_line_style(GRID)
        .light_line_style(WHITE.mix(0.0))
        .axis_style(MUTED)
}

/// Why a chart could not be drawn or exported: plotters' backend (canvas or SVG) failed, or
/// the browser gave no canvas or PNG. Each says what the browser refused; the chart's data is in
/// the tables beside it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// The drawing backend's failure, in its words.
    #[error("{0}")]
    Drawing(String),
    /// The browser gives no 2D context for the canvas.
    #[error("this browser has no 2D canvas")]
    NoCanvas,
    /// The page has no document to make the PNG export's canvas in.
    #[error("could not make a canvas")]
    NewCanvas,
    /// The canvas could not be encoded as PNG.
    #[error("the browser refused to encode the PNG")]
    Png,
}

/// A drawing backend's error as a [`ChartError`].
pub(crate) fn err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Drawing(e.to_string())
}

pub(crate) fn text_style(size: u32, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&color).pos(Pos::new(h, v))
}

/// `label` on one line, at most `max` characters (control characters become spaces).
pub(crate) fn cut(label: &str, max: usize) -> String {
    let clean: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    repoprobe_core::text::fit(clean.trim(), max)
}

/// The width of `text` in pixels as the backend would draw it (a rough guess if it can't say).
pub(crate) fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> u32 {
    area.estimate_text_size(text, style)
        .map(|(w, _)| w)
        .unwrap_or_else(|_| (text.chars().count() as f64 * style.font.get_size() * 0.6) as u32)
}

/// `label` cut until it fits in `width` pixels.
pub(crate) fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    label: &str,
    style: &TextStyle,
    width: u32,
) -> String {
    let mut max = MAX_LABEL;
    let mut s = cut(label, max);
    while max > 2 && text_width(area, &s, style) > width {
        max -= 1;
        s = cut(label, max);
    }
    s
}

/// Fills `area` white, draws `title` on top and returns the area below it.
pub(crate) fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    area.fill(&WHITE).map_err(err)?;
    let title = cut(title, 80);
    if title.is_empty() {
        return Ok(area.margin(6, 0, 0, 0));
    }
    area.titled(&title, (FONT, 17).into_font().color(&TEXT))
        .map_err(err)
}

/// Says in the middle of `area` that there is nothing to draw.
pub(crate) fn no_data<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    message: &str,
) -> Result<(), ChartError> {
    let (w, h) = area.dim_in_pixel();
    area.draw_text(
        message,
        &text_style(15, MUTED, HPos::Center, VPos::Center),
        (w as i32 / 2, h as i32 / 2),
    )
    .map_err(err)
}

/// A share or percentage with one decimal, as in the tables.
pub(crate) fn pct(v: f64) -> String {
    format!("{v:.1}")
}

/// `v` in 0–100 (anything else, NaN included, is clamped or 0).
pub(crate) fn clamp_pct(v: f64) -> f64 {
    if v.is_finite() {
        v.clamp(0.0, 100.0)
    } else {
        0.0
    }
}

/// Black or white, whichever reads better on `bg`.
pub(crate) fn ink_on(bg: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = bg;
    let luma = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
    if luma > 150.0 { TEXT } else { WHITE }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// How many times `needle` occurs in `hay`.
    pub fn count(hay: &str, needle: &str) -> usize {
        hay.matches(needle).count()
    }

    /// The SVG elements named `tag` (`rect`, `polyline`, …) that contain every one of `attrs`.
    pub fn elements<'a>(svg: &'a str, tag: &str, attrs: &[&str]) -> Vec<&'a str> {
        let open = format!("<{tag} ");
        svg.split(open.as_str())
            .skip(1)
            .map(|rest| rest.split('>').next().unwrap_or(""))
            .filter(|e| attrs.iter().all(|a| e.contains(a)))
            .collect()
    }

    /// The `<text>` elements: (attributes, content).
    pub fn texts(svg: &str) -> Vec<(&str, &str)> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|rest| {
                let (attrs, rest) = rest.split_once('>')?;
                let (content, _) = rest.split_once("</text>")?;
                Some((attrs, content.trim()))
            })
            .collect()
    }

    /// The value of attribute `name` in an element's text.
    pub fn attr(element: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let start = format!(" {element}")
            .find(&key)
            .unwrap_or_else(|| panic!("no {name} in {element}"));
        let rest = &format!(" {element}")[start + key.len()..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    }

    /// The fill attribute plotters writes for `c`.
    pub fn fill(c: RGBColor) -> String {
        format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    pub fn stroke(c: RGBColor) -> String {
        format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    #[test]
    fn svg_is_a_complete_document() {
        let s = svg(200, 100, |a| no_data(&frame(&a, "T")?, "no data")).unwrap();
        assert!(s.starts_with("<svg"), "{s}");
        assert!(s.trim_end().ends_with("</svg>"), "{s}");
        assert!(s.contains(">\nno data\n</text>"), "{s}");
    }

    #[test]
    fn svg_passes_the_draw_error_on() {
        assert_eq!(
            svg(10, 10, |_| Err(ChartError::Drawing("boom".to_string()))),
            Err(ChartError::Drawing("boom".to_string()))
        );
    }

    #[test]
    fn cut_keeps_one_short_line() {
        assert_eq!(cut("a\nb", 10), "a b");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abcd", 4), "abcd");
    }

    #[test]
    fn every_chart_escapes_a_script_label() {
        let evil = "<script>alert(1)</script>".to_string();
        let charts = [
            ChartData::ScoreBars(vec![Bar {
                label: evil.clone(),
                value: 50.0,
                ci: Some([40.0, 60.0]),
            }]),
            ChartData::Scatter(vec![Point {
                label: evil.clone(),
                x: 50.0,
                y: 50.0,
            }]),
            ChartData::Heatmap {
                rows: vec![evil.clone()],
                cols: vec![evil.clone()],
                values: vec![vec![Some(50.0)]],
                counts: vec![3],
            },
            ChartData::StackedShares {
                groups: vec![evil.clone()],
                parts: vec![evil.clone()],
                shares: vec![vec![100.0]],
            },
            ChartData::Histogram(vec![1; 11]),
        ];
        for c in charts {
            let s = svg(640, 400, |a| c.draw(a, &evil)).unwrap();
            assert!(!s.contains("<script"), "{c:?}: {s}");
            assert!(
                s.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
                "{c:?}: {s}"
            );
        }
    }

    #[test]
    fn chart_data_draws_its_own_chart() {
        let c = ChartData::Histogram(vec![0, 1, 2]);
        let a = svg(400, 300, |a| c.draw(a, "t")).unwrap();
        let b = svg(400, 300, |a| histogram(a, "t", &[0, 1, 2])).unwrap();
        assert_eq!(a, b);
    }
}
