//! Added tokens of a Hugging Face `tokenizer.json`: found in the text before
//! the model sees it, leftmost-longest, with `tokenizers`' `single_word`,
//! `lstrip` and `rstrip` rules. Tokens with `normalized: false` are matched on
//! the raw text, the others on the normalized text (their own content
//! normalized first); special or not, both split the text the same way.

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, Anchored, Input, Match, MatchKind, Span, StartKind};

use crate::error::{Error, Result};
use crate::Rank;

/// One added token's matching rules.
#[derive(Debug, Clone)]
pub struct AddedToken {
    pub content: String,
    pub id: Rank,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    /// Special tokens are skipped when a call asks for specials as text
    /// (`tokenizers`' `encode_special_tokens`).
    pub special: bool,
}

/// A piece of text: plain text, or an added token's id with the bytes it
/// takes (its content, and the spaces its `lstrip` / `rstrip` took).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    Text(usize, usize),
    Token(Rank, usize, usize),
}

/// How a set's candidate match starts are found before an anchored search.
#[derive(Debug, Clone)]
enum Starts {
    /// The tokens' first bytes, when there are at most three and none is an
    /// ASCII letter, digit or space: found with `memchr`. The automaton's own
    /// prefilter may pick "rare" bytes that are UTF-8 continuation bytes (a
    /// token like `｜DSML｜`), which Korean or Chinese text holds at every
    /// other byte.
    Firsts(Vec<u8>),
    /// The tokens' distinct prefixes of one length (2 or 3 bytes, at most
    /// [`MAX_PREFIXES`]), found by a vectorised multi-substring search: a
    /// common first byte (GPT-NeoX's runs of two to 24 spaces start at every
    /// space of the text) then costs a search only where its prefix is.
    Prefixes(packed::Searcher),
}

/// Most distinct prefixes for [`Starts::Prefixes`].
const MAX_PREFIXES: usize = 16;

/// The tokens of one phase (raw or normalized) and their automaton.
#[derive(Debug, Clone, Default)]
pub struct AddedSet {
    tokens: Vec<AddedToken>,
    ac: Option<AhoCorasick>,
    /// Candidate starts for anchored searches; `None`: the automaton's own
    /// unanchored scan.
    starts: Option<Starts>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl AddedSet {
    /// Builds the automaton over `tokens` (matched by their `content`).
    pub fn new(tokens: Vec<AddedToken>) -> Result<Self> {
        let starts = Self::rare_firsts(&tokens)
            .map(Starts::Firsts)
            .or_else(|| Self::prefixes(&tokens).map(Starts::Prefixes));
        let ac = if tokens.is_empty() {
            None
        } else {
            let pats: Vec<&str> = tokens.iter().map(|t| t.content.as_str()).collect();
            // anchored searches only for the candidates: the extra start
            // states slow the automaton's own scan
            let kind = if starts.is_some() {
                StartKind::Anchored
            } else {
                StartKind::Unanchored
            };
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .start_kind(kind)
                    .build(&pats)
                    .map_err(|e| Error::vocab(e.to_string()))?,
            )
        };
        Ok(AddedSet { tokens, ac, starts })
    }

    /// The ids of this set's runs of spaces, `ids[k - 2]` for `k` spaces,
    /// and a set of its other tokens, when a scanner may find the runs itself
    /// (see [`crate::pretok::Scanner::for_each_span_cut`]): every length from
    /// 2 to the longest is one token, none of them special; no other token
    /// holds a space (so no match of one overlaps a match of the other, and
    /// the leftmost-longest matches of the whole set are those of the two
    /// parts); no token strips spaces or asks for a whole word. `None`
    /// otherwise.
    pub fn split_space_runs(&self, max_run: usize) -> Option<(Vec<Rank>, AddedSet)> {
        let plain = |t: &AddedToken| !(t.lstrip || t.rstrip || t.single_word);
        if !self.tokens.iter().all(plain) {
            return None;
        }
        let (runs, rest): (Vec<&AddedToken>, Vec<&AddedToken>) = self
            .tokens
            .iter()
            .partition(|t| !t.content.is_empty() && t.content.bytes().all(|c| c == b' '));
        let longest = runs.iter().map(|t| t.content.len()).max()?;
        if longest < 2 || longest > max_run || rest.iter().any(|t| t.content.contains(' ')) {
            return None;
        }
        let mut ids: Vec<Option<Rank>> = vec![None; longest - 1];
        for t in &runs {
            let slot = ids.get_mut(t.content.len().checked_sub(2)?)?;
            if t.special || slot.replace(t.id).is_some() {
                return None;
            }
        }
        let ids: Option<Vec<Rank>> = ids.into_iter().collect();
        let rest = AddedSet::new(rest.into_iter().cloned().collect()).ok()?;
        Some((ids?, rest))
    }

