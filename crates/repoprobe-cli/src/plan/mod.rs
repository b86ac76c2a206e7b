//! The plan of an experiment (`repoprobe run plan.toml`): which models answer with which agent
//! behind which endpoint, who judges, which models the reliability and failure stages take,
//! where every file goes. A plan is read whole and checked before anything runs: an unknown
//! field, a key variable that is not a name, a model without a price (unless the plan says to go
//! on without one) or a stage naming a model the plan does not have is an error that says where.
//!
//! The stages themselves are the commands a user could type (`stages`), each built as the
//! command's own arguments (`line`): the plan adds no run loop of its own, so resuming, journals, shards and failure records are the commands'.

pub mod estimate;
pub mod line;
pub mod run;
pub mod spent;
pub mod stages;
pub mod status;

use crate::commands::answer::AgentKind;
use crate::live::MAX_CONCURRENCY;
use repoprobe_agent::external::ExternalAgent;
use repoprobe_llm::Provider;
use repoprobe_llm::price::{Listed, Price};
use serde::{Deserialize, Deserializer};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A whole plan file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The benchmark (JSONL), relative to the plan file.
    pub benchmark: PathBuf,
    /// Where every stage's journal and output go, relative to the plan file.
    pub out: PathBuf,
    /// The cache of bare clones `answer` checks worktrees out of [default: <out>/repos].
    #[serde(default)]
    pub repos: Option<PathBuf>,
    /// `owner/name=PATH` local clones (`answer --repo-map`).
    #[serde(default)]
    pub repo_map: Vec<String>,
    /// Go on with a model, judge or classifier that has no price (its cost is then unknown,
    /// never $0). Off: such a plan is refused, the model named.
    #[serde(default)]
    pub allow_unpriced: bool,
    /// What the plan says of itself (the paper's settings cite their sections here); not read.
    #[serde(default)]
    #[serde(rename = "notes")]
    pub _notes: Option<toml::Table>,
    /// The models under test, each answering every question.
    #[serde(rename = "model", default)]
    pub models: Vec<ModelUnderTest>,
    /// The checklist judges of every answer: `[judge]`, or several as `[[judge]]`, each
    /// writing its own judgments (for `repoprobe judge-agreement` and `score --panel`). The first is
    /// the judge in force: its runs are Table 5's, `classify-failures` picks answers by it.
    #[serde(deserialize_with = "one_or_many")]
    pub judge: Vec<Endpoint>,
    /// Table 5: the checklist judge and the scalar judge, several runs on some models' answers.
    #[serde(default)]
    pub reliability: Option<Reliability>,
    /// Table 7: failure modes of the answers below the threshold.
    #[serde(default)]
    pub failures: Option<Failures>,
}

/// `[judge]` (one table) or `[[judge]]` (an array of tables), each read as strictly as any
/// table of the plan (an unknown field named); never empty.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Endpoint>, D::Error> {
    use serde::de::Error;
    let v = toml::Value::deserialize(d)?;
    let list = match v {
        toml::Value::Array(_) => Vec::<Endpoint>::deserialize(v).map_err(D::Error::custom)?,
        other => vec![Endpoint::deserialize(other).map_err(D::Error::custom)?],
    };
    if list.is_empty() {
        return Err(D::Error::custom("[[judge]] lists no judge"));
    }
    Ok(list)
}

/// `agent = "…"` as `answer --agent` names it: `builtin` or one of the agent crate's agents
/// ([`AgentKind::ALL`]), so a plan takes exactly what the command takes.
fn agent<'de, D: Deserializer<'de>>(d: D) -> Result<AgentKind, D::Error> {
    named(d, "agent", &AgentKind::ALL, AgentKind::as_str)
}

/// `provider = "…"` as `--provider` names it (the client's [`Provider::ALL`]).
fn provider<'de, D: Deserializer<'de>>(d: D) -> Result<Provider, D::Error> {
    named(d, "provider", &Provider::ALL, Provider::as_str)
}

fn some_provider<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Provider>, D::Error> {
    provider(d).map(Some)
}

