//! A core `report::Table` as an accessible HTML table: sortable by any column, best value bold
//! and second underlined (the marks come from the core, as in the CLI's output), and
//! exportable as CSV, Markdown or LaTeX by the same core functions the CLI uses.

use crate::loading::download;
use leptos::prelude::*;
use leptos::tachys::html::attribute::custom::CustomAttribute;
use repoprobe_core::report::{self, Mark, Table};
use repoprobe_core::sort::SharedSort;

/// What a cell sorts by: numbers first, as numbers; then texts, lower-cased.
enum SortKey {
    Number(f64),
    Text(String),
}

fn sort_key(cell: &str) -> SortKey {
    // Numbers sort as numbers (a CI "lo–hi" by its lower end); the rest as text.
    let head = cell.split('–').next().unwrap_or(cell);
    match head.parse::<f64>() {
        Ok(n) => SortKey::Number(n),
        Err(_) => SortKey::Text(cell.to_lowercase()),
    }
}

/// A note shown in one cell of some rows (not exported: the exports are the core's table), each
/// row found by the text of its first two cells (a leaderboard's model and judge).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowNotes {
    pub column: usize,
    /// ((first cell, second cell), note); a list, not a map: a few rows at most.
    pub notes: Vec<((String, String), String)>,
}

/// What some rows carry beyond their cells (not exported: the exports are the core's table),
/// each row found by the text of its first two cells as [`RowNotes`]' are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowExtras {
    pub rows: Vec<((String, String), RowExtra)>,
}

/// One row's extras.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowExtra {
    /// The row's `data-group`: rows sharing it are one group (the leaderboard's models that
    /// no pair separates).
    pub group: Option<String>,
    /// Whether the row is shaded (a group, told apart from the next).
    pub shaded: bool,
    /// (column, text): a cell's hover (`title`), which says how its number was computed.
    pub titles: Vec<(usize, String)>,
    /// (column, note): a line under a cell's text (`.group-note`, apart from [`RowNotes`]'
    /// `.row-note`s).
    pub notes: Vec<(usize, String)>,
    /// (column, element id): the `aria-describedby` of a cell (the hover's text, in words on
    /// the page).
    pub described_by: Vec<(usize, String)>,
    /// (column, value): the unrounded half-width of the interval a cell's "± h" shows
    /// (`data-half-width`).
    pub half_width: Option<(usize, f64)>,
}

/// Why a busy table's exports are disabled.
const WAIT: &str =
    "Available once the 95% intervals have been computed: an export now would lack them";

