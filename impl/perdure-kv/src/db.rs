//! RedoDB's map (seed 000, §6 "Wait-free in-memory database": "a resizable
//! hash map annotated with the transactional semantics"), over byte-string
//! keys and values: sequential code run inside the PTM's transactions, so
//! every operation is durable and linearizable when it returns, and
//! recovery is the PTM's null recovery.
//!
//! * Layout (region words): header `[MAGIC, buckets, bucket_count, len]`
//!   in the root slot; bucket array of `bucket_count` words, each the first
//!   node of its chain or 0; node `[next, hash, key_len, value_len, key
//!   words..., value words...]` (bytes little-endian in words, the last
//!   word zero-padded), one block per entry: an overwrite links a new node
//!   in place of the old one and frees it.
//! * Hash: FNV-1a over the key's bytes, then [`perdure_ptm::ds::mix`] with
//!   its length; the node keeps it, so a resize moves nodes without
//!   reading keys.
//! * Resize: as `perdure_ptm::ds::hash` (when `len > 2 · buckets`, the
//!   same transaction relinks every node into twice the buckets; skipped if
//!   the region has no room).
//! * Results: a transaction returns one word (and may run more than once,
//!   on another thread: Redo's combiner, CX's helpers), so a get's value
//!   leaves through a sink every run appends to under its own run number,
//!   and the caller takes the entry of the run number the transaction
//!   returned.
//! * Bad input: every offset read from the region goes through the PTM's
//!   checked loads; a chain longer than the region could hold is a cycle.
//!   Damage is a typed [`KvError::Corrupt`], never a panic.

use crate::error::KvError;
use perdure_ptm::{Ptm, Transaction, TxRead, ROOTS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The header's magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDKVMAP1");
/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// The longest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Buckets of a new store.
const INITIAL_BUCKETS: u64 = 64;

const H_BUCKETS: u64 = 8;
const H_COUNT: u64 = 16;
const H_LEN: u64 = 24;
const HEADER: u64 = 32;
const N_NEXT: u64 = 0;
const N_HASH: u64 = 8;
const N_KLEN: u64 = 16;
const N_VLEN: u64 = 24;
const N_DATA: u64 = 32;

/// Why an operation inside a transaction failed; it leaves the transaction
/// in the result word (the top of the word range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    NotCreated,
    NotAStore,
    Full,
    Exists,
    Corrupt(Damage),
}

/// What [`KvError::Corrupt`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    Pointer,
    BucketCount,
    Cycle,
    Lengths,
    Misplaced,
    Count,
}

impl Damage {
    const ALL: [Damage; 6] = [
        Damage::Pointer,
        Damage::BucketCount,
        Damage::Cycle,
        Damage::Lengths,
        Damage::Misplaced,
        Damage::Count,
    ];

    fn describe(self) -> &'static str {
        match self {
            Damage::Pointer => "a pointer outside the region",
            Damage::BucketCount => "a bucket count that is not a power of two",
            Damage::Cycle => "a chain longer than the region can hold (a cycle)",
            Damage::Lengths => "a key or value length over the limits",
            Damage::Misplaced => "a node in a bucket its hash does not select",
            Damage::Count => "a length that is not the number of entries",
        }
    }
}

const FAULT_BASE: u64 = u64::MAX - 63;

impl Fault {
    fn code(self) -> u64 {
        FAULT_BASE
            + match self {
                Fault::NotCreated => 0,
                Fault::NotAStore => 1,
                Fault::Full => 2,
                Fault::Exists => 3,
                Fault::Corrupt(d) => {
                    8 + Damage::ALL.iter().position(|&x| x == d).unwrap_or(0) as u64
                }
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
            c => Fault::Corrupt(
                Damage::ALL
                    .get((c - 8) as usize)
                    .copied()
                    .unwrap_or(Damage::Pointer),
            ),
        })
    }
}

fn encode(r: Result<u64, Fault>) -> u64 {
    match r {
        Ok(v) => v,
        Err(f) => f.code(),
    }
}

/// A key packed for the transactions: its words, length and hash.
#[derive(Debug)]
struct Key {
    words: Vec<u64>,
    len: u64,
    hash: u64,
}

impl Key {
    fn new(bytes: &[u8]) -> Result<Key, KvError> {
        if bytes.len() > MAX_KEY_BYTES {
            return Err(KvError::KeyTooLarge {
                len: bytes.len(),
                max: MAX_KEY_BYTES,
            });
        }
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        Ok(Key {
            words: pack(bytes),
            len: bytes.len() as u64,
            hash: perdure_ptm::ds::mix(h ^ bytes.len() as u64),
        })
    }
}

