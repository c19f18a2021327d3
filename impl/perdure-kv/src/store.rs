//! [`Store`]: the store's handle — its operations, each one transaction of
//! the PTM, and how a result leaves a transaction.
//!
//! A transaction returns one word and may run more than once, on another
//! thread (Redo's combiner, CX's helpers), so a value leaves through a
//! [`Sink`] every run appends to under its own run number, and the caller
//! takes the entry of the run number the transaction returned. Faults
//! leave in the word itself, in the top 64 values (run numbers never get
//! there).

use crate::error::KvError;
use crate::map::Entry;
use crate::map::{self, check_value, error, Damage, Fault, Op, Range};
use crate::txn::{packed, DynRead, DynTx, Snapshot, Txn};
use perdure_ptm::{Ptm, TxRead, ROOTS};
use std::ops::{Deref, RangeBounds};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const FAULT_BASE: u64 = u64::MAX - 63;
const DAMAGE: [Damage; 10] = Damage::ALL;

impl Fault {
    pub(crate) fn code(self) -> u64 {
        FAULT_BASE
            + match self {
                Fault::NotCreated => 0,
                Fault::NotAStore => 1,
                Fault::Full => 2,
                Fault::Exists => 3,
                Fault::OldFormat => 4,
                Fault::Corrupt(d) => 8 + DAMAGE.iter().position(|&x| x == d).unwrap_or(0) as u64,
            }
    }

    fn decode(word: u64) -> Result<u64, Fault> {
        if word < FAULT_BASE {
            return Ok(word);
        }
        Err(match word - FAULT_BASE {
            0 => Fault::NotCreated,
            1 => Fault::NotAStore,
            2 => Fault::Full,
            3 => Fault::Exists,
            4 => Fault::OldFormat,
            c => Fault::Corrupt(
                DAMAGE
                    .get((c - 8) as usize)
                    .copied()
                    .unwrap_or(Damage::Pointer),
            ),
        })
    }
}

fn check_root(root: usize) -> Result<(), KvError> {
    if root < ROOTS {
        Ok(())
    } else {
        Err(KvError::BadRoot { root, count: ROOTS })
    }
}

/// Where every run of a transaction leaves its result, under its run
/// number.
struct Sink<R> {
    runs: AtomicU64,
    out: Mutex<Vec<(u64, R)>>,
}

impl<R> Sink<R> {
    fn new() -> Arc<Sink<R>> {
        Arc::new(Sink {
            runs: AtomicU64::new(0),
            out: Mutex::new(Vec::new()),
        })
    }

    /// Leaves `r`; the word the run returns.
    fn put(&self, r: R) -> u64 {
        let run = self.runs.fetch_add(1, Ordering::Relaxed);
        self.out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((run, r));
        run
    }

    /// The result of the run the transaction returned (`word`), or its
    /// fault.
    fn take(&self, word: u64, root: usize, needed: u64) -> Result<R, KvError> {
        let run = Fault::decode(word).map_err(|f| error(f, root, needed))?;
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let at = out
            .iter()
            .position(|(r, _)| *r == run)
            .ok_or(KvError::Lost)?;
        Ok(out.swap_remove(at).1)
    }
}

