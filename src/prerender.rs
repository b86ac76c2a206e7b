//! The landing view rendered to HTML at build time, natively, so that `dist/index.html` shows
//! the paper's tables before any script runs (and to visitors without JavaScript), and the app
//! takes over a page that already shows what it will show (`crate::takeover`).
//!
//! One source of truth: the data are loaded and scored by the same core calls, with the same
//! options, as the worker's first `Loaded` (`bin/repoprobe-worker`), the state is the one the
//! app holds once that and the case studies' data arrived, and the markup comes from the app's
//! own components (`Shell`), written by tachys, which escapes every text and attribute.

use crate::options::score_options;
use crate::protocol::{BundledSet, Origin, QuestionData, ReportError, Snapshot, ViewOptions};
use crate::state::{AppState, InputFile, Shared};
use leptos::prelude::*;
use leptos::tachys::view::RenderHtml;
use repoprobe_core::{LoadOptions, SourceFile, load, score};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The manifest of bundled sets (`public-data/index.json`), as the worker's start script reads it.
#[derive(serde::Deserialize)]
struct Manifest {
    default: Option<String>,
    sets: BTreeMap<String, SetEntry>,
}

#[derive(serde::Deserialize)]
struct SetEntry {
    #[serde(default)]
    label: String,
    #[serde(default)]
    case_studies: bool,
    files: Vec<String>,
}

/// What the app holds after its first load of the default bundled set with no option in the
/// address: the files (as `Started` lists them), the snapshot and report (as `Loaded` carries
/// them), and every question's data (as `Question` answers carry them).
pub struct Landing {
    pub set: BundledSet,
    pub files: Vec<InputFile>,
    pub snapshot: Snapshot,
    pub report: Result<repoprobe_core::ScoreReport, ReportError>,
    pub questions: BTreeMap<String, QuestionData>,
}

/// Why the landing view could not be had: the bundled data the build reads are missing or not
/// what the site serves. Each message starts with the file to look at.
// The inner error's words are in the message, so it is no `source` (a chain would say them twice).
#[derive(Debug, thiserror::Error)]
pub enum LandingError {
    /// The manifest or a file it lists could not be read (not there: a wrong directory given).
    #[error("{}: {why}", path.display())]
    Unreadable { path: PathBuf, why: std::io::Error },
    /// The manifest (`index.json`) is not one.
    #[error("{}: {why}", path.display())]
    NotAManifest {
        path: PathBuf,
        why: serde_json::Error,
    },
    /// The manifest's default names a set it does not have.
    #[error("{}: no bundled data set named {name:?}", path.display())]
    NoSet { path: PathBuf, name: String },
}

/// Loads the manifest's default set from `public_data` (the directory the site serves as
/// `public-data/`) as the worker does for the bare landing page.
pub fn load_landing(public_data: &Path) -> Result<Landing, LandingError> {
    let read = |path: PathBuf| match std::fs::read(&path) {
        Ok(bytes) => Ok(bytes),
        Err(why) => Err(LandingError::Unreadable { path, why }),
    };
    let path = public_data.join("index.json");
    let manifest: Manifest = match serde_json::from_slice(&read(path.clone())?) {
        Ok(m) => m,
        Err(why) => return Err(LandingError::NotAManifest { path, why }),
    };
    let name = manifest.default.unwrap_or_else(|| "paper".into());
    let Some(entry) = manifest.sets.get(&name) else {
        return Err(LandingError::NoSet { path, name });
    };
    let mut files = Vec::new();
    let mut bytes = Vec::new();
    for f in &entry.files {
        let b = read(public_data.join(f))?;
        // The name the worker gives it: its URL, relative to the page.
        let name = format!("public-data/{f}");
        files.push(InputFile {
            name: name.clone(),
            origin: Origin::Bundled,
            size: b.len(),
        });
        bytes.push((name, b));
    }
    let sources: Vec<SourceFile> = bytes
        .iter()
        .map(|(name, bytes)| SourceFile { name, bytes })
        .collect();
    // As the worker's `reload`: the tables from a load without the texts, the questions' data
    // from the full load.
    let fast = load(
        &sources,
        LoadOptions {
            skip_text: true,
            ..LoadOptions::default()
        },
    );
    let snapshot = Snapshot::of(&fast);
    let report = score_options(&ViewOptions::default())
        .map_err(ReportError::from)
        .and_then(|mut o| {
            o.items = false;
            Ok(score(&fast.dataset, &fast.issues, &o)?)
        });
    let full = load(&sources, LoadOptions::default());
    let questions = snapshot
        .questions
        .iter()
        .map(|q| (q.id.clone(), QuestionData::of(&full.dataset, &q.id)))
        .collect();
    Ok(Landing {
        set: BundledSet {
            name,
            label: entry.label.clone(),
            case_studies: entry.case_studies,
        },
        files,
        snapshot,
        report,
        questions,
    })
}

/// Effects are the browser's business (drawing charts, focusing, asking the worker): handed to
/// this executor, they are dropped, not run.
struct NoEffects;

impl any_spawner::CustomExecutor for NoEffects {
    fn spawn(&self, _: any_spawner::PinnedFuture<()>) {}
    fn spawn_local(&self, _: any_spawner::PinnedLocalFuture<()>) {}
    fn poll_local(&self) {}
}

