//! The lean loop's spans ([`Spans`]), built from a table or from counts
//! spilled to disk, and what the loop needs ([`lean_bytes`]).
//!
//! Spilled counts come back from the runs' merge in byte order, each with
//! its first position. They are encoded by the base in batches (on the
//! caller's threads) and written to a file beside the runs, with only their
//! first positions and lengths kept in memory; the spans are then read back
//! into one arena in first-seen order (the order ties are broken by), so no
//! table of the spans' bytes is ever built.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::{run_loop, Spans};
use crate::error::{Error, Result};
use crate::parallel;
use crate::train::encoded::{encode_chunks, Task};
use crate::train::options::{state_bytes, MergeOptions};
use crate::train::spill::Spill;
use crate::train::sym::Sym;
use crate::train::tokens::Tokens;
use crate::train::{ChunkTable, Control};
use crate::vocab::Vocab;
use crate::Rank;

/// Spilled spans encoded at a time: about this many bytes of them.
const BATCH_BYTES: usize = 16 << 20;

/// Spans per encoding task within a batch.
const TASK_SPANS: usize = 16_384;

/// The longest span the lean loop takes, in ids: a merge rewrites every
/// span it visits whole, so a long span (a document counted without
/// pre-tokenization) would cost its length at every merge of its tokens;
/// such tables need the node loop's memory.
const LONGEST_SPAN: u64 = 1 << 16;

