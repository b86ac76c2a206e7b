//! Which cells move together (docs/metrics.md#clustered-uncertainty). RepoProbe's questions come
//! about ten to a repository, and the scores of one repository's questions share its language,
//! its size and its difficulty: an interval that treats them as independent is too narrow. A
//! [`Cluster`] says what the unit of independence is; [`Clusters`] maps each question of the
//! frame to its cluster.

use crate::model::Question;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

/// What the standard errors, intervals and bootstraps treat as independent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Cluster {
    /// The questions of one repository (`repo.name`) together: the benchmark's design.
    #[default]
    Repo,
    /// Each question with its attempts and judge runs: independent questions.
    Question,
    /// Every cell alone, as if attempts and judge runs were independent draws too.
    None,
}

impl Cluster {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The name a user writes (`--cluster`, `&cluster=`), `None` for any other.
    pub fn parse(s: &str) -> Option<Cluster> {
        match s {
            "repo" => Some(Cluster::Repo),
            "question" => Some(Cluster::Question),
            "none" => Some(Cluster::None),
            _ => None,
        }
    }
}

/// Each question's cluster, by the question's place in the frame: the questions of a repository
/// share one id under [`Cluster::Repo`]; under [`Cluster::Question`] and [`Cluster::None`] each
/// question is its own (a cell-level computation splits the question further itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clusters {
    /// Cluster id per question index, ids 0..count, numbered in order of first appearance.
    pub of: Vec<u32>,
    /// How many clusters the questions fall in.
    pub count: usize,
}

impl Clusters {
    pub fn new(questions: &[&Question], kind: Cluster) -> Clusters {
        match kind {
            Cluster::Repo => {
                let mut ids: HashMap<&str, u32> = HashMap::default();
                let of: Vec<u32> = questions
                    .iter()
                    .map(|q| {
                        let next = ids.len() as u32;
                        *ids.entry(q.repo.name.as_str()).or_insert(next)
                    })
                    .collect();
                Clusters {
                    of,
                    count: ids.len(),
                }
            }
            Cluster::Question | Cluster::None => Clusters {
                of: (0..questions.len() as u32).collect(),
                count: questions.len(),
            },
        }
    }

    /// The question indices of each cluster, in question order.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.count];
        for (q, &c) in self.of.iter().enumerate() {
            out[c as usize].push(q as u32);
        }
        out
    }
}

/// How a 95 % interval is made from the cells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum CiMethod {
    /// The mean ± 1.959964 × the clustered standard error (the central limit theorem).
    #[default]
    Clt,
    /// The 2.5 % and 97.5 % quantiles of a seeded bootstrap that resamples whole clusters.
    Bootstrap,
}

impl CiMethod {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The name a user writes (`--ci`, `&ci=`), `None` for any other.
    pub fn parse(s: &str) -> Option<CiMethod> {
        match s {
            "clt" => Some(CiMethod::Clt),
            "bootstrap" => Some(CiMethod::Bootstrap),
            _ => None,
        }
    }
}
