//! Look-alikes of form controls for the landing view rendered at build time (`prerender`).
//!
//! A fresh browser lays out its first `<select>`s, number inputs, checkboxes and file inputs
//! slowly (each brings its shadow tree and extra style and layout passes before the first
//! paint: issue 14, benches/README "Site first paint"), and the prerendered copy's controls act
//! on nothing anyway: the app replaces the whole copy at takeover (`crate::takeover`), a
//! visitor without JavaScript cannot use them. So the prerender writes these instead: plain
//! boxes the stylesheet sizes exactly as the real controls (`.stand-in`, no layout shift at
//! takeover), hidden from assistive technology, with the text the control would show.
//!
//! Whether to write them is a context only the prerender provides ([`Prerendering`]): in the
//! browser [`active`] is false and every view writes its real controls.

use leptos::prelude::*;

/// Provided (as context) by the build-time prerender only.
#[derive(Clone, Copy, Debug)]
pub struct Prerendering;

/// Whether the view is being rendered at build time: write stand-ins, not controls.
pub fn active() -> bool {
    use_context::<Prerendering>().is_some()
}

/// A `<select>`'s look-alike: every option's text in one grid cell (the box is as wide as the
/// widest, as the select is), only the chosen one (`value`) shown. `options` are (value, text).
pub fn select(options: Vec<(String, String)>, value: &str) -> impl IntoView + use<> {
    let chosen = options
        .iter()
        .position(|(v, _)| v == value)
        .unwrap_or_default();
    view! {
        <span class="stand-in select" aria-hidden="true">
            {options
                .into_iter()
                .enumerate()
                .map(|(i, (v, text))| {
                    view! { <span data-value=v class:shown=i == chosen>{text}</span> }
                })
                .collect_view()}
        </span>
    }
}

/// A number input's look-alike showing `value`.
pub fn number(value: String) -> impl IntoView {
    view! { <span class="stand-in number" aria-hidden="true">{value}</span> }
}

/// A checkbox's look-alike.
pub fn checkbox(checked: bool) -> impl IntoView {
    view! { <span class="stand-in checkbox" class:checked=checked aria-hidden="true"></span> }
}
