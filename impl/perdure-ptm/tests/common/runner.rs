//! What the concurrent tests do with a PTM, object-safe so that one test
//! body serves every construction: [`Runner`] runs a body on several
//! threads, each with a handle ([`Ops`]).

use perdure_ptm::Front;
use perdure_ptm::{PVar, Ptm, Transaction, TxRead};

/// What the tests do with a PTM, object-safe so one test body serves both
/// flavours: run `body` on `threads` threads, each with a handle.
pub trait Runner: Sync {
    fn setup(&self, words: u64);
    fn threads(&self, threads: usize, body: &(dyn Fn(usize, &dyn Ops) + Sync));
    fn read_word(&self, off_in_record: u64) -> u64;
    /// The stack's length by walking it, and its recorded length, in one
    /// read-only transaction.
    fn stack(&self) -> (u64, u64);
}

/// One thread's operations.
pub trait Ops {
    fn tid(&self) -> usize;
    /// Adds 1 to the record's word 0 and to its word `1 + slot`; returns
    /// `(slot << 32) | new slot value`, with the new total in bits 16..32.
    fn bump(&self, slot: u64) -> u64;
    /// The record's total and the sum of its first `slots` slots.
    fn sums(&self, slots: u64) -> (u64, u64);
    /// Pushes on / pops from the stack at roots 1 (top) and 2 (length).
    fn push(&self, v: u64);
    fn pop(&self);
    /// Two words on different lines, set together to `a + 1`.
    fn pair_inc(&self);
    fn pair(&self) -> (u64, u64);
}

pub fn bump<T: Transaction>(tx: &T, slot: u64) -> u64 {
    let rec = tx.root(0);
    let s = PVar::<u64>::at(rec + 8 * (1 + slot));
    let n = tx.get(s) + 1;
    tx.set(s, n);
    let total = PVar::<u64>::at(rec);
    tx.set(total, tx.get(total) + 1);
    (slot << 32) | n
}

impl<P: Ptm + Front> Runner for P {
    fn setup(&self, words: u64) {
        self.handle().unwrap().update_tx(move |tx| {
            let rec = tx.alloc_zeroed(8 * words).unwrap();
            tx.set_root(0, rec);
            let pair = tx.alloc_zeroed(128).unwrap();
            tx.set_root(3, pair);
        });
    }

    fn threads(&self, threads: usize, body: &(dyn Fn(usize, &dyn Ops) + Sync)) {
        let barrier = std::sync::Barrier::new(threads);
        std::thread::scope(|s| {
            for i in 0..threads {
                let barrier = &barrier;
                s.spawn(move || {
                    let h = self.handle().unwrap();
                    barrier.wait();
                    body(i, &h);
                });
            }
        });
    }

    fn read_word(&self, off: u64) -> u64 {
        self.read_tx(move |tx| tx.load(tx.root(0) + off)).unwrap()
    }

    fn stack(&self) -> (u64, u64) {
        let w: u64 = self
            .read_tx(|tx| {
                let mut n = 0u64;
                let mut cur = tx.root(1);
                while cur != 0 {
                    n += 1;
                    cur = tx.load(cur + 8);
                }
                (n << 32) | tx.root(2)
            })
            .unwrap();
        (w >> 32, w & 0xffff_ffff)
    }
}

impl<P: Ptm + Front> Ops for perdure_ptm::Handle<'_, P> {
    fn tid(&self) -> usize {
        perdure_ptm::Handle::tid(self)
    }
    fn bump(&self, slot: u64) -> u64 {
        self.update_tx(move |tx| bump(tx, slot))
    }
    fn sums(&self, slots: u64) -> (u64, u64) {
        let w: u64 = self.read_tx(move |tx| {
            let rec = tx.root(0);
            let s: u64 = (0..slots).map(|t| tx.load(rec + 8 * (1 + t))).sum();
            (tx.load(rec) << 32) | s
        });
        (w >> 32, w & 0xffff_ffff)
    }
    fn push(&self, v: u64) {
        self.update_tx(move |tx| {
            let n = tx.alloc(16).unwrap();
            tx.store(n, v);
            tx.store(n + 8, tx.root(1));
            tx.set_root(1, n);
            tx.set_root(2, tx.root(2) + 1);
        });
    }
    fn pop(&self) {
        self.update_tx(|tx| {
            let top = tx.root(1);
            if top != 0 {
                tx.set_root(1, tx.load(top + 8));
                tx.set_root(2, tx.root(2) - 1);
                tx.free(top).unwrap();
            }
        });
    }
    fn pair_inc(&self) {
        self.update_tx(|tx| {
            let a = tx.root(3);
            let v = tx.load(a) + 1;
            tx.store(a, v);
            tx.store(a + 64, v);
        });
    }
    fn pair(&self) -> (u64, u64) {
        let w: u64 = self.read_tx(|tx| {
            let a = tx.root(3);
            (tx.load(a) << 32) | tx.load(a + 64)
        });
        (w >> 32, w & 0xffff_ffff)
    }
}

/// `threads` threads push (two of three times) and pop (the third) `k`
/// times each on the stack at roots 1 and 2; the stack and its count then
/// agree and hold pushes minus pops.
pub fn allocating_transactions(name: &str, p: &dyn Runner, threads: usize, k: u64) {
    p.setup(1);
    p.threads(threads, &|i, h| {
        for j in 0..k {
            if j % 3 == 2 {
                h.pop();
            } else {
                h.push(((i as u64) << 32) | j);
            }
        }
    });
    let (len, count) = p.stack();
    assert_eq!(len, count, "{name}: the list and its count disagree");
    assert_eq!(len, threads as u64 * k / 3, "{name}: pushes minus pops");
}