/// Renders `table`; `id` names the element and its export files; `notes` adds a line to some
/// rows' cells; `busy`: some of its cells are still to come (`aria-busy`), and its exports
/// wait for them (disabled, saying why): an export now would lack them.
#[component]
pub fn ReportTable(
    table: Table,
    #[prop(into)] id: String,
    #[prop(optional)] notes: RowNotes,
    #[prop(optional)] extras: RowExtras,
    #[prop(optional)] busy: bool,
) -> impl IntoView {
    let notes = StoredValue::new(notes);
    let extras = StoredValue::new(extras);
    let sort = RwSignal::new(None::<(usize, bool)>);
    let t = StoredValue::new(table);
    let rows = move || {
        let mut rows = t.with_value(|t| t.rows.clone());
        if let Some((col, desc)) = sort.get() {
            sort_rows(&mut rows, col, desc);
        }
        rows
    };
    let numeric = t.with_value(|t| t.numeric.clone());
    let headers = t.with_value(|t| t.headers.clone());
    let title = t.with_value(|t| t.title.clone());
    let note = t.with_value(|t| t.note.clone());
    let file = StoredValue::new(id.clone());
    let export = move |kind: &'static str| {
        let (ext, mime, text) = t.with_value(|t| match kind {
            "csv" => ("csv", "text/csv", table_csv(t)),
            "md" => ("md", "text/markdown", report::render_markdown(t)),
            _ => ("tex", "application/x-tex", report::render_latex(t)),
        });
        download(&format!("{}.{ext}", file.get_value()), mime, &text);
    };
    let button = move |kind: &'static str, label: &'static str| {
        view! {
            <button
                type="button"
                disabled=busy
                title=busy.then_some(WAIT)
                on:click=move |_| export(kind)
            >
                {label}
            </button>
        }
    };
    view! {
        <figure class="report-table" id=id.clone() aria-busy=busy.then_some("true")>
            <div class="table-scroll">
                <table>
                    // `elementtiming`: the browser reports when the table was first painted
                    // (Element Timing API); e2e/speed.mjs times the first render by it.
                    {leptos::html::caption().attr("elementtiming", id.clone()).child(title)}
                    <thead>
                        <tr>{headers.into_iter().enumerate().map(|(i, h)| header(i, h, numeric[i], sort)).collect_view()}</tr>
                    </thead>
                    <tbody>
                        {move || {
                            let numeric = t.with_value(|t| t.numeric.clone());
                            rows()
                                .into_iter()
                                .map(|row| {
                                    let cell = |i: usize| row.get(i).map_or("", |c| c.text.as_str());
                                    let note = notes.with_value(|n| {
                                        n.notes
                                            .iter()
                                            .find(|((a, b), _)| a == cell(0) && b == cell(1))
                                            .map(|(_, text)| (n.column, text.clone()))
                                    });
                                    let extra = extras.with_value(|x| {
                                        x.rows
                                            .iter()
                                            .find(|((a, b), _)| a == cell(0) && b == cell(1))
                                            .map(|(_, e)| e.clone())
                                            .unwrap_or_default()
                                    });
                                    row_view(row, note, extra, &numeric)
                                })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
            <figcaption>
                {note.map(|n| view! { <span class="note">{n}</span> })}
                <span class="exports">
                    "Export: "
                    {button("csv", "CSV")}
                    {button("md", "Markdown")}
                    {button("tex", "LaTeX")}
                </span>
            </figcaption>
        </figure>
    }
}

/// Column `i`'s header `h`: a button that sorts by it (a number column descending first), its
/// `aria-sort` saying how the rows are sorted.
fn header(i: usize, h: String, num: bool, sort: RwSignal<Option<(usize, bool)>>) -> impl IntoView {
    let aria = move || match sort.get() {
        Some((c, true)) if c == i => "descending",
        Some((c, false)) if c == i => "ascending",
        _ => "none",
    };
    view! {
        <th scope="col" class:num=num aria-sort=aria>
            <button
                type="button"
                title="Sort by this column"
                on:click=move |_| {
                    sort.update(|s| {
                        *s = match *s {
                            Some((c, d)) if c == i => Some((i, !d)),
                            _ => Some((i, num)),
                        }
                    })
                }
            >
                {h}
            </button>
        </th>
    }
}

/// Sorts rows by column `col`: numbers first (by value, or by the number their text starts
/// with), then texts; descending if `desc`.
fn sort_rows(rows: &mut [Vec<report::Cell>], col: usize, desc: bool) {
    rows.shared_sort_by(|a, b| {
        let key = |c: &report::Cell| c.value.map_or_else(|| sort_key(&c.text), SortKey::Number);
        let o = match (key(&a[col]), key(&b[col])) {
            (SortKey::Number(x), SortKey::Number(y)) => x.total_cmp(&y),
            (SortKey::Number(_), SortKey::Text(_)) => std::cmp::Ordering::Less,
            (SortKey::Text(_), SortKey::Number(_)) => std::cmp::Ordering::Greater,
            (SortKey::Text(x), SortKey::Text(y)) => x.cmp(&y),
        };
        if desc { o.reverse() } else { o }
    });
}

/// One row: its first cell the row's header, a note in the cell of `note`'s column, and its
/// `extra` (group, shading, hovers, notes).
fn row_view(
    row: Vec<report::Cell>,
    note: Option<(usize, String)>,
    extra: RowExtra,
    numeric: &[bool],
) -> impl IntoView + use<> {
    let of = |list: &[(usize, String)], i: usize| {
        list.iter().find(|(c, _)| *c == i).map(|(_, t)| t.clone())
    };
    // The theme's panel colour (a style attribute: the page's CSP allows inline styles).
    let style = extra.shaded.then_some("background: var(--panel)");
    view! {
        <tr data-group=extra.group.clone() style=style>
            {row
                .into_iter()
                .enumerate()
                .map(|(i, cell)| {
                    let num = numeric.get(i).copied().unwrap_or(false);
                    // The unrounded value, for parity checks and copy-paste.
                    let value = cell.value.map(|v| v.to_string());
                    let text = cell.text;
                    let body = match cell.mark {
                        Mark::Best => view! { <strong>{text}</strong> }.into_any(),
                        Mark::Second => view! { <u>{text}</u> }.into_any(),
                        Mark::None => text.into_any(),
                    };
                    // The row's own note (which warns), then a group's (quieter): one list, so
                    // that a cell without either renders as before.
                    let notes = note
                        .as_ref()
                        .filter(|(c, _)| *c == i)
                        .map(|(_, text)| view! { <span class="row-note">{text.clone()}</span> }.into_any())
                        .into_iter()
                        .chain(of(&extra.notes, i).map(|text| {
                            view! {
                                <span class="group-note muted" style="display: block; font-size: .8rem; white-space: normal">
                                    {text}
                                </span>
                            }
                            .into_any()
                        }))
                        .collect_view();
                    let title = of(&extra.titles, i);
                    let described = of(&extra.described_by, i);
                    let half_width = extra
                        .half_width
                        .filter(|(c, _)| *c == i)
                        .map(|(_, h)| h.to_string());
                    if i == 0 {
                        view! { <th scope="row" title=title>{body}</th> }.into_any()
                    } else {
                        view! {
                            <td class:num=num data-value=value data-half-width=half_width title=title aria-describedby=described>
                                {body}
                                {notes}
                            </td>
                        }
                        .into_any()
                    }
                })
                .collect_view()}
        </tr>
    }
}

/// The displayed cells as CSV (the core's quoting), for any table.
fn table_csv(t: &Table) -> String {
    let mut out = t
        .headers
        .iter()
        .map(|h| report::csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in &t.rows {
        out.push_str(
            &r.iter()
                .map(|c| report::csv_field(&c.text))
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push('\n');
    }
    out
}
