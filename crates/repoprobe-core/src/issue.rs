//! Problems found while loading, as data: every bad record becomes an [`Issue`] with the file,
//! where in it, and a reason a person can act on. Nothing here aborts a load.

use serde::{Deserialize, Serialize};

/// How bad an issue is; decides the exit code of `repoprobe validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Part of a record is ignored (an evidence entry that is no repository path); the record
    /// is kept and counted.
    Warning,
    /// One record is invalid or a duplicate; it is left out, the rest of the file loads.
    Record,
    /// The file (or the rest of it) cannot be read at all: not UTF-8, not JSON, unknown shape.
    File,
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Issue {
    pub file: String,
    /// `line 12` for JSONL, a JSON path such as `$.judgments[3].items[1].score` for JSON, or
    /// `line 4, column 7` for a syntax error.
    pub location: String,
    pub message: String,
    pub severity: Severity,
}

/// Untrusted values quoted in messages are cut to this many characters.
const QUOTE_MAX: usize = 60;

/// Quotes an untrusted value for a message, cut so that a 10 MB string cannot flood a report.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(QUOTE_MAX) + 4);
    out.push('"');
    let mut chars = value.chars();
    for c in chars.by_ref().take(QUOTE_MAX) {
        out.extend(c.escape_debug());
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out.push('"');
    out
}

/// What a problem is, in a few words a reader knows: the kinds a summary lists
/// ([`FileIssues::line`]). Read from the loader's own messages (this crate writes every one of
/// them; `kinds_of_every_loader_message` pins them).
pub fn kind(issue: &Issue) -> &'static str {
    let m = issue.message.as_str();
    let has = |s: &str| m.contains(s);
    if m.starts_with("not JSON") {
        "not JSON"
    } else if m.starts_with("the file is empty") {
        "empty file"
    } else if m.starts_with("not UTF-8") {
        "not UTF-8 text"
    } else if has("recursion limit exceeded") {
        "nested too deep"
    } else if has("NaN and Infinity are not numbers") {
        "not a JSON number"
    } else if has("EOF while parsing") {
        "cut short"
    } else if m.starts_with("invalid JSON") {
        "broken JSON"
    } else if m.starts_with("the browser could not read") {
        "unreadable file"
    } else if m.starts_with("unknown file format") {
        "unknown file format"
    } else if m.starts_with("unsupported version") {
        "unsupported version"
    } else if m.starts_with("a record must be a JSON object") {
        "not a JSON object"
    } else if m.starts_with("cannot tell what this record is") {
        "not a RepoProbe record"
    } else if m.starts_with("duplicate key") || m.starts_with("duplicate field") {
        "duplicate key"
    } else if m.starts_with("duplicate ") {
        "duplicate record"
    } else if has("of unknown question") || has("unknown question ") {
        "unknown question"
    } else if m.starts_with("judgment of a failed run") {
        "judgment of a failed run"
    } else if m.starts_with("invalid question") {
        if has("checklist") || has("rubric") || has("weight") || has("clarity item") {
            "invalid checklist"
        } else {
            "invalid question"
        }
    } else if has("is not allowed: the rubric allows") {
        "score not allowed"
    } else if has("is not in the checklist") {
        "item not in the checklist"
    } else if has("is scored twice") {
        "item scored twice"
    } else if has("missing item(s)") {
        "missing item"
    } else if has("max_per_dimension") || has("not a finite number") {
        "score out of range"
    } else if has("missing field") {
        "missing field"
    } else if has("invalid type") {
        "wrong type"
    } else if has("invalid value") || has("unknown variant") || has("invalid length") {
        "value not allowed"
    } else if m.starts_with("invalid review") {
        "invalid review"
    } else {
        "other problem"
    }
}

/// The problems of one file, counted: what a summary says of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIssues {
    pub file: String,
    /// Records left out (a record with several problems counts once).
    pub records: usize,
    /// The first problem that stopped the file's reading (`Severity::File`), if any.
    pub unreadable: Option<Issue>,
    /// Whether some records were read before that problem.
    pub read_in_part: bool,
    /// Each kind of problem ([`kind`]) of the records left out, with how many issues are of
    /// it, most frequent first (ties in the order first met).
    pub kinds: Vec<(String, usize)>,
    /// All issues of the file.
    pub issues: usize,
    /// Of them, warnings: a part of a record ignored, the record counted.
    #[serde(default)]
    pub warnings: usize,
}

