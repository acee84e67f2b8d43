//! One long text on several threads: the text is cut where the result
//! cannot change, the parts are encoded in parallel, and their ids joined in
//! order, so the output is exactly the single-thread encoding.
//!
//! Where to cut: special tokens are found first on the whole text (the same
//! walk as a single-thread encode, so allowed specials split it and a
//! disallowed one fails before any work), then each stretch of ordinary text
//! is cut only at the pre-tokenizer's safe cuts
//! ([`crate::pretok::Pretokenizer::is_safe_cut`]: a letter or digit followed
//! by a space or newline), where pre-tokenizing the two sides separately
//! gives exactly the pieces of the whole. Merging is per piece, so the ids
//! are the same too. A text without safe cuts (one long word, custom
//! patterns) stays in one part.
//!
//! Each thread encodes through its own piece cache: the calling thread's
//! (the one a single-thread encode uses) and those of the pool's threads,
//! kept across calls.

use super::{CoreBpe, Sink, SpecialPolicy};
use crate::encode::cache::{with_thread_cache, PieceCache};
use crate::error::Result;
use crate::parallel::{concat_par, map_par, resolve_threads};
use crate::Rank;

/// Texts shorter than this are encoded on the calling thread whatever the
/// thread count: below it, handing parts to threads costs more than it saves.
pub const PAR_MIN_BYTES: usize = 256 << 10;
/// Smallest part handed to a thread.
const PART_MIN_BYTES: usize = 64 << 10;

/// What the single-thread walk over a text yields: ordinary stretches (byte
/// ranges) and special-token ids, in order.
enum Seg {
    Text(usize, usize),
    Special(Rank),
}

/// A [`Sink`] that records the walk instead of encoding.
struct Segments {
    base: usize,
    segs: Vec<Seg>,
}

impl Sink for Segments {
    fn ordinary(&mut self, _core: &CoreBpe, _cache: &mut PieceCache, text: &str) -> Result<()> {
        // `text` is a subslice of the text the walk started from
        let s = text.as_ptr() as usize - self.base;
        self.segs.push(Seg::Text(s, s + text.len()));
        Ok(())
    }
    fn special(&mut self, id: Rank) {
        self.segs.push(Seg::Special(id));
    }
}

impl CoreBpe {
    /// [`CoreBpe::encode`] on `threads` threads (`None`: one per core). The
    /// result is identical to `encode`'s; texts under [`PAR_MIN_BYTES`], one
    /// thread, or a text with no safe cut run on the calling thread.
    pub fn encode_threads(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<Vec<Rank>> {
        if threads == Some(1) || text.len() < PAR_MIN_BYTES || self.pretok.scanner().is_none() {
            resolve_threads(threads)?; // still refuses 0 (the core count is cached)
            return self.encode(text, policy);
        }
        let k = resolve_threads(threads)?;
        if k <= 1 {
            return self.encode(text, policy);
        }
        let mut walk = Segments {
            base: text.as_ptr() as usize,
            segs: Vec::new(),
        };
        // the specials walk needs no cache: a throwaway handle to this
        // thread's (never filled by the walk)
        with_thread_cache(self.seed(), |c| self.run_with(text, policy, c, &mut walk))?;
        // 16 parts per thread: the threads take contiguous blocks of parts
        // (crate::parallel), and once every part is taken one thread can
        // idle for up to a part's time; with 4 per thread that idling is
        // ~10 % of a 10 MB call on 2 threads (CPU / 2 x wall: 87-92 % busy)
        let part = (text.len() / (16 * k)).max(PART_MIN_BYTES);
        let mut jobs = Vec::new();
        for seg in walk.segs {
            match seg {
                Seg::Special(id) => jobs.push(Seg::Special(id)),
                Seg::Text(s, e) => {
                    let t = &text[s..e];
                    let mut at = 0;
                    while t.len() - at > part + part / 2 {
                        match self.pretok.next_safe_cut(t, at + part) {
                            Some(q) if q < t.len() => {
                                jobs.push(Seg::Text(s + at, s + q));
                                at = q;
                            }
                            _ => break,
                        }
                    }
                    jobs.push(Seg::Text(s + at, e));
                }
            }
        }
        if jobs.len() <= 1 {
            return self.encode(text, policy);
        }
        let parts = map_par(&jobs, Some(k), |j| match *j {
            Seg::Special(id) => Ok(vec![id]),
            Seg::Text(s, e) => {
                let t = &text[s..e];
                let mut v = Vec::with_capacity(super::ids_room(t));
                with_thread_cache(self.seed(), |c| v.ordinary(self, c, t))?;
                Ok(v)
            }
        })?;
        concat_par(&parts, Some(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_give_the_single_thread_ids() {
        let tokens: Vec<Vec<u8>> = (0..=255u8)
            .map(|b| vec![b])
            .chain([
                b"he".to_vec(),
                b"hel".to_vec(),
                b" w".to_vec(),
                b"lo".to_vec(),
            ])
            .collect();
        let bpe = CoreBpe::new(
            tokens,
            vec![("<|e|>".to_string(), 300)],
            Some(crate::pretok::CL100K_PATTERN),
        )
        .unwrap();
        let mut text = String::new();
        let mut x = 7u64;
        while text.len() < 3 * PAR_MIN_BYTES {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            text.push_str(
                [
                    "hello", " world", "\n", "  ", "<|e|>", "12345", "héllo", "'s",
                ][(x % 8) as usize],
            );
        }
        for allowed in [&[][..], &["<|e|>"][..]] {
            let pol = bpe.policy(allowed, &[]);
            let one = bpe.encode(&text, &pol).unwrap();
            for k in [2, 3, 8] {
                assert_eq!(
                    bpe.encode_threads(&text, &pol, Some(k)).unwrap(),
                    one,
                    "{k} threads"
                );
            }
        }
        let pol = bpe.policy_default();
        assert!(bpe.encode_threads(&text, &pol, Some(2)).is_err());
    }
}
