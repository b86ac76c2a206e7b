//! A chart as a `<figure>`: drawn on a `<canvas>` by the pure functions in `crate::charts`
//! (through plotters-canvas) once mounted and again whenever its data change, with its title
//! as caption and PNG / SVG downloads. The exports carry the title inside the image; on the
//! page the caption shows it, so the canvas is drawn without it.
//!
//! Drawing waits for the next frame (its own task, after the tables beside it are shown), and
//! text is measured by the canvas (`measureText`): plotters' own measure on wasm adds a `<span>`
//! to the page and reads its size, a forced layout of the whole page for every label, which made
//! a chart cost tens of milliseconds of main-thread time after a large table.

use crate::charts::{ChartData, ChartError};
use crate::loading::download;
use leptos::html::Canvas;
use leptos::prelude::*;
use plotters::prelude::{DrawingBackend, IntoDrawingArea, SVGBackend};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use std::time::Duration;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Draws `data` on a `width` × `height` canvas; `id` names the element and its export files.
#[component]
pub fn Chart(
    #[prop(into)] id: String,
    #[prop(into)] title: String,
    width: u32,
    height: u32,
    #[prop(into)] data: Signal<ChartData>,
) -> impl IntoView {
    let canvas = NodeRef::<Canvas>::new();
    let error = RwSignal::new(None::<ChartError>);
    let names = StoredValue::new((id.clone(), title.clone()));
    // Each change of data draws once, after the frame that shows what changed with it; a
    // drawing overtaken by newer data is skipped.
    let drawn = StoredValue::new(0u64);
    Effect::new(move |_| {
        data.track();
        let Some(c) = canvas.get() else {
            return;
        };
        drawn.update_value(|n| *n += 1);
        let this = drawn.get_value();
        request_animation_frame(move || {
            set_timeout(
                move || {
                    if drawn.try_get_value() != Some(this) {
                        return;
                    }
                    if let Some(result) = data.try_with_untracked(|d| draw(&c, d, "")) {
                        error.try_set(result.err());
                    }
                },
                Duration::ZERO,
            )
        });
    });
    let png = move |_| {
        let (id, title) = names.get_value();
        let url = data.with_untracked(|d| {
            let c = new_canvas(width, height)?;
            draw(&c, d, &title)?;
            c.to_data_url().map_err(|_| ChartError::Png)
        });
        match url {
            Ok(url) => {
                error.set(None);
                download_url(&format!("{id}.png"), &url)
            }
            Err(e) => error.set(Some(e)),
        }
    };
    let svg = move |_| {
        let (id, title) = names.get_value();
        match data.with_untracked(|d| svg(d, width, height, &title)) {
            Ok(s) => {
                error.set(None);
                download(&format!("{id}.svg"), "image/svg+xml", &s)
            }
            Err(e) => error.set(Some(e)),
        }
    };
    view! {
        <figure class="chart" id=id>
            <figcaption>
                <span class="chart-title">{title.clone()}</span>
                {move || {
                    error.get().map(|e| view! { <span class="error" role="alert">{e.to_string()}</span> })
                }}
                <span class="exports">
                    "Export: "
                    <button type="button" on:click=png>"PNG"</button>
                    <button type="button" on:click=svg>"SVG"</button>
                </span>
            </figcaption>
            <canvas
                node_ref=canvas
                width=width.to_string()
                height=height.to_string()
                role="img"
                aria-label=title
                style="max-width: 100%; height: auto"
            ></canvas>
        </figure>
    }
}

/// Draws `data` with `title` on `canvas`, replacing what was there.
fn draw(canvas: &HtmlCanvasElement, data: &ChartData, title: &str) -> Result<(), ChartError> {
    let context = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or(ChartError::NoCanvas)?;
    let canvas = CanvasBackend::with_canvas_object(canvas.clone()).ok_or(ChartError::NoCanvas)?;
    let root = Surface::Canvas { canvas, context }.into_drawing_area();
    data.draw(root.clone(), title)?;
    root.present()
        .map_err(|e| ChartError::Drawing(e.to_string()))
}