/// The record an issue's location is in: `line 12, items` → `line 12`; `$[3].items[1]` →
/// `$[3]`; `$.judgments[4].score` → `$.judgments[4]`; anything else whole.
fn record_of(location: &str) -> &str {
    if location.starts_with("line ") {
        return location.split(',').next().unwrap_or(location);
    }
    if location.starts_with('$')
        && let Some(close) = location.find(']')
    {
        return &location[..=close];
    }
    if location.starts_with("$.") {
        return "$";
    }
    location
}

/// Issues grouped per file, in the order the files first appear, each counted by kind: what the
/// CLI and the site say in one line per file ([`FileIssues::line`]).
pub fn by_file(issues: &[Issue]) -> Vec<FileIssues> {
    let mut out: Vec<FileIssues> = Vec::new();
    let mut records: Vec<std::collections::BTreeSet<&str>> = Vec::new();
    for i in issues {
        let at = match out.iter().position(|f| f.file == i.file) {
            Some(at) => at,
            None => {
                out.push(FileIssues {
                    file: i.file.clone(),
                    records: 0,
                    unreadable: None,
                    read_in_part: false,
                    kinds: Vec::new(),
                    issues: 0,
                    warnings: 0,
                });
                records.push(Default::default());
                out.len() - 1
            }
        };
        let f = &mut out[at];
        f.issues += 1;
        match i.severity {
            Severity::File if f.unreadable.is_none() => {
                f.read_in_part = i.message.contains("before it were read");
                f.unreadable = Some(i.clone());
            }
            Severity::File => {}
            Severity::Warning => f.warnings += 1,
            Severity::Record => {
                records[at].insert(record_of(&i.location));
                let k = kind(i);
                match f.kinds.iter_mut().find(|(x, _)| x == k) {
                    Some((_, n)) => *n += 1,
                    None => f.kinds.push((k.to_string(), 1)),
                }
            }
        }
    }
    for (f, r) in out.iter_mut().zip(records) {
        f.records = r.len();
        // Stable: ties keep the order first met.
        f.kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    }
    out
}

impl FileIssues {
    /// The file's name without its directories (a URL's or a path's last part).
    pub fn short_name(&self) -> &str {
        let name = self.file.trim_end_matches('/');
        name.rsplit('/').next().unwrap_or(name)
    }