fn pack(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

fn unpack(words: &[u64], len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    out.truncate(len);
    out
}

fn words_for(len: u64) -> u64 {
    len.div_ceil(8)
}

fn ld<T: TxRead>(tx: &T, off: u64) -> Result<u64, Fault> {
    tx.try_load(off)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))
}

fn st<T: Transaction>(tx: &T, off: u64, val: u64) -> Result<(), Fault> {
    tx.try_store(off, val)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))
}

/// The header of the store in root slot `root`, and its bucket array and
/// count.
fn header<T: TxRead>(tx: &T, root: usize) -> Result<(u64, u64, u64), Fault> {
    let h = tx.root(root);
    if h == 0 {
        return Err(Fault::NotCreated);
    }
    if ld(tx, h)? != MAGIC {
        return Err(Fault::NotAStore);
    }
    let buckets = ld(tx, h + H_BUCKETS)?;
    let count = ld(tx, h + H_COUNT)?;
    if !count.is_power_of_two() {
        return Err(Fault::Corrupt(Damage::BucketCount));
    }
    Ok((h, buckets, count))
}

/// The most nodes a chain of a region of this length can hold.
fn step_bound<T: TxRead>(tx: &T) -> u64 {
    tx.region_len() / N_DATA + 1
}

/// Where `key` is: the bucket word, the link word that names its node (or
/// the chain's last link), and the node (0 if absent).
fn find<T: TxRead>(tx: &T, buckets: u64, count: u64, key: &Key) -> Result<(u64, u64, u64), Fault> {
    let bucket = buckets + 8 * (key.hash & (count - 1));
    let mut link = bucket;
    let mut node = ld(tx, link)?;
    let bound = step_bound(tx);
    let mut steps = 0;
    while node != 0 {
        steps += 1;
        if steps > bound {
            return Err(Fault::Corrupt(Damage::Cycle));
        }
        if ld(tx, node + N_HASH)? == key.hash
            && ld(tx, node + N_KLEN)? == key.len
            && key.words.iter().enumerate().try_fold(true, |eq, (i, &w)| {
                Ok::<_, Fault>(eq && ld(tx, node + N_DATA + 8 * i as u64)? == w)
            })?
        {
            return Ok((bucket, link, node));
        }
        link = node + N_NEXT;
        node = ld(tx, link)?;
    }
    Ok((bucket, link, 0))
}

/// Doubles the buckets when `len > 2 · count` (as `perdure_ptm::ds::hash`):
/// every node relinked by its kept hash; skipped if there is no room.
fn maybe_resize<T: Transaction>(tx: &T, h: u64) -> Result<(), Fault> {
    let old = ld(tx, h + H_BUCKETS)?;
    let count = ld(tx, h + H_COUNT)?;
    let len = ld(tx, h + H_LEN)?;
    if len <= 2 * count {
        return Ok(());
    }
    let new_count = 2 * count;
    let Ok(nb) = tx.alloc_zeroed(8 * new_count) else {
        return Ok(());
    };
    let bound = step_bound(tx);
    for i in 0..count {
        let mut node = ld(tx, old + 8 * i)?;
        let mut steps = 0;
        while node != 0 {
            steps += 1;
            if steps > bound {
                return Err(Fault::Corrupt(Damage::Cycle));
            }
            let next = ld(tx, node + N_NEXT)?;
            let b = nb + 8 * (ld(tx, node + N_HASH)? & (new_count - 1));
            st(tx, node + N_NEXT, ld(tx, b)?)?;
            st(tx, b, node)?;
            node = next;
        }
    }
    st(tx, h + H_BUCKETS, nb)?;
    st(tx, h + H_COUNT, new_count)?;
    tx.free(old).map_err(|_| Fault::Corrupt(Damage::Pointer))
}

fn node_size(key: &Key, value_words: usize) -> u64 {
    N_DATA + 8 * (key.words.len() + value_words) as u64
}

fn put_in<T: Transaction>(
    tx: &T,
    root: usize,
    key: &Key,
    value: &[u64],
    vlen: u64,
) -> Result<u64, Fault> {
    let hd = header(tx, root)?;
    // The block first: a full region leaves the store unchanged.
    let node = tx
        .alloc(node_size(key, value.len()))
        .map_err(|_| Fault::Full)?;
    link_in(tx, hd, key, value, vlen, node)
}

