//! What the structures and the runtime leave in persistent memory when they
//! are made, read straight from the simulated pool and its crash point (no
//! schedule to explore: each check is one thread and a few operations).
//!
//! * CombQ's creation: its block holds a line per thread after line 0, no
//!   later allocation lands in it, and every line of it is durable when
//!   `create` returns (every Px86 crash image right after keeps the zeroed
//!   announce lines);
//! * SOFT's buckets: a key's chain is bucket `splitmix64(key) mod buckets`,
//!   the fixed mix its persistent layout is read back with; dropping a
//!   table frees its DRAM lists; and a DRAM node trimmed while another
//!   thread stays pinned is freed only after that thread has left;
//! * the runtime's creation zeroes its header, HELP and slots, and nothing
//!   past its region; on a pool too small it fails before writing;
//! * `Handle::alloc` returns a zeroed block, also one freed and reused;
//! * a few behaviours the scenarios do not reach: `CombQueue::at` on a block
//!   past the pool's end, an exchanger's creation, two threads meeting in it,
//!   an offer's kind durable while it waits, an exchange retried after a lost
//!   attempt and one that loses every attempt, SOFT's bad bucket counts, a
//!   table attached at the pool's end, a one-bucket table (keys sharing a
//!   sorted list), a delete cut by a thread crash, a handle's successive
//!   operations, `Runtime::open`'s thread-count check, and the clear mode a
//!   runtime reports;
//! * CombQ's dequeues, one thread after the enqueues, checked one by one,
//!   a waiting thread's own `served` word read past other states, a
//!   request served by another combiner while its thread takes the lock
//!   (held at the pause point `CombBeforeLock`), and a long run of two
//!   threads against a model, with retired blocks reused;
//! * an MSQ's block holding both its lines, whatever is allocated after it,
//!   and refused by recovery where its tail line would cross the pool's end
//!   or its list cycles or leaves the pool;
//!   recovery moving `head` past a delete that committed, and an enqueue
//!   writing back the unpersisted link it follows (MSQ-mmt-indel, -vol);
//! * a location deferred twice in a critical section written back once;
//!   the epoch advanced at every 16th critical section's end; SOFT's
//!   inserted nodes valid when their inserts return; a cyclic Treiber stack
//!   refused within the pool's node count;
//! * races forced by thread crashes that leave an operation pending while
//!   other threads act (`cut_pending`): an elimination-stack push or pop that
//!   fails on `top` twice and meets its partner in the exchanger its φ-node
//!   names, a SOFT insert that lost and is resumed after a delete of its key,
//!   and two SOFT inserts of one key, the second finding the first's node in
//!   *intend-to-insert*; an insert's recovery beside a line of 1s, and
//!   CASMEMENTOCLEAR.
//!
//! These are plain assertions (no PERDURE-CHECK row); the mutation tier runs
//! this binary (`tools/mutants_cargo.py`), and the checks were written for
//! mutants the crash explorer's scenarios did not notice
//! (`MUTANTS.md`, "cargo-mutants: the missed mutants").

use perdure_memento::ds::combq::{CombQMmt, CombQueue};
use perdure_memento::ds::soft::{SoftMmt, SoftOp, SoftTable};
use perdure_memento::{Checkpoint, ClockKind, Config, Memento, MementoError, NoMmt, Runtime};
use perdure_pm::heap::SET_CAPACITY;
use perdure_pm::sync::atomic::Ordering;
use perdure_pm::{Pool, Sim, SimOptions};

#[global_allocator]
static ALLOC: perdure_harness::heapcount::Counting = perdure_harness::heapcount::Counting;

use perdure_harness::heapcount::{live_bytes, watch_frees, watched_frees};

const BASE: u64 = 4096;
const LINE: u64 = 64;

fn pool(name: &str) -> Pool<Sim> {
    sized_pool(name, 1 << 22)
}

fn sized_pool(name: &str, size: u64) -> Pool<Sim> {
    Pool::volatile(name, size, Sim::new(SimOptions::default())).expect("pool")
}

fn config(threads: usize, heap_bytes: u64) -> Config {
    Config {
        threads,
        heap_bytes,
        clock: ClockKind::Counter,
    }
}

fn word(pool: &Pool<Sim>, off: u64) -> u64 {
    pool.word(off).expect("word").load(Ordering::Acquire)
}

/// Fills `[off, end)` of `pool` with a pattern no structure writes.
fn dirty(pool: &Pool<Sim>, off: u64, end: u64) {
    for w in (off..end).step_by(8) {
        pool.word(w)
            .expect("word")
            .store(0xA5A5_A5A5_A5A5_A5A5, Ordering::Relaxed);
    }
    pool.pwb(off, end - off);
    pool.pfence();
}

#[test]
fn combq_create_lays_out_a_durable_line_per_thread() {
    for threads in 1..=3usize {
        let p = sized_pool("combq-create", 1 << 24);
        let rt =
            Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(threads, 1 << 23)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let q = CombQueue::create(&mut h).expect("create");
        let off = q.offset();
        let end = off + LINE * (1 + threads as u64);
        // Right after `create`: every write to the block (the zeroed announce
        // lines, the published state, the thread count) is guaranteed in
        // every crash image.
        let cp = p.backend().capture();
        let choice = perdure_pm::sim::ImageChoice(vec![0; cp.unsettled_lines()]);
        for line in cp.image_lines(&choice) {
            if (off..end).contains(&line.offset) {
                assert_eq!(
                    line.guaranteed,
                    line.writes.len(),
                    "{threads} threads: line {:#x} of the queue block {off:#x}..{end:#x} is not durable after create",
                    line.offset
                );
            }
        }
        // The state and the sentinel, and every later block, lie outside the
        // queue block.
        let state = word(&p, off);
        let sentinel = word(&p, state + 8);
        let mut others = vec![state, sentinel];
        for size in [8, 16, 24, 32, 48, 64, 96, 128, 192, 256] {
            for _ in 0..4 {
                others.push(h.alloc(size).expect("alloc"));
            }
        }
        for o in others {
            assert!(
                !(off..end).contains(&o),
                "{threads} threads: block {o:#x} lies inside the queue block {off:#x}..{end:#x}"
            );
        }
        assert_eq!(word(&p, off + 8), threads as u64, "the thread count");
    }
}

/// Each thread's announce line is its own line of the queue block (line
/// `tid`, after the state's line 0): with the block carved right after a
/// line of the test's, filled with a pattern, and every thread enqueueing
/// once, the pattern must be intact and every value in the queue. (The
/// scenarios cannot see an announce line that lies outside the block while
/// nothing else uses the memory there.)
#[test]
fn combq_announce_lines_lie_in_the_queue_block() {
    for threads in 1..=3usize {
        let p = sized_pool("combq-announce", 1 << 24);
        let rt =
            Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(threads, 1 << 23)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let a = h.alloc(4 * LINE).expect("alloc");
        let q = CombQueue::create(&mut h).expect("create");
        let off = q.offset();
        assert!(off >= a + 4 * LINE, "the queue block {off:#x} after {a:#x}");
        dirty(&p, a, a + 4 * LINE);
        drop(h);
        for tid in 1..=threads {
            let mut h = rt.handle(tid).expect("handle");
            h.run_root(|h, m, _| {
                q.enqueue(10 + tid as u64, h, &mut m.insert)
                    .expect("enqueue");
                0
            });
        }
        for w in (a..a + 4 * LINE).step_by(8) {
            assert_eq!(
                word(&p, w),
                0xA5A5_A5A5_A5A5_A5A5,
                "{threads} threads: word {w:#x} before the queue block {off:#x} was written"
            );
        }
        let want: Vec<u64> = (1..=threads as u64).map(|t| 10 + t).collect();
        assert_eq!(q.contents(&p).expect("contents"), want, "{threads} threads");
    }
}

/// A two-thread runtime with a combining queue in pool `name`: `f` gets the
/// pool, the queue and a runner of one root operation (`Some(v)` enqueues
/// `v`, `None` dequeues) on a thread, which returns its result word.
fn on_combq(
    name: &str,
    f: impl FnOnce(&Pool<Sim>, &CombQueue, &(dyn Fn(usize, Option<u64>) -> u64 + Sync)),
) {
    let p = pool(name);
    let rt = Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let q = CombQueue::create(&mut rt.handle(1).expect("handle")).expect("create");
    let run = |tid: usize, op: Option<u64>| {
        let mut h = rt.handle(tid).expect("handle");
        h.run_root(|h, m, _| q.run(h, m, op).expect("operation"))
            .result
    };
    f(&p, &q, &run);
}

/// Dequeues take the values out in the order they were enqueued, across
/// threads, and report an empty queue once they are gone: thread 1
/// enqueues 11 and 12, thread 2 enqueues 21, then thread 2 dequeues four
/// times. (In the mutation tier, the `combq` explorer rows did not notice
/// a dequeue that takes nothing and reports the queue empty.)
#[test]
fn combq_dequeues_the_values_in_order() {
    on_combq("combq-dequeue", |p, q, run| {
        for (tid, v) in [(1, 11), (1, 12), (2, 21)] {
            assert_eq!(run(tid, Some(v)), 0, "thread {tid}'s enqueue of {v}");
        }
        assert_eq!(q.contents(p).expect("contents"), [11, 12, 21], "enqueued");
        let taken: Vec<Option<u64>> = (0..4)
            .map(|_| perdure_memento::ds::decode_opt(run(2, None)))
            .collect();
        assert_eq!(
            taken,
            [Some(11), Some(12), Some(21), None],
            "four dequeues after the enqueues of 11, 12 and 21"
        );
        assert!(
            q.contents(p).expect("contents").is_empty(),
            "the queue after every value was dequeued: {:?}",
            q.contents(p)
        );
    });
}

/// A thread waiting for its request reads its own `served` word of the
/// published state, whatever lies around the state block: thread 2
/// dequeues ten times from the empty queue (ten state blocks, side by side
/// in the heap, with thread 2's `served` at 1 to 10), then thread 1
/// enqueues 7 and dequeues. Each of thread 1's operations must take effect
/// before it returns: 7 in the queue after the enqueue, then taken out by
/// the dequeue. (Reading `s - served(1)`, the campaign's `combq.rs:299:25`
/// mutant, finds the state before, where thread 2's `served` is 9, and
/// returns before the request is served.)
#[test]
fn combq_a_waiting_thread_reads_its_own_served_word() {
    on_combq("combq-served", |p, q, run| {
        for i in 0..10 {
            assert_eq!(
                run(2, None),
                0,
                "thread 2's dequeue {i} from the empty queue"
            );
        }
        assert_eq!(run(1, Some(7)), 0, "thread 1's enqueue of 7");
        assert_eq!(q.contents(p).expect("contents"), [7], "after the enqueue");
        assert_eq!(
            perdure_memento::ds::decode_opt(run(1, None)),
            Some(7),
            "thread 1's dequeue after its enqueue"
        );
        assert!(
            q.contents(p).expect("contents").is_empty(),
            "after the dequeue"
        );
    });
}

/// A thread whose request another combiner serves between its wait loop's
/// check and its lock CAS returns that combiner's result for it: thread 1
/// dequeues from `[5, 6]` and is held at `CombBeforeLock` (its request
/// seen unserved); thread 2 enqueues 9, combining both requests, and
/// releases the lock; thread 1 then takes the lock, finds its request
/// served in the published state and must return 5 (the queue `[6, 9]`).
/// No persistence event lies between the check and the CAS, so only a
/// pause point stages this; the campaign's `combq.rs:351:32` mutant read
/// the result at `s - ret(tid)`, thread 1's result in the state before (0,
/// its enqueue's).
#[test]
fn combq_a_request_served_while_its_thread_takes_the_lock() {
    use perdure_memento::mutant::{set_hook, Point};
    use std::sync::mpsc::channel;
    on_combq("combq-served-meanwhile", |p, q, run| {
        for v in [5, 6] {
            assert_eq!(run(1, Some(v)), 0, "thread 1's enqueue of {v}");
        }
        let (held_tx, held) = channel();
        let (go_tx, go) = channel::<()>();
        let (passed_tx, passed) = channel();
        let got = std::thread::scope(|s| {
            let t1 = s.spawn(move || {
                set_hook(Some(Box::new(move |point| {
                    if point == Point::CombBeforeLock {
                        let _ = held_tx.send(());
                        let _ = go.recv();
                        let _ = passed_tx.send(());
                    }
                })));
                let r = run(1, None);
                set_hook(None);
                r
            });
            held.recv().expect("thread 1 reaches its lock CAS");
            assert_eq!(run(2, Some(9)), 0, "thread 2's enqueue of 9");
            go_tx.send(()).expect("release thread 1");
            let r = t1.join().expect("thread 1");
            (r, passed.try_iter().count())
        });
        assert_eq!(got.1, 1, "thread 1 passed its lock CAS once");
        assert_eq!(
            perdure_memento::ds::decode_opt(got.0),
            Some(5),
            "thread 1's dequeue, served by thread 2's combine"
        );
        assert_eq!(q.contents(p).expect("contents"), [6, 9]);
    });
}

/// A combining queue used long enough for the heap to hand out retired
/// blocks again keeps its model's contents: 300 rounds of two threads,
/// round `r` enqueuing `r % 7 + 1` values and dequeuing `r % 5 + 1`, each
/// dequeue's value and the contents after each round checked against a
/// `VecDeque`, then every value dequeued. (A combine that retires a node
/// still in the queue goes unseen until its memory is reused; the
/// campaign's `combq.rs:400:32` mutant, the walk's end read at
/// `block - HEAD`, retired the whole queue behind each combine, and no
/// other check ran a queue long enough.)
#[test]
fn combq_a_long_run_keeps_its_model() {
    on_combq("combq-long", |p, q, run| {
        let mut model = std::collections::VecDeque::new();
        let mut sentinels = std::collections::BTreeSet::new();
        let (mut reused, mut last) = (0, 0);
        let mut v = 0;
        for r in 0..300u64 {
            let tid = 1 + (r % 2) as usize;
            for _ in 0..=r % 7 {
                v += 1;
                assert_eq!(run(tid, Some(v)), 0, "round {r}: enqueue of {v}");
                model.push_back(v);
            }
            for _ in 0..=r % 5 {
                let got = perdure_memento::ds::decode_opt(run(3 - tid, None));
                assert_eq!(got, model.pop_front(), "round {r}: a dequeue");
            }
            let want: Vec<u64> = model.iter().copied().collect();
            assert_eq!(q.contents(p).expect("contents"), want, "after round {r}");
            // The published state's sentinel (state block: [prev, head, ..]);
            // one met again after the head moved on is a reused block.
            let head = word(p, word(p, q.offset()) + 8);
            if head != last && !sentinels.insert(head) {
                reused += 1;
            }
            last = head;
        }
        assert!(
            reused > 10,
            "{reused} sentinel blocks reused in 300 rounds: the run did not reach reclamation"
        );
        while let Some(want) = model.pop_front() {
            let got = perdure_memento::ds::decode_opt(run(1, None));
            assert_eq!(got, Some(want), "draining");
        }
        assert!(q.contents(p).expect("contents").is_empty(), "drained");
    });
}