/// A field taking one of a list's names, exactly as written; another word is refused naming the
/// field and every name it takes (toml adds the line).
fn named<'de, D: Deserializer<'de>, T: Copy>(
    d: D,
    field: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, D::Error> {
    let word = String::deserialize(d)?;
    all.iter()
        .copied()
        .find(|&v| name(v) == word)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&v| name(v)).collect();
            serde::de::Error::custom(format_args!(
                "{field} {word:?} is not one of {}",
                names.join(", ")
            ))
        })
}

impl Plan {
    /// The judge in force: the first `[[judge]]` (a plan has at least one; checked).
    pub fn judge(&self) -> &Endpoint {
        &self.judge[0]
    }
}

/// One model under test.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelUnderTest {
    /// As the tables name it ("GLM-5"); also the name of its files.
    pub name: String,
    /// builtin | claude-code | codex | gemini | command: `answer --agent`'s names.
    #[serde(deserialize_with = "agent")]
    pub agent: AgentKind,
    /// As the API names it.
    pub model: String,
    /// builtin only: openai | anthropic.
    #[serde(default, deserialize_with = "some_provider")]
    pub provider: Option<Provider>,
    /// The API (for an agent CLI: the gateway it is sent to, through the sandbox's proxy).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The variable that holds this endpoint's key.
    #[serde(default)]
    pub key_env: Option<String>,
    /// The agent CLI's variable that gets the key (`--agent-key-var`).
    #[serde(default)]
    pub key_var: Option<String>,
    #[serde(default)]
    pub price: Option<PriceSpec>,
    /// A model served by the user (llama.cpp, vLLM, Ollama, SGLang at `base_url`): no key is
    /// read or sent (`--no-key`) and it costs $0, its tokens and time still counted.
    /// `agent = "builtin"` only.
    #[serde(default)]
    pub local: bool,
    #[serde(default)]
    pub attempts: Option<u32>,
    #[serde(default)]
    pub max_turns: Option<u32>,
    #[serde(default)]
    pub concurrency: Option<u32>,
    /// `command`'s template (`answer --command`).
    #[serde(default)]
    pub command: Option<String>,
    /// The agent CLI's executable.
    #[serde(default)]
    pub agent_bin: Option<PathBuf>,
    /// Directories the sandboxed agent may also read (`answer --sandbox-expose`).
    #[serde(default)]
    pub sandbox_expose: Vec<PathBuf>,
    /// Any further flags of `answer`, as typed.
    #[serde(default)]
    pub args: Vec<String>,
}

/// A model called through its API: the judge, the scalar judge, the classifier.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// openai | anthropic.
    #[serde(deserialize_with = "provider")]
    pub provider: Provider,
    pub model: String,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub key_env: Option<String>,
    #[serde(default)]
    pub price: Option<PriceSpec>,
    /// Served by the user at `base_url`: no key, $0 (see [`ModelUnderTest::local`]).
    #[serde(default)]
    pub local: bool,
    /// Judge runs per answer (`[judge]` only; the reliability stage says its own).
    #[serde(default)]
    pub runs: Option<u32>,
    #[serde(default)]
    pub concurrency: Option<u32>,
    #[serde(default)]
    pub rpm: Option<u64>,
    #[serde(default)]
    pub tpm: Option<u64>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Any further flags of the command, as typed.
    #[serde(default)]
    pub args: Vec<String>,
}

/// USD per million tokens.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriceSpec {
    pub input: f64,
    pub output: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reliability {
    /// Models by their `name`.
    pub models: Vec<String>,
    /// Independent runs of each judge on each answer.
    pub runs: u32,
    /// The scalar baseline judge (`judge-scalar`).
    pub scalar: Endpoint,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failures {
    /// Models by their `name`.
    pub models: Vec<String>,
    /// The failure-mode classifier (`classify-failures`).
    pub classifier: Endpoint,
}

/// Where a price came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PriceSource {
    /// The plan's `price`.
    Plan(Price),
    /// The list (`repoprobe-llm` price.rs).
    List(Listed),
    /// `local = true`: served by the user, no charge.
    Local,
    /// Neither: the cost is unknown.
    Unknown,
}

impl PriceSource {
    /// `local` wins: the plan's check refuses it beside a `price`.
    pub fn of(model: &str, given: Option<PriceSpec>, local: bool) -> PriceSource {
        match (given, Listed::find(model)) {
            _ if local => PriceSource::Local,
            (Some(p), _) => PriceSource::Plan(Price {
                input: p.input,
                output: p.output,
            }),
            (None, Some(l)) => PriceSource::List(l),
            (None, None) => PriceSource::Unknown,
        }
    }

