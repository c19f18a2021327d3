//! The on-media pool header: layout, encoding and validation.
//!
//! The first [`HEADER_SIZE`] bytes of every pool file hold, little-endian:
//!
//! | offset | size | field | mutable |
//! | --- | --- | --- | --- |
//! | 0 | 8 | magic `"PERDURE\0"` | no |
//! | 8 | 4 | format version ([`FORMAT_VERSION`]) | no |
//! | 12 | 4 | header size (4096) | no |
//! | 16 | 8 | pool size in bytes (= file size) | no |
//! | 24 | 8 | data offset (first byte of the data area, 4096) | no |
//! | 32 | 4 | number of root slots ([`ROOT_COUNT`]) | no |
//! | 36 | 4 | flags (0) | no |
//! | 40 | 8 | pool id (random at creation) | no |
//! | 48 | 8 | creation time (Unix seconds) | no |
//! | 56 | 4 | layout name length | no |
//! | 60 | 4 | reserved (0) | no |
//! | 64 | 64 | layout name (UTF-8, zero padded) | no |
//! | 128 | 120 | reserved (0) | no |
//! | 248 | 8 | CRC-32 (IEEE) of bytes 0..248, zero-extended | no |
//! | 256 | 8 | incarnation: incremented at every open | yes |
//! | 512 | 8 × 64 | root slots: offsets into the data area, 0 = empty | yes |
//!
//! The checksum covers the immutable fields only. The mutable words are each
//! a single aligned 8-byte word, which persists atomically (Px86), and are
//! validated on use: a root must be 0 or an 8-aligned offset inside the data
//! area.
//!
//! Persistent pointers are offsets from the pool start, so a pool works at
//! whatever address it is mapped.

use crate::error::PoolError;

/// The pool magic.
pub const MAGIC: [u8; 8] = *b"PERDURE\0";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes reserved for the header; the data area starts here.
pub const HEADER_SIZE: u64 = 4096;
/// Number of root slots.
pub const ROOT_COUNT: usize = 64;
/// Longest layout name, in bytes.
pub const LAYOUT_MAX: usize = 64;
/// Smallest pool: the header plus one page of data.
pub const MIN_POOL_SIZE: u64 = 2 * HEADER_SIZE;
/// Pool sizes are multiples of this.
pub const SIZE_GRANULE: u64 = 4096;
/// Largest pool this build creates (1 PiB): keeps every offset computation
/// far from overflow.
pub const MAX_POOL_SIZE: u64 = 1 << 50;

pub(crate) const OFF_VERSION: usize = 8;
pub(crate) const OFF_HEADER_SIZE: usize = 12;
pub(crate) const OFF_POOL_SIZE: usize = 16;
pub(crate) const OFF_DATA: usize = 24;
pub(crate) const OFF_ROOT_COUNT: usize = 32;
pub(crate) const OFF_FLAGS: usize = 36;
pub(crate) const OFF_POOL_ID: usize = 40;
pub(crate) const OFF_CREATED: usize = 48;
pub(crate) const OFF_LAYOUT_LEN: usize = 56;
pub(crate) const OFF_RESERVED: usize = 60;
pub(crate) const OFF_LAYOUT: usize = 64;
pub(crate) const OFF_CHECKSUM: usize = 248;
/// Offset of the incarnation word.
pub const OFF_INCARNATION: u64 = 256;
/// Offset of root slot 0.
pub const OFF_ROOTS: u64 = 512;

/// The immutable part of a pool header, decoded and validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version.
    pub version: u32,
    /// Pool size in bytes.
    pub pool_size: u64,
    /// Offset of the data area.
    pub data_offset: u64,
    /// Number of root slots.
    pub root_count: u32,
    /// Flags (0 in this version).
    pub flags: u32,
    /// Random identifier chosen at creation.
    pub pool_id: u64,
    /// Creation time, Unix seconds.
    pub created_unix: u64,
    /// The layout name the pool was created for.
    pub layout: String,
    /// The stored checksum.
    pub checksum: u64,
}

/// Checks a layout name: non-empty, at most [`LAYOUT_MAX`] bytes, no NUL.
pub fn validate_layout(layout: &str) -> Result<(), PoolError> {
    let reason = if layout.is_empty() {
        "it is empty"
    } else if layout.len() > LAYOUT_MAX {
        "it is longer than 64 bytes"
    } else if layout.contains('\0') {
        "it contains a NUL byte"
    } else {
        return Ok(());
    };
    Err(PoolError::InvalidLayout {
        layout: layout.to_owned(),
        reason,
    })
}

