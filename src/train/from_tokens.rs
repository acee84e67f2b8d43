//! Merge loops that start from token ids instead of bytes: extending an
//! existing vocabulary ([`extend_merges`]) and parity-aware training across
//! languages ([`parity_merges`]). Both equal their readable versions in
//! `bytepair.reference` (`extend_from_counts`, `train_parity_from_counts`).
//!
//! Each corpus is a [`Seqs`] (in [`super::seqs`]): its tokens as linked
//! nodes, the pairs with their counts and occurrences, and a lazy heap.
//!
//! Pairs passed over (never chosen): those whose joined token would exceed
//! `max_token_length` bytes, and those whose joined bytes already are a token
//! (the base vocabulary holds tokens that its encoder cannot reach in every
//! context; making them again would give two ids the same bytes). Extending
//! with a word bound (superword training) also passes over pairs whose joined
//! token holds more than `max_words` words; those never enter the heap.

use std::sync::atomic::Ordering;

use super::compact::TableRef;
use super::encoded::encode_table;
use super::lean::{extend_merges_lean, SpanSource};
use super::options::{state_bytes, ExtendBounds, MergeOptions};
use super::pairs::NONE;
use super::seqs::Seqs;
use super::spill::Spill;
use super::tokens::Tokens;
use super::{ChunkTable, Control};
use crate::error::{Error, Result};
use crate::vocab::Vocab;
use crate::Rank;

/// Continues BPE on top of `base`: each distinct chunk of `table` starts as its
/// encoding by `base` (tiktoken's piece encoding), then the most frequent pair
/// (ties: met first) is merged, `opts.num_merges` times at most; the k-th new
/// token gets id `first_id + k`. Returns the merged pairs as ids. With
/// `bounds.max_words`, a pair whose joined token holds more words
/// ([`super::tokens::word_count`]) is never chosen (see `bytepair.reference.extend_from_counts`).
/// The chunks are encoded ([`super::encoded`]), the loop's state is built
/// ([`Seqs::from_encoded`]) and the merges of pairs with many occurrences are
/// applied ([`super::merge_par`]) on `threads` threads; the merges do not
/// depend on the thread count.
///
/// An owned table is dropped once its chunks are encoded (the loop never
/// reads it again), a borrowed one is held by the caller throughout. Span
/// counts spilled to disk ([`ExtendFrom::Runs`]) go to the lean loop.
///
/// Errors: [`Error::InvalidTraining`] when `first_id` collides with the base's
/// ids or the table is too large; [`Error::MemoryLimit`] when, once the
/// chunks are encoded, [`state_bytes`] (plus a borrowed table's own bytes)
/// passes `bounds.memory_limit` and so does the lean loop's need (past
/// [`state_bytes`] the merges are learned by [`super::lean`], the same
/// merges in less memory); [`Error::Interrupted`] when cancelled.
pub fn extend_merges<'a>(
    base: &Vocab,
    from: impl Into<ExtendFrom<'a>>,
    first_id: Rank,
    opts: &MergeOptions,
    bounds: ExtendBounds,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let max_words = bounds.max_words;
    check_new_ids(base, first_id, opts.num_merges)?;
    let table = match from.into() {
        ExtendFrom::Table(t) => t,
        ExtendFrom::Runs(runs) => {
            let (source, limit) = (SpanSource::Runs(runs), bounds.memory_limit);
            return extend_merges_lean(
                base, source, first_id, opts, max_words, limit, threads, ctl,
            );
        }
    };
    // past the node loop's need, the lean loop learns the same merges in far
    // less memory (from the table, held until then), or refuses the limit
    let lean = |t: &ChunkTable| {
        let source = SpanSource::Table(t);
        extend_merges_lean(
            base,
            source,
            first_id,
            opts,
            max_words,
            bounds.memory_limit,
            threads,
            ctl,
        )
    };
    let limit = bounds.memory_limit.unwrap_or(u64::MAX);
    // encoding alone would pass the limit (4 bytes an id, at most an id a byte)
    if table.get().priced() + 4 * table.get().arena_len() as u64 > limit {
        return lean(table.get());
    }
    let encoded = encode_table(base, table.get(), threads, ctl)?;
    let held = match &table {
        TableRef::Borrowed(t) => t.priced(),
        TableRef::Owned(_) => 0, // freed once the loop is chosen
    };
    let (ids, chunks) = (encoded.ids() as u64, encoded.chunk_count() as u64);
    let need = state_bytes(ids, chunks).saturating_add(held);
    if need > limit {
        drop(encoded);
        // when neither loop fits, the error gives the lesser need (the lean
        // loop's fixed costs pass the node loop's on tiny tables)
        return lean(table.get()).map_err(|e| lesser_need(e, ids, chunks, need));
    }
    drop(table);
    let mut toks = Tokens::new(Some(base), first_id);
    let mut st = Seqs::from_encoded(encoded, threads, &mut |a, b| {
        !toks.too_many_words(a, b, max_words)
    })?;
    let min_freq = i64::try_from(opts.min_frequency).unwrap_or(i64::MAX);
    let mut merges = Vec::new();
    let mut touched = Vec::new();
    while merges.len() < opts.num_merges {
        ctl.check()?;
        let max_len = opts.max_token_length;
        let Some((i, count)) = st.best(|a, b| toks.skip(a, b, max_len)) else {
            break;
        };
        if count < min_freq {
            break;
        }
        let (a, b) = st.pairs.pair_ab[i as usize];
        let new_id = first_id + merges.len() as u32;
        toks.push(a, b);
        st.apply((a, b), new_id, &mut touched, &mut |x, y| {
            !toks.too_many_words(x, y, max_words)
        })?;
        merges.push((a, b));
        ctl.merges_done
            .store(merges.len() as u64, Ordering::Relaxed);
    }
    Ok(merges)
}

