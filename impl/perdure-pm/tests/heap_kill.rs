//! Process-kill test of the concurrent heap: no published block is ever
//! handed out again, whatever instruction the process died at.
//!
//! The child allocates blocks, stamps them, and *publishes* each one by
//! appending its offset to a persistent commit-marker log (after a `pfence`,
//! as the heap's allocation contract asks); it also un-publishes random
//! published blocks (durably marking the log entry freed) and then frees
//! them. The parent kills it with SIGKILL at a random moment, reopens the
//! pool, registers a thread (which claims the dead child's slot and runs its
//! recovery, including the repair of a pop interrupted between its two
//! stores), and checks:
//!
//! * every published block still holds its stamp (nothing reused it);
//! * allocating thousands of blocks of each size class never returns a
//!   published block, nor the same block twice.
//!
//! What this covers: the heap's crash protocol under process death at any
//! point (the kill lands inside `alloc`, `free`, set completion, donation and
//! chunk claims). What it does not cover: power loss, where a store may be
//! lost even though a later one survives; the TLA+ model `specs/alloc/Heap.tla`
//! and, later, the Px86 simulator cover that.
//!
//! Environment: `PERDURE_KILLS`, `PERDURE_KILL_SEED`, `PERDURE_DEPTH`.

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
#[path = "support/kill.rs"]
mod kill;

