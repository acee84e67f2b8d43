//! Every thread pool of the core. A thread count is `Option<usize>`: `None` is
//! one thread per core, `Some(k)` is `k` threads (`Some(0)` is an error). One
//! rayon pool per thread count is built on first use and kept, so repeated
//! batch calls (`encode_batch(num_threads=k)`, counting, vocabulary loads) pay
//! no thread start-up. A `k`-thread call of [`map_par`] or [`concat_par`]
//! runs on the calling thread and the `k - 1` threads of the pool for
//! `k - 1` ([`for_each_index`]); training runs on the pool for `k`.
//!
//! Where the workers run (Linux): a call's workers are kept off the CPU the
//! calling thread is on ([`Steer`], in `map_par` and `map_streaming`),
//! within the CPUs the caller may use.
//! Otherwise the kernel may queue a woken worker on the caller's own CPU,
//! behind the caller, which is busy with its share of the work: on a VM whose
//! other vCPU has been idle for a while (the guest then sees it as preempted
//! and avoids it), the worker starts only when the caller has done
//! everything. In `benches/experiments/bench_wakeup.py` (4 MB batch, 100 ms pause before
//! each call) two threads run at 1.23-1.45x one thread with the steering and
//! at 0.80-1.10x without (benches/results/mechanisms.md).
//!
//! Fork safety: rayon's global pool is never used. Pools are tagged with the
//! process id; a child process created by `fork` (whose copy of a pool has no
//! worker threads) builds fresh pools instead of waiting forever on the
//! parent's. The parent's pools are leaked in the child, never joined.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::Rank;

type Pools = (u32, HashMap<usize, (Arc<rayon::ThreadPool>, Arc<Steer>)>);

fn pool_of(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    pool_and_steer(threads).map(|(p, _)| p)
}

fn pool_and_steer(threads: usize) -> Result<(Arc<rayon::ThreadPool>, Arc<Steer>)> {
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
    if let Some((p, s)) = map.get(&threads) {
        return Ok((p.clone(), s.clone()));
    }
    let steer = Arc::new(Steer::new(threads));
    let joined = steer.clone();
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bytepair-{i}"))
        .start_handler(move |_| joined.join())
        .build()
        .map_err(|e| Error::Threads {
            threads,
            reason: e.to_string(),
        })?;
    let p = Arc::new(p);
    map.insert(threads, (p.clone(), steer.clone()));
    Ok((p, steer))
}

/// The worker threads of one pool, kept off the calling thread's CPU (see
/// the module documentation). Linux only; elsewhere it does nothing.
struct Steer {
    /// The workers' thread ids, as each starts.
    #[cfg(target_os = "linux")]
    tids: Mutex<Vec<libc::pid_t>>,
    /// The pool's size: the masks are remembered only once every worker
    /// has registered.
    #[cfg(target_os = "linux")]
    threads: usize,
    /// The mask last given to every worker, if any.
    #[cfg(target_os = "linux")]
    applied: Mutex<Option<libc::cpu_set_t>>,
}

