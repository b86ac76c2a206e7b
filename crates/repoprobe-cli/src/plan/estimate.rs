//! `repoprobe run PLAN --estimate`: the whole plan priced before a request — per stage and
//! model the calls, the tokens and the dollars, with where each price comes from. Nothing is
//! sent, no key is read, no file is written.
//!
//! How each stage is modelled (assumptions, printed with the figures):
//! - an agent run ([`crate::live::estimate::agent_run`]): a fixed number of turns, each
//!   re-sending the prompt and the conversation so far (context growth), every tool result
//!   adding a fixed number of tokens, every turn writing a fixed number;
//! - a judge call: the very prompt of the judge for each question, with an answer of
//!   [`ANSWER_BYTES`] in place of the one not yet written, and the judge's expected reply
//!   (100 tokens and 150 an item);
//! - the scalar judge: its prompt the same way, 400 tokens back;
//! - the classifier: at most every answer (only those below 60 % are sent), its input the judge's
//!   prompt and the judge's rationales (150 tokens an item), 250 tokens back.

use super::stages::{Files, judged};
use super::{Endpoint, Plan, PriceSource};
use crate::exit::Exit;
use crate::live::estimate::{
    ESTIMATE_RESULT_TOKENS, ESTIMATE_TURN_OUTPUT_TOKENS, Estimate, agent_run,
};
use repoprobe_core::Question;
use repoprobe_core::protocol::{judge, scalar};
use repoprobe_llm::Tokens;
use std::fmt::Write;

/// The length assumed of an answer not yet written (bytes).
pub const ANSWER_BYTES: usize = 4_000;
/// The turns assumed of an agent run.
pub const TURNS: u64 = 15;

/// One line of the estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub stage: &'static str,
    pub who: String,
    pub model: String,
    pub estimate: Estimate,
    pub price: PriceSource,
}

impl Line {
    pub fn dollars(&self) -> Option<f64> {
        self.price.price().map(|p| p.cost(self.estimate.tokens))
    }
}

/// How far real agent runs differ from the model: measured over modelled, summed over a pilot's
/// runs (same questions), for calls, input and output tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub runs: u64,
    pub calls: f64,
    pub input: f64,
    pub output: f64,
    /// The files it was measured on.
    pub source: String,
}

impl Calibration {
    /// The factors of the answers in `files` (each run that answered, with its usage, of a
    /// question in `questions`); `None` when no such run is there.
    pub fn measure(
        files: &[std::path::PathBuf],
        questions: &[Question],
    ) -> anyhow::Result<Option<Calibration>> {
        let by_id: std::collections::HashMap<&str, &Question> =
            questions.iter().map(|q| (q.id.as_str(), q)).collect();
        let (mut runs, mut modelled, mut measured) = (0, Estimate::default(), Estimate::default());
        for f in files {
            let records = crate::input::read_json_records(f)
                .map_err(|e| anyhow::anyhow!("--calibrate {}: {e}", f.display()))?;
            for v in records.into_iter().filter_map(|(_, r)| r.ok()) {
                let Some(q) = v["question_id"].as_str().and_then(|id| by_id.get(id)) else {
                    continue;
                };
                let (calls, tokens, _) = super::spent::usage(&v);
                if !v["error"].is_null() || calls == 0 || tokens.input_tokens == 0 {
                    continue;
                }
                runs += 1;
                modelled += agent_run(q, TURNS);
                measured += Estimate { calls, tokens };
            }
        }
        if runs == 0 {
            return Ok(None);
        }
        let ratio = |a: u64, b: u64| a as f64 / b.max(1) as f64;
        Ok(Some(Calibration {
            runs,
            calls: ratio(measured.calls, modelled.calls),
            input: ratio(measured.tokens.input_tokens, modelled.tokens.input_tokens),
            output: ratio(measured.tokens.output_tokens, modelled.tokens.output_tokens),
            source: files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }))
    }

    fn apply(&self, e: Estimate) -> Estimate {
        let scale = |n: u64, f: f64| (n as f64 * f).round() as u64;
        Estimate {
            calls: scale(e.calls, self.calls),
            tokens: Tokens {
                input_tokens: scale(e.tokens.input_tokens, self.input),
                output_tokens: scale(e.tokens.output_tokens, self.output),
            },
        }
    }
}