    pub fn price(self) -> Option<Price> {
        match self {
            PriceSource::Plan(p) => Some(p),
            PriceSource::List(l) => Some(l.price),
            PriceSource::Local => Some(Price {
                input: 0.0,
                output: 0.0,
            }),
            PriceSource::Unknown => None,
        }
    }

    /// In words: `plan`, `list (<source>, <month>)`, `local (no charge)`, `unknown`.
    pub fn describe(self) -> String {
        match self {
            PriceSource::Plan(_) => "plan".into(),
            PriceSource::List(l) => format!("list ({}, {})", l.source, l.as_of),
            PriceSource::Local => "local (no charge)".into(),
            PriceSource::Unknown => "unknown".into(),
        }
    }
}

/// An error in a plan, saying where: the file, then the problem.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", .path.display())]
pub struct PlanError {
    pub path: PathBuf,
    pub problem: PlanProblem,
}

/// What is wrong with a plan, and where in it (`at`: `[[model]] #2 ("GLM-5")`, `[judge]`, …).
#[derive(Debug, thiserror::Error)]
pub enum PlanProblem {
    /// Not TOML, or a field a plan does not have (toml's words, the line quoted).
    #[error("{}", .0.to_string().trim_end().replace('\n', "\n  "))]
    Toml(toml::de::Error),
    #[error("the plan has no [[model]]")]
    NoModel,
    #[error("{at}: name and model must not be empty")]
    EmptyName { at: String },
    #[error("{at}: the name is given twice")]
    NameTwice { at: String },
    /// Two names written alike in file names (`output::file_name_part`).
    #[error("{at}: its file name is another model's ({file})")]
    SameFileName { at: String, file: String },
    #[error("{at}: provider is given for agent = \"builtin\", and only there")]
    ProviderOutsideBuiltin { at: String },
    #[error("{at}: command is given for agent = \"command\", and only there")]
    CommandOutsideCommand { at: String },
    #[error("{at}: attempts, concurrency and max_turns are at least 1")]
    ModelCountZero { at: String },
    #[error("{at}: concurrency is at most {MAX_CONCURRENCY}")]
    TooConcurrent { at: String },
    /// `key_env` or `key_var` is not a variable's name.
    #[error("{at}: {name}")]
    KeyName {
        at: String,
        name: crate::live::NotAnEnvName,
    },
    #[error("{at}: a price is two non-negative numbers")]
    BadPrice { at: String },
    #[error(
        "{at}: local = true is for agent = \"builtin\" (an agent CLI reads its own key); give \
         it price = {{ input = 0, output = 0 }} for $0"
    )]
    LocalAgentCli { at: String },
    #[error(
        "{at}: local = true needs base_url (where the server listens, e.g. \
         \"http://127.0.0.1:8080/v1\"): a provider's own API needs a key"
    )]
    LocalWithoutUrl { at: String },
    #[error("{at}: local = true sends no key; drop key_env, or local for a server that needs one")]
    LocalWithKey { at: String },
    #[error("{at}: local = true costs $0; drop price, or local to have it charged")]
    LocalWithPrice { at: String },
    #[error("[[judge]]: the plan has no judge")]
    NoJudge,
    #[error("[[judge]]: model {model:?} judges twice")]
    JudgesTwice { model: String },
    #[error("two stages would write the same file {file:?}: rename a model")]
    SameStageFile { file: String },
    #[error("{at}: model must not be empty")]
    EmptyModel { at: String },
    #[error("{at}: runs belongs to [judge] and [reliability]")]
    RunsOutsideJudge { at: String },
    #[error("{at}: runs and concurrency are at least 1")]
    EndpointCountZero { at: String },
    #[error("{at}: rpm and tpm are at least 1")]
    RateZero { at: String },
    #[error("[reliability]: runs is at least 1")]
    ReliabilityRunsZero,
    /// A stage names a model the plan does not have.
    #[error("{at}: {name:?} is not the name of a [[model]]")]
    UnknownModel { at: &'static str, name: String },
    /// Models without a price, each as `where: model`, and no `allow_unpriced`.
    #[error(
        "no price for {}: give it a price = {{ input = …, output = … }} (USD per million \
         tokens), or set allow_unpriced = true to go on with its cost unknown",
        .models.join("; ")
    )]
    Unpriced { models: Vec<String> },
}

