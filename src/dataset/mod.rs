//! Dataset shards to token files, natively: read (plain text, JSONL, Parquet
//! string columns, the latter read by [`parquet`] or, for what it refuses,
//! handed over by the caller's [`ColumnLoader`]), encode on the persistent encoder pool,
//! write `bin` / `npy` straight from the flat id buffers, with reading,
//! encoding and writing overlapped.
//!
//! Layout: [`read`] turns one shard into [`Chunk`]s of whole documents (at
//! least [`Options::chunk_bytes`] of text each, except the last); [`pipeline`]
//! runs one reader thread, `threads` encoder threads (the pool of
//! `encode_batch`, so the per-thread piece caches are kept across calls) and the
//! writer on the calling thread; [`write`] holds the output files (temporary
//! file, fsync, rename).
//!
//! Memory: the text of chunks that are read but not yet written is bounded by
//! [`Options::max_inflight_bytes`] (a chunk larger than that, i.e. one huge
//! document, is admitted alone), plus, per chunk in flight, its ids (about as
//! many bytes as its text); of a Parquet shard, one page and one batch of
//! values (read in Rust) or one batch of rows (as the loader hands them over)
//! is held while it is cut into chunks. Nothing scales with the number of shards.
//!
//! Failures are per shard: the shard's temporary file is removed and its
//! reason (a short description, not the user-facing message) goes to the
//! caller, which decides what to report; the other shards go on.

#[cfg(feature = "parquet")]
mod parquet;
mod pipeline;
mod read;
mod write;

use std::path::PathBuf;
use std::sync::Arc;

pub use pipeline::{encode_shards, Collected, Options};
pub(crate) use read::read_shard;

use crate::Rank;

/// What a shard file holds.
#[derive(Debug, Clone)]
pub enum Input {
    /// The whole file is one document (UTF-8).
    Text { path: PathBuf, gzip: bool },
    /// One JSON object per line; the document is the string under the column key.
    Jsonl { path: PathBuf, gzip: bool },
    /// A Parquet file: its string column under the column name, read in Rust
    /// ([`parquet`]), or by the caller's [`ColumnLoader`] when the Rust reader
    /// refuses the file before reading (a codec not built in, a column that is
    /// not a plain string column, a footer it cannot read).
    Columns { path: PathBuf },
}

impl Input {
    /// The shard's path.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Input::Text { path, .. } | Input::Jsonl { path, .. } | Input::Columns { path } => path,
        }
    }
}

/// Where a shard's ids go.
#[derive(Debug, Clone)]
pub enum Output {
    /// Ids back to back, little-endian, in this file.
    Bin(PathBuf),
    /// The same as a one-dimensional NumPy `.npy` file (format 1.0, the
    /// header `numpy.save` writes).
    Npy(PathBuf),
    /// Kept in memory and handed back in [`Done::ids`] / [`Done::offsets`].
    Memory,
    /// Appended to the one flat array of the whole run ([`Collected`]).
    Collect,
}

/// Width of the ids in the output files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    U16,
    U32,
}

/// One shard to encode.
#[derive(Debug, Clone)]
pub struct Shard {
    pub input: Input,
    pub output: Output,
}

/// A finished shard.
#[derive(Debug, Default)]
pub struct Done {
    pub documents: u64,
    pub tokens: u64,
    /// For [`Output::Memory`]: the ids (eot included) and `documents + 1`
    /// token offsets; empty otherwise.
    pub ids: Vec<Rank>,
    pub offsets: Vec<i64>,
}

/// Documents of a shard held as string columns (Arrow layout: document `i`
/// is `data[offsets[i]..offsets[i + 1]]`).
#[derive(Debug, Default)]
pub struct Column {
    pub offsets: Vec<usize>,
    pub data: Vec<u8>,
}

/// A callback that takes one [`Column`] of a shard and returns whether to
/// go on (`Ok(false)`: stop reading), or an error that fails the shard.
pub type ColumnSink<'a> = dyn FnMut(Column) -> std::result::Result<bool, String> + 'a;

/// Loads the string columns of a [`Input::Columns`] shard, a batch of rows
/// at a time, handing each to `sink` (called on the reader thread, one shard
/// at a time, so one batch is held at once). An `Err` fails that shard.
pub trait ColumnLoader: Sync {
    fn load(
        &self,
        path: &std::path::Path,
        sink: &mut ColumnSink<'_>,
    ) -> std::result::Result<(), String>;
}

/// Whole documents of one shard, in order.
#[derive(Debug)]
pub(crate) enum Docs {
    /// Documents back to back in `text`, document `i` ending at `ends[i]`.
    Owned { text: String, ends: Vec<usize> },
    /// Documents `first..last` of a validated column.
    Column {
        col: Arc<ValidColumn>,
        first: usize,
        last: usize,
    },
}

/// A [`Column`] whose documents are checked to be UTF-8.
#[derive(Debug)]
pub(crate) struct ValidColumn {
    offsets: Vec<usize>,
    text: String,
}

/// Why the Rust Parquet reader did not read a shard (a build without the
/// `parquet` feature refuses every one as unsupported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not read at all (nothing emitted): hand the shard to the loader.
    Unsupported(String),
    /// Failed while reading (documents may have been emitted): the shard fails.
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    Failed(String),
}

/// Hands the documents gathered in `text` / `ends` (the readers' chunk being
/// filled) to `emit` once they hold at least `chunk_bytes` bytes of text;
/// false when the consumer asks to stop.
pub(crate) fn emit_if_full(
    text: &mut String,
    ends: &mut Vec<usize>,
    chunk_bytes: usize,
    emit: &mut dyn FnMut(Docs) -> bool,
) -> bool {
    if text.len() < chunk_bytes {
        return true;
    }
    emit(Docs::Owned {
        text: std::mem::take(text),
        ends: std::mem::take(ends),
    })
}

impl Docs {
    pub(crate) fn len(&self) -> usize {
        match self {
            Docs::Owned { ends, .. } => ends.len(),
            Docs::Column { first, last, .. } => last - first,
        }
    }

    /// Document `i` (`i < len()`).
    pub(crate) fn get(&self, i: usize) -> &str {
        match self {
            Docs::Owned { text, ends } => {
                let start = if i == 0 { 0 } else { ends[i - 1] };
                &text[start..ends[i]]
            }
            Docs::Column { col, first, .. } => {
                let j = first + i;
                &col.text[col.offsets[j]..col.offsets[j + 1]]
            }
        }
    }

    /// Bytes of text held.
    pub(crate) fn text_bytes(&self) -> usize {
        match self {
            Docs::Owned { text, .. } => text.len(),
            Docs::Column { col, first, last } => col.offsets[*last] - col.offsets[*first],
        }
    }
}

#[cfg(test)]
mod tests;
