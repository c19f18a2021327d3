//! The ordered sets (the skip list and the BST) as a kind of their own, for
//! the tests that exercise only them; [`Set`] is `common`'s [`Ds`] (include
//! `mod common;` beside `mod sets;`).
#![allow(dead_code)]

#[allow(unused_imports)] // Set: not every test that uses the shapes opens one
pub use super::common::{Ds as Set, Kind};
use perdure_relax::Tracking;

/// Which ordered set a test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The skip list.
    Skip,
    /// The Natarajan–Mittal BST.
    Bst,
}

impl From<Shape> for Kind {
    fn from(s: Shape) -> Kind {
        match s {
            Shape::Skip => Kind::Skip,
            Shape::Bst => Kind::Bst,
        }
    }
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::Skip, Shape::Bst];

    /// A short name for messages and PERDURE-CHECK rows.
    pub fn name(self) -> &'static str {
        Kind::from(self).name()
    }

    /// The tracking variants that apply to the shape.
    pub fn variants(self) -> Vec<Tracking> {
        Kind::from(self).variants()
    }

    /// `run(self, t)` for every variant `t` that applies to the shape.
    pub fn under_every_variant(self, run: fn(Shape, Tracking)) {
        for t in self.variants() {
            run(self, t);
        }
    }
}
