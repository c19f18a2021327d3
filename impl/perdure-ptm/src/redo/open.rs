//! Creating and opening a Redo-PTM pool: the layout Redo-PTM shares with
//! CX-PTM ([`crate::layout`], `N + 1` replicas; seed §5) and null
//! recovery (§5: "upon restart, the replica designated by `curComb` is the
//! consistent state"): the designated replica's `head` becomes a fresh
//! initial state, every other replica is invalid, nothing is written.

use super::config::Config;
use super::core::RedoPtm;
use crate::error::PtmError;
use crate::layout::{self, Kind};
use perdure_pm::{Backend, Pool};

/// Magic of a Redo-PTM header.
pub const MAGIC: u64 = u64::from_le_bytes(*b"PDREDO01");
/// The format version this build writes and reads.
pub use crate::layout::VERSION;

const KIND: Kind = Kind {
    name: "Redo-PTM",
    magic: MAGIC,
    replicas: |n| n + 1,
};

impl<B: Backend> RedoPtm<B> {
    /// Formats `pool` for Redo-PTM with `config.threads` threads (`N + 1`
    /// replicas splitting the pool) and opens it. Whatever the pool held in
    /// its data area is discarded. Crash-atomic: the header is written last,
    /// so a crash during `create` leaves a pool [`RedoPtm::open`] reports as
    /// not formatted.
    pub fn create(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        layout::create_empty(&pool, &KIND, config.threads, config)?;
        RedoPtm::open(pool, config)
    }

    /// Opens the Redo-PTM in `pool` (null recovery, see the module docs).
    /// The thread count comes from the pool; the rest of `config` sizes the
    /// volatile structures.
    pub fn open(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        let (g, cur, config) = layout::open_with_config(&pool, &KIND, 0, config)?;
        Ok(RedoPtm::build(pool, config, &g, cur))
    }

    /// Opens the Redo-PTM in `pool`, creating one if the pool holds none.
    /// "None" is a 0 word where the header's magic goes (a fresh pool, or a
    /// create a crash cut off); any other word is opened and, if it is not
    /// the magic, reported: a damaged header is never formatted over.
    pub fn open_or_create(pool: Pool<B>, config: &Config) -> Result<RedoPtm<B>, PtmError> {
        layout::open_or_create(
            pool,
            &KIND,
            |pool| RedoPtm::open(pool, config),
            |pool| RedoPtm::create(pool, config),
        )
    }
}