/// An MSQ's block holds both its lines, head's and tail's: with the queue
/// made, eight blocks of each of the smaller classes (16 and 32 bytes)
/// taken after it and filled with a pattern, enqueues of 1, 2 and 3 and a
/// dequeue must give `[2, 3]` and leave the pattern intact, for each kind.
/// (The scenarios allocate nothing of those classes, so they cannot see a
/// queue block too small for its tail line: with the campaign's
/// `msq.rs:124:29` mutant, `2 / NODE` bytes, the block is a 16-byte one and
/// the tail word, 64 bytes on, lies in a block the heap hands out later.)
#[test]
fn msq_block_holds_its_head_and_tail_lines() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
        let p = sized_pool("msq-block", 1 << 24);
        let rt = Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let q = Msq::create(kind, &mut h).expect("create");
        let mut taken = Vec::new();
        for size in [16u64, 32] {
            for _ in 0..8 {
                let b = h.alloc(size).expect("alloc");
                dirty(&p, b, b + size);
                taken.push((b, size));
            }
        }
        let mut op = |o| {
            h.run_root(|h, m, _| q.run(h, m, o).expect("operation"))
                .result
        };
        for v in 1..=3 {
            assert_eq!(op(Some(v)), 0, "{kind:?}: enqueue {v}");
        }
        assert_eq!(
            perdure_memento::ds::decode_opt(op(None)),
            Some(1),
            "{kind:?}: the first dequeue"
        );
        assert_eq!(q.contents(&p).expect("contents"), [2, 3], "{kind:?}");
        for (b, size) in taken {
            for w in (b..b + size).step_by(8) {
                assert_eq!(
                    word(&p, w),
                    0xA5A5_A5A5_A5A5_A5A5,
                    "{kind:?}: word {w:#x} of a block taken after the queue block {:#x}",
                    q.offset()
                );
            }
        }
    }
}

/// `Msq::recover` checks that the whole queue block (head's line and
/// tail's) lies in the pool before it reads or writes it: a block whose
/// head line is a valid queue's but which starts one line before the
/// pool's end, so that its tail line would lie past it, is refused, for
/// each kind. (With the campaign's `msq.rs:170:38` mutant, a check of
/// `2 / NODE` bytes, 0, takes the block, and `recover` then writes the
/// tail past the pool's end.)
#[test]
fn msq_recover_refuses_a_block_past_the_pool_end() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
        let p = sized_pool("msq-at-end", 1 << 24);
        let rt = Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
        let q = Msq::create(kind, &mut rt.handle(1).expect("handle")).expect("create");
        Msq::at(kind, q.offset())
            .recover(&p)
            .expect("the queue itself");
        // Head's line copied to the pool's last line: the block needs two.
        let off = p.size() - LINE;
        for w in (0..LINE).step_by(8) {
            p.word(off + w)
                .expect("word")
                .store(word(&p, q.offset() + w), Ordering::Relaxed);
        }
        let recovered = std::panic::catch_unwind(|| Msq::at(kind, off).recover(&p));
        assert!(
            matches!(recovered, Ok(Err(_))),
            "{kind:?}: a queue block of 2 lines at {off:#x}, one line before the pool's end, \
             was not refused"
        );
    }
}

/// MSQ-mmt-indel's and -vol's start-up recovery moves `head` past a node
/// whose delete committed (its `repl` word durable) but whose CAS on
/// `head` did not persist (`Msq::recover`, "help_head"): a dequeue of
/// `[1, 2, 3]` is cut by a thread crash after each of its persistence
/// events in turn, and the crash image that keeps only what was guaranteed
/// persisted is recovered there. Its contents must be `[2, 3]` once the
/// sentinel's `repl` (word 2 of a node `[value, next, repl]`) is durable,
/// `[1, 2, 3]` before. (In normal execution LOADHELP moves such a head, so
/// a resumed operation hides a recovery that left it; with the campaign's
/// `msq.rs:171:22` mutant, `recover` helps the head of MSQ-mmt-cas, whose
/// words hold no `repl`, instead, and the image lists the dequeued 1.)
#[test]
fn msq_recover_moves_head_past_a_committed_delete() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    for kind in [MsqKind::Indel, MsqKind::Vol] {
        let mut committed_seen = false;
        for n in 0u64.. {
            let p = pool("msq-help-head");
            let rt =
                Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
            let mut h = rt.handle(1).expect("handle");
            let q = Msq::create(kind, &mut h).expect("create");
            for v in 1..=3 {
                h.run_root(|h, m, _| q.run(h, m, Some(v)).expect("enqueue"));
            }
            // The sentinel: head's offset (the low 45 bits of its word).
            let sentinel = word(&p, q.offset()) & ((1 << 45) - 1);
            let cut = cut_pending(
                &mut h,
                n,
                |h, m| q.run(h, m, None).expect("dequeue"),
                |p, _| persisted_image(p),
            );
            let Err(image) = cut else {
                assert!(
                    committed_seen,
                    "{kind:?}: no cut left the delete committed and head behind"
                );
                break;
            };
            let committed = word(&image, sentinel + 16) != 0;
            committed_seen |= committed;
            let want: Vec<u64> = if committed { vec![2, 3] } else { vec![1, 2, 3] };
            assert_eq!(
                Msq::at(kind, q.offset())
                    .contents(&image)
                    .expect("recover the image"),
                want,
                "{kind:?}: the image of a dequeue cut after event {n} (delete committed: \
                 {committed})"
            );
        }
    }
}

/// `Msq::recover` walks the list from `head` and refuses a corrupt one
/// (every node in the pool, no cycle), so that a damaged queue fails at
/// start-up instead of sending the threads, or `contents`, off the pool or
/// round a cycle: for each form, a queue of `[1]` whose node links back to
/// the sentinel, and one whose node links past the pool's end, must be
/// refused; and for the forms whose deletes replace the head (INSDEL's
/// `repl` word), a sentinel marked as replaced by itself, which
/// `help_head` would follow for ever without its step bound. (With the
/// campaign's `msq.rs:177:17` mutant, `while n == 0`, the walk never runs —
/// `head` is never null — and the first two are accepted; with
/// `msq.rs:214:19`'s `steps *= 1` the step bound never trips.)
#[test]
fn msq_recover_refuses_a_corrupt_list() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    use perdure_memento::word::repl_encode;
    within(30, "Msq::recover on a corrupt list", || {
        for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
            for corrupt in [
                "a cycle",
                "a node past the pool's end",
                "a replacement cycle",
            ] {
                if corrupt == "a replacement cycle" && kind == MsqKind::Cas {
                    continue; // plain CAS deletes: no `repl` word, no help_head
                }
                let p = pool("msq-corrupt");
                let rt = Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(1, 1 << 20))
                    .expect("runtime");
                let mut h = rt.handle(1).expect("handle");
                let q = Msq::create(kind, &mut h).expect("create");
                h.run_root(|h, m, _| q.run(h, m, Some(1)).expect("enqueue"));
                Msq::at(kind, q.offset())
                    .recover(&p)
                    .expect("the queue itself");
                // Head names the sentinel, the sentinel's `next` (word 1 of
                // a node, in every form here) the node holding 1: the low 45
                // bits of each word are the offset.
                let sentinel = word(&p, q.offset()) & ((1 << 45) - 1);
                let node = word(&p, sentinel + 8) & ((1 << 45) - 1);
                assert_eq!(word(&p, node), 1, "{kind:?}: the node holding 1");
                let (at, w) = match corrupt {
                    "a cycle" => (node + 8, word(&p, q.offset())),
                    "a node past the pool's end" => (node + 8, p.size()),
                    // The sentinel's `repl` word (word 2): deleted by thread
                    // 1, replaced by the sentinel itself.
                    _ => (sentinel + 16, repl_encode(1, word(&p, q.offset()))),
                };
                p.word(at).expect("word").store(w, Ordering::Relaxed);
                let recovered = std::panic::catch_unwind(|| Msq::at(kind, q.offset()).recover(&p));
                assert!(
                    matches!(recovered, Ok(Err(MementoError::CorruptStructure(_)))),
                    "{kind:?}: a list with {corrupt} was not refused ({recovered:?})"
                );
            }
        }
    });
}

/// `Msq::recover` re-establishes the tail invariant, tail := head, in the
/// queue's own tail word and writes nothing outside the queue's block: the
/// durable tail is a hint (its CAS is not written back), so after a crash it
/// may name any node the queue once had, and the threads resume from the
/// head. For each kind, a queue of `[1, 2, 3]` dequeued once (head names
/// the node of 1, now the sentinel; the tail names the node of 3) is
/// recovered: the tail word must name the head's node (MSQ-mmt-cas and
/// -indel; -vol's tail is in DRAM), the line before the block must be
/// unchanged, and an enqueue of 4 must give `[2, 3, 4]`.
/// (With the campaign's `msq.rs:189:46` mutant, `recover` writes the tail
/// at `off - TAIL`, over the line before the queue block, and leaves the
/// tail word naming the node of 3; the queue still works, as MSQ's enqueue
/// walks on from any node of the list, so no scenario saw it.)
#[test]
fn msq_recover_sets_the_tail_to_the_head_in_its_block() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    for kind in [MsqKind::Cas, MsqKind::Indel, MsqKind::Vol] {
        let p = pool("msq-recover-tail");
        let rt = Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let q = Msq::create(kind, &mut h).expect("create");
        let op = |h: &mut perdure_memento::Handle<'_, '_, Sim, QueueMmt>, o| {
            h.run_root(|h, m, _| q.run(h, m, o).expect("operation"))
                .result
        };
        for v in 1..=3 {
            assert_eq!(op(&mut h, Some(v)), 0, "{kind:?}: enqueue {v}");
        }
        assert_eq!(
            perdure_memento::ds::decode_opt(op(&mut h, None)),
            Some(1),
            "{kind:?}: the first dequeue"
        );
        // The low 45 bits of head's word (offset 0) and tail's (offset 64)
        // are the nodes they name.
        let off = q.offset();
        let name = perdure_memento::word::offset_of;
        let head = name(word(&p, off));
        // MSQ-mmt-vol keeps its tail in DRAM (`recover` sets that one).
        let durable_tail = kind != MsqKind::Vol;
        if durable_tail {
            assert_ne!(
                name(word(&p, off + LINE)),
                head,
                "{kind:?}: the tail before recovery"
            );
        }
        let line_before =
            || -> Vec<u64> { (off - LINE..off).step_by(8).map(|w| word(&p, w)).collect() };
        let before = line_before();
        Msq::at(kind, off).recover(&p).expect("recover");
        if durable_tail {
            assert_eq!(
                name(word(&p, off + LINE)),
                head,
                "{kind:?}: the tail word after recovery names another node than the head"
            );
        }
        assert_eq!(
            line_before(),
            before,
            "{kind:?}: recovery wrote the line before the queue block"
        );
        assert_eq!(op(&mut h, Some(4)), 0, "{kind:?}: enqueue 4");
        assert_eq!(q.contents(&p).expect("contents"), [2, 3, 4], "{kind:?}");
    }
}

/// An MSQ-mmt-indel or -vol enqueue persists the link it follows before it
/// links its own node after it: thread 1's enqueue of 1 is cut by a thread
/// crash after each of its persistence events in turn and left pending, so
/// that once its insert has set the link to its node (persist bit set, §4.1)
/// and not yet written it back, thread 2's enqueue of 2 finds that link;
/// LOAD must write it back before thread 2 links after it. Every crash
/// image that keeps only what was guaranteed persisted, taken after thread
/// 2's enqueue returned, must list 2 (after 1 if 1 is there). (With the
/// campaign's `word.rs:30:28` mutant, a persist bit of 0, LOAD takes the
/// unpersisted link for a persisted one and the image loses both values.)
#[test]
fn msq_enqueue_persists_the_link_it_follows() {
    use perdure_memento::ds::msq::{Msq, MsqKind, QueueMmt};
    for kind in [MsqKind::Indel, MsqKind::Vol] {
        for n in 0u64.. {
            let p = pool("msq-link");
            let rt =
                Runtime::<Sim, QueueMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
            let (mut h1, mut h2) = (rt.handle(1).expect("handle"), rt.handle(2).expect("handle"));
            let q = Msq::create(kind, &mut h1).expect("create");
            let cut = cut_pending(
                &mut h1,
                n,
                |h, m| q.run(h, m, Some(1)).expect("enqueue 1"),
                |_, _| (),
            );
            h2.run_root(|h, m, _| q.run(h, m, Some(2)).expect("enqueue 2"));
            let image = persisted_image(&p);
            let listed = Msq::at(kind, q.offset())
                .contents(&image)
                .expect("recover the image");
            assert!(
                listed == [2] || listed == [1, 2],
                "{kind:?}: thread 1's enqueue of 1 cut after event {n}, thread 2's enqueue of \
                 2 returned: the crash image lists {listed:?}"
            );
            if cut.is_ok() {
                assert!(
                    n > 2,
                    "{kind:?}: the enqueue had only {n} persistence events"
                );
                break;
            }
        }
    }
}

/// splitmix64's finaliser (Steele, Lea, Flood 2014), written out here to
/// pin the table's layout.
fn splitmix64(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn soft_buckets_follow_splitmix64() {
    // splitmix64 from state 0: its first output.
    assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    let p = pool("soft-buckets");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let buckets = 4096u64;
    let t = SoftTable::create(&mut h, buckets).expect("create");
    let keys = [0u64, 1, 2, 3, 42, 1000, 0xDEAD_BEEF, u64::MAX - 1];
    for (i, &k) in keys.iter().enumerate() {
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, i as u64)).expect("insert"));
        assert_eq!(done.result, 1, "insert {k}");
    }
    // The bucket heads follow the table's first line.
    let heads = t.offset() + LINE;
    let mut expected: Vec<u64> = keys
        .iter()
        .map(|&k| splitmix64(k) & (buckets - 1))
        .collect();
    expected.sort_unstable();
    expected.dedup();
    let used: Vec<u64> = (0..buckets)
        .filter(|b| word(&p, heads + 8 * b) != 0)
        .collect();
    assert_eq!(used, expected, "the buckets whose chains hold the keys");
}

/// `SoftTable::create` allocates a block of a line and a head word per
/// bucket (`HEADS + 8 · buckets` bytes), durable when it returns: every
/// write to it is guaranteed in every crash image, and no later block, of
/// any size, lies inside it (a block a word per bucket short would have
/// the last buckets' heads in the blocks carved after it).
#[test]
fn soft_create_lays_out_a_durable_head_per_bucket() {
    for buckets in [1u64, 16, 64, 512] {
        let p = sized_pool("soft-create", 1 << 24);
        let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, buckets).expect("create");
        let off = t.offset();
        let end = off + LINE + 8 * buckets;
        let cp = p.backend().capture();
        let choice = perdure_pm::sim::ImageChoice(vec![0; cp.unsettled_lines()]);
        for line in cp.image_lines(&choice) {
            if (off..end).contains(&line.offset) {
                assert_eq!(
                    line.guaranteed,
                    line.writes.len(),
                    "{buckets} buckets: line {:#x} of the table {off:#x}..{end:#x} is not durable after create",
                    line.offset
                );
            }
        }
        for size in [
            8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096,
        ] {
            for _ in 0..4 {
                let o = h.alloc(size).expect("alloc");
                assert!(
                    o + size <= off || o >= end,
                    "{buckets} buckets: a {size}-byte block at {o:#x} overlaps the table {off:#x}..{end:#x}"
                );
            }
        }
        assert_eq!(word(&p, off + 8), buckets, "the bucket count");
    }
}

/// The PM nodes on bucket `b`'s chain of table `t`, head first (a node's
/// `pnext` is its word 16; bit 63 is the Harris mark).
fn soft_chain(p: &Pool<Sim>, t: &SoftTable, b: u64) -> Vec<u64> {
    let mut chain = Vec::new();
    let mut cur = word(p, t.offset() + LINE + 8 * b);
    while cur != 0 {
        chain.push(cur);
        cur = word(p, cur + 16) & !(1 << 63);
    }
    chain
}

