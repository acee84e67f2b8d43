//! The shard pipeline: one reader thread, `threads` encoder threads, the
//! writer on the calling thread, all three stages overlapped.
//!
//! The reader reads the shards in order and cuts them into chunks; a chunk
//! enters the pipeline only when the text in flight (read, not yet written)
//! stays within [`Options::max_inflight_bytes`], or when nothing is in flight.
//! Each chunk is encoded as one job on the kept pool of `threads` threads
//! (`crate::parallel`, the pools of the batch calls), so the threads' piece
//! caches stay warm from one call to the next. The writer handles chunks in input order (shard, then
//! chunk), writes or collects their ids, and completes a shard when its end
//! marker arrives, reporting it through `on_done` before the next shard's
//! chunks are handled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use super::read::read_shard;
use super::write::OutFile;
use super::{ColumnLoader, Docs, Done, Output, Shard, Width};
use crate::core_bpe::{CoreBpe, SpecialPolicy};
use crate::error::Result;
use crate::parallel::{pool, resolve_threads};
use crate::Rank;

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Encoder threads (`None`: one per core).
    pub threads: Option<usize>,
    /// Documents are grouped into chunks of at least this much text.
    pub chunk_bytes: usize,
    /// Text read but not yet written, at most (see the module doc).
    pub max_inflight_bytes: usize,
    /// JSONL key / Parquet column holding the text.
    pub column: String,
    /// Appended after every document.
    pub eot: Option<Rank>,
    /// Width of the ids in `bin` / `npy` files and [`Output::Memory`] results
    /// stay [`Rank`]s; the caller converts.
    pub width: Width,
}

impl Options {
    /// Chunks of 1 MiB, and four chunks per encoder thread in flight.
    pub fn new(column: &str, threads: Option<usize>) -> Self {
        let k = resolve_threads(threads).unwrap_or(1);
        Options {
            threads,
            chunk_bytes: 1 << 20,
            max_inflight_bytes: (4 * k + 2) << 20,
            column: column.to_string(),
            eot: None,
            width: Width::U32,
        }
    }
}

/// The one flat array of the shards with [`Output::Collect`], in input
/// order: ids and `documents + 1` offsets (starting at 0).
#[derive(Debug)]
pub struct Collected {
    pub ids: Vec<Rank>,
    pub offsets: Vec<i64>,
}

/// Bounds the text in flight.
struct Budget {
    used: Mutex<usize>,
    freed: Condvar,
    max: usize,
    stop: AtomicBool,
}

