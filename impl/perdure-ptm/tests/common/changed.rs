//! A base value changed one field at a time: the tables of bad
//! configurations and options the bad-input tests loop over.

#![allow(dead_code)]

/// `base` with each of `changes` applied, one at a time, in order.
pub fn each_changed<C: Clone>(base: C, changes: &[fn(&mut C)]) -> Vec<C> {
    changes
        .iter()
        .map(|change| {
            let mut c = base.clone();
            change(&mut c);
            c
        })
        .collect()
}
