//! Special tokens: fuzzed special strings (overlapping, look-alikes, prefixes),
//! allowed / disallowed sets and text stitched from specials and fragments.
//! tiktoken's contract: any disallowed special present -> DisallowedSpecial;
//! otherwise the ids decode to the text, only allowed specials become their
//! ids, and with no allowed special in the text `encode == encode_ordinary`.
#![no_main]

use arbitrary::Arbitrary;
use bytepair::core_bpe::CoreBpe;
use bytepair::error::Error;
use fuzz_oracle::{specials_overlap_free, split_specials, NAMED};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Part {
    Text(String),
    Special(u8),
    Prefix(u8, u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    specials: Vec<(String, bool, bool)>,
    pattern: u8,
    parts: Vec<Part>,
}

fuzz_target!(|inp: Input| {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in [&b"<|"[..], b"|>", b"<|end", b"of", b"text", b"|>\n"] {
        tokens.push(t.to_vec());
    }
    let base = tokens.len() as u32;
    let specs: Vec<(String, u32)> = inp
        .specials
        .iter()
        .take(6)
        .enumerate()
        .map(|(k, (s, _, _))| (s.clone(), base + k as u32))
        .collect();
    let allowed: Vec<bool> = inp.specials.iter().take(6).map(|x| x.1).collect();
    let disallowed: Vec<bool> = inp.specials.iter().take(6).map(|x| x.2).collect();
    let pattern = match inp.pattern % 3 {
        0 => None,
        k => Some(NAMED[k as usize].0),
    };
    let core = match CoreBpe::new(tokens, specs.clone(), pattern) {
        Ok(c) => c,
        Err(Error::InvalidVocab { .. }) => {
            // only empty or repeated special strings may be refused
            let mut names: Vec<&str> = specs.iter().map(|s| s.0.as_str()).collect();
            names.sort();
            let dup = names.windows(2).any(|w| w[0] == w[1]);
            assert!(
                dup || names.contains(&""),
                "valid specials refused: {specs:?}"
            );
            return;
        }
        Err(e) => panic!("unexpected error {e}"),
    };
    let mut text = String::new();
    for p in inp.parts.iter().take(32) {
        match p {
            Part::Text(t) => text.push_str(t),
            Part::Special(k) if !specs.is_empty() => {
                text.push_str(&specs[*k as usize % specs.len()].0)
            }
            Part::Prefix(k, n) if !specs.is_empty() => {
                let s = &specs[*k as usize % specs.len()].0;
                let cut = (*n as usize) % (s.len() + 1);
                if s.is_char_boundary(cut) {
                    text.push_str(&s[..cut]);
                }
            }
            _ => {}
        }
    }
    let pick = |flags: &[bool]| -> Vec<&str> {
        specs
            .iter()
            .zip(flags)
            .filter(|(_, &f)| f)
            .map(|((s, _), _)| s.as_str())
            .collect()
    };
    let (allowed_names, disallowed_names) = (pick(&allowed), pick(&disallowed));
    let policy = core.policy(&allowed_names, &disallowed_names);
    let ordinary = core.encode_ordinary(&text).expect("encode_ordinary");
    assert_eq!(core.decode_bytes(&ordinary).unwrap(), text.as_bytes());
    let bad = specs
        .iter()
        .enumerate()
        .any(|(k, (s, _))| disallowed[k] && text.contains(s.as_str()));
    match core.encode(&text, &policy) {
        Err(Error::DisallowedSpecial { token }) => {
            assert!(bad, "spurious DisallowedSpecial {token:?}");
            assert!(disallowed_names.contains(&token.as_str()) && text.contains(token.as_str()));
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(ids) => {
            assert!(
                !bad,
                "a disallowed special was accepted: {disallowed_names:?} in {text:?}"
            );
            assert_eq!(
                core.decode_bytes(&ids).unwrap(),
                text.as_bytes(),
                "round trip"
            );
            for id in &ids {
                if let Some(k) = specs.iter().position(|s| s.1 == *id) {
                    assert!(
                        allowed[k],
                        "special {:?} encoded without being allowed",
                        specs[k].0
                    );
                }
            }
            let any_allowed = specs
                .iter()
                .enumerate()
                .any(|(k, (s, _))| allowed[k] && text.contains(s.as_str()));
            if !any_allowed {
                assert_eq!(
                    ids, ordinary,
                    "no allowed special present, yet encode != encode_ordinary"
                );
            }
            if specials_overlap_free(&specs) {
                let mut expected = Vec::new();
                for seg in split_specials(&text, &specs, &allowed) {
                    match seg {
                        Ok(t) => expected.extend(core.encode_ordinary(t).unwrap()),
                        Err(id) => expected.push(id),
                    }
                }
                assert_eq!(ids, expected, "split at specials");
            }
        }
    }
});
