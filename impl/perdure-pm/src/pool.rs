//! Pools: persistent memory in a mapped file.
//!
//! A pool is a file of fixed size holding a [header](crate::header), a table
//! of root slots and a data area. It is mapped with
//! `MAP_SHARED_VALIDATE | MAP_SYNC` when the file system supports DAX (real
//! persistent memory), else with a plain `MAP_SHARED` mapping through the
//! page cache; [`Pool::mode`] reports which. An advisory `flock` held for the
//! pool's lifetime refuses a second opener, in this process or another.
//!
//! Everything in the data area is addressed by *offset* from the pool start,
//! so persistent pointers stay valid wherever the pool is mapped. Shared
//! words are reached with [`Pool::word`], which checks the offset and hands
//! out a [`crate::sync`] atomic: a real `AtomicU64` over the mapping
//! normally, and an element of an in-memory word array under loom and
//! shuttle (which cannot see raw mapped memory). Persistence goes through the
//! pool's [`Backend`]: [`Pool::pwb`], [`Pool::pfence`], [`Pool::psync`].
//!
//! Creation is crash-atomic: the new file is written and synced under a
//! temporary name and then linked to its final name, so a crash during
//! `create` leaves either no pool or a complete one.

use crate::backend::Backend;
use crate::error::PoolError;
use crate::header::{Header, HEADER_SIZE, OFF_INCARNATION, OFF_ROOTS, ROOT_COUNT};
use crate::sync::atomic::{AtomicU64, Ordering};
use std::path::{Path, PathBuf};

/// How a pool's memory is mapped, and so what its flushes reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapMode {
    /// `MAP_SHARED_VALIDATE | MAP_SYNC` on a DAX file system: cache-line
    /// flushes reach persistent memory, no `msync` needed.
    Sync,
    /// `MAP_SHARED` through the page cache: durable against power loss only
    /// via `msync` (the [`crate::Msync`] backend); cache-line flushes reach
    /// the page cache, which survives a process crash.
    Shared,
    /// Anonymous memory: a volatile pool for tests and benchmarks.
    Anonymous,
    /// The in-memory word array used under loom and shuttle.
    Model,
}

