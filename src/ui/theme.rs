//! Light and dark themes: follow the system until the user picks one, then remember it.
use leptos::prelude::*;

fn apply(theme: &str) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        if theme == "system" {
            let _ = root.remove_attribute("data-theme");
        } else {
            let _ = root.set_attribute("data-theme", theme);
        }
    }
}

#[component]
pub fn ThemeSwitch() -> impl IntoView {
    // index.html's first script applied the remembered theme before the first paint (no flash
    // of the other theme, and the storage is read while the page still waits for its wasm).
    // (At build time, prerendering, there is no page: the system's theme.)
    #[cfg(target_arch = "wasm32")]
    let initial = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|root| root.get_attribute("data-theme"))
        .filter(|t| t == "light" || t == "dark")
        .unwrap_or_else(|| "system".into());
    #[cfg(not(target_arch = "wasm32"))]
    let initial = String::from("system");
    let theme = RwSignal::new(initial);
    if crate::components::stand_in::active() {
        // index.html's script shows the remembered theme's option (`data-value`).
        let options = THEMES
            .iter()
            .map(|(v, text)| (v.to_string(), text.to_string()))
            .collect();
        return view! {
            <label class="theme">
                <span class="sr-only">"Theme"</span>
                {crate::components::stand_in::select(options, &theme.get_untracked())}
            </label>
        }
        .into_any();
    }
    view! {
        <label class="theme">
            <span class="sr-only">"Theme"</span>
            <select
                aria-label="Theme"
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    apply(&v);
                    let _ = crate::storage::keep("theme", &v);
                    theme.set(v);
                }
                prop:value=move || theme.get()
            >
                {THEMES
                    .into_iter()
                    .map(|(v, text)| view! { <option value=v>{text}</option> })
                    .collect_view()}
            </select>
        </label>
    }
    .into_any()
}

/// The switch's options: (value, text).
const THEMES: [(&str, &str); 3] = [
    ("system", "System theme"),
    ("light", "Light"),
    ("dark", "Dark"),
];
