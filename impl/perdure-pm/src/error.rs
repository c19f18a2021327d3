//! Typed errors of `perdure-pm`.
//!
//! Every way a pool file can be wrong has its own variant, and every message
//! says what is wrong and what to do about it. Bad input is an error value,
//! never a panic.

use std::path::PathBuf;

/// Errors from creating, opening or using a [`crate::Pool`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// The pool file does not exist.
    #[error("no pool at {path}: the file does not exist; create one with `perdure pool create {path} --layout NAME --size SIZE` or `Pool::create`")]
    NotFound {
        /// The path that was opened.
        path: PathBuf,
    },

    /// `create` found a file already there.
    #[error(
        "{path} already exists; refusing to overwrite it (remove it first if it is not needed)"
    )]
    AlreadyExists {
        /// The path that was to be created.
        path: PathBuf,
    },

    /// Another process (or another handle in this process) has the pool open.
    #[error("{path} is open elsewhere (its advisory lock is held); close the other user first — two writers would corrupt it")]
    Locked {
        /// The pool's path.
        path: PathBuf,
    },

    /// An operating-system call failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// The file is shorter than its header says, or shorter than a header.
    #[error("the file is truncated: it has {len} bytes but {needed} are needed ({what}); the pool cannot be used — restore it from a copy")]
    Truncated {
        /// The file's length.
        len: u64,
        /// The length required.
        needed: u64,
        /// What needed the bytes.
        what: &'static str,
    },

    /// The first eight bytes are not the pool magic.
    #[error("not a perdure pool: the magic bytes are {found:02x?}, expected {expected:02x?} (\"PERDURE\\0\"); check the path")]
    BadMagic {
        /// The bytes found.
        found: [u8; 8],
        /// The bytes expected.
        expected: [u8; 8],
    },

    /// The format version is one this build does not read.
    #[error("pool format version {found} is not supported (this build reads version {supported}); use a perdure release that matches the pool")]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },

    /// The header checksum does not match the header.
    #[error("the pool header is corrupt: its checksum is {stored:#010x} but the header hashes to {computed:#010x}; the file was damaged or written by something else")]
    ChecksumMismatch {
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum computed over the header.
        computed: u64,
    },

    /// A header field has a value no valid pool has.
    #[error("the pool header is corrupt: field `{field}` {detail}")]
    CorruptHeader {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        detail: String,
    },

    /// The file is longer than the pool size recorded in the header.
    #[error("size mismatch: the header records {header} bytes but the file has {file}; the file was extended by something else — truncate it back or restore it")]
    SizeMismatch {
        /// Size in the header.
        header: u64,
        /// Size of the file.
        file: u64,
    },

    /// The pool was made for another layout (root type).
    #[error("layout mismatch: the pool was created for layout {found:?}, but {expected:?} was requested; open it with the program that created it")]
    LayoutMismatch {
        /// The layout the caller asked for.
        expected: String,
        /// The layout recorded in the pool.
        found: String,
    },

    /// A root index beyond the root table.
    #[error("root {index} does not exist: the pool has {count} root slots (0..{count})")]
    RootOutOfRange {
        /// The index asked for.
        index: usize,
        /// The number of root slots.
        count: usize,
    },

    /// An offset (or a range starting there) outside the pool's data area.
    #[error("offset {offset:#x} (+{len} bytes) is outside the pool's data area [{start:#x}, {end:#x}); a persistent pointer is corrupt or belongs to another pool")]
    OffsetOutOfRange {
        /// The offending offset.
        offset: u64,
        /// The length of the access.
        len: u64,
        /// Start of the data area.
        start: u64,
        /// End of the pool.
        end: u64,
    },

    /// An offset not aligned for the access.
    #[error("offset {offset:#x} is not aligned to {align} bytes")]
    Misaligned {
        /// The offending offset.
        offset: u64,
        /// The required alignment.
        align: u64,
    },

    /// A requested pool size that cannot be used.
    #[error("invalid pool size {size}: {reason}")]
    InvalidSize {
        /// The size asked for.
        size: u64,
        /// Why it is invalid.
        reason: String,
    },

    /// A layout name that cannot be stored.
    #[error("invalid layout name {layout:?}: {reason}")]
    InvalidLayout {
        /// The name given.
        layout: String,
        /// Why it is invalid.
        reason: &'static str,
    },

    /// `mmap` failed.
    #[error("cannot map {path} ({size} bytes): {source}; check free memory and `ulimit -v`")]
    MapFailed {
        /// The pool's path.
        path: PathBuf,
        /// The size to map.
        size: u64,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl PoolError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PoolError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
