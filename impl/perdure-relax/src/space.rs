//! The Mirror/RELAX space: the persistent layout, the volatile mirror, the
//! allocator, the roots, and per-thread handles with safe memory reclamation.
//!
//! ## Layout (offsets from the space's base, a 4096-aligned pool offset)
//!
//! | offset | content |
//! | --- | --- |
//! | 0..64 | header ([`perdure_pm::meta`] line): magic, version, root count, heap base, heap length, thread count, flags |
//! | 64.. | root table (§6.6): one word per root, the pool offset of the root object (0 = empty) |
//! | heap (4096-aligned) | [`perdure_pm::heap::Heap`]: every node, in NVMM |
//!
//! ## Thesis sections this follows
//!
//! * **Mirrored allocation (Chapter 4, §6.5).** A node is allocated once, in
//!   the pool's heap; its volatile replica is the slot at the *same offset*
//!   of the [`Dram`] region, so translation is the identity (Mirror's "single
//!   addition" with a zero displacement). The allocator and its metadata live
//!   in NVMM, as §6.5 proposes so that recovery need not rebuild them:
//!   `perdure_pm::heap` is §6.5.1's persistent `ssmem` — completed free sets
//!   are written back and kept on durable lists. **What a crash can leak**
//!   (see `perdure_pm::heap` for the proof-sized statement): per thread, the
//!   free set being filled (fewer than 62 blocks per size class), one spare
//!   set array, blocks allocated but not yet linked, and — only in two short
//!   windows — one set in transfer or one chunk being claimed; in addition
//!   the epoch-based reclamation below keeps retired blocks in DRAM until
//!   their grace period ends, so blocks retired in the last two epochs
//!   before a crash are leaked. §6.5.1 bounds its own design at "two free
//!   sets per thread"; this is the same order. Nothing reachable is ever
//!   freed, and no block is handed out twice.
//! * **Safe memory reclamation.** The thesis uses `ssmem`'s epoch-style
//!   scheme (free sets stamped with a vector clock, reused once every thread
//!   has advanced). Here it is classic epoch-based reclamation (Fraser): an
//!   operation pins the global epoch, a node unlinked by it is *retired*
//!   with the global epoch at that moment (not the epoch its thread pinned,
//!   which may be one behind: see [`Handle::retire`]), and retired nodes go
//!   back to the heap once the epoch has advanced twice past that. The unlinking CAS is a Mirror CAS, written back and fenced
//!   before it returns, so a freed node is never reachable in NVMM either.
//! * **Roots (§6.6).** Root slots sit at the start of the space; once set a
//!   root is immutable (it points at a sentinel or a bucket array, which can
//!   change). Opening a structure recovers its root object before the first
//!   operation — the only blocking step of lazy recovery — or, for
//!   [`Tracking::Eager`], traces and copies everything reachable (Mirror's
//!   own recovery).
//!
//! ## Which tracking variant (§6.4.6)
//!
//! | [`Tracking`] | seed name | needs | tracks |
//! | --- | --- | --- | --- |
//! | `Bitset` | `BitsetAtomic` (§6.4.1) | nothing | a bit per field in an O(1)-initialised DRAM bitset ([`crate::bitset`]) |
//! | `Markable` | `MarkableAtomicPointer` (§6.4.2) | one incoming pointer per node | the third LSB of each pointer to an unrecovered node |
//! | `Hybrid` | `HybridAtomicPointer` (§6.4.3) | a recursive structure | pointer marks plus a bit per node in the bitset |
//! | `ZMarkable` | `ZMarkableAtomicPointer` (§6.4.4) | a recursive structure, zeroed DRAM | pointer marks; a node is recovered iff its last field's DRAM sequence is non-zero |
//! | `PseudoBitset` | `PseudoBitsetAtomic` (§6.4.5) | zeroed DRAM, a space created with MSB sequences | the MSB of the field's DRAM sequence |
//! | `Eager` | Mirror (Chapter 4) | a trace function ([`crate::Node`]) | nothing: everything reachable is copied at open |

use crate::bitset::Bitset;
use crate::dram::{Dram, DramInit};
use crate::error::RelaxError;
pub(crate) mod node;

