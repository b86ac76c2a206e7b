//! What is loaded: files (origin, shape, size, records, SHA-256), valid records per kind, the
//! trajectories files and release manifests held, and every validation issue with its location.

use crate::protocol::{IndexHow, TrajectoryFile};
use crate::state::AppState;
use leptos::prelude::*;
use repoprobe_core::Issue;

/// The trajectories files held (the loader never reads them): runs, how each is indexed and
/// read, and why one cannot be.
fn trajectories(files: &[TrajectoryFile]) -> impl IntoView + use<> {
    (!files.is_empty()).then(|| {
        let rows = files
            .iter()
            .map(|f| {
                let how = match (f.index, f.ranged) {
                    (IndexHow::Given, true) => "its index; runs read by HTTP Range requests",
                    (IndexHow::Given, false) => "its index",
                    (IndexHow::Scanned, _) => "made by reading the file",
                    (IndexHow::None, _) => "none",
                };
                let notes: Vec<String> = f.notes.iter().cloned().chain(f.error.clone()).collect();
                view! {
                    <tr>
                        <th scope="row">{f.name.clone()}</th>
                        <td class="num">{f.bytes}</td>
                        <td class="num">{f.runs}</td>
                        <td>{how}</td>
                        <td>{notes.join("; ")}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="table-scroll">
            <table class="trajectory-files">
                <caption>"Trajectories files"</caption>
                <thead>
                    <tr>
                        <th scope="col">"File"</th>
                        <th scope="col" class="num">"Bytes"</th>
                        <th scope="col" class="num">"Runs"</th>
                        <th scope="col">"Index"</th>
                        <th scope="col">"Notes"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
            </div>
        }
    })
}

#[component]
pub fn Data() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <h1>"Data"</h1>
        <p class="policy-in-force">
            {move || format!(
                "Missing-answer policy in force: {} (change it on the Leaderboard; it is part of the URL).",
                match state.options.get().missing {
                    repoprobe_core::MissingPolicy::Zero => "a question without a valid judgment counts as 0",
                    repoprobe_core::MissingPolicy::Exclude => "questions without a valid judgment are left out",
                }
            )}
        </p>
        <BundledNotCounted state=state />
        {move || {
            let l = state.snapshot.get();
            let files = state.files.get();
            let hashes = state.hashes.get();
            let summaries = l.files.clone();
            let counts = l.counts.clone();
            let issues = l.issues.clone();
            let notes = l.notes.clone();
            view! {
                <div class="table-scroll">
                <table class="files">
                    <caption>"Files loaded"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"File"</th>
                            <th scope="col">"From"</th>
                            <th scope="col">"Shape"</th>
                            <th scope="col" class="num">"Bytes"</th>
                            <th scope="col" class="num">"Records"</th>
                            <th scope="col">"SHA-256"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {summaries
                            .into_iter()
                            .map(|s| {
                                view! {
                                    <tr>
                                        <th scope="row">{s.name.clone()}</th>
                                        <td>{files.iter().find(|f| f.name == s.name).map(|f| f.origin.label())}</td>
                                        <td>{s.shape}</td>
                                        <td class="num">{s.bytes}</td>
                                        <td class="num">{s.records}</td>
                                        <td class="hash">{hashes.get(&s.name).cloned().unwrap_or_else(|| "—".into())}</td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
                </div>
                <table class="counts">
                    <caption>"Valid records"</caption>
                    <tbody>
                        {counts
                            .into_iter()
                            .map(|(k, n)| view! { <tr><th scope="row">{k}</th><td class="num">{n}</td></tr> })
                            .collect_view()}
                    </tbody>
                </table>
                {notes.into_iter().map(|n| view! { <p class="note">{n}</p> }).collect_view()}
                {trajectories(&l.trajectories)}
                {crate::pages::releases::releases(&l.releases)}
                <h2 id="issues">{format!("Issues ({})", issues.len())}</h2>
                {issues_table(issues)}
            }
        }}
    }
}

/// The bundled files held but not counted (the user's files replace them).
#[component]
fn BundledNotCounted(state: AppState) -> impl IntoView {
    move || {
        let keep = state.options.get().keep_bundled;
        let user = state.user_files();
        let left = state.files.with(|f| {
            f.iter()
                .filter(|f| !crate::options::counted(f.origin, keep, user))
                .count()
        });
        let set = state.bundled_set.get().map(|s| s.name).unwrap_or_default();
        (left > 0).then(|| view! {
            <p class="note" role="note">
                {format!(
                    "Not counted: the bundled “{set}” set ({left} files), which your files replace. The switch “Keep the bundled … set with my files”, by “Add results…”, counts it too."
                )}
            </p>
        })
    }
}

/// Every issue of the load: file, where, problem.
fn issues_table(issues: Vec<Issue>) -> AnyView {
    if issues.is_empty() {
        return view! { <p>"No issues: every record is valid."</p> }.into_any();
    }
    view! {
        <div class="table-scroll">
        <table class="issues">
            <thead>
                <tr>
                    <th scope="col">"File"</th>
                    <th scope="col">"Where"</th>
                    <th scope="col">"Problem"</th>
                </tr>
            </thead>
            <tbody>
                {issues
                    .into_iter()
                    .map(|i| view! { <tr><td>{i.file}</td><td>{i.location.to_string()}</td><td>{i.message}</td></tr> })
                    .collect_view()}
            </tbody>
        </table>
        </div>
    }
    .into_any()
}
