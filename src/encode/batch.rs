//! Many texts at once on rayon threads. One pool per requested thread count is
//! built on first use and kept, so repeated `encode_batch(num_threads=k)` calls
//! pay no thread start-up.
//!
//! Fork safety: rayon's global pool is never used. Pools are tagged with the
//! process id; a child process created by `fork` (whose copy of a pool has no
//! worker threads) builds fresh pools instead of waiting forever on the
//! parent's. The parent's pools are leaked in the child, never joined.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use super::{CoreBpe, SpecialPolicy};
use crate::error::{Error, Result};
use crate::Rank;

type Pools = (u32, HashMap<usize, Arc<rayon::ThreadPool>>);

fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new((std::process::id(), HashMap::new())));
    // a poisoned lock only means another thread panicked while inserting; the map is intact
    let mut guard = pools.lock().unwrap_or_else(|e| e.into_inner());
    let (pid, map) = &mut *guard;
    if *pid != std::process::id() {
        // forked: the inherited pools have no threads in this process
        for (_, p) in map.drain() {
            std::mem::forget(p);
        }
        *pid = std::process::id();
    }
    if let Some(p) = map.get(&threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bytepair-{i}"))
        .build()
        .map_err(|e| Error::InvalidTraining(format!("cannot start {threads} threads: {e}")))?;
    let p = Arc::new(p);
    map.insert(threads, p.clone());
    Ok(p)
}

/// Runs `f` over `items` in parallel on `threads` threads (`None`: one per
/// core; `Some(1)` or a single item: the calling thread), keeping the order.
/// The first error (in input order) wins.
pub fn map_par<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    match threads {
        Some(0) => Err(Error::InvalidTraining(
            "num_threads must be at least 1".into(),
        )),
        Some(1) => items.iter().map(f).collect(),
        // never rayon's global pool: it cannot be rebuilt in a forked child
        None => {
            let k = std::thread::available_parallelism().map_or(1, |n| n.get());
            pool(k)?.install(|| items.par_iter().map(f).collect())
        }
        Some(k) => pool(k)?.install(|| items.par_iter().map(f).collect()),
    }
}

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
