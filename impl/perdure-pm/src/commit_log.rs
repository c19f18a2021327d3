//! A persistent commit-marker log: the tutorial of how to write a durable
//! object against the [`Backend`] trait, and the small example every
//! checking tool of perdure is first shown on.
//!
//! ## The algorithm
//!
//! The log is an array of one-cache-line records and a *commit word* that
//! counts the records that exist. Appending record `i`:
//!
//! ```text
//! 1. write record i (sequence number, six payload words, checksum)
//! 2. pwb(record i); pfence          -- the record is durable before …
//! 3. commit = i + 1                 -- … the commit word that makes it visible
//! 4. pwb(commit); psync             -- the append is durable: acknowledge
//! ```
//!
//! Crash invariant (stated and proved on the abstract model in
//! `proofs/theories/Core/CommitLog.v` and checked by `specs/tutorial/CommitLog.tla`):
//! *every record below the persisted commit word is persisted and intact*.
//! Step 2's fence is what makes it hold — a crash may otherwise persist the
//! commit word (step 3) but not the record. [`CommitLog::without_record_fence`]
//! makes a handle with that fence deliberately missing, so that the crash
//! explorer can show how it finds the bug.
//!
//! Appends from several threads take a ticket (`reserved`, a fetch-add) and
//! commit in ticket order: a thread whose record is durable waits until the
//! commit word reaches its ticket. The linearization point of an append is
//! its commit store. Appends are blocking (a thread waits for its
//! predecessors); reads are wait-free.
//!
//! Recovery is null: the persisted commit word says what exists. Records at
//! or beyond it (reserved but not committed when the crash came) are
//! ignored and overwritten by later appends.
//!
//! ## Layout (at the log's base offset, 64-byte aligned)
//!
//! | offset | content |
//! | --- | --- |
//! | 0 | commit word: number of committed records |
//! | 64 | reserved word: tickets handed out (volatile meaning; reset on open) |
//! | 128 + 64·i | record i: `i`, six payload words, checksum |

use crate::backend::Backend;
use crate::pool::Pool;
use crate::sync::atomic::Ordering;

const OFF_COMMIT: u64 = 0;
const OFF_RESERVED: u64 = 64;
const OFF_RECORDS: u64 = 128;
/// Bytes per record (one cache line).
pub const RECORD: u64 = 64;
/// Payload words per record.
pub const PAYLOAD_WORDS: usize = 6;

/// Errors of the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// No room for another record.
    #[error("the log is full ({capacity} records)")]
    Full {
        /// Records the log can hold.
        capacity: u64,
    },
    /// The range given for the log is not usable.
    #[error("invalid log range: {0}")]
    BadRange(String),
    /// A committed record fails its checksum or sequence check.
    #[error("record {index} is torn: {reason}")]
    Torn {
        /// The record.
        index: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// The persisted commit word exceeds the capacity.
    #[error("commit word {commit} exceeds the capacity {capacity}: the log is corrupt")]
    Corrupt {
        /// The commit word.
        commit: u64,
        /// The capacity.
        capacity: u64,
    },
}

/// A persistent commit-marker log in `[base, base + len)` of a pool.
#[derive(Debug)]
pub struct CommitLog<'p, B: Backend> {
    pool: &'p Pool<B>,
    base: u64,
    capacity: u64,
    fence_after_record: bool,
}

fn checksum(index: u64, payload: &[u64; PAYLOAD_WORDS]) -> u64 {
    payload
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64 ^ index, |h, x| {
            (h ^ x).wrapping_mul(0x100_0000_01b3)
        })
}

impl<'p, B: Backend> CommitLog<'p, B> {
    /// Opens (or, on zeroed memory, starts) the log in `[base, base + len)`
    /// and runs its recovery, which is null but for resetting the ticket
    /// counter to the persisted commit word. Call once per run; other
    /// handles [`attach`](CommitLog::attach).
    pub fn open(pool: &'p Pool<B>, base: u64, len: u64) -> Result<Self, LogError> {
        let log = Self::attach(pool, base, len)?;
        let commit = log.len();
        if commit > log.capacity {
            return Err(LogError::Corrupt {
                commit,
                capacity: log.capacity,
            });
        }
        log.word(OFF_RESERVED).store(commit, Ordering::Release);
        Ok(log)
    }

    /// Another handle on a log already opened in this run (no recovery).
    pub fn attach(pool: &'p Pool<B>, base: u64, len: u64) -> Result<Self, LogError> {
        if base % RECORD != 0 || len < OFF_RECORDS + RECORD {
            return Err(LogError::BadRange(format!(
                "base {base:#x} must be 64-aligned and len {len} at least {}",
                OFF_RECORDS + RECORD
            )));
        }
        pool.check_range(base, len, RECORD)
            .map_err(|e| LogError::BadRange(e.to_string()))?;
        Ok(CommitLog {
            pool,
            base,
            capacity: (len - OFF_RECORDS) / RECORD,
            fence_after_record: true,
        })
    }