/// The lean loop's memory-limit error `e`, or the node loop's (over `ids`
/// tokens in `chunks` chunks, needing `need` bytes) when that need is less.
fn lesser_need(e: Error, ids: u64, chunks: u64, need: u64) -> Error {
    match e {
        Error::MemoryLimit {
            need: lean, limit, ..
        } if lean > need => {
            let what = format!(
                "the merge loop over {} tokens in {} distinct chunks",
                crate::error::grouped(ids),
                crate::error::grouped(chunks)
            );
            Error::MemoryLimit { what, need, limit }
        }
        e => e,
    }
}

/// What an extension learns from.
pub enum ExtendFrom<'a> {
    /// A table of chunks, held by the caller or owned.
    Table(TableRef<'a>),
    /// Span counts spilled to disk and not merged (a table of them would
    /// not fit the memory limit): only the lean loop ([`super::lean`])
    /// reads them, merging the runs and encoding the spans itself.
    Runs(&'a Spill),
}

impl<'a> From<TableRef<'a>> for ExtendFrom<'a> {
    fn from(t: TableRef<'a>) -> Self {
        ExtendFrom::Table(t)
    }
}

/// [`Error::InvalidTraining`] unless new ids start at or above the base's
/// and `num_merges` of them fit 32 bits.
fn check_new_ids(base: &Vocab, first_id: Rank, num_merges: usize) -> Result<()> {
    if (first_id as usize) < base.len() {
        return Err(Error::training(format!(
            "new ids must start at or above the base's {} mergeable ids, not at {first_id}",
            base.len()
        )));
    }
    if (first_id as usize).saturating_add(num_merges) >= NONE as usize {
        return Err(Error::training("too many ids for 32 bits"));
    }
    Ok(())
}

/// One training table, one dev table and one non-zero dev size per language.
fn check_parity_tables(n: usize, n_dev: usize, dev_sizes: &[u64]) -> Result<()> {
    if n == 0 || n_dev != n || dev_sizes.len() != n {
        return Err(Error::training(
            "parity training needs one training table, one dev table and one dev size per language",
        ));
    }
    if let Some(l) = dev_sizes.iter().position(|&s| s == 0) {
        return Err(Error::training(format!(
            "language {l} has an empty dev set"
        )));
    }
    Ok(())
}

/// The chunks of `t` as byte sequences (`chooses`: its pairs are counted
/// for choosing merges).
fn byte_seqs(t: &ChunkTable, chooses: bool) -> Result<Seqs> {
    let flat: Vec<Rank> = t.arena().iter().map(|&b| Rank::from(b)).collect();
    let base = t.arena().as_ptr() as usize;
    let chunks = t.iter().map(|(c, n)| {
        let at = c.as_ptr() as usize - base;
        (&flat[at..at + c.len()], n)
    });
    Seqs::new(chunks, t.arena_len(), chooses, &mut |_, _| true)
}

/// Every language's training chunks pooled as byte sequences (language
/// order, then first-seen order): the corpus of the global phase.
fn pooled_seqs(train: &[&ChunkTable]) -> Result<Seqs> {
    let flats: Vec<Vec<Rank>> = train
        .iter()
        .map(|t| t.arena().iter().map(|&b| Rank::from(b)).collect())
        .collect();
    let chunks = train.iter().zip(&flats).flat_map(|(t, flat)| {
        let base = t.arena().as_ptr() as usize;
        t.iter().map(move |(c, k)| {
            let at = c.as_ptr() as usize - base;
            (&flat[at..at + c.len()], k)
        })
    });
    let size = flats.iter().map(Vec::len).sum();
    Seqs::new(chunks, size, true, &mut |_, _| true)
}

