//! `--shard I/N` and `--shard auto`: splitting one run across machines or the tasks of a cluster
//! job. Each key belongs to exactly one shard, by a hash of its printed name that does not depend
//! on input order, the platform or the Rust version (FNV-1a), so N tasks given the same inputs do
//! disjoint parts whose outputs `repoprobe merge` joins. Under `auto` the index and count come
//! from the engine: a Slurm job array or a Kubernetes Indexed Job.

use std::fmt::Display;
use std::str::FromStr;

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether `key` is this shard's.
    pub fn owns(&self, key: &impl Display) -> bool {
        Shard::index_of(key, self.count) == self.index
    }

    /// The index of the shard of `count` that `key` belongs to, by its printed form: the one
    /// hash of a command choosing its keys, of its run's manifest counting them, and of
    /// `status` reading its records back (through the run's kind, `run_files::kind`).
    pub fn index_of(key: &impl Display, count: u32) -> u32 {
        // The remainder is below `count`, a u32.
        (fnv1a(key.to_string().as_bytes()) % u64::from(count.max(1))) as u32
    }
}

impl Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::NotAShard(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The shard's name in file names, `0003-of-0016`: fixed width (at least four digits), so
    /// the files of one run sort in shard order.
    pub fn label(&self) -> String {
        let width = self.count.to_string().len().max(4);
        format!("{:0width$}-of-{:0width$}", self.index, self.count)
    }
}

/// What `--shard` says: a fixed `I/N`, or `auto` (from the cluster's job).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Fixed(Shard),
    Auto,
}

impl FromStr for ShardArg {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<ShardArg, ShardError> {
        if s.trim() == "auto" {
            return Ok(ShardArg::Auto);
        }
        s.parse()
            .map(ShardArg::Fixed)
            .map_err(|_| ShardError::NeitherShardNorAuto(s.to_string()))
    }
}

/// Why `--shard` (with `--shards` and the cluster's variables) names no shard of this process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("`{0}` is not a shard: write I/N with 0 ≤ I < N, e.g. 0/4")]
    NotAShard(String),
    /// `--shard`'s value: neither `I/N` nor `auto`.
    #[error(
        "`{0}` is not a shard: write I/N with 0 ≤ I < N, e.g. 0/4, or `auto` under a Slurm job \
         array or a Kubernetes Indexed Job"
    )]
    NeitherShardNorAuto(String),
    #[error("--shards is for --shard auto (the count of a Kubernetes Indexed Job)")]
    ShardsWithoutAuto,
    #[error("--shard {shard} and --shards {shards} disagree")]
    ShardsDisagree { shard: Shard, shards: u32 },
    /// `--shard auto` outside a Slurm array or a Kubernetes Indexed Job.
    #[error(
        "--shard auto: not in a cluster job; looked for {}. Use --shard I/N elsewhere",
        AUTO_VARIABLES
    )]
    NotInClusterJob,
    #[error("--shard auto: {name}={value:?} is not a whole number")]
    NotANumber { name: String, value: String },
    /// The engine's index or count does not fit a shard (`from`: the Slurm array or the
    /// Kubernetes Indexed Job).
    #[error("--shard auto: {from} is too large")]
    TooLarge { from: &'static str },
    #[error("--shard auto: {from} gives shard {index} of {count}, not 0 ≤ I < N")]
    OutOfRange {
        from: &'static str,
        index: u32,
        count: u32,
    },
    #[error(
        "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (Slurm sets \
         both in a job array)"
    )]
    SlurmCountMissing,
    /// An array given as a list with gaps (`--array=0,3,7`): no rank every task computes alike.
    #[error(
        "--shard auto: the Slurm array's {count} tasks are not the range {min}-{max}:{step} (an \
         array with gaps, e.g. --array=0,3,7?); give sbatch a range such as --array=0-{}",
        .count.saturating_sub(1)
    )]
    SlurmArrayGaps {
        count: u64,
        min: u64,
        max: u64,
        step: u64,
    },
    #[error("--shard auto: SLURM_ARRAY_TASK_ID={id} is not in the array {min}..:{step}")]
    SlurmIdOutside { id: u64, min: u64, step: u64 },
    #[error("--shards {shards} disagrees with the Slurm array's {count} tasks")]
    SlurmDisagrees { shards: u32, count: u64 },
    #[error(
        "--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but not the count: \
         give --shards N or REPOPROBE_SHARDS (the Job's `completions`)"
    )]
    KubernetesCountMissing,
}

/// Under `--shard auto` in a Slurm array of fewer tasks than the run has shards (`run_count`,
/// from its manifest): a task of the run submitted again on its own or with a few others
/// (`sbatch --array=1 job.sh` after a 4-task `--array=0-3`), whose shard is its task ID. `None`
/// when the array is the run's own (its count is the run's) or not Slurm's, or the ID is no
/// shard of the run. The run's array must have been submitted 0-based, step 1 (as
/// `deploy/slurm/` does): the ID of a task is then its shard's index.
pub fn resubmitted(
    shard: Shard,
    run_count: u32,
    env: impl Fn(&str) -> Option<String>,
) -> Option<Shard> {
    if shard.count >= run_count {
        return None;
    }
    let id: u32 = env("SLURM_ARRAY_TASK_ID")?.trim().parse().ok()?;
    (id < run_count).then_some(Shard {
        index: id,
        count: run_count,
    })
}