/// Where the lean loop's spans come from.
pub(in crate::train) enum SpanSource<'a> {
    /// A table in first-seen order, encoded here (held by the caller).
    Table(&'a ChunkTable),
    /// Counts spilled to disk ([`Spill`]), merged and encoded here.
    Runs(&'a Spill),
}

/// About what the lean loop holds at its peak for `ids` ids (`id_bytes`
/// each) in `spans` spans, with `vocab` ids in all: the arena, and the more
/// of what is held while the spans are put in first-seen order (36 bytes a
/// span) and what the loop holds (12 bytes a span, about 1.5 bytes an id of
/// pair counts and heap and as much of span lists, 32 bytes a token).
pub fn lean_bytes(ids: u64, spans: u64, id_bytes: u64, vocab: u64) -> u64 {
    let arena = ids.saturating_mul(id_bytes);
    let ordering = spans.saturating_mul(36);
    let looping = ids
        .saturating_mul(3)
        .saturating_add(spans.saturating_mul(12))
        .saturating_add(vocab.saturating_mul(32));
    arena.saturating_add(ordering.max(looping))
}

/// The merges of [`crate::train::from_tokens::extend_merges`] on the spans
/// of `source`, by the lean loop (see the module docs of [`super`]).
///
/// The caller checked the ids (`first_id` at or above the base's, all of
/// them within 32 bits).
///
/// Errors: [`Error::InvalidTraining`] past 32-bit offsets;
/// [`Error::MemoryLimit`] when [`lean_bytes`] passes `limit` (checked once
/// the spans are encoded, before the arena is filled); [`Error::Io`] for the
/// spans' file; [`Error::Interrupted`] when cancelled.
#[allow(clippy::too_many_arguments)]
pub(in crate::train) fn extend_merges_lean(
    base: &Vocab,
    source: SpanSource<'_>,
    first_id: Rank,
    opts: &MergeOptions,
    max_words: Option<usize>,
    limit: Option<u64>,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let k = parallel::resolve_threads(threads)?;
    let vocab = first_id as usize + opts.num_merges;
    let mut toks = Tokens::new(Some(base), first_id);
    if vocab <= 1 << 16 {
        let sp = spans::<u16>(base, source, vocab, limit, threads, ctl)?;
        run_loop(sp, &mut toks, first_id, opts, max_words, k, ctl)
    } else {
        let sp = spans::<u32>(base, source, vocab, limit, threads, ctl)?;
        run_loop(sp, &mut toks, first_id, opts, max_words, k, ctl)
    }
}

/// The spans of `source` in first-seen order.
fn spans<S: Sym>(
    base: &Vocab,
    source: SpanSource<'_>,
    vocab: usize,
    limit: Option<u64>,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Spans<S>> {
    match source {
        SpanSource::Table(t) => from_table(base, t, vocab, limit, threads, ctl),
        SpanSource::Runs(spill) => from_runs(base, spill, vocab, limit, threads, ctl),
    }
}

/// [`Error::MemoryLimit`] when the loop over `ids` ids in `spans` spans,
/// with `held` bytes more while it is built, would pass `limit`, or when
/// the longest span (`longest` ids) passes [`LONGEST_SPAN`] (then the need
/// is the node loop's); [`Error::InvalidTraining`] past 32-bit offsets.
fn check_limit<S: Sym>(
    (ids, spans, longest): (u64, u64, u64),
    vocab: usize,
    limit: Option<u64>,
    held: u64,
) -> Result<()> {
    if ids > u64::from(u32::MAX) || spans > u64::from(u32::MAX) {
        return Err(Error::training(
            "too many span ids for the lean merge loop's 32-bit offsets",
        ));
    }
    let (ids_s, spans_s) = (crate::error::grouped(ids), crate::error::grouped(spans));
    let (what, need) = if longest > LONGEST_SPAN {
        let what = format!(
            "the merge loop over {ids_s} tokens in {spans_s} distinct chunks (one of {} tokens)",
            crate::error::grouped(longest)
        );
        (what, state_bytes(ids, spans).saturating_add(held))
    } else {
        let what = format!("the lean merge loop over {ids_s} tokens in {spans_s} distinct spans");
        (
            what,
            lean_bytes(ids, spans, S::BYTES, vocab as u64).saturating_add(held),
        )
    };
    match limit {
        Some(limit) if need > limit => Err(Error::MemoryLimit { what, need, limit }),
        _ => Ok(()),
    }
}

/// The spans of table `t`, encoded in tasks of [`TASK_SPANS`] on `threads`
/// threads (each task's ids kept at the arena's width), then moved into one
/// arena; the table is held throughout.
fn from_table<S: Sym>(
    base: &Vocab,
    t: &ChunkTable,
    vocab: usize,
    limit: Option<u64>,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Spans<S>> {
    let starts: Vec<usize> = (0..t.len()).step_by(TASK_SPANS).collect();
    let tasks = parallel::map_par(&starts, threads, |&from| {
        ctl.check()?;
        let to = (from + TASK_SPANS).min(t.len());
        let (ids, lens) = encode_chunks(base, (from..to).filter_map(|i| t.get(i)));
        Ok((ids.into_iter().map(S::make).collect::<Vec<S>>(), lens))
    })?;
    let total: u64 = tasks.iter().map(|t| t.0.len() as u64).sum();
    let longest = tasks
        .iter()
        .flat_map(|t| &t.1)
        .map(|&(n, _)| u64::from(n))
        .max();
    let held = t.priced() + total * S::BYTES;
    let shape = (total, t.len() as u64, longest.unwrap_or(0));
    check_limit::<S>(shape, vocab, limit, held)?;
    let mut sp = Spans {
        ids: Vec::with_capacity(total as usize),
        start: Vec::with_capacity(t.len()),
        len: Vec::with_capacity(t.len()),
        weight: Vec::with_capacity(t.len()),
        heavy: Default::default(),
    };
    for (ids, lens) in tasks {
        let mut at = sp.ids.len() as u32;
        for (n, count) in lens {
            sp.start.push(at);
            sp.len.push(n);
            sp.push_weight(count);
            at += n;
        }
        sp.ids.extend_from_slice(&ids);
    }
    Ok(sp)
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

/// Spilled spans waiting to be encoded: their bytes back to back, and per
/// span its start, length and count.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    spans: Vec<(usize, usize, u64)>,
}

/// The spans of the runs of `spill`: merged, encoded in batches to a file
/// beside the runs, then read back in first-seen order.
fn from_runs<S: Sym>(
    base: &Vocab,
    spill: &Spill,
    vocab: usize,
    limit: Option<u64>,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Spans<S>> {
    let path = spill.dir().join("lean-spans");
    let file = File::create(&path).map_err(|e| io_err(&path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let (mut firsts, mut lens): (Vec<u64>, Vec<u32>) = (Vec::new(), Vec::new());
    let mut batch = Batch::default();
    let mut flush = |batch: &mut Batch, lens: &mut Vec<u32>| -> Result<()> {
        for (ids, spans) in encode_batch(base, batch, threads, ctl)? {
            write_task::<S>(&mut w, &ids, &spans, lens).map_err(|e| io_err(&path, e))?;
        }
        batch.bytes.clear();
        batch.spans.clear();
        Ok(())
    };
    spill.merge_each(|bytes, count, first| {
        firsts.push(first);
        batch.spans.push((batch.bytes.len(), bytes.len(), count));
        batch.bytes.extend_from_slice(bytes);
        if batch.bytes.len() >= BATCH_BYTES {
            flush(&mut batch, &mut lens)?;
        }
        Ok(())
    })?;
    flush(&mut batch, &mut lens)?;
    w.flush().map_err(|e| io_err(&path, e))?;
    drop(w);
    let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
    let longest = lens.iter().max().map_or(0, |&l| u64::from(l));
    check_limit::<S>((total, lens.len() as u64, longest), vocab, limit, 0)?;
    let sp = read_back::<S>(&path, firsts, lens, total as usize);
    let _ = std::fs::remove_file(&path);
    sp
}

/// Encodes the spans of `batch` by `base`, [`TASK_SPANS`] per task, on
/// `threads` threads; the tasks in order.
fn encode_batch(
    base: &Vocab,
    batch: &Batch,
    threads: Option<usize>,
    ctl: &Control,
) -> Result<Vec<Task>> {
    let starts: Vec<usize> = (0..batch.spans.len()).step_by(TASK_SPANS).collect();
    parallel::map_par(&starts, threads, |&from| {
        ctl.check()?;
        let to = (from + TASK_SPANS).min(batch.spans.len());
        let chunks = batch.spans[from..to]
            .iter()
            .map(|&(s, n, c)| (&batch.bytes[s..s + n], c));
        Ok(encode_chunks(base, chunks))
    })
}

/// Writes one task's spans: per span its count, its length and its ids.
fn write_task<S: Sym>(
    w: &mut impl Write,
    ids: &[Rank],
    spans: &[(u32, u64)],
    lens: &mut Vec<u32>,
) -> std::io::Result<()> {
    let mut at = 0usize;
    let mut buf = Vec::new();
    for &(n, count) in spans {
        buf.clear();
        buf.extend_from_slice(&count.to_le_bytes());
        buf.extend_from_slice(&n.to_le_bytes());
        for &id in &ids[at..at + n as usize] {
            S::make(id).put_le(&mut buf);
        }
        w.write_all(&buf)?;
        lens.push(n);
        at += n as usize;
    }
    Ok(())
}

/// Reads the spans' file back into one arena in first-seen order (span `i`
/// of the file was first seen at `firsts[i]` and holds `lens[i]` ids).
fn read_back<S: Sym>(
    path: &Path,
    firsts: Vec<u64>,
    lens: Vec<u32>,
    total: usize,
) -> Result<Spans<S>> {
    let n = lens.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_unstable_by_key(|&i| firsts[i as usize]);
    drop(firsts);
    let mut rank = vec![0u32; n];
    let (mut start, mut len) = (vec![0u32; n], vec![0u32; n]);
    let mut at = 0u32;
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
        (start[r], len[r]) = (at, lens[i as usize]);
        at += lens[i as usize];
    }
    drop((order, lens));
    let mut sp = Spans {
        ids: vec![S::make(0); total],
        start,
        len,
        weight: vec![0u32; n],
        heavy: Default::default(),
    };
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut head = [0u8; 12];
    let mut buf = Vec::new();
    for &k in &rank {
        let k = k as usize;
        r.read_exact(&mut head).map_err(|e| io_err(path, e))?;
        let mut c = [0u8; 8];
        c.copy_from_slice(&head[..8]);
        sp.set_weight(k, u64::from_le_bytes(c));
        let (s, l) = (sp.start[k] as usize, sp.len[k] as usize);
        buf.resize(l * S::BYTES as usize, 0);
        r.read_exact(&mut buf).map_err(|e| io_err(path, e))?;
        for (slot, b) in sp.ids[s..s + l]
            .iter_mut()
            .zip(buf.chunks_exact(S::BYTES as usize))
        {
            *slot = S::from_le(b);
        }
    }
    Ok(sp)
}
