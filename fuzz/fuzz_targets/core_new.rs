//! Building an encoder from untrusted parts (what a file reader hands the core):
//! arbitrary tokens, special tokens and pattern strings must give `Ok` or an
//! `Err`, never a panic; a built encoder must round-trip text when it covers it.
#![no_main]

use arbitrary::Arbitrary;
use bytepair::core_bpe::CoreBpe;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    with_bytes: bool,
    tokens: Vec<Vec<u8>>,
    specials: Vec<(String, u32)>,
    pattern: Option<String>,
    text: String,
}

fuzz_target!(|inp: Input| {
    let mut tokens: Vec<Vec<u8>> = if inp.with_bytes {
        (0..=255u8).map(|b| vec![b]).collect()
    } else {
        vec![]
    };
    tokens.extend(inp.tokens.into_iter().take(64));
    let pattern = inp.pattern.as_deref().filter(|p| p.len() <= 64);
    let Ok(core) = CoreBpe::new(tokens, inp.specials, pattern) else {
        return;
    };
    let Ok(ids) = core.encode_ordinary(&inp.text) else {
        return;
    };
    let bytes = core.decode_bytes(&ids).expect("ids from encode decode");
    if pattern.is_none() {
        assert_eq!(bytes, inp.text.as_bytes());
    }
});
