//! Stable sorts that share one copy of the standard library's sort.
//!
//! `slice::sort_by` is generic over its comparator: every call site with its own closure gets
//! its own copy of the whole driftsort (and `sort_unstable_by` of ipnsort), 3–8 KB of wasm
//! each. The site's page held 28 such copies and its worker 35, about 110 and 140 KB of their
//! wasm before compression (issue 56, benches/README.md). These functions sort the positions
//! `0..n` instead, through one comparator behind `dyn`, so that the sort itself exists once in
//! a program, and then move the items to their places, which is a small loop per item type.
//!
//! [`SharedSort`] puts them where `sort_by`, `sort_by_key` and `sort` were, as methods of any
//! slice (and so of a `Vec`).
//!
//! The order is the standard stable sort's for the same comparator (equal items keep their
//! order), on every target: the CLI and the site sort alike. The cost is a `Vec<usize>` of the
//! slice's length and a call through a pointer per comparison.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `items` stably by `compare`, as `items.sort_by(compare)` does.
pub fn by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    if items.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    {
        let read: &[T] = items;
        sort_positions(&mut order, &mut |a: &usize, b: &usize| {
            compare(&read[*a], &read[*b])
        });
    }
    place(items, &mut order);
}

/// Sorts `items` stably by the key `key` gives, as `items.sort_by_key(key)` does.
pub fn by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` stably in their own order, as `items.sort()` does.
pub fn ord<T: Ord>(items: &mut [T]) {
    by(items, T::cmp);
}

/// The sorts of this module as methods of a slice: `v.shared_sort_by(…)` where `v.sort_by(…)`
/// was.
pub trait SharedSort<T> {
    /// [`by`].
    fn shared_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering);
    /// [`by_key`].
    fn shared_sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K);
    /// [`ord`].
    fn shared_sort(&mut self)
    where
        T: Ord;
}

impl<T> SharedSort<T> for [T] {
    fn shared_sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering) {
        by(self, compare);
    }
    fn shared_sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K) {
        by_key(self, key);
    }
    fn shared_sort(&mut self)
    where
        T: Ord,
    {
        ord(self);
    }
}

/// Maps and sets built by inserting the items one by one, where `collect()` would sort them
/// first (`BTreeMap::from_iter` sorts the pairs with the stable sort: one more copy of it per key
/// and value types). The same map or set: of pairs with equal keys the last one's value stays,
/// as with `collect()`.
pub trait CollectTree: Iterator + Sized {
    /// `collect::<BTreeMap<_, _>>()`, without the sort.
    fn collect_map<K: Ord, V>(self) -> BTreeMap<K, V>
    where
        Self: Iterator<Item = (K, V)>,
    {
        let mut map = BTreeMap::new();
        map.extend(self);
        map
    }

    /// `collect::<BTreeSet<_>>()`, without the sort.
    fn collect_set(self) -> BTreeSet<Self::Item>
    where
        Self::Item: Ord,
    {
        let mut set = BTreeSet::new();
        set.extend(self);
        set
    }
}

impl<I: Iterator> CollectTree for I {}

/// The one copy of the sort: positions, by a comparator behind `dyn`.
#[inline(never)]
fn sort_positions(order: &mut [usize], compare: &mut dyn FnMut(&usize, &usize) -> Ordering) {
    order.sort_by(compare);
}

/// Moves the item at `order[i]` to `i`, for every `i`, by following each cycle of the
/// permutation with swaps (`order` is left as `0..n`).
fn place<T>(items: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency): the same lists on every run.
    fn lists() -> Vec<Vec<(u8, u16)>> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..300)
            .map(|n| {
                let len = (n % 70) as usize;
                // Few distinct keys, so that ties (and stability) are common.
                (0..len).map(|i| ((next() % 5) as u8, i as u16)).collect()
            })
            .collect()
    }

    #[test]
    // The standard `sort_by` with a closure is the point of comparison here.
    #[allow(clippy::unnecessary_sort_by)]
    fn the_order_is_the_standard_stable_sorts() {
        for list in lists() {
            let mut want = list.clone();
            want.sort_by(|a, b| b.0.cmp(&a.0));
            let mut got = list.clone();
            by(&mut got, |a, b| b.0.cmp(&a.0));
            assert_eq!(got, want, "by, from {list:?}");

            let mut want = list.clone();
            want.sort_by_key(|p| p.0);
            let mut got = list.clone();
            by_key(&mut got, |p| p.0);
            assert_eq!(got, want, "by_key, from {list:?}");

            let mut want = list.clone();
            want.sort();
            let mut got = list;
            ord(&mut got);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn maps_and_sets_are_those_collect_builds() {
        for list in lists() {
            let want: BTreeMap<u8, u16> = list.iter().copied().collect();
            assert_eq!(list.iter().copied().collect_map(), want);
            let want: BTreeSet<(u8, u16)> = list.iter().copied().collect();
            assert_eq!(list.iter().copied().collect_set(), want);
        }
    }

    #[test]
    fn items_that_own_memory_are_moved_not_copied_or_lost() {
        let mut v: Vec<String> = ["d", "a", "c", "b", "a"].map(String::from).to_vec();
        by(&mut v, |a, b| a.cmp(b));
        assert_eq!(v, ["a", "a", "b", "c", "d"]);
        let mut empty: Vec<String> = Vec::new();
        ord(&mut empty);
        assert!(empty.is_empty());
    }
}
