//! Oracles shared by the fuzz targets: the bundled rank files, tiktoken's three
//! pre-tokenization regexes run through `fancy_regex` (the engine tiktoken uses),
//! and a deliberately naive byte-pair encoder. Everything here is written for
//! obviousness, not speed, so that a disagreement points at the core.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use base64::Engine;
use bytepair::core_bpe::CoreBpe;

/// tiktoken's `r50k_pat_str` (gpt2), copied from tiktoken, not from the core.
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's cl100k_base pattern.
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken's o200k_base pattern.
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// The three named pre-tokenizers: (name given to the core, tiktoken regex).
pub const NAMED: [(&str, &str); 3] = [("gpt2", GPT2), ("cl100k", CL100K), ("o200k", O200K)];

/// tiktoken's regex number `k` of [`NAMED`], compiled once per process.
pub fn named_regex(k: usize) -> &'static fancy_regex::Regex {
    static RES: OnceLock<Vec<fancy_regex::Regex>> = OnceLock::new();
    &RES.get_or_init(|| {
        NAMED
            .iter()
            .map(|(_, p)| fancy_regex::Regex::new(p).expect("tiktoken pattern compiles"))
            .collect()
    })[k]
}

/// Token bytes to rank.
pub type Ranks = HashMap<Vec<u8>, u32>;

/// One bundled encoding: the core under test plus the oracle's own tables.
pub struct Bundled {
    pub name: &'static str,
    pub core: CoreBpe,
    pub ranks: Ranks,
    pub tokens: Vec<Vec<u8>>,
    pub specials: Vec<(String, u32)>,
    pub regex: fancy_regex::Regex,
}

fn parse_tiktoken(gz: &[u8]) -> Vec<Vec<u8>> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_string(&mut text)
        .expect("bundled file is gzip text");
    let mut tokens = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let (b64, rank) = line.split_once(' ').expect("'<base64> <rank>' lines");
        assert_eq!(
            rank.parse::<usize>().expect("rank"),
            i,
            "ranks are 0..n in order"
        );
        tokens.push(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64"),
        );
    }
    tokens
}

fn build(name: &'static str, gz: &[u8], pattern: &str, specials: &[(&str, u32)]) -> Bundled {
    let tokens = parse_tiktoken(gz);
    let ranks = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let specials: Vec<(String, u32)> = specials.iter().map(|(s, r)| (s.to_string(), *r)).collect();
    let core = CoreBpe::new(tokens.clone(), specials.clone(), Some(name))
        .expect("bundled encoding builds");
    let regex = fancy_regex::Regex::new(pattern).expect("tiktoken pattern compiles");
    Bundled {
        name,
        core,
        ranks,
        tokens,
        specials,
        regex,
    }
}

/// The bundled encoding `k % 3` (gpt2, cl100k, o200k), built once per process.
pub fn bundled(k: u8) -> &'static Bundled {
    static GPT2_B: OnceLock<Bundled> = OnceLock::new();
    static CL_B: OnceLock<Bundled> = OnceLock::new();
    static O2_B: OnceLock<Bundled> = OnceLock::new();
    match k % 3 {
        0 => GPT2_B.get_or_init(|| {
            build(
                "gpt2",
                include_bytes!("../../python/bytepair/data/gpt2.tiktoken.gz"),
                GPT2,
                &[("<|endoftext|>", 50256)],
            )
        }),
        1 => CL_B.get_or_init(|| {
            build(
                "cl100k",
                include_bytes!("../../python/bytepair/data/cl100k_base.tiktoken.gz"),
                CL100K,
                &[
                    ("<|endoftext|>", 100257),
                    ("<|fim_prefix|>", 100258),
                    ("<|fim_middle|>", 100259),
                    ("<|fim_suffix|>", 100260),
                    ("<|endofprompt|>", 100276),
                ],
            )
        }),
        _ => O2_B.get_or_init(|| {
            build(
                "o200k",
                include_bytes!("../../python/bytepair/data/o200k_base.tiktoken.gz"),
                O200K,
                &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
            )
        }),
    }
}