/// Chains longer than one node, in a one-bucket table (as
/// `soft_one_bucket_list_keeps_every_key`): `on_chain` finds every node and
/// walks the whole chain before it says a node is not there. Then a node in the
/// middle of the chain is left as a delete leaves it before its unlink (its
/// `del` word set; a crash image of a delete cut off there): `contents`,
/// which lists valid and undeleted nodes only, leaves it out; after a reopen,
/// `SoftTable::attach` unlinks it through its predecessor's `pnext` and
/// keeps every other node. The nodes' stamps come back with them: a delete
/// on the reattached table, cut by a thread crash after each of its
/// persistence events in turn, still takes effect once (recovery compares
/// the stamp its memento took from the DRAM node with the PM node's).
#[test]
fn soft_chains_of_several_nodes_survive_a_reattach() {
    use perdure_memento::quiet_thread_crashes;
    quiet_thread_crashes();
    let keys = [3u64, 1, 4, 5, 9];
    for n in 0u64.. {
        let p = pool("soft-chain");
        let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, 1).expect("create");
        for k in keys {
            let done =
                h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, 10 * k)).expect("insert"));
            assert_eq!(done.result, 1, "insert {k}");
        }
        let mut all: Vec<(u64, u64)> = keys.iter().map(|&k| (k, 10 * k)).collect();
        all.sort_unstable();
        let chain = soft_chain(&p, &t, 0);
        assert_eq!(chain.len(), keys.len(), "every node on the one chain");
        for &node in &chain {
            let key = word(&p, node);
            assert!(
                t.on_chain(&p, key, node).expect("on_chain"),
                "node {node:#x}"
            );
        }
        assert!(
            !t.on_chain(&p, 3, 8).expect("on_chain"),
            "a word that is no node: off the chain, after walking all of it"
        );
        // The middle node's delete recorded, its unlink not done.
        let (gone, kept) = (chain[2], chain[1]);
        let gone_key = word(&p, gone);
        p.word(gone + 32).expect("del").store(1, Ordering::SeqCst);
        all.retain(|&(k, _)| k != gone_key);
        assert_eq!(
            t.contents(&p).expect("contents"),
            all,
            "before the reattach: a node whose delete is recorded is not listed"
        );
        let off = t.offset();
        drop(t);
        drop(h);
        drop(rt);
        let rt =
            Runtime::<Sim, SoftMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
        let t = SoftTable::attach(&p, off).expect("attach");
        assert!(
            !t.on_chain(&p, gone_key, gone).expect("on_chain"),
            "the deleted node, unlinked"
        );
        let left: Vec<u64> = chain.iter().copied().filter(|&c| c != gone).collect();
        assert_eq!(
            soft_chain(&p, &t, 0),
            left,
            "every other node kept, in order"
        );
        let kept_key = word(&p, kept);
        assert!(
            keys.contains(&kept_key),
            "the predecessor's key: {kept_key}"
        );
        assert_eq!(word(&p, kept + 8), 10 * kept_key, "the predecessor's value");
        assert_eq!(t.contents(&p).expect("contents"), all, "after the reattach");
        // A delete of the kept node, cut after its n-th persistence event.
        let mut h = rt.handle(1).expect("handle");
        h.crash_after(Some(n));
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(kept_key)).expect("delete"));
        assert_eq!(done.result, 1, "delete {kept_key} cut after event {n}");
        all.retain(|&(k, _)| k != kept_key);
        assert_eq!(
            t.contents(&p).expect("contents"),
            all,
            "delete cut after event {n}"
        );
        if done.thread_crashes == 0 {
            assert!(n > 2, "the delete has persistence events to cut after");
            break;
        }
    }
}

/// One table's life: created, `n` keys inserted, half deleted, dropped.
fn soft_table_life(n: u64) {
    let p = pool("soft-drop");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let t = SoftTable::create(&mut h, 4).expect("create");
    for k in 0..n {
        h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, k)).expect("insert"));
    }
    for k in (0..n).step_by(2) {
        h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(k)).expect("delete"));
    }
    assert_eq!(t.contents(&p).expect("contents").len() as u64, n / 2);
    drop(t);
}

#[test]
fn soft_table_drop_frees_its_dram_lists() {
    // A first life warms up whatever the crates allocate once; the second
    // must give back everything it allocated (the pool, the runtime, and the
    // table's DRAM nodes: 200 of them, each more than 40 bytes).
    soft_table_life(8);
    let before = live_bytes();
    soft_table_life(200);
    let leaked = live_bytes() - before;
    assert!(
        leaked < 1024,
        "{leaked} bytes of DRAM not freed after a table's life"
    );
}

#[test]
fn soft_table_keeps_trimmed_dram_nodes_while_a_thread_stays_pinned() {
    // SOFT frees the DRAM nodes it trims through its own limbo
    // (retire_vnode): a node trimmed at epoch e is freed once the epoch has
    // reached e + 2, which it cannot while a thread pinned at e stays pinned
    // (a reader in that section may still hold the node). Thread 2 pins and
    // stalls; thread 1 deletes 64 keys, each delete trimming its node: no
    // node may be freed. Once thread 2 has left, later trims free them all.
    // A DRAM node is six words (key, value, PM node, stamp, deleter, next);
    // the second half shows the count watches the right size.
    const VNODE_BYTES: usize = 48;
    let p = pool("soft-limbo");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let t = SoftTable::create(&mut h, 4).expect("create");
    for k in 0..128 {
        h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, k)).expect("insert"));
    }
    assert!(!rt.collector().pin(2), "thread 2 was not pinned before");
    let epoch = rt.collector().epoch();
    watch_frees(VNODE_BYTES);
    for k in 0..64 {
        h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(k)).expect("delete"));
    }
    let early = watched_frees();
    assert!(
        rt.collector().epoch() <= epoch + 1,
        "the epoch passed a pinned thread"
    );
    assert_eq!(
        early, 0,
        "DRAM nodes freed while thread 2 stayed pinned at epoch {epoch}"
    );
    let mut h2 = rt.handle(2).expect("handle 2");
    h2.run_root(|_, _, _| 0); // thread 2 ends the section it had open
    for k in 64..128 {
        h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(k)).expect("delete"));
    }
    assert!(
        rt.collector().epoch() >= epoch + 2,
        "the epoch stood still after thread 2 left"
    );
    assert!(
        watched_frees() >= 64,
        "{} DRAM nodes freed after thread 2 left; the 64 trimmed while it was pinned are due",
        watched_frees()
    );
    assert!(t.contents(&p).expect("contents").is_empty());
}

#[test]
fn runtime_create_zeroes_its_slots_and_nothing_past_its_region() {
    let p = pool("runtime-create");
    let base = 1 << 20;
    let heap_bytes = 1 << 19;
    dirty(&p, p.data_offset(), p.size());
    let rt = Runtime::<Sim, NoMmt>::create(&p, base, &config(2, heap_bytes)).expect("runtime");
    let heap_base = word(&p, base + 32);
    assert!(
        heap_base > base + LINE && heap_base % 4096 == 0,
        "heap base {heap_base:#x}"
    );
    for w in (base + LINE..heap_base).step_by(8) {
        assert_eq!(word(&p, w), 0, "word {w:#x} of the header, HELP or slots");
    }
    for w in (heap_base + heap_bytes..p.size()).step_by(8) {
        assert_eq!(
            word(&p, w),
            0xA5A5_A5A5_A5A5_A5A5,
            "word {w:#x} past the runtime"
        );
    }
    for w in (p.data_offset()..base).step_by(8) {
        assert_eq!(
            word(&p, w),
            0xA5A5_A5A5_A5A5_A5A5,
            "word {w:#x} before the runtime"
        );
    }
    drop(rt);
}

#[test]
fn runtime_create_on_too_small_a_pool_writes_nothing() {
    let p = pool("runtime-too-small");
    let base = 1 << 20;
    dirty(&p, p.data_offset(), p.size());
    // Room for the heap, not for the page of slots before it.
    let heap_bytes = p.size() - base - 2048;
    let r = Runtime::<Sim, NoMmt>::create(&p, base, &config(2, heap_bytes));
    assert!(r.is_err(), "a runtime larger than its pool was created");
    for w in (p.data_offset()..p.size()).step_by(8) {
        assert_eq!(
            word(&p, w),
            0xA5A5_A5A5_A5A5_A5A5,
            "word {w:#x} written by a refused create"
        );
    }
}

fn alloc_zeroed<M: Memento>() {
    let p = sized_pool("alloc-zeroed", 1 << 24);
    let rt = Runtime::<Sim, M>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    for size in [16u64, 64, 256, 1024] {
        let a = h.alloc(size).expect("alloc");
        for w in (a..a + size).step_by(8) {
            assert_eq!(word(&p, w), 0, "fresh block {a:#x} of {size} bytes");
        }
        // Dirty the memory the next blocks of this size are carved from,
        // and a freed block: what `alloc` hands out next is zeroed anyway.
        dirty(&p, a, a + 4 * size);
        h.free_unpublished(a).expect("free");
        let next: Vec<u64> = (0..3).map(|_| h.alloc(size).expect("alloc")).collect();
        assert!(
            next.iter().any(|&b| (a..a + 4 * size).contains(&b)),
            "no block of {size} bytes after {a:#x} came from the dirtied memory: {next:x?}"
        );
        for b in next {
            for w in (b..b + size).step_by(8) {
                assert_eq!(word(&p, w), 0, "block {b:#x} of {size} bytes, word {w:#x}");
            }
        }
    }
}

#[test]
fn handle_alloc_zeroes_its_block() {
    alloc_zeroed::<NoMmt>();
}

#[test]
fn handle_free_unpublished_blocks_come_back_zeroed() {
    let p = sized_pool("free-unpublished", 1 << 24);
    let rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let n = 4 * SET_CAPACITY;
    let freed: Vec<u64> = (0..n).map(|_| h.alloc(64).expect("alloc")).collect();
    for &a in &freed {
        dirty(&p, a, a + 64);
        h.free_unpublished(a).expect("free");
    }
    // Completed sets of freed blocks are the slot's to allocate from again
    // (it keeps at least one before donating to the global stack).
    let again: Vec<u64> = (0..n).map(|_| h.alloc(64).expect("alloc")).collect();
    let reused = again.iter().filter(|b| freed.contains(b)).count();
    assert!(
        reused > 0,
        "none of {n} freed blocks came back in {n} allocations"
    );
    for b in again {
        for w in (b..b + 64).step_by(8) {
            assert_eq!(word(&p, w), 0, "block {b:#x}, word {w:#x}");
        }
    }
}

/// `TreiberStack::contents` refuses a cyclic list after reading about as
/// many nodes as the pool holds (`pool.size() / NODE`), not more: a stack of
/// 2 and 1 whose bottom node is relinked to the top one is reported
/// corrupt, and the simulator counts at most 2 loads per node the pool
/// could hold (a value and a link each).
#[test]
fn treiber_contents_refuses_a_cycle_within_the_pool_s_node_count() {
    use perdure_memento::ds::treiber::{StackMmt, TreiberStack};
    use perdure_memento::ds::NODE;
    use perdure_memento::word::offset_of;
    use perdure_memento::DetectableCasAtomic;
    const POOL: u64 = 2 << 20;
    let p = sized_pool("treiber-cycle", POOL);
    let rt = Runtime::<Sim, StackMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let s = TreiberStack::create(&mut h).expect("create");
    for v in [1, 2] {
        h.run_root(|h, m, _| s.run(h, m, Some(v)).expect("push"));
    }
    assert_eq!(s.contents(&p).expect("contents"), [2, 1]);
    let top = offset_of(DetectableCasAtomic::at(s.offset()).peek(&p).value);
    let bottom = offset_of(word(&p, top + 8));
    p.word(bottom + 8)
        .expect("word")
        .store(top, Ordering::Relaxed);
    let loads = p.backend().counts().loads;
    let r = s.contents(&p);
    let spent = p.backend().counts().loads - loads;
    assert!(
        matches!(r, Err(MementoError::CorruptStructure(_))),
        "a cyclic stack: {r:?}"
    );
    assert!(
        spent <= 2 * (POOL / NODE) + 8,
        "{spent} loads to refuse a cyclic stack in a pool of {} nodes",
        POOL / NODE
    );
}

/// `Handle::retire` hands a popped node back to the heap once no critical
/// section can hold it: 20,000 push/pop pairs on a Treiber stack (a 64-byte
/// node each, 1.25 MiB in all) stay within the first chunks of the heap.
#[test]
fn treiber_pops_give_their_nodes_back() {
    use perdure_memento::ds::treiber::{StackMmt, TreiberStack};
    let p = sized_pool("treiber-retire", 1 << 24);
    let rt = Runtime::<Sim, StackMmt>::create(&p, BASE, &config(1, 1 << 23)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let s = TreiberStack::create(&mut h).expect("create");
    let first = rt.heap().stats().chunks_used;
    for v in 0..20_000u64 {
        h.run_root(|h, m, _| s.run(h, m, Some(v)).expect("push"));
        h.run_root(|h, m, _| s.run(h, m, None).expect("pop"));
    }
    let used = rt.heap().stats().chunks_used;
    assert!(
        used <= first + 2,
        "20,000 popped nodes: {} chunks carved after the first {first}",
        used - first
    );
}

/// A delete that returned has made its unlink durable (SOFT's Harris
/// unlink, written back before the critical section ends, DEFERFLUSH of
/// §6.1): in the crash image right after it that keeps only what was
/// guaranteed persisted, the deleted node is off its chain, so the node can
/// be freed and reused without a durable chain reaching it.
#[test]
fn soft_delete_unlink_is_durable_when_it_returns() {
    use perdure_pm::sim::{ImageChoice, VolatileFill};
    let p = pool("soft-unlink");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let buckets = 4096u64;
    let t = SoftTable::create(&mut h, buckets).expect("create");
    for k in [7u64, 8, 9] {
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, k)).expect("insert"));
        assert_eq!(done.result, 1, "insert {k}");
        let node = word(&p, t.offset() + LINE + 8 * (splitmix64(k) & (buckets - 1)));
        assert!(t.on_chain(&p, k, node).expect("chain"), "key {k}'s node");
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(k)).expect("delete"));
        assert_eq!(done.result, 1, "delete {k}");
        let cp = p.backend().capture();
        let words = cp.materialize(
            &ImageChoice(vec![0; cp.unsettled_lines()]),
            VolatileFill::Zeroed,
        );
        let image = Pool::volatile_from_words(&words, Sim::default()).expect("image");
        assert!(
            !t.on_chain(&image, k, node).expect("chain"),
            "key {k}: the deleted node {node:#x} is still on its chain in a crash image after the delete returned"
        );
    }
}

/// Every node a SOFT insert links is valid when the insert returns: its
/// PM node's `ins` word is `INS_VALID` (SOFT's `create`, the insert's one
/// flush), for 16 inserts of keys in buckets of their own, each after a
/// block of its size class filled with `INS_VALID` words (so a PM node
/// placed after it has `INS_VALID` just before and around its own words).
#[test]
fn soft_inserted_nodes_are_valid() {
    use perdure_memento::ds::soft::INS_VALID;
    let p = pool("soft-valid");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let buckets = 4096u64;
    let t = SoftTable::create(&mut h, buckets).expect("create");
    for k in 1..=16u64 {
        let before = h.alloc(64).expect("alloc");
        for w in (before..before + 64).step_by(8) {
            p.word(w).expect("word").store(INS_VALID, Ordering::Relaxed);
        }
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, k)).expect("insert"));
        assert_eq!(done.result, 1, "insert {k}");
        let node = word(&p, t.offset() + LINE + 8 * (splitmix64(k) & (buckets - 1)));
        assert!(t.on_chain(&p, k, node).expect("chain"), "key {k}'s node");
        assert_eq!(
            word(&p, node + 24),
            INS_VALID,
            "key {k}'s node {node:#x}: ins"
        );
    }
}