use crate::sync::atomic::{AtomicBool, Ordering};
use crate::sync::Mutex;
use node::Node;
use perdure_pm::epoch::Epochs;
use perdure_pm::heap::{Heap, HeapThread};
use perdure_pm::{meta, Backend, Pool};
use std::collections::VecDeque;

/// Magic word of a RELAX space.
pub const RELAX_MAGIC: u64 = u64::from_le_bytes(*b"PRDRELAX");
const VERSION: u64 = 1;
/// The header flag: sequences keep their MSB set ([`Tracking::PseudoBitset`]).
const FLAG_MSB_SEQ: u64 = 1;
/// The most significant bit of a sequence (§6.4.5).
pub const SEQ_MSB: u64 = 1 << 63;
/// Largest number of root slots.
pub const MAX_ROOTS: u64 = 64;
/// Largest number of threads.
pub const MAX_THREADS: usize = 256;

/// How this incarnation tracks which fields are recovered (§6.4). See the
/// module docs for the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tracking {
    /// Mirror's eager recovery: trace from the roots and copy everything
    /// before the first operation; no tracking afterwards.
    Eager,
    /// `BitsetAtomic` (§6.4.1).
    Bitset,
    /// `MarkableAtomicPointer` (§6.4.2).
    Markable,
    /// `HybridAtomicPointer` (§6.4.3).
    Hybrid,
    /// `ZMarkableAtomicPointer` (§6.4.4); needs zeroed DRAM.
    ZMarkable,
    /// `PseudoBitsetAtomic` (§6.4.5); needs zeroed DRAM and a space created
    /// with [`Config::msb_sequences`].
    PseudoBitset,
}

impl Tracking {
    /// Every variant.
    pub const ALL: [Tracking; 6] = [
        Tracking::Eager,
        Tracking::Bitset,
        Tracking::Markable,
        Tracking::Hybrid,
        Tracking::ZMarkable,
        Tracking::PseudoBitset,
    ];

    /// The seed's name of the variant.
    pub fn seed_name(self) -> &'static str {
        match self {
            Tracking::Eager => "Mirror (eager)",
            Tracking::Bitset => "BitsetAtomic",
            Tracking::Markable => "MarkableAtomicPointer",
            Tracking::Hybrid => "HybridAtomicPointer",
            Tracking::ZMarkable => "ZMarkableAtomicPointer",
            Tracking::PseudoBitset => "PseudoBitsetAtomic",
        }
    }

    /// Whether the variant marks pointers (§6.4.2–6.4.4).
    pub fn marks_pointers(self) -> bool {
        matches!(
            self,
            Tracking::Markable | Tracking::Hybrid | Tracking::ZMarkable
        )
    }

    /// Whether the variant relies on zeroed DRAM after a crash.
    pub fn needs_zeroed_dram(self) -> bool {
        matches!(self, Tracking::ZMarkable | Tracking::PseudoBitset)
    }
}

/// Parameters of a new space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Threads that may hold a [`Handle`] at once.
    pub threads: usize,
    /// Root slots.
    pub roots: u64,
    /// Bytes of heap.
    pub heap_bytes: u64,
    /// Keep every sequence's MSB set, as [`Tracking::PseudoBitset`] needs
    /// (sequences then count in their 63 low bits).
    pub msb_sequences: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: 8,
            roots: 8,
            heap_bytes: 16 << 20,
            msb_sequences: false,
        }
    }
}

/// How a space is opened: the tracking variant and what DRAM holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenOptions {
    /// The tracking variant of this incarnation.
    pub tracking: Tracking,
    /// What the fresh volatile region holds.
    pub dram: DramInit,
}

