//! Full-system crash checking on perdure-pm's Px86 simulator, shared by the
//! crash tests of every construction: capture a crash point after every
//! persistence event of a workload, then materialise each point's crash
//! images (all, or a seeded sample beyond a limit), reopen each (null
//! recovery) and hand the recovered PTM to a check.

use perdure_pm::sim::{CrashPoint, VolatileFill};
use perdure_pm::{Pool, Sim};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// Images checked per crash point (all of them if there are fewer).
pub fn image_limit() -> u64 {
    if cfg!(debug_assertions) {
        8
    } else {
        48
    }
}

/// A crash point with what the workload had started and completed by then
/// (per thread).
pub struct Point {
    pub cp: CrashPoint,
    pub started: Vec<u64>,
    pub completed: Vec<u64>,
}

/// Transactions started and completed per thread, as the workload counts
/// them.
pub struct Progress {
    pub started: Vec<AtomicU64>,
    pub completed: Vec<AtomicU64>,
}

impl Progress {
    pub fn new(threads: usize) -> Arc<Progress> {
        Arc::new(Progress {
            started: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            completed: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        })
    }
    fn snapshot(v: &[AtomicU64]) -> Vec<u64> {
        v.iter().map(|a| a.load(SeqCst)).collect()
    }
}

/// Runs `work` with a crash point captured after every persistence event
/// of `sim`.
pub fn capture(sim: &Sim, progress: &Arc<Progress>, work: impl FnOnce()) -> Vec<Point> {
    let points = Arc::new(Mutex::new(Vec::new()));
    {
        let (points, progress) = (points.clone(), progress.clone());
        sim.set_crash_hook(move |_, view| {
            // Completed first: a transaction counted completed here has
            // returned, so it also counts as started.
            let completed = Progress::snapshot(&progress.completed);
            let started = Progress::snapshot(&progress.started);
            points.lock().unwrap().push(Point {
                cp: view.capture(),
                started,
                completed,
            });
        });
    }
    work();
    sim.clear_crash_hook();
    Arc::try_unwrap(points)
        .ok()
        .expect("the hook is gone")
        .into_inner()
        .unwrap()
}

/// Materialises every checked image of every point, reopens it with
/// `open`, and hands the recovered PTM to `check`. Returns (points, images,
/// exhaustive points).
pub fn recover_all<P, E: std::fmt::Display>(
    points: &[Point],
    open: impl Fn(Pool<Sim>) -> Result<P, E>,
    mut check: impl FnMut(&P, &Point),
) -> (usize, u64, usize) {
    let mut images = 0;
    let mut exhaustive = 0;
    for (i, pt) in points.iter().enumerate() {
        let (coverage, it) = pt.cp.images(image_limit(), 0x5eed ^ i as u64);
        if coverage == perdure_pm::px86::Coverage::Exhaustive {
            exhaustive += 1;
        }
        for img in it {
            images += 1;
            let words = pt.cp.materialize(&img, VolatileFill::Zeroed);
            let pool = Pool::volatile_from_words(&words, Sim::default()).expect("a pool image");
            let p = open(pool).unwrap_or_else(|e| {
                panic!(
                    "crash point {i} (event {}): recovery failed: {e}",
                    pt.cp.event
                )
            });
            check(&p, pt);
        }
    }
    (points.len(), images, exhaustive)
}

/// Prints the PERDURE-CHECK row of a crash test.
pub fn report(name: &str, (points, images, exhaustive): (usize, u64, usize)) {
    println!(
        "PERDURE-CHECK {{\"name\":\"explore:ptm/{name}\",\"kind\":\"explore\",\"status\":\"pass\",\"explored\":\"{points} crash points, {images} Px86 crash images ({exhaustive} points exhaustively)\",\"detail\":\"every completed transaction recovered, none in part; the recovered PTM commits the next update\"}}"
    );
}