impl MapMode {
    /// A short description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            MapMode::Sync => "MAP_SYNC (DAX: flushes reach persistent memory)",
            MapMode::Shared => "MAP_SHARED (page cache: power-loss durable only with msync)",
            MapMode::Anonymous => "anonymous (volatile)",
            MapMode::Model => "model word array (loom/shuttle)",
        }
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod memory {
    use super::MapMode;
    use std::ptr::NonNull;

    /// A mapping: the raw bytes of a pool.
    pub(super) struct Memory {
        base: NonNull<u8>,
        len: usize,
        file_backed: bool,
    }

    // SAFETY: the mapping is plain memory owned by the pool; every access
    // from safe code goes through atomics (see Pool::word/read_bytes/
    // write_bytes), so sharing it between threads cannot cause data races.
    unsafe impl Send for Memory {}
    // SAFETY: as above.
    unsafe impl Sync for Memory {}

    impl Memory {
        /// Maps `len` bytes of `fd` shared, trying `MAP_SYNC` first.
        pub(super) fn map_file(fd: i32, len: usize) -> std::io::Result<(Memory, MapMode)> {
            let prot = libc::PROT_READ | libc::PROT_WRITE;
            // SAFETY: a fresh mapping at a kernel-chosen address; no existing
            // memory is affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    prot,
                    libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC,
                    fd,
                    0,
                )
            };
            let (p, mode) = if p == libc::MAP_FAILED {
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => {
                        // SAFETY: as above.
                        let q = unsafe {
                            libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0)
                        };
                        if q == libc::MAP_FAILED {
                            return Err(std::io::Error::last_os_error());
                        }
                        (q, MapMode::Shared)
                    }
                    _ => return Err(err),
                }
            } else {
                (p, MapMode::Sync)
            };
            let base = NonNull::new(p.cast::<u8>())
                .ok_or_else(|| std::io::Error::other("mmap returned null"))?;
            Ok((
                Memory {
                    base,
                    len,
                    file_backed: true,
                },
                mode,
            ))
        }

        /// Anonymous zeroed memory.
        pub(super) fn anonymous(len: usize) -> std::io::Result<Memory> {
            // SAFETY: a fresh private anonymous mapping; nothing else affected.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let base = NonNull::new(p.cast::<u8>())
                .ok_or_else(|| std::io::Error::other("mmap returned null"))?;
            Ok(Memory {
                base,
                len,
                file_backed: false,
            })
        }

        pub(super) fn base(&self) -> *mut u8 {
            self.base.as_ptr()
        }

        /// The word at `off` (a plain acquire load in this build; the
        /// model checkers' memory reads it outside the model).
        ///
        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn load_unscheduled(&self, off: usize) -> u64 {
            // SAFETY: the caller's contract is word's.
            unsafe { self.word(off) }.load(crate::sync::atomic::Ordering::Acquire)
        }

        /// Stores `v` at `off` (a plain relaxed store in this build).
        ///
        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn store_unscheduled(&self, off: usize, v: u64) {
            // SAFETY: the caller's contract is word's.
            unsafe { self.word(off) }.store(v, crate::sync::atomic::Ordering::Relaxed)
        }

        /// The atomic word at `off`.
        ///
        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn word(&self, off: usize) -> &crate::sync::atomic::AtomicU64 {
            // SAFETY: in bounds and aligned per the caller; the mapping is
            // page-aligned, so the address is 8-aligned; AtomicU64 has the
            // layout of u64 and the memory lives as long as `self`.
            unsafe {
                &*self
                    .base
                    .as_ptr()
                    .add(off)
                    .cast::<crate::sync::atomic::AtomicU64>()
            }
        }

        /// The two atomic words at `off`, as one 16-byte location.
        ///
        /// # Safety
        /// `off` must be 16-aligned and `off + 16 <= len`.
        pub(super) unsafe fn dword(&self, off: usize) -> &[crate::sync::atomic::AtomicU64; 2] {
            // SAFETY: in bounds and 16-aligned per the caller (the mapping
            // is page-aligned); the two words are consecutive, so they form
            // a `[AtomicU64; 2]` living as long as `self`.
            unsafe {
                &*self
                    .base
                    .as_ptr()
                    .add(off)
                    .cast::<[crate::sync::atomic::AtomicU64; 2]>()
            }
        }

        /// Writes the whole mapping back to the file and waits for it.
        pub(super) fn sync_all(&self) -> std::io::Result<()> {
            if !self.file_backed {
                return Ok(());
            }
            // SAFETY: the range is exactly our live mapping.
            let rc = unsafe { libc::msync(self.base.as_ptr().cast(), self.len, libc::MS_SYNC) };
            if rc == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        }
    }

    impl Drop for Memory {
        fn drop(&mut self) {
            if let Err(e) = self.sync_all() {
                eprintln!("perdure: msync while closing a pool failed: {e}; recent writes may not be durable");
            }
            // SAFETY: unmapping exactly the mapping we created; no reference
            // into it outlives `self` (they borrow the pool).
            unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(any(perdure_loom, perdure_shuttle))]
mod memory {
    use crate::sync::atomic::AtomicU64;

    /// The model checkers' stand-in for a mapping: an array of facade atomics.
    pub(super) struct Memory {
        words: Box<[AtomicU64]>,
    }

    impl Memory {
        pub(super) fn anonymous(len: usize) -> std::io::Result<Memory> {
            Ok(Memory {
                words: (0..len / 8).map(|_| AtomicU64::new(0)).collect(),
            })
        }

        pub(super) fn base(&self) -> *mut u8 {
            self.words.as_ptr() as *mut u8
        }

        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn word(&self, off: usize) -> &AtomicU64 {
            &self.words[off / 8]
        }

        /// The word at `off`, read outside the model checker where it can
        /// be (shuttle: no scheduling point, no store buffer); loom reads
        /// through its model.
        ///
        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn load_unscheduled(&self, off: usize) -> u64 {
            #[cfg(perdure_shuttle)]
            let v = self.words[off / 8].load_unmodelled();
            #[cfg(not(perdure_shuttle))]
            let v = self.words[off / 8].load(crate::sync::atomic::Ordering::Acquire);
            v
        }

        /// Stores `v` at `off` outside the model checker where it can be,
        /// as [`Memory::load_unscheduled`] reads.
        ///
        /// # Safety
        /// `off` must be 8-aligned and `off + 8 <= len`.
        pub(super) unsafe fn store_unscheduled(&self, off: usize, v: u64) {
            #[cfg(perdure_shuttle)]
            self.words[off / 8].store_unmodelled(v);
            #[cfg(not(perdure_shuttle))]
            self.words[off / 8].store(v, crate::sync::atomic::Ordering::Relaxed);
        }

        /// The two words at `off` (the model's atomics are not 8 bytes
        /// each, so this indexes the array rather than casting a byte
        /// address).
        ///
        /// # Safety
        /// `off` must be 16-aligned and `off + 16 <= len`.
        pub(super) unsafe fn dword(&self, off: usize) -> &[AtomicU64; 2] {
            let i = off / 8;
            match <&[AtomicU64; 2]>::try_from(&self.words[i..i + 2]) {
                Ok(pair) => pair,
                Err(_) => unreachable!("a two-element slice is a [_; 2]"),
            }
        }

        pub(super) fn sync_all(&self) -> std::io::Result<()> {
            Ok(())
        }
    }
}

use memory::Memory;

/// A persistent-memory pool using durability backend `B`.
pub struct Pool<B: Backend> {
    mem: Memory,
    backend: B,
    mode: MapMode,
    header: Header,
    path: Option<PathBuf>,
    /// Holds the advisory lock for as long as the pool is open.
    #[cfg(not(any(perdure_loom, perdure_shuttle)))]
    _file: Option<std::fs::File>,
}

impl<B: Backend> std::fmt::Debug for Pool<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("path", &self.path)
            .field("size", &self.header.pool_size)
            .field("layout", &self.header.layout)
            .field("mode", &self.mode)
            .field("backend", &self.backend.name())
            .finish()
    }
}

