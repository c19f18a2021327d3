//! perdure-kv: a durable key-value store on perdure's persistent
//! transactional memories — the database of seed 000, §6 ("Wait-free
//! in-memory database": RedoDB, a resizable hash map annotated with the
//! transactional semantics of RedoOpt-PTM).
//!
//! **Under way** (issue 18): this first part is the map itself — byte-string
//! keys and values, `put`, `get`, `delete`, `len`, `check` and atomic
//! `WriteBatch`es, each one transaction of any [`perdure_ptm::Ptm`], so durable and linearizable on
//! return, with null recovery. Not yet here: the ordered index and scans,
//! multi-operation transactions over user closures, `Db::open(path)` with the
//! construction chosen in options, the `perdure kv` command, the crash and
//! SIGKILL checks and db_bench.
//!
//! ```
//! use perdure_kv::Db;
//! use perdure_pm::{NoFlush, Pool};
//! use perdure_ptm::redo::Config;
//! use perdure_ptm::RedoOptPtm;
//!
//! let pool = Pool::volatile("kv-doc", 8 << 20, NoFlush).unwrap();
//! let ptm = RedoOptPtm::create(pool, &Config::small()).unwrap();
//! let db = Db::create(ptm, 0).unwrap();
//! db.put(b"apple", b"red").unwrap();
//! assert_eq!(db.get(b"apple").unwrap().as_deref(), Some(&b"red"[..]));
//! assert!(db.delete(b"apple").unwrap());
//! assert_eq!(db.get(b"apple").unwrap(), None);
//! ```
//!
//! The map's layout and how a value leaves a transaction: the module docs
//! of `src/db.rs`.

mod db;
mod error;

pub use db::{Db, WriteBatch, MAGIC, MAX_KEY_BYTES, MAX_VALUE_BYTES};
pub use error::KvError;
