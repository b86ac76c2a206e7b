//! Reported tables: the audit of published values.

use super::*;

#[test]
fn score_on_the_reported_tables_alone_exits_0_and_audits_them() {
    let r = run(&["score", REPORTED, "--format", "json"]);
    r.expect_code(0);
    let v = r.json();
    let audit = v["audit"].as_array().expect("an audit array");
    let t7 = audit
        .iter()
        .find(|f| f["table"] == "7" && f["column"] == "GPT-5.2")
        .unwrap_or_else(|| panic!("no Table 7 GPT-5.2 finding: {audit:#?}"));
    close(&t7["reported"], 98.9);
    assert!(
        t7["message"].as_str().unwrap().contains("98.9"),
        "{}",
        t7["message"]
    );
    assert!(
        audit
            .iter()
            .any(|f| f["table"] == "3" && f["row"] == "Qwen3-Max"),
        "no Table 3 Qwen3-Max finding: {audit:#?}"
    );
}
