//! Timestamps and their calibration (seed 001, §2.5 and §3.1).
//!
//! Memento's mementos record *when* they checkpointed something, so a
//! recovering operation can tell a checkpoint of its own pre-crash execution
//! (newer than every sub-operation it has replayed so far, the thread's
//! LOCAL) from a stale one (an earlier loop iteration, an earlier operation).
//! The seed takes timestamps from `rdtscp` followed by `lfence`, relying on
//! three properties of the Xeon platforms it targets: the counter is
//! *synchronous* across cores, *constant*-rate (two reads differ) and, with
//! the fence, *serializing*.
//!
//! `rdtscp` counts from boot, so timestamps are not monotone across reboots.
//! §2.5's calibration fixes this: at start-up take T_max, the largest
//! timestamp checkpointed anywhere (mementos, HELP), read T_init, and add
//! `T_max − T_init` (here `T_max + 1 − T_init`, so that the first new
//! timestamp is strictly larger) to every later reading.
//!
//! Two sources:
//! * [`ClockKind::Tsc`] — `rdtscp; lfence` (x86-64), the production source.
//!   Where the CPU has no `rdtscp` (another architecture, or an x86-64
//!   virtual machine whose CPU model hides it, as QEMU's `qemu64` does) a
//!   monotonic nanosecond clock stands in for it, made strictly increasing
//!   (see `monotonic`), so the runtime opens there instead of faulting on
//!   its first reading.
//! * [`ClockKind::Counter`] — a shared counter incremented on every reading:
//!   strictly increasing, synchronous by construction, and deterministic, so
//!   simulated runs, explorer schedules and traces replay exactly. It costs an
//!   atomic add per reading and is meant for checking, not for speed.

use crate::word::TS_MASK;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where timestamps come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClockKind {
    /// `rdtscp` + `lfence`, calibrated.
    #[default]
    Tsc,
    /// A shared counter (deterministic; for checking).
    Counter,
}

/// A calibrated timestamp source.
#[derive(Debug)]
pub struct Clock {
    kind: ClockKind,
    /// Whether a `Tsc` clock reads `rdtscp` (else `monotonic`).
    rdtscp: bool,
    /// Added to every raw reading (calibration).
    offset: u64,
    counter: AtomicU64,
}

impl Clock {
    /// A clock of `kind` whose readings all exceed `t_max` (§2.5 calibration).
    /// A `Tsc` clock reads `rdtscp` where [`tsc_available`] says the CPU has
    /// it, and the monotonic stand-in elsewhere.
    pub fn calibrated(kind: ClockKind, t_max: u64) -> Clock {
        Clock::calibrated_on(kind, kind == ClockKind::Tsc && tsc_available(), t_max)
    }

    /// [`Clock::calibrated`] with the `Tsc` source chosen by the caller.
    fn calibrated_on(kind: ClockKind, rdtscp: bool, t_max: u64) -> Clock {
        let c = Clock {
            kind,
            rdtscp,
            offset: 0,
            counter: AtomicU64::new(0),
        };
        let t_init = c.raw();
        let offset = (t_max + 1).saturating_sub(t_init);
        Clock {
            offset,
            counter: AtomicU64::new(c.counter.load(Ordering::Relaxed)),
            ..c
        }
    }

    /// The source.
    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    /// The calibration offset in use (for the unit tests: nothing else
    /// reads it).
    #[cfg(test)]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn raw(&self) -> u64 {
        match self.kind {
            ClockKind::Tsc if self.rdtscp => tsc(),
            ClockKind::Tsc => monotonic(),
            ClockKind::Counter => self.counter.fetch_add(1, Ordering::SeqCst) + 1,
        }
    }

    /// A timestamp: strictly larger than every timestamp persisted before the
    /// calibration, and than every earlier reading on this thread.
    #[inline]
    pub fn now(&self) -> u64 {
        self.raw().wrapping_add(self.offset) & TS_MASK
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn tsc() -> u64 {
    let mut aux = 0u32;
    // SAFETY: rdtscp and lfence have no memory operands and no preconditions
    // beyond CPU support; a clock reads `tsc` only where `tsc_available`
    // found `rdtscp` (`Clock::calibrated`).
    unsafe {
        let t = core::arch::x86_64::__rdtscp(&mut aux);
        core::arch::x86_64::_mm_lfence();
        t
    }
}

/// Never read: `tsc_available` is false on other architectures.
#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> u64 {
    monotonic()
}