/// The epoch advances at every 16th critical section a thread ends
/// (`ADVANCE_EVERY`), not at each: with one thread, 48 root operations that
/// retire nothing advance it three times, after the 16th, the 32nd and the
/// 48th.
#[test]
fn the_epoch_advances_at_every_sixteenth_critical_section() {
    let p = pool("epoch-cadence");
    let rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let mut last = rt.collector().epoch();
    let mut advanced_at = Vec::new();
    for op in 1..=48 {
        h.run_root(|_, _, _| 0);
        let now = rt.collector().epoch();
        if now != last {
            advanced_at.push(op);
        }
        last = now;
    }
    assert_eq!(
        advanced_at,
        [16, 32, 48],
        "the root operations after which the epoch advanced"
    );
}

/// A location deferred more than once in a critical section is written
/// back once at its end (DEFERFLUSH's set, §6.1; SOFT defers a `prev` again
/// at each retry of an unlink): a root operation deferring `x, y, x, y, x`
/// issues as many write-backs as one deferring `x, y`, two more than one
/// deferring nothing.
#[test]
fn a_flush_deferred_twice_is_written_back_once() {
    let p = pool("defer-twice");
    let rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let (x, y) = (h.alloc(64).expect("alloc"), h.alloc(64).expect("alloc"));
    let mut pwbs = |defer: &[u64]| {
        let before = p.backend().counts().pwb;
        h.run_root(|h, _, _| {
            for &loc in defer {
                h.defer_flush(loc);
            }
            0
        });
        p.backend().counts().pwb - before
    };
    let none = pwbs(&[]);
    let once = pwbs(&[x, y]);
    let repeated = pwbs(&[x, y, x, y, x]);
    assert_eq!(
        (once - none, repeated - none),
        (2, 2),
        "write-backs beyond an operation's own for x, y and for x, y, x, y, x"
    );
}

/// A thread's successive successful detectable CASes alternate their
/// parity (Algorithm 1 L8: the parity of OWN, toggled), also when the first
/// of them was cut off by a thread crash and finished by recovery: HELP's
/// invariant (§3.4), on which recovery's case ⑧ rests, is per parity. And
/// each leaves the location un-annotated when it returns. The
/// crash falls after each persistence event of the first CAS in turn, the
/// one between its memento's write-back (L35) and OWN's update (L36)
/// among them; recovery must then bring OWN up to the memento.
#[test]
fn cas_parities_alternate_across_a_thread_crash() {
    use perdure_memento::word::CasWord;
    use perdure_memento::{quiet_thread_crashes, CasMmt, DetectableCasAtomic};
    quiet_thread_crashes();
    for n in 0..12u64 {
        let p = pool("cas-parity");
        let rt = Runtime::<Sim, CasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let loc = DetectableCasAtomic::at(h.alloc(64).expect("alloc"));
        loc.init(&p, 0);
        p.pfence();
        let mut parities = Vec::new();
        for v in 0..3u64 {
            if v == 0 {
                h.crash_after(Some(n));
            }
            let mut parity = None;
            let done = h.run_root(|h, m, _| {
                let ok = loc.cas(v, v + 1, h, m).is_ok();
                parity = Some(m.peek(h.pool()).parity);
                u64::from(ok)
            });
            assert_eq!(done.result, 1, "crash after event {n}: cas({v}, {})", v + 1);
            parities.push(parity.expect("ran"));
            // Alone on the location, a CAS that returned has also taken its
            // annotation off (L37–L38, redone by recovery's case ⑥).
            assert_eq!(
                loc.peek(&p),
                CasWord::stable(v + 1),
                "crash after event {n}: the location after cas({v}, {})",
                v + 1
            );
        }
        assert!(
            parities.windows(2).all(|w| w[0] != w[1]),
            "crash after event {n} of the first CAS: parities {parities:?}"
        );
    }
}

/// Runs `f` on a thread of its own and fails if it has not returned within
/// `secs` seconds (a CAS retried on an expected value that never matches
/// spins forever; the spinning thread is left behind).
fn within(secs: u64, what: &str, f: impl FnOnce() + Send + 'static) {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let (tx, rx) = channel();
    let t = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(()) => {}
        Err(RecvTimeoutError::Disconnected) => match t.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread ended without reporting"),
        },
        Err(RecvTimeoutError::Timeout) => panic!("{what}: not done after {secs} s"),
    }
}

/// `CombQueue::at` checks that the whole queue block (a line per thread
/// after line 0) lies in the pool before it reads any announce line: a
/// block whose first two lines are a valid queue's but whose last announce
/// line would lie past the pool's end is refused.
#[test]
fn combq_at_refuses_a_block_past_the_pool_end() {
    let p = sized_pool("combq-at", 1 << 24);
    let rt = Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(2, 1 << 23)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let q = CombQueue::create(&mut h).expect("create");
    CombQueue::at(&p, q.offset()).expect("the queue itself");
    // Line 0 (the published state and the thread count, 2) copied to two
    // lines before the end: the block needs three.
    let off = p.size() - 2 * LINE;
    for w in [0, 8] {
        p.word(off + w)
            .expect("word")
            .store(word(&p, q.offset() + w), Ordering::Relaxed);
    }
    assert!(
        CombQueue::at(&p, off).is_err(),
        "a queue block of 3 lines at {off:#x}, 2 lines before the pool's end, was accepted"
    );
}

/// `CombQueue::at` walks the published state's list from `head` to `tail`
/// and refuses a list that never reaches `tail` (a cycle): a corrupt queue
/// must fail to open, not hang the recovery.
#[test]
fn combq_at_refuses_a_cyclic_list() {
    within(30, "CombQueue::at on a cyclic list", || {
        let p = sized_pool("combq-cycle", 1 << 22);
        let rt = Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(2, 1 << 21)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let q = CombQueue::create(&mut h).expect("create");
        let other = h.alloc(LINE).expect("alloc");
        let state = word(&p, q.offset());
        let sentinel = word(&p, state + 8);
        // The sentinel links to itself; the tail is a node it never reaches.
        p.word(sentinel + 8)
            .expect("word")
            .store(sentinel, Ordering::Relaxed);
        p.word(state + 16)
            .expect("word")
            .store(other, Ordering::Relaxed);
        assert!(
            CombQueue::at(&p, q.offset()).is_err(),
            "a queue whose list cycles before its tail was opened"
        );
    });
}

/// `CombQueue::at` bounds its walk of the list by the nodes the pool can
/// hold (`pool.size() / NODE` steps), so a cycle is refused after about a
/// million steps on a 64 MiB pool (its memory is touched only where the
/// runtime writes): a few tenths of a second. A bound of `pool.size() · NODE`
/// steps, 4,096 times as many, is not done after 10 s.
#[test]
fn combq_at_refuses_a_cyclic_list_within_the_pool_s_room() {
    within(
        10,
        "CombQueue::at on a cyclic list in a 64 MiB pool",
        || {
            let p = sized_pool("combq-cycle-wide", 1 << 26);
            let rt =
                Runtime::<Sim, CombQMmt>::create(&p, BASE, &config(2, 1 << 21)).expect("runtime");
            let mut h = rt.handle(1).expect("handle");
            let q = CombQueue::create(&mut h).expect("create");
            let other = h.alloc(LINE).expect("alloc");
            let state = word(&p, q.offset());
            let sentinel = word(&p, state + 8);
            p.word(sentinel + 8)
                .expect("word")
                .store(sentinel, Ordering::Relaxed);
            p.word(state + 16)
                .expect("word")
                .store(other, Ordering::Relaxed);
            assert!(
                CombQueue::at(&p, q.offset()).is_err(),
                "a queue whose list cycles before its tail was opened"
            );
        },
    );
}

/// `Exchanger::create` returns an exchanger whose slot, the word at its
/// `offset`, is durably empty: carved from memory that held a pattern, the
/// slot reads 0 in the crash image right after that keeps only what was
/// guaranteed persisted (the allocation's zeroing alone is not written
/// back).
#[test]
fn elim_exchanger_create_leaves_a_durable_empty_slot() {
    use perdure_memento::ds::elim::ElimStackMmt;
    use perdure_memento::ds::exchanger::Exchanger;
    use perdure_pm::sim::{ImageChoice, VolatileFill};
    let p = pool("exchanger-create");
    let rt = Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let a = h.alloc(LINE).expect("alloc");
    dirty(&p, a, a + 4 * LINE);
    let x = Exchanger::create(&mut h).expect("create");
    let slot = x.offset();
    assert!(
        (a + LINE..a + 4 * LINE).contains(&slot),
        "the slot {slot:#x} is not in the block carved after {a:#x}"
    );
    assert_eq!(x.peek(&p), None, "a new exchanger's slot");
    let cp = p.backend().capture();
    let words = cp.materialize(
        &ImageChoice(vec![0; cp.unsettled_lines()]),
        VolatileFill::Zeroed,
    );
    assert_eq!(
        words[(slot / 8) as usize],
        0,
        "the slot {slot:#x} in a crash image right after create"
    );
}

/// An exchange's patience that no run reaches (the exchanger tests).
const PATIENT: u64 = 1 << 50;

use perdure_memento::ds::encode_opt as opt;

/// Thread 1 offers 7 in a new exchanger and waits (a patience no run
/// reaches); once the offer is in the slot (or the waiter has returned),
/// `at_offer` runs, then thread 2 offers 8 and takes it. Returns the
/// taker's and the waiter's results and what `at_offer` returned.
fn meet_in_exchanger<R>(
    name: &str,
    at_offer: impl FnOnce(&Pool<Sim>, &perdure_memento::ds::exchanger::Exchanger) -> R,
) -> (u64, u64, R) {
    use perdure_memento::ds::elim::ElimStackMmt;
    use perdure_memento::ds::exchanger::Exchanger;
    let p = pool(name);
    let rt = Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let x = Exchanger::create(&mut rt.handle(1).expect("handle")).expect("create");
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let mut h = rt.handle(1).expect("handle");
            h.run_root(|h, m, _| {
                opt(x
                    .exchange(7, |_| true, PATIENT, h, &mut m.insert.xchg)
                    .expect("exchange"))
            })
            .result
        });
        // Wait until the offer is in the slot with its persist bit clear:
        // INSERT's L24 write-back and L25's clearing CAS are done, so the
        // slot's word is durable (§4.1's link-and-persist). Between L21 and
        // L25 the slot already names the offer but a crash image may still
        // lose it, and a capture there would fail `exchanger-kind` for a
        // reason that is not the code's.
        let clean = |p: &Pool<Sim>| {
            x.peek(p).is_some() && !perdure_memento::word::insdel_decode(word(p, x.offset())).0
        };
        while !clean(&p) && !waiter.is_finished() {
            std::thread::yield_now();
        }
        let seen = at_offer(&p, &x);
        let mut h = rt.handle(2).expect("handle");
        let taker = h
            .run_root(|h, m, _| {
                opt(x
                    .exchange(8, |_| true, PATIENT, h, &mut m.insert.xchg)
                    .expect("exchange"))
            })
            .result;
        (taker, waiter.join().expect("waiter"), seen)
    })
}

/// Two threads meet in an exchanger and swap their values
/// ([`meet_in_exchanger`]): each gets the other's value. The elimination
/// stack's scenarios never get two operations to meet.
#[test]
fn elim_exchanger_swaps_two_threads_values() {
    within(30, "two threads' exchange", || {
        let (taker, waited, ()) = meet_in_exchanger("exchanger-swap", |_, _| ());
        assert_eq!(taker, opt(Some(7)), "the taker's result");
        assert_eq!(waited, opt(Some(8)), "the waiter's result");
    });
}

/// An offer's `kind` (word 2 of the node `[value, repl, kind]`) is durable
/// before the slot names the node (`set_kind`'s write-back): while thread
/// 1's offer waits in the slot ([`meet_in_exchanger`]), the crash image
/// that keeps only what was guaranteed persisted must hold the node in the
/// slot and `WAITING` (1) as its kind. A node whose kind is lost reads as
/// `MATCHED`'s "finished exchange" after the crash: the next exchange
/// clears it, and the recovered waiter takes that exchange for its
/// partner. The second thread then takes the offer so that the waiter
/// returns. The scenarios never crash with an offer in the slot.
#[test]
fn elim_exchanger_offer_s_kind_is_durable_when_the_slot_names_it() {
    within(30, "an offer's kind in a crash image", || {
        use perdure_memento::word::insdel_decode;
        use perdure_pm::sim::{ImageChoice, VolatileFill};
        let (taker, waited, (offer, slot, words)) = meet_in_exchanger("exchanger-kind", |p, x| {
            let cp = p.backend().capture();
            let words = cp.materialize(
                &ImageChoice(vec![0; cp.unsettled_lines()]),
                VolatileFill::Zeroed,
            );
            (x.peek(p), x.offset(), words)
        });
        let Some((node, true)) = offer else {
            panic!("the waiter's offer is not in the slot: {offer:?}");
        };
        assert_eq!(
            insdel_decode(words[(slot / 8) as usize]).1,
            node,
            "the slot in a crash image while the offer {node:#x} waits"
        );
        assert_eq!(
            words[((node + 16) / 8) as usize],
            1,
            "the offer {node:#x}'s kind in a crash image while it waits in the slot"
        );
        assert_eq!(
            (taker, waited),
            (opt(Some(7)), opt(Some(8))),
            "the exchange"
        );
    });
}

/// An exchange whose attempt on the slot fails retries with what it finds
/// there (up to `TRIES` attempts), and clearing a finished exchange (a
/// `MATCHED` node) records the clearing in that node's `repl` word, durably
/// before the slot moves on (DELETE, L34–L37). Thread A (tid 2) offers 8
/// and waits; B (tid 1) sees A's offer and, inside its `accept`, waits until
/// C (tid 3) has taken it with 9, leaving its `MATCHED` node in the slot.
/// B's DELETE of A's offer then fails: B must retry, clear C's node and
/// offer 7 in its place, and C's next exchange (10) must take it. The
/// scenarios' exchanges never meet, let alone lose a race and retry.
#[test]
fn elim_exchanger_retries_on_a_finished_exchange_and_clears_it() {
    within(30, "an exchange retried after a lost attempt", || {
        use perdure_memento::ds::elim::ElimStackMmt;
        use perdure_memento::ds::exchanger::Exchanger;
        use perdure_memento::word::repl_encode;
        use perdure_pm::sim::{ImageChoice, VolatileFill};
        use std::sync::atomic::AtomicBool;
        let p = pool("exchanger-retry");
        let rt =
            Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(3, 1 << 20)).expect("runtime");
        let x = Exchanger::create(&mut rt.handle(1).expect("handle")).expect("create");
        let exchange = |tid: usize, value: u64, accept: &(dyn Fn(u64) -> bool + Sync)| {
            let mut h = rt.handle(tid).expect("handle");
            h.run_root(|h, m, _| {
                opt(x
                    .exchange(value, accept, PATIENT, h, &mut m.insert.xchg)
                    .expect("exchange"))
            })
            .result
        };
        let waiting = || matches!(x.peek(&p), Some((_, true)));
        let (in_accept, taken) = (AtomicBool::new(false), AtomicBool::new(false));
        std::thread::scope(|s| {
            let a = s.spawn(|| exchange(2, 8, &|_| true));
            while !waiting() && !a.is_finished() {
                std::thread::yield_now();
            }
            let b = s.spawn(|| {
                exchange(1, 7, &|_| {
                    in_accept.store(true, Ordering::SeqCst);
                    while !taken.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    true
                })
            });
            while !in_accept.load(Ordering::SeqCst) && !b.is_finished() {
                std::thread::yield_now();
            }
            let took = exchange(3, 9, &|_| true);
            let c_slot = x.peek(&p);
            taken.store(true, Ordering::SeqCst);
            while !waiting() && !b.is_finished() {
                std::thread::yield_now();
            }
            if !waiting() {
                let r = b.join().expect("B's exchange");
                panic!(
                    "B's first attempt lost to C, and B returned {r} (0: None) without \
                     offering in place of C's finished exchange"
                );
            }
            // B waits in the slot: read C's node's record, then let C take
            // B's offer (every thread returns before the checks).
            let (b_node, _) = x.peek(&p).expect("B's offer");
            let cp = p.backend().capture();
            let words = cp.materialize(
                &ImageChoice(vec![0; cp.unsettled_lines()]),
                VolatileFill::Zeroed,
            );
            let took_again = exchange(3, 10, &|_| true);
            let (rb, ra) = (b.join().expect("B"), a.join().expect("A"));
            assert_eq!(took, opt(Some(8)), "C takes A's offer");
            let Some((c_node, false)) = c_slot else {
                panic!("after C's exchange the slot holds {c_slot:?}, not C's node");
            };
            assert_eq!(
                words[((c_node + 8) / 8) as usize],
                repl_encode(1, b_node),
                "C's node {c_node:#x}, cleared by B's offer {b_node:#x}: its repl word in a \
                 crash image right after"
            );
            assert_eq!(took_again, opt(Some(7)), "C's second exchange");
            assert_eq!(rb, opt(Some(10)), "B's result");
            assert_eq!(ra, opt(Some(9)), "A's result");
        });
    });
}

