//! Copy-on-write pool words for the simulator ([`crate::sim`]).
//!
//! The simulator keeps its own copy of the pool's memory and captures a
//! [`crate::sim::CrashPoint`] after every persistence event. A capture that
//! cloned the whole memory cost a copy of the pool per event (2 MiB for a
//! Memento runtime, thousands of events per schedule), which was most of an
//! explorer run's time. [`Pages`] holds the words in 4 KiB pages behind
//! reference counts: a clone shares every page, a write copies only the page
//! it lands in (and only if another clone still shares it), so a capture
//! costs one pointer per page and the events between two captures copy the
//! few pages they write.

use std::sync::{Arc, OnceLock};

/// Words per page (4 KiB).
const PAGE_WORDS: usize = 512;

type Page = [u64; PAGE_WORDS];

/// The one all-zero page every [`Pages`] shares (so that a pool's untouched
/// pages are known without reading them).
fn zero_page() -> &'static Arc<Page> {
    static ZERO: OnceLock<Arc<Page>> = OnceLock::new();
    ZERO.get_or_init(|| Arc::new([0; PAGE_WORDS]))
}

/// A vector of `u64` words stored as shared, copy-on-write pages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pages {
    pages: Vec<Arc<Page>>,
    len: usize,
}

impl Pages {
    /// The words of `words`, all-zero pages sharing one page.
    pub(crate) fn from_words(words: &[u64], len: usize) -> Pages {
        let zero = zero_page();
        let pages = (0..len.div_ceil(PAGE_WORDS))
            .map(|p| {
                let start = (p * PAGE_WORDS).min(words.len());
                let end = ((p + 1) * PAGE_WORDS).min(words.len());
                let src = &words[start..end];
                if src.iter().all(|&w| w == 0) {
                    zero.clone()
                } else {
                    let mut page = [0; PAGE_WORDS];
                    page[..src.len()].copy_from_slice(src);
                    Arc::new(page)
                }
            })
            .collect();
        Pages { pages, len }
    }

    /// The word at index `i`, if `i` is in range.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<u64> {
        (i < self.len).then(|| self.pages[i / PAGE_WORDS][i % PAGE_WORDS])
    }

    /// Sets the word at index `i` (nothing if out of range), copying its
    /// page first if a clone shares it.
    #[inline]
    pub(crate) fn set(&mut self, i: usize, v: u64) {
        if i < self.len {
            let page = &mut self.pages[i / PAGE_WORDS];
            if page[i % PAGE_WORDS] != v {
                Arc::make_mut(page)[i % PAGE_WORDS] = v;
            }
        }
    }

    /// The number of words.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Calls `f` with the index and value of every non-zero word, skipping
    /// the pages never written (shared with the zero page) unread.
    pub(crate) fn for_each_nonzero(&self, mut f: impl FnMut(usize, u64)) {
        let zero = zero_page();
        for (p, page) in self.pages.iter().enumerate() {
            if Arc::ptr_eq(page, zero) {
                continue;
            }
            let base = p * PAGE_WORDS;
            for (k, &w) in page.iter().enumerate().take(self.len - base) {
                if w != 0 {
                    f(base + k, w);
                }
            }
        }
    }

    /// The words as one vector.
    pub(crate) fn to_vec(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len);
        for page in &self.pages {
            let take = (self.len - out.len()).min(PAGE_WORDS);
            out.extend_from_slice(&page[..take]);
        }
        out
    }
}

/// One crash image's pool words ([`crate::sim::CrashPoint::image`]), in shared
/// copy-on-write pages.
#[derive(Clone, Debug)]
pub struct CrashImage {
    words: Pages,
}

impl CrashImage {
    pub(crate) fn new(words: Pages) -> CrashImage {
        CrashImage { words }
    }

    /// The shared pages themselves (the simulator attaches them as a new
    /// pool's memory without copying).
    pub(crate) fn pages(&self) -> &Pages {
        &self.words
    }

    /// The words as one vector (what [`crate::sim::CrashPoint::materialize`] returns).
    pub fn words(&self) -> Vec<u64> {
        self.words.to_vec()
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the image has no words.
    pub fn is_empty(&self) -> bool {
        self.words.len() == 0
    }

    /// The first `n` words (fewer if the image is shorter).
    pub fn head(&self, n: usize) -> Vec<u64> {
        (0..n.min(self.len()))
            .map(|i| self.words.get(i).unwrap_or(0))
            .collect()
    }

    /// Calls `f` with the index and value of every non-zero word.
    pub fn for_each_nonzero(&self, f: impl FnMut(usize, u64)) {
        self.words.for_each_nonzero(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_keeps_its_words_when_the_original_is_written() {
        let words: Vec<u64> = (0..1500)
            .map(|i| if i % 700 == 0 { i + 1 } else { 0 })
            .collect();
        let mut a = Pages::from_words(&words, 1600);
        assert_eq!(a.get(0), Some(1));
        assert_eq!(a.get(1400), Some(1401));
        assert_eq!(a.get(1599), Some(0));
        assert_eq!(a.get(1600), None);
        let b = a.clone();
        a.set(3, 9);
        a.set(1599, 7);
        a.set(1600, 5);
        assert_eq!((a.get(3), b.get(3)), (Some(9), Some(0)));
        assert_eq!((a.get(1599), b.get(1599)), (Some(7), Some(0)));
        let v = a.to_vec();
        assert_eq!(v.len(), 1600);
        assert_eq!((v[0], v[3], v[700], v[1400], v[1599]), (1, 9, 701, 1401, 7));
        assert_eq!(b.to_vec()[..1500], words[..]);
        // Shared zero pages are copied on write, not written through.
        let mut z = Pages::from_words(&[], 2048);
        z.set(5, 1);
        assert_eq!((z.get(5), z.get(512 + 5)), (Some(1), Some(0)));
        let mut seen = Vec::new();
        z.for_each_nonzero(|i, w| seen.push((i, w)));
        assert_eq!(seen, [(5, 1)]);
        let mut seen = Vec::new();
        a.for_each_nonzero(|i, w| seen.push((i, w)));
        assert_eq!(seen, [(0, 1), (3, 9), (700, 701), (1400, 1401), (1599, 7)]);
    }
}