impl Budget {
    /// Waits until `n` more bytes fit (or nothing is in flight); false once
    /// the run is stopped.
    fn acquire(&self, n: usize) -> bool {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + n > self.max && !self.stopped() {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        if self.stopped() {
            return false;
        }
        *used += n;
        true
    }

    fn release(&self, n: usize) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        self.freed.notify_all();
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _guard = self.used.lock().unwrap_or_else(|e| e.into_inner());
        self.freed.notify_all();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// What the writer receives, in any order; it restores (shard, seq) order.
struct Ready {
    shard: usize,
    seq: usize,
    /// Text bytes to give back to the budget once handled.
    bytes: usize,
    body: Body,
}

enum Body {
    /// A chunk's ids and the end of each document in them.
    Ids(std::result::Result<(Vec<Rank>, Vec<usize>), String>),
    /// The shard's end: read completely, or why not.
    End(std::result::Result<(), String>),
}

fn encode_docs(
    core: &CoreBpe,
    policy: &SpecialPolicy,
    docs: &Docs,
    eot: Option<Rank>,
) -> std::result::Result<(Vec<Rank>, Vec<usize>), String> {
    let mut ids = Vec::with_capacity(docs.text_bytes() / 4 + docs.len() + 16);
    let mut ends = Vec::with_capacity(docs.len());
    for i in 0..docs.len() {
        core.encode_into(docs.get(i), policy, &mut ids)
            .map_err(|e| e.to_string())?;
        if let Some(t) = eot {
            ids.push(t);
        }
        ends.push(ids.len());
    }
    Ok((ids, ends))
}

/// A shard being written.
struct Current {
    file: Option<OutFile>,
    done: Done,
    failed: Option<String>,
    /// Lengths of the collected arrays when the shard began (to undo it).
    mark: (usize, usize),
}

impl Current {
    fn start(shard: &Shard, width: Width, collected: &Collected) -> Self {
        let mut cur = Current {
            file: None,
            done: Done::default(),
            failed: None,
            mark: (collected.ids.len(), collected.offsets.len()),
        };
        let made = match &shard.output {
            Output::Bin(p) => OutFile::create(p, false, width).map(Some),
            Output::Npy(p) => OutFile::create(p, true, width).map(Some),
            Output::Memory => {
                cur.done.offsets.push(0);
                Ok(None)
            }
            Output::Collect => Ok(None),
        };
        match made {
            Ok(f) => cur.file = f,
            Err(e) => cur.failed = Some(format!("cannot create the output file: {e}")),
        }
        cur
    }

    fn add(&mut self, out: &Output, ids: Vec<Rank>, ends: Vec<usize>, collected: &mut Collected) {
        self.done.documents += ends.len() as u64;
        self.done.tokens += ids.len() as u64;
        let (dst_ids, dst_offsets) = match out {
            Output::Bin(_) | Output::Npy(_) => {
                if let Some(f) = self.file.as_mut() {
                    if let Err(e) = f.write_ids(&ids) {
                        self.failed = Some(format!("writing the output failed: {e}"));
                    }
                }
                return;
            }
            Output::Memory => (&mut self.done.ids, &mut self.done.offsets),
            Output::Collect => (&mut collected.ids, &mut collected.offsets),
        };
        let base = dst_ids.len() as i64;
        dst_offsets.extend(ends.iter().map(|&e| base + e as i64));
        if dst_ids.is_empty() {
            *dst_ids = ids;
        } else {
            dst_ids.extend_from_slice(&ids);
        }
    }

    fn finish(
        mut self,
        end: std::result::Result<(), String>,
        collected: &mut Collected,
    ) -> std::result::Result<Done, String> {
        let failed = self.failed.take().or(end.err());
        if let Some(why) = failed {
            collected.ids.truncate(self.mark.0);
            collected.offsets.truncate(self.mark.1);
            return Err(why); // dropping the file removes it
        }
        if let Some(f) = self.file.take() {
            f.finish()
                .map_err(|e| format!("writing the output failed: {e}"))?;
        }
        Ok(self.done)
    }
}

/// Encodes `shards` (see the module doc). `on_done(i, result)` is called on
/// the calling thread once per shard, in input order, when shard `i` is
/// complete (its file renamed into place) or failed (no file left); it
/// returns false to stop the run (the shards not yet reported are then
/// abandoned, their temporary files removed). `go_on()` is asked after every
/// chunk the writer handles (the binding checks for Ctrl-C there); false
/// stops the run the same way.
///
/// Errors only when the threads cannot be started.
pub fn encode_shards(
    core: &CoreBpe,
    policy: &SpecialPolicy,
    shards: &[Shard],
    loader: Option<&dyn ColumnLoader>,
    opts: &Options,
    on_done: &mut dyn FnMut(usize, std::result::Result<Done, String>) -> bool,
    go_on: &mut dyn FnMut() -> bool,
) -> Result<Collected> {
    let pool = pool(opts.threads)?;
    let budget = Budget {
        used: Mutex::new(0),
        freed: Condvar::new(),
        max: opts.max_inflight_bytes.max(1),
        stop: AtomicBool::new(false),
    };
    let (ready_tx, ready_rx) = mpsc::channel::<Ready>();
    let mut collected = Collected {
        ids: Vec::new(),
        offsets: vec![0],
    };
    // Each chunk is one job on the pool: no pool thread ever waits for work,
    // so other batch calls sharing the pool interleave with this run instead
    // of queueing behind blocked workers.
    pool.in_place_scope(|scope| {
        std::thread::scope(|threads| {
            let (budget, ready) = (&budget, ready_tx.clone());
            threads.spawn(move || {
                for (i, shard) in shards.iter().enumerate() {
                    if budget.stopped() {
                        break;
                    }
                    let mut seq = 0;
                    let end = read_shard(
                        &shard.input,
                        &opts.column,
                        loader,
                        opts.chunk_bytes,
                        &mut |docs| {
                            if !budget.acquire(docs.text_bytes()) {
                                return false;
                            }
                            let ready = ready.clone();
                            let at = seq;
                            seq += 1;
                            scope.spawn(move |_| {
                                let bytes = docs.text_bytes();
                                let ids = if budget.stopped() {
                                    Err("stopped".to_string())
                                } else {
                                    encode_docs(core, policy, &docs, opts.eot)
                                };
                                drop(docs);
                                let _ = ready.send(Ready {
                                    shard: i,
                                    seq: at,
                                    bytes,
                                    body: Body::Ids(ids),
                                });
                            });
                            true
                        },
                    );
                    let end = Ready {
                        shard: i,
                        seq,
                        bytes: 0,
                        body: Body::End(end),
                    };
                    if ready.send(end).is_err() {
                        break;
                    }
                }
            });
            drop(ready_tx);
            write_all(
                shards,
                opts,
                budget,
                &ready_rx,
                &mut collected,
                on_done,
                go_on,
            );
            // unblock a reader waiting for room, if the run stopped early
            budget.stop();
        });
    });
    Ok(collected)
}

/// The writer loop (calling thread).
fn write_all(
    shards: &[Shard],
    opts: &Options,
    budget: &Budget,
    ready_rx: &mpsc::Receiver<Ready>,
    collected: &mut Collected,
    on_done: &mut dyn FnMut(usize, std::result::Result<Done, String>) -> bool,
    go_on: &mut dyn FnMut() -> bool,
) {
    let mut early: BTreeMap<(usize, usize), Ready> = BTreeMap::new();
    let (mut shard, mut seq) = (0usize, 0usize);
    let mut cur: Option<Current> = None;
    while shard < shards.len() {
        let r = match early.remove(&(shard, seq)) {
            Some(r) => r,
            None => match ready_rx.recv() {
                Ok(r) => {
                    early.insert((r.shard, r.seq), r);
                    continue;
                }
                Err(_) => break, // every sender is gone: nothing more comes
            },
        };
        budget.release(r.bytes);
        seq += 1;
        if !go_on() {
            budget.stop();
            return;
        }
        let c = cur.get_or_insert_with(|| Current::start(&shards[shard], opts.width, collected));
        match r.body {
            Body::Ids(Ok((ids, ends))) => {
                if c.failed.is_none() {
                    c.add(&shards[shard].output, ids, ends, collected);
                }
            }
            Body::Ids(Err(why)) => {
                c.failed.get_or_insert(why);
            }
            Body::End(end) => {
                let result = cur.take().map_or_else(
                    || Err("internal error: shard state lost".to_string()),
                    |c| c.finish(end, collected),
                );
                let go_on = on_done(shard, result);
                shard += 1;
                seq = 0;
                if !go_on {
                    budget.stop();
                    return;
                }
            }
        }
    }
    // a shard whose end never came (cannot happen unless a thread died)
    for i in shard..shards.len() {
        if !on_done(i, Err("internal error: the shard was not completed".into())) {
            break;
        }
    }
}
