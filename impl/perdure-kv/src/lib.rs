//! perdure-kv: a durable key-value store on perdure's persistent
//! transactional memories — the database of seed 000, §6 ("Wait-free
//! in-memory database": RedoDB, a resizable hash map annotated with the
//! transactional semantics of RedoOpt-PTM).
//!
//! The store, its files, the `perdure kv` command, its checks (model,
//! proptest with crashes, the crash explorer, SIGKILL, damaged files,
//! mutants) and db_bench are here. Its speed targets are not all met:
//! writes run at 0.73–0.9x of the C++ RedoDB's throughput, reads level, and
//! the first write after a restart copies a replica (about 0.2 s at 10^6
//! keys); the repository's `docs/bench/kv.md` has the numbers and why.
//!
//! # Quick start
//!
//! Open (or create) a database file, write in a transaction, scan a range,
//! and open it again after a crash. Every call is one durable transaction:
//! when it returns, its writes survive a crash of the process (and, on
//! `Pmem` over persistent memory or with `Msync`, of the machine), and
//! reopening needs no recovery pass (the PTM's null recovery).
//!
//! ```
//! use perdure_kv::{Db, KvError, Options};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("fruit.db");
//! let options = Options { size: 64 << 20, ..Options::default() };
//! let db = Db::open(&path, &options)?;
//! db.put(b"fruit:apple", b"red")?;
//!
//! // Several writes, all or nothing, with reads of their own.
//! db.transaction(|tx| {
//!     let apple = tx.get(b"fruit:apple")?.unwrap_or_default();
//!     tx.put(b"fruit:fig", b"purple")?;
//!     tx.put(b"fruit:kiwi", &[&apple[..], b"-green"].concat())?;
//!     tx.delete(b"fruit:apple")?;
//!     Ok::<_, KvError>(())
//! })?;
//!
//! // Keys in order: a range, or a prefix.
//! let some = db.scan(&b"fruit:a"[..]..&b"fruit:j"[..], 100)?;
//! assert_eq!(some, vec![(b"fruit:fig".to_vec(), b"purple".to_vec())]);
//!
//! // A crash here (kill -9, or power loss on persistent memory) leaves
//! // the file as closing it does: every returned call is in it.
//! drop(db);
//! let db = Db::open(&path, &options)?;
//! assert_eq!(db.get(b"fruit:kiwi")?.as_deref(), Some(&b"red-green"[..]));
//! assert_eq!(db.get(b"fruit:apple")?, None);
//! assert_eq!(db.check()?, 2); // walks the structure, checks every invariant
//! # Ok::<(), KvError>(())
//! ```
//!
//! [`Options`] choose the construction (RedoOpt-PTM by default; every PTM
//! of `perdure-ptm`), the durability (`Pmem` flushes on tmpfs and DAX,
//! `Msync` elsewhere), the file's size and the thread count. [`Store`] is
//! the same store in a root slot of a PTM you build yourself (a volatile
//! pool, the simulator, a shared region).
//!
//! What is checked: `tests/suite/map.rs` (the model on four PTMs, reopens, two
//! and four threads, limits, a full region, damaged images),
//! `tests/suite/index.rs` (the B+tree index at three levels, a leaf filled to
//! its capacity then emptied, damaged leaves, `len` by the leaves, the
//! formats before),
//! `tests/suite/txn.rs` (transactions and snapshots), `tests/suite/file.rs` (files on
//! both backends, bad files and options), `tests/suite/proptest_kv.rs`
//! (generated runs with reopens and Px86 crashes inside batches and
//! transactions), `tests/shuttle_explore_kv.rs` (the crash explorer),
//! `tests/mutants_kv.rs`; in `perdure-cli`: `kv_kill.rs` (SIGKILL),
//! `kv_damage.rs` (10,000 damaged files), `kv_cli.rs`.
//!
//! The map's layout (a hash map and a B+tree index over the same nodes):
//! the module docs of `src/map.rs`, `src/index.rs` and `src/node.rs`; how a value leaves a transaction:
//! `src/store.rs`; transactions: `src/txn.rs`; files: `src/file.rs`.

#[macro_use(mutant)]
extern crate perdure_pm;

mod error;
// Pool files do not exist in the model-checking builds (their pools are
// word arrays).
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod file;
mod index;
mod map;
#[cfg(feature = "mutants")]
#[doc(hidden)]
pub mod mutant;
mod node;
mod store;
mod txn;

pub use error::KvError;
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
pub use file::{Construction, Db, Durability, Options, Stat, LAYOUT_PREFIX};
pub use map::{Entry, MAGIC};
pub use node::{MAX_KEY_BYTES, MAX_VALUE_BYTES};
pub use store::{Store, WriteBatch};
pub use txn::{Snapshot, Txn};