/// Splits the byte range `[off, off + len)` into pieces that each lie in one
/// aligned 8-byte word: `(word offset, first byte in the word, position in
/// the caller's buffer, bytes)`.
fn word_pieces(off: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        if pos >= len {
            return None;
        }
        let at = off + pos as u64;
        let word_off = at & !7;
        let skip = (at - word_off) as usize;
        let take = (8 - skip).min(len - pos);
        let piece = (word_off, skip, pos, take);
        pos += take;
        Some(piece)
    })
}

fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl<B: Backend> Pool<B> {
    /// A volatile pool in anonymous memory with a valid header: for tests,
    /// benchmarks and the model checkers.
    pub fn volatile(layout: &str, size: u64, backend: B) -> Result<Pool<B>, PoolError> {
        let header = Header::new(size, layout, random_id(), now_unix())?;
        let mem = Memory::anonymous(size as usize).map_err(|source| PoolError::MapFailed {
            path: PathBuf::from("<anonymous>"),
            size,
            source,
        })?;
        let mode = if cfg!(any(perdure_loom, perdure_shuttle)) {
            MapMode::Model
        } else {
            MapMode::Anonymous
        };
        let pool = Pool {
            mem,
            backend,
            mode,
            header,
            path: None,
            #[cfg(not(any(perdure_loom, perdure_shuttle)))]
            _file: None,
        };
        pool.backend
            .attach(size, &mut || vec![0; (size / 8) as usize]);
        pool.write_bytes_unchecked(0, &pool.header.encode());
        pool.word_unchecked(OFF_INCARNATION)
            .store(1, Ordering::Release);
        // Durable like a created file's header, so crash images start from it.
        pool.pwb(0, HEADER_SIZE);
        pool.psync();
        Ok(pool)
    }

    /// Starts a new incarnation, durably, as opening a pool file does: what
    /// a previous incarnation claimed (heap thread slots) is free again. For
    /// pools built from crash images ([`Pool::volatile_from_words`]), which
    /// keep the image's incarnation.
    pub fn reincarnate(&self) {
        let w = self.word_unchecked(OFF_INCARNATION);
        w.store(w.load(Ordering::Acquire) + 1, Ordering::Release);
        self.pwb(OFF_INCARNATION, 8);
        self.psync();
    }

    /// The durability backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Whether a 16-byte CAS of this pool is one event to 8-byte accesses of
    /// the same words ([`Backend::dword_cas_atomic_with_words`]); where not,
    /// read a pair with [`PmDword::load`], not two 8-byte loads.
    pub fn dword_cas_atomic_with_words(&self) -> bool {
        self.backend.dword_cas_atomic_with_words()
    }

    /// How the pool is mapped.
    pub fn mode(&self) -> MapMode {
        self.mode
    }

    /// The validated header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The pool's file, if it has one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Total size in bytes.
    pub fn size(&self) -> u64 {
        self.header.pool_size
    }

    /// Offset of the first byte of the data area.
    pub fn data_offset(&self) -> u64 {
        self.header.data_offset
    }

    /// How many times the pool has been opened (1 after creation's first
    /// open). Code that must tell "before the last crash" from "since" (e.g.
    /// thread-slot ownership in [`crate::heap`]) tags state with it.
    pub fn incarnation(&self) -> u64 {
        self.word_unchecked(OFF_INCARNATION).load(Ordering::Acquire)
    }

    /// Checks that `[off, off + len)` lies in the data area and `off` is a
    /// multiple of `align` (a power of two).
    pub fn check_range(&self, off: u64, len: u64, align: u64) -> Result<(), PoolError> {
        let start = self.header.data_offset;
        let end = self.header.pool_size;
        let fits = off >= start && off.checked_add(len).is_some_and(|e| e <= end);
        if !fits {
            return Err(PoolError::OffsetOutOfRange {
                offset: off,
                len,
                start,
                end,
            });
        }
        if align > 1 && off % align != 0 {
            return Err(PoolError::Misaligned { offset: off, align });
        }
        Ok(())
    }

    /// The shared 8-byte word at data-area offset `off` (8-aligned).
    pub fn word(&self, off: u64) -> Result<PmWord<'_, B>, PoolError> {
        self.check_range(off, 8, 8)?;
        Ok(self.word_unchecked(off))
    }

    /// The `len` bytes at data-area offset `off` (both multiples of 8), as a
    /// [`PmRange`]: checked here once, so that each word of it costs one
    /// bounds test after that. For code that validates a region when it
    /// opens it and then accesses its words on a hot path (a PTM's replica).
    pub fn range(&self, off: u64, len: u64) -> Result<PmRange<'_, B>, PoolError> {
        self.check_range(off, len, 8)?;
        if len % 8 != 0 {
            return Err(PoolError::Misaligned {
                offset: off + len,
                align: 8,
            });
        }
        Ok(PmRange {
            pool: self,
            base: off,
            len,
        })
    }

    /// The 16-byte location at data-area offset `off` (16-aligned), for
    /// double-width compare-and-swap.
    pub fn dword(&self, off: u64) -> Result<PmDword<'_, B>, PoolError> {
        self.check_range(off, 16, 16)?;
        // SAFETY: in range and 16-aligned (checked).
        let words = unsafe { self.mem.dword(off as usize) };
        Ok(PmLoc {
            cell: words,
            off,
            backend: &self.backend,
        })
    }

    /// A word anywhere in the pool, header included; `off` is trusted.
    pub(crate) fn word_unchecked(&self, off: u64) -> PmWord<'_, B> {
        debug_assert!(off % 8 == 0 && off + 8 <= self.header.pool_size);
        PmLoc {
            // SAFETY: callers pass constant header offsets, offsets
            // validated by check_range, or offsets inside a PmRange (whose
            // bounds check_range validated); all are 8-aligned and inside
            // the mapping.
            cell: unsafe { self.mem.word(off as usize) },
            off,
            backend: &self.backend,
        }
    }

    /// A copy of the whole pool's words as they are now, read without going
    /// through the backend (a crash-image snapshot, not a program access).
    pub fn snapshot_words(&self) -> Vec<u64> {
        (0..self.header.pool_size / 8)
            // SAFETY: every 8-aligned offset below the pool size is mapped.
            .map(|i| unsafe { self.mem.load_unscheduled(i as usize * 8) })
            .collect()
    }

    /// A volatile pool holding exactly `words` (a [`Pool::snapshot_words`]
    /// of a pool, possibly modified into a crash image), with `backend`.
    /// The header in `words` is validated like a file's.
    pub fn volatile_from_words(words: &[u64], backend: B) -> Result<Pool<B>, PoolError> {
        let head = &words[..words.len().min((HEADER_SIZE / 8) as usize)];
        let pool = Self::volatile_from(head, words.len(), backend, |mem| {
            for (i, w) in words.iter().enumerate() {
                if *w != 0 {
                    // SAFETY: i * 8 < pool size (the header's size equals the
                    // snapshot's, checked by decode).
                    unsafe { mem.store_unscheduled(i * 8, *w) };
                }
            }
        })?;
        let size = pool.header.pool_size;
        pool.backend.attach(size, &mut || words.to_vec());
        Ok(pool)
    }

    /// [`Pool::volatile_from_words`] of a simulator's crash image
    /// ([`crate::sim::CrashPoint::image`]) without materialising its words:
    /// only the image's written pages are copied, and a [`crate::Sim`]
    /// backend shares them.
    pub fn volatile_from_image(
        image: &crate::pages::CrashImage,
        backend: B,
    ) -> Result<Pool<B>, PoolError> {
        let head = image.head((HEADER_SIZE / 8) as usize);
        let pool = Self::volatile_from(&head, image.len(), backend, |mem| {
            image.for_each_nonzero(|i, w| {
                // SAFETY: i * 8 < pool size (the header's size equals the
                // image's, checked by decode).
                unsafe { mem.store_unscheduled(i * 8, w) };
            });
        })?;
        let size = pool.header.pool_size;
        pool.backend.attach_image(size, image);
        Ok(pool)
    }

    /// A volatile pool of `len` words whose first words are `head` (the
    /// header, validated like a file's), its memory written by `fill`.
    fn volatile_from(
        head: &[u64],
        len: usize,
        backend: B,
        fill: impl FnOnce(&Memory),
    ) -> Result<Pool<B>, PoolError> {
        let bytes: Vec<u8> = head.iter().flat_map(|w| w.to_le_bytes()).collect();
        let header = Header::decode(&bytes, len as u64 * 8)?;
        let mem = Memory::anonymous(header.pool_size as usize).map_err(|source| {
            PoolError::MapFailed {
                path: PathBuf::from("<anonymous>"),
                size: header.pool_size,
                source,
            }
        })?;
        fill(&mem);
        let mode = if cfg!(any(perdure_loom, perdure_shuttle)) {
            MapMode::Model
        } else {
            MapMode::Anonymous
        };
        let pool = Pool {
            mem,
            backend,
            mode,
            header,
            path: None,
            #[cfg(not(any(perdure_loom, perdure_shuttle)))]
            _file: None,
        };
        Ok(pool)
    }

    /// Copies `buf.len()` bytes starting at data-area offset `off` into `buf`.
    ///
    /// Reads are relaxed atomic word loads, so a concurrent writer can never
    /// cause a data race, only a mix of old and new bytes.
    pub fn read_bytes(&self, off: u64, buf: &mut [u8]) -> Result<(), PoolError> {
        self.check_range(off, buf.len() as u64, 1)?;
        for (word_off, skip, pos, take) in word_pieces(off, buf.len()) {
            let w = self
                .word_unchecked(word_off)
                .load(Ordering::Relaxed)
                .to_le_bytes();
            buf[pos..pos + take].copy_from_slice(&w[skip..skip + take]);
        }
        Ok(())
    }

    /// Writes `data` at data-area offset `off`. Not flushed: follow with
    /// [`Pool::pwb`].
    ///
    /// Whole words are relaxed atomic stores; partial words at either end are
    /// updated with a compare-and-swap loop so that concurrent writers of the
    /// neighbouring bytes are not lost.
    pub fn write_bytes(&self, off: u64, data: &[u8]) -> Result<(), PoolError> {
        self.check_range(off, data.len() as u64, 1)?;
        self.write_bytes_unchecked(off, data);
        Ok(())
    }

    fn write_bytes_unchecked(&self, off: u64, data: &[u8]) {
        for (word_off, skip, pos, take) in word_pieces(off, data.len()) {
            let word = self.word_unchecked(word_off);
            if take == 8 {
                let mut w = [0u8; 8];
                w.copy_from_slice(&data[pos..pos + 8]);
                word.store(u64::from_le_bytes(w), Ordering::Relaxed);
            } else {
                let mut cur = word.load(Ordering::Relaxed);
                loop {
                    let mut w = cur.to_le_bytes();
                    w[skip..skip + take].copy_from_slice(&data[pos..pos + take]);
                    match word.compare_exchange(
                        cur,
                        u64::from_le_bytes(w),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => break,
                        Err(now) => cur = now,
                    }
                }
            }
        }
    }

    /// `pwb` of every cache line overlapping `[off, off + len)`. The range is
    /// clamped to the pool: a flush can only concern pool memory.
    #[inline]
    #[track_caller]
    pub fn pwb(&self, off: u64, len: u64) {
        let size = self.header.pool_size;
        if off >= size || len == 0 {
            return;
        }
        self.backend.note_site(std::panic::Location::caller());
        let len = len.min(size - off);
        // SAFETY: the range was clamped to the live mapping.
        unsafe {
            self.backend
                .pwb_range(self.mem.base().add(off as usize), len as usize)
        };
        self.backend.record_pwb(off, len);
    }

    /// Zeroes the words of `[off, off + len)` (`off` 8-aligned, `len` a
    /// multiple of 8) one relaxed store at a time, then writes the range
    /// back and fences: it is durably zero when this returns. The formats
    /// use it to clear metadata before they write the magic that makes it
    /// valid.
    pub fn zero_durably(&self, off: u64, len: u64) -> Result<(), PoolError> {
        self.check_range(off, len, 8)?;
        for w in (off..off + len).step_by(8) {
            self.word_unchecked(w).store(0, Ordering::Relaxed);
        }
        self.pwb(off, len);
        self.pfence();
        Ok(())
    }

    /// `pfence` on this thread.
    #[inline]
    #[track_caller]
    pub fn pfence(&self) {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.pfence();
    }

    /// Whether a successful locked RMW on this pool completes the thread's
    /// earlier write-backs ([`Backend::rmw_completes_flushes`]).
    #[inline]
    pub fn rmw_completes_flushes(&self) -> bool {
        self.backend.rmw_completes_flushes()
    }

    /// `psync` on this thread.
    #[inline]
    #[track_caller]
    pub fn psync(&self) {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.psync();
    }

    /// `psync`, then report any `msync` failure seen in this process (the
    /// [`crate::Msync`] backend cannot report them through `psync` itself).
    #[track_caller]
    pub fn psync_checked(&self) -> Result<(), std::io::Error> {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.psync();
        match crate::backend::Msync::last_error() {
            Some(e) if self.backend.kind() == crate::BackendKind::Msync => Err(e),
            _ => Ok(()),
        }
    }

    /// Writes the whole pool back to its file and waits (an `msync` of the
    /// mapping), whatever the backend. Closing a pool does this too.
    pub fn sync_all(&self) -> Result<(), PoolError> {
        self.mem
            .sync_all()
            .map_err(|e| PoolError::io("msync", self.path.clone().unwrap_or_default(), e))
    }

    /// The number of root slots.
    pub fn root_count(&self) -> usize {
        ROOT_COUNT
    }

    fn root_word(&self, index: usize) -> Result<PmWord<'_, B>, PoolError> {
        if index >= ROOT_COUNT {
            return Err(PoolError::RootOutOfRange {
                index,
                count: ROOT_COUNT,
            });
        }
        Ok(self.word_unchecked(OFF_ROOTS + 8 * index as u64))
    }

    /// Root `index`: `None` if empty, else an offset in the data area.
    /// A stored value outside the data area is reported as
    /// [`PoolError::OffsetOutOfRange`] (a corrupt root).
    pub fn root(&self, index: usize) -> Result<Option<u64>, PoolError> {
        let v = self.root_word(index)?.load(Ordering::Acquire);
        if v == 0 {
            return Ok(None);
        }
        self.check_range(v, 8, 8)?;
        Ok(Some(v))
    }

    /// Sets root `index` to `off` (or clears it with `None`) and makes it
    /// durable before returning.
    pub fn set_root(&self, index: usize, off: Option<u64>) -> Result<(), PoolError> {
        let word = self.root_word(index)?;
        if let Some(off) = off {
            self.check_range(off, 8, 8)?;
        }
        word.store(off.unwrap_or(0), Ordering::Release);
        self.pwb(OFF_ROOTS + 8 * index as u64, 8);
        self.psync();
        Ok(())
    }
}

