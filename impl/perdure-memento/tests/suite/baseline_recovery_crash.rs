//! Power-loss crashes of the baseline queues (DurableQ and LogQ, the seed's
//! comparison points, `src/baseline/`), and second crashes inside their
//! recovery: the baselines' own unit tests crash inside operations; here the
//! recovery itself is crashed too, and the second recovery must give the
//! same queue.
//!
//! One thread creates the queue, enqueues 1..=6, then dequeues three, on
//! the Px86 simulator. Every crash point of the run is taken, up to 2 images
//! each. An image of a point inside the creation must open as the empty
//! queue or be refused; any other is recovered (`open`) with a crash point
//! after every persistence event of the recovery (2 images each) and
//! recovered again. After every recovery the queue must hold
//! consecutive values whose front and back agree with the operations that
//! had completed (the one in flight may or may not have taken effect), and
//! DurableQ's per-thread returned-value record must name the last dequeue
//! that took effect (or say the one in flight is pending), and LogQ's
//! recovery must report the thread's last operation that took effect, with
//! its number and result.
//! Prints the rows `explore:baseline-durableq-recovery-crash` and
//! `explore:baseline-logq-recovery-crash`.

use perdure_memento::baseline::{DurableQueue, LogQueue, QueueConfig, Recovered, Returned};
use perdure_memento::MementoError;
use perdure_pm::sim::{CrashPoint, ImageChoice, SimModel, VolatileFill};
use perdure_pm::{Pool, Sim, SimOptions};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

const BASE: u64 = 4096;
const ENQ: u64 = 6;
const DEQ: u64 = 3;

fn cfg() -> QueueConfig {
    QueueConfig {
        threads: 2,
        heap_bytes: 512 << 10,
    }
}

fn options() -> SimOptions {
    SimOptions {
        model: SimModel::Px86,
        ..SimOptions::default()
    }
}

/// What the test needs of a baseline queue: the workload (one thread,
/// `done(Created)` once the queue exists, then `done(Enqueued)` and
/// `done(Dequeued)` after each operation) and the contents after a recovery.
trait Baseline {
    const NAME: &'static str;
    fn workload(pool: &Pool<Sim>, done: &dyn Fn(Done));
    fn recovered(pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError>;
    /// After a recovery of the queue whose contents are `c` (`taken`
    /// dequeues took effect), what the thread's own record says of its last
    /// dequeue, checked: `Err` if it disagrees. Nothing to check by default.
    fn own_record(pool: &Pool<Sim>, taken: u64, in_flight_deq: bool) -> Result<(), String> {
        let _ = (pool, taken, in_flight_deq);
        Ok(())
    }
}

/// Progress the workload reports.
#[derive(Clone, Copy)]
enum Done {
    Created,
    Enqueued,
    Dequeued,
}

struct Durable;
struct Log;

impl Baseline for Durable {
    const NAME: &'static str = "durableq";
    fn workload(pool: &Pool<Sim>, done: &dyn Fn(Done)) {
        let q = DurableQueue::create(pool, BASE, &cfg()).unwrap();
        done(Done::Created);
        let mut h = q.handle(1).unwrap();
        for v in 1..=ENQ {
            h.enqueue(v).unwrap();
            done(Done::Enqueued);
        }
        for v in 1..=DEQ {
            assert_eq!(h.dequeue().unwrap(), Some(v));
            done(Done::Dequeued);
        }
    }
    fn recovered(pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError> {
        DurableQueue::open(pool, BASE)?.contents()
    }
    /// DurableQ's `returnedValues[1]` block (read after `recovered`, on the
    /// recovered pool): the value of the last dequeue that took effect
    /// (values are 1, 2, ... in order, so the `taken`th), or `Pending` when
    /// the dequeue in flight had allocated its block and not taken effect,
    /// or `NoDequeue` before the first.
    fn own_record(pool: &Pool<Sim>, taken: u64, in_flight_deq: bool) -> Result<(), String> {
        let q = DurableQueue::open(pool, BASE).map_err(|e| format!("reopen: {e}"))?;
        let r = q.returned(1).map_err(|e| format!("returned(1): {e}"))?;
        let ok = match r {
            Returned::Value(v) => v == taken,
            Returned::Pending => in_flight_deq,
            Returned::NoDequeue => taken == 0,
            Returned::Empty => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "returned(1) is {r:?} with {taken} dequeues taken effect{}",
                if in_flight_deq { ", one in flight" } else { "" }
            ))
        }
    }
}

