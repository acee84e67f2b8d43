//! The special-token policy: which special tokens become their ids and which
//! make encoding fail (tiktoken's `allowed_special` / `disallowed_special`).

use super::CoreBpe;
use crate::error::{Error, Result};

/// What to do with special-token text found in the input, one flag per special
/// token (in the order given to [`CoreBpe::new`]). Build it with
/// [`CoreBpe::policy`].
#[derive(Debug, Clone, Default)]
pub struct SpecialPolicy {
    pub(super) allowed: Vec<bool>,
    pub(super) disallowed: Vec<bool>,
    pub(super) any_allowed: bool,
    pub(super) any_disallowed: bool,
}

impl SpecialPolicy {
    /// True when no special token is allowed or disallowed: plain-text encoding.
    pub fn is_ordinary(&self) -> bool {
        !self.any_allowed && !self.any_disallowed
    }
}

impl CoreBpe {
    /// Builds a policy from special-token names. Names that are not special
    /// tokens are ignored (the Python layer checks `disallowed` strings that are
    /// not special tokens itself, as tiktoken searches for them literally).
    pub fn policy<S: AsRef<str>>(&self, allowed: &[S], disallowed: &[S]) -> SpecialPolicy {
        let flags = |names: &[S]| -> Vec<bool> {
            let mut v = vec![false; self.special_names.len()];
            for n in names {
                if let Some(i) = self.special_names.iter().position(|s| s == n.as_ref()) {
                    v[i] = true;
                }
            }
            v
        };
        let allowed = flags(allowed);
        let disallowed = flags(disallowed);
        let any_allowed = allowed.iter().any(|&b| b);
        let any_disallowed = disallowed.iter().any(|&b| b);
        SpecialPolicy {
            allowed,
            disallowed,
            any_allowed,
            any_disallowed,
        }
    }

    /// The policy that disallows every special token (tiktoken's default).
    pub fn policy_default(&self) -> SpecialPolicy {
        let n = self.special_names.len();
        SpecialPolicy {
            allowed: vec![false; n],
            disallowed: vec![true; n],
            any_allowed: false,
            any_disallowed: n > 0,
        }
    }

    /// Fails on the leftmost disallowed special token in `text` (overlapping
    /// occurrences included, as tiktoken's search over the disallowed set alone).
    pub(super) fn check_disallowed(&self, text: &str, policy: &SpecialPolicy) -> Result<()> {
        let Some(ac) = &self.special_overlap else {
            return Ok(());
        };
        // keep the leftmost match, longest first among equal starts
        let mut first: Option<(usize, usize, usize)> = None; // (start, MAX - len, pattern)
        for m in ac.find_overlapping_iter(text) {
            let p = m.pattern().as_usize();
            if !policy.disallowed.get(p).copied().unwrap_or(false) {
                continue;
            }
            let cand = (m.start(), usize::MAX - m.len(), p);
            if first.is_none_or(|f| cand < f) {
                first = Some(cand);
            }
        }
        match first {
            Some((_, _, p)) => Err(Error::DisallowedSpecial {
                token: self.special_names[p].clone(),
            }),
            None => Ok(()),
        }
    }
}