impl Steer {
    #[cfg(target_os = "linux")]
    fn new(threads: usize) -> Steer {
        Steer {
            tids: Mutex::new(Vec::with_capacity(threads)),
            threads,
            applied: Mutex::new(None),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn new(_threads: usize) -> Steer {
        Steer {}
    }

    /// Called by each worker as it starts: records its thread id.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)] // one system call, see the SAFETY comment
    fn join(&self) {
        // SAFETY: gettid takes no argument and cannot fail.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
        self.tids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tid);
    }

    #[cfg(not(target_os = "linux"))]
    fn join(&self) {}

    /// Lets the workers run on every CPU the calling thread may use but the
    /// one it is on now, or on the caller's CPU when that is the only one it
    /// may use: a worker's mask is always within the caller's allowed set, so
    /// a caller whose own affinity changed (`os.sched_setaffinity`) never
    /// leaves a worker pinned to a CPU outside its new set. Two system calls
    /// per call (`sched_getcpu` is read without one), plus one per worker
    /// when the mask differs from the one last given; with concurrent callers
    /// on one pool the last caller's mask holds.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)] // CPU-set system calls, see the SAFETY comments
    fn away_from_caller(&self) {
        // SAFETY: sched_getcpu takes no argument; it returns -1 on failure.
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu < 0 {
            return;
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: cpu_set_t is a plain bit array; all zeros is the empty set.
        let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `allowed` is a valid, writable cpu_set_t of `size` bytes;
        // pid 0 is the calling thread.
        if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
            return;
        }
        let cpu = cpu as usize;
        if cpu >= 8 * size {
            return;
        }
        let mut set = allowed;
        // SAFETY: `cpu` is below the set's capacity in bits (checked above).
        unsafe { libc::CPU_CLR(cpu, &mut set) };
        // SAFETY: `set` is an initialised cpu_set_t.
        if unsafe { libc::CPU_COUNT(&set) } == 0 {
            set = allowed;
        }
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: both sets are initialised cpu_set_t values.
        if applied.is_some_and(|a| unsafe { libc::CPU_EQUAL(&a, &set) }) {
            return;
        }
        let tids = self.tids.lock().unwrap_or_else(|e| e.into_inner());
        for &tid in tids.iter() {
            // SAFETY: `set` is an initialised cpu_set_t of `size` bytes; a
            // thread id that has exited only makes the call fail (ESRCH),
            // which is ignored: the mask is a placement hint.
            unsafe { libc::sched_setaffinity(tid, size, &set) };
        }
        if tids.len() == self.threads {
            *applied = Some(set);
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn away_from_caller(&self) {}
}

/// The kept pool for `threads` (see [`resolve_threads`]), for callers that
/// run rayon work themselves (`pool(threads)?.install(..)`).
pub fn pool(threads: Option<usize>) -> Result<Arc<rayon::ThreadPool>> {
    pool_of(resolve_threads(threads)?)
}

/// Runs `f(i)` for every `i < len` on `threads` threads, the calling thread
/// being one of them (`threads - 1` workers of the kept pool).
///
/// The indices are cut into one contiguous block per thread; each thread
/// works through its own block from the front, then takes indices from the
/// back of the block with the most left, until none is left anywhere. So:
/// - the caller starts at once: a call pays one worker wake-up (an
///   inter-processor interrupt, and on a VM an exit to the host) off the
///   critical path, where rayon's `install` puts two on it (wake a worker,
///   which wakes the next) and leaves the caller's core idle;
/// - each thread encodes one stretch of consecutive items, mostly the same
///   stretch from call to call (the caller the front, worker `j` block `j`),
///   so its piece cache holds that stretch's vocabulary rather than a
///   different sample of the items each time;
/// - a thread that finishes early (or a worker that woke late) still takes
///   over the others' remaining items: the last item is all anyone idles on.
fn for_each_index(len: usize, threads: usize, f: &(dyn Fn(usize) + Sync)) -> Result<()> {
    // (indices are packed in 32 bits: no batch has 4 G items, but one that
    // did would still run, on this thread)
    if threads <= 1 || len <= 1 || len > u32::MAX as usize {
        (0..len).for_each(f);
        return Ok(());
    }
    let k = threads.min(len);
    let (pool, steer) = pool_and_steer(k - 1)?;
    steer.away_from_caller();
    let blocks = Blocks::new(len, k);
    let work = |me: usize| {
        while let Some(i) = blocks.front(me) {
            f(i);
        }
        while let Some(i) = blocks.steal() {
            f(i);
        }
    };
    let work = &work;
    pool.in_place_scope(|scope| {
        for j in 1..k {
            scope.spawn(move |_| work(j));
        }
        work(0);
    });
    Ok(())
}

/// The blocks of [`for_each_index`]: per block the half-open range of indices
/// not yet taken, `start << 32 | end` in one atomic word, so the owner (taking
/// the front) and thieves (taking the back) claim each index exactly once.
struct Blocks(Vec<AtomicU64>);

impl Blocks {
    /// `len` indices in `k` contiguous blocks of near-equal size.
    fn new(len: usize, k: usize) -> Blocks {
        // `len` fits 32 bits (see `for_each_index`)
        let at = |j: usize| (len as u128 * j as u128 / k as u128) as u64;
        Blocks(
            (0..k)
                .map(|j| AtomicU64::new(at(j) << 32 | at(j + 1)))
                .collect(),
        )
    }

    fn span(w: u64) -> (u64, u64) {
        (w >> 32, w & 0xffff_ffff)
    }

    /// The first index of block `j` not yet taken, taken.
    fn front(&self, j: usize) -> Option<usize> {
        let b = &self.0[j];
        let mut w = b.load(Ordering::Acquire);
        loop {
            let (lo, hi) = Self::span(w);
            if lo >= hi {
                return None;
            }
            match b.compare_exchange_weak(
                w,
                (lo + 1) << 32 | hi,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some(lo as usize),
                Err(now) => w = now,
            }
        }
    }

    /// The last index not yet taken of the block with the most left, taken;
    /// `None` once every block is empty.
    fn steal(&self) -> Option<usize> {
        loop {
            let (j, left) = self
                .0
                .iter()
                .enumerate()
                .map(|(j, b)| {
                    let (lo, hi) = Self::span(b.load(Ordering::Acquire));
                    (j, hi.saturating_sub(lo))
                })
                .max_by_key(|&(_, left)| left)?;
            if left == 0 {
                return None;
            }
            let b = &self.0[j];
            let w = b.load(Ordering::Acquire);
            let (lo, hi) = Self::span(w);
            if lo < hi
                && b.compare_exchange(w, lo << 32 | (hi - 1), Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                return Some(hi as usize - 1);
            }
            // lost a race for that block: look again
        }
    }
}

/// Runs `f` over `items` on `threads` threads (`None`: one per core; the
/// calling thread is one of them, see [`for_each_index`]; `Some(1)` or a
/// single item: the calling thread alone), keeping the order. The first
/// error in input order wins, whatever the threads finish first (every item
/// then still runs; errors are the rare case).
pub fn map_par<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    let k = resolve_threads(threads)?;
    if k == 1 || items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    let slots: Vec<Mutex<Option<Result<R>>>> = items.iter().map(|_| Mutex::new(None)).collect();
    for_each_index(items.len(), k, &|i| {
        let r = f(&items[i]);
        // each slot is written once, by the thread that took index i
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    })?;
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                // every index runs before the scope returns (a panic in `f`
                // propagates out of it instead)
                .unwrap_or_else(|| {
                    Err(Error::Threads {
                        threads: k,
                        reason: "a worker did not finish its item".into(),
                    })
                })
        })
        .collect()
}

