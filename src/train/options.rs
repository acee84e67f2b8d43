//! The merge loops' options, shared by every loop (a leaf: it imports no loop).

/// Options of the merge loop (see `bytepair.reference.train_from_counts`).
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Maximum number of merges to learn.
    pub num_merges: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Skip pairs whose merged token would be longer than this many bytes.
    pub max_token_length: Option<usize>,
}

/// What bounds an extension ([`super::from_tokens::extend_merges`]) beyond
/// [`MergeOptions`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtendBounds {
    /// Pass over pairs whose joined token holds more words than this
    /// (superword training).
    pub max_words: Option<usize>,
    /// Stop with [`crate::error::Error::MemoryLimit`] before the loop's
    /// state is built when its estimate, with the chunk table's, passes this
    /// many bytes.
    pub memory_limit: Option<u64>,
}

/// Whether the token joining `a` and `b` would pass `max_token_length`.
pub(crate) fn too_long(opts: &MergeOptions, tok_len: &[u32], a: u32, b: u32) -> bool {
    opts.max_token_length
        .is_some_and(|m| (tok_len[a as usize] + tok_len[b as usize]) as usize > m)
}

/// About what the node loop of [`super::from_tokens::extend_merges`] builds for `ids` ids in `chunks` chunks,
/// at its peak: per id a 16-byte node, its 4-byte id (until the nodes hold
/// it) or its 4-byte occurrence, about 3 bytes of pairs (5.9 M distinct
/// pairs of 64 bytes for 137 M ids of English spans) and the occurrence
/// lists of the pairs the merges make (the emptied ones are kept): 32
/// bytes, from the peak resident memory of that run (4,659 MB for 136.8 M
/// ids in 9.3 M chunks, about 200 MB of it the process before the loop);
/// per chunk its weight and first node (12 bytes).
pub fn state_bytes(ids: u64, chunks: u64) -> u64 {
    ids.saturating_mul(32)
        .saturating_add(chunks.saturating_mul(12))
}
