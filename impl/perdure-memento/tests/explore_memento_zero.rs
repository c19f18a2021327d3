//! The Memento explorer under the seed's memento clearing (§6.3 as written: `ClearMode::Zero`, zeroing under the crash-safe
//! clearing flag) instead of the default O(1) timestamp floor.
//! One binary per setting: the scenarios read it from the environment.

mod common;

fn setting() {
    std::env::set_var("PERDURE_CLEAR", "zero");
}

#[test]
fn msq_mmt_indel_survives_every_crash_point() {
    setting();
    common::run("msq-mmt-indel", 4, "@zero-clear");
}

#[test]
fn msq_mmt_cas_survives_every_crash_point() {
    setting();
    common::run("msq-mmt-cas", 4, "@zero-clear");
}

#[test]
fn treiber_mmt_survives_every_crash_point() {
    setting();
    common::run("treiber-mmt", 4, "@zero-clear");
}