impl Baseline for Log {
    const NAME: &'static str = "logq";
    fn workload(pool: &Pool<Sim>, done: &dyn Fn(Done)) {
        let q = LogQueue::create(pool, BASE, &cfg()).unwrap();
        done(Done::Created);
        let mut h = q.handle(1).unwrap();
        for v in 1..=ENQ {
            h.enqueue(v, v).unwrap();
            done(Done::Enqueued);
        }
        for v in 1..=DEQ {
            assert_eq!(h.dequeue(ENQ + v).unwrap(), Some(v));
            done(Done::Dequeued);
        }
    }
    fn recovered(pool: &Pool<Sim>) -> Result<Vec<u64>, MementoError> {
        LogQueue::open(pool, BASE)?.contents()
    }
    /// LogQ's detectability: recovery reports thread 1's last operation
    /// (finished by it if it was in flight) with its number and result, and
    /// that is the last operation the recovered contents show took effect:
    /// dequeue number `ENQ + taken` of `taken`, else the enqueue of the last
    /// value, else none.
    fn own_record(pool: &Pool<Sim>, taken: u64, _in_flight_deq: bool) -> Result<(), String> {
        let q = LogQueue::open(pool, BASE).map_err(|e| format!("reopen: {e}"))?;
        let hi = q
            .contents()
            .map_err(|e| format!("contents: {e}"))?
            .last()
            .copied();
        let expected = if taken > 0 {
            Some(Recovered::Dequeued {
                op_num: ENQ + taken,
                value: Some(taken),
            })
        } else {
            hi.map(|v| Recovered::Enqueued {
                op_num: v,
                value: v,
            })
        };
        let got = q.recovered(1);
        if got == expected {
            Ok(())
        } else {
            Err(format!(
                "recovered(1) is {got:?}, the contents say the last operation was {expected:?}"
            ))
        }
    }
}

/// A crash point with the operations completed by then (`creating`: inside
/// the queue's creation).
struct Point {
    cp: CrashPoint,
    creating: bool,
    enq_done: u64,
    deq_done: u64,
}

/// The queue after a recovery agrees with `enq_done` enqueues and
/// `deq_done` dequeues completed, the next operation in flight.
fn agrees(c: &[u64], enq_done: u64, deq_done: u64) -> Result<(), String> {
    if c.windows(2).any(|w| w[1] != w[0] + 1) {
        return Err(format!("not consecutive: {c:?}"));
    }
    let in_flight_enq = enq_done < ENQ;
    let hi_ok = |hi: u64| hi == enq_done || (in_flight_enq && hi == enq_done + 1);
    let lo_ok = |lo: u64| lo == deq_done + 1 || (!in_flight_enq && lo == deq_done + 2);
    match (c.first(), c.last()) {
        (Some(&lo), Some(&hi)) if lo_ok(lo) && hi_ok(hi) => Ok(()),
        (None, None) if enq_done <= deq_done + 1 => Ok(()),
        _ => Err(format!(
            "{c:?} after {enq_done} enqueues and {deq_done} dequeues completed"
        )),
    }
}

/// A pool holding crash image `img` of `cp` (volatile memory zeroed), on a
/// simulator with `options`, reincarnated for recovery.
fn image_pool(cp: &CrashPoint, img: &ImageChoice, options: SimOptions) -> Pool<Sim> {
    let words = cp.materialize(img, VolatileFill::Zeroed);
    let pool = Pool::volatile_from_words(&words, Sim::new(options)).unwrap();
    pool.reincarnate();
    pool
}

/// Dequeues that took effect, from recovered contents `c` (the values
/// are 1, 2, ... in order; the workload never empties the queue after its
/// first enqueue).
fn taken(c: &[u64]) -> u64 {
    c.first().map_or(0, |&lo| lo - 1)
}

/// Whether a dequeue was in flight at `p` (every enqueue done).
fn in_flight_deq(p: &Point) -> bool {
    p.enq_done == ENQ && p.deq_done < DEQ
}

fn capture_into(pool: &Pool<Sim>, stride: u64, sink: Arc<Mutex<Vec<CrashPoint>>>) {
    pool.backend().set_crash_hook(move |event, view| {
        if event % stride == 0 {
            sink.lock().unwrap().push(view.capture());
        }
    });
}

