//! The one trajectory the worker holds, and what the view is sent of it: its outline (every
//! step's kinds and a title line), pages of its steps as they are shown, and the steps a search
//! finds. Pages, not the whole run, so that a 10,000-step, 50 MB trajectory paints its first
//! steps at once; the search runs here, over the held run, and answers step numbers only.
//!
//! What a tool call is and which files it read are the core's `facts` (the answer record's
//! `files_read` comes from the same code), never decided here again.

use crate::protocol::{
    OutlineEntry, RunError, ShownCall, ShownStep, StepKind, TrajectoryHead, TrajectoryKey,
    TrajectoryPage,
};
use repoprobe_core::facts::{Facts, ToolKind};
use repoprobe_core::model::trajectory::{
    Observation, ObservationResult, Step, StepSource, Trajectory, TrajectoryAgent,
};
use repoprobe_core::sort::SharedSort;
use repoprobe_core::trajectories::prefix::read_prefix;
use repoprobe_core::trajectories::read_line;
use serde_json::{Map, Value};

/// The most bytes of one text (a message, a tool's output) sent to the page: a step that printed
/// megabytes shows their start and says how much is left out.
pub const MAX_TEXT: usize = 64 * 1024;
/// The most characters of an outline entry's title.
pub const TITLE: usize = 80;
/// Steps a page holds unless asked for fewer (about a screenful and more).
pub const PAGE: usize = 40;
/// The most steps a page may hold.
pub const MAX_PAGE: usize = 500;
/// How much of a long line is read first, to show its first page while the rest is read
/// (a page of 40 steps of 5 KB each, the 10,000-step, 50 MB run's).
pub const FIRST_BYTES: u64 = 512 << 10;

/// A run's trajectory, read from its line, with what every page and search needs of it.
pub struct Held {
    pub key: TrajectoryKey,
    /// The file it was read from.
    pub file: String,
    trajectory: Trajectory,
    /// `extra.worktree`: the root as the agent saw it.
    root: Option<String>,
    /// Each step's kinds, by position.
    kinds: Vec<Vec<StepKind>>,
    /// Each step's searchable text, lower-cased (ASCII), made on the first search.
    search: Option<Vec<String>>,
    file_notes: Vec<String>,
    /// Read from the line's first bytes only: the steps after them, and its ATIF problems, are
    /// not known yet.
    partial: bool,
}

impl Held {
    /// The run of `key` from its line's bytes: a line of another run is refused.
    pub fn read(
        key: &TrajectoryKey,
        file: &str,
        bytes: &[u8],
        file_notes: Vec<String>,
    ) -> Result<Held, RunError> {
        let (k, trajectory) = read_line(bytes)?;
        Held::of(key, &k, file, trajectory, file_notes, false)
    }

    /// The first steps of run `key` from its line's first bytes, to be shown while the whole
    /// line is read (`None`: they hold none, or not the fields read before the steps).
    pub fn preview(
        key: &TrajectoryKey,
        file: &str,
        first: &[u8],
        file_notes: Vec<String>,
    ) -> Option<Held> {
        let p = read_prefix(first).ok()?;
        Held::of(key, &p.key, file, p.trajectory, file_notes, !p.complete).ok()
    }

    fn of(
        key: &TrajectoryKey,
        k: &TrajectoryKey,
        file: &str,
        trajectory: Trajectory,
        file_notes: Vec<String>,
        partial: bool,
    ) -> Result<Held, RunError> {
        if k != key {
            return Err(RunError::OtherRun {
                found: k.clone(),
                file: file.to_string(),
            });
        }
        let root = trajectory
            .extra_str("worktree")
            .filter(|r| !r.is_empty())
            .map(|r| r.trim_end_matches('/').to_string());
        let kinds = trajectory
            .steps
            .iter()
            .map(|s| kinds_of(s, root.as_deref()))
            .collect();
        Ok(Held {
            key: key.clone(),
            file: file.to_string(),
            trajectory,
            root,
            kinds,
            search: None,
            file_notes,
            partial,
        })
    }

    /// Whether only the first steps are held (a preview).
    pub fn partial(&self) -> bool {
        self.partial
    }

    pub fn steps(&self) -> usize {
        self.trajectory.steps.len()
    }

    /// What the view shows above the steps: the agent, the outline, notes and problems.
    pub fn head(&self) -> TrajectoryHead {
        let t = &self.trajectory;
        TrajectoryHead {
            agent: format!("{} {}", t.agent.name, t.agent.version)
                .trim()
                .to_string(),
            steps: t.steps.len() as u64,
            outline: t
                .steps
                .iter()
                .zip(&self.kinds)
                .enumerate()
                .map(|(i, (s, k))| OutlineEntry {
                    step: i as u64 + 1,
                    source: s.source,
                    kinds: k.clone(),
                    title: title(s, self.root.as_deref()),
                })
                .collect(),
            notes: t.notes.clone(),
            problems: match self.partial {
                true => Vec::new(),
                false => t.problems(),
            },
            file_notes: self.file_notes.clone(),
            partial: self.partial,
        }
    }

