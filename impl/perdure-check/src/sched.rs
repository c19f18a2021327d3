//! A seeded scheduler for traced runs on the `Sim` backend: one worker
//! runs at a time, and at each of its persistent accesses (Sim's yield hook,
//! [`perdure_pm::Sim::set_yield_hook`]) it may hand over to another worker
//! drawn from the seed, so a seed is one reproducible interleaving. Used by
//! the trace producers of the construction crates (`perdure trace
//! memento-cas`, `perdure trace redo-ptm`, ...).
//!
//! The state is process-global: hold [`RUN`] for the whole scheduled run.
//! If a worker waits for its turn for more than two seconds (a worker
//! blocked outside the simulator), serialisation is given up and the
//! workers run freely; [`stop`] then reports that the run was not the
//! seed's.

/// splitmix64: the seeded choices.
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

use std::cell::Cell;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

struct State {
    current: usize,
    live: Vec<usize>,
    rng: u64,
    /// Serialisation given up (a worker waited too long): run freely.
    free: bool,
}

static STATE: Mutex<State> = Mutex::new(State {
    current: 0,
    live: Vec::new(),
    rng: 0,
    free: true,
});
static TURN: Condvar = Condvar::new();
/// Only one scheduled run per process at a time.
pub static RUN: Mutex<()> = Mutex::new(());

thread_local! {
    static ME: Cell<Option<usize>> = const { Cell::new(None) };
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn draw(s: &mut State) -> u64 {
    s.rng = mix(s.rng);
    s.rng
}

fn pick(s: &mut State) {
    if !s.live.is_empty() {
        let i = (draw(s) % s.live.len() as u64) as usize;
        s.current = s.live[i];
    }
    TURN.notify_all();
}

fn wait_turn(mut s: std::sync::MutexGuard<'static, State>, me: usize) {
    while !s.free && s.current != me {
        let (g, to) = TURN
            .wait_timeout(s, Duration::from_secs(2))
            .unwrap_or_else(|e| e.into_inner());
        s = g;
        if to.timed_out() && !s.free && s.current != me {
            s.free = true;
            TURN.notify_all();
        }
    }
}

/// Workers `0..n` will run, interleaved by `seed`.
pub fn start(n: usize, seed: u64) {
    let mut s = lock();
    s.live = (0..n).collect();
    s.rng = seed;
    s.free = false;
    pick(&mut s);
}

/// Whether the run stayed serialised (its schedule is the seed's).
pub fn stop() -> bool {
    let mut s = lock();
    let ok = !s.free;
    s.free = true;
    s.live.clear();
    ok
}

/// The calling thread is worker `me`: wait for its first turn.
pub fn enter(me: usize) {
    ME.with(|m| m.set(Some(me)));
    wait_turn(lock(), me);
}

/// Worker `me` is done.
pub fn exit(me: usize) {
    ME.with(|m| m.set(None));
    let mut s = lock();
    s.live.retain(|&w| w != me);
    if s.current == me {
        pick(&mut s);
    }
}

/// Sim's yield hook: with probability 1/3 hand over to a drawn worker.
pub fn yield_now() {
    let Some(me) = ME.with(Cell::get) else {
        return;
    };
    let mut s = lock();
    if s.free || draw(&mut s) % 3 != 0 {
        return;
    }
    pick(&mut s);
    wait_turn(s, me);
}