fn run<Q: Baseline>() {
    let size = BASE + perdure_memento::baseline::required_bytes(&cfg()) + (64 << 10);
    let pool = Pool::volatile("baseline-crash", size, Sim::new(options())).unwrap();
    let (enq, deq) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    // A crash during creation must recover as the empty queue or be refused.
    let created = Arc::new(AtomicU64::new(0));
    let points: Arc<Mutex<Vec<Point>>> = Arc::default();
    {
        let (points, enq, deq, created) =
            (points.clone(), enq.clone(), deq.clone(), created.clone());
        pool.backend().set_crash_hook(move |_, view| {
            points.lock().unwrap().push(Point {
                cp: view.capture(),
                creating: created.load(SeqCst) == 0,
                enq_done: enq.load(SeqCst),
                deq_done: deq.load(SeqCst),
            });
        });
    }
    Q::workload(&pool, &|d| match d {
        Done::Created => created.store(1, SeqCst),
        Done::Enqueued => _ = enq.fetch_add(1, SeqCst),
        Done::Dequeued => _ = deq.fetch_add(1, SeqCst),
    });
    pool.backend().clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    let (mut images, mut inner_images, mut failures) = (0u64, 0u64, Vec::new());
    let (mut creating, mut refused) = (0u64, 0u64);
    for p in points.iter().filter(|p| p.creating) {
        creating += 1;
        let (_, it) = p.cp.images(2, p.cp.event);
        for img in it {
            images += 1;
            let pool2 = image_pool(&p.cp, &img, options());
            match Q::recovered(&pool2) {
                Ok(c) if c.is_empty() => {}
                Ok(c) => failures.push(format!(
                    "event {} (creation): recovered {c:?}, not the empty queue",
                    p.cp.event
                )),
                Err(_) => refused += 1,
            }
        }
    }
    for p in points.iter().filter(|p| !p.creating) {
        let (_, it) = p.cp.images(2, p.cp.event);
        for img in it {
            images += 1;
            let pool2 = image_pool(&p.cp, &img, options());
            let inner: Arc<Mutex<Vec<CrashPoint>>> = Arc::default();
            capture_into(&pool2, 1, inner.clone());
            let first = Q::recovered(&pool2);
            pool2.backend().clear_crash_hook();
            match first {
                Ok(c) => {
                    if let Err(why) = agrees(&c, p.enq_done, p.deq_done)
                        .and_then(|()| Q::own_record(&pool2, taken(&c), in_flight_deq(p)))
                    {
                        failures.push(format!("event {}: recovery: {why}", p.cp.event));
                    }
                }
                Err(e) => failures.push(format!("event {}: recovery failed: {e}", p.cp.event)),
            }
            for icp in std::mem::take(&mut *inner.lock().unwrap()) {
                let (_, it) = icp.images(2, icp.event);
                for img in it {
                    inner_images += 1;
                    let pool3 = image_pool(&icp, &img, SimOptions::default());
                    match Q::recovered(&pool3) {
                        Ok(c) => {
                            if let Err(why) = agrees(&c, p.enq_done, p.deq_done)
                                .and_then(|()| Q::own_record(&pool3, taken(&c), in_flight_deq(p)))
                            {
                                failures.push(format!(
                                    "event {}, recovery event {}: second recovery: {why}",
                                    p.cp.event, icp.event
                                ));
                            }
                        }
                        Err(e) => failures.push(format!(
                            "event {}, recovery event {}: second recovery failed: {e}",
                            p.cp.event, icp.event
                        )),
                    }
                }
            }
        }
    }
    let status = if failures.is_empty() { "pass" } else { "fail" };
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:baseline-{}-recovery-crash\",\"kind\":\"explore\",\"status\":\"{status}\",\"explored\":\"{} crash points ({creating} during creation: {refused} images refused, the rest the empty queue), {images} images checked; a second crash inside their recoveries, {inner_images} images checked\",\"detail\":\"px86; one thread enqueues 1..=6 and dequeues 3; every recovery and second recovery gives the queue the completed operations say (and DurableQ's returned-value record, LogQ's recovered operation agree)\"}}",
        Q::NAME,
        points.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(5)].join("\n")
    );
    assert!(images > 0 && inner_images > 0);
}

#[test]
fn durableq_survives_crashes_in_and_during_recovery() {
    run::<Durable>();
}

/// It found that LogQ's recovery moved the head past claimed nodes before
/// their log entries' results were durable (docs/FINDINGS.md).
#[test]
fn logq_survives_crashes_in_and_during_recovery() {
    run::<Log>();
}

