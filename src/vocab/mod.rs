//! The vocabulary of a byte-level BPE tokenizer: token bytes indexed by rank,
//! and the reverse map. In these tokenizers the rank of a token is its id and its
//! merge priority (lower merges first), as in tiktoken.
//!
//! Storage: all token bytes in one arena with an offset per rank, and a
//! `hashbrown::HashTable` of ranks hashed by their bytes. Building it allocates
//! no per-token memory (o200k_base: 200k tokens load in a few milliseconds), and
//! a lookup probes a table of 4-byte entries.

use std::hash::BuildHasher;

use std::sync::OnceLock;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::error::{Error, Result};
use crate::parallel;
use crate::Rank;

pub mod cuts;
pub mod flat;
pub mod long_edges;
mod merges;
pub mod stage1;

pub use cuts::Cuts;
pub use merges::{derive_merges, spell_merges};

use flat::{fold_mul, FlatTable};

/// Token bytes by rank and rank by token bytes.
#[derive(Debug, Clone)]
pub struct Vocab {
    arena: Vec<u8>,
    /// `offsets[r]..offsets[r + 1]` are the bytes of rank `r`.
    offsets: Vec<u32>,
    table: HashTable<Rank>,
    byte_ranks: [Rank; 256],
    /// Rank of the token made of two bytes, by `(first << 8) | second`
    /// ([`NONE_RANK`] when it is not a token): 256 KB, so the first round of
    /// every merge (all byte pairs of a piece) reads a cache-resident array
    /// instead of the pair table.
    byte_pairs: Box<[Rank]>,
    /// `(left, right) -> rank` for every pair of tokens whose concatenated bytes
    /// are a token (not only the pair that made it): merging by this map is
    /// exactly merging by the rank of concatenated bytes, with a 64-bit key
    /// instead of hashing byte strings.
    pairs: FlatTable,
    /// A blocked Bloom filter over the keys of `pairs` (two bits in one
    /// 64-bit word per key, about 8 keys per word: 3-4% false positives).
    /// Most pair lookups in a merge find no token (60% on Korean text), and
    /// the filter, at an eighth of the table's size, usually answers those
    /// from cache instead of a miss in the table.
    pair_filter: Box<[u64]>,
    /// Tokens of 9-16 bytes keyed by their bytes packed in two `u64`s: pieces
    /// of that length (common in Korean and in English words with their space)
    /// are looked up without hashing a byte string or reading the arena.
    mid: HashTable<Mid>,
    /// Tokens of at most 8 bytes keyed by their bytes packed in a `u64` (tag:
    /// the length): the common lookup (English pieces are mostly short) touches
    /// one cache line and no arena bytes.
    short: FlatTable,
    /// Cut contexts for splitting long pieces ([`cuts`]),
    /// built on first use: only long non-repetitive pieces need them.
    cuts: OnceLock<Cuts>,
    /// Ranks listed with the empty token (sorted): unlike a gap, such a rank
    /// is an id of the vocabulary that decodes to no bytes (Whisper's
    /// `multilingual.tiktoken` lists `= 50256`, and tiktoken keeps it). No
    /// text encodes to it: the lookup tables hold no empty token.
    empty: Box<[Rank]>,
    /// The staged merge path's first stage ([`stage1`]): off unless set.
    stage1: stage1::Stage1,
    /// The longest token's length in bytes.
    longest: usize,
    /// The edges of the tokens longer than [`MID_MAX`] bytes, built on first use.
    long_edges: OnceLock<long_edges::LongEdges>,
}

#[derive(Debug, Clone, Copy)]
struct Mid {
    k0: u64,
    k1: u64,
    len: u32,
    rank: Rank,
}

/// Longest token (bytes) held in the two-word table; also the longest piece
/// [`key16`] packs.
pub(crate) const MID_MAX: usize = 16;

/// Hash of a byte string of at most 16 bytes given as [`key16`]'s two words
/// and its length (the two-word token table and the piece cache).
#[inline(always)]
pub(crate) fn hash16(k0: u64, k1: u64, len: usize) -> u64 {
    fold_mul(k0 ^ k1.rotate_left(29) ^ ((len as u64) << 58))
}

