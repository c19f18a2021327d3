//! CX-PTM and CX-PUC with three threads and a one-node replay window
//! (every replica invalidated, every node disposed of at once): allocating
//! transactions stay consistent, increments sum, and memory stays bounded.
//! What every construction is checked for with 2–4 threads is in
//! `ptm_concurrent.rs`.

use crate::common;

use common::runner::Runner;
use perdure_pm::{NoFlush, Pool};
use perdure_ptm::cx::{Config, CxStats};
use perdure_ptm::{CxPtm, CxPuc};

fn per_thread() -> u64 {
    common::per_thread(3000)
}

/// Both flavours with `config` on a fresh 4 MiB pool, each handed to `f`
/// with its name and a way to read its counters.
fn on_both(config: &Config, f: impl Fn(&str, &dyn Fn() -> CxStats, &dyn Runner)) {
    let pool = Pool::volatile("cx-conc", 4 << 20, NoFlush).unwrap();
    let p = CxPtm::create(pool, config).unwrap();
    f("cx-ptm", &|| p.stats(), &p);
    let pool = Pool::volatile("cx-conc", 4 << 20, NoFlush).unwrap();
    let q: CxPuc<NoFlush, [u64; 2]> = CxPuc::create(pool, config, [0; 2]).unwrap();
    f("cx-puc", &|| q.stats(), &q);
}

#[test]
fn a_one_node_window_under_contention() {
    // Every replica is invalid when next taken and every retired node is
    // disposed of at once: copies everywhere, reclamation at full speed.
    let config = Config {
        replay_window: 1,
        ..common::cx_config(3)
    };
    on_both(&config, |name, _, p| {
        common::runner::allocating_transactions(name, p, 3, per_thread());
    });
    on_both(&config, |name, stats, p| {
        p.setup(1);
        let k = per_thread();
        p.threads(3, &|_, h| {
            for _ in 0..k {
                h.bump(0);
            }
        });
        assert_eq!(p.read_word(0), 3 * k, "{name}");
        let s = stats();
        assert!(s.copies > 0 && s.disposed > 0, "{name}: {s:?}");
        assert!(
            s.disposed - s.freed <= config.max_retained_nodes(),
            "{name}: {s:?}"
        );
    });
}