/// The variables `--shard auto` reads, in the order it tries them (named in its error).
pub const AUTO_VARIABLES: &str = "SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (a Slurm job \
     array), or JOB_COMPLETION_INDEX with --shards N or REPOPROBE_SHARDS (a Kubernetes Indexed Job)";

/// The shard of this process: `--shard` (`arg`) with `--shards` (`shards`) and the environment
/// (`env`, a lookup, so tests need no process environment). `None` without `--shard`.
///
/// A Slurm array need not start at 0 nor step by 1 (`--array=1-16`, `--array=0-30:2`): the index
/// is the task's rank, `(ID − MIN) / STEP`; an array given as a list with gaps
/// (`--array=0,3,7`) has no rank that every task can compute alike, and is refused.
pub fn resolve(
    arg: Option<ShardArg>,
    shards: Option<u32>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Shard>, ShardError> {
    match arg {
        None if shards.is_some() => return Err(ShardError::ShardsWithoutAuto),
        None => return Ok(None),
        Some(ShardArg::Fixed(s)) => {
            if let Some(n) = shards.filter(|&n| n != s.count) {
                return Err(ShardError::ShardsDisagree {
                    shard: s,
                    shards: n,
                });
            }
            return Ok(Some(s));
        }
        Some(ShardArg::Auto) => {}
    }
    let var = |name: &str| number(env(name), name);
    if let Some(id) = var("SLURM_ARRAY_TASK_ID")? {
        return slurm(id, shards, &var).map(Some);
    }
    if let Some(index) = var("JOB_COMPLETION_INDEX")? {
        return kubernetes(index, shards, &var).map(Some);
    }
    Err(ShardError::NotInClusterJob)
}

/// A variable of the cluster's, read as a whole number; unset or blank is `None`.
fn number(value: Option<String>, name: &str) -> Result<Option<u64>, ShardError> {
    match value {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(ShardError::NotANumber {
                name: name.to_string(),
                value: v,
            }),
        },
    }
}

/// Shard `index` of `count`, as `from` gave them.
fn fit(index: u64, count: u64, from: &'static str) -> Result<Shard, ShardError> {
    let (Ok(index), Ok(count)) = (u32::try_from(index), u32::try_from(count)) else {
        return Err(ShardError::TooLarge { from });
    };
    if count == 0 || index >= count {
        return Err(ShardError::OutOfRange { from, index, count });
    }
    Ok(Shard { index, count })
}

type Var<'a> = &'a dyn Fn(&str) -> Result<Option<u64>, ShardError>;