/// Every stage's line for `questions`; the agent runs scaled by `calibration` when given.
pub fn lines(plan: &Plan, questions: &[Question], calibration: Option<&Calibration>) -> Vec<Line> {
    let answer = "x".repeat(ANSWER_BYTES);
    let per_question = |f: &dyn Fn(&Question) -> Estimate, times: u64| {
        let mut e = Estimate::default();
        for q in questions {
            let one = f(q);
            e.calls += one.calls * times;
            e.tokens.input_tokens += one.tokens.input_tokens * times;
            e.tokens.output_tokens += one.tokens.output_tokens * times;
        }
        e
    };
    let judge_call = |q: &Question| {
        let p = judge::prompt(q, &answer, false);
        call(
            p.system.len() + p.user.len() + judge::reply_schema_json(q).len(),
            100 + 150 * q.checklist.len() as u64,
        )
    };
    let attempts = |name: &str| u64::from(plan.model(name).and_then(|m| m.attempts).unwrap_or(1));
    let mut v = Vec::new();
    for m in &plan.models {
        let e = per_question(&|q| agent_run(q, TURNS), attempts(&m.name));
        let e = calibration.map_or(e, |c| c.apply(e));
        v.push(line(
            "answers",
            &m.name,
            &m.model,
            e,
            PriceSource::of(&m.model, m.price, m.local),
        ));
    }
    for j in judged(plan) {
        let times = attempts(j.model) * u64::from(j.runs);
        v.push(api_line(
            "judgments",
            &j.who,
            j.judge,
            per_question(&judge_call, times),
        ));
    }
    if let Some(r) = &plan.reliability {
        for name in &r.models {
            let scalar_call = |q: &Question| {
                let p = scalar::prompt(q, &answer, 10, false);
                call(
                    p.system.len() + p.user.len() + scalar::reply_schema_json(10).len(),
                    400,
                )
            };
            let times = attempts(name) * u64::from(r.runs);
            v.push(api_line(
                "scalar",
                name,
                &r.scalar,
                per_question(&scalar_call, times),
            ));
        }
    }
    if let Some(f) = &plan.failures {
        for name in &f.models {
            let classify_call = |q: &Question| {
                let p = judge::prompt(q, &answer, false);
                call(p.system.len() + p.user.len() + 600 * q.checklist.len(), 250)
            };
            v.push(api_line(
                "failures",
                name,
                &f.classifier,
                per_question(&classify_call, attempts(name)),
            ));
        }
    }
    v
}

fn call(prompt_bytes: usize, output: u64) -> Estimate {
    Estimate {
        calls: 1,
        tokens: Tokens {
            input_tokens: prompt_bytes as u64 / 4,
            output_tokens: output,
        },
    }
}

fn line(
    stage: &'static str,
    who: &str,
    model: &str,
    estimate: Estimate,
    price: PriceSource,
) -> Line {
    Line {
        stage,
        who: who.to_string(),
        model: model.to_string(),
        estimate,
        price,
    }
}

fn api_line(stage: &'static str, who: &str, e: &Endpoint, estimate: Estimate) -> Line {
    line(
        stage,
        who,
        &e.model,
        estimate,
        PriceSource::of(&e.model, e.price, e.local),
    )
}