/// Ids below this many are joined on the calling thread by [`concat_par`]:
/// a copy that short costs less than waking the pool.
const CONCAT_PAR_MIN: usize = 1 << 16;

/// The concatenation of `parts`, copied on `threads` threads (see
/// [`resolve_threads`]): each thread writes its parts straight into their
/// place in the (uninitialised) result, so the copy and the page faults of
/// its first touch are shared by the threads instead of taken on one thread
/// after the encode (for a 10 MB text a serial join is about a tenth of a
/// two-thread encode's wall time).
#[allow(unsafe_code)] // one set_len after the copy, see the SAFETY comment
pub fn concat_par(parts: &[Vec<Rank>], threads: Option<usize>) -> Result<Vec<Rank>> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let k = resolve_threads(threads)?;
    if k == 1 || parts.len() <= 1 || total < CONCAT_PAR_MIN {
        return Ok(parts.concat());
    }
    let mut out: Vec<Rank> = Vec::with_capacity(total);
    let mut dsts = Vec::with_capacity(parts.len());
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for p in parts {
        let (d, r) = std::mem::take(&mut rest).split_at_mut(p.len());
        dsts.push(d);
        rest = r;
    }
    let dsts: Vec<Mutex<Option<&mut [std::mem::MaybeUninit<Rank>]>>> =
        dsts.into_iter().map(|d| Mutex::new(Some(d))).collect();
    for_each_index(parts.len(), k, &|i| {
        if let Some(d) = dsts[i].lock().unwrap_or_else(|e| e.into_inner()).take() {
            d.write_copy_of_slice(&parts[i]);
        }
    })?;
    // SAFETY: the slices in `dsts` tile `out`'s first `total` spare slots
    // (consecutive `split_at_mut`s of exactly the parts' lengths, which sum
    // to `total`) and every one was written above by `write_copy_of_slice`.
    unsafe { out.set_len(total) };
    Ok(out)
}

