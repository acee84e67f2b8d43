//! Which merge loop learns the merges of a [`ChunkTable`]: [`compact`] for tables
//! of short chunks (less than half the memory), handing over to [`positions`]
//! past a work budget, and [`positions`] for tables with long chunks. Both loops
//! learn exactly the merges of `bytepair.reference.train_from_counts`.

use super::compact::{self, Budget, Learned, TableRef};
use super::positions;
use super::{ChunkTable, Control, MergeOptions};
use crate::error::{Error, Result};
use crate::Rank;

/// Learns up to `opts.num_merges` merges from `table`, exactly as
/// `bytepair.reference.train_from_counts` does (same merges, same order).
/// Merge `k` creates token id `256 + k`. Tables of short chunks (see
/// [`compact::fits`]) go to the compact loop, the others to the position loop
/// ([`positions`]); both learn the same merges.
///
/// Checks `ctl.cancel` at every merge and reports progress in
/// `ctl.merges_done`.
///
/// Errors: [`Error::Interrupted`] when cancelled; [`Error::InvalidTraining`] when
/// the table is too large for 32-bit positions or its total count overflows.
pub fn learn_merges(
    table: &ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    learn_merges_with(
        table,
        opts,
        ctl,
        MergeLoop::for_table(table, opts.num_merges),
    )
}

/// [`learn_merges`] on a table it owns: the table is freed once the loop's
/// own structures are built, so the two are never held at once during the
/// merges (the table costs its bytes plus about 48 bytes per chunk).
pub fn learn_merges_owned(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let which = MergeLoop::for_table(&table, opts.num_merges);
    learn_merges_owned_with(table, opts, ctl, which)
}

/// The merge loops (they learn the same merges).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeLoop {
    /// The compact loop while its work stays within its budget
    /// ([`compact::BUDGET_PER_BYTE`]), then the position loop from the start.
    CompactFirst,
    /// Chunk-id occurrences over a flat symbol array ([`compact`]), to the end.
    Compact,
    /// Byte-position occurrences over linked nodes ([`positions`]).
    Positions,
}

impl MergeLoop {
    /// The loop [`learn_merges`] takes for `merges` merges from `table`.
    pub fn for_table(table: &ChunkTable, merges: usize) -> Self {
        if compact::fits(table, merges) {
            MergeLoop::CompactFirst
        } else {
            MergeLoop::Positions
        }
    }
}

/// [`learn_merges`] with a chosen loop (tests run both on the same tables).
pub fn learn_merges_with(
    table: &ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
    which: MergeLoop,
) -> Result<Vec<(Rank, Rank)>> {
    let budget = match which {
        MergeLoop::Positions => return positions::learn(table, opts, ctl),
        MergeLoop::Compact => Budget::Finish,
        MergeLoop::CompactFirst => Budget::GiveUp,
    };
    match compact::learn(TableRef::Borrowed(table), opts, ctl, budget)? {
        Learned::Merges(merges) => Ok(merges),
        Learned::OverBudget(_) => positions::learn(table, opts, ctl),
    }
}