/// The app's page (`Shell`: header, landing view, footer) as HTML, for `landing`'s state.
pub fn render(landing: Landing) -> String {
    // Already set (a second render in the same process) is as good.
    let _ = any_spawner::Executor::init_custom_executor(NoEffects);
    let owner = Owner::new();
    owner.with(|| {
        let Landing {
            set,
            files,
            snapshot,
            report,
            questions,
        } = landing;
        let state = AppState {
            files: RwSignal::new(files),
            bundled_set: RwSignal::new(Some(set)),
            hashes: RwSignal::new(BTreeMap::new()),
            busy: RwSignal::new(crate::state::Busy::Idle),
            fetch_failures: RwSignal::new(Vec::new()),
            snapshot: RwSignal::new(Shared(Arc::new(snapshot))),
            options: Memo::new(|_| ViewOptions::default()),
            report: RwSignal::new(report.map(|r| Shared(Arc::new(r)))),
            intervals_pending: RwSignal::new(false),
            questions: RwSignal::new(
                questions
                    .into_iter()
                    .map(|(id, q)| (id, Shared(Arc::new(q))))
                    .collect(),
            ),
        };
        provide_context(state);
        // Look-alikes of the form controls (`components::stand_in`): quicker to a first paint.
        provide_context(crate::components::stand_in::Prerendering);
        // Rendered once, with nothing to react to: reading signals outside a tracking context
        // is what this is (debug builds would warn of each read otherwise).
        let _quiet = leptos::reactive::diagnostics::SpecialNonReactiveZone::enter();
        view! { <crate::Shell /> }.to_html()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public_data() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("public-data")
    }

    /// The figure of the reported Table 3 in `html`.
    fn reported_figure(html: &str) -> &str {
        let id = html
            .find(" id=\"reported-table3\"")
            .expect("the reported Table 3 is rendered");
        let start = html[..id].rfind("<figure").expect("in a figure");
        let end = html[start..].find("</figure>").expect("closed") + start;
        &html[start..end + "</figure>".len()]
    }

    #[test]
    fn the_landing_page_shows_the_papers_table_3_as_the_app_would() {
        let landing = load_landing(&public_data()).expect("the bundled data load");
        assert!(landing.set.case_studies, "the default set is the paper's");
        let expected = repoprobe_core::report::reported_table3(
            landing.report.as_ref().expect("a report"),
            &landing.snapshot.reported,
        )
        .expect("the paper's set has a reported Table 3");
        let html = render(landing);
        let figure = reported_figure(&html);
        // Every cell of the core's table, in order.
        let mut at = 0;
        for row in &expected.rows {
            for cell in row {
                let text = cell.text.replace('&', "&amp;").replace('<', "&lt;");
                let found = figure[at..]
                    .find(&text)
                    .unwrap_or_else(|| panic!("{text:?} after byte {at} of {figure}"));
                at += found + text.len();
            }
        }
        assert!(html.starts_with("<div class=\"app\""), "{}", &html[..80]);
        assert!(html.contains("The case studies"));
        assert!(
            !html.contains("<script"),
            "no script in the prerendered page"
        );
        insta::assert_snapshot!("reported_table3", figure);
    }

    #[test]
    fn text_from_data_is_escaped() {
        let mut landing = load_landing(&public_data()).expect("the bundled data load");
        let evil = "<img src=x onerror=alert(1)>\"'&";
        for q in &mut landing.snapshot.questions {
            q.question = evil.into();
            q.repo.name = evil.into();
        }
        // Judges' names reach the look-alike of the judge select (`components::stand_in`).
        if let Ok(report) = &mut landing.report {
            report.judge = Some(evil.into());
            for m in &mut report.models {
                m.judge = evil.into();
            }
        }
        let html = render(landing);
        assert!(!html.contains("<img"), "raw markup from data");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("most judgments (&lt;img src=x onerror=alert(1)&gt;"));
    }

    #[test]
    fn a_directory_without_the_bundled_data_names_the_file_it_lacks() {
        let dir = public_data().join("no-such-directory");
        let Err(e) = load_landing(&dir) else {
            panic!("a landing from a directory that is not there");
        };
        assert!(
            matches!(&e, LandingError::Unreadable { path, .. } if *path == dir.join("index.json")),
            "{e:?}"
        );
        assert!(
            e.to_string()
                .starts_with(&dir.join("index.json").display().to_string()),
            "{e}"
        );
    }

    #[test]
    fn form_controls_are_prerendered_as_look_alikes_hidden_from_assistive_technology() {
        let html = render(load_landing(&public_data()).expect("the bundled data load"));
        for control in ["<select", "<input", "<textarea"] {
            assert!(!html.contains(control), "{control} in the prerendered page");
        }
        let look_alikes: Vec<&str> = html
            .match_indices("class=\"stand-in")
            .map(|(i, _)| &html[html[..i].rfind('<').expect("in a tag")..i])
            .collect();
        // The header's checkbox and theme select; the folded controls' two selects, number input,
        // checkbox, date input, and the clusters' and intervals' selects.
        assert_eq!(look_alikes.len(), 9, "{look_alikes:?}");
        for tag in look_alikes {
            assert!(tag.contains("aria-hidden=\"true\""), "{tag}");
        }
    }
}
