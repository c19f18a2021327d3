//! [`Db`]: a store in a pool file, opened by path — the handle a user who
//! wants "a durable store I can embed" takes (seed 000, §6: RedoDB on
//! RedoOpt-PTM, by default).
//!
//! The pool's layout name records the construction it was created with
//! (`perdure-kv/redo-opt`, `perdure-kv/redo`, `perdure-kv/redo-timed`,
//! `perdure-kv/cx-ptm`), so a file opens with the construction that wrote
//! it; [`Options::construction`] only chooses at creation. The store lives
//! in root slot 0 of the PTM's region.
//!
//! Durability ([`Durability`]): `Pmem` flushes cache lines (`clwb`,
//! `clflushopt` or `clflush`, then `sfence`): durable on persistent memory
//! mapped with DAX, and the "DRAM as persistent memory" setting of the
//! seed's evaluation on `/dev/shm`; `Msync` `msync`s the dirty pages of
//! every transaction before it returns: durable against power loss on an
//! ordinary file system. `Auto` takes `Pmem` on tmpfs and DAX and `Msync`
//! elsewhere.
//!
//! Opening is crash-safe at every step: a pool whose PTM was never
//! formatted (its header's magic word still 0) is formatted, a region
//! whose store was never created (root slot 0 empty, no block allocated)
//! gets one; a damaged magic or root slot is reported, never formatted
//! over; a pool of another layout is refused ([`KvError::Foreign`]).

use crate::error::KvError;
use crate::map::Entry;
use crate::store::{Store, WriteBatch};
use crate::txn::{Snapshot, Txn};
use perdure_pm::{Backend, BackendKind, Msync, Pmem, Pool, PoolError, PoolInfo};
use perdure_ptm::{CxPtm, Ptm, RedoOptPtm, RedoPtm, RedoTimedPtm};
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The PTM a database runs on (seed 000: §4 CX-PTM, §5 Redo-PTM and its
/// RedoTimed and RedoOpt variants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Construction {
    /// RedoOpt-PTM (the seed's RedoDB).
    #[default]
    RedoOpt,
    /// Redo-PTM.
    Redo,
    /// RedoTimed-PTM.
    RedoTimed,
    /// CX-PTM.
    CxPtm,
}

impl Construction {
    /// Every construction.
    pub const ALL: [Construction; 4] = [
        Construction::RedoOpt,
        Construction::Redo,
        Construction::RedoTimed,
        Construction::CxPtm,
    ];

    /// The name in layouts, reports and the command line.
    pub fn name(self) -> &'static str {
        match self {
            Construction::RedoOpt => "redo-opt",
            Construction::Redo => "redo",
            Construction::RedoTimed => "redo-timed",
            Construction::CxPtm => "cx-ptm",
        }
    }

    /// The pool layout name of a database on this construction.
    pub fn layout(self) -> String {
        format!("{LAYOUT_PREFIX}{}", self.name())
    }

    /// The construction of a database pool's layout name.
    pub fn of_layout(layout: &str) -> Option<Construction> {
        let name = layout.strip_prefix(LAYOUT_PREFIX)?;
        Construction::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl std::str::FromStr for Construction {
    type Err = String;
    fn from_str(s: &str) -> Result<Construction, String> {
        Construction::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Construction::ALL.iter().map(|c| c.name()).collect();
                format!("unknown construction {s:?}: one of {}", names.join(", "))
            })
    }
}

/// A new database's hash map starts with a bucket per this many bytes of
/// its region (rounded down to a power of two): a key with a 100-byte
/// value takes a 256-byte node and its index entry, so a database of such
/// keys never doubles its buckets, and the array is at most 1/32 of the
/// region (its block, a power of two with the allocator's header, 1/16).
const BYTES_PER_BUCKET: u64 = 256;

/// The start of every database pool's layout name.
pub const LAYOUT_PREFIX: &str = "perdure-kv/";

/// How writes reach durability (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// `Pmem` on tmpfs or DAX, `Msync` elsewhere.
    #[default]
    Auto,
    /// Cache-line flushes and fences.
    Pmem,
    /// `msync` of the dirty pages.
    Msync,
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Durability, String> {
        match s {
            "auto" => Ok(Durability::Auto),
            "pmem" => Ok(Durability::Pmem),
            "msync" => Ok(Durability::Msync),
            _ => Err(format!(
                "unknown durability {s:?}: one of auto, pmem, msync"
            )),
        }
    }
}