/// Puts and deletes applied together by [`Store::write`]: all of them, in
/// order, in one transaction, or none.
#[derive(Debug, Default)]
pub struct WriteBatch {
    ops: Vec<Op>,
    bytes: u64,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    /// Adds a put (the limits of [`Store::put`] apply).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<&mut WriteBatch, KvError> {
        check_value(value)?;
        let k = map::key(key)?;
        let v = map::pack(value);
        self.bytes += map::node_size(&k, v.len());
        self.ops.push((k, Some((v, value.len() as u64))));
        Ok(self)
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) -> Result<&mut WriteBatch, KvError> {
        self.ops.push((map::key(key)?, None));
        Ok(self)
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// A durable key-value store in one root slot of a PTM (seed 000, §6).
///
/// ```
/// use perdure_kv::Store;
/// use perdure_pm::{NoFlush, Pool};
/// use perdure_ptm::{redo::Config, RedoOptPtm};
///
/// let pool = Pool::volatile("kv-doc", 8 << 20, NoFlush).unwrap();
/// let db = Store::create(RedoOptPtm::create(pool, &Config::small()).unwrap(), 0).unwrap();
/// db.put(b"apple", b"red").unwrap();
/// assert_eq!(db.get(b"apple").unwrap().as_deref(), Some(&b"red"[..]));
/// ```
///
/// Every method is one transaction of the PTM: durable when it returns,
/// linearizable with the other threads' operations (the PTM's thread ids
/// bound how many threads may call it at once: a thread leases one on its
/// first transaction, `create`, `open` and `attach` included, and keeps it
/// until it exits or calls `perdure_ptm::release_thread_ids`).
///
/// `H` is how the store holds its PTM: an `Arc<P>` (the default: a store
/// that owns or shares it) or any other pointer to one, such as `&P`
/// ([`Store::attach`], for a PTM someone else keeps).
pub struct Store<P: Ptm, H: Deref<Target = P> = Arc<P>> {
    ptm: H,
    root: usize,
}

impl<P: Ptm, H: Deref<Target = P>> std::fmt::Debug for Store<P, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("root", &self.root).finish()
    }
}

impl<P: Ptm> Store<P> {
    /// Formats an empty store in root slot `root` of `ptm` (which must be
    /// empty: [`KvError::Exists`] otherwise). Its hash map starts with 64
    /// buckets and doubles them as it grows; [`Store::create_at_with`]
    /// starts it at the size its keys need.
    pub fn create(ptm: P, root: usize) -> Result<Store<P>, KvError> {
        Store::create_in(Arc::new(ptm), root)
    }

    /// [`Store::create`] in a PTM shared with other stores (in other root
    /// slots) or other users.
    pub fn create_in(ptm: Arc<P>, root: usize) -> Result<Store<P>, KvError> {
        Store::create_at(ptm, root)
    }

    /// Opens the store in root slot `root` of `ptm` (after the PTM's null
    /// recovery: nothing else to do).
    pub fn open(ptm: P, root: usize) -> Result<Store<P>, KvError> {
        Store::open_in(Arc::new(ptm), root)
    }

    /// [`Store::open`] in a shared PTM (see [`Store::create_in`]).
    pub fn open_in(ptm: Arc<P>, root: usize) -> Result<Store<P>, KvError> {
        Store::attach(ptm, root)
    }

    /// The PTM the store lives in, shared.
    pub fn ptm_arc(&self) -> &Arc<P> {
        &self.ptm
    }
}

impl<P: Ptm, H: Deref<Target = P>> Store<P, H> {
    /// Formats an empty store in root slot `root` of the PTM `ptm` points
    /// to (see [`Store::create`]).
    pub fn create_at(ptm: H, root: usize) -> Result<Store<P, H>, KvError> {
        Store::create_at_with(ptm, root, map::MIN_BUCKETS)
    }

    /// [`Store::create_at`] with a hash map of `buckets` buckets (rounded
    /// up to a power of two, at least 64 and at most 2^26). The map doubles
    /// its buckets when it holds more than two keys per bucket, in the
    /// transaction of the put that crosses the bound, which writes every
    /// node's link again; a store started with a bucket per key it will
    /// hold never does. Each bucket takes 8 bytes of the region.
    pub fn create_at_with(ptm: H, root: usize, buckets: u64) -> Result<Store<P, H>, KvError> {
        check_root(root)?;
        let buckets = map::first_buckets(buckets);
        let w = ptm.update_tx(move |tx| encode(map::create_in(tx, root, buckets)))?;
        decode(w, root, map::HEADER + 8 * buckets)?;
        Ok(Store { ptm, root })
    }

