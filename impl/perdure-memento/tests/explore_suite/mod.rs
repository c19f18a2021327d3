//! The tables of the Memento explorer test binaries: one `#[test]` per row,
//! so that each binary lists its scenarios once and the per-setting binaries
//! (`explore_memento_x86.rs`, `explore_memento_zero.rs`) share their list.

/// One `#[test]` per row `test_name => runner(args);`: the test calls
/// `runner(args)` (`common::run`, `common::run_recovery_crashes`, or a
/// binary's own wrapper).
macro_rules! explore_tests {
    ($($test:ident => $run:ident $(:: $path:ident)* ($($arg:expr),* $(,)?);)*) => {
        $(
            #[test]
            fn $test() {
                $run $(:: $path)* ($($arg),*);
            }
        )*
    };
}

/// The scenarios every per-setting binary explores under its setting: the
/// environment variable `$var` set to `$value` before each run, and the
/// PERDURE-CHECK rows named `explore:{name}{$suffix}`.
#[allow(unused_macros)] // only the per-setting binaries use it
macro_rules! setting_suite {
    ($var:literal = $value:literal, $suffix:literal) => {
        fn run_in_setting(name: &str) {
            std::env::set_var($var, $value);
            common::run(name, 4, $suffix);
        }

        explore_tests! {
            msq_mmt_indel_survives_every_crash_point => run_in_setting("msq-mmt-indel");
            msq_mmt_cas_survives_every_crash_point => run_in_setting("msq-mmt-cas");
            treiber_mmt_survives_every_crash_point => run_in_setting("treiber-mmt");
        }
    };
}
