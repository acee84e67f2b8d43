//! Encoder on the bundled vocabularies (gpt2, cl100k_base, o200k_base): the ids
//! must equal the naive oracle (tiktoken's regex + plain lowest-rank merging),
//! decode back to the input bytes, and `encode` with every special allowed must
//! equal the oracle's split at special tokens. First byte picks the encoding.
#![no_main]

use fuzz_oracle::{bundled, naive_encode, split_specials};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let b = bundled(which);
    let text = String::from_utf8_lossy(rest);
    let text = text.as_ref();

    let ids = b
        .core
        .encode_ordinary(text)
        .unwrap_or_else(|e| panic!("{}: encode_ordinary failed: {e}", b.name));
    assert_eq!(
        b.core.decode_bytes(&ids).unwrap(),
        text.as_bytes(),
        "{}: round trip",
        b.name
    );
    if let Some(expected) = naive_encode(text, Some(&b.regex), &b.ranks) {
        assert_eq!(
            ids, expected,
            "{}: ids differ from the naive oracle",
            b.name
        );
    }

    // every special allowed
    let names: Vec<&str> = b.specials.iter().map(|(s, _)| s.as_str()).collect();
    let all = b.core.policy(&names, &[]);
    let with = b
        .core
        .encode(text, &all)
        .unwrap_or_else(|e| panic!("{}: encode failed: {e}", b.name));
    let mut expected = Vec::new();
    let allowed = vec![true; b.specials.len()];
    for seg in split_specials(text, &b.specials, &allowed) {
        match seg {
            Ok(t) => expected.extend(b.core.encode_ordinary(t).unwrap()),
            Err(id) => expected.push(id),
        }
    }
    assert_eq!(with, expected, "{}: encode with specials", b.name);
    assert_eq!(
        b.core.count(text, &all).unwrap(),
        with.len(),
        "{}: count",
        b.name
    );
    let batch = b
        .core
        .encode_batch(&[text, text, ""], &all, Some(2))
        .unwrap();
    assert_eq!(
        batch,
        vec![with.clone(), with.clone(), vec![]],
        "{}: encode_batch",
        b.name
    );

    // default policy (all disallowed): error iff a special occurs
    let none = b.core.policy(&[], &names);
    let present = b.specials.iter().any(|(s, _)| text.contains(s.as_str()));
    match b.core.encode(text, &none) {
        Ok(got) => {
            assert!(!present, "{}: disallowed special accepted", b.name);
            assert_eq!(got, ids);
        }
        Err(bytepair::error::Error::DisallowedSpecial { .. }) => {
            assert!(present, "{}: spurious DisallowedSpecial", b.name)
        }
        Err(e) => panic!("{}: unexpected error {e}", b.name),
    }
});