impl OpenOptions {
    /// `tracking` with zeroed DRAM.
    pub fn new(tracking: Tracking) -> Self {
        OpenOptions {
            tracking,
            dram: DramInit::Zeroed,
        }
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// A Mirror/RELAX space over a pool: see the module docs.
#[derive(Debug)]
pub struct Space<'p, B: Backend> {
    pub(crate) pool: &'p Pool<B>,
    pub(crate) dram: Dram,
    pub(crate) bitset: Option<Bitset>,
    pub(crate) tracking: Tracking,
    pub(crate) msb_seq: bool,
    base: u64,
    roots: u64,
    heap: Heap<'p, B>,
    threads: usize,
    // Epoch-based reclamation.
    /// The global epoch and the threads' pin words (`perdure_pm::epoch`).
    epochs: Epochs,
    claimed: Vec<AtomicBool>,
    orphans: Mutex<Vec<(u64, u64)>>,
    /// The reclamation audit's log (feature `check`; see [`crate::audit`]).
    #[cfg(feature = "check")]
    audit: crate::audit::Log,
}

impl<'p, B: Backend> Space<'p, B> {
    /// Bytes a space with `cfg` needs from its base.
    pub fn required_bytes(cfg: &Config) -> u64 {
        align_up(64 + 8 * cfg.roots, 4096) + cfg.heap_bytes
    }

    /// Creates an empty space at `base` (4096-aligned), durably, and opens
    /// it with `opts`.
    pub fn create(
        pool: &'p Pool<B>,
        base: u64,
        cfg: &Config,
        opts: OpenOptions,
    ) -> Result<Self, RelaxError> {
        if cfg.threads == 0 || cfg.threads > MAX_THREADS {
            return Err(RelaxError::Config(format!(
                "threads must be in 1..={MAX_THREADS}, not {}",
                cfg.threads
            )));
        }
        if cfg.roots == 0 || cfg.roots > MAX_ROOTS {
            return Err(RelaxError::Config(format!(
                "roots must be in 1..={MAX_ROOTS}, not {}",
                cfg.roots
            )));
        }
        if base % 4096 != 0 {
            return Err(RelaxError::Config(format!(
                "the base must be 4096-aligned, not {base:#x}"
            )));
        }
        let heap_base = align_up(base + 64 + 8 * cfg.roots, 4096);
        pool.check_range(base, heap_base - base + cfg.heap_bytes, 4096)?;
        for i in 0..cfg.roots {
            pool.word(base + 64 + 8 * i)?.store(0, Ordering::Relaxed);
        }
        pool.pwb(base + 64, 8 * cfg.roots);
        pool.pfence();
        // One heap slot more than threads: a handle may be dropped and a new
        // one registered while the old slot's frees are still being flushed.
        Heap::format(pool, heap_base, cfg.heap_bytes, cfg.threads as u64 + 1)?;
        let flags = if cfg.msb_sequences { FLAG_MSB_SEQ } else { 0 };
        let words = [
            RELAX_MAGIC,
            VERSION,
            cfg.roots,
            heap_base,
            cfg.heap_bytes,
            cfg.threads as u64,
            flags,
        ];
        meta::write(pool, base, &words)?;
        Self::open(pool, base, opts)
    }

