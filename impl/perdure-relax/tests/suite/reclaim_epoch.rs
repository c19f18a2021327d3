//! Epoch-based reclamation (`src/space.rs`): a retired node is not freed
//! while a thread that may still read it is in its critical section.
//!
//! The schedule that `tests/shuttle_sets.rs` found (BST under `Hybrid`
//! after a crash, an insert that returned true lost), forced step by step
//! with real threads and channels: T0 pins epoch e; the epoch advances to
//! e + 1 (allowed: T0 is pinned at e); T1 pins e + 1 and reads node X; T0
//! unlinks and retires X and leaves its critical section, whose end
//! advances the epoch to e + 2 (allowed: the only pinned thread, T1, is at
//! e + 1). If X was tagged with T0's pinned epoch e, it is freed now —
//! while T1 still holds it (in the shuttle run T1's insert allocated the
//! freed block as its new node and its CAS then succeeded on the recycled
//! node, so the insert returned true and was lost). Tagged with the global
//! epoch at the retire (e + 1), it waits until e + 3, which needs T1 to
//! leave first. Checked with the reclamation audit's log (feature
//! `check`).

use perdure_pm::{NoFlush, Pool};
use perdure_relax::audit::BlockEvent;
use perdure_relax::ds::ListNode;
use perdure_relax::{Config, OpenOptions, Space, Tracking};
use std::sync::mpsc::channel;

#[test]
fn a_node_retired_by_a_thread_pinned_one_epoch_behind_waits_for_the_readers() {
    let pool = Pool::volatile("reclaim-epoch", 8 << 20, NoFlush).unwrap();
    let base = pool.data_offset().next_multiple_of(4096);
    let cfg = Config {
        threads: 4,
        roots: 1,
        heap_bytes: 4 << 20,
        msb_sequences: false,
    };
    let sp = Space::create(&pool, base, &cfg, OpenOptions::new(Tracking::Bitset)).unwrap();
    // Every critical section's end tries to advance the epoch and frees
    // what it allows.
    sp.audit_start(true);
    let x = sp
        .handle()
        .unwrap()
        .alloc_node::<ListNode>(&[7, 0])
        .unwrap();
    let (t0_pinned_tx, t0_pinned) = channel();
    let (t0_go_tx, t0_go) = channel::<()>();
    let (t1_holds_tx, t1_holds) = channel();
    let (t1_go_tx, t1_go) = channel::<()>();
    let (t0_done_tx, t0_done) = channel();
    std::thread::scope(|s| {
        let sp = &sp;
        s.spawn(move || {
            let mut h = sp.handle().unwrap();
            h.critical(|h| {
                t0_pinned_tx.send(()).unwrap();
                t0_go.recv().unwrap();
                h.retire(x); // X unlinked by T0 in this critical section
            });
            t0_done_tx.send(()).unwrap();
        });
        t0_pinned.recv().unwrap();
        // The epoch advances once while T0 is pinned.
        sp.handle().unwrap().critical(|_| ());
        s.spawn(move || {
            let mut h = sp.handle().unwrap();
            h.critical(|_| {
                // T1 has read X (a pointer to it, before T0's unlink).
                t1_holds_tx.send(()).unwrap();
                t1_go.recv().unwrap();
            });
        });
        t1_holds.recv().unwrap();
        t0_go_tx.send(()).unwrap();
        t0_done.recv().unwrap();
        let freed = sp
            .audit_events()
            .iter()
            .any(|&(ev, b)| b == x && ev == BlockEvent::Free);
        t1_go_tx.send(()).unwrap();
        assert!(
            !freed,
            "node {x:#x} was freed while a thread that read it was still in its critical section"
        );
    });
}