/// The pieces of `text` under a tiktoken regex, as tiktoken finds them; `None`
/// when fancy_regex gives up (backtrack limit), which the caller then skips.
pub fn regex_pieces<'t>(re: &fancy_regex::Regex, text: &'t str) -> Option<Vec<&'t str>> {
    let mut out = Vec::new();
    for m in re.find_iter(text) {
        let m = m.ok()?;
        if !m.as_str().is_empty() {
            out.push(m.as_str());
        }
    }
    Some(out)
}

/// tiktoken's merge rule, written as plainly as possible: a piece that is a
/// token maps to its rank; otherwise start from single bytes and repeatedly merge
/// the leftmost adjacent pair whose joined bytes have the lowest rank.
/// O(n^2) in the piece length.
pub fn naive_encode_piece(piece: &[u8], ranks: &Ranks, out: &mut Vec<u32>) {
    if let Some(&r) = ranks.get(piece) {
        out.push(r);
        return;
    }
    // parts are contiguous: bounds[i]..bounds[i + 1] is part i
    let mut bounds: Vec<usize> = (0..=piece.len()).collect();
    loop {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..bounds.len().saturating_sub(2) {
            if let Some(&r) = ranks.get(&piece[bounds[i]..bounds[i + 2]]) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, i));
                }
            }
        }
        let Some((_, i)) = best else { break };
        bounds.remove(i + 1);
    }
    for w in bounds.windows(2) {
        out.push(
            *ranks
                .get(&piece[w[0]..w[1]])
                .expect("every single byte is a token"),
        );
    }
}

/// Naive ordinary encoding: regex pieces (or the whole text), then
/// [`naive_encode_piece`] on each. `None` when the regex gives up.
pub fn naive_encode(
    text: &str,
    re: Option<&fancy_regex::Regex>,
    ranks: &Ranks,
) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    match re {
        Some(re) => {
            for p in regex_pieces(re, text)? {
                naive_encode_piece(p.as_bytes(), ranks, &mut out);
            }
        }
        None if text.is_empty() => {}
        None => naive_encode_piece(text.as_bytes(), ranks, &mut out),
    }
    Some(out)
}

/// Splits `text` at allowed special tokens with leftmost-longest matching among
/// all specials (a match that is not allowed is skipped one character at a
/// time). Returns segments: `Ok(text)` for ordinary text, `Err(id)` for a special.
pub fn split_specials<'t>(
    text: &'t str,
    specials: &[(String, u32)],
    allowed: &[bool],
) -> Vec<Result<&'t str, u32>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    while pos < text.len() {
        let longest = specials
            .iter()
            .enumerate()
            .filter(|(_, (s, _))| text[pos..].starts_with(s.as_str()))
            .max_by_key(|(k, (s, _))| (s.len(), usize::MAX - k));
        match longest {
            Some((k, (s, id))) if allowed[k] => {
                out.push(Ok(&text[start..pos]));
                out.push(Err(*id));
                pos += s.len();
                start = pos;
            }
            _ => pos += text[pos..].chars().next().map_or(1, |c| c.len_utf8()),
        }
    }
    out.push(Ok(&text[start..]));
    out
}

/// True when no special token overlaps another anywhere (none is a substring of
/// another and no suffix of one is a prefix of another). Only then is the split
/// at special tokens independent of the matching policy.
pub fn specials_overlap_free(specials: &[(String, u32)]) -> bool {
    for (i, (a, _)) in specials.iter().enumerate() {
        for (j, (b, _)) in specials.iter().enumerate() {
            if i != j && a.contains(b.as_str()) {
                return false;
            }
            for k in 1..a.len() {
                if a.is_char_boundary(k) && b.starts_with(&a[k..]) {
                    return false;
                }
            }
        }
    }
    true
}