/// An exchange makes at most `TRIES` (4) attempts on the slot, then gives
/// up (lock-freedom: it retries only when another thread's insert or
/// delete succeeded, a bounded number of times). B (tid 1) accepts the
/// offer it finds, and inside its `accept` waits until that offer has been
/// taken by a taker (tid 2) and a fresh offer made in its place (the
/// taker's `MATCHED` node cleared, tids 3 to 7 in turn): each of B's
/// DELETEs fails, and after the fourth B must return `None` without
/// another attempt. The last offer is then taken by the taker. The
/// scenarios' exchanges never meet; the retry check loses one attempt.
#[test]
fn elim_exchanger_gives_up_after_four_lost_attempts() {
    within(30, "an exchange that loses every attempt", || {
        use perdure_memento::ds::elim::ElimStackMmt;
        use perdure_memento::ds::exchanger::Exchanger;
        use std::sync::atomic::AtomicU64;
        const TRIES: u64 = 4;
        // Seven threads, each carving its nodes from a chunk of its own.
        let p = sized_pool("exchanger-tries", 1 << 24);
        let rt =
            Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(7, 1 << 23)).expect("runtime");
        let x = Exchanger::create(&mut rt.handle(1).expect("handle")).expect("create");
        let exchange = |tid: usize, value: u64, accept: &(dyn Fn(u64) -> bool + Sync)| {
            let mut h = rt.handle(tid).expect("handle");
            h.run_root(|h, m, _| {
                opt(x
                    .exchange(value, accept, PATIENT, h, &mut m.insert.xchg)
                    .expect("exchange"))
            })
            .result
        };
        let waiting = || matches!(x.peek(&p), Some((_, true)));
        // B's calls of `accept` so far, and how many of them may return.
        let (calls, released) = (AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            // Offer r holds 100 + r; the taker's take of it, 200 + r.
            let mut offers = vec![s.spawn(move || exchange(3, 100, &|_| true))];
            while !waiting() && !offers[0].is_finished() {
                std::thread::yield_now();
            }
            let b = s.spawn(|| {
                exchange(1, 7, &|_| {
                    let call = calls.fetch_add(1, Ordering::SeqCst);
                    while call < TRIES && released.load(Ordering::SeqCst) <= call {
                        std::thread::yield_now();
                    }
                    true
                })
            });
            let mut took = Vec::new();
            for round in 0..TRIES {
                while calls.load(Ordering::SeqCst) <= round && !b.is_finished() {
                    std::thread::yield_now();
                }
                took.push(exchange(2, 200 + round, &|_| true));
                let tid = 4 + round as usize;
                let o = s.spawn(move || exchange(tid, 101 + round, &|_| true));
                while !waiting() && !o.is_finished() {
                    std::thread::yield_now();
                }
                offers.push(o);
                released.store(round + 1, Ordering::SeqCst);
            }
            let rb = b.join().expect("B's exchange");
            // The last offer, unless B took it.
            let last = waiting().then(|| exchange(2, 300, &|_| true));
            let got: Vec<u64> = offers
                .into_iter()
                .map(|o| o.join().expect("an offer"))
                .collect();
            assert_eq!(
                (rb, calls.load(Ordering::SeqCst)),
                (opt(None), TRIES),
                "B lost {TRIES} attempts (each offer it accepted was taken before its \
                 DELETE) and must give up after them: its result (0: None) and its calls \
                 of accept"
            );
            let want_took: Vec<u64> = (0..TRIES).map(|r| opt(Some(100 + r))).collect();
            assert_eq!(took, want_took, "the taker's results");
            assert_eq!(last, Some(opt(Some(104))), "the take of the last offer");
            let mut want_got: Vec<u64> = (0..TRIES).map(|r| opt(Some(200 + r))).collect();
            want_got.push(opt(Some(300)));
            assert_eq!(got, want_got, "the offers' results");
        });
    });
}

/// `SoftTable::create` refuses a bucket count that is not a power of two
/// (a key's bucket is its hash masked with `buckets - 1`) or above
/// `MAX_BUCKETS`, before allocating anything.
#[test]
fn soft_create_refuses_bad_bucket_counts() {
    let p = pool("soft-create-bad");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    for buckets in [0u64, 3, 12, 2 * perdure_memento::ds::soft::MAX_BUCKETS] {
        assert!(
            SoftTable::create(&mut h, buckets).is_err(),
            "a table of {buckets} buckets was created"
        );
    }
    SoftTable::create(&mut h, perdure_memento::ds::soft::MAX_BUCKETS).expect("the largest table");
}

/// SOFT's DRAM lists are sorted by key (Harris): in a one-bucket table,
/// where every key shares the list, keys inserted out of order all land
/// (each before or after others), a second insert of each is refused, a
/// delete of an absent key (smaller than, between, or after the present
/// ones) removes nothing, a lookup finds each key and no absent or deleted
/// one (its search stops at a larger key), and the persistent contents
/// agree.
/// The scenarios' tables have a bucket per key, so their inserts always
/// append to an empty list.
#[test]
fn soft_one_bucket_list_keeps_every_key() {
    within(30, "one-bucket SOFT table", || {
        let p = pool("soft-one-bucket");
        let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, 1).expect("create");
        let mut run = |op: SoftOp| h.run_root(|h, m, _| t.run(h, m, op).expect("op")).result;
        let keys = [5u64, 3, 9, 1, 7];
        for &k in &keys {
            assert_eq!(run(SoftOp::Insert(k, 10 * k)), 1, "insert {k}");
        }
        for &k in &keys {
            assert_eq!(run(SoftOp::Insert(k, 0)), 0, "second insert of {k}");
        }
        for k in [4u64, 0, 6, 10] {
            assert_eq!(run(SoftOp::Delete(k)), 0, "delete of absent {k}");
        }
        for &k in &keys {
            assert_eq!(run(SoftOp::Lookup(k)), 10 * k + 1, "lookup {k}");
        }
        for k in [4u64, 0, 6, 10] {
            assert_eq!(run(SoftOp::Lookup(k)), 0, "lookup of absent {k}");
        }
        let mut expected: Vec<(u64, u64)> = keys.iter().map(|&k| (k, 10 * k)).collect();
        expected.sort_unstable();
        assert_eq!(t.contents(&p).expect("contents"), expected);
        for k in [3u64, 7] {
            assert_eq!(run(SoftOp::Delete(k)), 1, "delete {k}");
        }
        assert_eq!(
            t.contents(&p).expect("contents"),
            [(1, 10), (5, 50), (9, 90)]
        );
        for k in [3u64, 7] {
            assert_eq!(run(SoftOp::Lookup(k)), 0, "lookup of deleted {k}");
        }
    });
}

/// A SOFT delete cut off by a thread crash, after each of its persistence
/// events in turn, and finished by recovery: it returns `true`, the key is
/// gone, and its node is off the persistent chain when it returns (the
/// node is retired: a chain must not reach it). A crash after the result
/// was checkpointed replays the result, and the replay must still unlink.
#[test]
fn soft_delete_cut_by_a_thread_crash_unlinks_its_node() {
    use perdure_memento::quiet_thread_crashes;
    quiet_thread_crashes();
    let buckets = 4096u64;
    let k = 7u64;
    for n in 0..64u64 {
        let p = pool("soft-delete-crash");
        let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, buckets).expect("create");
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(k, 70)).expect("insert"));
        assert_eq!(done.result, 1, "insert {k}");
        let node = word(&p, t.offset() + LINE + 8 * (splitmix64(k) & (buckets - 1)));
        h.crash_after(Some(n));
        let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Delete(k)).expect("delete"));
        assert_eq!(done.result, 1, "crash after event {n}: delete {k}");
        assert_eq!(
            t.contents(&p).expect("contents"),
            [],
            "crash after event {n}"
        );
        assert!(
            !t.on_chain(&p, k, node).expect("chain"),
            "crash after event {n}: the deleted node {node:#x} is still on its chain"
        );
        if done.thread_crashes == 0 {
            assert!(n > 4, "the delete had only {n} persistence events");
            break;
        }
    }
}

/// A handle runs its thread's operations in sequence: each runs once, with
/// the next index and its own result, whether the handle knows the status
/// it committed last (its second and later operations) or reads it from the
/// thread's status word (the first operation of a handle taken after an
/// earlier handle of the thread was dropped).
#[test]
fn runtime_handles_run_each_operation_once_in_order() {
    let p = pool("runtime-handle");
    let rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut next = 0u64;
    for _ in 0..2 {
        let mut h = rt.handle(1).expect("handle");
        for _ in 0..3 {
            let mut ran = Vec::new();
            let done = h.run_root(|_, _, index| {
                ran.push(index);
                100 + index
            });
            assert_eq!(
                ran,
                [next],
                "operation {next}: the indices the body ran with"
            );
            assert_eq!(done.index, next, "operation {next}'s index");
            assert_eq!(done.result, 100 + next, "operation {next}'s result");
            next += 1;
        }
    }
}