/// `data` with `title` as a `width` × `height` SVG document (the export).
fn svg(data: &ChartData, width: u32, height: u32, title: &str) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root =
            Surface::Svg(SVGBackend::with_string(&mut out, (width, height))).into_drawing_area();
        data.draw(root.clone(), title)?;
        root.present()
            .map_err(|e| ChartError::Drawing(e.to_string()))?;
    }
    Ok(out)
}

/// What a chart is drawn on: the page's canvas, or the export's SVG. One backend type for both,
/// so that the charts' generic code, and plotters' under it, is compiled once rather than once
/// per backend (issue 56: the page's wasm −8.4 KB gzipped).
enum Surface<'a> {
    /// plotters' canvas backend with text measured by the canvas's own `measureText` (same
    /// font string as `CanvasBackend::draw_text` uses), never by laying out the page.
    Canvas {
        canvas: CanvasBackend,
        context: CanvasRenderingContext2d,
    },
    Svg(SVGBackend<'a>),
}

/// A backend's failure, in its words: the canvas's and the SVG writer's are of other types.
#[derive(Debug)]
struct SurfaceError(String);

impl std::fmt::Display for SurfaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SurfaceError {}

type SurfaceResult<T = ()> = Result<T, DrawingErrorKind<SurfaceError>>;

/// A backend's result as the surface's.
fn lift<T, E: std::error::Error + Send + Sync>(
    r: Result<T, DrawingErrorKind<E>>,
) -> SurfaceResult<T> {
    r.map_err(|e| match e {
        DrawingErrorKind::DrawingError(e) => {
            DrawingErrorKind::DrawingError(SurfaceError(e.to_string()))
        }
        DrawingErrorKind::FontError(e) => DrawingErrorKind::FontError(e),
    })
}

/// The same call on whichever backend the surface is.
macro_rules! on_backend {
    ($surface:expr, $b:ident => $call:expr) => {
        match $surface {
            Surface::Canvas { canvas: $b, .. } => lift($call),
            Surface::Svg($b) => lift($call),
        }
    };
}

