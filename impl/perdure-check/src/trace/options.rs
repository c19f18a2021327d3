//! The options every trace producer takes: which construction or object it
//! runs (`C`), the seeds, the threads and operations, whether each run
//! crashes, and a tampering of the trace (`T`) that validation must reject.
//! `perdure trace <construction> --seed N --runs R --threads T --ops K
//! --crash --tamper MODE` fills one.

/// What to trace: `C` is the construction or object (with any variant of
/// it the producer has), `T` the producer's tamper modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOptions<C, T> {
    /// The construction or object traced.
    pub object: C,
    /// The first run's seed (runs use `seed`, `seed + 1`, …).
    pub seed: u64,
    /// Runs in the trace.
    pub runs: u64,
    /// Threads (the producer says how many it takes).
    pub threads: usize,
    /// Operations per thread (the producer says how many it takes).
    pub ops: u64,
    /// Take a full crash in every run, then recover and go on.
    pub crash: bool,
    /// Corrupt the trace this way.
    pub tamper: Option<T>,
}

impl<C: Default, T> Default for TraceOptions<C, T> {
    /// Seed 1, one run, 2 threads of 3 operations, no crash, no tampering.
    fn default() -> Self {
        TraceOptions {
            object: C::default(),
            seed: 1,
            runs: 1,
            threads: 2,
            ops: 3,
            crash: false,
            tamper: None,
        }
    }
}

impl<C, T> TraceOptions<C, T> {
    /// Checks the bounds a producer takes: threads in `1..=max_threads`,
    /// operations in `1..=max_ops`, at least one run; the error says which
    /// was out.
    pub fn check_bounds(&self, max_threads: usize, max_ops: u64) -> Result<(), String> {
        if (1..=max_threads).contains(&self.threads)
            && (1..=max_ops).contains(&self.ops)
            && self.runs > 0
        {
            return Ok(());
        }
        Err(format!(
            "threads must be in 1..={max_threads}, ops in 1..={max_ops}, runs at least 1 (got {}, {}, {})",
            self.threads, self.ops, self.runs
        ))
    }
}

/// A value with a name on the command line (a tamper mode, a variant).
pub trait Named: Sized + Copy + 'static {
    /// Every value, in the order the help lists them.
    const ALL: &'static [Self];

    /// Its name (`return-before-psync`).
    fn name(self) -> &'static str;

    /// The value named `name`, if any.
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}
