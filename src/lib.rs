//! The RepoProbe results site: a Leptos (client-side rendered) app that loads released
//! benchmark files and judge outputs, recomputes every table with `repoprobe-core` — the same
//! code and defaults as `repoprobe score` — and shows them.
//!
//! The URL is the state: `?view=question&id=...&missing=exclude` reproduces a view, so every
//! view is a link. Query parameters rather than paths keep deep links working on any static
//! host, under any sub-path, without server rewrites.

pub mod charts;
pub mod components;
pub mod loading;
pub mod pages;
pub mod protocol;
pub mod state;

use leptos::prelude::*;
use leptos_router::components::Router;
use leptos_router::hooks::use_query_map;
use state::AppState;
use wasm_bindgen::JsCast;

/// Mounts the app on `<body>`.
pub fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// A link to the current view with some query parameters set (`Some`) or removed (`None`).
pub fn href(set: &[(&str, Option<&str>)]) -> String {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search)
        .unwrap_or_else(|_| web_sys::UrlSearchParams::new().expect("URLSearchParams"));
    for (k, v) in set {
        match v {
            Some(v) => params.set(k, v),
            None => params.delete(k),
        }
    }
    let q: String = params.to_string().into();
    if q.is_empty() {
        "?".to_string()
    } else {
        format!("?{q}")
    }
}

/// A link to another view: only the options that hold across views are kept.
pub fn view_href(view: &str, extra: &[(&str, &str)]) -> String {
    let mut set: Vec<(&str, Option<&str>)> = vec![("view", Some(view))];
    for k in [
        "id", "model", "a", "b", "item", "axis", "category", "theme", "language", "repo", "q",
        "sort",
    ] {
        set.push((k, None));
    }
    for (k, v) in extra {
        set.retain(|(x, _)| x != k);
        set.push((k, Some(v)));
    }
    href(&set)
}

#[component]
fn App() -> impl IntoView {
    view! {
        <Router>
            <Shell />
        </Router>
    }
}

const VIEWS: [(&str, &str); 7] = [
    ("leaderboard", "Leaderboard"),
    ("breakdown", "Breakdown"),
    ("reliability", "Reliability"),
    ("failures", "Failure modes"),
    ("questions", "Questions"),
    ("models", "Models"),
    ("data", "Data"),
];

#[component]
fn Shell() -> impl IntoView {
    let state = state::provide_state();
    let query = use_query_map();

    let view_name = Memo::new(move |_| {
        query
            .get()
            .get("view")
            .unwrap_or_else(|| "leaderboard".into())
    });
    let dragging = RwSignal::new(false);
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            loading::load_user_files(state, files);
        }
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let input = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        if let Some(files) = input.as_ref().and_then(|i| i.files()) {
            loading::load_user_files(state, files);
        }
        if let Some(i) = input {
            i.set_value("");
        }
    };

    view! {
        <div
            class="app"
            class:dragging=move || dragging.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <header>
                <a class="brand" href=move || view_href("leaderboard", &[])>"RepoProbe results"</a>
                <nav aria-label="Views">
                    {VIEWS
                        .iter()
                        .map(|&(v, label)| {
                            view! {
                                <a
                                    // view_href reads the address bar; tracking the query
                                    // keeps the links' options (judge, policy, drop) current.
                                    href=move || { query.track(); view_href(v, &[]) }
                                    aria-current=move || (view_name.get() == v).then_some("page")
                                >
                                    {label}
                                </a>
                            }
                        })
                        .collect_view()}
                </nav>
                <label class="file-pick">
                    "Add results…"
                    <input
                        type="file"
                        multiple
                        accept=".json,.jsonl,application/json"
                        on:change=on_pick
                    />
                </label>
                <pages::theme::ThemeSwitch />
            </header>
            {move || {
                let synthetic = state.snapshot.get().synthetic();
                synthetic.then(|| view! {
                    <p class="synthetic" role="note">
                        "SYNTHETIC DATA is loaded (made by repoprobe synth): its models, questions and scores are invented."
                    </p>
                })
            }}
            <p class="busy" role="status" aria-live="polite">
                {move || state.busy.get()}
            </p>
            <main>
                {move || match view_name.get().as_str() {
                    "breakdown" => view! { <pages::breakdown::Breakdown /> }.into_any(),
                    "reliability" => view! { <pages::reliability::Reliability /> }.into_any(),
                    "failures" => view! { <pages::failures::Failures /> }.into_any(),
                    "questions" => view! { <pages::questions::Questions /> }.into_any(),
                    "question" => view! { <pages::question::QuestionDetail /> }.into_any(),
                    "models" | "model" => view! { <pages::model::ModelDetail /> }.into_any(),
                    "data" => view! { <pages::data::Data /> }.into_any(),
                    _ => view! { <pages::leaderboard::Leaderboard /> }.into_any(),
                }}
            </main>
            <footer>
                <PolicyLine state=state />
                " Drop JSON or JSONL result files anywhere on the page to add them; nothing leaves your browser."
            </footer>
        </div>
    }
}

/// The missing-answer policy in force, always on screen.
#[component]
fn PolicyLine(state: AppState) -> impl IntoView {
    view! {
        <span class="policy">
            {move || match state.options.get().missing {
                repoprobe_core::MissingPolicy::Zero => "Policy: a question without a valid judgment counts as 0 (missing = zero).",
                repoprobe_core::MissingPolicy::Exclude => "Policy: questions without a valid judgment are left out (missing = exclude).",
            }}
            " Standard deviations are sample (n − 1)."
            {move || {
                let o = state.options.get();
                let mut extra = String::new();
                if !o.drop.is_empty() {
                    extra += &format!(" WITHOUT {} question(s) you dropped.", o.drop.len());
                }
                if !o.weights.is_empty() {
                    extra += &format!(" RE-WEIGHTED: {}.", o.weights.join(", "));
                }
                extra
            }}
        </span>
    }
}
