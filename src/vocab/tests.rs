//! Tests of the vocabulary tables.

use super::*;

#[test]
fn tiktoken_lines_roundtrip() {
    use base64::Engine as _;
    let e = &base64::engine::general_purpose::STANDARD;
    let mut text = String::new();
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    toks.push(b"hello".to_vec());
    for (i, t) in toks.iter().enumerate() {
        text.push_str(&format!("{} {i}\n", e.encode(t)));
    }
    let v = Vocab::from_tiktoken(text.as_bytes()).unwrap();
    assert_eq!(v.len(), 257);
    assert_eq!(v.rank(b"hello"), Some(256));
    assert_eq!(v.token(256), Some(&b"hello"[..]));
    assert_eq!(v.token(257), None);
    let bad = text.replace(" 256", " 300");
    assert!(
        matches!(Vocab::from_tiktoken(bad.as_bytes()), Err(Error::InvalidVocab { reason, .. }) if reason.contains("line 257"))
    );
}

#[test]
fn append_token_copies_exactly_the_token() {
    // lengths 1..=40 around the 16-byte block, the last token short so its
    // block reaches into the padding
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for n in 2..=40u8 {
        toks.push(
            (0..n as u32)
                .map(|i| b'a' + ((i * 7 + n as u32) % 26) as u8)
                .collect(),
        );
    }
    toks.push(b"zq".to_vec());
    let v = Vocab::new(toks.clone()).unwrap();
    let mut out = b"head".to_vec();
    let mut want = out.clone();
    for (r, t) in toks.iter().enumerate().rev() {
        assert!(v.append_token(r as Rank, &mut out));
        want.extend_from_slice(t);
        assert_eq!(out, want, "rank {r}");
    }
    assert!(!v.append_token(toks.len() as Rank, &mut out));
    assert_eq!(out, want);
}

/// The pair map behind its Bloom filter answers exactly "is left + right a
/// token": every two-token split of every token is found (a filter false
/// negative would lose it), and pairs whose concatenation is not a token
/// are absent, on a vocabulary large enough to fill many filter words.
#[test]
fn pair_rank_is_concatenation_rank() {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = toks.iter().cloned().collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    while toks.len() < 20_000 {
        let t = [toks[rnd(toks.len())].clone(), toks[rnd(toks.len())].clone()].concat();
        if t.len() <= 12 && seen.insert(t.clone()) {
            toks.push(t);
        }
    }
    let v = Vocab::new(toks.clone()).unwrap();
    let mut found = 0;
    for (r, t) in toks.iter().enumerate() {
        for i in 1..t.len() {
            if let (Some(a), Some(b)) = (v.rank(&t[..i]), v.rank(&t[i..])) {
                assert_eq!(v.pair_rank(a, b), Some(r as Rank));
                found += 1;
            }
        }
    }
    // at least the pair each token was built from
    assert!(found >= toks.len() - 256);
    for _ in 0..50_000 {
        let (a, b) = (rnd(toks.len()), rnd(toks.len()));
        let joined = [toks[a].as_slice(), toks[b].as_slice()].concat();
        assert_eq!(v.pair_rank(a as Rank, b as Rank), v.rank(&joined));
    }
}

#[test]
fn refuses_more_gaps_than_tokens_and_slack() {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    toks.extend(std::iter::repeat_n(Vec::new(), 257 + GAP_SLACK)); // 257 tokens
    toks.push(b"ab".to_vec());
    assert!(Vocab::new(toks.clone()).is_ok());
    toks.insert(256, Vec::new());
    assert!(
        matches!(Vocab::new(toks), Err(Error::InvalidVocab { reason, .. }) if reason.contains("gaps"))
    );
}

#[test]
fn rejects_duplicates_and_missing_bytes() {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    toks.push(b"a".to_vec());
    assert!(Vocab::new(toks).is_err());
    let toks: Vec<Vec<u8>> = (0..=254u8).map(|b| vec![b]).collect();
    assert!(Vocab::new(toks).is_err());
}

/// A rank listed with the empty token is an id that decodes to no bytes
/// (a trailing one counts in `len`); a gap is not; no lookup finds either.
#[test]
fn empty_tokens_are_ids_and_gaps_are_not() {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    toks.extend([Vec::new(), b"ab".to_vec(), Vec::new(), Vec::new()]);
    let v = Vocab::with_empty(toks.clone(), &[258, 256]).unwrap();
    assert_eq!(v.len(), 260);
    assert_eq!(v.empty_ranks(), &[256, 258]);
    assert_eq!(v.token(256), Some(&b""[..]));
    assert_eq!(v.token(258), Some(&b""[..]));
    assert_eq!(v.token(259), None);
    assert_eq!(v.rank(b""), None);
    let mut out = b"x".to_vec();
    assert!(v.append_token(256, &mut out) && v.append_token(257, &mut out));
    assert!(!v.append_token(259, &mut out));
    assert_eq!(out, b"xab");
    // a plain vocabulary: the same entries are gaps
    let g = Vocab::new(toks.clone()).unwrap();
    assert_eq!(g.token(256), None);
    assert!(!g.append_token(256, &mut out));
    for bad in [&[257][..], &[260]] {
        assert!(matches!(
            Vocab::with_empty(toks.clone(), bad),
            Err(Error::InvalidVocab { .. })
        ));
    }
}

#[test]
fn tiktoken_equals_sign_is_the_empty_token() {
    use base64::Engine as _;
    let e = &base64::engine::general_purpose::STANDARD;
    let mut text: String = (0..=255u8)
        .map(|b| format!("{} {b}\n", e.encode([b])))
        .collect();
    text.push_str("YWI= 256\n= 257\n");
    let v = Vocab::from_tiktoken(text.as_bytes()).unwrap();
    assert_eq!(v.len(), 258);
    assert_eq!(v.token(257), Some(&b""[..]));
    assert_eq!(v.empty_ranks(), &[257]);
    let bad = text.replace("= 257", " 257");
    assert!(Vocab::from_tiktoken(bad.as_bytes()).is_err());
}
