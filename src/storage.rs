//! The browser's storage, the site's one module that touches it (tidy rule k): texts kept in
//! `localStorage` under a key — the Review view's decisions and reviewer, the Grade view's
//! grades and grader (their keys and formats are `pages::review::store` and
//! `pages::grade::store`), the theme picked (index.html's first script reads it back).

fn local() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The text kept under `key`, if any.
pub fn stored(key: &str) -> Option<String> {
    local().and_then(|s| s.get_item(key).ok().flatten())
}

/// `value` kept under `key`, or why not.
pub fn keep(key: &str, value: &str) -> Result<(), String> {
    let s = local().ok_or("this browser gives the page no local storage")?;
    s.set_item(key, value).map_err(|e| {
        format!(
            "the browser refused to keep it ({})",
            e.as_string()
                .unwrap_or_else(|| "storage full or blocked".into())
        )
    })
}
