//! `--shard I/N`: splitting one run across machines. Each key belongs to exactly one shard, by a
//! hash of its printed name that does not depend on input order, the platform or the Rust
//! version (FNV-1a), so N machines given the same inputs do disjoint parts whose outputs
//! `repoprobe bundle` merges.

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
        fnv1a(key.to_string().as_bytes()) % u64::from(self.count) == u64::from(self.index)
    }
}

impl Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: write I/N with 0 ≤ I < N, e.g. 0/4");
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

    #[test]
    fn every_key_is_in_exactly_one_shard_and_the_split_is_even() {
        let keys: Vec<String> = (0..4000).map(|i| format!("q{i} / model / run 0")).collect();
        let mut sizes = [0usize; 4];
        for k in &keys {
            let owners: Vec<u32> = (0..4)
                .filter(|&i| Shard { index: i, count: 4 }.owns(k))
                .collect();
            assert_eq!(owners.len(), 1, "{k}");
            sizes[owners[0] as usize] += 1;
        }
        assert!(sizes.iter().all(|&n| (900..1100).contains(&n)), "{sizes:?}");
        // The reference value of FNV-1a, so the split never changes between versions.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
