//! Every way a pool file can be bad gets a typed error, never a panic.
//!
//! One test per case listed in the pool's documentation, then a property
//! test that flips random header bytes and truncates at random lengths
//! (10,000 cases) and checks that opening and inspecting never panic and
//! that damage to the checksummed header is always reported.

// File pools do not exist under the model checkers' facade.
use perdure_pm::header::{Header, HEADER_SIZE, OFF_ROOTS};
use perdure_pm::{MapMode, NoFlush, Pool, PoolError, PoolInfo};
use proptest::prelude::*;
use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

const LAYOUT: &str = "bad-input-test";
const SIZE: u64 = 64 << 10;

fn make(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("p.pool");
    let p: Pool<NoFlush> = Pool::create(&path, LAYOUT, SIZE).unwrap();
    p.set_root(3, Some(p.data_offset() + 64)).unwrap();
    drop(p);
    path
}

fn patch(path: &Path, off: u64, bytes: &[u8]) {
    let mut f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    f.write_all(bytes).unwrap();
}

fn open(path: &Path) -> Result<Pool<NoFlush>, PoolError> {
    Pool::open(path, LAYOUT)
}

#[test]
fn good_pool_roundtrips_roots_and_reports_its_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let p = open(&path).unwrap();
    assert_eq!(p.root(3).unwrap(), Some(p.data_offset() + 64));
    assert_eq!(p.root(0).unwrap(), None);
    assert!(matches!(p.mode(), MapMode::Sync | MapMode::Shared));
    assert_eq!(p.incarnation(), 2, "created (1st open) + this open");
    let info = PoolInfo::read(&path).unwrap();
    assert!(info.in_use, "the open handle holds the lock");
    drop(p);
    assert!(!PoolInfo::read(&path).unwrap().in_use);
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(&dir.path().join("nope.pool")).unwrap_err();
    assert!(matches!(e, PoolError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("does not exist"));
    assert!(matches!(
        PoolInfo::read(dir.path().join("nope")),
        Err(PoolError::NotFound { .. })
    ));
}

#[test]
fn existing_file_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let e = Pool::<NoFlush>::create(&path, LAYOUT, SIZE).unwrap_err();
    assert!(matches!(e, PoolError::AlreadyExists { .. }), "{e}");
    assert!(open(&path).is_ok(), "the existing pool is intact");
}

#[test]
fn wrong_magic() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    patch(&path, 0, b"NOTAPOOL");
    let e = open(&path).unwrap_err();
    assert!(matches!(e, PoolError::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("not a perdure pool"));
}

#[test]
fn unknown_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    patch(&path, 8, &7u32.to_le_bytes());
    let e = open(&path).unwrap_err();
    assert!(
        matches!(
            e,
            PoolError::UnsupportedVersion {
                found: 7,
                supported: 1
            }
        ),
        "{e}"
    );
}

#[test]
fn truncated_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let f = fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(SIZE - 4096).unwrap();
    let e = open(&path).unwrap_err();
    assert!(
        matches!(e, PoolError::Truncated { needed: SIZE, .. }),
        "{e}"
    );
    f.set_len(100).unwrap();
    let e = open(&path).unwrap_err();
    assert!(matches!(e, PoolError::Truncated { len: 100, .. }), "{e}");
    f.set_len(0).unwrap();
    assert!(matches!(
        open(&path),
        Err(PoolError::Truncated { len: 0, .. })
    ));
}

#[test]
fn size_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(SIZE + 4096)
        .unwrap();
    let e = open(&path).unwrap_err();
    assert!(
        matches!(e, PoolError::SizeMismatch { header: SIZE, file }  if file == SIZE + 4096),
        "{e}"
    );
}

#[test]
fn checksum_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    patch(&path, 64, b"X"); // first byte of the layout name
    let e = open(&path).unwrap_err();
    assert!(matches!(e, PoolError::ChecksumMismatch { .. }), "{e}");
}

#[test]
fn corrupt_field_under_a_valid_checksum() {
    // A header crafted with a correct checksum but impossible contents.
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let mut b = Header::new(SIZE, LAYOUT, 1, 1).unwrap().encode();
    b[36] = 1; // flags
    let crc = u64::from(crc32fast::hash(&b[..248]));
    b[248..256].copy_from_slice(&crc.to_le_bytes());
    patch(&path, 0, &b[..256]);
    let e = open(&path).unwrap_err();
    assert!(
        matches!(e, PoolError::CorruptHeader { field: "flags", .. }),
        "{e}"
    );
}

#[test]
fn layout_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let e = Pool::<NoFlush>::open(&path, "some-other-root-type").unwrap_err();
    assert!(matches!(e, PoolError::LayoutMismatch { .. }), "{e}");
    assert!(e.to_string().contains(LAYOUT));
}

#[test]
fn second_opener_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    let _first = open(&path).unwrap();
    let e = open(&path).unwrap_err();
    assert!(matches!(e, PoolError::Locked { .. }), "{e}");
}