/// `KEY_MASKS[n]`: the masks that keep the first `n` bytes (`n <= 16`) of two
/// little-endian words, so [`key16`] packs a piece without a branch on its
/// length (a piece's length is data: a branch on it mispredicts).
static KEY_MASKS: [[u64; 2]; MID_MAX + 1] = {
    let mut m = [[0u64; 2]; MID_MAX + 1];
    let mut n = 0;
    while n <= MID_MAX {
        let lo = if n >= 8 { 8 } else { n };
        let hi = n.saturating_sub(8);
        m[n][0] = if lo == 8 { !0 } else { (1u64 << (8 * lo)) - 1 };
        m[n][1] = if hi == 8 { !0 } else { (1u64 << (8 * hi)) - 1 };
        n += 1;
    }
    m
};

/// `text[start..end]` (at most 16 bytes) packed little-endian and zero-padded
/// into two words: two unaligned 8-byte loads and two masks when the text
/// extends 16 bytes past `start` (the usual case for a piece inside a text),
/// else [`pack`] of each half.
#[inline(always)]
pub(crate) fn key16(text: &[u8], start: usize, end: usize) -> (u64, u64) {
    let n = end - start;
    debug_assert!(n <= MID_MAX);
    match text
        .get(start..start + MID_MAX)
        .map(<[u8; MID_MAX]>::try_from)
    {
        Some(Ok(w)) if n <= MID_MAX => key16_window(w, n),
        _ => {
            let s = &text[start..end];
            let (lo, hi) = s.split_at(n.min(8));
            (pack(lo), pack(hi))
        }
    }
}

/// [`key16`] of a piece of `n` bytes (`n <= 16`) from its 16-byte window
/// `w` (the piece's bytes, then whatever follows them), already read.
#[inline(always)]
pub(crate) fn key16_window(w: [u8; MID_MAX], n: usize) -> (u64, u64) {
    let [m0, m1] = KEY_MASKS[n];
    let (lo, hi) = w.split_at(8);
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    (word(lo) & m0, word(hi) & m1)
}

/// Bytes (at most 8) packed little-endian into a `u64`, zero-padded, without a
/// call to `memcpy`: two overlapping loads for 4-8 bytes, three byte loads
/// for 1-3.
#[inline(always)]
fn pack(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let lo = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64;
        let hi =
            u32::from_le_bytes([bytes[n - 4], bytes[n - 3], bytes[n - 2], bytes[n - 1]]) as u64;
        lo | (hi << (8 * (n - 4)))
    } else if n > 0 {
        bytes[0] as u64
            | (bytes[n / 2] as u64) << (8 * (n / 2))
            | (bytes[n - 1] as u64) << (8 * (n - 1))
    } else {
        0
    }
}

/// "No rank" in [`Vocab::byte_pair_rank`]'s table.
pub const NONE_RANK: Rank = Rank::MAX;

/// Tag of every entry in the pair table.
const PAIR_TAG: u32 = 1;

/// Gaps (ids without a token) a vocabulary may hold beyond one per token:
/// each costs a slot in the rank-indexed tables, so one huge rank would size
/// them alone (the Python layer refuses it earlier, naming the token).
pub const GAP_SLACK: usize = 65_536;

/// Refuses `ids` ids (one more than the largest) for `tokens` distinct ids
/// beyond the gap rule, before a table with a slot per id is allocated.
pub fn check_id_gap(ids: usize, tokens: usize) -> Result<()> {
    if ids.saturating_sub(tokens) <= tokens + GAP_SLACK {
        return Ok(());
    }
    Err(Error::vocab(format!("{ids} ids hold only {tokens} tokens; at most {GAP_SLACK} more ids than tokens may be gaps: number the tokens densely")))
}

/// Longest token (bytes) held in the packed table.
const SHORT_MAX: usize = 8;
/// Bytes copied at once by [`Vocab::append_token`] (and of padding after the
/// arena's last token).
const APPEND_BLOCK: usize = 16;

#[inline]
fn pair_key(left: Rank, right: Rank) -> u64 {
    ((left as u64) << 32) | right as u64
}

/// The filter word and the two bits in it for a pair key, for a filter of
/// `words` words (a power of two).
#[inline(always)]
fn filter_bits(key: u64, words: usize) -> (usize, u64) {
    let h = fold_mul(key ^ 0x5851_f42d_4c95_7f2d);
    let word = (h >> 12) as usize & (words - 1);
    (word, (1u64 << (h & 63)) | (1u64 << ((h >> 6) & 63)))
}

