//! Pre-tokenizer stages of a Hugging Face `tokenizer.json`, with `tokenizers`'
//! semantics: each stage re-splits every piece of the stage before, each piece
//! is its own haystack (no match crosses a piece edge, and look-ahead sees the
//! piece's end as the end of the text), and empty pieces are dropped.
//!
//! A `Split` stage runs its regex through [`Pretokenizer`], built from the
//! pattern string: with the `Isolated` behaviour (every match and every gap a
//! piece, which is what bytepair's pre-tokenizers return), or `Removed` with
//! `invert` on a pattern whose scanner matches every character, a pattern with
//! a hand-written scanner runs on it; the other behaviours need to know which
//! spans are matches and ask `fancy-regex` directly. A run of `Isolated`
//! splits that has one scanner for the whole chain (DeepSeek V3's), or a run
//! of `Isolated` splits and `Digits` of the shapes [`crate::pretok::SplitChain`]
//! runs (DeepSeek LLM's and Coder's), is fused into one stage when the
//! pipeline is built.

use crate::error::{Error, Result};
use crate::pretok::Pretokenizer;

/// What a `Split` does with the matches (`tokenizers`' `SplitDelimiterBehavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

/// One pre-tokenizer (a `Sequence` is flattened into a list of these).
#[derive(Debug, Clone)]
pub enum Stage {
    Split {
        regex: Box<Pretokenizer>,
        behavior: Behavior,
        invert: bool,
    },
    /// `Digits`: numeric characters (`char::is_numeric`) isolated one by one,
    /// or as contiguous runs.
    Digits { individual: bool },
    /// `ByteLevel`: a space before every piece that lacks one (when
    /// `add_prefix_space`), then GPT-2's regex (when `use_regex`). The byte
    /// mapping itself is implicit: the model works on bytes.
    ByteLevel {
        add_prefix_space: bool,
        regex: Option<Box<Pretokenizer>>,
    },
}

/// Pieces as byte ranges of one buffer.
pub type Pieces = Vec<(usize, usize)>;

/// `(start, end, is_match)` runs covering a piece, in order.
type Runs = Vec<(usize, usize, bool)>;

fn regex_runs(p: &Pretokenizer, s: &str, runs: &mut Runs) -> Result<()> {
    let Some(re) = p.regex() else {
        runs.push((0, s.len(), false));
        return Ok(());
    };
    let mut at = 0;
    for m in re.find_iter(s) {
        let m = m.map_err(|e| Error::RegexRuntime {
            pattern: re.as_str().to_string(),
            reason: e.to_string(),
        })?;
        if m.start() != at {
            runs.push((at, m.start(), false));
        }
        runs.push((m.start(), m.end(), true));
        at = m.end();
    }
    if at != s.len() {
        runs.push((at, s.len(), false));
    }
    Ok(())
}

fn char_runs(s: &str, pred: fn(char) -> bool, runs: &mut Runs) {
    let mut gap = 0;
    for (i, c) in s.char_indices() {
        if pred(c) {
            if gap < i {
                runs.push((gap, i, false));
            }
            runs.push((i, i + c.len_utf8(), true));
            gap = i + c.len_utf8();
        }
    }
    if gap < s.len() {
        runs.push((gap, s.len(), false));
    }
}