    /// Opens the space at `base` after a crash or a clean shutdown, with a
    /// fresh volatile region. O(1) for every lazy variant: the DRAM region
    /// and the bitset are allocated, not filled (unless `opts.dram` asks for
    /// garbage, which a test pays for). Structures recover their roots when
    /// they are opened.
    pub fn open(pool: &'p Pool<B>, base: u64, opts: OpenOptions) -> Result<Self, RelaxError> {
        if base % 4096 != 0 {
            return Err(RelaxError::Config(format!(
                "the base must be 4096-aligned, not {base:#x}"
            )));
        }
        pool.check_range(base, 64, 64)?;
        let corrupt = |reason: String| RelaxError::corrupt(base, reason);
        let words = match meta::read(pool, base, RELAX_MAGIC)? {
            meta::Verdict::Valid(w) => w,
            meta::Verdict::NoMagic(found) => {
                return Err(meta::NotFormatted::new("RELAX space", base, found).into())
            }
            meta::Verdict::BadChecksum(_) => {
                return Err(corrupt("header checksum mismatch".into()))
            }
        };
        let [_, version, roots, heap_base, heap_len, threads, flags] = words;
        if version != VERSION {
            return Err(corrupt(format!("unknown version {version}")));
        }
        if roots == 0 || roots > MAX_ROOTS {
            return Err(corrupt(format!("root count {roots} out of range")));
        }
        if threads == 0 || threads > MAX_THREADS as u64 {
            return Err(corrupt(format!("thread count {threads} out of range")));
        }
        if heap_base != align_up(base + 64 + 8 * roots, 4096) {
            return Err(corrupt("the heap does not follow the root table".into()));
        }
        if flags & !FLAG_MSB_SEQ != 0 {
            return Err(corrupt(format!("unknown flags {flags:#x}")));
        }
        pool.check_range(base, heap_base - base, 4096)?;
        let heap = Heap::open(pool, heap_base)?;
        let _ = heap_len;
        let msb_seq = flags & FLAG_MSB_SEQ != 0;
        if opts.tracking.needs_zeroed_dram() && opts.dram != DramInit::Zeroed {
            return Err(RelaxError::Config(format!(
                "{} relies on zeroed DRAM after a crash (§6.4.4–6.4.5); it cannot run with {:?}",
                opts.tracking.seed_name(),
                opts.dram
            )));
        }
        if opts.tracking == Tracking::PseudoBitset && !msb_seq {
            return Err(RelaxError::Config(
                "PseudoBitsetAtomic needs a space created with msb_sequences (its NVMM sequences must carry the recovered bit)".into(),
            ));
        }
        let bitset = matches!(opts.tracking, Tracking::Bitset | Tracking::Hybrid)
            .then(|| Bitset::new(pool.size(), opts.dram));
        let threads = threads as usize;
        Ok(Space {
            pool,
            dram: Dram::new(pool.size(), opts.dram),
            bitset,
            tracking: opts.tracking,
            msb_seq,
            base,
            roots,
            heap,
            threads,
            epochs: Epochs::new(threads, 2),
            claimed: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            orphans: Mutex::new(Vec::new()),
            #[cfg(feature = "check")]
            audit: crate::audit::Log::default(),
        })
    }

    /// The pool.
    pub fn pool(&self) -> &'p Pool<B> {
        self.pool
    }

    /// The tracking variant of this incarnation.
    pub fn tracking(&self) -> Tracking {
        self.tracking
    }

    /// The volatile replica region.
    pub fn dram(&self) -> &Dram {
        &self.dram
    }