/// Fills the block `node` (allocated for this entry) and links it in place
/// of `key`'s node, or at the head of its bucket; 1 if it replaced one.
/// `(h, buckets, count)` is the store's [`header`] as it is now.
fn link_in<T: Transaction>(
    tx: &T,
    (h, buckets, count): (u64, u64, u64),
    key: &Key,
    value: &[u64],
    vlen: u64,
    node: u64,
) -> Result<u64, Fault> {
    let (bucket, link, found) = find(tx, buckets, count, key)?;
    st(tx, node + N_HASH, key.hash)?;
    st(tx, node + N_KLEN, key.len)?;
    st(tx, node + N_VLEN, vlen)?;
    for (i, &w) in key.words.iter().chain(value.iter()).enumerate() {
        st(tx, node + N_DATA + 8 * i as u64, w)?;
    }
    if found != 0 {
        st(tx, node + N_NEXT, ld(tx, found + N_NEXT)?)?;
        st(tx, link, node)?;
        tx.free(found)
            .map_err(|_| Fault::Corrupt(Damage::Pointer))?;
        return Ok(1);
    }
    st(tx, node + N_NEXT, ld(tx, bucket)?)?;
    st(tx, bucket, node)?;
    st(tx, h + H_LEN, ld(tx, h + H_LEN)? + 1)?;
    maybe_resize(tx, h)?;
    Ok(0)
}

/// A batch: every block allocated first (if one does not fit, the ones
/// taken are given back and nothing else is stored), then the operations
/// in order.
fn write_in<T: Transaction>(tx: &T, root: usize, ops: &[BatchOp]) -> Result<u64, Fault> {
    header(tx, root)?;
    let mut blocks = Vec::with_capacity(ops.len());
    for op in ops {
        if let BatchOp::Put(k, v, _) = op {
            match tx.alloc(node_size(k, v.len())) {
                Ok(b) => blocks.push(b),
                Err(_) => {
                    for &b in &blocks {
                        tx.free(b).map_err(|_| Fault::Corrupt(Damage::Pointer))?;
                    }
                    return Err(Fault::Full);
                }
            }
        }
    }
    let mut blocks = blocks.into_iter();
    for op in ops {
        match op {
            BatchOp::Put(k, v, vlen) => {
                let node = blocks.next().ok_or(Fault::Full)?;
                // Read again: an earlier put of the batch may have resized.
                link_in(tx, header(tx, root)?, k, v, *vlen, node)?;
            }
            BatchOp::Delete(k) => {
                delete_in(tx, root, k)?;
            }
        }
    }
    Ok(0)
}

fn delete_in<T: Transaction>(tx: &T, root: usize, key: &Key) -> Result<u64, Fault> {
    let (h, buckets, count) = header(tx, root)?;
    let (_, link, found) = find(tx, buckets, count, key)?;
    if found == 0 {
        return Ok(0);
    }
    st(tx, link, ld(tx, found + N_NEXT)?)?;
    tx.free(found)
        .map_err(|_| Fault::Corrupt(Damage::Pointer))?;
    st(tx, h + H_LEN, ld(tx, h + H_LEN)?.wrapping_sub(1))?;
    Ok(1)
}

/// The value words and length of `key`, if present.
fn get_in<T: TxRead>(tx: &T, root: usize, key: &Key) -> Result<Option<(Vec<u64>, u64)>, Fault> {
    let (_, buckets, count) = header(tx, root)?;
    let (_, _, node) = find(tx, buckets, count, key)?;
    if node == 0 {
        return Ok(None);
    }
    let vlen = ld(tx, node + N_VLEN)?;
    if vlen > MAX_VALUE_BYTES as u64 {
        return Err(Fault::Corrupt(Damage::Lengths));
    }
    let base = node + N_DATA + 8 * key.words.len() as u64;
    let words = (0..words_for(vlen))
        .map(|i| ld(tx, base + 8 * i))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((words, vlen)))
}

