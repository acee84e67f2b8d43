use super::*;

/// A span, the pair merged, the span after.
type Case<'a> = (&'a [u32], (u32, u32), &'a [u32]);

#[test]
fn merge_span_counts_every_changed_pair() {
    // (span, pair, span after): runs, overlapping pairs, a span without it
    let cases: [Case<'_>; 5] = [
        (&[1, 2, 1, 2, 5], (1, 2), &[9, 9, 5]),
        (&[1, 1, 1, 1], (1, 1), &[9, 9]),
        (&[1, 1, 1], (1, 1), &[9, 1]),
        (&[5, 1, 2], (1, 2), &[5, 9]),
        (&[3, 4], (1, 2), &[3, 4]),
    ];
    for (s, (a, b), want) in cases {
        let mut v: Vec<u32> = s.to_vec();
        let mut d = Deltas::default();
        let k = merge_span(&mut v, a, b, 9, 3, &mut d);
        assert_eq!(&v[..k], want);
        let mut expect = Deltas::default();
        for (x, sign) in [(s, -3), (&v[..k], 3)] {
            for w in x.windows(2) {
                *expect.entry(key(w[0], w[1])).or_insert(0) += sign;
            }
        }
        expect.retain(|_, c| *c != 0);
        d.retain(|_, c| *c != 0);
        assert_eq!(d, expect, "{s:?}");
    }
}