/// A location of persistent memory in a [`Pool`]: an atomic cell `A` (one
/// 8-byte word, [`PmWord`], or a 16-byte pair, [`PmDword`]) at a known pool
/// offset. Every operation goes through the pool's [`Backend`] access hooks,
/// so a recording backend sees it; for the real backends each is the plain
/// atomic operation.
pub struct PmLoc<'a, B: Backend, A: 'static> {
    cell: &'a A,
    off: u64,
    backend: &'a B,
}

/// A range of a [`Pool`]'s data area checked once ([`Pool::range`]): its
/// words are reached by their offset in the range, each with one test.
pub struct PmRange<'a, B: Backend> {
    pool: &'a Pool<B>,
    base: u64,
    len: u64,
}

impl<B: Backend> Clone for PmRange<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for PmRange<'_, B> {}

impl<B: Backend> std::fmt::Debug for PmRange<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PmRange({:#x}, {} bytes)", self.base, self.len)
    }
}

impl<'a, B: Backend> PmRange<'a, B> {
    /// The pool offset of the range's first byte.
    #[inline]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The range's length in bytes.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the range is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pool.
    #[inline]
    pub fn pool(&self) -> &'a Pool<B> {
        self.pool
    }

    /// The word at offset `rel` of the range (8-aligned, below `len`), or
    /// `None`.
    #[inline]
    pub fn word(&self, rel: u64) -> Option<PmWord<'a, B>> {
        if rel % 8 == 0 && rel < self.len {
            // In the data area and 8-aligned: `base` and `len` were checked
            // by `Pool::range` and are multiples of 8.
            Some(self.pool.word_unchecked(self.base + rel))
        } else {
            None
        }
    }
}