    /// The store in root slot `root` of the PTM `ptm` points to (see
    /// [`Store::open`]).
    pub fn attach(ptm: H, root: usize) -> Result<Store<P, H>, KvError> {
        check_root(root)?;
        let w = ptm.read_tx(move |tx| encode(map::header(tx, root).map(|_| 0)))?;
        decode(w, root, 0)?;
        Ok(Store { ptm, root })
    }

    /// The PTM the store lives in.
    pub fn ptm(&self) -> &P {
        &self.ptm
    }

    /// The root slot the store lives in.
    pub fn root(&self) -> usize {
        self.root
    }

    /// Sets `key` to `value`; true if it replaced a value.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        check_value(value)?;
        let k = map::key(key)?;
        let needed = map::node_size(&k, map::words_for(value.len() as u64) as usize);
        let v = map::pack(value);
        let vlen = value.len() as u64;
        let root = self.root;
        let w = self.ptm.update_tx(move |tx| {
            encode(map::header(tx, root).and_then(|hd| map::put_in(tx, hd, &k, &v, vlen, None, 0)))
        })?;
        Ok(decode(w, root, needed)? == 1)
    }

    /// Applies `batch`: every operation, in order, in one transaction
    /// (durable on return), or none of them ([`KvError::Full`] with the
    /// bytes the batch's new entries need, when the region has no room).
    pub fn write(&self, batch: WriteBatch) -> Result<(), KvError> {
        let root = self.root;
        let needed = batch.bytes;
        let mut ops = batch.ops;
        if mutant!(KvBatchInTwo) && ops.len() > 1 {
            let first: Vec<Op> = ops.drain(..ops.len() / 2).collect();
            let w = self
                .ptm
                .update_tx(move |tx| encode(map::write_in(tx, root, &first)))?;
            decode(w, root, needed)?;
        }
        let w = self
            .ptm
            .update_tx(move |tx| encode(map::write_in(tx, root, &ops)))?;
        decode(w, root, needed).map(drop)
    }

    /// Removes `key`; true if it was present.
    pub fn delete(&self, key: &[u8]) -> Result<bool, KvError> {
        let k = map::key(key)?;
        let root = self.root;
        let w = self.ptm.update_tx(move |tx| {
            encode(map::header(tx, root).and_then(|hd| map::delete_in(tx, hd, &k)))
        })?;
        Ok(decode(w, root, 0)? == 1)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let k = map::key(key)?;
        self.read_out(move |tx, hd| map::get_in(tx, hd, &k))
    }

    /// The entries whose keys are in `range`, in key order, at most
    /// `limit`, from one consistent state. `range` is any range of byte
    /// strings: `&b"a"[..]..&b"c"[..]`, `"user:".."user;"`,
    /// `..=b"m".to_vec()`.
    pub fn scan<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        limit: usize,
    ) -> Result<Vec<Entry>, KvError> {
        self.scan_packed(packed(&range), limit)
    }

    /// The entries whose keys start with `prefix` (every entry for an
    /// empty prefix), in key order, at most `limit`, from one consistent
    /// state.
    pub fn scan_prefix(&self, prefix: &[u8], limit: usize) -> Result<Vec<Entry>, KvError> {
        self.scan_packed(Range::prefix(prefix), limit)
    }

    fn scan_packed(&self, range: Range, limit: usize) -> Result<Vec<Entry>, KvError> {
        self.read_out(move |tx, hd| map::scan_in(tx, hd, &range, limit))
    }

    /// Runs `f` on the store's header in a read-only transaction and
    /// returns what the run the transaction returned found (through a
    /// [`Sink`]).
    fn read_out<R, F>(&self, f: F) -> Result<R, KvError>
    where
        R: Send + 'static,
        F: for<'t> Fn(&P::ReadTx<'t>, map::Header) -> Result<R, Fault> + Send + Sync + 'static,
    {
        let root = self.root;
        let sink = Sink::new();
        let s = Arc::clone(&sink);
        let w = self.ptm.read_tx(move |tx| {
            encode(
                map::header(tx, root)
                    .and_then(|hd| f(tx, hd))
                    .map(|v| s.put(v)),
            )
        })?;
        sink.take(w, root, 0)
    }

    /// Runs `f` on one consistent state of the store (a read-only
    /// transaction: it sees every operation that returned before the call
    /// and none that starts after it returns) and returns its result.
    pub fn snapshot<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<KvError> + Send + 'static,
        F: Fn(&Snapshot<'_>) -> Result<T, E> + Send + Sync + 'static,
    {
        let root = self.root;
        let sink = Sink::new();
        let s = Arc::clone(&sink);
        let w = self
            .ptm
            .read_tx(move |tx| {
                encode(
                    map::header(tx, root).map(|hd| s.put(f(&Snapshot::new(DynRead(tx), hd, root)))),
                )
            })
            .map_err(KvError::from)?;
        sink.take(w, root, 0)?
    }

    /// Runs `f` as one serializable transaction: its reads see one state
    /// of the store and its own writes, and its writes are applied, all of
    /// them, when it returns `Ok` (durable when this returns), or none of
    /// them when it returns `Err` or the region has no room for them
    /// ([`KvError::Full`]). `f` may run more than once, on another thread;
    /// see [`Txn`].
    ///
    /// A panic in `f` ends the transaction with nothing applied and panics
    /// here.
    pub fn transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<KvError> + Send + 'static,
        F: Fn(&mut Txn<'_>) -> Result<T, E> + Send + Sync + 'static,
    {
        let root = self.root;
        let sink = Sink::new();
        let s = Arc::clone(&sink);
        let w = self
            .ptm
            .update_tx(move |tx| {
                encode(map::header(tx, root).map(|hd| {
                    let mut txn = Txn::new(DynTx(tx), hd, root);
                    s.put(match f(&mut txn) {
                        Ok(v) => txn
                            .apply()
                            .map(|()| v)
                            .map_err(|(fault, needed)| E::from(error(fault, root, needed))),
                        Err(e) => {
                            if mutant!(KvTxnAppliesOnErr) {
                                let _ = txn.apply();
                            }
                            Err(e)
                        }
                    })
                }))
            })
            .map_err(KvError::from)?;
        sink.take(w, root, 0)?
    }

    /// The bytes of the region in allocated blocks, and the region's
    /// length.
    pub fn space(&self) -> Result<(u64, u64), KvError> {
        let used = self.ptm.read_tx(|tx| perdure_ptm::ds::live_bytes_in(tx))?;
        let len = self.ptm.read_tx(|tx| tx.region_len())?;
        Ok((used, len))
    }

    /// The number of entries, counted by a walk of the ordered index's
    /// leaves (a block per ~28 entries: no count is kept, `src/map.rs`).
    pub fn len(&self) -> Result<u64, KvError> {
        let root = self.root;
        let w = self.ptm.read_tx(move |tx| encode(map::len_in(tx, root)))?;
        decode(w, root, 0)
    }

    /// Whether the store has no entry.
    pub fn is_empty(&self) -> Result<bool, KvError> {
        Ok(self.len()? == 0)
    }

    /// Walks the whole structure and checks its invariants (the hash map's
    /// chains and the ordered index, each against the other: see
    /// `src/map.rs`); returns the number of entries.
    pub fn check(&self) -> Result<u64, KvError> {
        let root = self.root;
        let w = self
            .ptm
            .read_tx(move |tx| encode(map::check_in(tx, root)))?;
        decode(w, root, 0)
    }
}

fn encode(r: Result<u64, Fault>) -> u64 {
    match r {
        Ok(v) => v,
        Err(f) => f.code(),
    }
}

fn decode(word: u64, root: usize, needed: u64) -> Result<u64, KvError> {
    Fault::decode(word).map_err(|f| error(f, root, needed))
}