#[inline]
fn hash(bytes: &[u8]) -> u64 {
    FxBuildHasher.hash_one(bytes)
}

impl Vocab {
    /// Builds a vocabulary from tokens listed in rank order (index = rank).
    /// An empty token is a gap: an id that holds no mergeable token (where a
    /// grown vocabulary keeps its base's special tokens).
    ///
    /// Errors when a token is repeated, or when one of the 256 single bytes is
    /// missing (every byte string must be encodable).
    pub fn new(tokens: Vec<Vec<u8>>) -> Result<Self> {
        Self::with_empty(tokens, &[])
    }

    /// [`Self::new`], with the ranks in `empty` holding the empty token
    /// instead of a gap: each must be the rank of an empty entry of `tokens`
    /// (a trailing one included, so it counts in [`Self::len`]).
    pub fn with_empty(tokens: Vec<Vec<u8>>, empty: &[Rank]) -> Result<Self> {
        let mut b = Builder::with_capacity(tokens.len(), tokens.iter().map(Vec::len).sum());
        for t in &tokens {
            b.push(t)?;
        }
        let mut empty = empty.to_vec();
        empty.sort_unstable();
        empty.dedup();
        for &r in &empty {
            if tokens.get(r as usize).is_none_or(|t| !t.is_empty()) {
                return Err(Error::vocab_at(
                    r,
                    format!("rank {r} is listed as the empty token but holds bytes or is past the last token"),
                ));
            }
        }
        b.empty = empty;
        b.finish()
    }