/// An 8-byte atomic word of a [`Pool`] (see [`PmLoc`]).
pub type PmWord<'a, B> = PmLoc<'a, B, AtomicU64>;

/// A 16-byte, 16-aligned location of a [`Pool`], for double-width
/// compare-and-swap (see [`PmLoc`]). Values are `low | high << 64`.
pub type PmDword<'a, B> = PmLoc<'a, B, [AtomicU64; 2]>;

impl<B: Backend, A> std::fmt::Debug for PmLoc<'_, B, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PmLoc({:#x}, {} bytes)",
            self.off,
            std::mem::size_of::<A>()
        )
    }
}

impl<B: Backend, A> PmLoc<'_, B, A> {
    /// The location's offset in its pool.
    pub fn offset(&self) -> u64 {
        self.off
    }
}

impl<B: Backend> PmWord<'_, B> {
    /// Atomic load.
    #[inline]
    pub fn load(&self, order: Ordering) -> u64 {
        self.backend.load(self.cell, self.off, order)
    }

    /// Atomic store (not flushed: follow with [`Pool::pwb`]).
    #[inline]
    #[track_caller]
    pub fn store(&self, val: u64, order: Ordering) {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.store(self.cell, self.off, val, order)
    }

    /// Compare-and-swap.
    #[inline]
    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        self.backend.note_site(std::panic::Location::caller());
        self.backend
            .compare_exchange(self.cell, self.off, current, new, success, failure)
    }

    /// Compare-and-swap that may fail spuriously (here it never does; kept
    /// for call sites written against `AtomicU64`).
    #[inline]
    #[track_caller]
    pub fn compare_exchange_weak(
        &self,
        current: u64,
        new: u64,
        success: Ordering,
        failure: Ordering,
    ) -> Result<u64, u64> {
        self.compare_exchange(current, new, success, failure)
    }

    /// Atomic swap.
    #[inline]
    #[track_caller]
    pub fn swap(&self, val: u64, order: Ordering) -> u64 {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.swap(self.cell, self.off, val, order)
    }

    /// Atomic add; returns the previous value.
    #[inline]
    #[track_caller]
    pub fn fetch_add(&self, val: u64, order: Ordering) -> u64 {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.fetch_add(self.cell, self.off, val, order)
    }

    /// Non-temporal store: visible and persisted together (ordered with the
    /// thread's later stores only by its next `pfence`).
    #[inline]
    #[track_caller]
    pub fn ntstore(&self, val: u64) {
        self.backend.note_site(std::panic::Location::caller());
        self.backend.ntstore(self.cell, self.off, val)
    }
}

