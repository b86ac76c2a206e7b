//! Seeded orders that are the same on every platform: a Fisher–Yates shuffle over ChaCha8 with
//! 32-bit draws (a `usize` range is drawn otherwise on 32-bit wasm than on 64-bit hosts), seeded
//! by a seed and an FNV-1a hash of a salt (a fixed function, not the process's hasher). What
//! `judge --shuffle-items` and the Grade view's sample draw with.

use rand::{Rng, SeedableRng};

/// Shuffles `v` in place in the order `seed` and `salt` fix.
pub fn shuffle<T>(v: &mut [T], seed: u64, salt: &str) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in salt.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ h);
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i as u32) as usize;
        v.swap(i, j);
    }
}
