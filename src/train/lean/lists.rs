//! Where each token may occur: per token, the spans that held it, in
//! ascending order, as gaps in LEB128 (one byte for a gap below 128, so a
//! common token costs about a byte per span). A list is never pruned: a
//! token merged away from a span stays listed there (the merge loop checks
//! the span), and no token comes back once merged away.

/// No span listed yet.
const NONE: u32 = u32::MAX;

pub(super) struct SpanLists {
    bytes: Vec<Vec<u8>>,
    last: Vec<u32>,
    len: Vec<u32>,
}

impl SpanLists {
    /// Empty lists for `ids` tokens.
    pub fn new(ids: usize) -> Self {
        SpanLists {
            bytes: vec![Vec::new(); ids],
            last: vec![NONE; ids],
            len: vec![0; ids],
        }
    }

    /// Lists span `r` for token `t` (spans come in ascending order; the same
    /// span twice in a row is listed once).
    pub fn push(&mut self, t: u32, r: u32) {
        let t = t as usize;
        let last = self.last[t];
        if last == r {
            return;
        }
        let mut gap = if last == NONE { r } else { r - last - 1 };
        let out = &mut self.bytes[t];
        while gap >= 0x80 {
            out.push((gap as u8) | 0x80);
            gap >>= 7;
        }
        out.push(gap as u8);
        self.last[t] = r;
        self.len[t] += 1;
    }

    /// Number of spans listed for `t`.
    pub fn len(&self, t: u32) -> u32 {
        self.len[t as usize]
    }

    /// The spans listed for `t`, ascending.
    pub fn spans(&self, t: u32) -> Spans<'_> {
        Spans {
            bytes: &self.bytes[t as usize],
            at: 0,
            next: 0,
        }
    }

    /// Bytes held (for tests and accounting).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.bytes.iter().map(Vec::len).sum()
    }
}

/// The decoder of one list.
pub(super) struct Spans<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The least span the next gap counts from.
    next: u32,
}

impl Iterator for Spans<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let mut gap = 0u32;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            gap |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        let r = self.next + gap;
        self.next = r + 1;
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_give_back_their_spans_once_each_in_order() {
        let mut l = SpanLists::new(3);
        let spans = [
            0u32,
            0,
            1,
            127,
            128,
            129,
            300,
            20_000,
            20_000,
            4_000_000_000,
        ];
        for &r in &spans {
            l.push(2, r);
        }
        l.push(0, 5);
        let mut want: Vec<u32> = spans.to_vec();
        want.dedup();
        assert_eq!(l.spans(2).collect::<Vec<_>>(), want);
        assert_eq!(l.len(2), want.len() as u32);
        assert_eq!(l.spans(0).collect::<Vec<_>>(), vec![5]);
        assert_eq!(l.spans(1).count(), 0);
        // small gaps take a byte each
        assert!(l.heap_bytes() < 24);
    }
}