/// The stand-in for `rdtscp`: nanoseconds of the process's monotonic clock
/// (one clock for every core, as the seed's synchronous TSC), made strictly
/// increasing across all threads, since two readings may fall in one tick
/// and the seed needs two reads to differ. One shared word holds the last
/// reading; a reading is the later of the clock and one past that word
/// (`next_after`), installed by CAS, so readings are unique and ordered as
/// the CASes are. A contended atomic per reading, like the counter clock,
/// which it differs from in counting time: PATIENCE (`DEFAULT_PATIENCE_TSC`)
/// stays a wait of tens of microseconds.
fn monotonic() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    static LAST: AtomicU64 = AtomicU64::new(0);
    let ns = START.get_or_init(Instant::now).elapsed().as_nanos() as u64;
    let mut last = LAST.load(Ordering::SeqCst);
    loop {
        let t = next_after(last, ns);
        match LAST.compare_exchange_weak(last, t, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return t,
            Err(now) => last = now,
        }
    }
}

/// The reading that follows `last` when the clock says `ns`.
#[inline]
fn next_after(last: u64, ns: u64) -> u64 {
    ns.max(last + 1)
}

/// Whether the CPU has `rdtscp` (CPUID 0x8000_0001, EDX bit 27).
pub fn tsc_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_rdtscp(core::arch::x86_64::__cpuid(0x8000_0001).edx)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether CPUID 0x8000_0001's EDX lists `rdtscp` (bit 27).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
fn has_rdtscp(edx: u32) -> bool {
    edx & (1 << 27) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every source: calibrated readings exceed `t_max` and increase.
    #[test]
    fn calibrated_readings_exceed_t_max_and_increase() {
        let sources = [
            (ClockKind::Tsc, true),
            (ClockKind::Tsc, false),
            (ClockKind::Counter, false),
        ];
        for (kind, rdtscp) in sources {
            if rdtscp && !tsc_available() {
                continue;
            }
            let t_max = 1u64 << 60; // far beyond any boot-relative reading
            let c = Clock::calibrated_on(kind, rdtscp, t_max);
            let a = c.now();
            let b = c.now();
            assert!(a > t_max, "{kind:?} (rdtscp {rdtscp}): {a} <= {t_max}");
            assert!(b > a, "{kind:?} (rdtscp {rdtscp}): {b} <= {a}");
        }
    }

    /// The stand-in's readings, taken by two threads at once, increase on
    /// each thread and are all distinct: the seed's "two reads differ",
    /// which the clock alone does not give within one tick.
    #[test]
    fn monotonic_readings_are_unique_and_increase() {
        let per_thread: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| s.spawn(|| (0..20_000).map(|_| monotonic()).collect::<Vec<u64>>()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &per_thread {
            assert!(r.windows(2).all(|w| w[1] > w[0]), "a thread's readings");
        }
        let mut all: Vec<u64> = per_thread.concat();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 40_000, "distinct readings of two threads");
    }

    /// A reading is the clock's unless that would not pass the last one.
    #[test]
    fn next_after_passes_the_last_reading() {
        assert_eq!(next_after(5, 9), 9);
        assert_eq!(next_after(5, 5), 6);
        assert_eq!(next_after(5, 3), 6);
        assert_eq!(next_after(0, 0), 1);
    }

    /// `rdtscp` is EDX bit 27 of CPUID 0x8000_0001, alone.
    #[test]
    fn rdtscp_is_edx_bit_27() {
        assert!(!has_rdtscp(0));
        assert!(has_rdtscp(1 << 27));
        assert!(has_rdtscp(u32::MAX));
        assert!(!has_rdtscp(!(1 << 27)));
    }

    #[test]
    fn no_offset_when_the_clock_is_already_ahead() {
        let c = Clock::calibrated(ClockKind::Counter, 0);
        assert_eq!(c.offset(), 0);
        assert!(c.now() >= 1);
    }
}