    /// The tokens' first bytes when there are one to three, none of them an
    /// ASCII letter, digit or space, and no token is empty. A common first
    /// byte gives dense candidates, each a search of its own, where the
    /// automaton's scan does better.
    fn rare_firsts(tokens: &[AddedToken]) -> Option<Vec<u8>> {
        let mut firsts = Vec::with_capacity(tokens.len());
        for t in tokens {
            let b = *t.content.as_bytes().first()?;
            if b.is_ascii_alphanumeric() || b.is_ascii_whitespace() {
                return None;
            }
            firsts.push(b);
        }
        firsts.sort_unstable();
        firsts.dedup();
        (!firsts.is_empty() && firsts.len() <= 3).then_some(firsts)
    }

    /// The tokens' distinct prefixes of their shortest length (capped at 3),
    /// as a vectorised searcher, when that length is at least 2 and there
    /// are at most [`MAX_PREFIXES`] of them (and the CPU has the search).
    fn prefixes(tokens: &[AddedToken]) -> Option<packed::Searcher> {
        let k = tokens.iter().map(|t| t.content.len()).min()?.min(3);
        if k < 2 {
            return None;
        }
        let mut pre: Vec<&[u8]> = tokens.iter().map(|t| &t.content.as_bytes()[..k]).collect();
        pre.sort_unstable();
        pre.dedup();
        if pre.len() > MAX_PREFIXES {
            return None;
        }
        packed::Config::new()
            .only_teddy(true)
            .builder()
            .extend(pre)
            .build()
    }

    /// The next leftmost-longest match in `s` at or after `from`, from the
    /// candidates `starts` finds.
    fn next_match(ac: &AhoCorasick, starts: &Starts, s: &str, from: usize) -> Option<Match> {
        let b = s.as_bytes();
        let mut at = from;
        while at < b.len() {
            let c = match starts {
                Starts::Firsts(firsts) => {
                    let rest = &b[at..];
                    at + match firsts[..] {
                        [] => None,
                        [x] => memchr::memchr(x, rest),
                        [x, y] => memchr::memchr2(x, y, rest),
                        [x, y, z, ..] => memchr::memchr3(x, y, z, rest),
                    }?
                }
                Starts::Prefixes(p) => p.find_in(b, Span::from(at..b.len()))?.start(),
            };
            // every match starts at a candidate: the first candidate with an
            // anchored match is the leftmost match (its longest)
            let m = ac.find(Input::new(s).range(c..).anchored(Anchored::Yes));
            if m.is_some() {
                return m;
            }
            at = c + 1;
        }
        None
    }