    /// Parses the `.tiktoken` rank-file format: one `base64(token) rank` line per
    /// token, ranks `0, 1, 2, ...` in order (blank lines are skipped). A token
    /// written `=` is the empty token (tiktoken's reader decodes it to `b""`).
    ///
    /// Errors name the 1-based line that is malformed, out of order or not valid
    /// base64. Linear in the file size.
    pub fn from_tiktoken(data: &[u8]) -> Result<Self> {
        use base64::Engine as _;
        let engine = &base64::engine::general_purpose::STANDARD;
        let lines = memchr::memchr_iter(b'\n', data).count() + 1;
        let mut b = Builder::with_capacity(lines, data.len() / 2);
        let mut scratch = Vec::with_capacity(64);
        for (lineno, line) in data.split(|&c| c == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let bad = |why: &str| Error::vocab(format!("line {}: {why}", lineno + 1));
            let sp = memchr::memchr(b' ', line).ok_or_else(|| bad("expected `base64 rank`"))?;
            let (tok, rank) = (&line[..sp], &line[sp + 1..]);
            let rank: usize = std::str::from_utf8(rank)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| bad("the rank is not a non-negative integer"))?;
            if rank != b.len() {
                return Err(bad(&format!(
                    "rank {rank} out of order (expected {})",
                    b.len()
                )));
            }
            scratch.clear();
            if !tok.is_empty() && tok.iter().all(|&c| c == b'=') {
                b.empty.push(rank as Rank);
            } else {
                engine
                    .decode_vec(tok, &mut scratch)
                    .map_err(|e| bad(&format!("invalid base64: {e}")))?;
                if scratch.is_empty() {
                    return Err(bad("an empty token is written `=`"));
                }
            }
            b.push(&scratch).map_err(|e| bad(&e.to_string()))?;
        }
        b.finish()
    }

    /// Number of ranks, gaps and empty tokens included (ranks are `0..len()`).
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always false: a valid vocabulary holds at least the 256 bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rank of a byte string, if it is a token. O(len) hashing plus one probe.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.rank_at(bytes, 0, bytes.len())
    }

    /// [`Self::rank`] of `text[start..end]`: a piece of at most 16 bytes is
    /// read with `key16`'s word loads and looked up without hashing bytes.
    #[inline(always)]
    pub fn rank_at(&self, text: &[u8], start: usize, end: usize) -> Option<Rank> {
        let n = end - start;
        if n == 0 {
            return None; // tag 0 marks empty table slots
        }
        if n > MID_MAX {
            return self.rank_long(&text[start..end]);
        }
        let (k0, k1) = key16(text, start, end);
        if n <= SHORT_MAX {
            self.short.get(k0, n as u32)
        } else {
            self.rank_mid(k0, k1, n)
        }
    }

    #[inline(never)]
    fn rank_mid(&self, k0: u64, k1: u64, n: usize) -> Option<Rank> {
        let len = n as u32;
        self.mid
            .find(hash16(k0, k1, n), |e| {
                e.k0 == k0 && e.k1 == k1 && e.len == len
            })
            .map(|e| e.rank)
    }

    /// Tokens of more than 16 bytes: hashed bytes, compared in the arena.
    #[inline(never)]
    fn rank_long(&self, bytes: &[u8]) -> Option<Rank> {
        let h = hash(bytes);
        self.table.find(h, |&r| self.bytes_of(r) == bytes).copied()
    }

    /// The rank of the token whose bytes are those of `left` followed by those of
    /// `right`, if there is one. One 64-bit hash probe.
    #[inline]
    pub fn pair_rank(&self, left: Rank, right: Rank) -> Option<Rank> {
        if !self.pair_may_be_token(left, right) {
            return None;
        }
        self.pairs.get(pair_key(left, right), PAIR_TAG)
    }

    /// False when `left` followed by `right` is certainly not a token (the
    /// pair filter: one word, 3-4% false positives); true when it may be.
    #[inline]
    pub fn pair_may_be_token(&self, left: Rank, right: Rank) -> bool {
        let (word, bits) = filter_bits(pair_key(left, right), self.pair_filter.len());
        // in bounds: `filter_bits` masks by the (power-of-two) length
        self.pair_filter[word] & bits == bits
    }

    /// The rank of the two-byte token `[a, b]`, or [`NONE_RANK`]; equals
    /// `pair_rank(byte_rank(a), byte_rank(b))`. One read of a 256 KB array.
    #[inline(always)]
    pub fn byte_pair_rank(&self, a: u8, b: u8) -> Rank {
        self.byte_pairs[((a as usize) << 8) | b as usize]
    }

    /// The rank of a single byte (every byte is a token).
    #[inline]
    pub fn byte_rank(&self, b: u8) -> Rank {
        self.byte_ranks[b as usize]
    }

    #[inline]
    fn bytes_of(&self, r: Rank) -> &[u8] {
        let r = r as usize;
        &self.arena[self.offsets[r] as usize..self.offsets[r + 1] as usize]
    }

    /// The bytes of a token, or `None` when `rank >= len()` or `rank` is a
    /// gap (an empty token is `Some(b"")`).
    #[inline]
    pub fn token(&self, rank: Rank) -> Option<&[u8]> {
        if (rank as usize) < self.len() {
            Some(self.bytes_of(rank)).filter(|t| !t.is_empty() || self.is_empty_token(rank))
        } else {
            None
        }
    }

    /// Whether `rank` is listed with the empty token (not a gap).
    #[inline]
    pub fn is_empty_token(&self, rank: Rank) -> bool {
        !self.empty.is_empty() && self.empty.binary_search(&rank).is_ok()
    }

    /// The ranks listed with the empty token, ascending.
    pub fn empty_ranks(&self) -> &[Rank] {
        &self.empty
    }

    /// Appends the bytes of token `rank` to `out`; false (nothing appended)
    /// when `rank >= len()` or `rank` is a gap (true for an empty token). A token of at most 16 bytes is copied as one
    /// fixed 16-byte block from the arena (which ends with 16 bytes of
    /// padding) and the excess cut off again: two register moves, where a
    /// `memcpy` call per id would be most of `decode`'s time on byte-level
    /// tokens (gpt2 on Korean: ~2 bytes per id).
    #[inline]
    pub fn append_token(&self, rank: Rank, out: &mut Vec<u8>) -> bool {
        let r = rank as usize;
        let (Some(&a), Some(&b)) = (self.offsets.get(r), self.offsets.get(r + 1)) else {
            return false;
        };
        let (a, b) = (a as usize, b as usize);
        if a == b {
            return self.is_empty_token(rank); // an empty token, or a gap
        }
        let block = self
            .arena
            .get(a..a + APPEND_BLOCK)
            .and_then(|s| <&[u8; APPEND_BLOCK]>::try_from(s).ok());
        match block {
            Some(block) if b - a <= APPEND_BLOCK => {
                let at = out.len();
                out.extend_from_slice(block);
                out.truncate(at + (b - a));
            }
            _ => out.extend_from_slice(&self.arena[a..b]),
        }
        true
    }

    /// The cut contexts of all tokens, built on the first call (o200k_base:
    /// tens of milliseconds).
    pub fn cuts(&self) -> &Cuts {
        self.cuts.get_or_init(|| Cuts::build(self))
    }

    /// The longest token's length in bytes.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// The edges of the tokens longer than [`MID_MAX`] bytes, built on the
    /// first call.
    pub fn long_edges(&self) -> &long_edges::LongEdges {
        self.long_edges
            .get_or_init(|| long_edges::LongEdges::build(self))
    }

    /// All tokens in rank order (`b""` at a gap and at an empty token).
    pub fn tokens(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.offsets
            .windows(2)
            .map(|w| &self.arena[w[0] as usize..w[1] as usize])
    }
}