/// How [`Db::open`] opens or creates a database.
#[derive(Clone, Debug)]
pub struct Options {
    /// The construction of a new database (an existing one keeps its own).
    pub construction: Construction,
    /// How writes reach durability.
    pub durability: Durability,
    /// The pool file's size in bytes, for a new database. The PTM splits
    /// it into replicas (Redo: threads + 1, CX: 2 · threads), so the data
    /// one replica holds is a fraction of it. The hash map starts with a
    /// bucket per 256 bytes of a replica (rounded down to a power of two), so
    /// it doubles its buckets only when entries average under 128 bytes.
    pub size: u64,
    /// Thread ids of a new database: how many threads may use it at once.
    /// A thread takes an id on its first operation and keeps it until it
    /// exits or calls [`Db::release_thread`]; one more thread gets
    /// `PtmError::TooManyThreads`. Opening takes none.
    pub threads: usize,
    /// Create the database if the file does not exist.
    pub create_if_missing: bool,
    /// Fail with [`PoolError::AlreadyExists`] if the file exists.
    pub error_if_exists: bool,
}

impl Default for Options {
    /// RedoOpt-PTM, `Auto` durability, 1 GiB, 4 threads, created if
    /// missing.
    fn default() -> Options {
        Options {
            construction: Construction::RedoOpt,
            durability: Durability::Auto,
            size: 1 << 30,
            threads: 4,
            create_if_missing: true,
            error_if_exists: false,
        }
    }
}

/// The store's handle on one PTM and backend.
enum Inner {
    OptPmem(Store<RedoOptPtm<Pmem>>),
    OptMsync(Store<RedoOptPtm<Msync>>),
    RedoPmem(Store<RedoPtm<Pmem>>),
    RedoMsync(Store<RedoPtm<Msync>>),
    TimedPmem(Store<RedoTimedPtm<Pmem>>),
    TimedMsync(Store<RedoTimedPtm<Msync>>),
    CxPmem(Store<CxPtm<Pmem>>),
    CxMsync(Store<CxPtm<Msync>>),
}

/// Runs `$e` with `$s` bound to the [`Store`] of whichever PTM and
/// backend `$db` has.
macro_rules! each {
    ($db:expr, $s:ident => $e:expr) => {
        match &$db.inner {
            Inner::OptPmem($s) => $e,
            Inner::OptMsync($s) => $e,
            Inner::RedoPmem($s) => $e,
            Inner::RedoMsync($s) => $e,
            Inner::TimedPmem($s) => $e,
            Inner::TimedMsync($s) => $e,
            Inner::CxPmem($s) => $e,
            Inner::CxMsync($s) => $e,
        }
    };
}

/// What [`Db::stat`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    /// The number of entries.
    pub entries: u64,
    /// Bytes of the region in allocated blocks (nodes, buckets, index blocks, header).
    pub bytes_used: u64,
    /// Bytes of one replica's region.
    pub region_bytes: u64,
    /// The pool file's size.
    pub file_bytes: u64,
    /// The construction.
    pub construction: Construction,
    /// The backend's name (`pmem` or `msync`).
    pub backend: &'static str,
}

/// A durable key-value store in a pool file. See the module docs and
/// [`Store`], whose operations it has.
pub struct Db {
    inner: Inner,
    path: PathBuf,
    construction: Construction,
    backend: BackendKind,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.path)
            .field("construction", &self.construction)
            .field("backend", &self.backend)
            .finish()
    }
}

/// Whether `path`'s file system keeps its pages in memory (tmpfs) or maps
/// them straight to persistent memory (DAX), where `Pmem` is the backend.
fn pmem_fs(path: &Path) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    let Ok(c) =
        std::ffi::CString::new(dir.unwrap_or(Path::new(".")).as_os_str().as_encoded_bytes())
    else {
        return false;
    };
    // SAFETY: `c` is a NUL-terminated path that outlives the call, and
    // `st` is a writable `statfs` the call fills (or leaves as is on
    // failure, which the return value reports).
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let r = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    #[allow(clippy::unnecessary_cast)]
    let tmpfs = r == 0 && st.f_type as i64 == TMPFS_MAGIC;
    tmpfs || PoolInfo::read(path).is_ok_and(|i| i.mode == perdure_pm::MapMode::Sync)
}

