//! Prints the site's landing view as HTML, rendered natively from the app's own components
//! (`repoprobe_site::prerender`), for `scripts/prerender.mjs` to put into the built index.html.
//!
//! `prerender [PUBLIC_DATA_DIR]` (default `public-data`); exits 1 with the reason on stderr.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    let dir = std::env::args_os()
        .nth(1)
        .unwrap_or_else(|| "public-data".into());
    match repoprobe_site::prerender::load_landing(std::path::Path::new(&dir)) {
        Ok(landing) => {
            print!("{}", repoprobe_site::prerender::render(landing));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("prerender: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

// Trunk builds only the `data-bin`s for the browser; this one is for the build machine.
#[cfg(target_arch = "wasm32")]
fn main() {}
