//! The one error type of the core. The binding layer (`py::errors`) maps each
//! variant to a Python exception in `bytepair.errors`.

use crate::Rank;

/// Everything that can go wrong in the core, with the data needed for a message
/// that says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A regular expression given as a pre-tokenization pattern does not compile.
    #[error("invalid pre-tokenization pattern {pattern:?}: {reason}")]
    InvalidPattern { pattern: String, reason: String },
    /// The regex engine gave up on some input (backtracking limit of a custom pattern).
    #[error("the pre-tokenization pattern failed on the input: {0}")]
    RegexRuntime(String),
    /// A vocabulary is not usable (duplicate token, empty token, missing byte, ...).
    #[error("invalid vocabulary: {0}")]
    InvalidVocab(String),
    /// Text contains a special token that the caller did not allow.
    #[error("Encountered text corresponding to disallowed special token {token:?}.\nIf you want this text to be encoded as a special token, pass it to `allowed_special`, e.g. `allowed_special={{{token:?}, ...}}`.\nIf you want this text to be encoded as normal text, disable the check for this token by passing `disallowed_special=(enc.special_tokens_set - {{{token:?}}})`.\nTo disable this check for all special tokens, pass `disallowed_special=()`.")]
    DisallowedSpecial { token: String },
    /// A token id that the vocabulary does not have.
    #[error("token id {0} is not in the vocabulary")]
    UnknownId(Rank),
    /// Training arguments that cannot work.
    #[error("invalid training arguments: {0}")]
    InvalidTraining(String),
    /// Training was interrupted by the caller (e.g. KeyboardInterrupt).
    #[error("training was interrupted")]
    Interrupted,
}

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, Error>;