/// [`learn_merges_owned`] with a chosen loop.
pub fn learn_merges_owned_with(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
    which: MergeLoop,
) -> Result<Vec<(Rank, Rank)>> {
    let budget = match which {
        MergeLoop::Positions => return positions::learn_owned(table, opts, ctl),
        MergeLoop::Compact => Budget::Finish,
        MergeLoop::CompactFirst => Budget::GiveUp,
    };
    match compact::learn(TableRef::Owned(table), opts, ctl, budget)? {
        Learned::Merges(merges) => Ok(merges),
        Learned::OverBudget(Some(table)) => positions::learn_owned(table, opts, ctl),
        Learned::OverBudget(None) => Err(Error::training("the merge loop lost its table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(chunks: &[(&[u8], u64)]) -> ChunkTable {
        let mut t = ChunkTable::new();
        for (c, n) in chunks {
            t.add(c, *n).unwrap();
        }
        t
    }

    /// Both loops, checked to agree.
    fn both(t: &ChunkTable, o: &MergeOptions) -> Vec<(u32, u32)> {
        let ctl = Control::default();
        let c = learn_merges_with(t, o, &ctl, MergeLoop::Compact).unwrap();
        let p = learn_merges_with(t, o, &ctl, MergeLoop::Positions).unwrap();
        assert_eq!(c, p, "the compact and position loops disagree");
        let f = learn_merges_with(t, o, &ctl, MergeLoop::CompactFirst).unwrap();
        assert_eq!(f, p, "the budgeted compact loop disagrees");
        c
    }

    fn opts(k: usize) -> MergeOptions {
        MergeOptions {
            num_merges: k,
            min_frequency: 1,
            max_token_length: None,
        }
    }

    /// `n` pseudo-random bytes drawn from `alphabet`.
    fn drawn(n: usize, alphabet: &[u8], seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                alphabet[(x >> 16) as usize % alphabet.len()]
            })
            .collect()
    }

    #[test]
    fn a_long_chunk_every_merge_touches_runs_out_the_budget() {
        let digits = drawn(20_000, b"0123456789", 7);
        let t = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        let o = opts(300);
        assert_eq!(MergeLoop::for_table(&t, 300), MergeLoop::CompactFirst);
        let ctl = Control::default();
        // the loop gives up and gives back the very table it started from
        let copy = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        match compact::learn(TableRef::Owned(copy), &o, &ctl, Budget::GiveUp).unwrap() {
            Learned::OverBudget(Some(back)) => assert!(back == t, "the rebuilt table differs"),
            _ => panic!("the budget did not run out"),
        }
        // then the position loop learns the merges, borrowed or owned
        let p = learn_merges_with(&t, &o, &ctl, MergeLoop::Positions).unwrap();
        assert_eq!(
            learn_merges_with(&t, &o, &ctl, MergeLoop::CompactFirst).unwrap(),
            p
        );
        let copy = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        assert_eq!(
            learn_merges_owned_with(copy, &o, &ctl, MergeLoop::CompactFirst).unwrap(),
            p
        );
    }

    #[test]
    fn short_chunks_stay_within_the_budget() {
        let mut t = ChunkTable::new();
        for i in 0..5_000u32 {
            let word = drawn(2 + (i % 9) as usize, b"etaoinshrdlu", i);
            t.add(&word, 1 + u64::from(i % 7)).unwrap();
        }
        let ctl = Control::default();
        let got =
            compact::learn(TableRef::Borrowed(&t), &opts(2_000), &ctl, Budget::GiveUp).unwrap();
        assert!(matches!(got, Learned::Merges(m) if m.len() == 2_000));
    }

    fn learn(t: &ChunkTable, k: usize) -> Vec<(u32, u32)> {
        let o = MergeOptions {
            num_merges: k,
            min_frequency: 1,
            max_token_length: None,
        };
        both(t, &o)
    }

    #[test]
    fn loops_agree_on_pseudo_random_tables() {
        // few symbols, many ties and overlapping runs; some chunks repeat
        // counts so that first-seen order decides
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..60 {
            let mut t = ChunkTable::new();
            for _ in 0..(1 + next() % 40) {
                let len = 1 + (next() % 12) as usize;
                let chunk: Vec<u8> = (0..len).map(|_| b"aab c"[(next() % 5) as usize]).collect();
                t.add(&chunk, 1 + next() % 3).unwrap();
            }
            let o = MergeOptions {
                num_merges: 5 + round,
                min_frequency: 1 + (round as u64 % 3),
                max_token_length: if round % 4 == 0 { Some(3) } else { None },
            };
            both(&t, &o);
        }
    }

    #[test]
    fn long_chunks_take_the_position_loop() {
        let short = table(&[(b"ab ab", 1), (b"abc", 2)]);
        assert_eq!(MergeLoop::for_table(&short, 3), MergeLoop::CompactFirst);
        let long = vec![b'a'; 5000];
        let t = table(&[(&long, 1), (b"ab", 1)]);
        // bounded by the merges: 5000 * 3 visits per byte is within the bound
        assert_eq!(MergeLoop::for_table(&t, 3), MergeLoop::CompactFirst);
        assert_eq!(MergeLoop::for_table(&t, 4500), MergeLoop::Positions);
        assert_eq!(learn(&t, 3), vec![(97, 97), (256, 256), (257, 257)]);
    }

    #[test]
    fn wide_symbols_past_65536_tokens() {
        // 70,000 merges need 32-bit symbols; both loops still agree
        let mut t = ChunkTable::new();
        let mut x: u32 = 12345;
        for _ in 0..30_000 {
            let chunk: Vec<u8> = (0..8)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            t.add(&chunk, 1).unwrap();
        }
        let m = learn(&t, 70_000);
        assert!(m.len() > 65_280, "{} merges", m.len());
    }

    #[test]
    fn banana_bandana() {
        let t = table(&[(b"banana bandana", 1)]);
        assert_eq!(learn(&t, 3), vec![(97, 110), (98, 256), (256, 97)]);
    }

    #[test]
    fn overlapping_runs_merge_left_to_right() {
        // "aaaa" -> [aa, aa]; then (aa, aa) once.
        let t = table(&[(b"aaaa", 1)]);
        assert_eq!(learn(&t, 5), vec![(97, 97), (256, 256)]);
        // "aaa": (a,a) counted twice, merged once -> [aa, a]; then (aa, a).
        let t = table(&[(b"aaa", 1)]);
        assert_eq!(learn(&t, 5), vec![(97, 97), (256, 97)]);
    }

    #[test]
    fn luna_raw_bytes() {
        let t = table(&[(b"luna saw a star. luna said hi to the star.", 1)]);
        let m = learn(&t, 8);
        assert_eq!(m[0], (b' ' as u32, b's' as u32));
        assert_eq!(m[1], (b'a' as u32, 256));
        assert_eq!(m[2], (b'l' as u32, b'u' as u32));
        assert_eq!(m.len(), 8);
    }

    #[test]
    fn max_token_length_and_min_frequency() {
        let t = table(&[(b"abcabc", 3)]);
        let o = MergeOptions {
            num_merges: 10,
            min_frequency: 1,
            max_token_length: Some(2),
        };
        let m = both(&t, &o);
        assert!(m.len() == 1 && m[0] == (97, 98));
        let o = MergeOptions {
            num_merges: 10,
            min_frequency: 7,
            max_token_length: None,
        };
        assert!(both(&t, &o).is_empty());
    }
}
