//! Unit tests of the budget searches: the prefix search against an oracle
//! where counts are not monotone, and counting with a limit.

use super::*;

fn byte_vocab_plus(extra: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    v.extend(extra.iter().map(|e| e.to_vec()));
    v
}

/// The longest prefix against every prefix, on a vocabulary where the
/// count is not monotone ("ab" is two tokens, "abc" one).
#[test]
fn prefix_matches_oracle_when_not_monotone() {
    let bpe = CoreBpe::new(byte_vocab_plus(&[b"bc", b"abc"]), vec![], None).unwrap();
    let pol = bpe.policy::<&str>(&[], &[]);
    for text in ["abc", "abcab", "ab", "xabcabcx", "aabcbc"] {
        for max in 0..6 {
            let want = (0..=text.len())
                .rev()
                .find(|&k| bpe.count(&text[..k], &pol).unwrap() <= max)
                .unwrap();
            assert_eq!(
                bpe.truncate_prefix(text, &pol, max).unwrap(),
                want,
                "{text} {max}"
            );
            let want_s = (0..=text.len())
                .find(|&k| bpe.count(&text[k..], &pol).unwrap() <= max)
                .unwrap();
            assert_eq!(
                bpe.truncate_suffix(text, &pol, max).unwrap(),
                want_s,
                "{text} {max}"
            );
        }
    }
    assert_eq!(bpe.count("ab", &pol).unwrap(), 2);
    assert_eq!(bpe.truncate_prefix("abc", &pol, 1).unwrap(), 3);
}

#[test]
fn count_until_stops() {
    let bpe = CoreBpe::new(byte_vocab_plus(&[]), vec![], Some("gpt2")).unwrap();
    let pol = bpe.policy::<&str>(&[], &[]);
    let text = "ab cd ".repeat(1000);
    assert_eq!(bpe.count_until(&text, &pol, 10).unwrap(), 11);
    assert_eq!(
        bpe.count_until(&text, &pol, 1 << 20).unwrap(),
        bpe.count(&text, &pol).unwrap()
    );
}
