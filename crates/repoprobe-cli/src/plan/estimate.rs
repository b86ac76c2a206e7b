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

use super::stages::{Files, judge_runs};
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

/// Every stage's line for `questions`.
pub fn lines(plan: &Plan, questions: &[Question]) -> Vec<Line> {
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
        v.push(line(
            "answers",
            &m.name,
            &m.model,
            e,
            PriceSource::of(&m.model, m.price),
        ));
    }
    for m in &plan.models {
        let times = attempts(&m.name) * u64::from(judge_runs(plan, &m.name));
        v.push(api_line(
            "judgments",
            &m.name,
            &plan.judge,
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
        PriceSource::of(&e.model, e.price),
    )
}

/// The estimate in words: a line per stage and model, the totals per stage and of the plan,
/// the assumptions.
pub fn render(lines: &[Line], questions: usize) -> String {
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
            repoprobe_core::report::terminal_safe(&l.who),
            repoprobe_core::report::terminal_safe(&l.model),
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
    s
}

/// `--estimate`: the lines printed; a plan with an unpriced model (and no `allow_unpriced`) is
/// then refused, the model named.
pub fn print(plan: &Plan, files: &Files) -> anyhow::Result<Exit> {
    let (ds, _) = crate::live::load_inputs(std::slice::from_ref(&files.benchmark))?;
    let lines = lines(plan, &ds.questions);
    crate::stdout::write(render(&lines, ds.questions.len()).as_bytes())?;
    plan.check_prices().map_err(anyhow::Error::msg)?;
    Ok(Exit::Ok)
}