#[cfg(any(perdure_loom, perdure_shuttle))]
fn main() {
    println!("heap_kill: not built under the model checkers' facade (file pools need std)");
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
fn main() {
    real::main()
}

#[cfg(not(any(perdure_loom, perdure_shuttle)))]
mod real {
    use super::kill;
    use perdure_pm::heap::Heap;
    use perdure_pm::{NoFlush, Pmem, Pool};
    use std::collections::HashSet;
    use std::path::Path;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    const LAYOUT: &str = "perdure-test-heap-kill";
    const POOL_SIZE: u64 = 32 << 20;
    const LOG_CAP: u64 = 256 << 10;
    const FREED: u64 = 1 << 63;
    const STAMP: u64 = 0x5741_4d50_0000_0000;
    const SIZES: [u64; 2] = [64, 200];
    const PROBE: usize = 4000;

    struct Layout {
        commit: u64,
        log: u64,
        heap: u64,
    }

    fn layout<B: perdure_pm::Backend>(p: &Pool<B>) -> Layout {
        let d = p.data_offset();
        Layout {
            commit: d,
            log: d + 64,
            heap: (d + 64 + 8 * LOG_CAP).div_ceil(4096) * 4096,
        }
    }

    fn child(path: &Path, seed: u64) -> ! {
        let p: Pool<Pmem> = Pool::open(path, LAYOUT).expect("child: open pool");
        let l = layout(&p);
        let heap = Heap::open(&p, l.heap).expect("child: open heap");
        let mut t = heap.register().expect("child: register");
        let commit = p.word(l.commit).unwrap();
        let mut n = commit.load(Ordering::Acquire);
        let mut live: Vec<(u64, u64)> = (0..n)
            .map(|i| (i, p.word(l.log + 8 * i).unwrap().load(Ordering::Acquire)))
            .filter(|(_, b)| b & FREED == 0)
            .collect();
        let mut rng = kill::Rng::new(seed);
        let mut out = std::io::stdout().lock();
        let mut op = 0u64;
        while n < LOG_CAP {
            let r = rng.next();
            if !live.is_empty() && r % 3 == 0 {
                let (i, b) = live.swap_remove((r >> 8) as usize % live.len());
                // Un-publish durably, then free: a crash in between leaks b,
                // the other order could let a published block be reused.
                let entry = p.word(l.log + 8 * i).unwrap();
                entry.store(b | FREED, Ordering::Release);
                p.pwb(l.log + 8 * i, 8);
                p.pfence();
                t.free(b).expect("child: free");
            } else {
                let Ok(b) = t.alloc(SIZES[(r >> 16) as usize % SIZES.len()]) else {
                    break; // heap full: the parent starts a fresh pool
                };
                p.word(b).unwrap().store(b ^ STAMP, Ordering::Relaxed);
                p.pwb(b, 8);
                p.pfence(); // the allocation contract: fence before publishing
                p.word(l.log + 8 * n).unwrap().store(b, Ordering::Release);
                p.pwb(l.log + 8 * n, 8);
                p.pfence();
                commit.store(n + 1, Ordering::Release);
                p.pwb(l.commit, 8);
                p.psync();
                live.push((n, b));
                n += 1;
            }
            if !kill::ack(&mut out, op) {
                break;
            }
            op += 1;
        }
        std::process::exit(0)
    }

    /// Reopens and checks; returns (published blocks checked, blocks probed,
    /// whether the pool should be replaced).
    fn verify(path: &Path) -> Result<(u64, u64, bool), String> {
        let p: Pool<Pmem> = Pool::open(path, LAYOUT).map_err(|e| format!("reopen: {e}"))?;
        let l = layout(&p);
        let heap = Heap::open(&p, l.heap).map_err(|e| format!("heap open: {e}"))?;
        let mut t = heap
            .register()
            .map_err(|e| format!("register (slot recovery): {e}"))?;
        let n = p.word(l.commit).unwrap().load(Ordering::Acquire);
        if n > LOG_CAP {
            return Err(format!("commit word {n} beyond the log"));
        }
        let published: HashSet<u64> = (0..n)
            .map(|i| p.word(l.log + 8 * i).unwrap().load(Ordering::Acquire))
            .filter(|b| b & FREED == 0)
            .collect();
        for &b in &published {
            let w = p
                .word(b)
                .map_err(|e| format!("published offset {b:#x}: {e}"))?;
            if w.load(Ordering::Relaxed) != b ^ STAMP {
                return Err(format!(
                    "published block {b:#x} lost its stamp: it was reused"
                ));
            }
        }
        let mut probed = Vec::new();
        let mut seen = HashSet::new();
        for size in SIZES {
            for _ in 0..PROBE {
                let Ok(b) = t.alloc(size) else { break };
                if published.contains(&b) {
                    return Err(format!(
                        "published block {b:#x} handed out again after recovery"
                    ));
                }
                if !seen.insert(b) {
                    return Err(format!("block {b:#x} handed out twice after recovery"));
                }
                probed.push(b);
            }
        }
        for b in &probed {
            t.free(*b).map_err(|e| format!("free after probe: {e}"))?;
        }
        drop(t);
        let s = heap.stats();
        let replace = n > LOG_CAP / 2 || s.chunks_used * 4 > s.chunks * 3;
        Ok((published.len() as u64, probed.len() as u64, replace))
    }

    fn fresh_pool(path: &Path) -> Result<(), String> {
        let _ = std::fs::remove_file(path);
        let p = Pool::<NoFlush>::create(path, LAYOUT, POOL_SIZE).map_err(|e| e.to_string())?;
        let l = layout(&p);
        Heap::format(&p, l.heap, POOL_SIZE - l.heap, 4).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn run(kills: u64, seed: u64, dir: &Path) -> Result<(String, String), String> {
        let path = dir.join("heap.pool");
        let mut rng = kill::Rng::new(seed);
        fresh_pool(&path)?;
        let (mut ops, mut checked, mut probed, mut pools) = (0u64, 0u64, 0u64, 1u64);
        for k in 0..kills {
            let child_seed = rng.next().to_string();
            let delay = Duration::from_micros(rng.next() % 30_000);
            let acks = kill::spawn_and_kill(
                &[
                    ("PERDURE_KILL_CHILD", "heap".as_ref()),
                    ("PERDURE_KILL_PATH", path.as_os_str()),
                    ("PERDURE_KILL_CHILD_SEED", child_seed.as_ref()),
                ],
                delay,
            )?;
            ops += acks.count;
            let (c, p, replace) =
                verify(&path).map_err(|e| format!("kill {k} (seed {seed}): {e}"))?;
            checked += c;
            probed += p;
            if replace {
                fresh_pool(&path)?;
                pools += 1;
            }
        }
        Ok((
            format!("{kills} SIGKILLs, {ops} heap operations acknowledged, 0 double allocations"),
            format!("{checked} published blocks re-checked and {probed} blocks allocated after recovery across {pools} pools; process crash only"),
        ))
    }

    pub fn main() {
        if std::env::var("PERDURE_KILL_CHILD").is_ok() {
            let path = std::env::var("PERDURE_KILL_PATH").expect("PERDURE_KILL_PATH");
            let seed = std::env::var("PERDURE_KILL_CHILD_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1);
            child(Path::new(&path), seed);
        }
        if !kill::selected("heap_kill") {
            println!("heap_kill: filtered out");
            return;
        }
        if Pmem::new().is_none() {
            println!("heap_kill: skipped: no cache-line flush instruction on this CPU");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let t0 = Instant::now();
        let result = run(kill::kills(), kill::seed(), dir.path());
        kill::report("explore:pm/heap-kill", &result, t0.elapsed().as_secs_f64());
        if result.is_err() {
            std::process::exit(1);
        }
    }
}