/// The pool at `path`: created (`size` bytes; `created` set) or opened.
fn pool<B: Backend>(
    path: &Path,
    layout: &str,
    create: Option<u64>,
    created: &std::cell::Cell<bool>,
    backend: B,
) -> Result<Pool<B>, KvError> {
    Ok(match create {
        Some(size) => {
            let p = Pool::create_with(path, layout, size, backend)?;
            created.set(true);
            p
        }
        None => Pool::open_with(path, layout, backend)?,
    })
}

/// The store in root slot 0 of `ptm`; created if the slot is empty and
/// the region holds no block (a create cut off by a crash leaves that); an
/// empty slot beside allocated blocks is damage, never formatted over.
fn store<P: Ptm>(ptm: P) -> Result<Store<P>, KvError> {
    let ptm = Arc::new(ptm);
    match Store::open_in(Arc::clone(&ptm), 0) {
        Err(KvError::NotCreated { .. }) => {
            let used = ptm.read_tx(|tx| perdure_ptm::ds::live_bytes_in(tx))?;
            if used != 0 {
                return Err(KvError::Corrupt {
                    root: 0,
                    what: "root slot 0 is empty but the region holds allocated blocks (a damaged root slot)",
                });
            }
            let per_bytes =
                ptm.read_tx(|tx| perdure_ptm::TxRead::region_len(tx))? / BYTES_PER_BUCKET;
            let buckets = per_bytes.checked_ilog2().map_or(0, |l| 1 << l);
            Store::create_at_with(ptm, 0, buckets)
        }
        r => r,
    }
}

impl Db {
    /// Opens the database at `path`, or creates it there (see
    /// [`Options`]).
    pub fn open(path: impl AsRef<Path>, options: &Options) -> Result<Db, KvError> {
        let path = path.as_ref();
        let exists = path.exists();
        if exists && options.error_if_exists {
            return Err(PoolError::AlreadyExists {
                path: path.to_owned(),
            }
            .into());
        }
        if !exists && !options.create_if_missing {
            return Err(PoolError::NotFound {
                path: path.to_owned(),
            }
            .into());
        }
        let construction = if exists {
            let info = PoolInfo::read(path)?;
            Construction::of_layout(&info.header.layout).ok_or_else(|| KvError::Foreign {
                path: path.to_owned(),
                layout: info.header.layout.clone(),
            })?
        } else {
            options.construction
        };
        let create = (!exists).then_some(options.size);
        let backend = match options.durability {
            Durability::Pmem => BackendKind::Pmem,
            Durability::Msync => BackendKind::Msync,
            Durability::Auto if pmem_fs(path) => BackendKind::Pmem,
            Durability::Auto => BackendKind::Msync,
        };
        let pmem = || {
            Pmem::new().ok_or(KvError::Unsupported(
                "this CPU has no cache-line flush instruction: use Durability::Msync",
            ))
        };
        let layout = construction.layout();
        let redo = perdure_ptm::redo::Config {
            threads: options.threads,
            ..Default::default()
        };
        let cx = perdure_ptm::cx::Config {
            threads: options.threads,
            ..Default::default()
        };
        use {BackendKind as B, Construction as C};
        let created = std::cell::Cell::new(false);
        let open = || -> Result<Inner, KvError> {
            Ok(match (construction, backend) {
                (C::RedoOpt, B::Pmem) => Inner::OptPmem(store(RedoOptPtm::open_or_create(
                    pool(path, &layout, create, &created, pmem()?)?,
                    &redo,
                )?)?),
                (C::RedoOpt, _) => Inner::OptMsync(store(RedoOptPtm::open_or_create(
                    pool(path, &layout, create, &created, Msync)?,
                    &redo,
                )?)?),
                (C::Redo, B::Pmem) => Inner::RedoPmem(store(RedoPtm::open_or_create(
                    pool(path, &layout, create, &created, pmem()?)?,
                    &redo,
                )?)?),
                (C::Redo, _) => Inner::RedoMsync(store(RedoPtm::open_or_create(
                    pool(path, &layout, create, &created, Msync)?,
                    &redo,
                )?)?),
                (C::RedoTimed, B::Pmem) => Inner::TimedPmem(store(RedoTimedPtm::open_or_create(
                    pool(path, &layout, create, &created, pmem()?)?,
                    &redo,
                )?)?),
                (C::RedoTimed, _) => Inner::TimedMsync(store(RedoTimedPtm::open_or_create(
                    pool(path, &layout, create, &created, Msync)?,
                    &redo,
                )?)?),
                (C::CxPtm, B::Pmem) => Inner::CxPmem(store(CxPtm::open_or_create(
                    pool(path, &layout, create, &created, pmem()?)?,
                    &cx,
                )?)?),
                (C::CxPtm, _) => Inner::CxMsync(store(CxPtm::open_or_create(
                    pool(path, &layout, create, &created, Msync)?,
                    &cx,
                )?)?),
            })
        };
        let inner = open().inspect_err(|_| {
            // A file this call created and could not set up goes again.
            if created.get() {
                let _ = std::fs::remove_file(path);
            }
        });
        // Opening ran transactions on this thread: its id goes back, so the
        // opener does not keep one of `threads` it may never use again.
        let _ = perdure_ptm::release_thread_ids();
        let inner = inner?;
        Ok(Db {
            inner,
            path: path.to_owned(),
            construction,
            backend,
        })
    }