    fn matches(&self, i: usize, kinds: &[StepKind]) -> bool {
        kinds.is_empty() || self.kinds[i].iter().any(|k| kinds.contains(k))
    }

    /// Up to `count` steps of `kinds` (all when empty) from step `from` on (steps count from 1),
    /// with the head when `head`.
    pub fn page(&self, from: u64, kinds: &[StepKind], count: usize, head: bool) -> TrajectoryPage {
        let count = count.clamp(1, MAX_PAGE);
        let start = (from.max(1) - 1) as usize;
        let mut picked = (start..self.steps()).filter(|&i| self.matches(i, kinds));
        let steps: Vec<ShownStep> = picked.by_ref().take(count).map(|i| self.shown(i)).collect();
        TrajectoryPage {
            head: head.then(|| self.head()),
            kinds: kinds.to_vec(),
            from: from.max(1),
            steps,
            // A preview's last step is not the run's: the next page starts after it.
            next: picked
                .next()
                .map(|i| i as u64 + 1)
                .or(self.partial.then(|| self.steps() as u64 + 1)),
        }
    }

    /// Step `i` (by position) as the view shows it.
    fn shown(&self, i: usize) -> ShownStep {
        let s = &self.trajectory.steps[i];
        let root = self.root.as_deref();
        let seconds = s.timestamp.as_deref().and_then(seconds_of).and_then(|t| {
            let before = self.trajectory.steps[..i]
                .iter()
                .rev()
                .find_map(|p| p.timestamp.as_deref().and_then(seconds_of))?;
            Some(t - before)
        });
        let calls = s
            .tool_calls
            .iter()
            .flatten()
            .map(|c| {
                let result = s.result_of(&c.tool_call_id);
                let (kind, read) = call_facts(s, c, root);
                ShownCall {
                    name: c.function_name.clone(),
                    kind,
                    input: capped(relative(
                        &serde_json::to_string_pretty(&c.arguments).unwrap_or_default(),
                        root,
                    )),
                    read,
                    output: result.map(|r| capped(relative(&r.text(), root))),
                    failed: result.is_some_and(ObservationResult::is_error),
                    exit_code: result
                        .and_then(|r| r.extra.as_ref())
                        .and_then(|e| e.get("exit_code"))
                        .and_then(Value::as_i64),
                }
            })
            .collect();
        // Results that answer no call of the step (another agent's shape) are still shown.
        let mut calls: Vec<ShownCall> = calls;
        for r in s.observation.iter().flat_map(|o| o.results.iter()) {
            let answered = r
                .source_call_id
                .as_deref()
                .is_some_and(|id| s.tool_calls.iter().flatten().any(|c| c.tool_call_id == id));
            if !answered {
                calls.push(ShownCall {
                    name: "(result)".into(),
                    kind: StepKind::OTHER,
                    input: String::new(),
                    read: Vec::new(),
                    output: Some(capped(relative(&r.text(), root))),
                    failed: r.is_error(),
                    exit_code: None,
                });
            }
        }
        ShownStep {
            step: i as u64 + 1,
            source: s.source,
            kinds: self.kinds[i].clone(),
            model: s.model_name.clone(),
            timestamp: s.timestamp.clone(),
            seconds,
            text: capped(relative(&s.message.text(), root)),
            reasoning: s
                .reasoning_content
                .as_deref()
                .filter(|r| !r.is_empty())
                .map(|r| capped(r.to_string())),
            calls,
            error: step_error(s),
            tokens: s
                .metrics
                .as_ref()
                .map(|m| [m.prompt_tokens, m.completion_tokens, m.cached_tokens])
                .filter(|t| t.iter().any(Option::is_some)),
        }
    }

    /// Makes the search texts now, if not yet (after the first page is out, so that the first
    /// search does not pay for it).
    pub fn prepare_search(&mut self) {
        if self.search.is_none() {
            self.search = Some(self.trajectory.steps.iter().map(search_text).collect());
        }
    }

    /// The steps whose texts (message, reasoning, tool names, inputs, outputs) hold `query`,
    /// ignoring ASCII case; none for a blank query.
    pub fn search(&mut self, query: &str) -> Vec<u64> {
        let q = query.trim().to_ascii_lowercase();
        if q.is_empty() {
            return Vec::new();
        }
        self.prepare_search();
        let finder = memchr::memmem::Finder::new(q.as_bytes());
        self.search
            .iter()
            .flatten()
            .enumerate()
            .filter(|(_, t)| finder.find(t.as_bytes()).is_some())
            .map(|(i, _)| i as u64 + 1)
            .collect()
    }
}

