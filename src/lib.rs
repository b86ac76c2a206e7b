//! The RepoProbe results site: a Leptos (client-side rendered) app that loads released
//! benchmark files and judge outputs, recomputes every table with `repoprobe-core` — the same
//! code and defaults as `repoprobe score` — and shows them.
//!
//! The URL is the state: `?view=question&id=...&missing=exclude` reproduces a view, so every
//! view is a link. Query parameters rather than paths keep deep links working on any static
//! host, under any sub-path, without server rewrites.
//!
//! The landing view is also rendered to HTML at build time, natively, from these same
//! components (`prerender`, `bin/prerender`): `index.html` shows the paper's tables before any
//! script runs, and without JavaScript. The app takes the page over once its own landing view
//! shows the same thing ([`takeover`]).

pub mod charts;
pub mod components;
pub mod loading;
pub mod markdown;
pub mod options;
pub mod pages;
#[cfg(not(target_arch = "wasm32"))]
pub mod prerender;
pub mod problems;
pub mod protocol;
pub mod query;
pub mod reducer;
pub mod requests;
pub mod state;
pub mod storage;
pub mod trajectory;
pub mod transport;
pub mod ui;
pub mod views;
pub mod wiring;
pub mod worker;
#[cfg(target_arch = "wasm32")]
pub mod worker_io;

use leptos::prelude::*;
use leptos_router::components::Router;
use leptos_router::params::ParamsMap;
use state::AppState;
pub use views::{View, ViewKey};
use wasm_bindgen::JsCast;

/// Mounts the app on `<body>`, beside the landing view index.html carries prerendered.
pub fn main() {
    console_error_panic_hook::set_once();
    takeover::before_mount();
    leptos::mount::mount_to_body(App);
}

/// The router's hooks where there is a router: the browser. The build-time prerender renders
/// the same components natively, where a router cannot start (it reads the browser's
/// address); there the address is the landing page's, with no query, and nothing navigates.
pub mod nav {
    use leptos::prelude::*;
    use leptos_router::NavigateOptions;
    use leptos_router::params::ParamsMap;

    /// The query of the address (`use_query_map` in the browser).
    #[cfg(target_arch = "wasm32")]
    pub fn query_map() -> Memo<ParamsMap> {
        leptos_router::hooks::use_query_map()
    }

    /// The query of the address (`use_query_map` in the browser).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn query_map() -> Memo<ParamsMap> {
        Memo::new(|_| ParamsMap::new())
    }

    /// Goes to another address of the app (`use_navigate` in the browser).
    #[cfg(target_arch = "wasm32")]
    pub fn navigate() -> impl Fn(&str, NavigateOptions) + Clone {
        leptos_router::hooks::use_navigate()
    }

    /// Goes to another address of the app (`use_navigate` in the browser).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn navigate() -> impl Fn(&str, NavigateOptions) + Clone {
        |_: &str, _: NavigateOptions| {}
    }
}

/// The landing view as the build rendered it (`<div id="prerendered">` of index.html, filled
/// by `scripts/prerender.mjs`) stays on screen until the app's own landing view shows the same
/// data; then, in the same task, it goes and the app's appears in its place (the same
/// markup but for the form controls, whose look-alikes `components::stand_in` sizes as them:
/// nothing moves). Until then the app's root is hidden by the stylesheet
/// (`#prerendered ~ .app`). An address other than the bare landing page's shows something else:
/// index.html's first script hides the prerendered view before it is painted, and the app
/// removes it at once.
pub mod takeover {
    /// The id of the prerendered landing view's container in index.html.
    pub const ID: &str = "prerendered";

    /// Whether an address's query is the one the build rendered: none. index.html's first
    /// script reads it the same way (`location.search.length <= 1`).
    pub fn renders_prerendered(search: &str) -> bool {
        search.len() <= 1
    }

