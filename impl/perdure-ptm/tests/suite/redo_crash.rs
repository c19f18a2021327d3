//! Full-system crashes of what only the Redo family has, on perdure-pm's
//! Px86 simulator, with the workload and checks of `common/crash.rs` (see
//! `ptm_crash.rs` for what every construction is checked for): logs too
//! small for a transaction (copies instead of replays, whole-range
//! write-backs; once per variant), and RedoOpt's logs too small with
//! line-by-line write-backs (non-temporal copies that no write-back
//! covers). Not covered: crashes inside `create`, thread crashes; each test
//! prints a PERDURE-CHECK row with what it explored.

use crate::common;

use common::crash;
use perdure_pm::SimOptions;
use perdure_ptm::redo::{Config, RedoPtm, Variant};

const POOL: u64 = 48 << 10;

/// The PERDURE-CHECK name prefix of a variant.
fn tag(v: Variant) -> &'static str {
    match v {
        Variant::Redo => "redo",
        Variant::Timed => "redotimed",
        Variant::Opt => "redoopt",
    }
}

/// The one-thread workload of [`crash::one_thread`] on Redo-PTM with
/// `config` (running variant `v`), every crash image checked; row
/// `<tag>-<name>`.
fn one_thread(options: SimOptions, config: &Config, v: Variant, name: &str) {
    let (create, open) = (RedoPtm::create, RedoPtm::open);
    let name = format!("{}-{name}", tag(v));
    crash::run_one_thread_with(options, POOL, config, create, RedoPtm::pool, open, &name);
}

/// The same with a log arena smaller than a transaction and a dirty-line
/// set of two lines: every state overflows its log (other replicas copy
/// instead of replaying) and write-backs fall back to whole ranges.
fn one_thread_full_crashes_tiny_logs(v: Variant) {
    let config = Config {
        log_entries_per_thread: 4,
        dirty_lines_per_replica: 2,
        ..common::config_v(2, v)
    };
    one_thread(SimOptions::default(), &config, v, "sim-crash-1t-tiny-logs");
}

/// RedoOpt-PTM with a log arena smaller than a transaction and the usual
/// dirty-line set: every update copies the replica it takes with
/// non-temporal stores, persisted by the `pfence` or the locked CAS before
/// `cur_comb` moves and by no write-back, while write-backs stay line by
/// line (with tiny dirty-line sets, above, the full-flush switch would
/// cover the copy). Redo-PTM and RedoTimed-PTM copy with plain stores and
/// a whole-range write-back, which the tiny-logs test covers. This test
/// fails if RedoOpt copies with plain stores.
#[test]
fn opt_one_thread_full_crashes_copies() {
    let v = Variant::Opt;
    let config = Config {
        log_entries_per_thread: 4,
        ..common::config_v(2, v)
    };
    one_thread(SimOptions::default(), &config, v, "sim-crash-1t-copies");
    one_thread(
        SimOptions {
            rmw_completes_flushes: true,
            ..SimOptions::default()
        },
        &config,
        v,
        "sim-crash-1t-copies-x86",
    );
}

common::redo_variant_tests!(one_thread_full_crashes_tiny_logs);
