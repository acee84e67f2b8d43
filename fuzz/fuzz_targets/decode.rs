//! Decoder: arbitrary ids against the bundled gpt2 / cl100k vocabularies. Known
//! ids decode to the concatenation of their bytes, an unknown id is an
//! UnknownId error (never a panic), and re-encoding decoded text round-trips.
#![no_main]

use bytepair::error::Error;
use fuzz_oracle::bundled;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let b = bundled(which % 2);
    let ids: Vec<u32> = rest
        .chunks(3)
        .map(|c| {
            // mostly valid ids, sometimes anything
            let v = c.iter().fold(0u32, |a, &x| (a << 8) | x as u32);
            if c.len() == 3 && c[0] == 0xff {
                u32::MAX - v % 4
            } else {
                v % (b.tokens.len() as u32 + 300)
            }
        })
        .collect();
    let expected: Option<Vec<u8>> = ids
        .iter()
        .map(|&id| {
            b.tokens.get(id as usize).cloned().or_else(|| {
                b.specials
                    .iter()
                    .find(|s| s.1 == id)
                    .map(|s| s.0.as_bytes().to_vec())
            })
        })
        .collect::<Option<Vec<_>>>()
        .map(|v| v.concat());
    match (b.core.decode_bytes(&ids), expected) {
        (Ok(got), Some(exp)) => {
            assert_eq!(got, exp);
            let text = String::from_utf8_lossy(&got);
            let again = b.core.encode_ordinary(&text).unwrap();
            assert_eq!(b.core.decode_bytes(&again).unwrap(), text.as_bytes());
        }
        (Err(Error::UnknownId { id }), None) => assert!(b.core.token_bytes(id).is_err()),
        (got, exp) => panic!(
            "decode_bytes {:?} but expected {:?}",
            got.map(|v| v.len()),
            exp.map(|v| v.len())
        ),
    }
});
