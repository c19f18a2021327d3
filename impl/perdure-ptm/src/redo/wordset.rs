//! RedoOpt-PTM's hash sets (seed §5, "Additional optimizations": store
//! aggregation and flush aggregation by cache line, with "efficient reset
//! and re-usage"): an open-addressing map from word offsets to log
//! positions, reset in O(1) by a generation number. Used by the write-set
//! log ([`super::tx`]) and a replica's dirty lines ([`super::state`]).

/// An open-addressing hash map from 8-aligned offsets to positions, reset
/// in O(1) by bumping a generation (RedoOpt's store set and line set).
/// Bounded: refuses inserts beyond half its slots.
#[derive(Debug)]
pub(crate) struct WordSet {
    keys: Box<[u64]>,
    vals: Box<[u32]>,
    gens: Box<[u32]>,
    gen: u32,
    len: usize,
    /// Store aggregation: `(position, previous new value)` of entries of
    /// earlier closures that the running closure rewrote.
    pub(crate) saves: Vec<(u64, u64)>,
}

impl WordSet {
    /// A set of `slots` (rounded up to a power of two, at least 8) slots.
    pub(crate) fn new(slots: usize) -> WordSet {
        let slots = slots.max(8).next_power_of_two();
        WordSet {
            keys: vec![0; slots].into_boxed_slice(),
            vals: vec![0; slots].into_boxed_slice(),
            gens: vec![0; slots].into_boxed_slice(),
            gen: 1,
            len: 0,
            saves: Vec::new(),
        }
    }

    /// An empty placeholder (no slots; every insert is refused).
    pub(crate) fn none() -> WordSet {
        WordSet {
            keys: Box::new([]),
            vals: Box::new([]),
            gens: Box::new([]),
            gen: 1,
            len: 0,
            saves: Vec::new(),
        }
    }

    /// Bytes this set holds.
    pub(crate) fn bytes_for(slots: usize) -> u64 {
        16 * slots.max(8).next_power_of_two() as u64
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.saves.clear();
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.gens.iter_mut().for_each(|g| *g = 0);
            self.gen = 1;
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing of the word (or line) number.
        let h = (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.keys.len().trailing_zeros())) as usize
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`, the empty slot where it
    /// would go (linear probing); `None` if the set has no slots.
    #[inline]
    fn find(&self, key: u64) -> Option<Result<usize, usize>> {
        if self.keys.is_empty() {
            return None;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        loop {
            if self.gens[i] != self.gen {
                return Some(Err(i));
            }
            if self.keys[i] == key {
                return Some(Ok(i));
            }
            i = (i + 1) & mask;
        }
    }

    /// The position stored for `key`.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        match self.find(key)? {
            Ok(i) => Some(u64::from(self.vals[i])),
            Err(_) => None,
        }
    }

    /// Sets `key` to `val`; false if the set is half full or `val` does not
    /// fit (the caller then does without aggregation).
    #[inline]
    pub(crate) fn insert(&mut self, key: u64, val: u64) -> bool {
        let Ok(val) = u32::try_from(val) else {
            return false;
        };
        match self.find(key) {
            None => false,
            Some(Ok(i)) => {
                self.vals[i] = val;
                true
            }
            Some(Err(_)) if 2 * (self.len + 1) > self.keys.len() => false,
            Some(Err(i)) => {
                self.gens[i] = self.gen;
                self.keys[i] = key;
                self.vals[i] = val;
                self.len += 1;
                true
            }
        }
    }

    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

#[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn word_set_maps_resets_and_bounds() {
        let mut s = WordSet::new(8);
        assert!(s.insert(64, 1));
        assert!(s.insert(72, 2));
        assert!(s.insert(64, 3), "an existing key is updated");
        assert_eq!(s.get(64), Some(3));
        assert_eq!(s.get(72), Some(2));
        assert_eq!(s.get(80), None);
        assert!(s.insert(80, 4));
        assert!(s.insert(88, 5));
        assert_eq!(s.len(), 4);
        assert!(!s.insert(96, 6), "half of 8 slots is the bound");
        s.clear();
        assert_eq!(s.get(64), None, "clear forgets every key");
        assert_eq!(s.len(), 0);
        assert!(s.insert(96, 7));
        assert_eq!(s.get(96), Some(7));
        assert!(!WordSet::none().insert(8, 1));
        assert!(!s.insert(104, u64::from(u32::MAX) + 1));
    }

    #[test]
    fn word_set_survives_generation_wrap() {
        let mut s = WordSet::new(8);
        s.gen = u32::MAX;
        assert!(s.insert(8, 1));
        s.clear();
        assert_eq!(s.gen, 1);
        assert_eq!(s.get(8), None);
    }
}
