//! CX-PUC's plain value in the tests that use its typed interface
//! (`cx_basic.rs`, `shuttle_cx.rs`): a stack of [`Node`]s and its length,
//! changed with ordinary Rust.

use perdure_ptm::cx::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The object: the top node's offset (0: empty) and the length.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[zerocopy(crate = "perdure_ptm::cx::zerocopy")]
#[repr(C)]
pub struct Stack {
    pub top: u64,
    pub len: u64,
}

/// A node: its value and the next node's offset.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[zerocopy(crate = "perdure_ptm::cx::zerocopy")]
#[repr(C)]
pub struct Node {
    pub value: u64,
    pub next: u64,
}
