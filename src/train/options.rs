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