/// Walks every chain: each node in the bucket its hash selects, lengths
/// within the limits, no cycle, `len` entries.
fn check_in<T: TxRead>(tx: &T, root: usize) -> Result<u64, Fault> {
    let (h, buckets, count) = header(tx, root)?;
    let bound = step_bound(tx);
    let mut seen = 0u64;
    for i in 0..count {
        let mut node = ld(tx, buckets + 8 * i)?;
        while node != 0 {
            seen += 1;
            if seen > bound {
                return Err(Fault::Corrupt(Damage::Cycle));
            }
            if ld(tx, node + N_HASH)? & (count - 1) != i {
                return Err(Fault::Corrupt(Damage::Misplaced));
            }
            let (klen, vlen) = (ld(tx, node + N_KLEN)?, ld(tx, node + N_VLEN)?);
            if klen > MAX_KEY_BYTES as u64 || vlen > MAX_VALUE_BYTES as u64 {
                return Err(Fault::Corrupt(Damage::Lengths));
            }
            // The last data word must be inside the region.
            ld(
                tx,
                node + N_DATA + 8 * (words_for(klen) + words_for(vlen)).max(1) - 8,
            )?;
            node = ld(tx, node + N_NEXT)?;
        }
    }
    if ld(tx, h + H_LEN)? != seen {
        return Err(Fault::Corrupt(Damage::Count));
    }
    Ok(seen)
}

/// One operation of a [`WriteBatch`].
#[derive(Debug)]
enum BatchOp {
    Put(Key, Vec<u64>, u64),
    Delete(Key),
}

/// Puts and deletes applied together by [`Db::write`]: all of them, in
/// order, in one transaction, or none.
#[derive(Debug, Default)]
pub struct WriteBatch {
    ops: Vec<BatchOp>,
    bytes: u64,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    /// Adds a put (the limits of [`Db::put`] apply).
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<&mut WriteBatch, KvError> {
        check_value(value)?;
        let k = Key::new(key)?;
        self.bytes += node_size(&k, words_for(value.len() as u64) as usize);
        self.ops
            .push(BatchOp::Put(k, pack(value), value.len() as u64));
        Ok(self)
    }

    /// Adds a delete.
    pub fn delete(&mut self, key: &[u8]) -> Result<&mut WriteBatch, KvError> {
        self.ops.push(BatchOp::Delete(Key::new(key)?));
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

fn check_value(value: &[u8]) -> Result<(), KvError> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(KvError::ValueTooLarge {
            len: value.len(),
            max: MAX_VALUE_BYTES,
        });
    }
    Ok(())
}

/// Each run of a read closure appends what it found under its own run
/// number; the caller takes the run the transaction returned.
type Sink = Arc<Mutex<Vec<(u64, Option<(Vec<u64>, u64)>)>>>;

/// A durable key-value store in one root slot of a PTM (seed 000, §6).
///
/// Every method is one transaction of the PTM: durable when it returns,
/// linearizable with the other threads' operations (the PTM's thread ids
/// bound how many threads may call it at once).
pub struct Db<P: Ptm> {
    ptm: Arc<P>,
    root: usize,
}

impl<P: Ptm> std::fmt::Debug for Db<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("root", &self.root).finish()
    }
}

impl<P: Ptm> Db<P> {
    /// Formats an empty store in root slot `root` of `ptm` (which must be
    /// empty: [`KvError::Exists`] otherwise).
    pub fn create(ptm: P, root: usize) -> Result<Db<P>, KvError> {
        Db::create_in(Arc::new(ptm), root)
    }

    /// [`Db::create`] in a PTM shared with other stores (in other root
    /// slots) or other users.
    pub fn create_in(ptm: Arc<P>, root: usize) -> Result<Db<P>, KvError> {
        check_root(root)?;
        let w = ptm.update_tx(move |tx| {
            encode((|| {
                if tx.root(root) != 0 {
                    return Err(Fault::Exists);
                }
                let h = tx.alloc(HEADER).map_err(|_| Fault::Full)?;
                let b = tx
                    .alloc_zeroed(8 * INITIAL_BUCKETS)
                    .map_err(|_| Fault::Full)?;
                st(tx, h, MAGIC)?;
                st(tx, h + H_BUCKETS, b)?;
                st(tx, h + H_COUNT, INITIAL_BUCKETS)?;
                st(tx, h + H_LEN, 0)?;
                tx.set_root(root, h);
                Ok(0)
            })())
        })?;
        decode(w, root, HEADER + 8 * INITIAL_BUCKETS)?;
        Ok(Db { ptm, root })
    }

    /// Opens the store in root slot `root` of `ptm` (after the PTM's null
    /// recovery: nothing else to do).
    pub fn open(ptm: P, root: usize) -> Result<Db<P>, KvError> {
        Db::open_in(Arc::new(ptm), root)
    }

