//! The patterns with a hand-written scanner (defined only here; Python reads
//! them as `_core.NAMED_PATTERNS` and `_core.FAST_PATTERNS`), [`Named`], the
//! scanner family each one runs on, and [`Known`], one recognised spelling.
//!
//! A pattern takes a scanner only when its string is exactly one of
//! [`SPELLINGS`]: equal behaviour is proven per spelling by the differential
//! tests (scanner against `fancy-regex` on real and random text), never
//! inferred from a similar-looking string.
//!
//! A leaf module: the scanner (`named`), the scalar scanners (`scan`) and the
//! block path (`block`) all read it, and it reads none of them.

/// tiktoken's `r50k_pat_str` (used by gpt2 / r50k_base / p50k_base).
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// Hugging Face `ByteLevel`'s built-in regex (`use_regex`): GPT-2's pattern
/// without possessive quantifiers, the same pieces.
pub const BYTELEVEL_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// tiktoken's cl100k_base pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// tiktoken's o200k_base pattern (also MiniMax's `tokenizer.json` Split).
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// Llama 3, GLM-4 and OLMo 2: cl100k's alternatives without possessive
/// quantifiers and without `\s++$`, line breaks as `\s*[\r\n]+`.
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The same as [`LLAMA3_PATTERN`] with `\s*[\r\n]` (a spelling of cl100k
/// found in converted `tokenizer.json` files): the same pieces.
pub const CL100K_HF_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";

/// Qwen2 and Qwen2.5: [`LLAMA3_PATTERN`] with single numbers.
pub const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen3.5: [`QWEN2_PATTERN`] with marks joining letter runs and leaving
/// punctuation runs.
pub const QWEN35_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's tekken (NeMo, Pixtral): o200k's words without contractions,
/// single numbers.
pub const NEMO_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    "|",
    r"\p{N}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// The spans of superword training and of a superword tokenizer
/// (`bytepair.patterns.SUPERWORD`): no cut at spaces, numbers in groups of
/// at most three, a cut after every run of newlines and between `:` and a
/// following space, newline or number.
pub const SUPERWORD_PATTERN: &str =
    r"\p{N}{1,3}|(?:[^\r\n\p{N}:]|:+[^ \r\n\p{N}:])+:*[\r\n]*|:+[\r\n]*|[\r\n]+";

/// Joins the patterns of a chain of `Split` pre-tokenizers (each re-splitting
/// the pieces of the one before, every match and gap kept) into one pattern
/// string; a chain is accepted only where it has a scanner.
pub const CHAIN_SEPARATOR: char = '\u{1f}';

/// DeepSeek V3 / V4: three `Split` stages, numbers in groups of three, then
/// runs of CJK ideographs and kana, then the main pattern (with literal CR and
/// LF characters, as the `tokenizer.json` files spell it).
pub const DEEPSEEK_V3_SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

/// [`DEEPSEEK_V3_SPLITS`] joined by [`CHAIN_SEPARATOR`] (a unit test checks).
pub const DEEPSEEK_V3_CHAIN: &str = concat!(
    r"\p{N}{1,3}",
    "\u{1f}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "\u{1f}",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
);

/// A scanner family: the pieces one hand-written scanner produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// [`GPT2_PATTERN`], [`BYTELEVEL_PATTERN`].
    Gpt2,
    /// [`CL100K_PATTERN`].
    Cl100k,
    /// [`O200K_PATTERN`].
    O200k,
    /// [`LLAMA3_PATTERN`], [`CL100K_HF_PATTERN`]: cl100k's pieces except that a
    /// whitespace run at the end of the text is cut after its last line break.
    Llama3,
    /// [`QWEN2_PATTERN`]: [`Named::Llama3`] with single numbers.
    Qwen2,
    /// [`QWEN35_PATTERN`]: [`Named::Qwen2`] with `\p{M}` in letter runs.
    Qwen35,
    /// [`NEMO_PATTERN`]: [`Named::O200k`] without contractions, single numbers.
    Nemo,
    /// [`DEEPSEEK_V3_CHAIN`]: the three stages in one pass.
    DeepSeekV3,
    /// [`SUPERWORD_PATTERN`]: spans across spaces (scalar only).
    Superword,
}