/// The merge the language of highest dev cost chooses: tokens / size,
/// compared exactly, ties to the first listed (`order` is left sorted so);
/// its most frequent pair, or the next language's when it has none counted
/// `min_freq` times or more.
fn costliest_choice(
    order: &mut [usize],
    trains: &mut [Seqs],
    (devs, dev_sizes): (&[Seqs], &[u64]),
    toks: &mut Tokens<'_>,
    max_len: Option<usize>,
    min_freq: i64,
) -> Option<(usize, (Rank, Rank))> {
    order.sort_by(|&i, &j| {
        let ci = devs[i].tokens as u128 * dev_sizes[j] as u128;
        let cj = devs[j].tokens as u128 * dev_sizes[i] as u128;
        cj.cmp(&ci).then(i.cmp(&j))
    });
    for &l in order.iter() {
        if let Some((i, count)) = trains[l].best(|a, b| toks.skip(a, b, max_len)) {
            if count >= min_freq {
                return Some((l, trains[l].pairs.pair_ab[i as usize]));
            }
            trains[l].unpop(i, count);
        }
    }
    None
}

/// How parity-aware training measures a language's current cost on its dev
/// set: tokens divided by `dev_sizes[l]` (bytes, characters, or 1 for raw
/// token counts of parallel dev sets).
///
/// At every step the language with the highest cost (ties: the first listed)
/// chooses: its most frequent pair in its own training chunks (ties: met first
/// there) is merged in every language's training and dev chunks. A language
/// with no pair left (or only pairs seen fewer than `min_frequency` times) is
/// passed over for the next most expensive one. Merge `k` creates id `256 + k`.
///
/// With `global_merges > 0` (a hybrid), the first merges are chosen by
/// standard BPE over all languages pooled; `observe` reports them as language
/// `train.len()`.
///
/// `observe(step, language)` is told which language chose each merge.
pub fn parity_merges(
    train: &[&ChunkTable],
    dev: &[&ChunkTable],
    dev_sizes: &[u64],
    global_merges: usize,
    opts: &MergeOptions,
    ctl: &Control,
    mut observe: impl FnMut(usize, usize),
) -> Result<Vec<(Rank, Rank)>> {
    let n = train.len();
    check_parity_tables(n, dev.len(), dev_sizes)?;
    let mut trains: Vec<Seqs> = train
        .iter()
        .map(|t| byte_seqs(t, true))
        .collect::<Result<_>>()?;
    let mut devs: Vec<Seqs> = dev
        .iter()
        .map(|t| byte_seqs(t, false))
        .collect::<Result<_>>()?;
    let mut toks = Tokens::new(None, 256);
    let min_freq = i64::try_from(opts.min_frequency).unwrap_or(i64::MAX);
    let mut merges = Vec::new();
    let mut touched = Vec::new();
    let mut order: Vec<usize> = (0..n).collect();
    // The hybrid variant: the first `global_merges` merges are standard BPE on
    // all languages' training chunks pooled (language order, then first-seen
    // order), chosen by "language" `n`; the phase ends early when the pooled
    // corpus has no qualifying pair.
    let mut pooled = if global_merges > 0 {
        Some(pooled_seqs(train)?)
    } else {
        None
    };
    while merges.len() < opts.num_merges {
        ctl.check()?;
        let max_len = opts.max_token_length;
        let mut chosen = None;
        if merges.len() < global_merges {
            if let Some(p) = pooled.as_mut() {
                if let Some((i, count)) = p.best(|a, b| toks.skip(a, b, max_len)) {
                    if count >= min_freq {
                        chosen = Some((n, p.pairs.pair_ab[i as usize]));
                    }
                }
            }
        }
        if chosen.is_none() {
            pooled = None; // the global phase is over
            let costs = (devs.as_slice(), dev_sizes);
            chosen = costliest_choice(&mut order, &mut trains, costs, &mut toks, max_len, min_freq);
        }
        let Some((l, (a, b))) = chosen else { break };
        let new_id = 256 + merges.len() as u32;
        toks.push(a, b);
        for st in trains
            .iter_mut()
            .chain(devs.iter_mut())
            .chain(pooled.iter_mut())
        {
            st.apply((a, b), new_id, &mut touched, &mut |_, _| true)?;
        }
        observe(merges.len(), l);
        merges.push((a, b));
        ctl.merges_done
            .store(merges.len() as u64, Ordering::Relaxed);
    }
    Ok(merges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::learn_merges;

    fn table(chunks: &[(&[u8], u64)]) -> ChunkTable {
        let mut t = ChunkTable::new();
        for (c, n) in chunks {
            t.add(c, *n).unwrap();
        }
        t
    }

    fn opts(k: usize) -> MergeOptions {
        MergeOptions {
            num_merges: k,
            min_frequency: 1,
            max_token_length: None,
        }
    }

    #[test]
    fn extend_bytes_only_equals_training() {
        let t = table(&[(b"banana bandana", 1), (b"low lower lowest", 2)]);
        let ext = extend_bytes(&t, ExtendBounds::default()).unwrap();
        let trained = learn_merges(&t, &opts(8), &Control::default()).unwrap();
        assert_eq!(ext, trained);
    }

    /// Eight merges on top of the 256 bytes, on one thread.
    fn extend_bytes(t: &ChunkTable, bounds: ExtendBounds) -> Result<Vec<(Rank, Rank)>> {
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let v = Vocab::new(bytes).unwrap();
        extend_merges(
            &v,
            TableRef::Borrowed(t),
            256,
            &opts(8),
            bounds,
            Some(1),
            &Control::default(),
        )
    }

    #[test]
    fn extend_ids_start_above_base() {
        let t = table(&[(b"abab", 1)]);
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.push(b"ab".to_vec());
        let v = Vocab::new(toks).unwrap();
        let m = extend_merges(
            &v,
            TableRef::Borrowed(&t),
            300,
            &opts(3),
            ExtendBounds::default(),
            Some(1),
            &Control::default(),
        )
        .unwrap();
        assert_eq!(m, vec![(256, 256)]);
        assert!(extend_merges(
            &v,
            TableRef::Owned(t),
            200,
            &opts(3),
            ExtendBounds::default(),
            Some(1),
            &Control::default()
        )
        .is_err());
    }

    #[test]
    fn extend_refuses_a_state_above_the_memory_limit() {
        let t = table(&[(b"banana bandana", 3), (b"low lower lowest", 2)]);
        let (ids, chunks) = (30, 2); // every byte an id
        let need = state_bytes(ids, chunks) + t.priced();
        let tight = ExtendBounds {
            max_words: None,
            memory_limit: Some(need - 1),
        };
        match extend_bytes(&t, tight) {
            Err(Error::MemoryLimit { need: n, limit, .. }) => {
                assert_eq!((n, limit), (need, need - 1))
            }
            other => panic!("expected MemoryLimit, got {other:?}"),
        }
        let enough = ExtendBounds {
            memory_limit: Some(need),
            ..tight
        };
        let free = extend_bytes(&t, ExtendBounds::default()).unwrap();
        assert_eq!(extend_bytes(&t, enough).unwrap(), free);
    }

    #[test]
    fn parity_one_language_equals_training() {
        let t = table(&[(b"banana bandana", 1), (b"low lower lowest", 2)]);
        let d = table(&[(b"banana", 1)]);
        let m = parity_merges(
            &[&t],
            &[&d],
            &[6],
            0,
            &opts(6),
            &Control::default(),
            |_, _| {},
        )
        .unwrap();
        assert_eq!(m, learn_merges(&t, &opts(6), &Control::default()).unwrap());
    }

    #[test]
    fn parity_serves_the_worst_language() {
        let en = table(&[(b"the the the", 5)]);
        let ko = table(&[(b"xyxyxy", 1)]);
        let m = parity_merges(
            &[&en, &ko],
            &[&en, &ko],
            &[55, 6],
            0,
            &opts(1),
            &Control::default(),
            |_, _| {},
        )
        .unwrap();
        // both cost 1 token per unit (55 tokens / 55, 6 / 6): the first listed (en) chooses
        assert_eq!(m, vec![(b't' as u32, b'h' as u32)]);
        let m = parity_merges(
            &[&en, &ko],
            &[&en, &ko],
            &[110, 6],
            0,
            &opts(1),
            &Control::default(),
            |_, _| {},
        )
        .unwrap();
        // en now costs half a token per unit: ko chooses
        assert_eq!(m, vec![(b'x' as u32, b'y' as u32)]);
    }

    #[test]
    fn hybrid_starts_with_pooled_frequency() {
        let en = table(&[(b"the the the", 5)]);
        let ko = table(&[(b"xyxyxy", 1)]);
        let mut who = Vec::new();
        let m = parity_merges(
            &[&en, &ko],
            &[&en, &ko],
            &[110, 6],
            1,
            &opts(2),
            &Control::default(),
            |_, l| who.push(l),
        )
        .unwrap();
        // merge 1: the pooled corpus's most frequent pair; merge 2: ko, the expensive one
        assert_eq!(
            m,
            vec![(b't' as u32, b'h' as u32), (b'x' as u32, b'y' as u32)]
        );
        assert_eq!(who, vec![2, 1]);
    }
}
