//! RedoOpt-PTM's hash sets (seed §5, "Additional optimizations": store
//! aggregation and flush aggregation by cache line, with "efficient reset
//! and re-usage"): an open-addressing map from word offsets to log
//! positions, reset in O(1) by a generation number. Used by the write-set
//! log ([`super::tx`]) and a replica's dirty lines ([`super::state`]).
//!
//! A set probes only the first `active` slots of its array: [`MIN_ACTIVE`]
//! after each reset, doubled (its entries rehashed) whenever they are half
//! full, up to the whole array. A transaction of a few dozen stores thus
//! works in the same 1 KiB every time, in the L1 cache, where probing the
//! whole array (2 MiB for the default 64 Ki log entries) took a cache miss
//! per store.

/// An open-addressing hash map from 8-aligned offsets to positions, reset
/// in O(1) by bumping a generation (RedoOpt's store set and line set).
/// Bounded: refuses inserts beyond half its slots.
#[derive(Debug)]
pub(crate) struct WordSet {
    /// The slots: a probe reads one 16-byte slot (key, generation and value
    /// side by side), not three arrays (on every RedoOpt store).
    slots: Box<[Slot]>,
    /// The slots in use: a power of two, at most `slots.len()`.
    active: usize,
    gen: u32,
    len: usize,
    /// Store aggregation: `(position, previous new value)` of entries of
    /// earlier closures that the running closure rewrote.
    pub(crate) saves: Vec<(u64, u64)>,
}

/// The slots a set probes after a reset (64 slots: 1 KiB).
const MIN_ACTIVE: usize = 64;

/// A slot of a [`WordSet`]: in the set when `gen` is the set's generation.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    key: u64,
    gen: u32,
    val: u32,
}

impl WordSet {
    /// A set of `slots` (rounded up to a power of two, at least 8) slots.
    pub(crate) fn new(slots: usize) -> WordSet {
        let slots = slots.max(8).next_power_of_two();
        WordSet {
            slots: vec![Slot::default(); slots].into_boxed_slice(),
            active: slots.min(MIN_ACTIVE),
            gen: 1,
            len: 0,
            saves: Vec::new(),
        }
    }

    /// An empty placeholder (no slots; every insert is refused).
    pub(crate) fn none() -> WordSet {
        WordSet {
            slots: Box::new([]),
            active: 0,
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
        self.active = self.slots.len().min(MIN_ACTIVE);
        self.next_gen();
    }

    /// Empties every slot: a new generation (on wrap-around, every slot's
    /// generation zeroed first).
    fn next_gen(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.slots.iter_mut().for_each(|s| s.gen = 0);
            self.gen = 1;
        }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing of the word (or line) number.
        let h = (key >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.active.trailing_zeros())) as usize
    }

    /// Doubles the active slots, rehashing the entries into them.
    fn grow(&mut self) {
        let (gen, active) = (self.gen, self.active);
        let entries: Vec<(u64, u32)> = self.slots[..active]
            .iter()
            .filter(|s| s.gen == gen)
            .map(|s| (s.key, s.val))
            .collect();
        self.active = 2 * active;
        self.next_gen();
        for (key, val) in entries {
            if let Some(Err(i)) = self.find(key) {
                self.slots[i] = Slot {
                    key,
                    gen: self.gen,
                    val,
                };
            }
        }
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`, the empty slot where it
    /// would go (linear probing); `None` if the set has no slots.
    #[inline]
    pub(crate) fn find(&self, key: u64) -> Option<Result<usize, usize>> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.active - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.gen != self.gen {
                return Some(Err(i));
            }
            if s.key == key {
                return Some(Ok(i));
            }
            i = (i + 1) & mask;
        }
    }

    /// The position stored for `key`.
    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        match self.find(key)? {
            Ok(i) => Some(u64::from(self.slots[i].val)),
            Err(_) => None,
        }
    }

    /// The value in slot `slot` (an `Ok` of [`WordSet::find`]).
    #[inline]
    pub(crate) fn val_at(&self, slot: usize) -> u64 {
        u64::from(self.slots[slot].val)
    }

    /// Sets `key` to `val`; false if the set (its whole array) is half
    /// full or `val` does not fit (the caller then does without
    /// aggregation).
    #[cfg(all(test, not(any(perdure_loom, perdure_shuttle))))]
    pub(crate) fn insert(&mut self, key: u64, val: u64) -> bool {
        let found = self.find(key);
        self.insert_found(found, key, val)
    }

    /// [`WordSet::insert`] with `found`, what [`WordSet::find`] just said
    /// for `key` (no second probe).
    #[inline]
    pub(crate) fn insert_found(
        &mut self,
        found: Option<Result<usize, usize>>,
        key: u64,
        val: u64,
    ) -> bool {
        let Ok(val) = u32::try_from(val) else {
            return false;
        };
        match found {
            None => false,
            Some(Ok(i)) => {
                self.slots[i].val = val;
                true
            }
            Some(Err(_)) if 2 * (self.len + 1) > self.slots.len() => false,
            Some(Err(_)) if 2 * (self.len + 1) > self.active => {
                self.grow();
                let found = self.find(key);
                self.insert_found(found, key, u64::from(val))
            }
            Some(Err(i)) => {
                self.slots[i] = Slot {
                    key,
                    gen: self.gen,
                    val,
                };
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
    fn word_set_grows_its_active_slots_and_shrinks_them_on_clear() {
        let mut s = WordSet::new(1024);
        assert_eq!(s.active, MIN_ACTIVE);
        for k in 0..500u64 {
            assert!(s.insert(8 * k, k), "key {k}");
        }
        assert_eq!(s.active, 1024, "doubled at each half-full window");
        assert_eq!(s.len(), 500);
        for k in 0..500u64 {
            assert_eq!(s.get(8 * k), Some(k), "key {k} after the rehashes");
        }
        for k in 500..512u64 {
            assert!(s.insert(8 * k, k), "key {k}");
        }
        assert!(!s.insert(8 * 600, 1), "512 of 1024 slots is the bound");
        assert_eq!(s.get(8 * 511), Some(511));
        s.clear();
        assert_eq!(s.active, MIN_ACTIVE);
        assert_eq!(s.get(8), None);
        assert!(s.insert(8, 9));
        assert_eq!(s.get(8), Some(9));
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
