//! One-line metadata headers, written crash-atomically: the shared
//! mechanism behind the heap's and the Memento runtime's headers.
//!
//! A header is one cache line at a 64-aligned offset: word 0 a magic, words
//! 1–6 fields, word 7 a CRC-32 of words 0–6. [`write()`] stores the fields and
//! the checksum, makes them durable (`pwb`, `pfence`), and only then stores
//! the magic (`pwb`, `psync`): a crash at any point leaves either no header
//! (no magic) or a whole one. [`read()`] returns the words with a typed verdict,
//! so each owner maps it to its own error.

use crate::pool::Pool;
use crate::sync::atomic::Ordering;
use crate::{Backend, PoolError};

/// Words of a header before its checksum.
pub const WORDS: usize = 7;
const CHECK: u64 = 8 * WORDS as u64;

/// What [`read`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A whole header: the words, magic first.
    Valid([u64; WORDS]),
    /// Word 0 is not the expected magic (what it holds).
    NoMagic(u64),
    /// The magic is there but the checksum does not match (the stored one).
    BadChecksum(u64),
}

/// A [`Verdict::NoMagic`] as an error: no object of the kind looked for at
/// `base`. Every owner of a header reports it with this one message, in its
/// own error that adds what to do instead ("create one first").
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no {what} at offset {base:#x} (found {found:#018x} where its magic should be)")]
pub struct NotFormatted {
    /// The kind of object looked for ("heap", "RELAX space", ...).
    pub what: &'static str,
    /// The offset of its header.
    pub base: u64,
    /// The word found where the magic belongs.
    pub found: u64,
}

impl NotFormatted {
    /// No `what` at `base`, where `found` stands instead of its magic.
    pub fn new(what: &'static str, base: u64, found: u64) -> Self {
        NotFormatted { what, base, found }
    }
}

/// The checksum of a header's words.
pub fn checksum(words: &[u64; WORDS]) -> u64 {
    let mut h = crc32fast::Hasher::new();
    for w in words {
        h.update(&w.to_le_bytes());
    }
    u64::from(h.finalize())
}

/// Writes `words` (magic first) at `base`, the magic last (see the module
/// docs).
pub fn write<B: Backend>(pool: &Pool<B>, base: u64, words: &[u64; WORDS]) -> Result<(), PoolError> {
    pool.check_range(base, 64, 64)?;
    for (i, w) in words.iter().enumerate().skip(1) {
        pool.word(base + 8 * i as u64)?.store(*w, Ordering::Relaxed);
    }
    pool.word(base + CHECK)?
        .store(checksum(words), Ordering::Relaxed);
    pool.pwb(base, 64);
    pool.pfence();
    pool.word(base)?.store(words[0], Ordering::Release);
    pool.pwb(base, 8);
    pool.psync();
    Ok(())
}

/// Reads the header at `base`, expecting `magic`.
pub fn read<B: Backend>(pool: &Pool<B>, base: u64, magic: u64) -> Result<Verdict, PoolError> {
    pool.check_range(base, 64, 64)?;
    let mut words = [0u64; WORDS];
    for (i, w) in words.iter_mut().enumerate() {
        *w = pool.word(base + 8 * i as u64)?.load(Ordering::Acquire);
    }
    if words[0] != magic {
        return Ok(Verdict::NoMagic(words[0]));
    }
    let check = pool.word(base + CHECK)?.load(Ordering::Acquire);
    Ok(if check == checksum(&words) {
        Verdict::Valid(words)
    } else {
        Verdict::BadChecksum(check)
    })
}
