//! Code units to UTF-8 (`bytepair::utf8::convert`, the path of a Python `str`
//! argument): arbitrary Latin-1, UCS-2 and UCS-4 units, mostly code points that
//! are ASCII, two-, three- and four-byte, and sometimes surrogates or values past
//! U+10FFFF, against the standard library. A reused buffer full of old bytes
//! must never show through.
#![no_main]

use bytepair::utf8::{convert, Units};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let junk = vec![0xFFu8; usize::from(mode) * 7];
    let want = |units: &mut dyn Iterator<Item = u32>| -> Option<String> {
        units.map(char::from_u32).collect::<Option<String>>()
    };
    match mode % 3 {
        0 => {
            let got = convert(Units::Latin1(rest), junk).ok().map(|u| u.as_str().to_owned());
            assert_eq!(got, want(&mut rest.iter().map(|&b| u32::from(b))));
        }
        1 => {
            // pairs of bytes, the high one folded so that every width is common
            let units: Vec<u16> = rest
                .chunks(2)
                .map(|c| {
                    let lo = u16::from(c[0]);
                    let hi = u16::from(*c.get(1).unwrap_or(&0));
                    match hi % 8 {
                        0..=2 => lo & 0x7F,
                        3 => 0x80 + lo * 7,
                        4 => 0xAC00 + lo * 40,
                        5 => 0xD700 + lo * 9, // across the surrogates
                        _ => (hi << 8) | lo,
                    }
                })
                .collect();
            let got = convert(Units::Ucs2(&units), junk).ok().map(|u| u.as_str().to_owned());
            assert_eq!(got, want(&mut units.iter().map(|&u| u32::from(u))));
        }
        _ => {
            let units: Vec<u32> = rest
                .chunks(3)
                .map(|c| {
                    let v = c.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x));
                    match c[0] % 4 {
                        0 => v & 0x7F,
                        1 => v % 0x1_0000,
                        2 => 0x1_0000 + v % 0x10_0000,
                        _ => v.wrapping_mul(97), // sometimes past U+10FFFF
                    }
                })
                .collect();
            let got = convert(Units::Ucs4(&units), junk).ok().map(|u| u.as_str().to_owned());
            assert_eq!(got, want(&mut units.iter().copied()));
        }
    }
});
