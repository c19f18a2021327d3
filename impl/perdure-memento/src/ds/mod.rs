//! The detectable structures of §5 and §7, and the baselines of §7.1.
