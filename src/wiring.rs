//! The app put together: the one `AppState`, the worker's transport connected to it and to the
//! views' asks (`crate::query`), and the requests that follow the URL's options. The one module
//! that names them all, so that state, transport, query, requests and reducer import one another
//! one way.

use crate::protocol::{Snapshot, ViewOptions};
use crate::state::{AppState, Busy, Shared, empty_report};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Creates the state and the worker and puts the state in context. Must run inside the router.
pub fn provide_state() -> AppState {
    let query = use_query_map();
    let options = Memo::new(move |_| {
        let q = query.get();
        ViewOptions::from_query(|k| q.get(k))
    });
    let state = AppState {
        files: RwSignal::new(Vec::new()),
        bundled_set: RwSignal::new(None),
        hashes: RwSignal::new(BTreeMap::new()),
        // The worker fetches the data of the URL's query at start (`bin/repoprobe-worker-start.js`)
        // and says which files it got (`Started`), then their tables (`Loaded`).
        busy: RwSignal::new(Busy::LOADING_DATA),
        fetch_failures: RwSignal::new(Vec::new()),
        snapshot: RwSignal::new(Shared(Arc::new(Snapshot::default()))),
        options,
        report: RwSignal::new(empty_report(&ViewOptions::default())),
        intervals_pending: RwSignal::new(false),
        questions: RwSignal::new(BTreeMap::new()),
    };
    crate::transport::connect(state);
    crate::query::connect(|r| crate::transport::post(r, None));
    crate::requests::follow_options(state);
    provide_context(state);
    state
}