    /// Removes the prerendered view now unless the address is the landing page's; else makes it
    /// inert: its buttons and links would act on nothing now that the app's own are there.
    pub fn before_mount() {
        #[cfg(target_arch = "wasm32")]
        {
            let Some(window) = web_sys::window() else {
                return;
            };
            let search = window.location().search().unwrap_or_default();
            let Some(el) = window.document().and_then(|d| d.get_element_by_id(ID)) else {
                return;
            };
            if renders_prerendered(&search) {
                let _ = el.set_attribute("inert", "");
            } else {
                el.remove();
            }
        }
    }

    /// Hands `take` the files dropped on the prerendered view so far, and those dropped on it
    /// until it goes: index.html keeps them in `__rpEarlyDrops` until this sets `__rpOnDrop`.
    pub fn early_drops(take: impl Fn(web_sys::FileList) + 'static) {
        #[cfg(target_arch = "wasm32")]
        {
            use wasm_bindgen::{JsCast, JsValue, closure::Closure};
            let Some(window) = web_sys::window() else {
                return;
            };
            if let Ok(kept) = js_sys::Reflect::get(&window, &JsValue::from_str("__rpEarlyDrops"))
                && let Ok(kept) = kept.dyn_into::<js_sys::Array>()
            {
                for files in kept.iter() {
                    if let Ok(files) = files.dyn_into::<web_sys::FileList>() {
                        take(files);
                    }
                }
                kept.set_length(0);
            }
            let hook = Closure::<dyn Fn(web_sys::FileList)>::new(take);
            let _ = js_sys::Reflect::set(&window, &JsValue::from_str("__rpOnDrop"), hook.as_ref());
            hook.forget();
        }
        #[cfg(not(target_arch = "wasm32"))]
        let _ = take;
    }

    /// Removes the prerendered view (if still there): the app's root shows in its place.
    pub fn now() {
        #[cfg(target_arch = "wasm32")]
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(ID))
        {
            el.remove();
        }
    }
}