/// The kind of tool call `call` of `step` and the repository paths it read: the core's
/// [`Facts`] of a trajectory of that one call (its result's failure kept, its output not
/// needed), so that a call's kind here is the kind the answer record's tally counted.
pub(crate) fn call_facts(
    step: &Step,
    call: &repoprobe_core::model::trajectory::ToolCall,
    root: Option<&str>,
) -> (StepKind, Vec<String>) {
    let mut one = Step::new(step.source, "");
    one.tool_calls = Some(vec![call.clone()]);
    if let Some(r) = step.result_of(&call.tool_call_id) {
        one.observation = Some(Observation {
            results: vec![ObservationResult {
                source_call_id: r.source_call_id.clone(),
                content: None,
                extra: r.extra.clone(),
            }],
        });
    }
    let mut t = Trajectory::new(TrajectoryAgent::default());
    if let Some(root) = root {
        t.extra = Some(Map::from_iter([(
            "worktree".to_string(),
            Value::String(root.to_string()),
        )]));
    }
    t.steps.push(one);
    let f = Facts::of(&t);
    let kind = f
        .tool_calls
        .keys()
        .next()
        .and_then(|k| ToolKind::parse(k))
        .map_or(StepKind::OTHER, StepKind::Tool);
    (kind, f.files_read)
}

/// The kinds of a step, in [`StepKind`] order, each once.
pub fn kinds_of(s: &Step, root: Option<&str>) -> Vec<StepKind> {
    let mut k = Vec::new();
    match s.source {
        StepSource::System => k.push(StepKind::System),
        StepSource::User => k.push(StepKind::User),
        StepSource::Agent => {
            if !s.message.text().trim().is_empty() {
                k.push(StepKind::Text);
            }
            for c in s.tool_calls.iter().flatten() {
                k.push(call_facts(s, c, root).0);
            }
        }
    }
    let failed = s
        .observation
        .iter()
        .flat_map(|o| o.results.iter())
        .any(ObservationResult::is_error);
    if failed || step_error(s).is_some() {
        k.push(StepKind::Error);
    }
    k.shared_sort();
    k.dedup();
    k
}

/// Why the run ended at this step (`extra.error`: `true`, or a message).
fn step_error(s: &Step) -> Option<String> {
    match s.extra.as_ref()?.get("error")? {
        Value::Bool(true) => Some("the run ended here with an error".into()),
        Value::String(e) if !e.is_empty() => Some(e.clone()),
        _ => None,
    }
}

/// A line saying what a step is: its text's first line, else its calls, cut to [`TITLE`].
fn title(s: &Step, root: Option<&str>) -> String {
    let text = s.message.text();
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let t = match line {
        Some(l) => l.to_string(),
        None => s
            .tool_calls
            .iter()
            .flatten()
            .map(|c| {
                let arg = c
                    .arguments
                    .values()
                    .find_map(|v| v.as_str())
                    .map(|a| format!(" {}", relative(a, root)))
                    .unwrap_or_default();
                format!("{}{arg}", c.function_name)
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    repoprobe_core::text::cut(&t, TITLE)
}

/// `text` with the worktree's absolute paths made relative (`/tmp/wt/src/a.rs` → `src/a.rs`,
/// the root alone → `.`).
pub fn relative(text: &str, root: Option<&str>) -> String {
    match root {
        Some(r) if !r.is_empty() && text.contains(r) => {
            text.replace(&format!("{r}/"), "").replace(r, ".")
        }
        _ => text.to_string(),
    }
}

/// At most [`MAX_TEXT`] bytes of `s` (cut at a character), saying how much is left out.
fn capped(mut s: String) -> String {
    if s.len() <= MAX_TEXT {
        return s;
    }
    let at = s.floor_char_boundary(MAX_TEXT);
    let left = s.len() - at;
    s.truncate(at);
    s.push_str(&format!("\n… ({left} more bytes not shown)"));
    s
}

/// Everything of a step a search looks in, lower-cased (ASCII), one string.
fn search_text(s: &Step) -> String {
    let mut t = step_text(s);
    t.make_ascii_lowercase();
    t
}

/// A step's texts as searched: message, reasoning, tool names, inputs (JSON) and outputs.
pub fn step_text(s: &Step) -> String {
    let mut t = s.message.text();
    if let Some(r) = &s.reasoning_content {
        t.push('\n');
        t.push_str(r);
    }
    for c in s.tool_calls.iter().flatten() {
        t.push('\n');
        t.push_str(&c.function_name);
        t.push('\n');
        t.push_str(&serde_json::to_string(&c.arguments).unwrap_or_default());
    }
    for r in s.observation.iter().flat_map(|o| o.results.iter()) {
        t.push('\n');
        t.push_str(&r.text());
    }
    t
}

/// Seconds since 1970 of an ISO 8601 time (`2026-01-02T03:04:05.678Z`, an offset `+01:00`);
/// `None` for anything else.
pub fn seconds_of(ts: &str) -> Option<f64> {
    let b = ts.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = ts.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &ts[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        frac = format!("0.{}", &r[..n]).parse().ok()?;
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" | "" => 0,
        o if o.len() == 6 && matches!(o.as_bytes()[0], b'+' | b'-') && o.as_bytes()[3] == b':' => {
            let v = num(ts.len() - 5..ts.len() - 3)? * 3600 + num(ts.len() - 2..ts.len())? * 60;
            if o.starts_with('-') { -v } else { v }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + s - offset) as f64 + frac)
}