#[test]
fn roots_and_offsets_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path());
    // A root slot holding garbage (it is not checksummed: checked on use).
    patch(&path, OFF_ROOTS + 8 * 5, &(SIZE + 8).to_le_bytes());
    patch(&path, OFF_ROOTS + 8 * 6, &(HEADER_SIZE + 3).to_le_bytes());
    let p = open(&path).unwrap();
    assert!(matches!(
        p.root(64),
        Err(PoolError::RootOutOfRange {
            index: 64,
            count: 64
        })
    ));
    assert!(matches!(p.root(5), Err(PoolError::OffsetOutOfRange { .. })));
    assert!(matches!(p.root(6), Err(PoolError::Misaligned { .. })));
    assert!(matches!(
        p.set_root(1, Some(8)),
        Err(PoolError::OffsetOutOfRange { .. })
    ));
    assert!(matches!(
        p.set_root(99, None),
        Err(PoolError::RootOutOfRange { .. })
    ));
    assert!(matches!(
        p.word(SIZE),
        Err(PoolError::OffsetOutOfRange { .. })
    ));
    assert!(matches!(
        p.word(u64::MAX - 3),
        Err(PoolError::OffsetOutOfRange { .. })
    ));
    assert!(
        matches!(p.word(0), Err(PoolError::OffsetOutOfRange { .. })),
        "the header is not data"
    );
    assert!(matches!(
        p.word(HEADER_SIZE + 4),
        Err(PoolError::Misaligned { .. })
    ));
    let mut buf = [0u8; 16];
    assert!(p.read_bytes(SIZE - 8, &mut buf).is_err());
    assert!(p.write_bytes(u64::MAX, &buf).is_err());
    let info = PoolInfo::read(&path).unwrap();
    assert!(info.roots[5].2.is_err() && info.roots[6].2.is_err() && info.roots[3].2.is_ok());
}

#[test]
fn invalid_sizes_and_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.pool");
    for size in [0, 4096, 8192 + 1, u64::MAX, 1 << 62] {
        let e = Pool::<NoFlush>::create(&p, LAYOUT, size).unwrap_err();
        assert!(matches!(e, PoolError::InvalidSize { .. }), "{size}: {e}");
    }
    for layout in ["", "a\0b", &"L".repeat(65)] {
        let e = Pool::<NoFlush>::create(&p, layout, SIZE).unwrap_err();
        assert!(matches!(e, PoolError::InvalidLayout { .. }), "{e}");
    }
    assert!(!p.exists(), "failed creates leave nothing behind");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary files left"
    );
}

#[test]
fn byte_access_roundtrips_at_any_alignment() {
    let p = Pool::volatile(LAYOUT, SIZE, NoFlush).unwrap();
    let base = p.data_offset();
    for start in 0..16u64 {
        for len in [0usize, 1, 7, 8, 9, 23, 64, 100] {
            let data: Vec<u8> = (0..len)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(start as u8))
                .collect();
            p.write_bytes(base + 256 + start, &data).unwrap();
            let mut back = vec![0u8; len];
            p.read_bytes(base + 256 + start, &mut back).unwrap();
            assert_eq!(back, data);
        }
    }
}

#[derive(Debug)]
struct Damage {
    flips: Vec<(usize, u8)>,
    truncate: Option<u64>,
}

fn damage() -> impl Strategy<Value = Damage> {
    (
        prop::collection::vec((0usize..HEADER_SIZE as usize, 1u8..=255), 1..6),
        prop_oneof![3 => Just(None), 1 => (0u64..=SIZE + 8192).prop_map(Some)],
    )
        .prop_map(|(flips, truncate)| Damage { flips, truncate })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn damaged_headers_never_panic_and_checksummed_damage_is_caught(d in damage()) {
        thread_local! {
            static FIXTURE: (tempfile::TempDir, Vec<u8>) = {
                let dir = tempfile::tempdir().unwrap();
                let path = make(dir.path());
                let bytes = fs::read(&path).unwrap();
                (dir, bytes)
            };
        }
        FIXTURE.with(|(dir, pristine)| {
            let path = dir.path().join("damaged.pool");
            let mut bytes = pristine.clone();
            for &(i, x) in &d.flips {
                bytes[i] ^= x;
            }
            if let Some(len) = d.truncate {
                bytes.resize(len as usize, 0);
            }
            fs::write(&path, &bytes).unwrap();
            let checksummed_changed = bytes.len() < 256 || bytes[..256] != pristine[..256];
            let size_changed = bytes.len() as u64 != SIZE;
            let info = PoolInfo::read(&path);
            let opened = open(&path);
            if checksummed_changed || size_changed {
                prop_assert!(info.is_err(), "damage went unnoticed by PoolInfo::read: {:?}", d.flips);
                prop_assert!(opened.is_err(), "damage went unnoticed by Pool::open");
            }
            if let Ok(p) = opened {
                for r in 0..p.root_count() {
                    let _ = p.root(r); // may be Err for a damaged slot; must not panic
                }
            }
            if let Err(e) = info {
                prop_assert!(!e.to_string().is_empty());
            }
            Ok(())
        })?;
    }
}
