//! Where extending a vocabulary starts ([`super::from_tokens::extend_merges`]):
//! every distinct chunk of a table encoded by the base vocabulary, on several
//! threads.
//!
//! A chunk's encoding is tiktoken's piece encoding ([`encode_piece`]): the
//! chunk's own id when it is a token, else the base's merges on its bytes.
//! The merges are run on the parts between the positions no token can
//! straddle ([`crate::vocab::cuts`]), which gives the same ids (the argument
//! is in that module), and each distinct part is merged once per task: the
//! chunks of superword training are lines, long and nearly all distinct, but
//! made of the same few thousand words.
//!
//! Complexity: linear in the table's bytes (one boundary test per byte, one
//! hash lookup per part) plus the merges of each task's distinct parts.

use rustc_hash::FxHashMap;

use super::{ChunkTable, Control};
use crate::encode::encode_piece_parts;
use crate::error::Result;
use crate::parallel;
use crate::vocab::Vocab;
use crate::Rank;

/// Chunks per task: at least this many, so that each task's part cache pays
/// off, and at most [`TASK_CHUNKS_MAX`]; in between, four tasks per thread.
/// Every task merges its distinct parts anew, so on a large table fewer,
/// larger tasks merge far fewer parts (the chunks of superword training are
/// lines made of the same few thousand words).
const TASK_CHUNKS: usize = 16_384;

/// See [`TASK_CHUNKS`].
const TASK_CHUNKS_MAX: usize = 1 << 18;

/// Longest part kept in a task's cache (longer ones are rare and merged
/// each time).
const CACHED_PART_MAX: usize = 64;

/// One task's chunks: the ids back to back, and per chunk its number of ids
/// and its count.
pub(super) type Task = (Vec<Rank>, Vec<(u32, u64)>);

/// The chunks of a table as id sequences, in table order, kept in the
/// per-task pieces they were made in.
pub(super) struct Encoded {
    tasks: Vec<Task>,
}

impl Encoded {
    /// Number of ids over all chunks.
    pub fn ids(&self) -> usize {
        self.tasks.iter().map(|t| t.0.len()).sum()
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.tasks.iter().map(|t| t.1.len()).sum()
    }

    /// The tasks: each one's ids back to back, and per chunk its number of
    /// ids and its count (tasks in table order).
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// `(ids, count)` of every chunk, in table order.
    pub fn chunks(&self) -> impl Iterator<Item = (&[Rank], u64)> + '_ {
        self.tasks.iter().flat_map(|(ids, lens)| {
            let mut at = 0usize;
            lens.iter().map(move |&(n, c)| {
                let s = &ids[at..at + n as usize];
                at += n as usize;
                (s, c)
            })
        })
    }
}

/// Encodes every chunk of `table` by `base` on `threads` threads (see
/// [`crate::parallel::map_par`]); checks `ctl` between tasks.
pub(super) fn encode_table(
    base: &Vocab,
    table: &ChunkTable,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Encoded> {
    let k = parallel::resolve_threads(threads)?;
    let per_task = (table.len() / (4 * k)).clamp(TASK_CHUNKS, TASK_CHUNKS_MAX);
    let starts: Vec<usize> = (0..table.len()).step_by(per_task).collect();
    let tasks = parallel::map_par(&starts, threads, |&from| {
        ctl.check()?;
        let to = (from + per_task).min(table.len());
        Ok(encode_chunks(base, (from..to).filter_map(|i| table.get(i))))
    })?;
    Ok(Encoded { tasks })
}

/// A part of at most 15 bytes as one number (its bytes, then its length in
/// the last byte): most parts are words, and a number hashes and compares
/// faster than a slice.
#[inline]
fn short_key(part: &[u8]) -> Option<u128> {
    if part.len() > 15 {
        return None;
    }
    let mut b = [0u8; 16];
    b[..part.len()].copy_from_slice(part);
    b[15] = part.len() as u8;
    Some(u128::from_le_bytes(b))
}

/// One task: the `(chunk, count)` pairs of `chunks`, in order; each
/// distinct part merged once (cached by [`short_key`] when short).
pub(super) fn encode_chunks<'c>(
    base: &Vocab,
    chunks: impl Iterator<Item = (&'c [u8], u64)>,
) -> Task {
    let mut ids = Vec::new();
    let mut lens = Vec::new();
    let mut cache: FxHashMap<&[u8], (u32, u32)> = FxHashMap::default();
    let mut short: FxHashMap<u128, (u32, u32)> = FxHashMap::default();
    let mut merged: Vec<Rank> = Vec::new();
    let cuts = base.cuts();
    for (chunk, count) in chunks {
        let at = ids.len();
        if let Some(r) = base.rank(chunk) {
            ids.push(r);
        } else {
            let mut start = 0;
            for p in 1..=chunk.len() {
                if p < chunk.len() && !cuts.is_boundary(chunk, p) {
                    continue;
                }
                let part = &chunk[start..p];
                start = p;
                if part.len() > CACHED_PART_MAX {
                    encode_piece_parts(part, base, &mut ids);
                    continue;
                }
                let fill = |merged: &mut Vec<Rank>| {
                    let s = merged.len();
                    encode_piece_parts(part, base, merged);
                    (s as u32, (merged.len() - s) as u32)
                };
                let (s, n) = match short_key(part) {
                    Some(k) => *short.entry(k).or_insert_with(|| fill(&mut merged)),
                    None => *cache.entry(part).or_insert_with(|| fill(&mut merged)),
                };
                ids.extend_from_slice(&merged[s as usize..(s + n) as usize]);
            }
        }
        lens.push(((ids.len() - at) as u32, count));
    }
    (ids, lens)
}