impl Vocab {
    /// The table of tokens of at most 8 bytes, keyed by their packed bytes.
    fn build_short(&self) -> FlatTable {
        let n = self
            .tokens()
            .filter(|t| !t.is_empty() && t.len() <= SHORT_MAX)
            .count();
        let mut t = FlatTable::with_capacity(n);
        for (r, tok) in self.tokens().enumerate() {
            if !tok.is_empty() && tok.len() <= SHORT_MAX {
                t.insert(key16(tok, 0, tok.len()).0, tok.len() as u32, r as Rank);
            }
        }
        t
    }

    /// The table of tokens of 9-16 bytes, keyed by their bytes in two words.
    fn build_mid(&self) -> HashTable<Mid> {
        let mut t = HashTable::new();
        for (r, tok) in self.tokens().enumerate() {
            if tok.len() > SHORT_MAX && tok.len() <= MID_MAX {
                let (k0, k1) = key16(tok, 0, tok.len());
                let e = Mid {
                    k0,
                    k1,
                    len: tok.len() as u32,
                    rank: r as Rank,
                };
                t.insert_unique(hash16(k0, k1, tok.len()), e, |e| {
                    hash16(e.k0, e.k1, e.len as usize)
                });
            }
        }
        t
    }

    /// Every split of every token into two tokens, and the filter over them.
    /// Cost: one prefix and one suffix lookup per byte boundary of every token
    /// (o200k_base: 1.2 M boundaries, 446 k pairs), in up to 8 shares on the
    /// all-cores pool ([`crate::parallel`]).
    fn build_pairs(&self) -> (FlatTable, Box<[u64]>) {
        let n = self.len();
        // only cuts whose two sides have lengths some token has can give a
        // pair: each probe hashes a side, so trying every cut of a token of
        // length m costs O(m^2) (a 262 KB token, one trained on a run of one
        // letter, took 30 s); with the distinct lengths (at most the longest
        // token's, a few dozen for such tokens) it is O(m x lengths)
        let mut is_len = vec![false; self.tokens().map(<[u8]>::len).max().unwrap_or(0) + 1];
        for t in self.tokens() {
            is_len[t.len()] = true;
        }
        let lengths: Vec<usize> = (1..is_len.len()).filter(|&l| is_len[l]).collect();
        let scan = |&(lo, hi): &(usize, usize)| -> Vec<(u64, Rank)> {
            let mut out = Vec::new();
            for r in lo..hi {
                let t = self.bytes_of(r as Rank);
                for &i in lengths.iter().take_while(|&&i| i < t.len()) {
                    if !is_len[t.len() - i] {
                        continue;
                    }
                    if let (Some(a), Some(b)) = (self.rank(&t[..i]), self.rank(&t[i..])) {
                        out.push((pair_key(a, b), r as Rank));
                    }
                }
            }
            out
        };
        // one share per core (at most 8) on the all-cores pool; small
        // vocabularies on this thread
        let shares = parallel::resolve_threads(None).unwrap_or(1).clamp(1, 8);
        let parts: Vec<Vec<(u64, Rank)>> = if shares == 1 || n < 20_000 {
            vec![scan(&(0, n))]
        } else {
            let chunk = n.div_ceil(shares);
            let ranges: Vec<(usize, usize)> = (0..shares)
                .map(|k| ((k * chunk).min(n), ((k + 1) * chunk).min(n)))
                .collect();
            // no pool (threads cannot start): the same shares on this thread
            parallel::map_par(&ranges, None, |r| Ok(scan(r)))
                .unwrap_or_else(|_| ranges.iter().map(scan).collect())
        };
        let total = parts.iter().map(Vec::len).sum();
        let mut map = FlatTable::with_capacity(total);
        let words = total.div_ceil(8).next_power_of_two().max(64);
        let mut filter = vec![0u64; words].into_boxed_slice();
        for (key, rank) in parts.into_iter().flatten() {
            map.insert(key, PAIR_TAG, rank);
            let (word, bits) = filter_bits(key, words);
            filter[word] |= bits;
        }
        (map, filter)
    }
}