/// `Runtime::open` takes every thread count `create` does, the largest
/// (`MAX_THREADS`) included, and refuses a header that records no thread
/// (a zero count with a valid checksum and a heap base where a runtime of
/// zero threads would put it).
#[test]
fn runtime_open_checks_the_thread_count() {
    use perdure_memento::word::MAX_THREADS;
    let p = sized_pool("runtime-open-max", 1 << 25);
    let rt =
        Runtime::<Sim, NoMmt>::create(&p, BASE, &config(MAX_THREADS, 1 << 22)).expect("runtime");
    drop(rt);
    let rt = Runtime::<Sim, NoMmt>::open_with(&p, BASE, ClockKind::Counter)
        .expect("a runtime of MAX_THREADS threads reopened");
    assert_eq!(rt.threads(), MAX_THREADS);
    drop(rt);
    let p = pool("runtime-open-zero");
    drop(Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime"));
    let mut words = match perdure_pm::meta::read(&p, BASE, word(&p, BASE)).expect("header") {
        perdure_pm::meta::Verdict::Valid(w) => w,
        _ => panic!("the runtime's header does not read back"),
    };
    assert_eq!(words[2], 1, "the header's thread count");
    words[2] = 0;
    perdure_pm::meta::write(&p, BASE, &words).expect("rewrite");
    assert!(
        Runtime::<Sim, NoMmt>::open_with(&p, BASE, ClockKind::Counter).is_err(),
        "a runtime header of zero threads was opened"
    );
}

/// PATIENCE follows the clock a runtime opens with: with the counter clock
/// it counts readings (`DEFAULT_PATIENCE_COUNTER`), with the TSC clock
/// ticks (`DEFAULT_PATIENCE_TSC`: `rdtscp` cycles, or nanoseconds of the
/// stand-in where the CPU has no `rdtscp`). A runtime that took the
/// TSC's patience under the counter clock would make every helping load
/// wait ten thousand times longer than the explorer's schedules assume.
#[test]
fn patience_follows_the_clock() {
    use perdure_memento::{DEFAULT_PATIENCE_COUNTER, DEFAULT_PATIENCE_TSC};
    let p = pool("runtime-patience");
    drop(Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime"));
    let rt = Runtime::<Sim, NoMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
    assert_eq!(rt.patience(), DEFAULT_PATIENCE_COUNTER);
    drop(rt);
    // `rdtscp`, or its monotonic stand-in where the CPU lacks it.
    let rt = Runtime::<Sim, NoMmt>::open_with(&p, BASE, ClockKind::Tsc).expect("reopened");
    assert_eq!(rt.patience(), DEFAULT_PATIENCE_TSC);
}

/// `Runtime::set_patience` sets the PATIENCE the runtime's helping loads
/// wait (`patience` reports it): 0, the help at once that
/// `mutants_memento`'s impatient runtimes and the explorer's `patience`
/// option ask for, then a large one and the counter clock's default. A
/// setter that kept the default would let those checks explore another
/// PATIENCE than they say, with every result still correct.
#[test]
fn runtime_patience_is_the_one_set() {
    use perdure_memento::DEFAULT_PATIENCE_COUNTER;
    let p = pool("runtime-set-patience");
    let mut rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    for patience in [0, 1_000_000, DEFAULT_PATIENCE_COUNTER] {
        rt.set_patience(patience);
        assert_eq!(rt.patience(), patience, "after set_patience({patience})");
    }
}

/// `tsc_available` reports what the CPU has (CPUID 0x8000_0001, EDX bit
/// 27), checked against the flags Linux lists in `/proc/cpuinfo`, a reading
/// of its own. The TSC clock reads `rdtscp` only where it says true (the
/// monotonic stand-in elsewhere), so a `tsc_available` that said false on
/// a CPU with `rdtscp` would quietly take the slower stand-in, and one that
/// said true on a CPU without it would fault on the first reading.
#[test]
fn tsc_available_matches_the_cpu_s_flags() {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
        let flags = cpuinfo
            .lines()
            .find(|l| l.starts_with("flags"))
            .expect("a flags line in /proc/cpuinfo");
        let listed = flags.split_whitespace().any(|f| f == "rdtscp");
        assert_eq!(
            perdure_memento::tsc_available(),
            listed,
            "tsc_available() against rdtscp in /proc/cpuinfo's flags"
        );
    }
}

/// `SoftTable::attach` checks the bucket count it reads from the table's
/// header: the largest (`MAX_BUCKETS`), which `create` makes, attaches; a
/// count that is not a power of two (3, within the bound) or past the bound
/// is refused (a key's bucket is its hash masked with `buckets - 1`).
#[test]
fn soft_attach_checks_the_bucket_count() {
    use perdure_memento::ds::soft::MAX_BUCKETS;
    let p = pool("soft-attach-buckets");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let t = SoftTable::create(&mut h, MAX_BUCKETS).expect("the largest table");
    let off = t.offset();
    drop(t);
    SoftTable::attach(&p, off).expect("a table of MAX_BUCKETS buckets attaches");
    for buckets in [3u64, MAX_BUCKETS - 1, 2 * MAX_BUCKETS] {
        p.word(off + 8)
            .expect("word")
            .store(buckets, Ordering::Relaxed);
        assert!(
            SoftTable::attach(&p, off).is_err(),
            "a table header of {buckets} buckets was attached"
        );
    }
}

/// `SoftTable::attach` checks that the table's block, a line and a head
/// word per bucket, lies in the pool, and no more: a copy of a 16-bucket
/// table's first line (magic, bucket count) whose block ends exactly at the
/// pool's end (its heads zero there: an empty table) attaches, and a copy
/// one line nearer the end, whose last heads would lie past it, is refused.
/// The scenarios attach tables that lie well inside their pools.
#[test]
fn soft_attach_takes_a_table_that_ends_at_the_pool_s_end() {
    let p = pool("soft-attach-end");
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let t = SoftTable::create(&mut h, 16).expect("create");
    let block = LINE + 8 * 16;
    for (off, fits) in [(p.size() - block, true), (p.size() - block + LINE, false)] {
        for w in [0, 8] {
            p.word(off + w)
                .expect("word")
                .store(word(&p, t.offset() + w), Ordering::Relaxed);
        }
        let attached = SoftTable::attach(&p, off);
        if fits {
            let copy = attached.unwrap_or_else(|e| {
                panic!(
                    "a 16-bucket table at {off:#x}, its block ending at the pool's end {:#x}, \
                     was refused: {e}",
                    p.size()
                )
            });
            let keys = copy.contents(&p).expect("contents");
            assert!(keys.is_empty(), "the copy at {off:#x} holds {keys:?}");
        } else {
            assert!(
                attached.is_err(),
                "a 16-bucket table at {off:#x}, its block ending a line past the pool's end \
                 {:#x}, was attached",
                p.size()
            );
        }
    }
}

/// A SOFT table of 16 buckets in a 64 MiB pool whose bucket 0 starts with
/// a node linked to itself (`pnext`, word 2 of `[key, value, pnext, ins,
/// del, stamp]`), neither deleted nor valid.
fn soft_with_a_self_linked_head(name: &str) -> (Pool<Sim>, SoftTable) {
    let p = sized_pool(name, 1 << 26);
    let t = {
        let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(1, 1 << 21)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let t = SoftTable::create(&mut h, 16).expect("create");
        let node = h.alloc(LINE).expect("alloc");
        for (w, v) in [(0, 5), (8, 0), (16, node), (24, 0), (32, 0), (40, 0)] {
            p.word(node + w).expect("word").store(v, Ordering::Relaxed);
        }
        // Bucket 0's head, after the table's first line.
        p.word(t.offset() + LINE)
            .expect("word")
            .store(node, Ordering::Relaxed);
        t
    };
    (p, t)
}

/// `SoftTable::attach` bounds its walk of the persistent chains by the
/// nodes the pool can hold (`pool.size() / NODE` steps), so a chain that
/// cycles is refused after about a million steps on a 64 MiB pool, as
/// `CombQueue::at` above: a bound of `pool.size() · NODE` steps, 4,096
/// times as many, is not done after 10 s. The cycle: a node whose `pnext`
/// (word 2 of SOFT's persistent node `[key, value, pnext, ins, del, stamp]`)
/// is itself, neither deleted nor valid (an insert still pending, which
/// `attach` leaves on the chain), at the head of bucket 0.
#[test]
fn soft_attach_refuses_a_cyclic_chain_within_the_pool_s_room() {
    within(
        10,
        "SoftTable::attach on a cyclic chain in a 64 MiB pool",
        || {
            let (p, t) = soft_with_a_self_linked_head("soft-cycle-wide");
            let attached = SoftTable::attach(&p, t.offset());
            assert!(
                matches!(&attached, Err(MementoError::CorruptStructure(m)) if m.contains("cycle")),
                "a table whose chain cycles was not refused as one: {:?}",
                attached.map(|_| ())
            );
        },
    );
}

/// `SoftTable::contents` bounds its walk as `attach` does (above): the same
/// self-linked node at the head of bucket 0 of a 64 MiB pool is reported as
/// a cycle within 10 s (about a million steps), where a bound of
/// `pool.size() · NODE` steps would still be walking.
#[test]
fn soft_contents_refuses_a_cyclic_chain_within_the_pool_s_room() {
    within(
        10,
        "SoftTable::contents on a cyclic chain in a 64 MiB pool",
        || {
            let (p, t) = soft_with_a_self_linked_head("soft-cycle-contents");
            let contents = t.contents(&p);
            assert!(
                matches!(&contents, Err(MementoError::CorruptStructure(m)) if m.contains("cycle")),
                "a chain that cycles was not reported as one: {contents:?}"
            );
        },
    );
}

/// `SoftTable::on_chain` bounds its walk as `attach` and `contents` do
/// (above): looking for a node that is not on bucket 0's self-linked chain
/// in a 64 MiB pool reports a cycle within 10 s (about a million steps),
/// where a bound of `pool.size() · NODE` steps would still be walking.
#[test]
fn soft_on_chain_refuses_a_cyclic_chain_within_the_pool_s_room() {
    within(
        10,
        "SoftTable::on_chain on a cyclic chain in a 64 MiB pool",
        || {
            let (p, t) = soft_with_a_self_linked_head("soft-cycle-on-chain");
            // A key of bucket 0 (of 16), and a word that is no node.
            let key = (0u64..).find(|&k| splitmix64(k) & 15 == 0).expect("a key");
            let found = t.on_chain(&p, key, 8);
            assert!(
                matches!(&found, Err(MementoError::CorruptStructure(m)) if m.contains("cycle")),
                "a chain that cycles was not reported as one: {found:?}"
            );
        },
    );
}

/// `Runtime::open` calibrates the clock past every timestamp in HELP
/// (§2.5 T_max), both parities of every thread's line: a timestamp a
/// helper wrote into HELP\[parity\]\[tid\] just before a crash is read by
/// the reopened runtime's CAS (`cas.rs`, L14's comparison with the
/// checkpointed one), so the clock must not start below it.
#[test]
fn runtime_open_reads_every_help_timestamp() {
    const T: u64 = 1 << 40;
    for tid in 1..=2usize {
        for parity in [false, true] {
            let p = pool("runtime-open-help");
            let rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
            let help = rt.help_off(parity, tid);
            p.word(help).expect("word").store(T, Ordering::Relaxed);
            p.pwb(help, 8);
            p.pfence();
            drop(rt);
            let rt =
                Runtime::<Sim, NoMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
            let now = rt.clock().now();
            assert!(
                now > T,
                "HELP[{}][{tid}] holds {T}, the reopened clock reads {now}",
                u8::from(parity)
            );
        }
    }
}

/// `Runtime::open` pins (for reclamation) exactly the threads whose root
/// operation was cut off: a thread whose memento holds a timestamp newer
/// than its operation's floor (the floor of the parity its status names).
/// Thread 2's second operation checkpoints and then fails (`try_run_root`'s
/// `Err`: pending, as after a crash); threads 1 and 3 complete one and two
/// operations, so their statuses name both parities of the floor. After a
/// reopen only thread 2 may be pinned: a pinned finished thread holds back
/// every reclamation until it runs again, an unpinned cut-off one lets
/// another thread's recovery free blocks its memento names. No scenario
/// looks at which threads a reopen pins.
#[test]
fn runtime_open_pins_exactly_the_threads_cut_off_in_an_operation() {
    let p = pool("runtime-open-pins");
    let rt = Runtime::<Sim, Checkpoint<1>>::create(&p, BASE, &config(3, 1 << 20)).expect("runtime");
    let op = |tid: usize, fail: bool| {
        let mut h = rt.handle(tid).expect("handle");
        let r = h.try_run_root(|h, m, _| {
            m.checkpoint(h, [7]);
            if fail {
                Err(())
            } else {
                Ok(0)
            }
        });
        assert_eq!(r.is_err(), fail);
    };
    op(1, false);
    op(2, false);
    op(2, true);
    op(3, false);
    op(3, false);
    drop(rt);
    let rt =
        Runtime::<Sim, Checkpoint<1>>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
    let pinned: Vec<bool> = (1..=3).map(|t| rt.collector().is_pinned(t)).collect();
    assert_eq!(
        pinned,
        [false, true, false],
        "pinned after the reopen, threads 1 (one operation done), 2 (its second cut off), 3 (two done)"
    );
}

/// The reclamation participant a runtime's collector hands out speaks for
/// the thread id it was claimed for (`Participant::tid`), an id claimed is
/// not handed out again until it is released, and a participant counts the
/// blocks it retired and has not freed (`Participant::pending`: what a full
/// crash would leak).
#[test]
fn collector_participants_speak_for_their_thread_and_count_their_retired_blocks() {
    let p = pool("collector-participants");
    let rt = Runtime::<Sim, Checkpoint<1>>::create(&p, BASE, &config(3, 1 << 20)).expect("runtime");
    let c = rt.collector();
    for tid in 1..=3 {
        let part = c.claim(tid).expect("no handle holds the thread id");
        assert_eq!(part.tid(), tid, "the participant claimed for thread {tid}");
        assert_eq!(
            part.pending(),
            0,
            "thread {tid}'s new participant has retired nothing"
        );
        assert!(c.claim(tid).is_none(), "thread {tid} claimed twice");
        c.release(part);
        let again = c.claim(tid).expect("the thread id, released");
        assert_eq!(
            again.tid(),
            tid,
            "the participant claimed again for thread {tid}"
        );
        c.release(again);
    }
    let mut part = c.claim(1).expect("thread 1");
    c.pin(1);
    c.retire(&mut part, 4096);
    c.retire(&mut part, 8192);
    assert_eq!(
        part.pending(),
        2,
        "two blocks retired in the section, neither free yet"
    );
    let mut freed = Vec::new();
    c.unpin(&mut part, |b| freed.push(b));
    assert_eq!(
        part.pending() + freed.len(),
        2,
        "each retired block pending or freed: {freed:?}"
    );
    c.release(part);
}

/// A thread's CAS parity survives a reopen when its memento was zeroed
/// (`ClearMode::Zero`): the operation's commit line records the thread's
/// last CAS (`own_floor`), the only record once the memento is cleared, and
/// the next CAS after `Runtime::open` takes the other parity.
#[test]
fn runtime_open_keeps_a_thread_s_cas_parity_past_a_zeroed_memento() {
    use perdure_memento::{CasMmt, ClearMode};
    for before in 1..=2u64 {
        let p = pool("runtime-own-floor");
        let mut rt =
            Runtime::<Sim, CasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
        rt.set_clear_mode(ClearMode::Zero);
        let mut h = rt.handle(1).expect("handle");
        let loc = cas_location(&mut h, &p);
        let mut parities = Vec::new();
        for v in 0..before {
            let done = h.run_root(|h, m, _| cas_noting_parity(&loc, v, h, m, &mut parities));
            assert_eq!(done.result, 1, "cas({v}, {})", v + 1);
        }
        drop(h);
        drop(rt);
        let rt = Runtime::<Sim, CasMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
        let mut h = rt.handle(1).expect("handle");
        let done = h.run_root(|h, m, _| cas_noting_parity(&loc, before, h, m, &mut parities));
        assert_eq!(
            done.result,
            1,
            "cas({before}, {}) after the reopen",
            before + 1
        );
        assert!(
            parities.windows(2).all(|w| w[0] != w[1]),
            "{before} CAS(es), a reopen, one more: parities {parities:?}"
        );
    }
}

/// A fresh detectable-CAS location holding 0, allocated by `h`.
fn cas_location<M: Memento>(
    h: &mut perdure_memento::Handle<'_, '_, Sim, M>,
    p: &Pool<Sim>,
) -> perdure_memento::DetectableCasAtomic {
    let loc = perdure_memento::DetectableCasAtomic::at(h.alloc(64).expect("alloc"));
    loc.init(p, 0);
    p.pfence();
    loc
}

/// `cas(v, v + 1)` through CAS memento `m`, noting the parity `m` then holds;
/// 1 if it succeeded.
fn cas_noting_parity<M: Memento>(
    loc: &perdure_memento::DetectableCasAtomic,
    v: u64,
    h: &mut perdure_memento::Handle<'_, '_, Sim, M>,
    m: &mut perdure_memento::CasMmt,
    parities: &mut Vec<bool>,
) -> u64 {
    let ok = loc.cas(v, v + 1, h, m).is_ok();
    parities.push(m.peek(h.pool()).parity);
    u64::from(ok)
}

/// An operation left pending across a reopen (its body returned an error
/// after its CAS took effect, so the root memento holds a CAS newer than the
/// commit line's `own_floor`) resumes: its CAS reports the success it had
/// (recovery's case ⑥, which also brings OWN up to the memento), with the
/// parity it took, and the next CAS takes the other parity.
#[test]
fn runtime_open_resumes_a_pending_cas_with_its_parity() {
    use perdure_memento::CasMmt;
    let p = pool("runtime-own-newest");
    let rt = Runtime::<Sim, CasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let loc = cas_location(&mut h, &p);
    let mut parities = Vec::new();
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 0, h, m, &mut parities));
    assert_eq!(done.result, 1, "cas(0, 1)");
    let pending = h.try_run_root(|h, m, _| {
        assert_eq!(
            cas_noting_parity(&loc, 1, h, m, &mut parities),
            1,
            "cas(1, 2)"
        );
        Err("left pending")
    });
    assert_eq!(pending.err(), Some("left pending"));
    drop(h);
    drop(rt);
    let rt = Runtime::<Sim, CasMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
    let mut h = rt.handle(1).expect("handle");
    let mut resumed = Vec::new();
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 1, h, m, &mut resumed));
    assert_eq!(done.result, 1, "cas(1, 2), resumed after the reopen");
    assert_eq!(
        resumed.last(),
        parities.last(),
        "the resumed CAS reports the parity it took"
    );
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 2, h, m, &mut parities));
    assert_eq!(done.result, 1, "cas(2, 3)");
    assert!(
        parities.windows(2).all(|w| w[0] != w[1]),
        "cas(0, 1), cas(1, 2) left pending, a reopen, cas(2, 3): parities {parities:?}"
    );
}

perdure_memento::memento! {
    /// A root memento with two CAS sub-mementos (`b` scanned after `a`).
    struct TwoCasMmt {
        a: perdure_memento::CasMmt,
        b: perdure_memento::CasMmt,
    }
}

/// `Runtime::open` takes OWN from the newest successful CAS of a root
/// memento whatever the order its sub-mementos are scanned in: the first
/// operation CASes through `b`, the second through `a`, so the memento
/// holds the older CAS in the sub-memento scanned last. After a reopen the
/// next CAS takes the parity after the second's.
#[test]
fn runtime_open_takes_own_from_the_newest_sub_memento() {
    let p = pool("runtime-own-sub");
    let rt = Runtime::<Sim, TwoCasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let loc = cas_location(&mut h, &p);
    let mut parities = Vec::new();
    for (v, second) in [(0u64, true), (1, false)] {
        let done = h.run_root(|h, m, _| {
            let sub = if second { &mut m.b } else { &mut m.a };
            cas_noting_parity(&loc, v, h, sub, &mut parities)
        });
        assert_eq!(done.result, 1, "cas({v}, {})", v + 1);
    }
    drop(h);
    drop(rt);
    let rt = Runtime::<Sim, TwoCasMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
    let mut h = rt.handle(1).expect("handle");
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 2, h, &mut m.a, &mut parities));
    assert_eq!(done.result, 1, "cas(2, 3) after the reopen");
    assert!(
        parities.windows(2).all(|w| w[0] != w[1]),
        "cas(0, 1) through b, cas(1, 2) through a, a reopen, cas(2, 3): parities {parities:?}"
    );
}

perdure_memento::memento! {
    /// A root memento for a loop of CASes through one CAS memento, a
    /// checkpoint between iterations (the loops of the crate's composites,
    /// `Handle::detectable_loop`).
    struct LoopCasMmt {
        pos: perdure_memento::Checkpoint<1>,
        cas: perdure_memento::CasMmt,
    }
}

/// The loop of the [`LoopCasMmt`] checks: iteration 0's `cas(1, 2)` must
/// succeed (its memento's parity noted), then iteration 1's `cas(7, 8)`
/// fails through the same CAS memento; 1 if it failed.
fn loop_success_then_failure(
    loc: &perdure_memento::DetectableCasAtomic,
    h: &mut perdure_memento::Handle<'_, '_, Sim, LoopCasMmt>,
    m: &mut LoopCasMmt,
    noted: &mut Vec<bool>,
) -> u64 {
    use std::ops::ControlFlow;
    h.detectable_loop(&mut m.pos, [0], |h, [i]| {
        if i == 0 {
            assert!(loc.cas(1, 2, h, &mut m.cas).is_ok(), "cas(1, 2)");
            noted.push(m.cas.peek(h.pool()).parity);
            ControlFlow::Continue([1])
        } else {
            let failed = loc.cas(7, 8, h, &mut m.cas).is_err();
            ControlFlow::Break(u64::from(failed))
        }
    })
}