impl Plan {
    /// Parses and checks a plan's text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Plan, PlanError> {
        let at_file = |problem| PlanError {
            path: file.to_path_buf(),
            problem,
        };
        let plan: Plan = toml::from_str(text).map_err(|e| at_file(PlanProblem::Toml(e)))?;
        plan.check().map_err(at_file)?;
        Ok(plan)
    }

    /// The rules a program can check before anything runs.
    fn check(&self) -> Result<(), PlanProblem> {
        use PlanProblem as P;
        if self.models.is_empty() {
            return Err(P::NoModel);
        }
        let mut names = HashSet::new();
        let mut files = HashSet::new();
        for (i, m) in self.models.iter().enumerate() {
            let at = format!("[[model]] #{} ({:?})", i + 1, m.name);
            if m.name.trim().is_empty() || m.model.trim().is_empty() {
                return Err(P::EmptyName { at });
            }
            if !names.insert(m.name.as_str()) {
                return Err(P::NameTwice { at });
            }
            if !files.insert(slug(&m.name)) {
                return Err(P::SameFileName {
                    at,
                    file: slug(&m.name),
                });
            }
            if (m.agent == AgentKind::Builtin) != m.provider.is_some() {
                return Err(P::ProviderOutsideBuiltin { at });
            }
            if (m.agent == AgentKind::External(ExternalAgent::Command)) != m.command.is_some() {
                return Err(P::CommandOutsideCommand { at });
            }
            if m.attempts == Some(0) || m.concurrency == Some(0) || m.max_turns == Some(0) {
                return Err(P::ModelCountZero { at });
            }
            check_concurrency(&at, m.concurrency)?;
            check_key(&at, m.key_env.as_deref())?;
            check_key(&at, m.key_var.as_deref())?;
            check_price(&at, m.price)?;
            if m.local && m.agent != AgentKind::Builtin {
                return Err(P::LocalAgentCli { at });
            }
            check_local(&at, m.local, &m.base_url, &m.key_env, m.price)?;
        }
        if self.judge.is_empty() {
            return Err(P::NoJudge);
        }
        for (n, j) in self.judge.iter().enumerate() {
            check_endpoint(&judge_at(n, self.judge.len()), j, true)?;
            if self.judge[..n].iter().any(|k| k.model == j.model) {
                return Err(P::JudgesTwice {
                    model: j.model.clone(),
                });
            }
        }
        // The judgments files: each model's (the judge in force) and `MODEL.JUDGE`'s.
        let mut files: Vec<String> = stages::judged(self).iter().map(|j| slug(&j.who)).collect();
        files.sort_unstable();
        if let Some(w) = files.windows(2).find(|w| w[0] == w[1]) {
            return Err(P::SameStageFile { file: w[0].clone() });
        }
        if let Some(r) = &self.reliability {
            check_endpoint("[reliability.scalar]", &r.scalar, false)?;
            if r.runs == 0 {
                return Err(P::ReliabilityRunsZero);
            }
            check_names("[reliability]", &r.models, &names)?;
        }
        if let Some(f) = &self.failures {
            check_endpoint("[failures.classifier]", &f.classifier, false)?;
            check_names("[failures]", &f.models, &names)?;
        }
        Ok(())
    }

    /// The endpoints called through their API, each with where in the plan it is.
    pub fn endpoints(&self) -> Vec<(&'static str, &Endpoint)> {
        let mut v: Vec<(&'static str, &Endpoint)> =
            self.judge.iter().map(|j| ("[[judge]]", j)).collect();
        if let [one] = v.as_mut_slice() {
            one.0 = "[judge]";
        }
        if let Some(r) = &self.reliability {
            v.push(("[reliability.scalar]", &r.scalar));
        }
        if let Some(f) = &self.failures {
            v.push(("[failures.classifier]", &f.classifier));
        }
        v
    }

    /// Every model the plan pays for, with where in the plan it is and its price.
    pub fn priced(&self) -> Vec<(String, &str, PriceSource)> {
        let models = self.models.iter().map(|m| {
            let at = format!("[[model]] {:?}", m.name);
            (
                at,
                m.model.as_str(),
                PriceSource::of(&m.model, m.price, m.local),
            )
        });
        let endpoints = self.endpoints().into_iter().map(|(at, e)| {
            (
                at.to_string(),
                e.model.as_str(),
                PriceSource::of(&e.model, e.price, e.local),
            )
        });
        models.chain(endpoints).collect()
    }

    /// The models without a price, unless the plan goes on without one: refused, named.
    pub fn check_prices(&self) -> Result<(), PlanProblem> {
        if self.allow_unpriced {
            return Ok(());
        }
        let unpriced: Vec<String> = self
            .priced()
            .into_iter()
            .filter(|(_, _, p)| *p == PriceSource::Unknown)
            .map(|(at, model, _)| format!("{at}: {model}"))
            .collect();
        if unpriced.is_empty() {
            return Ok(());
        }
        Err(PlanProblem::Unpriced { models: unpriced })
    }

    /// The models by name.
    pub fn model(&self, name: &str) -> Option<&ModelUnderTest> {
        self.models.iter().find(|m| m.name == name)
    }
}

