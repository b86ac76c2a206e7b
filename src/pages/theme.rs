//! Light and dark themes: follow the system until the user picks one, then remember it.
use leptos::prelude::*;

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

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
    let initial = storage()
        .and_then(|s| s.get_item("theme").ok().flatten())
        .unwrap_or_else(|| "system".into());
    apply(&initial);
    let theme = RwSignal::new(initial);
    view! {
        <label class="theme">
            <span class="sr-only">"Theme"</span>
            <select
                aria-label="Theme"
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    apply(&v);
                    if let Some(s) = storage() {
                        let _ = s.set_item("theme", &v);
                    }
                    theme.set(v);
                }
                prop:value=move || theme.get()
            >
                <option value="system">"System theme"</option>
                <option value="light">"Light"</option>
                <option value="dark">"Dark"</option>
            </select>
        </label>
    }
}