/// A loop whose CAS memento holds a success and is then reused, after the
/// loop's checkpoint, by a CAS that fails (as Clevel's resize reuses its
/// `mark` and `swap` mementos from slot to slot): the failure's checkpoint
/// overwrites the memento of the thread's last successful CAS. If the
/// operation is cut off by a full crash then, `Runtime::open` must still
/// find that success for OWN (§3.1): the next successful CAS must take the
/// other parity, or HELP's invariant (§3.4), per parity, no longer holds
/// and recovery's case ⑧ can take a help of the earlier CAS for its own.
#[test]
fn runtime_open_keeps_own_when_a_failure_overwrites_a_success() {
    let p = pool("runtime-own-overwritten");
    let rt = Runtime::<Sim, LoopCasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let loc = cas_location(&mut h, &p);
    let mut parities = Vec::new();
    // A committed CAS: own_floor holds it.
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 0, h, &mut m.cas, &mut parities));
    assert_eq!(done.result, 1, "cas(0, 1)");
    // Iteration 0: cas(1, 2) succeeds; iteration 1: cas(7, 8) fails through
    // the same memento; the operation is left pending.
    let body = |h: &mut perdure_memento::Handle<'_, '_, Sim, LoopCasMmt>,
                m: &mut LoopCasMmt,
                noted: &mut Vec<bool>| loop_success_then_failure(&loc, h, m, noted);
    let pending = h.try_run_root(|h, m, _| {
        assert_eq!(body(h, m, &mut parities), 1, "cas(7, 8) fails");
        Err("left pending")
    });
    assert_eq!(pending.err(), Some("left pending"));
    drop(h);
    drop(rt);
    let rt = Runtime::<Sim, LoopCasMmt>::open_with(&p, BASE, ClockKind::Counter).expect("reopened");
    let mut h = rt.handle(1).expect("handle");
    // The pending operation resumes in iteration 1 and reports its failure.
    let done = h.run_root(|h, m, _| body(h, m, &mut Vec::new()));
    assert_eq!(done.result, 1, "cas(7, 8), resumed, fails again");
    let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 2, h, &mut m.cas, &mut parities));
    assert_eq!(done.result, 1, "cas(2, 3) after the reopen");
    assert!(
        parities.windows(2).all(|w| w[0] != w[1]),
        "cas(0, 1); cas(1, 2) then a failed cas(7, 8) through the same memento, left pending; \
         a reopen; cas(2, 3): parities {parities:?}"
    );
}

/// The loop of `runtime_open_keeps_own_when_a_failure_overwrites_a_success`
/// (cas(1, 2) succeeds, then cas(7, 8) fails through the same CAS memento),
/// cut off by a crash after each of its persistence events in turn, and
/// every Px86 crash image of each cut (up to 64 per cut, seeded sample
/// beyond) reopened: the resumed loop must report the failure with the
/// location at 2, the next operation's cas(2, 3) must succeed, and the
/// parities of cas(0, 1), cas(1, 2) and cas(2, 3) must alternate (HELP's
/// invariant, §3.4, is per parity). The cuts reach the failure path's
/// `keep_own_durable` (its store of `own_floor`, write-back and fence) and
/// the failure checkpoint after it. (Without `keep_own_durable` the check
/// fails at the cut after event 18, whose image keeps the failure
/// checkpoint and loses the loop's: parities `[true, false, false]`.)
#[test]
fn loop_reusing_a_cas_memento_survives_a_crash_at_every_event() {
    let body = loop_success_then_failure;
    let (mut cuts, mut images, mut exhaustive) = (0u64, 0u64, true);
    for n in 0u64.. {
        let p = pool("loop-cas-every-cut");
        let rt =
            Runtime::<Sim, LoopCasMmt>::create(&p, BASE, &config(2, 1 << 20)).expect("runtime");
        let mut h = rt.handle(1).expect("handle");
        let loc = cas_location(&mut h, &p);
        let mut first = Vec::new();
        let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 0, h, &mut m.cas, &mut first));
        assert_eq!(done.result, 1, "cas(0, 1)");
        let mut noted = Vec::new();
        let cut = cut_pending(
            &mut h,
            n,
            |h, m| body(&loc, h, m, &mut noted),
            |p, _| p.backend().capture(),
        );
        let Err(cp) = cut else {
            assert!(cuts > 10, "the loop completed after {n} events");
            break;
        };
        cuts += 1;
        let (coverage, choices) = cp.images(64, n);
        exhaustive &= matches!(coverage, perdure_pm::px86::Coverage::Exhaustive);
        for choice in choices {
            images += 1;
            let ip = image_pool(&cp, &choice);
            let rt = Runtime::<Sim, LoopCasMmt>::open_with(&ip, BASE, ClockKind::Counter)
                .expect("reopened");
            let mut h = rt.handle(1).expect("handle");
            let mut parities = noted.clone();
            let what = format!("a crash after event {n} of the loop, image {choice:?}");
            let done = h.run_root(|h, m, _| body(&loc, h, m, &mut parities));
            assert_eq!(done.result, 1, "{what}: the resumed loop's cas(7, 8)");
            let cas12 = *parities
                .last()
                .unwrap_or_else(|| panic!("{what}: cas(1, 2) never ran"));
            let mut last = Vec::new();
            let done = h.run_root(|h, m, _| cas_noting_parity(&loc, 2, h, &mut m.cas, &mut last));
            assert_eq!(done.result, 1, "{what}: cas(2, 3)");
            let got = h.run_root(|h, _, _| loc.load(h)).result;
            assert_eq!(got, 3, "{what}: the location");
            let order = [first[0], cas12, last[0]];
            assert!(
                order.windows(2).all(|w| w[0] != w[1]),
                "{what}: parities of cas(0, 1), cas(1, 2), cas(2, 3): {order:?}"
            );
        }
    }
    eprintln!(
        "loop_reusing_a_cas_memento: {cuts} cuts, {images} crash images ({})",
        if exhaustive {
            "every image of each cut"
        } else {
            "sampled at some cuts"
        }
    );
}

/// `run_root` reports the thread crashes an operation survived
/// (`Completed::thread_crashes`, what the property tests print beside a
/// failing step): none for an operation that runs through, one for an
/// operation cut by a thread crash at its first persistence event and run
/// again from its memento.
#[test]
fn run_root_counts_the_thread_crashes_it_survives() {
    use perdure_memento::{CasMmt, DetectableCasAtomic};
    let p = pool("run-root-crashes");
    let rt = Runtime::<Sim, CasMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let loc = DetectableCasAtomic::at(h.alloc(64).expect("alloc"));
    loc.init(&p, 0);
    p.pfence();
    let done = h.run_root(|h, m, _| u64::from(loc.cas(0, 1, h, m).is_ok()));
    assert_eq!(
        (done.result, done.thread_crashes),
        (1, 0),
        "cas(0, 1) without a crash: (result, thread crashes)"
    );
    h.crash_after(Some(0));
    let done = h.run_root(|h, m, _| u64::from(loc.cas(1, 2, h, m).is_ok()));
    h.crash_after(None);
    assert_eq!(
        (done.result, done.thread_crashes),
        (1, 1),
        "cas(1, 2) cut by a thread crash at its first event: (result, thread crashes)"
    );
}

/// A lone exchange (no partner ever comes, a short patience) cut by a
/// thread crash after each of its events, and re-run with its memento: it
/// must time out (`None`) whatever the event. INSERT's recovery (L17–L19)
/// reports the offer made iff the slot holds the node (or its `repl` is
/// set); a recovery that misreads it after the offer went in takes its own
/// waiting offer as a partner's.
#[test]
fn elim_exchanger_lone_offer_cut_by_a_crash_times_out() {
    use perdure_memento::ds::elim::ElimStackMmt;
    use perdure_memento::ds::exchanger::Exchanger;
    use perdure_memento::quiet_thread_crashes;
    quiet_thread_crashes();
    for n in 0..40u64 {
        let p = pool("exchanger-lone-crash");
        let rt =
            Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
        let x = Exchanger::create(&mut rt.handle(1).expect("handle")).expect("create");
        let mut h = rt.handle(1).expect("handle");
        h.crash_after(Some(n));
        let r = h
            .run_root(|h, m, _| {
                opt(x
                    .exchange(7, |_| true, 1000, h, &mut m.insert.xchg)
                    .expect("exchange"))
            })
            .result;
        assert_eq!(r, opt(None), "a lone exchange cut after event {n}");
    }
}

/// `Runtime::clear_mode` reports the mode `set_clear_mode` set: `Floor`
/// (the default) on a new runtime, `Zero` once asked for, `Floor` again.
/// The explorer's `PERDURE_CLEAR=zero` runs set it, and both modes are
/// correct (recovery handles both), so no scenario's result shows which
/// one a runtime uses.
#[test]
fn runtime_clear_mode_is_the_one_set() {
    use perdure_memento::ClearMode;
    let p = pool("clear-mode");
    let mut rt = Runtime::<Sim, NoMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    assert_eq!(rt.clear_mode(), ClearMode::Floor, "a new runtime's mode");
    rt.set_clear_mode(ClearMode::Zero);
    assert_eq!(
        rt.clear_mode(),
        ClearMode::Zero,
        "after set_clear_mode(Zero)"
    );
    rt.set_clear_mode(ClearMode::Floor);
    assert_eq!(
        rt.clear_mode(),
        ClearMode::Floor,
        "after set_clear_mode(Floor)"
    );
}

/// `quiet_thread_crashes` keeps an injected thread crash's unwind off stderr
/// and lets every other panic through. The hook is process-wide and
/// installed once, so the check runs in a child process (this test binary
/// again, this test only) whose stderr the parent reads.
#[test]
fn quiet_thread_crashes_silences_only_thread_crashes() {
    const CHILD: &str = "PERDURE_QUIET_HOOK_CHILD";
    if std::env::var_os(CHILD).is_some() {
        perdure_memento::quiet_thread_crashes();
        let crash = perdure_memento::ThreadCrash { tid: 7 };
        let _ = std::panic::catch_unwind(move || std::panic::panic_any(crash));
        let _ = std::panic::catch_unwind(|| panic!("an ordinary panic"));
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "quiet_thread_crashes_silences_only_thread_crashes",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary again");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child failed: {err}");
    assert!(
        err.contains("an ordinary panic"),
        "an ordinary panic must still be reported: {err}"
    );
    assert_eq!(
        err.matches("panicked at").count(),
        1,
        "only the ordinary panic may be reported, not the thread crash: {err}"
    );
}

/// Runs `h`'s next root operation (or resumes its pending one) with `op`,
/// cut by a thread crash after `n` of its persistence events and left
/// pending: the body hands the crash back as `try_run_root`'s `Err` instead
/// of letting `run_root` re-run it at once, so other threads act before the
/// crashed thread restarts (its next run resumes the operation in recovery
/// mode). `Err(at_cut(pool, memento))` if the cut came, `Ok(result)` if the
/// operation completed first.
fn cut_pending<M: Memento, R>(
    h: &mut perdure_memento::Handle<'_, '_, Sim, M>,
    n: u64,
    mut op: impl FnMut(&mut perdure_memento::Handle<'_, '_, Sim, M>, &mut M) -> u64,
    at_cut: impl Fn(&Pool<Sim>, &M) -> R,
) -> Result<u64, R> {
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    perdure_memento::quiet_thread_crashes();
    h.crash_after(Some(n));
    let r = h.try_run_root(
        |h, m, _| match catch_unwind(AssertUnwindSafe(|| op(h, m))) {
            Ok(v) => Ok(v),
            Err(crash) if crash.is::<perdure_memento::ThreadCrash>() => Err(at_cut(h.pool(), m)),
            Err(other) => resume_unwind(other),
        },
    );
    h.crash_after(None);
    r.map(|done| done.result)
}

