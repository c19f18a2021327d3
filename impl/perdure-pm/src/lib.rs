//! # perdure-pm: persistent memory on real files
//!
//! The foundation every perdure construction stands on:
//!
//! * [`Pool`]: a pool file mapped into memory (`MAP_SYNC` on DAX, a shared
//!   mapping otherwise), with a checksummed [`header`], a table of
//!   root slots, offset-based persistent pointers and an advisory lock.
//!   Every way a pool file can be bad is a typed [`PoolError`].
//! * [Durability backends](backend): [`Pmem`] (`clwb` > `clflushopt` >
//!   `clflush`, and `sfence`), [`Msync`] (dirty-page tracking and `msync`)
//!   and [`NoFlush`], behind one small `unsafe` trait [`Backend`] with safe
//!   wrappers on [`Pool`].
//! * [Flush counters](stats): per-thread counts of `pwb`, `pfence` and
//!   `psync`, always on.
//! * The [`sync`] facade: atomics and threads from `std`, loom
//!   (`--cfg perdure_loom`) or shuttle (`--cfg perdure_shuttle`).
//! * Two allocators: [`region::RegionAlloc`], sequential, with its metadata
//!   inside the region it manages (for the transactional memories, which
//!   copy whole regions), and [`heap::Heap`], concurrent, with per-thread,
//!   crash-consistent metadata in the pool and a documented bound on what a
//!   crash can leak (for the lock-free constructions).
//!
//! ```no_run
//! use perdure_pm::{Pool, Msync};
//! # fn main() -> Result<(), perdure_pm::PoolError> {
//! let pool: Pool<Msync> = Pool::create("/tmp/counter.pool", "counter-v1", 1 << 20)?;
//! let off = pool.data_offset();
//! let counter = pool.word(off)?;
//! counter.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
//! pool.pwb(off, 8);
//! pool.psync(); // durable from here on, even against power loss
//! pool.set_root(0, Some(off))?;
//! drop(pool);
//! let pool: Pool<Msync> = Pool::open("/tmp/counter.pool", "counter-v1")?;
//! let off = pool.root(0)?.expect("root 0 was set");
//! assert_eq!(pool.word(off)?.load(std::sync::atomic::Ordering::Acquire), 1);
//! # Ok(()) }
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod backend;
pub mod commit_log;
#[doc(hidden)]
pub mod dword;
pub mod epoch;
pub mod error;
#[doc(hidden)]
pub mod header;
pub mod heap;
#[doc(hidden)]
pub mod hooks;
mod layout;
pub mod meta;
mod pages;
mod pm_error;
pub mod pool;
pub mod px86;
pub mod region;
pub mod sim;
pub mod site;
pub mod stats;
pub mod sync;

pub use backend::{Backend, BackendKind, FlushInstruction, Msync, NoFlush, Pmem, CACHE_LINE};
pub use error::PoolError;
pub use pm_error::PmError;
#[cfg(not(any(perdure_loom, perdure_shuttle)))]
pub use pool::PoolInfo;
pub use pool::{MapMode, PmDword, PmLoc, PmRange, PmWord, Pool};
pub use sim::{Sim, SimOptions};
