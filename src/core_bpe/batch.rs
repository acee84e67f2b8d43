//! Many texts at once on the [`crate::parallel`] pools.

use super::{CoreBpe, SpecialPolicy};
use crate::error::Result;
use crate::parallel::map_par;
use crate::Rank;

impl CoreBpe {
    /// Encodes every text (see [`CoreBpe::encode`]) on `threads` threads.
    /// Results are in input order; the first failing text's error is returned.
    pub fn encode_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        map_par(texts, threads, |t| self.encode(t.as_ref(), policy))
    }

    /// Token counts of every text, in parallel.
    pub fn count_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        policy: &SpecialPolicy,
        threads: Option<usize>,
    ) -> Result<Vec<usize>> {
        map_par(texts, threads, |t| self.count(t.as_ref(), policy))
    }
}
