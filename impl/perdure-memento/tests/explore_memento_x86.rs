//! The Memento explorer under x86's persistency model for locked RMWs (Px86: a locked CAS, even a failed one, completes the
//! thread's pending write-backs — `SimOptions::rmw_completes_flushes`), where the code leaves out the
//! fences `Msync`-like backends need; the default runs check the latter.
//! One binary per setting: the scenarios read it from the environment.

mod common;

fn setting() {
    std::env::set_var("PERDURE_SIM_RMW", "1");
}

#[test]
fn msq_mmt_indel_survives_every_crash_point() {
    setting();
    common::run("msq-mmt-indel", 4, "@x86");
}

#[test]
fn msq_mmt_cas_survives_every_crash_point() {
    setting();
    common::run("msq-mmt-cas", 4, "@x86");
}

#[test]
fn treiber_mmt_survives_every_crash_point() {
    setting();
    common::run("treiber-mmt", 4, "@x86");
}