impl<B: Backend> PmDword<'_, B> {
    /// 16-byte compare-and-swap.
    #[inline]
    #[track_caller]
    pub fn compare_exchange(&self, current: u128, new: u128) -> Result<u128, u128> {
        self.backend.note_site(std::panic::Location::caller());
        self.backend
            .compare_exchange_16(self.cell, self.off, current, new)
    }

    /// An atomic 16-byte load (a compare-and-swap that writes back what it
    /// finds, as x86 offers no plain 16-byte atomic load).
    #[inline]
    #[track_caller]
    pub fn load(&self) -> u128 {
        match self.compare_exchange(0, 0) {
            Ok(v) | Err(v) => v,
        }
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod file {
    use super::*;
    use crate::header;
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;

    fn lock(file: &File, path: &Path, exclusive: bool) -> Result<bool, PoolError> {
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        } | libc::LOCK_NB;
        // SAFETY: flock on a valid open descriptor; no memory involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(false)
        } else {
            Err(PoolError::io("lock", path, err))
        }
    }

    /// [`lock`] exclusively, retried for up to 100 ms while it is held.
    ///
    /// A process that spawns a child while it has the pool open gives the
    /// child a copy of its descriptor table, and with it a reference to the
    /// locked file description, until the child's `exec` closes it
    /// (`O_CLOEXEC`): for that window the lock outlives the owner's close.
    /// So a pool closed a moment ago by a process that spawns (a test
    /// harness, a server that runs hooks) can look locked for a few
    /// milliseconds; a real second user holds it for longer than this
    /// waits, and gets [`PoolError::Locked`].
    fn lock_waiting_for_spawns(file: &File, path: &Path) -> Result<bool, PoolError> {
        for _ in 0..20 {
            if lock(file, path, true)? {
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        lock(file, path, true)
    }

    fn open_error(path: &Path, e: std::io::Error) -> PoolError {
        if e.kind() == std::io::ErrorKind::NotFound {
            PoolError::NotFound {
                path: path.to_owned(),
            }
        } else {
            PoolError::io("open", path, e)
        }
    }

    /// Reads and validates the header of an open file.
    fn read_header(file: &File, path: &Path) -> Result<(Header, u64), PoolError> {
        let len = file
            .metadata()
            .map_err(|e| PoolError::io("stat", path, e))?
            .len();
        let mut buf = vec![0u8; len.min(HEADER_SIZE) as usize];
        file.read_exact_at(&mut buf, 0)
            .map_err(|e| PoolError::io("read", path, e))?;
        Ok((Header::decode(&buf, len)?, len))
    }

    impl<B: Backend> Pool<B> {
        /// Creates a pool file of `size` bytes for `layout` and opens it with
        /// the default backend. Fails with [`PoolError::AlreadyExists`] if
        /// `path` exists.
        pub fn create(path: impl AsRef<Path>, layout: &str, size: u64) -> Result<Pool<B>, PoolError>
        where
            B: Default,
        {
            Self::create_with(path, layout, size, B::default())
        }

        /// [`Pool::create`] with an explicit backend.
        pub fn create_with(
            path: impl AsRef<Path>,
            layout: &str,
            size: u64,
            backend: B,
        ) -> Result<Pool<B>, PoolError> {
            let path = path.as_ref();
            let header = Header::new(size, layout, random_id(), now_unix())?;
            if path.exists() {
                return Err(PoolError::AlreadyExists {
                    path: path.to_owned(),
                });
            }
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                _ => PathBuf::from("."),
            };
            let name = path.file_name().ok_or_else(|| {
                PoolError::io(
                    "create",
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "the path has no file name",
                    ),
                )
            })?;
            let mut tmp_name = name.to_owned();
            tmp_name.push(format!(
                ".creating-{}-{:x}",
                std::process::id(),
                random_id() & 0xffff_ffff
            ));
            let tmp = dir.join(tmp_name);
            let result = (|| {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(0o644)
                    .open(&tmp)
                    .map_err(|e| PoolError::io("create", &tmp, e))?;
                // Reserve the blocks now so a full disk is an error here, not
                // a SIGBUS on some later store into the mapping.
                // SAFETY: posix_fallocate on a valid descriptor; no memory involved.
                let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
                match rc {
                    0 => {}
                    libc::EOPNOTSUPP | libc::EINVAL => file
                        .set_len(size)
                        .map_err(|e| PoolError::io("extend", &tmp, e))?,
                    e => {
                        return Err(PoolError::io(
                            "allocate space for",
                            &tmp,
                            std::io::Error::from_raw_os_error(e),
                        ))
                    }
                }
                let mut bytes = header.encode();
                // The first open bumps the incarnation to 1.
                bytes[OFF_INCARNATION as usize..OFF_INCARNATION as usize + 8]
                    .copy_from_slice(&0u64.to_le_bytes());
                file.write_all_at(&bytes, 0)
                    .map_err(|e| PoolError::io("write", &tmp, e))?;
                file.sync_all()
                    .map_err(|e| PoolError::io("fsync", &tmp, e))?;
                // hard_link never replaces an existing file: the final name
                // appears atomically, complete, or not at all.
                std::fs::hard_link(&tmp, path).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        PoolError::AlreadyExists {
                            path: path.to_owned(),
                        }
                    } else {
                        PoolError::io("link", path, e)
                    }
                })?;
                Ok(())
            })();
            let _ = std::fs::remove_file(&tmp);
            result?;
            if let Ok(d) = File::open(&dir) {
                let _ = d.sync_all();
            }
            Self::open_with(path, layout, backend)
        }

        /// Opens an existing pool made for `layout`, with the default backend.
        pub fn open(path: impl AsRef<Path>, layout: &str) -> Result<Pool<B>, PoolError>
        where
            B: Default,
        {
            Self::open_with(path, layout, B::default())
        }

        /// Opens an existing pool made for `layout`, with `backend`.
        ///
        /// Validates the header (magic, version, checksum, fields, size
        /// against the file, layout), takes the advisory lock, maps the file
        /// and increments the incarnation durably.
        pub fn open_with(
            path: impl AsRef<Path>,
            layout: &str,
            backend: B,
        ) -> Result<Pool<B>, PoolError> {
            let path = path.as_ref();
            header::validate_layout(layout)?;
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|e| open_error(path, e))?;
            if !lock_waiting_for_spawns(&file, path)? {
                return Err(PoolError::Locked {
                    path: path.to_owned(),
                });
            }
            let (header, _) = read_header(&file, path)?;
            if header.layout != layout {
                return Err(PoolError::LayoutMismatch {
                    expected: layout.to_owned(),
                    found: header.layout,
                });
            }
            let (mem, mode) = Memory::map_file(file.as_raw_fd(), header.pool_size as usize)
                .map_err(|source| PoolError::MapFailed {
                    path: path.to_owned(),
                    size: header.pool_size,
                    source,
                })?;
            let pool = Pool {
                mem,
                backend,
                mode,
                header,
                path: Some(path.to_owned()),
                _file: Some(file),
            };
            let size = pool.header.pool_size;
            pool.backend.attach(size, &mut || pool.snapshot_words());
            pool.word_unchecked(OFF_INCARNATION)
                .fetch_add(1, Ordering::AcqRel);
            pool.pwb(OFF_INCARNATION, 8);
            pool.psync();
            Ok(pool)
        }
    }

    /// What `perdure pool info` shows: a pool's header, roots and state,
    /// read without modifying the file.
    #[derive(Clone, Debug)]
    pub struct PoolInfo {
        /// The file.
        pub path: PathBuf,
        /// The validated header.
        pub header: Header,
        /// The incarnation word.
        pub incarnation: u64,
        /// Root slots: raw value and whether it is valid.
        pub roots: Vec<(usize, u64, Result<(), String>)>,
        /// The mapping an open would get on this file system.
        pub mode: MapMode,
        /// Whether another handle holds the pool open.
        pub in_use: bool,
    }

    impl PoolInfo {
        /// Reads and validates the pool at `path` without opening it for
        /// writing or taking its lock.
        pub fn read(path: impl AsRef<Path>) -> Result<PoolInfo, PoolError> {
            let path = path.as_ref();
            let file = File::open(path).map_err(|e| open_error(path, e))?;
            let (header, _) = read_header(&file, path)?;
            let mut raw = vec![0u8; HEADER_SIZE as usize];
            file.read_exact_at(&mut raw, 0)
                .map_err(|e| PoolError::io("read", path, e))?;
            let word = |off: u64| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&raw[off as usize..off as usize + 8]);
                u64::from_le_bytes(w)
            };
            let roots = (0..ROOT_COUNT)
                .map(|i| {
                    let v = word(OFF_ROOTS + 8 * i as u64);
                    let ok = if v == 0 || (v >= header.data_offset && v % 8 == 0 && v <= header.pool_size - 8) {
                        Ok(())
                    } else {
                        Err(format!(
                            "corrupt: {v:#x} is not an 8-aligned offset in the data area [{:#x}, {:#x})",
                            header.data_offset, header.pool_size
                        ))
                    };
                    (i, v, ok)
                })
                .collect();
            let in_use = !lock(&file, path, false)?;
            let mode = probe_map_sync(&file);
            Ok(PoolInfo {
                path: path.to_owned(),
                incarnation: word(OFF_INCARNATION),
                header,
                roots,
                mode,
                in_use,
            })
        }
    }

    /// Which mapping an open would get: tries a one-page `MAP_SYNC` mapping.
    fn probe_map_sync(file: &File) -> MapMode {
        // SAFETY: a fresh read-only mapping of one page of a valid file,
        // unmapped at once; no existing memory is affected.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC,
                file.as_raw_fd(),
                0,
            );
            if p == libc::MAP_FAILED {
                MapMode::Shared
            } else {
                libc::munmap(p, 4096);
                MapMode::Sync
            }
        }
    }
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
pub use file::PoolInfo;