/// `tokenizers`' `NormalizedString::split` on runs: the pieces to keep.
fn apply_behavior(
    runs: &[(usize, usize, bool)],
    behavior: Behavior,
    invert: bool,
    out: &mut Pieces,
    base: usize,
) {
    let mut keep: Vec<(usize, usize)> = Vec::with_capacity(runs.len());
    let flag = |m: bool| m != invert;
    match behavior {
        Behavior::Isolated => keep.extend(runs.iter().map(|&(s, e, _)| (s, e))),
        Behavior::Removed => {
            keep.extend(runs.iter().filter(|r| !flag(r.2)).map(|&(s, e, _)| (s, e)))
        }
        Behavior::Contiguous => {
            let mut prev = false;
            for &(s, e, m) in runs {
                let m = flag(m);
                match keep.last_mut() {
                    Some(last) if m == prev => last.1 = e,
                    _ => keep.push((s, e)),
                }
                prev = m;
            }
        }
        Behavior::MergedWithPrevious => {
            let mut prev = false;
            for &(s, e, m) in runs {
                let m = flag(m);
                match keep.last_mut() {
                    Some(last) if m && !prev => last.1 = e,
                    _ => keep.push((s, e)),
                }
                prev = m;
            }
        }
        Behavior::MergedWithNext => {
            let mut prev = false;
            for &(s, e, m) in runs.iter().rev() {
                let m = flag(m);
                match keep.last_mut() {
                    Some(last) if m && !prev => last.0 = s,
                    _ => keep.push((s, e)),
                }
                prev = m;
            }
            keep.reverse();
        }
    }
    out.extend(
        keep.into_iter()
            .filter(|(s, e)| s < e)
            .map(|(s, e)| (base + s, base + e)),
    );
}

/// Whether a `Split` keeps every match and every gap as a piece: `Isolated`,
/// and `Removed` with `invert` (keep the matches, drop the gaps) on a pattern
/// with a hand-written scanner, since each of those patterns matches every
/// character (its last branches are `\s+` and "anything else"), so there is no
/// gap to drop. Such a split is what the scanners compute.
fn keeps_every_span(regex: &Pretokenizer, behavior: Behavior, invert: bool) -> bool {
    behavior == Behavior::Isolated
        || (behavior == Behavior::Removed && invert && regex.named().is_some_and(|n| !n.is_chain()))
}

/// The one stage whose spans are all the pieces, when every other stage
/// changes nothing (a `ByteLevel` with no prefix space and no regex), and
/// that stage keeps every span of one scanner or regex ([`Stage::spans`]).
pub fn span_stage(stages: &[Stage]) -> Option<usize> {
    let noop = |st: &Stage| {
        matches!(
            st,
            Stage::ByteLevel {
                add_prefix_space: false,
                regex: None
            }
        )
    };
    let mut active = stages.iter().enumerate().filter(|(_, st)| !noop(st));
    let (i, st) = active.next()?;
    (active.next().is_none() && st.spans().is_some()).then_some(i)
}

impl Stage {
    /// Which engine runs this stage: `Split: scanner:<family>` (a hand-written
    /// scanner, DeepSeek V3's fused chain included), `Split x5 + Digits x1:
    /// scanner:split_chain` (a fused chain of splits and digits), `Split: regex` (`fancy-regex`),
    /// `Digits`, `ByteLevel: scanner:gpt2` or `ByteLevel` (no regex).
    pub fn path(&self) -> String {
        match self {
            Stage::Split {
                regex,
                behavior,
                invert,
            } if keeps_every_span(regex, *behavior, *invert) => match regex.chain() {
                Some(c) => format!("{}: {}", c.label(), regex.path()),
                None => format!("Split: {}", regex.path()),
            },
            Stage::Split { .. } => "Split: regex".to_string(),
            Stage::Digits { .. } => "Digits".to_string(),
            Stage::ByteLevel {
                regex: Some(re), ..
            } => format!("ByteLevel: {}", re.path()),
            Stage::ByteLevel { regex: None, .. } => "ByteLevel".to_string(),
        }
    }

    /// The pre-tokenizer whose every span is a piece of this stage, for a
    /// stage that keeps every span: a `Split` ([`keeps_every_span`]) or a
    /// `ByteLevel` with GPT-2's regex and no prefix space.
    pub fn spans(&self) -> Option<&Pretokenizer> {
        match self {
            Stage::Split {
                regex,
                behavior,
                invert,
            } if keeps_every_span(regex, *behavior, *invert) => Some(regex),
            Stage::ByteLevel {
                add_prefix_space: false,
                regex: Some(re),
            } => Some(re),
            _ => None,
        }
    }

