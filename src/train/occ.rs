//! A pair's occurrence list in the compact merge loop ([`super::compact`]):
//! the ids of the chunks holding the pair, ascending, exact (sized once, when
//! the merge step that makes the pair ends, and never grown). Most pairs occur
//! in one or two chunks; those two ids sit inline, in the 16 bytes a boxed
//! slice takes, so they cost no allocation of their own.

use std::ops::Deref;

/// An unused inline slot (chunk ids stay below it).
const EMPTY: u32 = u32::MAX;

/// See the module docs.
#[derive(Clone, Debug)]
pub enum Occ {
    /// Up to two ids, unused slots (at the end) holding [`EMPTY`].
    Two([u32; 2]),
    /// Three ids or more.
    Many(Box<[u32]>),
}

// the inline ids share the boxed slice's bytes (its pointer's niche tags the variant)
const _: () = assert!(std::mem::size_of::<Occ>() == 16);

impl Default for Occ {
    fn default() -> Self {
        Occ::Two([EMPTY; 2])
    }
}

impl Occ {
    /// A list of `len` ids, to be written with [`Occ::set`] in order.
    pub fn sized(len: usize) -> Self {
        if len <= 2 {
            Occ::default()
        } else {
            Occ::Many(vec![0; len].into_boxed_slice())
        }
    }

    /// Writes id `c` at index `j` (below the `len` it was sized for).
    #[inline]
    pub fn set(&mut self, j: usize, c: u32) {
        debug_assert!(c != EMPTY);
        match self {
            Occ::Two(ids) => ids[j] = c,
            Occ::Many(ids) => ids[j] = c,
        }
    }
}

impl Deref for Occ {
    type Target = [u32];

    #[inline]
    fn deref(&self) -> &[u32] {
        match self {
            Occ::Two(ids) => {
                let n = if ids[0] == EMPTY {
                    0
                } else if ids[1] == EMPTY {
                    1
                } else {
                    2
                };
                &ids[..n]
            }
            Occ::Many(ids) => ids,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_of_every_size_read_back() {
        for len in 0..6 {
            let mut o = Occ::sized(len);
            for j in 0..len {
                o.set(j, 10 * j as u32 + 3);
            }
            let want: Vec<u32> = (0..len).map(|j| 10 * j as u32 + 3).collect();
            assert_eq!(&*o, want.as_slice());
            assert_eq!(matches!(o, Occ::Two(_)), len <= 2);
        }
        assert!(Occ::default().is_empty());
    }
}