    /// [`Db::open`] in a shared PTM (see [`Db::create_in`]).
    pub fn open_in(ptm: Arc<P>, root: usize) -> Result<Db<P>, KvError> {
        check_root(root)?;
        let w = ptm.read_tx(move |tx| encode(header(tx, root).map(|_| 0)))?;
        decode(w, root, 0)?;
        Ok(Db { ptm, root })
    }

    /// The PTM the store lives in.
    pub fn ptm(&self) -> &P {
        &self.ptm
    }

    /// Sets `key` to `value`; true if it replaced a value.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        check_value(value)?;
        let k = Arc::new(Key::new(key)?);
        let needed = N_DATA + 8 * (k.words.len() as u64 + words_for(value.len() as u64));
        let v: Arc<[u64]> = pack(value).into();
        let vlen = value.len() as u64;
        let root = self.root;
        let w = self
            .ptm
            .update_tx(move |tx| encode(put_in(tx, root, &k, &v, vlen)))?;
        Ok(decode(w, root, needed)? == 1)
    }

    /// Applies `batch`: every operation, in order, in one transaction
    /// (durable on return), or none of them ([`KvError::Full`] with the
    /// bytes the batch's new entries need, when the region has no room).
    pub fn write(&self, batch: WriteBatch) -> Result<(), KvError> {
        let root = self.root;
        let needed = batch.bytes;
        let ops = Arc::new(batch.ops);
        let w = self
            .ptm
            .update_tx(move |tx| encode(write_in(tx, root, &ops)))?;
        decode(w, root, needed).map(drop)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let k = Arc::new(Key::new(key)?);
        let sink: Sink = Arc::new(Mutex::new(Vec::new()));
        let runs = Arc::new(AtomicU64::new(0));
        let (root, s) = (self.root, Arc::clone(&sink));
        let w = self.ptm.read_tx(move |tx| {
            encode(get_in(tx, root, &k).map(|found| {
                let run = runs.fetch_add(1, Ordering::Relaxed);
                s.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((run, found));
                run
            }))
        })?;
        let run = decode(w, root, 0)?;
        let mut runs = sink.lock().unwrap_or_else(|e| e.into_inner());
        let found = runs
            .iter_mut()
            .find(|(r, _)| *r == run)
            .and_then(|(_, f)| f.take());
        Ok(found.map(|(words, len)| unpack(&words, len as usize)))
    }

    /// Removes `key`; true if it was present.
    pub fn delete(&self, key: &[u8]) -> Result<bool, KvError> {
        let k = Arc::new(Key::new(key)?);
        let root = self.root;
        let w = self
            .ptm
            .update_tx(move |tx| encode(delete_in(tx, root, &k)))?;
        Ok(decode(w, root, 0)? == 1)
    }

    /// The number of entries.
    pub fn len(&self) -> Result<u64, KvError> {
        let root = self.root;
        let w = self
            .ptm
            .read_tx(move |tx| encode(header(tx, root).and_then(|(h, _, _)| ld(tx, h + H_LEN))))?;
        decode(w, root, 0)
    }

    /// Whether the store has no entry.
    pub fn is_empty(&self) -> Result<bool, KvError> {
        Ok(self.len()? == 0)
    }

    /// Walks the whole structure and checks its invariants (every node in
    /// the bucket its hash selects, lengths within the limits, every
    /// pointer inside the region, no cycle, the length); returns the
    /// number of entries.
    pub fn check(&self) -> Result<u64, KvError> {
        let root = self.root;
        let w = self.ptm.read_tx(move |tx| encode(check_in(tx, root)))?;
        decode(w, root, 0)
    }
}

fn check_root(root: usize) -> Result<(), KvError> {
    if root < ROOTS {
        Ok(())
    } else {
        Err(KvError::BadRoot { root, count: ROOTS })
    }
}

fn decode(word: u64, root: usize, needed: u64) -> Result<u64, KvError> {
    Fault::decode(word).map_err(|f| match f {
        Fault::NotCreated => KvError::NotCreated { root },
        Fault::NotAStore => KvError::NotAStore { root },
        Fault::Full => KvError::Full { needed },
        Fault::Exists => KvError::Exists { root },
        Fault::Corrupt(d) => KvError::Corrupt {
            root,
            what: d.describe(),
        },
    })
}
