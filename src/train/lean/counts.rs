//! The lean loop's pair counts: one map from pair to count, kept at 8 bytes
//! an entry (two 16-bit ids, a 32-bit count) when every id fits 16 bits and
//! the spans hold fewer than 2^32 pairs counted with their weights (so no
//! count can pass 32 bits), else at 16 bytes (two 32-bit ids, a 64-bit
//! count). Pairs are [`super::key`]s; a count that reaches 0 is dropped.

use rustc_hash::FxHashMap;

pub(super) enum PairCounts {
    Narrow(FxHashMap<u32, u32>),
    Wide(FxHashMap<u64, i64>),
}

/// The 32-bit key of pair key `k` (both ids below 2^16).
#[inline]
fn narrow(k: u64) -> u32 {
    (((k >> 32) as u32) << 16) | (k as u32 & 0xffff)
}

/// The pair key of 32-bit key `n`.
#[inline]
fn widen(n: u32) -> u64 {
    (u64::from(n >> 16) << 32) | u64::from(n & 0xffff)
}

impl PairCounts {
    /// An empty map; `narrow`: every id fits 16 bits and the weighted pairs
    /// of all spans stay under 2^32.
    pub fn new(narrow: bool) -> Self {
        if narrow {
            PairCounts::Narrow(FxHashMap::default())
        } else {
            PairCounts::Wide(FxHashMap::default())
        }
    }

    /// The count of pair `k` (0 when absent).
    #[inline]
    pub fn get(&self, k: u64) -> i64 {
        match self {
            PairCounts::Narrow(m) => m.get(&narrow(k)).map_or(0, |&c| i64::from(c)),
            PairCounts::Wide(m) => m.get(&k).copied().unwrap_or(0),
        }
    }

    /// Adds `dv` to the count of pair `k` and returns the new count; a
    /// count of 0 or less drops the pair.
    #[inline]
    pub fn add(&mut self, k: u64, dv: i64) -> i64 {
        match self {
            PairCounts::Narrow(m) => {
                let n = narrow(k);
                let c = m.entry(n).or_insert(0);
                // the weighted pairs of all spans stay under 2^32 (see `new`)
                let now = (i64::from(*c) + dv).clamp(0, i64::from(u32::MAX));
                *c = now as u32;
                if now == 0 {
                    m.remove(&n);
                }
                now
            }
            PairCounts::Wide(m) => {
                let c = m.entry(k).or_insert(0);
                *c = c.saturating_add(dv);
                let now = *c;
                if now <= 0 {
                    m.remove(&k);
                }
                now
            }
        }
    }

    /// Every pair and its count.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (u64, i64)> + '_> {
        match self {
            PairCounts::Narrow(m) => Box::new(m.iter().map(|(&n, &c)| (widen(n), i64::from(c)))),
            PairCounts::Wide(m) => Box::new(m.iter().map(|(&k, &c)| (k, c))),
        }
    }

    /// Makes room for `more` pairs beyond those held, so that the map does
    /// not grow (holding its old and new tables at once) during the merges.
    pub fn reserve(&mut self, more: usize) {
        match self {
            PairCounts::Narrow(m) => m.reserve(more),
            PairCounts::Wide(m) => m.reserve(more),
        }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        match self {
            PairCounts::Narrow(m) => m.len(),
            PairCounts::Wide(m) => m.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_and_wide_maps_count_alike() {
        let keys = [
            super::super::key(0, 0),
            super::super::key(65_535, 1),
            super::super::key(7, 65_535),
        ];
        let mut maps = [PairCounts::new(true), PairCounts::new(false)];
        for m in &mut maps {
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(m.add(k, 5 + i as i64), 5 + i as i64);
            }
            assert_eq!(m.add(keys[1], -6), 0);
            assert_eq!(m.get(keys[1]), 0);
            assert_eq!(m.len(), 2);
            let mut all: Vec<(u64, i64)> = m.iter().collect();
            all.sort_unstable();
            assert_eq!(all, vec![(keys[0], 5), (keys[2], 7)]);
        }
    }
}
