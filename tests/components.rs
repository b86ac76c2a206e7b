//! Component tests in a real browser (wasm-bindgen-test in headless Chromium): components
//! mounted alone, their DOM checked.
#![cfg(target_arch = "wasm32")]

use leptos::prelude::*;
use repoprobe_core::report::{Cell, Mark, Table, num};
use repoprobe_site::components::report_table::ReportTable;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const EVIL: &str = "<img src=x onerror=\"window.__pwned=1\">";

fn table() -> Table {
    let row = |name: &str, v: f64| -> Vec<Cell> { vec![Cell::from(name), num(Some(v))] };
    let mut t = Table {
        title: "Scores".into(),
        headers: vec!["Model".into(), "Overall".into()],
        numeric: vec![false, true],
        rows: vec![row(EVIL, 62.74), row("b", 71.0), row("c", 40.0)],
        note: Some("a note".into()),
    };
    t.mark_best(&[1]);
    t
}

fn mount() -> web_sys::Element {
    mount_busy(false)
}

/// The table mounted alone; `busy`: some of its cells are still to come.
fn mount_busy(busy: bool) -> web_sys::Element {
    let doc = document();
    let host = doc.create_element("div").unwrap();
    doc.body().unwrap().append_child(&host).unwrap();
    let el: web_sys::HtmlElement = host.clone().unchecked_into();
    std::mem::forget(mount_to(
        el,
        move || view! { <ReportTable table=table() id="t" busy=busy /> },
    ));
    host
}

fn cells(host: &web_sys::Element, sel: &str) -> Vec<String> {
    let list = host.query_selector_all(sel).unwrap();
    (0..list.length())
        .map(|i| list.item(i).unwrap().text_content().unwrap_or_default())
        .collect()
}

#[wasm_bindgen_test]
fn report_table_marks_best_and_second_and_keeps_unrounded_values() {
    let host = mount();
    assert_eq!(cells(&host, "caption"), vec!["Scores"]);
    assert_eq!(cells(&host, "tbody strong"), vec!["71.0"]);
    assert_eq!(cells(&host, "tbody u"), vec!["62.7"]);
    let td = host
        .query_selector("tbody tr td[data-value]")
        .unwrap()
        .unwrap();
    assert_eq!(td.get_attribute("data-value").as_deref(), Some("62.74"));
    assert_eq!(cells(&host, "thead th").len(), 2);
    assert_eq!(Mark::Best, table().rows[1][1].mark);
}

#[wasm_bindgen_test]
fn a_busy_tables_exports_wait_saying_why() {
    let buttons = |host: &web_sys::Element| -> Vec<(bool, Option<String>)> {
        let list = host.query_selector_all(".exports button").unwrap();
        (0..list.length())
            .map(|i| {
                let b: web_sys::HtmlButtonElement = list.item(i).unwrap().unchecked_into();
                (b.disabled(), b.get_attribute("title"))
            })
            .collect()
    };
    let busy = buttons(&mount_busy(true));
    assert_eq!(busy.len(), 3);
    for (disabled, title) in busy {
        assert!(disabled);
        assert!(title.unwrap().contains("95% intervals"));
    }
    assert_eq!(buttons(&mount_busy(false)), vec![(false, None); 3]);
}

#[wasm_bindgen_test]
fn untrusted_text_in_a_table_is_a_text_node() {
    let host = mount();
    assert_eq!(cells(&host, "tbody th")[0], EVIL);
    assert!(
        host.query_selector("img").unwrap().is_none(),
        "no element was made from the text"
    );
}

#[wasm_bindgen_test]
async fn clicking_a_header_sorts_the_rows() {
    let host = mount();
    let button: web_sys::HtmlElement = host
        .query_selector("thead th:nth-child(2) button")
        .unwrap()
        .unwrap()
        .unchecked_into();
    button.click(); // numeric columns sort descending first
    tick().await;
    assert_eq!(cells(&host, "tbody td"), vec!["71.0", "62.7", "40.0"]);
    button.click();
    tick().await;
    assert_eq!(cells(&host, "tbody td"), vec!["40.0", "62.7", "71.0"]);
}

/// Lets the reactive system flush its effects.
async fn tick() {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 10)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
}