    /// The kinds in words, each with its count when there are several kinds and more than one
    /// of it: `unknown question` or `score not allowed ×2, unknown question`.
    pub fn kinds_in_words(&self) -> String {
        let several = self.kinds.len() > 1;
        self.kinds
            .iter()
            .map(|(k, n)| match n {
                1 => k.clone(),
                n if several => format!("{k} ×{n}"),
                _ => k.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// One line for the file, e.g. `3 records of judgments.jsonl were not counted (unknown
    /// question, score not allowed)` or `garbage.bin could not be read: not JSON: … (line 1,
    /// column 1)`. Untrusted text (the name, quoted values) is in it as given: render it as
    /// text only.
    pub fn line(&self) -> String {
        let name = self.short_name();
        let mut out = String::new();
        if let Some(u) = &self.unreadable {
            let how = if self.read_in_part {
                "was read only in part"
            } else {
                "could not be read"
            };
            out += &format!("{name} {how}: {} ({})", u.message, u.location);
        }
        if self.records > 0 {
            if !out.is_empty() {
                out += "; ";
            }
            let r = if self.records == 1 {
                "1 record".to_string()
            } else {
                format!("{} records", self.records)
            };
            let were = if self.records == 1 { "was" } else { "were" };
            out += &format!(
                "{r} of {name} {were} not counted ({})",
                self.kinds_in_words()
            );
        }
        if self.warnings > 0 {
            if !out.is_empty() {
                out += "; ";
            }
            let w = if self.warnings == 1 {
                "1 warning".to_string()
            } else {
                format!("{} warnings", self.warnings)
            };
            out += &format!("{w} in {name} (part of a record ignored, the record counted)");
        }
        out
    }
}

/// The issues in one sentence per file (see [`FileIssues::line`]).
pub fn summary_lines(issues: &[Issue]) -> Vec<String> {
    by_file(issues).iter().map(FileIssues::line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BENCH: &str = include_str!("../../../testdata/golden/benchmark.jsonl");
    const J: &str = r#"{"question_id": "q1", "model": "A", "attempt": 0, "judge": "J", "judge_run": 0, "items": [{"id": "k1", "rationale": "r", "score": 5}, {"id": "k2", "rationale": "r", "score": 4}, {"id": "clarity", "rationale": "r", "score": 1}]}"#;

    /// The issues of `name` holding `bytes`, loaded after the golden benchmark.
    fn issues_of(name: &str, bytes: &[u8]) -> Vec<Issue> {
        let files = [
            crate::SourceFile {
                name: "benchmark.jsonl",
                bytes: BENCH.as_bytes(),
            },
            crate::SourceFile { name, bytes },
        ];
        let l = crate::load(&files, crate::LoadOptions::default());
        assert!(l.issues.iter().all(|i| i.file == name), "{:?}", l.issues);
        l.issues
    }

    fn one_line(name: &str, bytes: &[u8]) -> String {
        let lines = summary_lines(&issues_of(name, bytes));
        assert_eq!(lines.len(), 1, "{lines:?}");
        lines[0].clone()
    }

    #[test]
    fn kinds_of_every_loader_message() {
        let deep = format!(
            "{{\"question_id\":\"q\",\"model\":\"m\",\"answer\":\"a\",\"agent\":{}{}}}\n",
            "[".repeat(300),
            "]".repeat(300)
        );
        let mut checklist: serde_json::Value =
            serde_json::from_str(BENCH.lines().next().unwrap()).unwrap();
        checklist["id"] = "q5".into();
        let k1 = checklist["checklist"][0].clone();
        let items = checklist["checklist"].as_array_mut().unwrap();
        for i in 0..4 {
            let mut k = k1.clone();
            k["id"] = format!("x{i}").into();
            items.insert(0, k);
        }
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("garbage.bin", b"\xd0\xcf\x11\xe0".to_vec(), "not JSON"),
            ("empty.jsonl", Vec::new(), "empty file"),
            ("latin1.json", b"[\"\xe9\"]".to_vec(), "not UTF-8 text"),
            ("cut.jsonl", J.as_bytes()[..100].to_vec(), "cut short"),
            ("deep.jsonl", deep.into_bytes(), "nested too deep"),
            (
                "nan.jsonl",
                J.replace("\"score\": 5", "\"score\": NaN").into_bytes(),
                "not a JSON number",
            ),
            (
                "nan.json",
                format!("[{}]", J.replace("\"score\": 4", "\"score\": -Infinity")).into_bytes(),
                "not a JSON number",
            ),
            (
                "types.jsonl",
                J.replace("\"judge_run\": 0", "\"judge_run\": \"zero\"")
                    .into_bytes(),
                "wrong type",
            ),
            (
                "bad.jsonl",
                J.replace("\"score\": 5", "\"score\": 1").into_bytes(),
                "score not allowed",
            ),
            (
                "q9.jsonl",
                J.replace("\"q1\"", "\"q9\"").into_bytes(),
                "unknown question",
            ),
            (
                "dup.jsonl",
                format!("{J}\n{J}\n").into_bytes(),
                "duplicate record",
            ),
            (
                "dupkey.jsonl",
                J.replace("\"model\": \"A\"", "\"model\": \"A\", \"model\": \"B\"")
                    .into_bytes(),
                "duplicate key",
            ),
            (
                "checklist.jsonl",
                checklist.to_string().into_bytes(),
                "invalid checklist",
            ),
            (
                "missing.jsonl",
                J.replace(r#", {"id": "k2", "rationale": "r", "score": 4}"#, "")
                    .into_bytes(),
                "missing item",
            ),
            (
                "package.json",
                br#"{"name": "x", "version": "1.0"}"#.to_vec(),
                "not a RepoProbe record",
            ),
            ("list.json", b"[[1]]".to_vec(), "not a JSON object"),
            (
                "other.json",
                br#"{"format": "zip", "judgments": []}"#.to_vec(),
                "unknown file format",
            ),
        ];
        for (name, bytes, want) in cases {
            let issues = issues_of(name, &bytes);
            assert!(!issues.is_empty(), "{name}: no issue");
            assert_eq!(kind(&issues[0]), want, "{name}: {:?}", issues[0]);
        }
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_with_the_reason_and_where() {
        assert_eq!(
            one_line("garbage.bin", b"\xd0\xcf\x11\xe0"),
            "garbage.bin could not be read: not JSON: a RepoProbe file starts with `[`, `{` or a \
             JSON object per line, found byte 0xd0 (line 1, column 1)"
        );
        assert_eq!(
            one_line("dir/empty.jsonl", b""),
            "empty.jsonl could not be read: the file is empty: expected JSON or JSONL records (file)"
        );
        // Records before a break were read: "in part", and the message says how many. (In
        // JSONL a torn line is one record left out, the next lines are read.)
        let cut = format!("[{J},\n{}", &J[..100]);
        let line = one_line("cut.json", cut.as_bytes());
        assert!(
            line.starts_with("cut.json was read only in part: "),
            "{line}"
        );
        assert!(
            line.contains("the 1 record(s) before it were read"),
            "{line}"
        );
        let line = one_line("cut.jsonl", format!("{J}\n{}", &J[..100]).as_bytes());
        assert_eq!(line, "1 record of cut.jsonl was not counted (cut short)");
    }

    #[test]
    fn records_left_out_are_counted_once_each_with_their_kinds() {
        let text = [
            J.replace("\"q1\"", "\"q9\""),
            J.replace("\"score\": 5", "\"score\": 1"),
            // Two problems in one record: one record left out.
            J.replace("\"score\": 5", "\"score\": 2")
                .replace("\"score\": 4", "\"score\": 3")
                .replace("\"judge_run\": 0", "\"judge_run\": 1"),
            J.to_string(),
        ]
        .join("\n");
        let issues = issues_of("https://example.org/x/judgments.jsonl", text.as_bytes());
        assert_eq!(issues.len(), 4, "{issues:?}");
        let f = &by_file(&issues)[0];
        assert_eq!(f.records, 3);
        assert_eq!(f.issues, 4);
        assert!(f.unreadable.is_none());
        assert_eq!(
            f.line(),
            "3 records of judgments.jsonl were not counted (score not allowed ×3, unknown question)"
        );
        // One kind: no count beside it.
        assert_eq!(
            one_line("q9.jsonl", J.replace("\"q1\"", "\"q9\"").as_bytes()),
            "1 record of q9.jsonl was not counted (unknown question)"
        );
    }

    #[test]
    fn warnings_are_said_apart_from_records_left_out() {
        let mut q: serde_json::Value = serde_json::from_str(BENCH.lines().next().unwrap()).unwrap();
        q["id"] = "q8".into();
        q["checklist"][0]["evidence"] = serde_json::json!(["/abs", "ok.py"]);
        let text = format!("{q}\n{}", J.replace("\"q1\"", "\"q9\""));
        let issues = issues_of("w.jsonl", text.as_bytes());
        let f = &by_file(&issues)[0];
        assert_eq!((f.records, f.warnings, f.issues), (1, 1, 2));
        assert_eq!(
            f.line(),
            "1 record of w.jsonl was not counted (unknown question); 1 warning in w.jsonl (part \
             of a record ignored, the record counted)"
        );
    }

    #[test]
    fn files_in_the_order_first_met_and_locations_to_records() {
        let issue = |file: &str, location: &str, severity| Issue {
            file: file.into(),
            location: location.into(),
            message: "invalid type: string \"x\", expected u32".into(),
            severity,
        };
        let issues = [
            issue("b.json", "$[3].items[1].score", Severity::Record),
            issue("a.json", "$.judgments[4].score", Severity::Record),
            issue("b.json", "$[3].judge_run", Severity::Record),
            issue("b.json", "$[4]", Severity::Record),
            issue("a.json", "$.judgments[4]", Severity::Record),
            issue("c.jsonl", "line 7, items", Severity::Record),
            issue("c.jsonl", "line 7", Severity::Record),
            issue("d.json", "$.judge_run", Severity::Record),
        ];
        let got: Vec<(String, usize)> = by_file(&issues)
            .into_iter()
            .map(|f| (f.file, f.records))
            .collect();
        assert_eq!(
            got,
            [
                ("b.json".to_string(), 2),
                ("a.json".to_string(), 1),
                ("c.jsonl".to_string(), 1),
                ("d.json".to_string(), 1)
            ]
        );
        assert!(by_file(&[]).is_empty());
    }

    #[test]
    fn quote_cuts_long_values_and_escapes_controls() {
        let long = "x".repeat(1000);
        let q = quote(&long);
        assert!(q.chars().count() < 70, "{q}");
        assert!(q.ends_with("…\""));
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
    }
}