/// The exchanger an elimination stack's attempt on `top` in `round` uses,
/// as an index among `slots`: `ElimStack::exchanger`'s hash of the φ-node
/// `[top, round]`, written out, so that a check can wait in the exchanger a
/// retrying operation goes to.
fn elim_slot(top: u64, round: u64, slots: u64) -> u64 {
    let mix = (top ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    (mix >> 32) % slots
}

/// Exchangers of the stacks in [`elim_retry`].
const ELIM_RETRY_SLOTS: u64 = 8;

/// How far [`elim_retry`] got.
enum ElimRetry {
    /// Thread 1's operation was cut after its last cut point: its φ-node
    /// `[top, round]` then, and the stack's top.
    Cut { phi: [u64; 2], top: u64 },
    /// It completed before its last cut point.
    Completed,
    /// Every cut was taken, and then it completed.
    Done {
        /// Thread 1's result, the partner's, and the stack's contents.
        results: (u64, u64),
        contents: Vec<u64>,
        /// The φ-node's top at the last cut and the exchangers of rounds 1,
        /// 0 and `u64::MAX` on it.
        top: u64,
        slots: [u64; 3],
    },
}

/// An elimination stack of [`ELIM_RETRY_SLOTS`] exchangers whose
/// operations wait 0 in an exchanger (a partner must already wait there).
/// Thread 3 pushes 1 (and 2 and 3 when thread 1 pops); thread 1 pushes 7
/// (`pushing`) or pops, cut by thread crashes after `cuts[0]` events, then
/// after `cuts[1]` events of its resumed run, and left pending after each
/// cut while thread 3 moves `top` (pushing 2 and 3, or popping 3 and 2).
/// Unless `finish`, it stops at the last cut. Otherwise, after the cuts, thread 2 offers in the exchanger that thread 1's φ-node
/// then names for round 1 — a pop's offer (0) for a push, a push of 7's
/// (8) for a pop — and waits; thread 1 resumes. If thread 2 still waits
/// after that, thread 3 takes its offer.
fn elim_retry(pushing: bool, cuts: &[u64], finish: bool) -> ElimRetry {
    use perdure_memento::ds::elim::{ElimStack, ElimStackMmt};
    use perdure_memento::ds::exchanger::Exchanger;
    use perdure_memento::DetectableCasAtomic;
    let p = pool("elim-retry");
    // A chunk of the heap for each thread and class.
    let rt = Runtime::<Sim, ElimStackMmt>::create(&p, BASE, &config(3, 1 << 21)).expect("runtime");
    let mut h3 = rt.handle(3).expect("handle");
    let mut s = ElimStack::create_with(&mut h3, ELIM_RETRY_SLOTS).expect("create");
    s.set_patience(0);
    let s = s;
    let mut op3 = |o: Option<u64>| h3.run_root(|h, m, _| s.run(h, m, o).expect("op")).result;
    let preload: &[u64] = if pushing { &[1] } else { &[1, 2, 3] };
    for &v in preload {
        op3(Some(v));
    }
    let top = || DetectableCasAtomic::at(s.offset()).peek(&p).value;
    let op1 = if pushing { Some(7) } else { None };
    let mut h1 = rt.handle(1).expect("handle");
    let mut phi = [0; 2];
    for (i, &n) in cuts.iter().enumerate() {
        let cut = cut_pending(
            &mut h1,
            n,
            |h, m| s.run(h, m, op1).expect("op"),
            |p, m| {
                if pushing {
                    m.insert.ctx.peek(p).0
                } else {
                    m.remove.ctx.peek(p).0
                }
            },
        );
        let Err(at_cut) = cut else {
            return ElimRetry::Completed;
        };
        phi = at_cut;
        if i + 1 == cuts.len() && !finish {
            return ElimRetry::Cut { phi, top: top() };
        }
        op3(if pushing { Some(2 + i as u64) } else { None });
    }
    let slot = elim_slot(phi[0], 1, ELIM_RETRY_SLOTS);
    let slots = [
        slot,
        elim_slot(phi[0], 0, ELIM_RETRY_SLOTS),
        elim_slot(phi[0], u64::MAX, ELIM_RETRY_SLOTS),
    ];
    let x = Exchanger::at(s.offset() + LINE * (1 + slot));
    let (offer, theirs_pushed) = if pushing { (0, true) } else { (8, false) };
    std::thread::scope(|sc| {
        let partner = sc.spawn(|| {
            let mut h = rt.handle(2).expect("handle");
            h.run_root(|h, m, _| {
                opt(x
                    .exchange(
                        offer,
                        |v| (v != 0) == theirs_pushed,
                        PATIENT,
                        h,
                        &mut m.insert.xchg,
                    )
                    .expect("exchange"))
            })
            .result
        });
        while !matches!(x.peek(&p), Some((_, true))) && !partner.is_finished() {
            std::thread::yield_now();
        }
        let r1 = h1.run_root(|h, m, _| s.run(h, m, op1).expect("op")).result;
        if matches!(x.peek(&p), Some((_, true))) {
            // Nobody took the partner's offer: take it, so that it returns.
            h3.run_root(|h, m, _| {
                opt(x
                    .exchange(100, |_| true, PATIENT, h, &mut m.remove.xchg)
                    .expect("exchange"))
            });
        }
        let r2 = partner.join().expect("partner");
        ElimRetry::Done {
            results: (r1, r2),
            contents: s.contents(&p).expect("contents"),
            top: phi[0],
            slots,
        }
    })
}

/// An elimination stack's operation that fails on `top` goes to the
/// exchanger its φ-node `[top, round]` names and eliminates with a partner
/// of the other kind waiting there ([`elim_retry`]): a push, cut by thread
/// crashes after its φ-nodes of rounds 0 and 1 while another thread pushes,
/// fails twice on `top`, finds nobody in round 0's exchanger, and in round
/// 1's meets a waiting pop, which takes 7; the push never reaches the stack.
/// A pop cut the same way while another thread pops meets a waiting push
/// of 7 and returns 7. No scenario's schedule gets an elimination (a push
/// and a pop within the exchanger's patience after both failed on `top`).
#[test]
fn elim_stack_retry_eliminates_in_the_exchanger_its_phi_names() {
    within(60, "retried elimination-stack operations", || {
        for pushing in [true, false] {
            let what = if pushing { "push 7" } else { "pop" };
            let mut cuts = Vec::new();
            for round in 0..2 {
                let n = (0..200u64)
                    .find(|&n| {
                        let mut tried = cuts.clone();
                        tried.push(n);
                        match elim_retry(pushing, &tried, false) {
                            ElimRetry::Cut { phi, top } => phi[0] == top,
                            ElimRetry::Completed => {
                                panic!("{what} completed before its round-{round} φ-node")
                            }
                            ElimRetry::Done { .. } => unreachable!("not finished"),
                        }
                    })
                    .unwrap_or_else(|| panic!("{what}: no cut after its round-{round} φ-node"));
                cuts.push(n);
            }
            let ElimRetry::Done {
                results,
                contents,
                top,
                slots,
            } = elim_retry(pushing, &cuts, true)
            else {
                panic!("{what}: completed before its cuts {cuts:?}");
            };
            assert!(
                slots[0] != 0 && slots[0] != slots[1] && slots[0] != slots[2],
                "the check wants round 1's exchanger on top {top:#x} apart from exchanger 0 \
                 and from rounds 0's and u64::MAX's: {slots:?}"
            );
            let (want_results, want_contents) = if pushing {
                ((0, opt(Some(8))), vec![3, 2, 1])
            } else {
                ((opt(Some(7)), opt(Some(0))), vec![1])
            };
            assert_eq!(
                (results, contents),
                (want_results, want_contents),
                "{what} cut after its φ-nodes of rounds 0 and 1 (cuts {cuts:?}), round 1's \
                 exchanger {} holding the partner's offer: (thread 1's result, the partner's), \
                 the stack",
                slots[0]
            );
        }
    });
}

/// A SOFT table of `buckets` buckets on a fresh pool whose runtime has
/// `threads` threads, handed to `f` with the pool and the runtime.
fn with_soft<R>(
    name: &str,
    threads: usize,
    buckets: u64,
    f: impl FnOnce(&Pool<Sim>, &Runtime<'_, Sim, SoftMmt>, &SoftTable) -> R,
) -> R {
    let p = pool(name);
    let rt = Runtime::<Sim, SoftMmt>::create(&p, BASE, &config(threads, 1 << 20)).expect("runtime");
    let t = SoftTable::create(&mut rt.handle(1).expect("handle"), buckets).expect("create");
    f(&p, &rt, &t)
}

/// The crash image of `p` now that keeps only what was guaranteed
/// persisted, as a pool.
fn persisted_image(p: &Pool<Sim>) -> Pool<Sim> {
    let cp = p.backend().capture();
    image_pool(
        &cp,
        &perdure_pm::sim::ImageChoice(vec![0; cp.unsettled_lines()]),
    )
}

/// Crash image `choice` of crash point `cp` as a pool (volatile lines zeroed).
fn image_pool(
    cp: &perdure_pm::sim::CrashPoint,
    choice: &perdure_pm::sim::ImageChoice,
) -> Pool<Sim> {
    let words = cp.materialize(choice, perdure_pm::sim::VolatileFill::Zeroed);
    Pool::volatile_from_words(&words, Sim::default()).expect("image")
}

/// `run` of SOFT operation `op` on table `t` by `h`: its result word.
fn soft_op(
    h: &mut perdure_memento::Handle<'_, '_, Sim, SoftMmt>,
    t: &SoftTable,
    op: SoftOp,
) -> u64 {
    h.run_root(|h, m, _| t.run(h, m, op).expect("op")).result
}

/// How [`soft_lost_insert`] ends: thread 1's result, the table's contents,
/// and whether thread 1's node is on the chain.
type LostInsertEnd = (u64, Vec<(u64, u64)>, bool);

/// Thread 1 inserts 7 (value 1) into a one-bucket SOFT table, cut by a
/// thread crash after `cuts[0]` events and left pending; thread 2 inserts
/// 7 (value 2); thread 1 resumes, cut after `cuts[1]` events of that run
/// and left pending; thread 2 deletes 7; thread 1 resumes and completes.
/// Unless `finish`, it stops at the last cut with thread 1's checkpoints
/// then, `[node, node's timestamp, result, result's timestamp]`
/// (`Err(None)`: it completed before that cut); otherwise [`LostInsertEnd`].
fn soft_lost_insert(cuts: &[u64], finish: bool) -> Result<LostInsertEnd, Option<[u64; 4]>> {
    with_soft("soft-lost-insert", 2, 1, |p, rt, t| {
        let (mut h1, mut h2) = (rt.handle(1).expect("handle"), rt.handle(2).expect("handle"));
        let mut node = 0;
        for (i, &n) in cuts.iter().enumerate() {
            let cut = cut_pending(
                &mut h1,
                n,
                |h, m| t.run(h, m, SoftOp::Insert(7, 1)).expect("insert"),
                |p, m| {
                    let ([node, _], node_ts) = m.insert.node.peek(p);
                    let ([result], result_ts) = m.insert.result.peek(p);
                    [node, node_ts, result, result_ts]
                },
            );
            let Err(at_cut) = cut else {
                return Err(None);
            };
            node = at_cut[0];
            if i + 1 == cuts.len() && !finish {
                return Err(Some(at_cut));
            }
            let (op, what) = if i == 0 {
                (SoftOp::Insert(7, 2), "thread 2's insert of 7")
            } else {
                (SoftOp::Delete(7), "thread 2's delete of 7")
            };
            assert_eq!(soft_op(&mut h2, t, op), 1, "{what} (cuts {cuts:?})");
        }
        let r1 = soft_op(&mut h1, t, SoftOp::Insert(7, 1));
        Ok((
            r1,
            t.contents(p).expect("contents"),
            t.on_chain(p, 7, node).expect("on_chain"),
        ))
    })
}

/// An insert that lost (its key appeared between its first find and its
/// link), cut by a thread crash after checkpointing `false`, returns
/// `false` when resumed, whatever happened to the key meanwhile, and its
/// node stays off the chain: recovery replays the checkpointed result
/// ([`soft_lost_insert`]: thread 1's insert is cut after its node
/// checkpoint, thread 2 inserts the key, thread 1's resumed insert loses,
/// checkpoints `false` and is cut again, thread 2 deletes the key). Its
/// node was discarded (retired) with the `false`: a re-run that decides
/// again finds the key absent, links that node and returns `true`, and
/// reclamation later frees a node the table holds. No scenario deletes a
/// key between a lost insert's crash and its re-run.
#[test]
fn soft_insert_resumed_after_losing_replays_its_false() {
    let mut cuts = Vec::new();
    for (what, decided) in [
        (
            "its node checkpoint",
            (|c: [u64; 4]| c[1] != 0) as fn([u64; 4]) -> bool,
        ),
        ("its result checkpoint", |c: [u64; 4]| c[3] != 0),
    ] {
        let n = (0..200u64)
            .find(|&n| {
                let mut tried = cuts.clone();
                tried.push(n);
                match soft_lost_insert(&tried, false) {
                    Err(Some(at_cut)) => decided(at_cut),
                    Err(None) => panic!("thread 1's insert completed before {what}"),
                    Ok(_) => unreachable!("not finished"),
                }
            })
            .unwrap_or_else(|| panic!("no cut after {what}"));
        cuts.push(n);
    }
    let Err(Some([node, _, result, _])) = soft_lost_insert(&cuts, false) else {
        panic!("thread 1's insert, cut after {cuts:?} events");
    };
    assert_eq!(result, 0, "thread 1's checkpointed result (cuts {cuts:?})");
    let (r1, contents, on_chain) = soft_lost_insert(&cuts, true).expect("finished");
    assert_eq!(
        (r1, contents, on_chain),
        (0, vec![], false),
        "thread 1's insert of 7, resumed after checkpointing false and thread 2's delete \
         of 7 (cuts {cuts:?}): its result, the table, its node {node:#x} on the chain"
    );
}

/// Two inserts of the same key race, the first cut by a thread crash after
/// each of its persistence events in turn and left pending while the
/// second runs: an insert that finds the key's node in *intend-to-insert*
/// helps it to *inserted* (its PM node made durably valid) before
/// returning `false`, so the crash image right after keeps the key; then
/// the first insert resumes, and exactly one of the two returns `true`.
/// Cut right after storing its node's `ins` (not yet written back), the
/// first insert has linked its DRAM node in *intend-to-insert*: without the
/// help, the second's `false` would rest on a key that a full crash then
/// loses. No scenario's schedule gets an insert to find another in
/// *intend-to-insert*.
#[test]
fn soft_insert_helps_an_intend_to_insert_node_before_returning_false() {
    for n in 0u64.. {
        let completed = with_soft("soft-insert-race", 2, 1, |p, rt, t| {
            let (mut h1, mut h2) = (rt.handle(1).expect("handle"), rt.handle(2).expect("handle"));
            let insert1 = SoftOp::Insert(7, 1);
            let cut = cut_pending(
                &mut h1,
                n,
                |h, m| t.run(h, m, insert1).expect("op"),
                |_, _| (),
            );
            let r2 = soft_op(&mut h2, t, SoftOp::Insert(7, 2));
            let want = vec![(7, if r2 == 1 { 2 } else { 1 })];
            let image = persisted_image(p);
            let attached = SoftTable::attach(&image, t.offset()).expect("attach the image");
            assert_eq!(
                attached.contents(&image).expect("contents"),
                want,
                "a crash image after thread 2's insert returned {r2}, thread 1's cut after \
                 event {n}"
            );
            let r1 = match cut {
                Ok(r1) => r1,
                Err(()) => soft_op(&mut h1, t, insert1),
            };
            assert_eq!(
                (r1 + r2, t.contents(p).expect("contents")),
                (1, want),
                "thread 1's insert cut after event {n}: inserts that returned true, the table"
            );
            cut.is_ok()
        });
        if completed {
            assert!(n > 5, "the insert had only {n} persistence events");
            break;
        }
    }
}

/// An insert's recovery reads its own node's `ins` and `del` words,
/// whatever the line before the node holds: an insert cut by a thread
/// crash after each of its persistence events in turn, re-run at once,
/// returns `true` and the key is in the table, with every word of the line
/// allocated just before its node reading 1 (`INS_VALID`).
#[test]
fn soft_insert_recovery_reads_its_own_node() {
    for n in 0u64.. {
        let completed = with_soft("soft-insert-neighbour", 1, 1, |p, rt, t| {
            let mut h = rt.handle(1).expect("handle");
            let before = h.alloc(LINE).expect("alloc");
            for w in (before..before + LINE).step_by(8) {
                p.word(w).expect("word").store(1, Ordering::Relaxed);
            }
            p.pwb(before, LINE);
            p.pfence();
            h.crash_after(Some(n));
            let done = h.run_root(|h, m, _| t.run(h, m, SoftOp::Insert(7, 70)).expect("insert"));
            h.crash_after(None);
            assert_eq!(
                (done.result, t.contents(p).expect("contents")),
                (1, vec![(7, 70)]),
                "insert of 7 cut after event {n}: its result, the table"
            );
            if done.thread_crashes == 0 {
                assert_eq!(
                    soft_chain(p, t, 0),
                    [before + LINE],
                    "the node follows the line of 1s"
                );
            }
            done.thread_crashes == 0
        });
        if completed {
            assert!(n > 5, "the insert had only {n} persistence events");
            break;
        }
    }
}

/// CASMEMENTOCLEAR (Algorithm 1, L41–L44): a CAS memento cleared after its
/// CAS holds the cleared word (timestamp 0, no failure, even), and the
/// crash image after the operation that keeps only what was guaranteed
/// persisted holds it too. No composite clears a CAS memento (the runtime
/// clears whole root mementos itself), so nothing else calls it.
#[test]
fn cas_memento_clear_resets_it_durably() {
    use perdure_memento::word::CasTs;
    use perdure_memento::CasMmt;
    let p = pool("cas-clear");
    let rt = Runtime::<Sim, CasMmt>::create(&p, BASE, &config(1, 1 << 20)).expect("runtime");
    let mut h = rt.handle(1).expect("handle");
    let loc = cas_location(&mut h, &p);
    let mut at = 0;
    let mut before = CasTs::CLEAR;
    let done = h.run_root(|h, m, _| {
        let ok = loc.cas(0, 1, h, m).is_ok();
        before = m.peek(h.pool());
        m.clear(h);
        at = m.offset();
        u64::from(ok)
    });
    assert_eq!(done.result, 1, "cas(0, 1)");
    assert_ne!(before.ts, 0, "the memento of the CAS, before the clear");
    assert_eq!(
        (
            CasTs::decode(word(&p, at)),
            CasTs::decode(word(&persisted_image(&p), at))
        ),
        (CasTs::CLEAR, CasTs::CLEAR),
        "the CAS memento after the clear: in memory, in a crash image after the operation"
    );
}

/// Every composite memento's persistent layout (the `memento!` macro's
/// offsets, `Checkpoint`'s stride) rounds offsets up with `align_up`: an
/// offset already aligned stays, any other goes to the next multiple, so a
/// pool written by one build is read at the same offsets by the next.
#[test]
fn memento_layouts_round_offsets_up_to_their_alignment() {
    use perdure_memento::__align_up as up;
    let got = [
        up(0, 64),
        up(1, 64),
        up(64, 64),
        up(65, 64),
        up(24, 8),
        up(25, 8),
    ];
    assert_eq!(got, [0, 64, 64, 128, 24, 32]);
}