impl Named {
    /// The family's short name.
    pub fn name(self) -> &'static str {
        match self {
            Named::Gpt2 => "gpt2",
            Named::Cl100k => "cl100k",
            Named::O200k => "o200k",
            Named::Llama3 => "llama3",
            Named::Qwen2 => "qwen2",
            Named::Qwen35 => "qwen35",
            Named::Nemo => "nemo",
            Named::DeepSeekV3 => "deepseek_v3",
            Named::Superword => "superword",
        }
    }

    /// Which path splits text: `scanner:<family>`.
    pub fn path(self) -> &'static str {
        match self {
            Named::Gpt2 => "scanner:gpt2",
            Named::Cl100k => "scanner:cl100k",
            Named::O200k => "scanner:o200k",
            Named::Llama3 => "scanner:llama3",
            Named::Qwen2 => "scanner:qwen2",
            Named::Qwen35 => "scanner:qwen35",
            Named::Nemo => "scanner:nemo",
            Named::DeepSeekV3 => "scanner:deepseek_v3",
            Named::Superword => "scanner:superword",
        }
    }

    /// One of tiktoken's three patterns (what the token-budget restarts and
    /// the other tiktoken-specific reasoning were proven for).
    pub fn is_tiktoken(self) -> bool {
        matches!(self, Named::Gpt2 | Named::Cl100k | Named::O200k)
    }

    /// Numbers come in runs of up to three (`\p{N}{1,3}`) rather than one by one.
    pub fn groups_digits(self) -> bool {
        matches!(
            self,
            Named::Cl100k | Named::O200k | Named::Llama3 | Named::DeepSeekV3 | Named::Superword
        )
    }

    /// Runs on the block path where the CPU has one (every family but the
    /// superword spans, whose pieces are lines rather than words).
    pub fn has_block_path(self) -> bool {
        self != Named::Superword
    }

    /// Numbers are cut out by a `Split` stage of their own before the main
    /// pattern runs, which then sees the text around them as ending there
    /// (the DeepSeek chain).
    pub fn numbers_split_first(self) -> bool {
        self == Named::DeepSeekV3
    }

    /// Pieces run across spaces: the only safe cuts are after runs of
    /// newlines (see [`crate::pretok::Pretokenizer::is_safe_cut`]).
    pub fn spans_lines(self) -> bool {
        self == Named::Superword
    }

    /// A chain of `Split` stages rather than one regex.
    pub fn is_chain(self) -> bool {
        self == Named::DeepSeekV3
    }

    /// Words are o200k's case-structured runs (`U*W+|U+W*`).
    pub fn cased_words(self) -> bool {
        matches!(self, Named::O200k | Named::Nemo)
    }
}

/// Every pattern string with a scanner, with its family and a short name.
pub const SPELLINGS: [(&str, Named, &str); 11] = [
    (GPT2_PATTERN, Named::Gpt2, "gpt2"),
    (CL100K_PATTERN, Named::Cl100k, "cl100k"),
    (O200K_PATTERN, Named::O200k, "o200k"),
    (BYTELEVEL_PATTERN, Named::Gpt2, "bytelevel"),
    (LLAMA3_PATTERN, Named::Llama3, "llama3"),
    (CL100K_HF_PATTERN, Named::Llama3, "cl100k_hf"),
    (QWEN2_PATTERN, Named::Qwen2, "qwen2"),
    (QWEN35_PATTERN, Named::Qwen35, "qwen35"),
    (NEMO_PATTERN, Named::Nemo, "nemo"),
    (DEEPSEEK_V3_CHAIN, Named::DeepSeekV3, "deepseek_v3"),
    (SUPERWORD_PATTERN, Named::Superword, "superword"),
];

/// One spelling of [`SPELLINGS`]: a pattern that runs on a scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known(usize);

impl Known {
    /// The spelling whose string is exactly `pattern`, if any.
    pub fn find(pattern: &str) -> Option<Known> {
        SPELLINGS.iter().position(|s| s.0 == pattern).map(Known)
    }

    /// The spelling of one of tiktoken's patterns.
    pub fn of(named: Named) -> Known {
        let i = SPELLINGS.iter().position(|s| s.1 == named).unwrap_or(0);
        Known(i)
    }

    /// Index into [`SPELLINGS`].
    pub fn index(self) -> usize {
        self.0
    }

    /// The exact pattern string.
    pub fn pattern(self) -> &'static str {
        SPELLINGS.get(self.0).map_or(GPT2_PATTERN, |s| s.0)
    }

    /// The scanner family.
    pub fn named(self) -> Named {
        SPELLINGS.get(self.0).map_or(Named::Gpt2, |s| s.1)
    }

    /// The spelling's short name.
    pub fn name(self) -> &'static str {
        SPELLINGS.get(self.0).map_or("gpt2", |s| s.2)
    }

    /// Which path splits text: `scanner:<family>`.
    pub fn path(self) -> &'static str {
        self.named().path()
    }
}

/// The char boundary after byte `i` (clamped to the text): the scanners'
/// guaranteed progress.
pub(super) fn next_char_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j.min(text.len()).max(i.min(text.len()))
}
