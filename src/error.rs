//! The one error type of the core. Each variant carries the facts of what went
//! wrong; the message (`Display`) is built from them. The binding layer maps
//! each variant to one `bytepair.errors` class in one place (`py::errors`) and
//! hands the same facts to Python as exception attributes, so no Python code
//! has to read them back out of a message.

use crate::Rank;

/// Everything that can go wrong in the core, with the data needed for a message
/// that says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A regular expression given as a pre-tokenization pattern does not compile.
    #[error("invalid pre-tokenization pattern {pattern:?}: {reason}")]
    InvalidPattern { pattern: String, reason: String },
    /// The regex engine gave up on some input (backtracking limit of a custom pattern).
    #[error("the pre-tokenization pattern failed on the input: {reason}")]
    RegexRuntime { pattern: String, reason: String },
    /// A vocabulary is not usable (duplicate token, empty token, missing byte,
    /// a token that is not the merge of two others, ...). `rank` is the token
    /// (or special-token id) at fault when there is one.
    #[error("invalid vocabulary: {reason}")]
    InvalidVocab { rank: Option<Rank>, reason: String },
    /// Text contains a special token that the caller did not allow.
    #[error("Encountered text corresponding to disallowed special token {token:?}.\nIf you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={{{token:?}, ...}}`.\nIf you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {{{token:?}}})`.\nTo disable this check for all special tokens, pass `disallowed_special=()`.")]
    DisallowedSpecial { token: String },
    /// A token id that the vocabulary does not have.
    #[error("token id {id} is not in the vocabulary")]
    UnknownId { id: Rank },
    /// A thread count that cannot be used: `threads` is 0, or the threads
    /// cannot be started (`reason` says why).
    #[error("cannot run on {threads} threads: {reason}")]
    Threads { threads: usize, reason: String },
    /// Reading an input file failed.
    #[error("{path}: read error: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// An input file is not UTF-8; `offset` is the byte offset of the first
    /// invalid byte.
    #[error(
        "{path}: not UTF-8 text (invalid byte at offset {offset}); re-encode the file as UTF-8"
    )]
    NotUtf8 { path: String, offset: u64 },
    /// The body of a `.bpc` chunk-count file is damaged (`what`: how).
    #[error("chunk-count data {what}")]
    CorruptCounts { what: &'static str },
    /// Training arguments or data that cannot work (an empty separator, a
    /// table beyond the trainer's 32-bit limits, ...).
    #[error("invalid training arguments: {reason}")]
    InvalidTraining { reason: String },
    /// The state a merge loop would build is estimated above the caller's
    /// memory limit (`what`: the loop and what it holds; bytes).
    #[error("{what} needs about {} MB, more than memory_limit ({} MB)", grouped(*need / 1_000_000), grouped(*limit / 1_000_000))]
    MemoryLimit { what: String, need: u64, limit: u64 },
    /// A tokenizer file that is not what its format says (not UTF-8, not
    /// JSON, a key listed twice, a value of the wrong type); `location` is the
    /// JSON path of the part at fault (`$` for the file as a whole, empty when
    /// the file cannot be parsed at all).
    #[error("{reason}")]
    InvalidFile { location: String, reason: String },
    /// Training was interrupted by the caller (e.g. KeyboardInterrupt).
    #[error("training was interrupted")]
    Interrupted,
}

impl Error {
    /// [`Error::InvalidVocab`] about the vocabulary as a whole.
    pub(crate) fn vocab(reason: impl Into<String>) -> Self {
        Error::InvalidVocab {
            rank: None,
            reason: reason.into(),
        }
    }

    /// [`Error::InvalidVocab`] about the token (or special id) `rank`.
    pub(crate) fn vocab_at(rank: Rank, reason: impl Into<String>) -> Self {
        Error::InvalidVocab {
            rank: Some(rank),
            reason: reason.into(),
        }
    }

    /// [`Error::InvalidTraining`].
    pub(crate) fn training(reason: impl Into<String>) -> Self {
        Error::InvalidTraining {
            reason: reason.into(),
        }
    }
}

/// `n` with a comma between groups of three digits (`15,789`).
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_puts_a_comma_between_thousands() {
        let got: Vec<String> = [0, 999, 1_000, 15_789, 1_234_567].map(grouped).to_vec();
        assert_eq!(got, ["0", "999", "1,000", "15,789", "1,234,567"]);
        let e = Error::MemoryLimit {
            what: "the loop".into(),
            need: 15_789_000_000,
            limit: 12_638_000_000,
        };
        assert_eq!(
            e.to_string(),
            "the loop needs about 15,789 MB, more than memory_limit (12,638 MB)"
        );
    }
}
