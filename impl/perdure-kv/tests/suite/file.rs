//! perdure-kv's database files: every construction on both backends
//! (`Pmem` on tmpfs, `Msync` on the ext4 of the temporary directory)
//! keeps what it was given across a close and reopen, and reopens with the
//! construction that created it; bad files and bad options get typed
//! errors and leave the file as it was.

use perdure_kv::{Construction, Db, Durability, KvError, Options};
use perdure_pm::{NoFlush, Pool, PoolError};
use std::path::Path;

fn options(c: Construction, d: Durability) -> Options {
    Options {
        construction: c,
        durability: d,
        size: 16 << 20,
        threads: 2,
        ..Options::default()
    }
}

fn dirs() -> Vec<(tempfile::TempDir, Durability)> {
    vec![
        (tempfile::tempdir_in("/dev/shm").unwrap(), Durability::Pmem),
        (tempfile::tempdir().unwrap(), Durability::Msync),
    ]
}

#[test]
fn every_construction_and_backend_keeps_its_entries_across_a_reopen() {
    for (dir, durability) in dirs() {
        for c in Construction::ALL {
            let path = dir.path().join(format!("{}.db", c.name()));
            {
                let db = Db::create(&path, &options(c, durability)).unwrap();
                assert_eq!(db.construction(), c);
                for i in 0..40u32 {
                    db.put(format!("k{i:03}").as_bytes(), &i.to_le_bytes())
                        .unwrap();
                }
                db.transaction(|tx| {
                    tx.delete(b"k000")?;
                    tx.put(b"k999", b"last")
                })
                .unwrap();
            }
            // Reopened with other options: the file's construction wins.
            let other = options(Construction::Redo, Durability::Auto);
            let db = Db::open(&path, &other).unwrap();
            assert_eq!(db.construction(), c, "{path:?}");
            assert_eq!(db.check().unwrap(), 40);
            assert_eq!(db.get(b"k001").unwrap(), Some(1u32.to_le_bytes().to_vec()));
            assert_eq!(db.get(b"k000").unwrap(), None);
            let keys: Vec<_> = db
                .scan(&b"k010"[..]..&b"k013"[..], 10)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            assert_eq!(keys, [&b"k010"[..], b"k011", b"k012"]);
            let st = db.stat().unwrap();
            assert_eq!((st.entries, st.construction), (40, c));
            assert!(
                st.bytes_used > 40 * 48 && st.bytes_used < st.region_bytes,
                "{st:?}"
            );
            assert_eq!(st.file_bytes, 16 << 20);
            // The hash map started with a bucket per 256 bytes of the
            // region, rounded down to a power of two: its array's block
            // (the next power of two past the array) at most 1/16 of it.
            let buckets = 1u64 << (st.region_bytes / 256).ilog2();
            assert!(
                st.bytes_used > 8 * buckets && st.bytes_used < st.region_bytes / 16 + 8 * 4096,
                "{st:?}"
            );
        }
    }
}

#[test]
fn auto_takes_pmem_on_tmpfs_and_msync_on_ext4() {
    for (dir, want) in dirs() {
        let path = dir.path().join("auto.db");
        let db = Db::create(&path, &options(Construction::RedoOpt, Durability::Auto)).unwrap();
        let want = match want {
            Durability::Pmem => "pmem",
            _ => "msync",
        };
        assert_eq!(db.backend().name(), want, "{path:?}");
    }
}

fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn bad_files_and_options_get_typed_errors_and_stay_as_they_were() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let o = options(Construction::RedoOpt, Durability::Pmem);
    let path = dir.path().join("a.db");
    // Missing, not to be created.
    let no_create = Options {
        create_if_missing: false,
        ..o.clone()
    };
    let e = Db::open(&path, &no_create).unwrap_err();
    assert!(
        matches!(e, KvError::Pool(PoolError::NotFound { .. })),
        "{e}"
    );
    assert!(!path.exists());
    // Exists, asked to create.
    let db = Db::create(&path, &o).unwrap();
    db.put(b"k", b"v").unwrap();
    let e = Db::create(&path, &o).unwrap_err();
    assert!(
        matches!(e, KvError::Pool(PoolError::AlreadyExists { .. })),
        "{e}"
    );
    // Open elsewhere: locked.
    let e = Db::open(&path, &o).unwrap_err();
    assert!(matches!(e, KvError::Pool(PoolError::Locked { .. })), "{e}");
    drop(db);
    let before = bytes(&path);
    // Another layout.
    let other = dir.path().join("other.pool");
    drop(Pool::create_with(&other, "someone-else", 1 << 20, NoFlush).unwrap());
    let e = Db::open(&other, &o).unwrap_err();
    assert!(
        matches!(e, KvError::Foreign { ref layout, .. } if layout == "someone-else"),
        "{e}"
    );
    // Not a pool at all.
    let junk = dir.path().join("junk");
    std::fs::write(&junk, vec![0x5a; 1 << 16]).unwrap();
    let e = Db::open(&junk, &o).unwrap_err();
    assert!(matches!(e, KvError::Pool(_)), "{e}");
    assert_eq!(std::fs::read(&junk).unwrap(), vec![0x5a; 1 << 16]);
    // Truncated.
    let cut = dir.path().join("cut.db");
    std::fs::write(&cut, &before[..before.len() / 2]).unwrap();
    let e = Db::open(&cut, &o).unwrap_err();
    assert!(
        matches!(e, KvError::Pool(PoolError::Truncated { .. })),
        "{e}"
    );
    // A pool too small for the construction.
    for size in [0, 4096, 12 << 10] {
        let tiny = Options { size, ..o.clone() };
        let tiny_path = dir.path().join(format!("tiny{size}.db"));
        let e = Db::create(&tiny_path, &tiny).unwrap_err();
        assert!(
            matches!(e, KvError::Ptm(_) | KvError::Pool(_) | KvError::Full { .. }),
            "{size}: {e}"
        );
        assert!(!tiny_path.exists(), "a failed create left {tiny_path:?}");
    }
    // The good file is untouched by all of it and still opens.
    assert_eq!(bytes(&path), before);
    let db = Db::open(&path, &o).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
}