/// Threads per core a call may ask for: more are clamped to
/// [`max_threads`]. Past the cores, threads only take turns (the results
/// never depend on their number), and each costs a stack and a start-up:
/// 10 000 threads took 40 s to start for a training run of 0.04 s.
pub const THREADS_PER_CORE: usize = 4;

/// The most threads any call runs on: [`THREADS_PER_CORE`] per core.
pub fn max_threads() -> usize {
    THREADS_PER_CORE * cores()
}

/// The number of threads a batch call runs on: `Some(k)` is `k` (at least
/// 1) clamped to [`max_threads`], `None` is one per core ([`cores`]).
pub fn resolve_threads(threads: Option<usize>) -> Result<usize> {
    match threads {
        Some(0) => Err(Error::Threads {
            threads: 0,
            reason: "num_threads must be at least 1".into(),
        }),
        Some(k) => Ok(k.min(max_threads())),
        None => Ok(cores()),
    }
}

/// The cores this process may use, counted once: the count reads the
/// process's CPU affinity and cgroup quota from `/proc` and `/sys` (a few
/// system calls, ~10 µs, too much to pay on every short encode call).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Text per thread below which a batch call uses fewer threads: a batch of
/// `bytes` runs on at most `bytes / PAR_BATCH_BYTES` threads (at least one).
/// Waking a worker costs a fork-join per call, and on the benchmark VM a
/// halted vCPU's wake-up (an exit to the host) is tens to hundreds of
/// microseconds: in `benches/experiments/bench_callsize.py` back-to-back 2-thread calls
/// of 20 KB run at 0.27x and of 100 KB at 0.65-1.0x one thread's speed, of
/// 0.3 MB at 1.3x. The ids never depend on the thread count.
pub const PAR_BATCH_BYTES: usize = 128 << 10;

/// The threads worth using for a batch of `bytes` of text, given `threads`
/// asked for ([`resolve_threads`], then at most one per [`PAR_BATCH_BYTES`]).
pub fn threads_for_bytes(threads: Option<usize>, bytes: usize) -> Result<usize> {
    Ok(resolve_threads(threads)?
        .min(bytes / PAR_BATCH_BYTES)
        .max(1))
}

