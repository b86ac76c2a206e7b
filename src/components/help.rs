//! The keyboard shortcuts in a help dialog: `?` (or the header's button) opens it, Escape or
//! its button closes it and gives focus back to the page.

use leptos::html;
use leptos::prelude::*;

/// Each shortcut and what it does (the question view's keys are read in `pages/question/mod.rs`).
const KEYS: [(&str, &str); 6] = [
    ("?", "Show or hide this list"),
    ("j / →", "Next question (question view)"),
    ("k / ←", "Previous question (question view)"),
    (
        "n / p",
        "Next / previous checklist item: its rationales below the matrix",
    ),
    (
        "m / M",
        "Next / previous model: its answer beside the checklist",
    ),
    ("Esc", "Close this list"),
];

/// The Review view's keys (read in `pages/review/mod.rs`).
const REVIEW_KEYS: [(&str, &str); 10] = [
    ("?", "Show or hide this list"),
    ("j / →", "Next candidate (of those the filters show)"),
    ("k / ←", "Previous candidate"),
    (
        "1 – 4",
        "Toggle a criterion: qa_consistency, checklist_quality, task_validity, code_relevance",
    ),
    ("n", "Write the note (Escape leaves it)"),
    ("a", "Accept"),
    ("r", "Reject"),
    ("u", "Take the decision back"),
    ("Esc", "Close this list; leave the note"),
    ("Tab", "Every control is reachable by Tab too"),
];

/// The Grade view's keys (read in `pages/grade/mod.rs`).
const GRADE_KEYS: [(&str, &str); 10] = [
    ("?", "Show or hide this list"),
    (
        "0 – 9",
        "Pick a score: the key shown beside it (the score's own digit when every score is one)",
    ),
    ("↑ / ↓", "Pick the next / previous score of the rubric"),
    ("r", "Write the rationale (Escape leaves it)"),
    (
        "Enter",
        "Record your grade; then the judge's score and rationale show",
    ),
    ("j / →", "Next item (then the next answer's first)"),
    ("k / ←", "Previous item"),
    ("Esc", "Close this list; leave the rationale"),
    ("Tab", "Every control is reachable by Tab too"),
    ("Buttons", "Previous, next, record, export: each a button"),
];

#[component]
pub fn KeyHelp() -> impl IntoView {
    let open = RwSignal::new(false);
    let query = crate::nav::query_map();
    let keys = move || match crate::View::parse(query.with(|q| q.get("view")).as_deref()) {
        crate::View::Review => &REVIEW_KEYS[..],
        crate::View::Grade => &GRADE_KEYS[..],
        _ => &KEYS[..],
    };
    let close_button = NodeRef::<html::Button>::new();
    // In the browser only: the build-time prerender has no window to listen on.
    #[cfg(target_arch = "wasm32")]
    let handle = window_event_listener(leptos::ev::keydown, move |ev: web_sys::KeyboardEvent| {
        if not_a_shortcut(&ev) {
            return;
        }
        match ev.key().as_str() {
            "?" => open.update(|o| *o = !*o),
            "Escape" if open.get_untracked() => open.set(false),
            _ => {}
        }
    });
    #[cfg(target_arch = "wasm32")]
    on_cleanup(move || handle.remove());
    Effect::new(move |_| {
        if open.get()
            && let Some(b) = close_button.get()
        {
            let _ = b.focus();
        }
    });
    view! {
        <button type="button" class="help-open" aria-haspopup="dialog" on:click=move |_| open.set(true)>
            "Keys (?)"
        </button>
        <Show when=move || open.get()>
            <div class="help-backdrop" on:click=move |_| open.set(false)>
                <div
                    class="help"
                    role="dialog"
                    aria-modal="true"
                    aria-labelledby="help-title"
                    on:click=|ev| ev.stop_propagation()
                >
                    <h2 id="help-title">"Keyboard shortcuts"</h2>
                    <dl>
                        {keys().iter().map(|(k, what)| view! { <div><dt><kbd>{*k}</kbd></dt><dd>{*what}</dd></div> }).collect_view()}
                    </dl>
                    <button type="button" node_ref=close_button on:click=move |_| open.set(false)>"Close"</button>
                </div>
            </div>
        </Show>
    }
}

/// A key typed into a form field, or pressed with Ctrl, Meta or Alt, is the browser's or the
/// field's: the page's one-key shortcuts leave it alone.
pub fn not_a_shortcut(ev: &web_sys::KeyboardEvent) -> bool {
    let tag = ev
        .target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        .map(|e| e.tag_name())
        .unwrap_or_default();
    matches!(tag.as_str(), "INPUT" | "SELECT" | "TEXTAREA")
        || ev.ctrl_key()
        || ev.meta_key()
        || ev.alt_key()
}
