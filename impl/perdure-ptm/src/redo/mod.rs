//! Redo-PTM (seed §5, Algorithms 1–3): a wait-free persistent transactional
//! memory built from `N + 1` replicas, Herlihy's combining consensus on
//! `cur_comb`, and physical redo/undo logs; and its two variants,
//! RedoTimed-PTM and RedoOpt-PTM (§5, "Timed variant", "Additional
//! optimizations"), run by the same code with [`Config::variant`]
//! ([`Variant`]; the wrappers [`RedoTimedPtm`] and [`RedoOptPtm`] fix it).
//! All three share the persistent layout (`layout`); everything
//! else is volatile.
//!
//! | file | implements |
//! | --- | --- |
//! | `redo/config.rs` | [`Config`], [`Variant`], [`RedoStats`] |
//! | `redo/state.rs` | Algorithm 1: `State`, `Combined`, the write-set log (one circular arena per thread), a replica's dirty lines |
//! | `redo/tx.rs` | what closures get: [`Tx`], [`ReadTx`] (the annotated loads and logged stores, Alg. 1 L22–L25); RedoOpt's store aggregation |
//! | `redo/core.rs` | [`RedoPtm`]'s volatile side (`stMatrix`, `combs`, ring, `announce`, `req`), its rebuild by null recovery, the durability watermark |
//! | `redo/open.rs` | creating and opening a pool; null recovery |
//! | `redo/front.rs` | the glue to `front`: `update_tx`, `read_tx`, [`Handle`], nesting, the [`crate::Ptm`] impl |
//! | `redo/update.rs` | Algorithm 3, `applyUpdate`, steps {1}–{9} |
//! | `redo/read.rs` | Algorithm 2, `applyRead` |
//! | `redo/variant.rs` | RedoTimed-PTM's two-replica window and backoff ({5}); RedoOpt-PTM's copies and flushes; the wrappers |
//! | `redo/wordset.rs` | RedoOpt's hash sets (store and line aggregation) |
//!
//! An update (Algorithm 3): {1} publish the closure in `req[tid]` and
//! announce it; {2} read `cur_comb` and the designated replica's `head`
//! (`tail`); {3} `cpySt` into the thread's next `State`; {4} help append
//! `tail` to the ring; {5} take a `Combined` with the strong trylock; {6}
//! bring its replica up to `tail` (replay the ring's redo logs, or copy);
//! {7} run every announced, unapplied request, logging each store; write
//! back the dirty lines, {8} downgrade the lock, `pfence`; {9} CAS
//! `cur_comb`, then `pwb(cur_comb)`, `psync`, release the superseded
//! replica — or undo the log (L38) and try once more. After two attempts
//! the result is collected from the designated state (L43–L50). A read
//! (Algorithm 2) runs on the designated replica under a shared lock, and
//! after `max_read_tries` failures publishes itself like an update.
//!
//! Invariants: the replica `cur_comb` designates is never written while a
//! crash could recover to it (the superseded replica is released only after
//! the new `cur_comb` is durable); a transaction returns only once the state
//! it read or committed is durable (the volatile `durable` watermark).
//! Progress: wait-free, bounded by two update attempts (or
//! `max_read_tries + 2` read tries) and a collection; boxing a closure uses
//! the global allocator.
//!
//! perdure's deviations from the seed (each with its reason), the
//! persistence argument, helping and closure lifetimes, the volatile
//! footprint and the list of checks are told in `docs/redo-ptm.md`.

mod config;
mod core;
mod front;
mod open;
mod read;
pub(crate) mod state;
mod tx;
mod update;
mod variant;
mod wordset;

pub use self::config::{Config, RedoStats, Variant};
pub use self::core::RedoPtm;
pub use self::front::Handle;
pub use self::open::{MAGIC, VERSION};
pub(crate) use self::tx::update_tx_in_place;
pub use self::tx::{ReadTx, Tx};
pub use self::variant::{RedoOptPtm, RedoTimedPtm};