    /// The space's base offset.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The heap.
    pub fn heap(&self) -> &Heap<'p, B> {
        &self.heap
    }

    fn root_word(&self, index: usize) -> Result<u64, RelaxError> {
        if index as u64 >= self.roots {
            return Err(RelaxError::NoSuchRoot {
                index,
                count: self.roots as usize,
            });
        }
        Ok(self.base + 64 + 8 * index as u64)
    }

    /// The object root `index` designates, if set.
    pub fn root(&self, index: usize) -> Result<Option<u64>, RelaxError> {
        let w = self
            .pool
            .word(self.root_word(index)?)?
            .load(Ordering::Acquire);
        if w == 0 {
            return Ok(None);
        }
        self.pool.check_range(w, 16, 16)?;
        Ok(Some(w))
    }

    /// Sets root `index` to the object at `obj`, durably. Roots are
    /// immutable once set (§6.6): setting a set root is an error.
    pub fn set_root(&self, index: usize, obj: u64) -> Result<(), RelaxError> {
        let off = self.root_word(index)?;
        self.pool.check_range(obj, 16, 16)?;
        let w = self.pool.word(off)?;
        if w.load(Ordering::Acquire) != 0 {
            return Err(RelaxError::Config(format!(
                "root {index} is already set; roots are immutable (§6.6)"
            )));
        }
        w.store(obj, Ordering::Release);
        self.pool.pwb(off, 8);
        self.pool.psync();
        Ok(())
    }

    /// Recovers the root object `obj` of type `N` before the first
    /// operation (§6.6), or for [`Tracking::Eager`] copies everything
    /// reachable from it (Mirror's recovery). Returns how many nodes were
    /// copied eagerly (0 for the lazy variants' O(1) root recovery, which
    /// recovers the root object's own fields only).
    pub fn recover_root<N: Node>(&self, obj: u64) -> Result<u64, RelaxError>
    where
        N::Child: Node<Child = N::Child>,
    {
        match self.tracking {
            Tracking::Eager => self.eager_trace::<N>(obj),
            Tracking::Markable | Tracking::ZMarkable => {
                N::recover_node(self, obj)?;
                Ok(0)
            }
            Tracking::Hybrid => {
                N::recover_node(self, obj)?;
                if let Some(b) = &self.bitset {
                    b.set(obj);
                }
                Ok(0)
            }
            Tracking::Bitset | Tracking::PseudoBitset => Ok(0),
        }
    }

    /// Registers the calling thread.
    pub fn handle(&self) -> Result<Handle<'_, 'p, B>, RelaxError> {
        let slot = (0..self.threads)
            .find(|&i| {
                self.claimed[i]
                    .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })
            .ok_or(RelaxError::NoFreeThread(self.threads))?;
        let heap = match self.heap.register() {
            Ok(h) => h,
            Err(e) => {
                self.claimed[slot].store(false, Ordering::Release);
                return Err(e.into());
            }
        };
        let limbo = std::mem::take(&mut *self.orphans.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Handle {
            space: self,
            heap,
            slot,
            limbo: limbo.into(),
            unpins: 0,
        })
    }

    /// Starts the reclamation audit's log (feature `check`; see
    /// [`crate::audit`]); with `eager_reclaim`, handles also try to advance
    /// the epoch (and free what it allows) at the end of every critical
    /// section rather than every 8th, so that short test runs reclaim.
    #[cfg(feature = "check")]
    pub fn audit_start(&self, eager_reclaim: bool) {
        use std::sync::atomic::Ordering::SeqCst;
        self.audit.eager_reclaim.store(eager_reclaim, SeqCst);
        self.audit.on.store(true, SeqCst);
    }

    /// The audit's events so far, oldest first (empty unless started).
    #[cfg(feature = "check")]
    pub fn audit_events(&self) -> Vec<(crate::audit::BlockEvent, u64)> {
        self.audit
            .events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    #[cfg(feature = "check")]
    fn audit_log(&self, ev: crate::audit::BlockEvent, off: u64) {
        if self.audit.on.load(std::sync::atomic::Ordering::Relaxed) {
            let mut events = self.audit.events.lock().unwrap_or_else(|e| e.into_inner());
            events.push((ev, off));
        }
    }

    /// Whether a handle tries to advance the epoch at the end of every
    /// critical section (the audit's switch; never without the `check`
    /// feature). One function for both builds, so that the checks, which
    /// build with the feature, run the code a build without it runs.
    fn eager_reclaim(&self) -> bool {
        #[cfg(feature = "check")]
        let eager = self
            .audit
            .eager_reclaim
            .load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(feature = "check"))]
        let eager = false;
        eager
    }
}

/// How many critical sections a thread ends between attempts to advance the
/// epoch (each attempt scans every thread's pin word).
const ADVANCE_EVERY: u64 = 8;

/// A thread's handle on a space: its heap slot and its reclamation state.
#[derive(Debug)]
pub struct Handle<'s, 'p, B: Backend> {
    space: &'s Space<'p, B>,
    heap: HeapThread<'s, 'p, B>,
    slot: usize,
    /// Retired nodes with the epoch they were retired in, oldest first.
    limbo: VecDeque<(u64, u64)>,
    unpins: u64,
}

impl<'s, 'p, B: Backend> Handle<'s, 'p, B> {
    /// The space.
    pub fn space(&self) -> &'s Space<'p, B> {
        self.space
    }

    /// Runs `op` inside an epoch-based critical section: nodes read in it
    /// are not freed before it ends.
    pub fn critical<T>(&mut self, op: impl FnOnce(&mut Self) -> T) -> T {
        let sp = self.space;
        if mutant!(SpacePinNoFence) {
            sp.epochs.pin_unfenced(self.slot);
        } else {
            sp.epochs.pin(self.slot);
        }
        let r = op(self);
        sp.epochs.unpin(self.slot);
        self.unpins += 1;
        if self.unpins % ADVANCE_EVERY == 0 || sp.eager_reclaim() {
            let now = sp.epochs.try_advance();
            self.reclaim(now);
        }
        r
    }