/// A Slurm array task `id`: its rank in the array's range, of the array's task count.
fn slurm(id: u64, shards: Option<u32>, var: Var) -> Result<Shard, ShardError> {
    let Some(count) = var("SLURM_ARRAY_TASK_COUNT")? else {
        return Err(ShardError::SlurmCountMissing);
    };
    let min = var("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = var("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    if let Some(max) = var("SLURM_ARRAY_TASK_MAX")?
        && (max < min || (max - min) / step + 1 != count)
    {
        return Err(ShardError::SlurmArrayGaps {
            count,
            min,
            max,
            step,
        });
    }
    if id < min || !(id - min).is_multiple_of(step) {
        return Err(ShardError::SlurmIdOutside { id, min, step });
    }
    if let Some(n) = shards.filter(|&n| u64::from(n) != count) {
        return Err(ShardError::SlurmDisagrees { shards: n, count });
    }
    fit((id - min) / step, count, "the Slurm array")
}

/// A Kubernetes Indexed Job's `index`, of the count given (`--shards`, else `REPOPROBE_SHARDS`).
fn kubernetes(index: u64, shards: Option<u32>, var: Var) -> Result<Shard, ShardError> {
    let count = match (shards, var("REPOPROBE_SHARDS")?) {
        (Some(n), _) => u64::from(n),
        (None, Some(n)) => n,
        (None, None) => return Err(ShardError::KubernetesCountMissing),
    };
    fit(index, count, "the Kubernetes Indexed Job")
}

/// 64-bit FNV-1a: stable across runs and machines, unlike the std's seeded hasher.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!("1/4".parse(), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn auto_takes_the_shard_from_slurm_arrays_of_any_start_and_step() {
        let auto = Some(ShardArg::Auto);
        let s = |index, count| Ok(Some(Shard { index, count }));
        let plain = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(resolve(auto, None, env(&plain)), s(2, 4));
        // --array=1-16: task 16 is the last shard.
        let from_one = [
            ("SLURM_ARRAY_TASK_ID", "16"),
            ("SLURM_ARRAY_TASK_COUNT", "16"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "16"),
            ("SLURM_ARRAY_TASK_STEP", "1"),
        ];
        assert_eq!(resolve(auto, None, env(&from_one)), s(15, 16));
        // --array=10-16:3 → 10, 13, 16.
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "13"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_MAX", "16"),
            ("SLURM_ARRAY_TASK_STEP", "3"),
        ];
        assert_eq!(resolve(auto, None, env(&stepped)), s(1, 3));
        // --array=0,3,7: no shared rank.
        let gaps = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
        ];
        let e = resolve(auto, None, env(&gaps)).unwrap_err();
        assert!(matches!(e, ShardError::SlurmArrayGaps { .. }), "{e}");
        assert!(e.to_string().contains("--array=0-2"), "{e}");
        let e = resolve(auto, Some(5), env(&plain)).unwrap_err();
        assert_eq!(
            e,
            ShardError::SlurmDisagrees {
                shards: 5,
                count: 4
            }
        );
    }

    #[test]
    fn auto_takes_a_kubernetes_index_with_the_count_given_and_names_what_it_looked_for() {
        let auto = Some(ShardArg::Auto);
        let k8s = [("JOB_COMPLETION_INDEX", "7")];
        assert_eq!(
            resolve(auto, Some(8), env(&k8s)),
            Ok(Some(Shard { index: 7, count: 8 }))
        );
        let with_var = [("JOB_COMPLETION_INDEX", "0"), ("REPOPROBE_SHARDS", "3")];
        assert_eq!(
            resolve(auto, None, env(&with_var)),
            Ok(Some(Shard { index: 0, count: 3 }))
        );
        let e = resolve(auto, None, env(&k8s)).unwrap_err();
        assert_eq!(e, ShardError::KubernetesCountMissing);
        assert!(
            e.to_string().contains("--shards N or REPOPROBE_SHARDS"),
            "{e}"
        );
        let e = resolve(auto, Some(7), env(&k8s)).unwrap_err();
        assert!(
            matches!(
                e,
                ShardError::OutOfRange {
                    index: 7,
                    count: 7,
                    ..
                }
            ),
            "{e}"
        );
        let e = resolve(auto, None, env(&[])).unwrap_err();
        assert_eq!(e, ShardError::NotInClusterJob);
        let e = e.to_string();
        for var in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "JOB_COMPLETION_INDEX",
            "REPOPROBE_SHARDS",
        ] {
            assert!(e.contains(var), "{e}");
        }
        let e = resolve(auto, None, env(&[("SLURM_ARRAY_TASK_ID", "x")])).unwrap_err();
        assert!(matches!(e, ShardError::NotANumber { .. }), "{e}");
        assert!(e.to_string().contains("not a whole number"), "{e}");
        // Without --shard, nothing; a fixed shard is itself.
        assert_eq!(resolve(None, None, env(&k8s)), Ok(None));
        let fixed = Some(ShardArg::Fixed(Shard { index: 1, count: 2 }));
        assert_eq!(
            resolve(fixed, None, env(&k8s)),
            Ok(Some(Shard { index: 1, count: 2 }))
        );
        assert_eq!(
            resolve(None, Some(2), env(&[])),
            Err(ShardError::ShardsWithoutAuto)
        );
        assert_eq!("auto".parse(), Ok(ShardArg::Auto));
        assert_eq!(
            Shard {
                index: 3,
                count: 16
            }
            .label(),
            "0003-of-0016"
        );
        assert_eq!(
            Shard {
                index: 3,
                count: 12345
            }
            .label(),
            "00003-of-12345"
        );
    }

    #[test]
    fn every_key_is_in_exactly_one_shard_and_the_split_is_even() {
        let keys: Vec<String> = (0..4000).map(|i| format!("q{i} / model / run 0")).collect();
        let mut sizes = [0usize; 4];
        for k in &keys {
            let owners: Vec<u32> = (0..4)
                .filter(|&i| Shard { index: i, count: 4 }.owns(k))
                .collect();
            assert_eq!(owners.len(), 1, "{k}");
            assert_eq!(Shard::index_of(k, 4), owners[0], "{k}");
            sizes[owners[0] as usize] += 1;
        }
        assert!(sizes.iter().all(|&n| (900..1100).contains(&n)), "{sizes:?}");
        // The reference value of FNV-1a, so the split never changes between versions.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_task_submitted_again_alone_is_its_shard_of_the_run() {
        let env =
            |id: &'static str| move |k: &str| (k == "SLURM_ARRAY_TASK_ID").then(|| id.to_string());
        let alone = Shard { index: 0, count: 1 };
        assert_eq!(
            resubmitted(alone, 4, env("1")),
            Some(Shard { index: 1, count: 4 })
        );
        // The run's own array, an ID past the run's shards, no Slurm: as resolved.
        assert_eq!(resubmitted(Shard { index: 1, count: 4 }, 4, env("1")), None);
        assert_eq!(resubmitted(alone, 4, env("4")), None);
        assert_eq!(resubmitted(alone, 4, |_: &str| None), None);
    }
}