/// A model's name in file names (one-to-one: `output::file_name_part`).
pub fn slug(name: &str) -> String {
    crate::output::file_name_part(name)
}

fn check_key(at: &str, var: Option<&str>) -> Result<(), PlanProblem> {
    match var.map(crate::live::env_name) {
        Some(Err(name)) => Err(PlanProblem::KeyName {
            at: at.to_string(),
            name,
        }),
        _ => Ok(()),
    }
}

fn check_price(at: &str, p: Option<PriceSpec>) -> Result<(), PlanProblem> {
    match p {
        Some(p)
            if !(p.input.is_finite()
                && p.output.is_finite()
                && p.input >= 0.0
                && p.output >= 0.0) =>
        {
            Err(PlanProblem::BadPrice { at: at.to_string() })
        }
        _ => Ok(()),
    }
}

/// Where a judge is in the plan: `[judge]` when it is the only one, else `[[judge]] N`.
fn judge_at(n: usize, of: usize) -> String {
    if of == 1 {
        "[judge]".into()
    } else {
        format!("[[judge]] {}", n + 1)
    }
}

/// What `--concurrency` takes: at most [`MAX_CONCURRENCY`] (at least 1 is checked with the
/// other counts).
fn check_concurrency(at: &str, concurrency: Option<u32>) -> Result<(), PlanProblem> {
    match concurrency {
        Some(n) if n > MAX_CONCURRENCY => Err(PlanProblem::TooConcurrent { at: at.to_string() }),
        _ => Ok(()),
    }
}

fn check_endpoint(at: &str, e: &Endpoint, judge: bool) -> Result<(), PlanProblem> {
    use PlanProblem as P;
    let at_ = || at.to_string();
    if e.model.trim().is_empty() {
        return Err(P::EmptyModel { at: at_() });
    }
    if !judge && e.runs.is_some() {
        return Err(P::RunsOutsideJudge { at: at_() });
    }
    if e.runs == Some(0) || e.concurrency == Some(0) {
        return Err(P::EndpointCountZero { at: at_() });
    }
    if e.rpm == Some(0) || e.tpm == Some(0) {
        return Err(P::RateZero { at: at_() });
    }
    check_concurrency(at, e.concurrency)?;
    check_key(at, e.key_env.as_deref())?;
    check_price(at, e.price)?;
    check_local(at, e.local, &e.base_url, &e.key_env, e.price)
}

/// `local = true` says where the server is and nothing of keys or prices.
fn check_local(
    at: &str,
    local: bool,
    base_url: &Option<String>,
    key_env: &Option<String>,
    price: Option<PriceSpec>,
) -> Result<(), PlanProblem> {
    let at = at.to_string();
    if !local {
        Ok(())
    } else if base_url.is_none() {
        Err(PlanProblem::LocalWithoutUrl { at })
    } else if key_env.is_some() {
        Err(PlanProblem::LocalWithKey { at })
    } else if price.is_some() {
        Err(PlanProblem::LocalWithPrice { at })
    } else {
        Ok(())
    }
}

