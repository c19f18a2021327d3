//! The crash explorer on every Memento scenario — the structures, and the
//! primitives as `register`s (`src/scenarios_prim.rs`: detectable CAS under
//! 2 and 3 threads, CHECKPOINT of one- and two-line slots): schedules × every crash
//! point × Px86 crash images, each recovered (runtime open, structure
//! recovery, cut-off operations resumed with their mementos) and checked
//! for durable linearizability and detectability (the structures under 2
//! threads, and under 3).
//! Reports a PERDURE-CHECK row per scenario for `make verify`.

mod common;
#[macro_use]
mod explore_suite;

explore_tests! {
    msq_mmt_indel_survives_every_crash_point => common::run("msq-mmt-indel", 4, "");
    msq_mmt_indel_3_threads_impatient_survives_every_crash_point => common::run("msq-mmt-indel-3t-impatient", 8, "");
    msq_mmt_vol_survives_every_crash_point => common::run("msq-mmt-vol", 4, "");
    msq_mmt_cas_survives_every_crash_point => common::run("msq-mmt-cas", 4, "");
    treiber_mmt_survives_every_crash_point => common::run("treiber-mmt", 4, "");
    elim_stack_mmt_survives_every_crash_point => common::run("elim-stack-mmt", 4, "");
    combq_mmt_survives_every_crash_point => common::run("combq-mmt", 4, "");
    soft_mmt_survives_every_crash_point => common::run("soft-mmt", 4, "");
    soft_mmt_3_threads_survives_every_crash_point => common::run("soft-mmt-3t", 2, "");
    clevel_mmt_survives_every_crash_point => common::run("clevel-mmt", 4, "");
    clevel_mmt_drain_survives_every_crash_point => common::run_seeded("clevel-mmt-drain", 8, 1);
    cas_register_2_threads_survives_every_crash_point => common::run("cas-register-2", 8, "");
    cas_register_3_threads_survives_every_crash_point => common::run("cas-register-3", 8, "");
    cas_register_2_wide_survives_every_crash_point => common::run("cas-register-2-wide", 2, "");
    checkpoint_one_line_survives_every_crash_point => common::run("checkpoint-1line", 1, "");
    checkpoint_two_lines_survives_every_crash_point => common::run("checkpoint-2line", 1, "");
    msq_mmt_vol_3_threads_survives_every_crash_point => common::run("msq-mmt-vol-3t", 2, "");
    msq_mmt_cas_3_threads_survives_every_crash_point => common::run("msq-mmt-cas-3t", 2, "");
    treiber_mmt_3_threads_survives_every_crash_point => common::run("treiber-mmt-3t", 2, "");
    msq_mmt_vol_survives_crashes_during_recovery => common::run_recovery_crashes("msq-mmt-vol", 24);
    msq_mmt_cas_survives_crashes_during_recovery => common::run_recovery_crashes("msq-mmt-cas", 24);
    treiber_mmt_survives_crashes_during_recovery => common::run_recovery_crashes("treiber-mmt", 24);
    cas_register_2_threads_survives_crashes_during_recovery => common::run_recovery_crashes("cas-register-2", 24);
    combq_mmt_survives_crashes_during_recovery => common::run_recovery_crashes("combq-mmt", 24);
    elim_stack_mmt_survives_crashes_during_recovery => common::run_recovery_crashes("elim-stack-mmt", 24);
    clevel_mmt_survives_crashes_during_recovery => common::run_recovery_crashes("clevel-mmt", 24);
    clevel_mmt_drain_survives_crashes_during_recovery => common::run_recovery_crashes_over("clevel-mmt-drain", 2, 24, 3, 8);
    soft_mmt_survives_crashes_during_recovery => common::run_recovery_crashes_seeded("soft-mmt", 48, 4, 16);
    elim_stack_mmt_3_threads_survives_every_crash_point => common::run("elim-stack-mmt-3t", 2, "");
    elim_stack_mmt_3_threads_3_exchangers_survives_every_crash_point => common::run("elim-stack-mmt-3t-3x", 2, "");
    combq_mmt_3_threads_survives_every_crash_point => common::run("combq-mmt-3t", 2, "");
    cas_register_2_threads_dfs => common::run_dfs("cas-register-2", 8);
    msq_mmt_cas_dfs => common::run_dfs("msq-mmt-cas", 4);
    treiber_mmt_dfs => common::run_dfs("treiber-mmt", 4);
    msq_mmt_cas_create_crash => common::run_creation("msq-mmt-cas");
    msq_mmt_indel_create_crash => common::run_creation("msq-mmt-indel");
    msq_mmt_vol_create_crash => common::run_creation("msq-mmt-vol");
    treiber_mmt_create_crash => common::run_creation("treiber-mmt");
    elim_stack_mmt_create_crash => common::run_creation("elim-stack-mmt");
    combq_mmt_create_crash => common::run_creation("combq-mmt");
    soft_mmt_create_crash => common::run_creation("soft-mmt");
    clevel_mmt_create_crash => common::run_creation("clevel-mmt");
    clevel_mmt_drain_create_crash => common::run_creation("clevel-mmt-drain");
    cas_register_2_create_crash => common::run_creation("cas-register-2");
    checkpoint_1line_create_crash => common::run_creation("checkpoint-1line");
}