impl DrawingBackend for Surface<'_> {
    type ErrorType = SurfaceError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Surface::Canvas { canvas, .. } => canvas.get_size(),
            Surface::Svg(svg) => svg.get_size(),
        }
    }
    fn ensure_prepared(&mut self) -> SurfaceResult {
        on_backend!(self, b => b.ensure_prepared())
    }
    fn present(&mut self) -> SurfaceResult {
        on_backend!(self, b => b.present())
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> SurfaceResult {
        on_backend!(self, b => b.draw_pixel(point, color))
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> SurfaceResult {
        on_backend!(self, b => b.draw_line(from, to, style))
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> SurfaceResult {
        on_backend!(self, b => b.draw_rect(upper_left, bottom_right, style, fill))
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> SurfaceResult {
        on_backend!(self, b => b.draw_path(path, style))
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> SurfaceResult {
        on_backend!(self, b => b.draw_circle(center, radius, style, fill))
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> SurfaceResult {
        on_backend!(self, b => b.fill_polygon(vert, style))
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> SurfaceResult {
        on_backend!(self, b => b.draw_text(text, style, pos))
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> SurfaceResult<(u32, u32)> {
        let Surface::Canvas { context, .. } = self else {
            return on_backend!(self, b => b.estimate_text_size(text, style));
        };
        context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str(),
        ));
        let m = context.measure_text(text).map_err(|e| {
            DrawingErrorKind::FontError(format!("measureText failed: {e:?}").into())
        })?;
        let height = m.font_bounding_box_ascent() + m.font_bounding_box_descent();
        Ok((m.width().round() as u32, height.ceil() as u32))
    }
}

/// A canvas that is not on the page, for the PNG export.
fn new_canvas(width: u32, height: u32) -> Result<HtmlCanvasElement, ChartError> {
    let c = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|e| e.dyn_into::<HtmlCanvasElement>().ok())
        .ok_or(ChartError::NewCanvas)?;
    c.set_width(width);
    c.set_height(height);
    Ok(c)
}

/// Saves `url` (a data URL) as `name`.
fn download_url(name: &str, url: &str) {
    let a = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok());
    if let Some(a) = a {
        a.set_href(url);
        a.set_download(name);
        a.click();
    }
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use crate::charts::Bar;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    fn bars(v: f64) -> ChartData {
        ChartData::ScoreBars(vec![
            Bar {
                label: "<script>alert(1)</script>".into(),
                value: v,
                ci: Some([v - 10.0, v + 5.0]),
            },
            Bar {
                label: "GPT-5.2".into(),
                value: 30.0,
                ci: None,
            },
        ])
    }

    fn mount(data: Signal<ChartData>) -> web_sys::Element {
        let doc = document();
        let host = doc.create_element("div").unwrap();
        doc.body().unwrap().append_child(&host).unwrap();
        let el: web_sys::HtmlElement = host.clone().unchecked_into();
        std::mem::forget(mount_to(el, move || {
            view! { <Chart id="overall" title="Overall per model" width=480 height=300 data=data /> }
        }));
        host
    }

    /// Waits for the next frame and a little after: charts draw in a task after the frame.
    async fn tick() {
        let frame = js_sys::Promise::new(&mut |resolve, _| {
            web_sys::window()
                .unwrap()
                .request_animation_frame(&resolve)
                .unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(frame).await.unwrap();
        gloo_timers::future::TimeoutFuture::new(20).await;
    }

    fn blank_url() -> String {
        new_canvas(480, 300).unwrap().to_data_url().unwrap()
    }

    #[wasm_bindgen_test]
    async fn chart_draws_on_its_canvas_and_redraws_on_new_data() {
        let data = RwSignal::new(bars(80.0));
        let host = mount(data.into());
        tick().await;
        let fig = host.query_selector("figure#overall").unwrap().unwrap();
        assert!(
            fig.query_selector("figcaption")
                .unwrap()
                .unwrap()
                .text_content()
                .unwrap()
                .contains("Overall per model")
        );
        let canvas: HtmlCanvasElement = fig
            .query_selector("canvas")
            .unwrap()
            .unwrap()
            .unchecked_into();
        assert_eq!((canvas.width(), canvas.height()), (480, 300));
        let first = canvas.to_data_url().unwrap();
        assert_ne!(first, blank_url(), "the canvas was drawn on");
        data.set(bars(20.0));
        tick().await;
        assert_ne!(
            canvas.to_data_url().unwrap(),
            first,
            "new data, new drawing"
        );
        assert!(fig.query_selector(".error").unwrap().is_none());
        assert!(host.query_selector("script").unwrap().is_none());
        let buttons = fig.query_selector_all("button").unwrap();
        assert_eq!(buttons.length(), 2);
    }

    #[wasm_bindgen_test]
    fn svg_export_in_the_browser_escapes_labels_and_is_plotters_own_svg() {
        let s = svg(&bars(80.0), 480, 300, "Overall").unwrap();
        // Through the surface, the same document as plotters' SVG backend draws alone.
        let alone = crate::charts::svg(480, 300, |a| bars(80.0).draw(a, "Overall")).unwrap();
        assert_eq!(s, alone);
        assert!(s.contains("GPT-5.2"));
        assert!(!s.contains("<script"));
        assert!(s.contains("&lt;script&gt;"));
    }

    #[wasm_bindgen_test]
    fn png_export_canvas_carries_the_title() {
        let a = new_canvas(480, 300).unwrap();
        draw(&a, &bars(80.0), "").unwrap();
        let b = new_canvas(480, 300).unwrap();
        draw(&b, &bars(80.0), "Overall per model").unwrap();
        assert_ne!(a.to_data_url().unwrap(), b.to_data_url().unwrap());
        let e = new_canvas(480, 300).unwrap();
        draw(&e, &ChartData::Histogram(vec![]), "").unwrap();
        assert_ne!(
            e.to_data_url().unwrap(),
            blank_url(),
            "no data is said, not left blank"
        );
    }
}