/// Checks a requested pool size.
pub fn validate_size(size: u64) -> Result<(), PoolError> {
    let reason = if size < MIN_POOL_SIZE {
        format!("a pool needs at least {MIN_POOL_SIZE} bytes (header + one page)")
    } else if size % SIZE_GRANULE != 0 {
        format!("the size must be a multiple of {SIZE_GRANULE} bytes")
    } else if size > MAX_POOL_SIZE {
        format!("the largest pool is {MAX_POOL_SIZE} bytes")
    } else if usize::try_from(size).is_err() {
        "larger than this machine's address space".to_owned()
    } else {
        return Ok(());
    };
    Err(PoolError::InvalidSize { size, reason })
}

fn checksum(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(&bytes[..OFF_CHECKSUM]))
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

impl Header {
    /// A fresh header for a new pool.
    pub fn new(
        pool_size: u64,
        layout: &str,
        pool_id: u64,
        created_unix: u64,
    ) -> Result<Header, PoolError> {
        validate_size(pool_size)?;
        validate_layout(layout)?;
        let mut h = Header {
            version: FORMAT_VERSION,
            pool_size,
            data_offset: HEADER_SIZE,
            root_count: ROOT_COUNT as u32,
            flags: 0,
            pool_id,
            created_unix,
            layout: layout.to_owned(),
            checksum: 0,
        };
        h.checksum = checksum(&h.encode_unchecked());
        Ok(h)
    }

    fn encode_unchecked(&self) -> [u8; HEADER_SIZE as usize] {
        let mut b = [0u8; HEADER_SIZE as usize];
        b[..8].copy_from_slice(&MAGIC);
        b[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&self.version.to_le_bytes());
        b[OFF_HEADER_SIZE..OFF_HEADER_SIZE + 4]
            .copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
        b[OFF_POOL_SIZE..OFF_POOL_SIZE + 8].copy_from_slice(&self.pool_size.to_le_bytes());
        b[OFF_DATA..OFF_DATA + 8].copy_from_slice(&self.data_offset.to_le_bytes());
        b[OFF_ROOT_COUNT..OFF_ROOT_COUNT + 4].copy_from_slice(&self.root_count.to_le_bytes());
        b[OFF_FLAGS..OFF_FLAGS + 4].copy_from_slice(&self.flags.to_le_bytes());
        b[OFF_POOL_ID..OFF_POOL_ID + 8].copy_from_slice(&self.pool_id.to_le_bytes());
        b[OFF_CREATED..OFF_CREATED + 8].copy_from_slice(&self.created_unix.to_le_bytes());
        let name = self.layout.as_bytes();
        b[OFF_LAYOUT_LEN..OFF_LAYOUT_LEN + 4].copy_from_slice(&(name.len() as u32).to_le_bytes());
        b[OFF_LAYOUT..OFF_LAYOUT + name.len()].copy_from_slice(name);
        b
    }