fn check_names(
    at: &'static str,
    wanted: &[String],
    names: &HashSet<&str>,
) -> Result<(), PlanProblem> {
    match wanted.iter().find(|n| !names.contains(n.as_str())) {
        Some(n) => Err(PlanProblem::UnknownModel {
            at,
            name: n.clone(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAPER: &str = include_str!("../../../../reproduce/paper.toml");
    const REPRODUCE: &str = include_str!("../../../../docs/reproduce.md");
    const LIVE_RUNS: &str = include_str!("../../../../docs/live-runs.md");
    const README: &str = include_str!("../../../../README.md");

    fn paper() -> Plan {
        Plan::parse(PAPER, Path::new("reproduce/paper.toml")).unwrap()
    }

    /// The row of docs/reproduce.md's settings table for `table`.
    fn row(table: &str) -> &'static str {
        REPRODUCE
            .lines()
            .find(|l| l.starts_with(&format!("| {table}")))
            .unwrap_or_else(|| panic!("reproduce.md has no row for table {table}"))
    }

    #[test]
    fn the_papers_plan_holds_the_papers_settings() {
        let p = paper();
        // §5.1.2, as the paper names them.
        let names: Vec<&str> = p.models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "GPT-5.2",
                "GPT-5.4",
                "Claude Opus 4.5",
                "Claude Opus 4.6",
                "Claude Sonnet 4.6",
                "Grok 4.20",
                "Gemini 3 Flash",
                "Gemini 3 Pro",
                "Gemini 3.1 Pro",
                "Qwen3-Max",
                "Qwen3.5-Plus",
                "Doubao-Seed-1.8",
                "Doubao-Seed-2.0",
                "GLM-4.7",
                "GLM-5",
                "DeepSeek-V3.2",
                "Kimi-K2",
                "Kimi-K2.5",
                "MiniMax-M2.1",
                "MiniMax-M2.5",
            ]
        );
        // §5.1.1: one scaffold; §5.1.3: Sonnet 4.5 judges and is not among the models.
        assert!(
            p.models
                .iter()
                .all(|m| m.agent == AgentKind::External(ExternalAgent::ClaudeCode))
        );
        assert_eq!(p.judge().model, "claude-sonnet-4-5");
        assert!(
            p.models
                .iter()
                .all(|m| !m.model.starts_with("claude-sonnet-4-5"))
        );
        // Non-Anthropic models reach Claude Code through a gateway with a key of its own.
        for m in p.models.iter().filter(|m| !m.model.starts_with("claude-")) {
            assert!(m.base_url.is_some() && m.key_env.is_some(), "{}", m.name);
        }
        // §5.3: three models, five runs, the scalar judge the same Sonnet 4.5.
        let r = p.reliability.as_ref().unwrap();
        assert_eq!(r.models, ["GPT-5.2", "Claude Opus 4.5", "Gemini 3 Pro"]);
        assert_eq!((r.runs, r.scalar.model.as_str()), (5, "claude-sonnet-4-5"));
        // §5.4: Table 7's three models, Gemini 3 Flash classifying.
        let f = p.failures.as_ref().unwrap();
        assert_eq!(f.models, r.models);
        assert!(f.classifier.model.starts_with("gemini-3-flash"));
        // Every model, judge and classifier has a list price.
        p.check_prices().unwrap();
    }

    #[test]
    fn the_docs_say_what_the_papers_plan_holds() {
        let p = paper();
        let r = p.reliability.as_ref().unwrap();
        let f = p.failures.as_ref().unwrap();
        let t3 = row("3 (overall)");
        assert!(
            t3.contains(&format!("each of the {} models", p.models.len())),
            "{t3}"
        );
        assert!(
            t3.contains("**Claude Code**") && t3.contains("Claude Sonnet 4.5"),
            "{t3}"
        );
        assert!(
            t3.contains(&format!("{} chosen", p.judge().runs.unwrap())),
            "{t3}"
        );
        let t5 = row("5 (judge reliability)");
        for m in &r.models {
            assert!(t5.contains(m.as_str()), "{m} missing from {t5}");
        }
        assert!(t5.contains(&format!("| {} each |", r.runs)), "{t5}");
        let t7 = row("7 (failure modes)");
        for m in &f.models {
            assert!(t7.contains(m.as_str()), "{m} missing from {t7}");
        }
        assert!(t7.contains("Gemini 3 Flash"), "{t7}");
        let n = format!("{} models", p.models.len());
        assert!(LIVE_RUNS.contains(&format!("50 repositories and {n}")));
        assert!(LIVE_RUNS.contains("five\nof both judges on Table 5's three models"));
        assert!(README.contains(&format!("the paper's {n} under Claude Code")));
        assert!(README.contains("Claude Sonnet 4.5 judging and\nnot among them"));
        // Sonnet 4.5 answers in no example: the paper keeps the judge out of the models.
        for doc in [README, LIVE_RUNS, REPRODUCE] {
            assert!(!doc.contains("--agent claude-code --model claude-sonnet-4-5"));
        }
    }

    /// A builtin model and a judge on the user's own server, none of them on a price list.
    const LOCAL: &str = r#"benchmark = "b.jsonl"
out = "runs"

[[model]]
name = "Qwen local"
agent = "builtin"
provider = "openai"
model = "qwen3-coder-local"
base_url = "http://127.0.0.1:8000/v1"
local = true

[judge]
provider = "openai"
model = "my-judge"
base_url = "http://127.0.0.1:8001/v1"
local = true
"#;

    #[test]
    fn a_local_model_costs_nothing_and_needs_no_price_or_key() {
        let p = Plan::parse(LOCAL, Path::new("p.toml")).unwrap();
        p.check_prices().unwrap();
        let priced = p.priced();
        assert_eq!(priced.len(), 2);
        for (at, _, source) in &priced {
            assert_eq!(*source, PriceSource::Local, "{at}");
            let free = source.price().unwrap();
            assert_eq!((free.input, free.output), (0.0, 0.0));
            assert_eq!(source.describe(), "local (no charge)");
        }
        // Without `local`, the same plan is refused for its unpriced models.
        let charged = Plan::parse(&LOCAL.replace("local = true\n", ""), Path::new("p.toml"))
            .unwrap()
            .check_prices()
            .unwrap_err();
        let PlanProblem::Unpriced { models } = &charged else {
            panic!("{charged}");
        };
        assert_eq!(
            models,
            &[
                "[[model]] \"Qwen local\": qwen3-coder-local",
                "[judge]: my-judge"
            ]
        );
    }

    /// `agent` and `provider` are read as the flags' enums: a word neither takes is refused at
    /// its line, naming the field and every name the flag takes; the cap of `concurrency` is
    /// the flag's.
    #[test]
    fn an_agent_or_provider_the_flags_do_not_take_is_refused_at_its_line() {
        let p = Plan::parse(LOCAL, Path::new("p.toml")).unwrap();
        assert_eq!(p.models[0].agent, AgentKind::Builtin);
        assert_eq!(p.models[0].provider, Some(Provider::Openai));
        assert_eq!(p.judge().provider, Provider::Openai);
        for (text, line, want) in [
            (
                LOCAL.replace("agent = \"builtin\"", "agent = \"cursor\""),
                "agent = \"cursor\"",
                "agent \"cursor\" is not one of builtin, claude-code, codex, gemini, command",
            ),
            (
                LOCAL.replacen("provider = \"openai\"", "provider = \"mistral\"", 1),
                "provider = \"mistral\"",
                "provider \"mistral\" is not one of openai, anthropic",
            ),
        ] {
            let e = Plan::parse(&text, Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("p.toml: "), "{e}");
            assert!(e.contains(line) && e.contains(want), "{want}\n{e}");
        }
        let busy = LOCAL.replace(
            "local = true\n\n[judge]",
            "local = true\nconcurrency = 1025\n\n[judge]",
        );
        let e = Plan::parse(&busy, Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("concurrency is at most 1024"), "{e}");
        let most = busy.replace("1025", "1024");
        Plan::parse(&most, Path::new("p.toml")).unwrap();
    }

    /// `[[judge]]`: every judge judges every model's answers into its own file, the first in
    /// force (its stage the model's name, its runs the reliability stage's); each judge is read
    /// as strictly as `[judge]`.
    #[test]
    fn several_judges_each_judge_every_model_into_their_own_files() {
        let two = LOCAL.replace(
            "[judge]\nprovider = \"openai\"\nmodel = \"my-judge\"",
            "[[judge]]\nprovider = \"openai\"\nmodel = \"my-judge\"",
        ) + "\n[[judge]]\nprovider = \"openai\"\nmodel = \"judge-b\"\nbase_url = \"http://127.0.0.1:8002/v1\"\nlocal = true\nruns = 2\n";
        let p = Plan::parse(&two, Path::new("p.toml")).unwrap();
        assert_eq!(p.judge().model, "my-judge");
        let files = stages::Files::of(&p, Path::new("/plan"));
        let judgments: Vec<(String, String)> = stages::stages(&p, &files, Default::default())
            .unwrap()
            .into_iter()
            .filter(|s| s.stage == "judgments")
            .map(|s| (s.who, stages::shown(&s.line)))
            .collect();
        assert_eq!(judgments.len(), 2, "{judgments:?}");
        assert_eq!(judgments[0].0, "Qwen local");
        assert!(
            judgments[0].1.contains("--model my-judge"),
            "{}",
            judgments[0].1
        );
        assert!(judgments[0].1.contains("--runs 1"), "{}", judgments[0].1);
        assert_eq!(judgments[1].0, "Qwen local.judge-b");
        assert!(
            judgments[1]
                .1
                .contains("--model judge-b --base-url http://127.0.0.1:8002/v1"),
            "{}",
            judgments[1].1
        );
        assert!(judgments[1].1.contains("--runs 2"), "{}", judgments[1].1);
        assert!(
            judgments[1]
                .1
                .contains("judgments/Qwen_20local.judge-b.jsonl"),
            "{}",
            judgments[1].1
        );
        assert_eq!(p.priced().len(), 3);

        let refused = |text: &str, says: &str| {
            let e = Plan::parse(text, Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{says}: {e}");
        };
        refused(
            &two.replace("judge-b", "my-judge"),
            "model \"my-judge\" judges twice",
        );
        refused(&two.replace("runs = 2", "rnus = 2"), "rnus");
        refused(
            &two.replace("runs = 2", "runs = 0"),
            "[[judge]] 2: runs and concurrency are at least 1",
        );
    }

    #[test]
    fn local_says_where_the_server_is_and_nothing_of_keys_or_prices() {
        let refused = |from: &str, to: &str, says: &str| {
            let text = LOCAL.replacen(from, to, 1);
            assert_ne!(text, LOCAL, "{from}");
            let e = Plan::parse(&text, Path::new("p.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{e}");
        };
        refused(
            "base_url = \"http://127.0.0.1:8000/v1\"\n",
            "",
            "[[model]] #1 (\"Qwen local\"): local = true needs base_url",
        );
        refused(
            "base_url = \"http://127.0.0.1:8001/v1\"\n",
            "",
            "[judge]: local = true needs base_url",
        );
        refused(
            "local = true\n",
            "local = true\nkey_env = \"K\"\n",
            "local = true sends no key",
        );
        refused(
            "local = true\n\n[judge]",
            "local = true\nprice = { input = 1.0, output = 1.0 }\n\n[judge]",
            "local = true costs $0",
        );
        refused(
            "agent = \"builtin\"\nprovider = \"openai\"",
            "agent = \"codex\"",
            "local = true is for agent = \"builtin\"",
        );
    }

    #[test]
    fn an_unpriced_model_is_named_and_a_price_or_allow_unpriced_lets_it_through() {
        let text = PAPER.replace("model = \"glm-5\"", "model = \"glm-5-private\"");
        let p = Plan::parse(&text, Path::new("p.toml")).unwrap();
        let e = p.check_prices().unwrap_err();
        assert!(
            matches!(&e, PlanProblem::Unpriced { models }
                if models == &["[[model]] \"GLM-5\": glm-5-private"]),
            "{e}"
        );
        let given = text.replace(
            "model = \"glm-5-private\"",
            "model = \"glm-5-private\"\nprice = { input = 1.0, output = 3.2 }",
        );
        Plan::parse(&given, Path::new("p.toml"))
            .unwrap()
            .check_prices()
            .unwrap();
        let allowed = format!("allow_unpriced = true\n{text}");
        Plan::parse(&allowed, Path::new("p.toml"))
            .unwrap()
            .check_prices()
            .unwrap();
    }
}