/// A link to the current view with some query parameters set (`Some`) or removed (`None`).
#[cfg(not(target_arch = "wasm32"))]
pub fn href(set: &[(&str, Option<&str>)]) -> String {
    // The prerendered landing page's address has no query; applied as `URLSearchParams` does
    // (`set` replaces in place or appends, `delete` removes) and written as it writes, so the
    // links are the very ones the browser builds.
    let mut params: Vec<(&str, &str)> = Vec::new();
    for (k, v) in set {
        match v {
            Some(v) => match params.iter_mut().find(|(x, _)| x == k) {
                Some(p) => p.1 = v,
                None => params.push((k, v)),
            },
            None => params.retain(|(x, _)| x != k),
        }
    }
    let q = params
        .iter()
        .map(|(k, v)| format!("{}={}", form_urlencode(k), form_urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    format!("?{q}")
}

/// The `application/x-www-form-urlencoded` serializer of the URL standard, as
/// `URLSearchParams.toString()` applies it.
#[cfg(not(target_arch = "wasm32"))]
fn form_urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A link to the current view with some query parameters set (`Some`) or removed (`None`).
#[cfg(target_arch = "wasm32")]
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

/// A link to a URL that came from data (a repository's URL, ...): `Some` only for `http` and
/// `https`, so that no file can make a `javascript:`, `data:` or `vbscript:` link (anything
/// else is shown as text). The URL is read as a browser reads an `href`: leading and trailing
/// C0 controls and spaces are stripped and tabs and newlines anywhere removed before the scheme
/// is compared, case-insensitively; the cleaned URL is returned.
pub fn external_href(url: &str) -> Option<String> {
    let cleaned: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, rest) = cleaned.split_once(':')?;
    let http = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    (http && !rest.is_empty()).then_some(cleaned)
}

/// A link to another view: only the options that hold across views are kept (every
/// [`ViewKey`] is left behind but those `extra` sets).
pub fn view_href(view: View, extra: &[(&str, &str)]) -> String {
    let mut set: Vec<(&str, Option<&str>)> = vec![("view", Some(view.name()))];
    for k in ViewKey::ALL {
        set.push((k.name(), None));
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

/// The links to the views, the one shown marked.
#[component]
fn ViewLinks(query: Memo<ParamsMap>, view_name: Memo<View>) -> impl IntoView {
    view! {
        <nav aria-label="Views">
            {View::NAV
                .iter()
                .map(|&v| {
                    view! {
                        <a
                            // view_href reads the address bar; tracking the query
                            // keeps the links' options (judge, policy, drop) current.
                            href=move || { query.track(); view_href(v, &[]) }
                            aria-current=move || (view_name.get() == v).then_some("page")
                        >
                            {v.label()}
                        </a>
                    }
                })
                .collect_view()}
        </nav>
    }
}

/// "Add results…": files picked to load (the input hidden by the stylesheet: the label is
/// what shows; none at build time).
#[component]
fn FilePick(state: AppState) -> impl IntoView {
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
        <label class="file-pick">
            "Add results…"
            {(!components::stand_in::active()).then(|| view! {
                <input
                    type="file"
                    multiple
                    accept=".json,.jsonl,application/json"
                    on:change=on_pick
                />
            })}
        </label>
    }
}

#[component]
fn Shell() -> impl IntoView {
    // The build-time prerender provides the state the app has once its data arrived.
    #[cfg(target_arch = "wasm32")]
    let state = wiring::provide_state();
    #[cfg(not(target_arch = "wasm32"))]
    let state = expect_context::<AppState>();
    let query = nav::query_map();

    let view_name = Memo::new(move |_| View::parse(query.get().get("view").as_deref()));
    give_way(state, query, view_name);
    // Files dropped on the prerendered view before this app took it over (index.html kept them).
    takeover::early_drops(move |files| loading::load_user_files(state, files));
    let dragging = RwSignal::new(false);
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(files) = ev.data_transfer().and_then(|d| d.files()) {
            loading::load_user_files(state, files);
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
                <a class="brand" href=move || view_href(crate::View::Leaderboard, &[])>"RepoProbe results"</a>
                <ViewLinks query=query view_name=view_name />
                <FilePick state=state />
                <KeepBundled state=state />
                <ui::theme::ThemeSwitch />
                <components::help::KeyHelp />
            </header>
            <Sources state=state />
            <problems::LoadProblems state=state />
            {move || {
                let synthetic = state.snapshot.get().synthetic();
                synthetic.then(|| view! {
                    <p class="synthetic" role="note">
                        "SYNTHETIC DATA is loaded (made by repoprobe synth): its models, questions and scores are invented."
                    </p>
                })
            }}
            <p class="busy" role="status" aria-live="polite">
                {move || state.busy.with(state::Busy::said)}
            </p>
            <main>{move || view_name.get().page()}</main>
            <footer>
                <PolicyLine state=state />
                " Drop JSON or JSONL result files anywhere on the page to add them; nothing leaves your browser."
            </footer>
        </div>
    }
}

/// The prerendered landing view gives way once this one shows what it shows (the bundled set's
/// tables and every case study's scores), or as soon as this one will show something else
/// (another view, the user's files, an error).
fn give_way(state: AppState, query: Memo<leptos_router::params::ParamsMap>, view_name: Memo<View>) {
    // Should a case study's data never come, the app's page shows after a while all the same:
    // a page left inert for good would be worse than a row filling in.
    let fallback = StoredValue::new(false);
    Effect::new(move |done: Option<bool>| {
        if done == Some(true) {
            return true;
        }
        let elsewhere = query.with(|q| q.latest_values().next().is_some())
            || view_name.get() != View::Leaderboard;
        let busy = state.busy.get();
        let failed = matches!(busy, state::Busy::Failed(_));
        let case_studies = state
            .bundled_set
            .with(|s| s.as_ref().is_some_and(|s| s.case_studies));
        let loaded = busy.is_idle() && state.snapshot.with(|s| !s.files.is_empty());
        if loaded && !fallback.get_value() {
            fallback.set_value(true);
            set_timeout(takeover::now, std::time::Duration::from_secs(3));
        }
        let complete = loaded
            && (!case_studies
                || state.snapshot.with(|s| {
                    state
                        .questions
                        .with(|have| s.questions.iter().all(|q| have.contains_key(&q.id)))
                }));
        let go = elsewhere || failed || complete || state.user_files();
        if go {
            takeover::now();
        }
        go
    });
}

/// The switch that keeps the bundled set beside the user's files (`&keep=1`; `?set=NAME&data=…`
/// keeps it too). Shown while a bundled set is loaded.
#[component]
fn KeepBundled(state: AppState) -> impl IntoView {
    let navigate = nav::navigate();
    let stand_in = components::stand_in::active();
    move || {
        let set = state.bundled_set.get()?;
        let navigate = navigate.clone();
        let checked = move || state.options.get().keep_bundled;
        let control = if stand_in {
            components::stand_in::checkbox(checked()).into_any()
        } else {
            view! {
                <input
                    type="checkbox"
                    prop:checked=checked
                    on:change=move |ev| {
                        let keep = if event_target_checked(&ev) { "1" } else { "0" };
                        navigate(&href(&[("keep", Some(keep))]), Default::default());
                    }
                />
            }
            .into_any()
        };
        Some(view! {
            <label class="keep" title="Files you add replace the bundled example data unless this is on">
                {control}
                {format!(" Keep the bundled “{}” set with my files", set.name)}
            </label>
        })
    }
}

/// One line saying which files the numbers come from.
#[component]
fn Sources(state: AppState) -> impl IntoView {
    move || {
        let counted = state.counted_files();
        if counted.is_empty() {
            return None;
        }
        let set = state.bundled_set.get().map(|s| s.name).unwrap_or_default();
        let bundled = counted
            .iter()
            .filter(|f| f.origin == state::Origin::Bundled)
            .count();
        let own: Vec<String> = counted
            .iter()
            .filter(|f| f.origin != state::Origin::Bundled)
            .map(|f| f.name.rsplit('/').next().unwrap_or(&f.name).to_string())
            .collect();
        let mut text = String::from("Numbers from ");
        if !own.is_empty() {
            text += &format!("your {} file(s): {}", own.len(), own.join(", "));
            if bundled > 0 {
                text += &format!(", and the bundled “{set}” set ({bundled} files), kept by you.");
            } else if state
                .files
                .with(|f| f.iter().any(|f| f.origin == state::Origin::Bundled))
            {
                text += &format!(" only (they replace the bundled “{set}” set).");
            } else {
                text += ".";
            }
        } else {
            text += &format!(
                "the bundled “{set}” set ({bundled} files), an example: files you add replace it."
            );
        }
        Some(view! {
            <p class="sources" role="note">
                {text} " " <a href=view_href(crate::View::Data, &[])>"Files"</a>
            </p>
        })
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

#[cfg(test)]
mod tests {
    use super::external_href;

    #[test]
    fn only_http_and_https_urls_from_data_become_links() {
        for ok in [
            "https://github.com/a/b",
            "http://example.org/x",
            "HTTPS://GitHub.com/a/b",
            "  https://github.com/a/b\n",
            "ht\ttps://github.com/a",
        ] {
            let got = external_href(ok).unwrap_or_else(|| panic!("{ok:?} is a link"));
            assert!(got.to_ascii_lowercase().starts_with("http"), "{got}");
            assert!(!got.contains(['\t', '\n']), "{got:?}");
        }
        for bad in [
            "javascript:alert(1)",
            " JaVaScRiPt:alert(1)",
            "\u{1}javascript:alert(1)",
            "java\nscript:alert(1)",
            "java\tscript:alert(document.domain)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox(1)",
            "VBScript:msgbox(1)",
            "file:///etc/passwd",
            "//evil.example/x",
            "/relative/path",
            "github.com/a/b",
            "https:",
            "",
            "https\u{0}://x",
        ] {
            assert_eq!(external_href(bad), None, "{bad:?} must be text");
        }
    }
}