    /// The header's bytes (mutable words and roots zero), checksum included.
    pub fn encode(&self) -> [u8; HEADER_SIZE as usize] {
        let mut b = self.encode_unchecked();
        let sum = checksum(&b);
        b[OFF_CHECKSUM..OFF_CHECKSUM + 8].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Decodes and validates a header read from the start of a file of
    /// `file_len` bytes. `bytes` holds the first `min(file_len, 4096)` bytes.
    ///
    /// Checks, in order: length, magic, version, checksum, field sanity, and
    /// the recorded size against the file size. The layout is checked by the
    /// caller, which knows what it expects.
    pub fn decode(bytes: &[u8], file_len: u64) -> Result<Header, PoolError> {
        if (bytes.len() as u64) < HEADER_SIZE || file_len < HEADER_SIZE {
            return Err(PoolError::Truncated {
                len: file_len.min(bytes.len() as u64),
                needed: HEADER_SIZE,
                what: "the pool header",
            });
        }
        let b = &bytes[..HEADER_SIZE as usize];
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&b[..8]);
        if magic != MAGIC {
            return Err(PoolError::BadMagic {
                found: magic,
                expected: MAGIC,
            });
        }
        let version = u32_at(b, OFF_VERSION);
        if version != FORMAT_VERSION {
            return Err(PoolError::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let stored = u64_at(b, OFF_CHECKSUM);
        let computed = checksum(b);
        if stored != computed {
            return Err(PoolError::ChecksumMismatch { stored, computed });
        }
        // The checksum matched, so what follows can only fail for a header
        // that was crafted (or written by a buggy tool): say which field.
        let corrupt =
            |field: &'static str, detail: String| PoolError::CorruptHeader { field, detail };
        let header_size = u32_at(b, OFF_HEADER_SIZE);
        if u64::from(header_size) != HEADER_SIZE {
            return Err(corrupt(
                "header_size",
                format!("is {header_size}, expected {HEADER_SIZE}"),
            ));
        }
        let pool_size = u64_at(b, OFF_POOL_SIZE);
        if validate_size(pool_size).is_err() {
            return Err(corrupt(
                "pool_size",
                format!("is {pool_size}, not a multiple of {SIZE_GRANULE} in [{MIN_POOL_SIZE}, {MAX_POOL_SIZE}]"),
            ));
        }
        let data_offset = u64_at(b, OFF_DATA);
        if data_offset != HEADER_SIZE {
            return Err(corrupt(
                "data_offset",
                format!("is {data_offset}, expected {HEADER_SIZE}"),
            ));
        }
        let root_count = u32_at(b, OFF_ROOT_COUNT);
        if root_count as usize != ROOT_COUNT {
            return Err(corrupt(
                "root_count",
                format!("is {root_count}, expected {ROOT_COUNT}"),
            ));
        }
        let flags = u32_at(b, OFF_FLAGS);
        if flags != 0 {
            return Err(corrupt(
                "flags",
                format!("is {flags:#x}, but no flags are defined"),
            ));
        }
        if u32_at(b, OFF_RESERVED) != 0 || b[128..OFF_CHECKSUM].iter().any(|&x| x != 0) {
            return Err(corrupt("reserved", "holds non-zero bytes".to_owned()));
        }
        let layout_len = u32_at(b, OFF_LAYOUT_LEN) as usize;
        if layout_len == 0 || layout_len > LAYOUT_MAX {
            return Err(corrupt(
                "layout_len",
                format!("is {layout_len}, expected 1..={LAYOUT_MAX}"),
            ));
        }
        let name = &b[OFF_LAYOUT..OFF_LAYOUT + layout_len];
        if b[OFF_LAYOUT + layout_len..OFF_LAYOUT + LAYOUT_MAX]
            .iter()
            .any(|&x| x != 0)
        {
            return Err(corrupt(
                "layout",
                "has bytes after its recorded length".to_owned(),
            ));
        }
        let layout = match std::str::from_utf8(name) {
            Ok(s) if !s.contains('\0') => s.to_owned(),
            _ => {
                return Err(corrupt(
                    "layout",
                    "is not a NUL-free UTF-8 string".to_owned(),
                ))
            }
        };
        if file_len < pool_size {
            return Err(PoolError::Truncated {
                len: file_len,
                needed: pool_size,
                what: "the pool size recorded in its header",
            });
        }
        if file_len > pool_size {
            return Err(PoolError::SizeMismatch {
                header: pool_size,
                file: file_len,
            });
        }
        Ok(Header {
            version,
            pool_size,
            data_offset,
            root_count,
            flags,
            pool_id: u64_at(b, OFF_POOL_ID),
            created_unix: u64_at(b, OFF_CREATED),
            layout,
            checksum: stored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> [u8; HEADER_SIZE as usize] {
        Header::new(1 << 20, "test-layout", 42, 1_700_000_000)
            .unwrap()
            .encode()
    }

    #[test]
    fn roundtrip() {
        let h = Header::new(1 << 20, "kv", 7, 9).unwrap();
        assert_eq!(Header::decode(&h.encode(), 1 << 20).unwrap(), h);
    }

    #[test]
    fn every_single_byte_flip_in_the_checksummed_part_is_detected() {
        let base = good();
        for i in 0..OFF_CHECKSUM + 8 {
            for bit in 0..8 {
                let mut b = base;
                b[i] ^= 1 << bit;
                assert!(
                    Header::decode(&b, 1 << 20).is_err(),
                    "flip of byte {i} bit {bit} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn mutable_words_are_not_checksummed() {
        let mut b = good();
        b[OFF_INCARNATION as usize] = 5;
        b[OFF_ROOTS as usize + 8] = 0x40;
        assert!(Header::decode(&b, 1 << 20).is_ok());
    }

    #[test]
    fn size_checks() {
        assert!(matches!(
            Header::decode(&good(), (1 << 20) - 4096),
            Err(PoolError::Truncated { .. })
        ));
        assert!(matches!(
            Header::decode(&good(), (1 << 20) + 4096),
            Err(PoolError::SizeMismatch { .. })
        ));
        assert!(matches!(
            Header::decode(&good()[..100], 100),
            Err(PoolError::Truncated { .. })
        ));
        assert!(validate_size(4096).is_err());
        assert!(validate_size(8192 + 1).is_err());
        assert!(validate_size(u64::MAX).is_err());
        assert!(validate_layout("").is_err());
        assert!(validate_layout(&"x".repeat(65)).is_err());
        assert!(validate_layout("a\0b").is_err());
    }
}
