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
//! * [`ClockKind::Tsc`] — `rdtscp; lfence` (x86-64), the production source;
//!   on other architectures a monotonic nanosecond clock stands in for it.
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
    /// Added to every raw reading (calibration).
    offset: u64,
    counter: AtomicU64,
}

impl Clock {
    /// A clock of `kind` whose readings all exceed `t_max` (§2.5 calibration).
    pub fn calibrated(kind: ClockKind, t_max: u64) -> Clock {
        let c = Clock {
            kind,
            offset: 0,
            counter: AtomicU64::new(0),
        };
        let t_init = c.raw();
        let offset = (t_max + 1).saturating_sub(t_init);
        Clock {
            kind,
            offset,
            counter: AtomicU64::new(c.counter.load(Ordering::Relaxed)),
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
            ClockKind::Tsc => tsc(),
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
    // beyond CPU support; rdtscp is present on every x86-64 CPU this crate
    // targets (checked by `tsc_available`, and CPUs without it fault
    // cleanly rather than corrupting memory).
    unsafe {
        let t = core::arch::x86_64::__rdtscp(&mut aux);
        core::arch::x86_64::_mm_lfence();
        t
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn tsc() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// Whether the CPU has `rdtscp` (CPUID 0x8000_0001, EDX bit 27).
pub fn tsc_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        let r = core::arch::x86_64::__cpuid(0x8000_0001);
        r.edx & (1 << 27) != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_readings_exceed_t_max_and_increase() {
        for kind in [ClockKind::Tsc, ClockKind::Counter] {
            if kind == ClockKind::Tsc && !tsc_available() {
                continue;
            }
            let t_max = 1u64 << 60; // far beyond any boot-relative reading
            let c = Clock::calibrated(kind, t_max);
            let a = c.now();
            let b = c.now();
            assert!(a > t_max, "{kind:?}: {a} <= {t_max}");
            assert!(b > a, "{kind:?}: {b} <= {a}");
        }
    }

    #[test]
    fn no_offset_when_the_clock_is_already_ahead() {
        let c = Clock::calibrated(ClockKind::Counter, 0);
        assert_eq!(c.offset(), 0);
        assert!(c.now() >= 1);
    }
}