    /// Creates a new database at `path` (fails if the file exists).
    pub fn create(path: impl AsRef<Path>, options: &Options) -> Result<Db, KvError> {
        Db::open(
            path,
            &Options {
                error_if_exists: true,
                create_if_missing: true,
                ..options.clone()
            },
        )
    }

    /// Gives back the thread ids the calling thread holds (in this and
    /// every other PTM; see [`Options::threads`]): for a thread that is
    /// done with the database but lives on (a pooled worker). Its next
    /// operation takes an id again.
    pub fn release_thread(&self) {
        let _ = perdure_ptm::release_thread_ids();
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The construction the database runs on.
    pub fn construction(&self) -> Construction {
        self.construction
    }

    /// The backend's kind (`Pmem` or `Msync`).
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// See [`Store::put`].
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        each!(self, s => s.put(key, value))
    }

    /// See [`Store::get`].
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        each!(self, s => s.get(key))
    }

    /// See [`Store::delete`].
    pub fn delete(&self, key: &[u8]) -> Result<bool, KvError> {
        each!(self, s => s.delete(key))
    }

    /// See [`Store::write`].
    pub fn write(&self, batch: WriteBatch) -> Result<(), KvError> {
        each!(self, s => s.write(batch))
    }

    /// See [`Store::scan`].
    pub fn scan<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        limit: usize,
    ) -> Result<Vec<Entry>, KvError> {
        each!(self, s => s.scan(range, limit))
    }

    /// See [`Store::scan_prefix`].
    pub fn scan_prefix(&self, prefix: &[u8], limit: usize) -> Result<Vec<Entry>, KvError> {
        each!(self, s => s.scan_prefix(prefix, limit))
    }

    /// See [`Store::snapshot`].
    pub fn snapshot<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<KvError> + Send + 'static,
        F: Fn(&Snapshot<'_>) -> Result<T, E> + Send + Sync + 'static,
    {
        each!(self, s => s.snapshot(f))
    }

    /// See [`Store::transaction`].
    pub fn transaction<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<KvError> + Send + 'static,
        F: Fn(&mut Txn<'_>) -> Result<T, E> + Send + Sync + 'static,
    {
        each!(self, s => s.transaction(f))
    }

    /// See [`Store::len`].
    pub fn len(&self) -> Result<u64, KvError> {
        each!(self, s => s.len())
    }

    /// See [`Store::is_empty`].
    pub fn is_empty(&self) -> Result<bool, KvError> {
        each!(self, s => s.is_empty())
    }

    /// See [`Store::check`].
    pub fn check(&self) -> Result<u64, KvError> {
        each!(self, s => s.check())
    }

    /// Entries, space and setup, for `perdure kv stat`.
    pub fn stat(&self) -> Result<Stat, KvError> {
        let entries = self.len()?;
        let (bytes_used, region_bytes) = each!(self, s => s.space())?;
        let file_bytes = std::fs::metadata(&self.path)
            .map(|m| m.len())
            .map_err(|source| KvError::Io {
                path: self.path.clone(),
                source,
            })?;
        Ok(Stat {
            entries,
            bytes_used,
            region_bytes,
            file_bytes,
            construction: self.construction,
            backend: self.backend.name(),
        })
    }

    /// Counters of the PTM (see [`Ptm::events`]), for benchmarks.
    pub fn events(&self) -> Vec<(&'static str, u64)> {
        each!(self, s => s.ptm().events())
    }
}
