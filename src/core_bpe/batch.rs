//! Many texts at once on the [`crate::parallel`] pools.
//!
//! [`CoreBpe::encode_batch_flat`] groups consecutive texts into runs of up to
//! [`RUN_BYTES`] of text: one work item and one output buffer per run instead
//! of one per text, so a batch of short documents pays no allocation and no
//! scheduling per document.

use super::{CoreBpe, SpecialPolicy};
use crate::error::Result;
use crate::parallel::{concat_par, map_par, threads_for_bytes};
use crate::Rank;

/// Text per run of [`CoreBpe::encode_batch_flat`], at most (a longer text is
/// a run by itself); smaller batches are cut finer so that every thread gets
/// several runs.
pub const RUN_BYTES: usize = 1 << 20;

/// Smallest run worth a work item of its own.
const MIN_RUN_BYTES: usize = 16 << 10;

/// Every text's ids in a few flat buffers (see [`CoreBpe::encode_batch_flat`]).
#[derive(Debug, Default)]
pub struct FlatBatch {
    /// The runs' ids, in input order; their concatenation is every text's ids.
    pub runs: Vec<Vec<Rank>>,
    /// Where each text's ids end in that concatenation.
    pub ends: Vec<usize>,
}

impl FlatBatch {
    /// Number of ids in all.
    pub fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// True when there is no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every text's ids in one vector: the single run itself when there is
    /// one, else the runs copied into place on `threads` threads
    /// ([`concat_par`]).
    pub fn into_ids(self, threads: Option<usize>) -> Result<Vec<Rank>> {
        if self.runs.len() == 1 {
            return Ok(self.runs.into_iter().next().unwrap_or_default());
        }
        concat_par(&self.runs, threads)
    }
}

/// The threads a batch call over `texts` runs on: the `threads` asked for,
/// fewer when the batch is too short to pay for waking them
/// ([`threads_for_bytes`]).
pub fn batch_threads<S: AsRef<str>>(texts: &[S], threads: Option<usize>) -> Result<usize> {
    threads_for_bytes(threads, text_bytes(texts))
}

/// The bytes of text in `texts`.
fn text_bytes<S: AsRef<str>>(texts: &[S]) -> usize {
    texts.iter().map(|t| t.as_ref().len()).sum()
}

/// Cuts `sizes` into consecutive ranges of about `target` bytes each.
fn runs(sizes: impl Iterator<Item = usize>, target: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes, mut n) = (0, 0, 0);
    for len in sizes {
        n += 1;
        bytes += len;
        if bytes >= target {
            out.push(start..n);
            start = n;
            bytes = 0;
        }
    }
    if start < n {
        out.push(start..n);
    }
    out
}

impl CoreBpe {
    /// Encodes every text like [`CoreBpe::encode_batch`], into one buffer per
    /// run of consecutive texts (see the module doc) on `threads` threads
    /// (the kept pools: their piece caches stay warm across calls). The first
    /// failing text's error is returned.
    pub fn encode_batch_flat<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<FlatBatch> {
        let total = text_bytes(texts);
        let k = threads_for_bytes(threads, total)?;
        let ranges = if k == 1 {
            // one run: its buffer is the result, no join to copy
            std::iter::once(0..texts.len()).collect()
        } else {
            let target = (total / (16 * k)).clamp(MIN_RUN_BYTES, RUN_BYTES);
            runs(texts.iter().map(|t| t.as_ref().len()), target)
        };
        let encoded = map_par(&ranges, Some(k), |r| {
            let run = &texts[r.clone()];
            let mut ids = Vec::with_capacity(super::ids_room_bytes(text_bytes(run)));
            let mut ends = Vec::with_capacity(run.len());
            for t in run {
                self.encode_into(t.as_ref(), policy, &mut ids)?;
                ends.push(ids.len());
            }
            Ok((ids, ends))
        })?;
        let mut out = FlatBatch {
            runs: Vec::with_capacity(encoded.len()),
            ends: Vec::with_capacity(texts.len()),
        };
        let mut base = 0;
        for (ids, ends) in encoded {
            out.ends.extend(ends.iter().map(|e| base + e));
            base += ids.len();
            out.runs.push(ids);
        }
        Ok(out)
    }

    /// Encodes every text (see [`CoreBpe::encode`]) on `threads` threads.
    /// Results are in input order; the first failing text's error is returned.
    pub fn encode_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        let k = batch_threads(texts, threads)?;
        map_par(texts, Some(k), |t| self.encode(t.as_ref(), policy))
    }

    /// Token counts of every text, in parallel.
    pub fn count_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<Vec<usize>> {
        let k = batch_threads(texts, threads)?;
        map_par(texts, Some(k), |t| self.count(t.as_ref(), policy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_batch_equals_encode_batch() {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.push(b"ab".to_vec());
        let core = CoreBpe::new(v, vec![], None).unwrap();
        let pol = core.policy(&[] as &[&str], &[]);
        let texts: Vec<String> = (0..3000)
            .map(|i| format!("ab{} {}", i, "xab".repeat(i % 50)))
            .chain(["".to_string(), "ab".repeat(40_000)])
            .collect();
        let want = core.encode_batch(&texts, &pol, Some(1)).unwrap();
        for threads in [1, 3] {
            let flat = core.encode_batch_flat(&texts, &pol, Some(threads)).unwrap();
            // one thread: one run, handed over without a join; more: several runs
            assert_eq!(
                flat.runs.len() == 1,
                threads == 1,
                "{} runs",
                flat.runs.len()
            );
            let all: Vec<Rank> = flat.runs.concat();
            let mut at = 0;
            for (w, &end) in want.iter().zip(&flat.ends) {
                assert_eq!(&all[at..end], &w[..]);
                at = end;
            }
            assert_eq!(flat.ends.len(), texts.len());
            assert_eq!(flat.len(), all.len());
            assert_eq!(flat.into_ids(Some(threads)).unwrap(), all);
        }
        assert!(core
            .encode_batch_flat(&[] as &[&str], &pol, None)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn runs_cover_every_text_once() {
        let r = runs([5, 5, 5, 20, 0, 1].into_iter(), 10);
        assert_eq!(r, vec![0..2, 2..4, 4..6]);
        assert!(runs(std::iter::empty(), 10).is_empty());
    }
}
