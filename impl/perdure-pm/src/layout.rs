//! Word layouts of persistent records.
//!
//! The constructions keep their nodes, headers and log entries as runs of
//! 8-byte words in a pool. [`word_offsets!`](crate::word_offsets) names the
//! words of one record in the order they lie, so no offset is written out by
//! hand and a reader sees the whole record on one line.

/// `word_offsets!(A, B, C)` declares the byte offsets of consecutive 8-byte
/// words: `const A: u64 = 0; const B: u64 = 8; const C: u64 = 16;`, the
/// offsets of the fields of a `#[repr(C)]` struct of `u64`s. `_` stands
/// for a word the code reaches another way (a magic written by a shared
/// helper, a word named by a shared module).
///
/// ```
/// perdure_pm::word_offsets!(_, ROOT, LEN);
/// perdure_pm::word_offsets!(KEY, LEFT, RIGHT);
/// assert_eq!([ROOT, LEN, KEY, LEFT, RIGHT], [8, 16, 0, 8, 16]);
/// ```
#[macro_export]
macro_rules! word_offsets {
    (@at $off:expr;) => {};
    (@at $off:expr; _ $(, $rest:tt)*) => {
        $crate::word_offsets!(@at $off + 8; $($rest),*);
    };
    (@at $off:expr; $name:ident $(, $rest:tt)*) => {
        const $name: u64 = $off;
        $crate::word_offsets!(@at $off + 8; $($rest),*);
    };
    ($($name:tt),+ $(,)?) => {
        $crate::word_offsets!(@at 0; $($name),+);
    };
}