/// LogQ's recovery of a dequeue that meets the empty queue (its
/// `finishRemove` with no node: the entry's status set to EMPTY): one
/// thread enqueues 1 (operation 1), dequeues it (2), then dequeues from
/// the empty queue (3), every crash point taken (up to 2 images each) and
/// each image recovered twice (the second time after a crash at every
/// event of the first recovery, up to 2 images each). After a recovery the
/// queue holds `[1]` or nothing as the completed operations allow, and
/// `recovered(1)` names the last operation that took effect with its
/// result: the empty dequeue's `None` once it began, or the one before it.
#[test]
fn logq_dequeue_from_empty_survives_crashes_in_and_during_recovery() {
    let size = BASE + perdure_memento::baseline::required_bytes(&cfg()) + (64 << 10);
    let pool = Pool::volatile("baseline-crash", size, Sim::new(options())).unwrap();
    // Operations completed when a point was captured (0: creating).
    let done = Arc::new(AtomicU64::new(0));
    let points: Arc<Mutex<Vec<(CrashPoint, u64)>>> = Arc::default();
    {
        let (points, done) = (points.clone(), done.clone());
        pool.backend().set_crash_hook(move |_, view| {
            points
                .lock()
                .unwrap()
                .push((view.capture(), done.load(SeqCst)));
        });
    }
    let q = LogQueue::create(&pool, BASE, &cfg()).unwrap();
    done.store(1, SeqCst);
    let mut h = q.handle(1).unwrap();
    h.enqueue(1, 1).unwrap();
    done.store(2, SeqCst);
    assert_eq!(h.dequeue(2).unwrap(), Some(1));
    done.store(3, SeqCst);
    assert_eq!(h.dequeue(3).unwrap(), None);
    done.store(4, SeqCst);
    pool.backend().clear_crash_hook();
    let points = std::mem::take(&mut *points.lock().unwrap());
    let enq = Recovered::Enqueued {
        op_num: 1,
        value: 1,
    };
    let deq = Recovered::Dequeued {
        op_num: 2,
        value: Some(1),
    };
    let empty = Recovered::Dequeued {
        op_num: 3,
        value: None,
    };
    // What a recovery may give at a point captured with `d` done: (queue,
    // recovered(1)) pairs.
    let allowed = |d: u64| -> Vec<(Vec<u64>, Option<Recovered>)> {
        match d {
            1 => vec![(vec![], None), (vec![1], Some(enq))],
            2 => vec![(vec![1], Some(enq)), (vec![], Some(deq))],
            3 => vec![(vec![], Some(deq)), (vec![], Some(empty))],
            _ => vec![(vec![], Some(empty))],
        }
    };
    // The recovered `recovered(1)`, if the recovery gives what `d` allows.
    let check = |pool: &Pool<Sim>, d: u64| -> Result<Option<Recovered>, String> {
        let q = LogQueue::open(pool, BASE).map_err(|e| format!("recovery failed: {e}"))?;
        let got = (
            q.contents().map_err(|e| format!("contents: {e}"))?,
            q.recovered(1),
        );
        if allowed(d).contains(&got) {
            Ok(got.1)
        } else {
            Err(format!(
                "recovered {got:?} with {} operations completed",
                d - 1
            ))
        }
    };
    let (mut images, mut inner_images, mut failures) = (0u64, 0u64, Vec::new());
    let mut empty_finished = 0u64;
    for (cp, d) in points.iter().filter(|(_, d)| *d > 0) {
        let (_, it) = cp.images(2, cp.event);
        for img in it {
            images += 1;
            let pool2 = image_pool(cp, &img, options());
            let inner: Arc<Mutex<Vec<CrashPoint>>> = Arc::default();
            capture_into(&pool2, 1, inner.clone());
            let first = check(&pool2, *d);
            pool2.backend().clear_crash_hook();
            match first {
                Err(why) => failures.push(format!("event {}: {why}", cp.event)),
                Ok(r) if *d == 3 && r == Some(empty) => empty_finished += 1,
                Ok(_) => {}
            }
            for icp in std::mem::take(&mut *inner.lock().unwrap()) {
                let (_, it) = icp.images(2, icp.event);
                for img in it {
                    inner_images += 1;
                    let pool3 = image_pool(&icp, &img, SimOptions::default());
                    if let Err(why) = check(&pool3, *d) {
                        failures.push(format!(
                            "event {}, recovery event {}: second recovery: {why}",
                            cp.event, icp.event
                        ));
                    }
                }
            }
        }
    }
    let status = if failures.is_empty() { "pass" } else { "fail" };
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:baseline-logq-empty-recovery-crash\",\"kind\":\"explore\",\"status\":\"{status}\",\"explored\":\"{} crash points, {images} images checked ({empty_finished} recovered with the empty dequeue in flight and reported it); a second crash inside their recoveries, {inner_images} images checked\",\"detail\":\"px86; one thread enqueues 1, dequeues it, dequeues from the empty queue; every recovery and second recovery gives the queue and the recovered operation the completed operations allow\"}}",
        points.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(5)].join("\n")
    );
    assert!(
        empty_finished > 0,
        "no image had the empty dequeue in flight and recovered it"
    );
}