    fn reclaim(&mut self, now: u64) {
        while let Some(&(e, off)) = self.limbo.front() {
            if e + 2 > now {
                break;
            }
            self.limbo.pop_front();
            #[cfg(feature = "check")]
            self.space.audit_log(crate::audit::BlockEvent::Free, off);
            // A node this space allocated and retired once: the heap only
            // refuses offsets outside its blocks, which cannot happen here;
            // if it did, leaking the block is the safe answer.
            let _ = self.heap.free(off);
        }
    }

    /// Retires `node`, unlinked by the caller in this critical section; it
    /// returns to the heap once no thread can still read it.
    ///
    /// The node is tagged with the *global* epoch now, not the epoch this
    /// thread pinned: the global epoch may have advanced once since the pin,
    /// and a thread that pinned the newer epoch may have read the node
    /// before it was unlinked. Tagged with the older pin, the node would be
    /// freed at pin + 2, which the end of this very critical section can
    /// reach while that reader is still pinned at pin + 1 (found by
    /// `tests/shuttle_sets.rs`; `tests/suite/reclaim_epoch.rs` forces the
    /// schedule). Every reader pinned at most the global epoch read here, so
    /// the epoch reaches it + 2 only after each of them has left.
    pub fn retire(&mut self, node: u64) {
        let e = self.space.epochs.now();
        #[cfg(feature = "check")]
        self.space.audit_log(crate::audit::BlockEvent::Retire, node);
        self.limbo.push_back((e, node));
    }

    /// Nodes retired and not yet freed.
    pub fn retired_pending(&self) -> usize {
        self.limbo.len()
    }

    /// Allocates a node of `N` with its fields' initial values `init` (one
    /// per field, pointers unmarked), written to both replicas, written back
    /// and fenced: the node may be published once this returns (the heap's
    /// allocation contract, `perdure_pm::heap`).
    pub fn alloc_node<N: Node>(&mut self, init: &[u64]) -> Result<u64, RelaxError> {
        let size = 16 * init.len() as u64;
        let off = self.heap.alloc(size.max(16))?;
        #[cfg(feature = "check")]
        self.space.audit_log(crate::audit::BlockEvent::Alloc, off);
        self.init_fields(off, init)?;
        Ok(off)
    }

    /// (Re)writes the fields of a node no other thread can reach yet (fresh
    /// from [`Handle::alloc_node`], its publication failed), in both
    /// replicas, written back and fenced.
    pub fn init_fields(&mut self, off: u64, init: &[u64]) -> Result<(), RelaxError> {
        let sp = self.space;
        let size = 16 * init.len() as u64;
        sp.pool.check_range(off, size, 16)?;
        let seq = sp.seq_init();
        for (i, &v) in init.iter().enumerate() {
            let f = off + 16 * i as u64;
            sp.pool.word(f)?.store(v, Ordering::Relaxed);
            sp.pool.word(f + 8)?.store(seq, Ordering::Relaxed);
            sp.dram.store_pair(f, (v, seq));
            if sp.tracking == Tracking::Bitset {
                if let Some(b) = &sp.bitset {
                    b.set(f);
                }
            }
        }
        if sp.tracking == Tracking::Hybrid {
            if let Some(b) = &sp.bitset {
                b.set(off);
            }
        }
        sp.pool.pwb(off, size);
        sp.pool.pfence();
        Ok(())
    }

    /// Returns a node that was never published to the heap at once.
    pub fn free_unpublished(&mut self, off: u64) -> Result<(), RelaxError> {
        #[cfg(feature = "check")]
        self.space
            .audit_log(crate::audit::BlockEvent::FreeUnpublished, off);
        self.heap.free(off)?;
        Ok(())
    }
}

impl<B: Backend> Drop for Handle<'_, '_, B> {
    fn drop(&mut self) {
        if !self.limbo.is_empty() {
            let mut o = self.space.orphans.lock().unwrap_or_else(|e| e.into_inner());
            o.extend(self.limbo.drain(..));
        }
        self.space.epochs.unpin(self.slot);
        self.space.claimed[self.slot].store(false, Ordering::Release);
    }
}