/// The estimate in words: a line per stage and model, the totals per stage and of the plan,
/// the assumptions (and the calibration that scaled the agent runs).
pub fn render(lines: &[Line], questions: usize, calibration: Option<&Calibration>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "run --estimate (nothing sent): {questions} question(s), {} stage line(s)",
        lines.len()
    );
    let _ = writeln!(
        s,
        "{:<10} {:<24} {:<28} {:>10} {:>14} {:>12} {:>12}  price",
        "stage", "for", "model", "calls", "input tok", "output tok", "USD"
    );
    let mut stage_totals: Vec<(&str, f64, bool)> = Vec::new();
    for l in lines {
        let usd = l
            .dollars()
            .map_or_else(|| "unknown".to_string(), |d| format!("{d:.2}"));
        let _ = writeln!(
            s,
            "{:<10} {:<24} {:<28} {:>10} {:>14} {:>12} {:>12}  {}",
            l.stage,
            repoprobe_core::text::terminal_safe(&l.who),
            repoprobe_core::text::terminal_safe(&l.model),
            l.estimate.calls,
            l.estimate.tokens.input_tokens,
            l.estimate.tokens.output_tokens,
            usd,
            l.price.describe()
        );
        match stage_totals.iter_mut().find(|(st, ..)| *st == l.stage) {
            Some(t) => {
                t.1 += l.dollars().unwrap_or(0.0);
                t.2 |= l.dollars().is_none();
            }
            None => stage_totals.push((l.stage, l.dollars().unwrap_or(0.0), l.dollars().is_none())),
        }
    }
    let mut total = 0.0;
    let mut partial = false;
    for (stage, usd, missing) in &stage_totals {
        let more = if *missing { " + unknown" } else { "" };
        let _ = writeln!(s, "total {stage:<10} ≈ ${usd:.2}{more}");
        total += usd;
        partial |= missing;
    }
    let more = if partial { " + the unknown above" } else { "" };
    let _ = writeln!(
        s,
        "total of the plan ≈ ${total:.2}{more} (an estimate: re-asks, retries and caching not counted)"
    );
    let _ = writeln!(
        s,
        "assumed: an agent run takes {TURNS} turns, each re-sending the prompt and the conversation, \
         every tool result adding {ESTIMATE_RESULT_TOKENS} tokens and every turn writing \
         {ESTIMATE_TURN_OUTPUT_TOKENS} (an agent CLI's own system prompt and tools not counted); an \
         answer is {ANSWER_BYTES} bytes; a judge writes 100 tokens and 150 an item, the scalar judge \
         400, the classifier 250 and is sent at most every answer; input tokens are bytes / 4"
    );
    if let Some(c) = calibration {
        let _ = writeln!(
            s,
            "calibrated on {} answered run(s) of {}: the agent runs above are the model's × {:.2} \
             calls, × {:.2} input tokens, × {:.2} output tokens (measured over modelled)",
            c.runs,
            repoprobe_core::text::terminal_safe(&c.source),
            c.calls,
            c.input,
            c.output
        );
    }
    s
}

/// The estimate beside what the stages' outputs say they spent, line by line.
pub fn beside_spent(lines: &[Line], files: &Files) -> String {
    let mut s = String::from(
        "estimate (the whole stage) beside spent (its outputs' usage, failures included):\n",
    );
    let _ = writeln!(
        s,
        "{:<10} {:<24} {:>10} {:>10} {:>14} {:>14} {:>10} {:>10}",
        "stage", "for", "est calls", "calls", "est in tok", "in tok", "est USD", "USD"
    );
    let usd = |d: Option<f64>| d.map_or_else(|| "unknown".into(), |d| format!("{d:.2}"));
    for l in lines {
        let spent = files
            .all_of(l.stage, &l.who)
            .iter()
            .map(|out| super::spent::of_output(out, l.price.price()))
            .fold(
                super::spent::Spent {
                    usd: Some(0.0),
                    ..Default::default()
                },
                super::spent::Spent::plus,
            );
        let _ = writeln!(
            s,
            "{:<10} {:<24} {:>10} {:>10} {:>14} {:>14} {:>10} {:>10}",
            l.stage,
            repoprobe_core::text::terminal_safe(&l.who),
            l.estimate.calls,
            spent.used.calls,
            l.estimate.tokens.input_tokens,
            spent.used.tokens.input_tokens,
            usd(l.dollars()),
            usd(spent.usd)
        );
    }
    s
}

/// `--estimate`: the lines printed; a plan with an unpriced model (and no `allow_unpriced`) is
/// then refused, the model named.
pub fn print(plan: &Plan, files: &Files, calibrate: &[std::path::PathBuf]) -> anyhow::Result<Exit> {
    let (ds, _) = crate::live::load_inputs(std::slice::from_ref(&files.benchmark))?;
    let calibration = Calibration::measure(calibrate, &ds.questions)?;
    if !calibrate.is_empty() && calibration.is_none() {
        anyhow::bail!("--calibrate: no answered run with its usage of a question of the benchmark");
    }
    let lines = lines(plan, &ds.questions, calibration.as_ref());
    crate::stdout::write(render(&lines, ds.questions.len(), calibration.as_ref()).as_bytes())?;
    plan.check_prices()?;
    Ok(Exit::Ok)
}
