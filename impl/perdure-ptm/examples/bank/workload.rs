//! The bank workload of the `bank` example, shared with
//! `tests/example_bank_kill.rs` (which includes this file by path).
//!
//! The region holds, from root slots:
//!
//! | root | what |
//! | --- | --- |
//! | [`ROOT_ACCOUNTS`] | an array of `accounts` balances (`u64`), each created with [`INITIAL`] |
//! | [`ROOT_COUNTS`] | an array of one committed-transfer counter per thread id |
//! | [`ROOT_TOTAL`] | the number of committed transfers, all threads |
//! | [`ROOT_META`] | the number of accounts (fixed when the bank is created) |
//!
//! A transfer moves an amount between two accounts and bumps its thread's
//! counter and the total, all in one Redo-PTM update transaction. So at every
//! instant, and after any crash, the balances add up to
//! `accounts × INITIAL` and the per-thread counters add up to the total. A
//! transfer that returned is durable: the total after a crash is at least
//! every value a transfer returned before it.

#![allow(dead_code)]

use perdure_pm::{Backend, Pool};
use perdure_ptm::redo::{Config, Handle, RedoPtm};
use perdure_ptm::{PVar, PtmError, Transaction, TxRead};

/// The pool's layout name.
pub const LAYOUT: &str = "perdure-bank";
/// Root slot of the balances.
pub const ROOT_ACCOUNTS: usize = 0;
/// Root slot of the per-thread counters.
pub const ROOT_COUNTS: usize = 1;
/// Root slot of the total.
pub const ROOT_TOTAL: usize = 2;
/// Root slot of the number of accounts.
pub const ROOT_META: usize = 3;
/// Every account's balance at creation.
pub const INITIAL: u64 = 1_000;

/// What [`audit`] finds, read in one read-only transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Audit {
    /// The total of committed transfers.
    pub total: u64,
    /// Whether the invariants hold in that snapshot: the balances add up to
    /// `accounts × INITIAL` and the per-thread counters add up to `total`.
    pub consistent: bool,
}

/// The Redo-PTM configuration the example uses for `threads` threads.
pub fn config(threads: usize) -> Config {
    Config {
        threads,
        ..Config::small()
    }
}

/// Creates the bank's arrays in a fresh PTM (a no-op if they exist).
/// Returns the number of accounts the bank has.
pub fn ensure_bank<B: Backend>(h: &Handle<'_, B>, accounts: u64) -> Result<u64, PtmError> {
    let ptm = h.ptm();
    let threads = ptm.threads() as u64;
    let made = h.update_tx(move |tx| {
        if tx.root(ROOT_META) != 0 {
            return tx.root(ROOT_META);
        }
        let Ok(acc) = tx.alloc(8 * accounts) else {
            return 0;
        };
        let Ok(cnt) = tx.alloc_zeroed(8 * threads) else {
            let _ = tx.free(acc);
            return 0;
        };
        for i in 0..accounts {
            tx.store(acc + 8 * i, INITIAL);
        }
        tx.set_root(ROOT_ACCOUNTS, acc);
        tx.set_root(ROOT_COUNTS, cnt);
        tx.set_root(ROOT_TOTAL, 0);
        tx.set_root(ROOT_META, accounts);
        accounts
    });
    if made == 0 {
        return Err(PtmError::Config(format!(
            "the region ({} bytes) cannot hold {accounts} accounts and {threads} counters; \
             use a larger pool or fewer accounts",
            ptm.region_len()
        )));
    }
    Ok(made)
}

/// Moves `amount` (capped at the balance) from account `from` to `to` and
/// counts the transfer for the handle's thread id; returns the total after
/// it. Once this returns, the transfer is durable.
pub fn transfer<B: Backend>(h: &Handle<'_, B>, from: u64, to: u64, amount: u64) -> u64 {
    let thread = h.tid() as u64;
    h.update_tx(move |tx| {
        let n = tx.root(ROOT_META);
        let acc = tx.root(ROOT_ACCOUNTS);
        let (a, b) = (
            PVar::<u64>::at(acc + 8 * (from % n)),
            PVar::<u64>::at(acc + 8 * (to % n)),
        );
        let moved = amount.min(tx.get(a));
        tx.set(a, tx.get(a) - moved);
        tx.set(b, tx.get(b) + moved);
        let mine = PVar::<u64>::at(tx.root(ROOT_COUNTS) + 8 * thread);
        tx.set(mine, tx.get(mine) + 1);
        let total = tx.root(ROOT_TOTAL) + 1;
        tx.set_root(ROOT_TOTAL, total);
        total
    })
}

/// Reads the whole bank in one read-only transaction (a snapshot, even
/// while other threads transfer).
pub fn audit<B: Backend>(h: &Handle<'_, B>) -> Audit {
    let threads = h.ptm().threads() as u64;
    // A transaction returns one word: the total in the low 63 bits, whether
    // the snapshot is consistent in the top bit.
    let word = h.read_tx(move |tx| {
        let n = tx.root(ROOT_META);
        let acc = tx.root(ROOT_ACCOUNTS);
        let cnt = tx.root(ROOT_COUNTS);
        let total = tx.root(ROOT_TOTAL);
        let balance: u64 = (0..n).map(|i| tx.load(acc + 8 * i)).sum();
        let counts: u64 = (0..threads).map(|i| tx.load(cnt + 8 * i)).sum();
        let ok = n != 0 && balance == n * INITIAL && counts == total;
        total | (u64::from(ok) << 63)
    });
    Audit {
        total: word & !(1 << 63),
        consistent: word >> 63 == 1,
    }
}

/// Opens the bank's pool file, or creates it (`size` bytes) if it does not
/// exist, and runs Redo-PTM's null recovery.
pub fn open_or_create<B: Backend + Default>(
    path: &std::path::Path,
    size: u64,
    threads: usize,
) -> Result<RedoPtm<B>, Box<dyn std::error::Error>> {
    let pool: Pool<B> = if path.exists() {
        Pool::open(path, LAYOUT)?
    } else {
        Pool::create(path, LAYOUT, size)?
    };
    Ok(RedoPtm::open_or_create(pool, &config(threads))?)
}