/// Runs `f` over `items` on `threads` threads (see [`resolve_threads`]) and
/// hands each result to `consume(index, result)` **on the calling thread** as
/// soon as it is ready (in completion order, not input order), so the caller
/// can turn results into Python objects (the serial part, under the GIL)
/// while later items are still being encoded.
///
/// The calling thread counts as one of the `threads`: `threads - 1` workers
/// take items in input order from a shared counter, and the caller, whenever
/// no result is waiting, takes the next item itself through `run` (the
/// binding releases the GIL there). So `threads` threads stay busy on
/// `threads` cores instead of `threads` workers plus a caller competing with
/// them. `wait` blocks for the next result once no item is left to take; it
/// returns `None` when every worker has finished. With one thread or one item
/// everything runs on the calling thread.
pub fn map_streaming<T: Sync, R: Send>(
    items: &[T],
    threads: Option<usize>,
    f: impl Fn(&T) -> R + Sync + Send,
    mut consume: impl FnMut(usize, R),
    run: impl Fn(&(dyn Fn() -> R + Sync)) -> R,
    wait: impl Fn(&Mutex<mpsc::Receiver<(usize, R)>>) -> Option<(usize, R)>,
) -> Result<()> {
    let k = resolve_threads(threads)?;
    if k == 1 || items.len() <= 1 {
        for (i, t) in items.iter().enumerate() {
            consume(i, f(t));
        }
        return Ok(());
    }
    let (pool, steer) = pool_and_steer(k - 1)?;
    steer.away_from_caller();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    // only this thread receives; the mutex makes `&rx` sendable to a closure
    // that runs with the GIL released
    let rx = Mutex::new(rx);
    pool.in_place_scope(|scope| {
        for _ in 0..(k - 1).min(items.len()) {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            scope.spawn(move |_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() || tx.send((i, f(&items[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        loop {
            let ready = rx.lock().unwrap_or_else(|e| e.into_inner()).try_recv();
            match ready {
                Ok((i, r)) => consume(i, r),
                Err(mpsc::TryRecvError::Disconnected) => break,
                Err(mpsc::TryRecvError::Empty) => {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if let Some(t) = items.get(i) {
                        let r = run(&|| f(t));
                        consume(i, r);
                    } else {
                        match wait(&rx) {
                            Some((i, r)) => consume(i, r),
                            None => break,
                        }
                    }
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workers of a call's pool may run anywhere the caller may, except
    /// on the caller's CPU (when the caller may use two CPUs or more).
    #[cfg(target_os = "linux")]
    #[test]
    #[allow(unsafe_code)] // CPU-set system calls on plain cpu_set_t values
    fn workers_keep_off_the_callers_cpu() {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let affinity = |tid: libc::pid_t| {
            // SAFETY: an all-zero cpu_set_t is the empty set; `set` is writable.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: as above; a failed call leaves the empty set.
            unsafe { libc::sched_getaffinity(tid, size, &mut set) };
            set
        };
        // SAFETY: CPU_COUNT reads an initialised set.
        if unsafe { libc::CPU_COUNT(&affinity(0)) } < 2 {
            return; // one CPU: nothing to keep off
        }
        // 7 threads (a count no other test uses, so no other call moves these
        // workers meanwhile): this one and the pool for 6, built here. The
        // workers register as they start, so the masks are remembered once
        // all have (a few calls at most)
        let (_, steer) = pool_and_steer(6).unwrap();
        let mut applied = None;
        for _ in 0..100 {
            let items: Vec<u64> = (0..64).collect();
            let twice = map_par(&items, Some(7), |&x| Ok(x * 2)).unwrap();
            assert!(twice.iter().zip(&items).all(|(t, x)| *t == 2 * x));
            applied = *steer.applied.lock().unwrap();
            if applied.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let applied = applied.expect("the workers' masks were never set");
        let allowed = affinity(0);
        // SAFETY: CPU_* read initialised sets; every index is below the
        // sets' capacity in bits.
        unsafe {
            // the caller's CPUs but the one it was on
            assert_eq!(libc::CPU_COUNT(&applied) + 1, libc::CPU_COUNT(&allowed));
            for cpu in 0..8 * size {
                assert!(!libc::CPU_ISSET(cpu, &applied) || libc::CPU_ISSET(cpu, &allowed));
            }
        }
        let tids = steer.tids.lock().unwrap().clone();
        assert_eq!(tids.len(), 6);
        for tid in tids {
            // SAFETY: both sets are initialised.
            let same = unsafe { libc::CPU_EQUAL(&affinity(tid), &applied) };
            assert!(same, "worker {tid} has another mask than the one given");
        }
        // a caller confined to one CPU: the workers follow it there (never
        // left on a CPU outside the caller's new set)
        // SAFETY: as above; `one` is an initialised set; pid 0 is this thread.
        unsafe {
            let cpu = (0..8 * size)
                .find(|&c| libc::CPU_ISSET(c, &allowed))
                .unwrap();
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
            let items: Vec<u64> = (0..64).collect();
            let twice = map_par(&items, Some(7), |&x| Ok(x * 2)).unwrap();
            assert_eq!(libc::sched_setaffinity(0, size, &allowed), 0);
            assert!(twice.iter().zip(&items).all(|(t, x)| *t == 2 * x));
            for tid in steer.tids.lock().unwrap().iter() {
                assert!(libc::CPU_EQUAL(&affinity(*tid), &one), "worker {tid}");
            }
        }
    }

    #[test]
    fn short_batches_use_fewer_threads() {
        let k = |threads, bytes| threads_for_bytes(Some(threads), bytes).unwrap();
        assert_eq!(k(2, 0), 1);
        assert_eq!(k(2, PAR_BATCH_BYTES - 1), 1);
        assert_eq!(k(2, 2 * PAR_BATCH_BYTES - 1), 1);
        assert_eq!(k(2, 2 * PAR_BATCH_BYTES), 2);
        assert_eq!(k(4, 3 * PAR_BATCH_BYTES), 3);
        assert_eq!(k(4, 100 * PAR_BATCH_BYTES), 4);
        assert_eq!(k(1, 100 * PAR_BATCH_BYTES), 1);
        assert!(threads_for_bytes(Some(0), 1 << 30).is_err());
    }

    #[test]
    fn thread_counts() {
        assert!(matches!(
            resolve_threads(Some(0)),
            Err(Error::Threads { threads: 0, .. })
        ));
        assert_eq!(resolve_threads(Some(3)).unwrap(), 3.min(max_threads()));
        assert_eq!(resolve_threads(Some(usize::MAX)).unwrap(), max_threads());
        assert!(resolve_threads(None).unwrap() >= 1);
        // kept: the same pool for the same count
        assert!(Arc::ptr_eq(
            &pool(Some(2)).unwrap(),
            &pool(Some(2)).unwrap()
        ));
        let items: Vec<u32> = (0..100).collect();
        let doubled = map_par(&items, Some(2), |&x| Ok(x * 2)).unwrap();
        assert_eq!(doubled, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        // the first error in input order wins
        let err = map_par(&items, Some(2), |&x| {
            if x >= 10 {
                Err(Error::UnknownId { id: x })
            } else {
                Ok(x)
            }
        });
        assert!(matches!(err, Err(Error::UnknownId { id: 10 })));
    }

    #[test]
    fn every_index_runs_once_whatever_the_threads() {
        for len in [0usize, 1, 2, 3, 7, 100, 1001] {
            for threads in [1, 2, 3, 8] {
                let hits: Vec<AtomicUsize> = (0..len).map(|_| AtomicUsize::new(0)).collect();
                for_each_index(len, threads, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                assert!(
                    hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                    "{len} items, {threads} threads"
                );
            }
        }
        // blocks: the owner takes the front, a thief the back, each index once
        let b = Blocks::new(10, 3);
        assert_eq!(b.front(0), Some(0));
        assert_eq!(b.steal(), Some(9)); // block 2 (6..10) has the most left
        let mut rest: Vec<usize> = std::iter::from_fn(|| b.steal()).collect();
        rest.extend((0..3).filter_map(|j| b.front(j)));
        rest.sort();
        assert_eq!(rest, (1..9).collect::<Vec<_>>());
    }

    #[test]
    fn concat_par_joins_in_order() {
        let parts: Vec<Vec<Rank>> = (0..9u32)
            .map(|p| (0..(p * 20_011) % 70_001).map(|i| i ^ p).collect())
            .collect();
        let want: Vec<Rank> = parts.concat();
        assert!(want.len() >= CONCAT_PAR_MIN);
        for k in [1, 2, 3] {
            assert_eq!(concat_par(&parts, Some(k)).unwrap(), want, "{k} threads");
        }
        assert!(concat_par(&[], Some(2)).unwrap().is_empty());
        assert!(concat_par(&parts, Some(0)).is_err());
    }
}
