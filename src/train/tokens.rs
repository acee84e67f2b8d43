//! The bytes of every token while a vocabulary grows (the base's and the
//! new ones), for the tests that pass pairs over: joined bytes too long,
//! already a token, or holding too many words. Shared by the node loop
//! ([`super::from_tokens`]) and the lean loop ([`super::lean`]).

use rustc_hash::FxHashSet;

use crate::vocab::Vocab;

/// Bytes of every token: the base's and the new ones, with a set to test
/// whether joined bytes already are a token.
pub(super) struct Tokens<'a> {
    base: Option<&'a Vocab>,
    first_new: u32,
    new: Vec<Vec<u8>>,
    new_set: FxHashSet<Vec<u8>>,
    scratch: Vec<u8>,
}

impl<'a> Tokens<'a> {
    /// The tokens of `base` (None: the 256 bytes), new ones from `first_new` on.
    pub(super) fn new(base: Option<&'a Vocab>, first_new: u32) -> Self {
        Tokens {
            base,
            first_new,
            new: Vec::new(),
            new_set: FxHashSet::default(),
            scratch: Vec::new(),
        }
    }

    fn bytes(&self, id: u32) -> &[u8] {
        if id >= self.first_new {
            &self.new[(id - self.first_new) as usize]
        } else if let Some(v) = self.base {
            v.token(id).unwrap_or(&[])
        } else {
            std::slice::from_ref(&BYTES[id as usize & 255])
        }
    }

    fn len(&self, id: u32) -> usize {
        self.bytes(id).len()
    }

    /// Whether `(a, b)` must be passed over.
    pub(super) fn skip(&mut self, a: u32, b: u32, max_len: Option<usize>) -> bool {
        if max_len.is_some_and(|m| self.len(a) + self.len(b) > m) {
            return true;
        }
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        s.extend_from_slice(self.bytes(a));
        s.extend_from_slice(self.bytes(b));
        let dup = self.new_set.contains(&s)
            || match self.base {
                Some(v) => v.rank(&s).is_some(),
                None => s.len() == 1,
            };
        self.scratch = s;
        dup
    }

    /// Whether the token joining `a` and `b` would hold more than `max_words`
    /// words (maximal runs of bytes other than the space).
    pub(super) fn too_many_words(&self, a: u32, b: u32, max_words: Option<usize>) -> bool {
        let Some(m) = max_words else {
            return false;
        };
        let (x, y) = (self.bytes(a), self.bytes(b));
        let seam = x.last().is_some_and(|&c| c != b' ') && y.first().is_some_and(|&c| c != b' ');
        word_count(x) + word_count(y) - usize::from(seam) > m
    }

    pub(super) fn push(&mut self, a: u32, b: u32) {
        let mut t = self.bytes(a).to_vec();
        t.extend_from_slice(self.bytes(b));
        self.new_set.insert(t.clone());
        self.new.push(t);
    }
}

/// The words of `token`: maximal runs of bytes other than the space (0x20).
pub fn word_count(token: &[u8]) -> usize {
    let mut n = 0;
    let mut prev = b' ';
    for &c in token {
        n += usize::from(c != b' ' && prev == b' ');
        prev = c;
    }
    n
}

static BYTES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
};
