//! perdure-kv: a durable key-value store on perdure's persistent
//! transactional memories — the database of seed 000, §6 ("Wait-free
//! in-memory database": RedoDB, a resizable hash map annotated with the
//! transactional semantics of RedoOpt-PTM).
//!
//! **Under way** (issue 18). Here: [`Store`], the map in a root slot of any
//! [`perdure_ptm::Ptm`] — byte-string keys and values, `put`, `get`,
//! `delete`, atomic [`WriteBatch`]es, serializable transactions over user
//! closures ([`Store::transaction`]), read-only snapshots, ordered scans
//! of a range or a prefix, and `check`; each call one transaction of the
//! PTM, so durable and linearizable on return, with null recovery. Not yet
//! here: opening a database file by path with the construction chosen in
//! options, the `perdure kv` command, the crash and SIGKILL checks and
//! db_bench.
//!
//! ```
//! use perdure_kv::{KvError, Store};
//! use perdure_pm::{NoFlush, Pool};
//! use perdure_ptm::redo::Config;
//! use perdure_ptm::RedoOptPtm;
//!
//! let pool = Pool::volatile("kv-doc", 8 << 20, NoFlush).unwrap();
//! let ptm = RedoOptPtm::create(pool, &Config::small()).unwrap();
//! let db = Store::create(ptm, 0).unwrap();
//! db.put(b"apple", b"red").unwrap();
//! assert_eq!(db.get(b"apple").unwrap().as_deref(), Some(&b"red"[..]));
//! assert!(db.delete(b"apple").unwrap());
//! assert_eq!(db.get(b"apple").unwrap(), None);
//! db.transaction(|tx| {
//!     tx.put(b"fruit:fig", b"purple")?;
//!     tx.put(b"fruit:kiwi", b"green")?;
//!     Ok::<_, KvError>(())
//! })
//! .unwrap();
//! let fruit = db.scan_prefix(b"fruit:", 10).unwrap();
//! assert_eq!(fruit[0], (b"fruit:fig".to_vec(), b"purple".to_vec()));
//! ```
//!
//! The map's layout (a hash map and an ordered treap over the same nodes):
//! the module docs of `src/map.rs`; how a value leaves a transaction:
//! `src/store.rs`; transactions: `src/txn.rs`.

mod error;
mod map;
mod store;
mod txn;

pub use error::KvError;
pub use map::{Entry, MAGIC, MAX_KEY_BYTES, MAX_VALUE_BYTES};
pub use store::{Store, WriteBatch};
pub use txn::{Snapshot, Txn};