    /// Splits every piece of `buf` (`pieces`), returning the new buffer (when
    /// the stage edits the text) and pieces.
    pub fn apply(&self, buf: &mut String, pieces: Pieces) -> Result<Pieces> {
        let mut out = Pieces::with_capacity(pieces.len() * 2);
        let mut runs = Runs::new();
        match self {
            Stage::Split {
                regex,
                behavior,
                invert,
            } if keeps_every_span(regex, *behavior, *invert) => {
                for (s, e) in pieces {
                    regex
                        .for_each_span(&buf[s..e], |a: usize, b: usize| out.push((s + a, s + b)))?;
                }
            }
            Stage::Split {
                regex,
                behavior,
                invert,
            } => {
                for (s, e) in pieces {
                    runs.clear();
                    regex_runs(regex, &buf[s..e], &mut runs)?;
                    apply_behavior(&runs, *behavior, *invert, &mut out, s);
                }
            }
            Stage::Digits { individual } => {
                let behavior = if *individual {
                    Behavior::Isolated
                } else {
                    Behavior::Contiguous
                };
                for (s, e) in pieces {
                    runs.clear();
                    char_runs(&buf[s..e], char::is_numeric, &mut runs);
                    apply_behavior(&runs, behavior, false, &mut out, s);
                }
            }
            Stage::ByteLevel {
                add_prefix_space,
                regex,
            } => {
                let mut pieces = pieces;
                if *add_prefix_space {
                    let mut nb = String::with_capacity(buf.len() + pieces.len());
                    let mut np = Pieces::with_capacity(pieces.len());
                    for (s, e) in pieces {
                        let start = nb.len();
                        if !buf[s..e].starts_with(' ') {
                            nb.push(' ');
                        }
                        nb.push_str(&buf[s..e]);
                        np.push((start, nb.len()));
                    }
                    *buf = nb;
                    pieces = np;
                }
                match regex {
                    Some(re) => {
                        for (s, e) in pieces {
                            re.for_each_span(&buf[s..e], |a: usize, b: usize| {
                                out.push((s + a, s + b))
                            })?;
                        }
                    }
                    None => out = pieces,
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(behavior: Behavior, invert: bool, s: &str) -> Vec<String> {
        let st = Stage::Split {
            regex: Box::new(Pretokenizer::new(Some("-")).unwrap()),
            behavior,
            invert,
        };
        let mut buf = s.to_string();
        let p = st.apply(&mut buf, vec![(0, s.len())]).unwrap();
        p.iter().map(|&(a, b)| buf[a..b].to_string()).collect()
    }

    #[test]
    fn behaviors_as_tokenizers_documents_them() {
        let s = "the-final--countdown";
        assert_eq!(
            split(Behavior::Removed, false, s),
            ["the", "final", "countdown"]
        );
        assert_eq!(
            split(Behavior::Isolated, false, s),
            ["the", "-", "final", "-", "-", "countdown"]
        );
        assert_eq!(
            split(Behavior::MergedWithPrevious, false, s),
            ["the-", "final-", "-", "countdown"]
        );
        assert_eq!(
            split(Behavior::MergedWithNext, false, s),
            ["the", "-final", "-", "-countdown"]
        );
        assert_eq!(
            split(Behavior::Contiguous, false, s),
            ["the", "-", "final", "--", "countdown"]
        );
        assert_eq!(split(Behavior::Removed, true, s), ["-", "-", "-"]);
    }

    #[test]
    fn digits_and_prefix_space() {
        let mut buf = "a12b3".to_string();
        let d = Stage::Digits { individual: false };
        let p = d.apply(&mut buf, vec![(0, 5)]).unwrap();
        assert_eq!(p, vec![(0, 1), (1, 3), (3, 4), (4, 5)]);
        let bl = Stage::ByteLevel {
            add_prefix_space: true,
            regex: None,
        };
        let p = bl.apply(&mut buf, vec![(0, 1), (1, 3)]).unwrap();
        assert_eq!(buf, " a 12");
        assert_eq!(p, vec![(0, 2), (2, 5)]);
    }
}