    /// Cuts `s` at the added tokens it holds; `f` gets each segment in order
    /// (text segments are byte ranges of `s`, never empty).
    /// With `specials` false, a match of a special token is ignored (its text
    /// stays text), as `tokenizers` does with `encode_special_tokens`.
    pub fn split<F: FnMut(Segment) -> Result<()>>(
        &self,
        s: &str,
        specials: bool,
        mut f: F,
    ) -> Result<()> {
        let Some(ac) = &self.ac else {
            if !s.is_empty() {
                f(Segment::Text(0, s.len()))?;
            }
            return Ok(());
        };
        // the automaton's own scan, or anchored searches at the candidates
        let (mut auto, mut from) = (None, 0);
        let mut next = || match &self.starts {
            Some(starts) => {
                let m = Self::next_match(ac, starts, s, from);
                from = m.map_or(s.len(), |m| m.end().max(m.start() + 1));
                m
            }
            None => auto.get_or_insert_with(|| ac.find_iter(s)).next(),
        };
        let mut at = 0;
        while let Some(m) = next() {
            let t = &self.tokens[m.pattern().as_usize()];
            let (mut start, mut stop) = (m.start(), m.end());
            if t.special && !specials {
                continue;
            }
            if t.single_word {
                let before = s[..start].chars().next_back().is_some_and(is_word);
                let after = s[stop..].chars().next().is_some_and(is_word);
                if before || after {
                    continue;
                }
            }
            if t.lstrip {
                let trimmed = s[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(at);
            }
            if t.rstrip {
                stop = s.len() - s[stop..].trim_start_matches(char::is_whitespace).len();
            }
            if start < at {
                continue; // inside the span a previous token's rstrip took
            }
            if at < start {
                f(Segment::Text(at, start))?;
            }
            f(Segment::Token(t.id, start, stop))?;
            at = stop;
        }
        if at < s.len() {
            f(Segment::Text(at, s.len()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(content: &str, id: Rank) -> AddedToken {
        AddedToken {
            content: content.into(),
            id,
            single_word: false,
            lstrip: false,
            rstrip: false,
            special: true,
        }
    }

    fn segments(set: &AddedSet, s: &str) -> Vec<Segment> {
        let mut out = Vec::new();
        set.split(s, true, |g| {
            out.push(g);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn runs_of_spaces_split_off_only_when_the_scanner_can_cut_them() {
        let runs = |lens: &[usize]| -> Vec<AddedToken> {
            lens.iter()
                .map(|&k| AddedToken {
                    special: false,
                    ..tok(&" ".repeat(k), 100 + k as Rank)
                })
                .collect()
        };
        let with = |mut v: Vec<AddedToken>, t: AddedToken| {
            v.push(t);
            AddedSet::new(v).unwrap()
        };
        let set = with(runs(&[4, 2, 3]), tok("<|x|>", 9));
        let (ids, rest) = set.split_space_runs(24).unwrap();
        assert_eq!(ids, vec![102, 103, 104]);
        assert_eq!(
            segments(&rest, "a  <|x|>"),
            vec![Segment::Text(0, 3), Segment::Token(9, 3, 8)]
        );
        // a length missing, longer than allowed, a special run, a space in
        // another token, a token that strips: the set stays whole
        assert!(with(runs(&[2, 4]), tok("x", 9))
            .split_space_runs(24)
            .is_none());
        assert!(with(runs(&[2, 3, 4]), tok("x", 9))
            .split_space_runs(3)
            .is_none());
        assert!(with(runs(&[2]), tok(" ", 9)).split_space_runs(24).is_none());
        assert!(with(runs(&[2]), tok("  ", 9))
            .split_space_runs(24)
            .is_none());
        assert!(with(runs(&[2]), tok("a b", 9))
            .split_space_runs(24)
            .is_none());
        let mut strips = tok("x", 9);
        strips.lstrip = true;
        assert!(with(runs(&[2]), strips).split_space_runs(24).is_none());
        assert!(AddedSet::new(vec![tok("x", 9)])
            .unwrap()
            .split_space_runs(24)
            .is_none());
    }

    #[test]
    fn leftmost_longest_and_word_rules() {
        let set = AddedSet::new(vec![tok("<a>", 7), tok("<a>b", 8)]).unwrap();
        assert_eq!(
            segments(&set, "x<a>b<a>"),
            vec![
                Segment::Text(0, 1),
                Segment::Token(8, 1, 5),
                Segment::Token(7, 5, 8)
            ]
        );
        let mut w = tok("ab", 9);
        w.single_word = true;
        w.lstrip = true;
        let set = AddedSet::new(vec![w]).unwrap();
        assert_eq!(segments(&set, "xab"), vec![Segment::Text(0, 3)]);
        assert_eq!(
            segments(&set, "x  ab"),
            vec![Segment::Text(0, 1), Segment::Token(9, 1, 5)]
        );
    }

    /// Which candidates a set takes: 0 first bytes, 1 prefixes, 2 none.
    fn kind(set: &AddedSet) -> usize {
        match set.starts {
            Some(Starts::Firsts(_)) => 0,
            Some(Starts::Prefixes(_)) => 1,
            None => 2,
        }
    }

    /// The candidates (first bytes or prefixes) give the matches of the
    /// automaton's own unanchored search: random text of token fragments,
    /// Hangul and spaces, for sets of one, two and three first bytes, sets
    /// of common prefixes, and a set with a one-byte token (the automaton
    /// alone).
    #[test]
    fn candidates_match_the_automaton() {
        let sets: Vec<(Vec<&str>, usize)> = vec![
            (vec!["<a>", "<a>b", "<ab"], 0),
            (vec!["<s>", "｜DSML｜", "<｜x｜>"], 0),
            (vec!["<|", "<|e|>", "|||E|||", "|x"], 0),
            (vec!["  ", "   ", "    ", "|||E|||", "|||x"], 1),
            (vec!["ab<", "x|", "xa", "  a"], 1),
            (vec!["<a>", "｜b", "  ", "x"], 2),
        ];
        let alphabet = [
            "<", "a", ">", "b", "s", "｜", "DSML", "x", "|", " ", "  ", "한", "E", "e",
        ];
        let next = |x: &mut u64| {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            *x
        };
        // more distinct prefixes than MAX_PREFIXES: the automaton's own scan
        let many: Vec<AddedToken> = (0..=MAX_PREFIXES as u32)
            .map(|i| tok(&format!("{i:02}x"), i))
            .collect();
        assert_eq!(kind(&AddedSet::new(many).unwrap()), 2);
        let mut x: u64 = 0x2545_f491;
        for (k, (pats, want)) in sets.iter().enumerate() {
            let toks = pats.iter().zip(1..).map(|(p, id)| tok(p, id)).collect();
            let set = AddedSet::new(toks).unwrap();
            assert_eq!(kind(&set), *want, "set {k}");
            let plain = AddedSet {
                starts: None,
                ac: Some(
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostLongest)
                        .build(pats)
                        .unwrap(),
                ),
                ..set.clone()
            };
            let mut hits = 0;
            for i in 0..2_000 {
                // short texts, and long ones for the vectorised search
                let mut text = String::new();
                for _ in 0..next(&mut x) % if i % 2 == 0 { 40 } else { 300 } {
                    text.push_str(alphabet[next(&mut x) as usize % alphabet.len()]);
                }
                let got = segments(&set, &text);
                hits += got
                    .iter()
                    .filter(|g| matches!(g, Segment::Token(..)))
                    .count();
                assert_eq!(got, segments(&plain, &text), "{text:?}");
            }
            assert!(hits >= 10, "set {k}: {hits} tokens in all");
        }
    }
}