/// Appends tokens in rank order, checking each one.
struct Builder {
    arena: Vec<u8>,
    offsets: Vec<u32>,
    table: HashTable<Rank>,
    /// Ranks of empty entries that are the empty token, ascending.
    empty: Vec<Rank>,
}

impl Builder {
    fn with_capacity(tokens: usize, bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(tokens + 1);
        offsets.push(0);
        Builder {
            arena: Vec::with_capacity(bytes),
            offsets,
            table: HashTable::with_capacity(tokens),
            empty: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    fn push(&mut self, t: &[u8]) -> Result<()> {
        let i = self.len();
        if i >= Rank::MAX as usize - 1 {
            return Err(Error::vocab("too many tokens"));
        }
        if t.is_empty() {
            // a gap: an id without a mergeable token (never looked up; decoding
            // it falls through to the special tokens)
            self.offsets.push(self.arena.len() as u32);
            return Ok(());
        }
        if self.arena.len() + t.len() > u32::MAX as usize {
            return Err(Error::vocab("the tokens hold more than 4 GiB"));
        }
        let h = hash(t);
        let (arena, offsets) = (&self.arena, &self.offsets);
        let get = |r: Rank| &arena[offsets[r as usize] as usize..offsets[r as usize + 1] as usize];
        if let Some(&prev) = self.table.find(h, |&r| get(r) == t) {
            return Err(Error::vocab_at(
                i as Rank,
                format!("tokens {prev} and {i} are the same bytes {t:?}"),
            ));
        }
        self.arena.extend_from_slice(t);
        self.offsets.push(self.arena.len() as u32);
        let (arena, offsets) = (&self.arena, &self.offsets);
        self.table.insert_unique(h, i as Rank, |&r| {
            hash(&arena[offsets[r as usize] as usize..offsets[r as usize + 1] as usize])
        });
        Ok(())
    }

    fn finish(self) -> Result<Vocab> {
        check_id_gap(self.len(), self.table.len())?;
        let Builder {
            mut arena,
            offsets,
            table,
            empty,
        } = self;
        // padding for `append_token`'s fixed-size copies (not part of any token)
        arena.extend_from_slice(&[0; APPEND_BLOCK]);
        let mut v = Vocab {
            arena,
            offsets,
            table,
            byte_ranks: [0; 256],
            byte_pairs: Box::new([]),
            pairs: FlatTable::default(),
            pair_filter: Box::new([]),
            short: FlatTable::default(),
            mid: HashTable::new(),
            cuts: OnceLock::new(),
            empty: empty.into_boxed_slice(),
            stage1: stage1::Stage1::default(),
            longest: 0,
            long_edges: OnceLock::new(),
        };
        v.longest = v.tokens().map(<[u8]>::len).max().unwrap_or(0);
        v.short = v.build_short();
        v.mid = v.build_mid();
        for b in 0..=255u8 {
            match v.rank(&[b]) {
                Some(r) => v.byte_ranks[b as usize] = r,
                None => {
                    return Err(Error::vocab(format!(
                        "the single byte 0x{b:02x} is not a token"
                    )))
                }
            }
        }
        (v.pairs, v.pair_filter) = v.build_pairs();
        let mut byte_pairs = vec![NONE_RANK; 1 << 16].into_boxed_slice();
        for (i, slot) in byte_pairs.iter_mut().enumerate() {
            if let Some(r) = v.rank(&[(i >> 8) as u8, i as u8]) {
                *slot = r;
            }
        }
        v.byte_pairs = byte_pairs;
        Ok(v)
    }
}

#[cfg(test)]
mod tests;