    /// This handle with step 2's `pfence` missing — a deliberate bug for the
    /// checking tools to find. Never use it for data.
    pub fn without_record_fence(mut self) -> Self {
        self.fence_after_record = false;
        self
    }

    fn word(&self, off: u64) -> crate::pool::PmWord<'p, B> {
        match self.pool.word(self.base + off) {
            Ok(w) => w,
            Err(e) => unreachable!("log offsets are validated at open: {e}"),
        }
    }

    /// Records the log can hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Committed records.
    pub fn len(&self) -> u64 {
        self.word(OFF_COMMIT).load(Ordering::Acquire)
    }

    /// Whether no record is committed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a record and returns its index once it is durable.
    pub fn append(&self, payload: &[u64; PAYLOAD_WORDS]) -> Result<u64, LogError> {
        let i = self.word(OFF_RESERVED).fetch_add(1, Ordering::AcqRel);
        if i >= self.capacity {
            return Err(LogError::Full {
                capacity: self.capacity,
            });
        }
        // 1. write record i
        let at = OFF_RECORDS + i * RECORD;
        self.word(at).store(i, Ordering::Relaxed);
        for (k, w) in payload.iter().enumerate() {
            self.word(at + 8 * (k as u64 + 1))
                .store(*w, Ordering::Relaxed);
        }
        self.word(at + 56)
            .store(checksum(i, payload), Ordering::Relaxed);
        // 2. the record is durable before the commit word can be
        self.pool.pwb(self.base + at, RECORD);
        if self.fence_after_record {
            self.pool.pfence();
        }
        // 3. commit, in ticket order
        let commit = self.word(OFF_COMMIT);
        while commit.load(Ordering::Acquire) != i {
            crate::sync::spin_loop();
        }
        commit.store(i + 1, Ordering::Release);
        // 4. durable: the caller may acknowledge
        self.pool.pwb(self.base + OFF_COMMIT, 8);
        self.pool.psync();
        Ok(i)
    }

    /// Reads committed record `index`, checking its sequence number and
    /// checksum.
    pub fn read(&self, index: u64) -> Result<[u64; PAYLOAD_WORDS], LogError> {
        let at = OFF_RECORDS + index * RECORD;
        if index >= self.capacity {
            return Err(LogError::Torn {
                index,
                reason: "beyond the capacity",
            });
        }
        let mut payload = [0u64; PAYLOAD_WORDS];
        for (k, w) in payload.iter_mut().enumerate() {
            *w = self.word(at + 8 * (k as u64 + 1)).load(Ordering::Acquire);
        }
        if self.word(at).load(Ordering::Acquire) != index {
            return Err(LogError::Torn {
                index,
                reason: "wrong sequence number",
            });
        }
        if self.word(at + 56).load(Ordering::Acquire) != checksum(index, &payload) {
            return Err(LogError::Torn {
                index,
                reason: "checksum mismatch",
            });
        }
        Ok(payload)
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;
    use crate::NoFlush;

    #[test]
    fn append_read_reopen() {
        let p = Pool::volatile("log", 64 << 10, NoFlush).unwrap();
        let base = p.data_offset();
        let log = CommitLog::open(&p, base, 8192).unwrap();
        assert!(log.is_empty());
        for i in 0..10u64 {
            assert_eq!(log.append(&[i; PAYLOAD_WORDS]).unwrap(), i);
        }
        let log = CommitLog::open(&p, base, 8192).unwrap();
        assert_eq!(log.len(), 10);
        assert_eq!(log.read(3).unwrap(), [3; PAYLOAD_WORDS]);
        assert!(
            matches!(log.read(10), Err(LogError::Torn { .. })),
            "never written"
        );
        let cap = log.capacity();
        for i in 10..cap {
            log.append(&[i; PAYLOAD_WORDS]).unwrap();
        }
        assert!(matches!(
            log.append(&[0; PAYLOAD_WORDS]),
            Err(LogError::Full { .. })
        ));
        assert!(CommitLog::open(&p, base + 8, 8192).is_err());
    }

    #[test]
    fn concurrent_appends_commit_in_ticket_order() {
        let p = Pool::volatile("log", 1 << 20, NoFlush).unwrap();
        let log = CommitLog::open(&p, p.data_offset(), 512 << 10).unwrap();
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let log = &log;
                s.spawn(move || {
                    for k in 0..500u64 {
                        log.append(&[t, k, 0, 0, 0, 0]).unwrap();
                    }
                });
            }
        });
        assert_eq!(log.len(), 1500);
        let mut per_thread = [0u64; 3];
        for i in 0..1500 {
            let r = log.read(i).unwrap();
            assert_eq!(
                r[1], per_thread[r[0] as usize],
                "a thread's records in order"
            );
            per_thread[r[0] as usize] += 1;
        }
    }
}
