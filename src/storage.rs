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

/// Why a text was not kept: no storage, or the browser refused it (its words, or a guess).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeepError {
    #[error("this browser gives the page no local storage")]
    NoStorage,
    /// The browser's reason, or "storage full or blocked" when it gives none.
    #[error("the browser refused to keep it ({0})")]
    Refused(String),
}

/// `value` kept under `key`, or why not.
pub fn keep(key: &str, value: &str) -> Result<(), KeepError> {
    let s = local().ok_or(KeepError::NoStorage)?;
    s.set_item(key, value).map_err(|e| {
        KeepError::Refused(
            e.as_string()
                .unwrap_or_else(|| "storage full or blocked".into()),
        )
    })
}
