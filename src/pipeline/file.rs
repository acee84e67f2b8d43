//! A `tokenizer.json` read once: the model's vocabulary and merges (the bulk
//! of the file: 30 k-250 k tokens, up to 320 k merges) parsed into typed
//! tables, and every other part of the file handed back as JSON text, each
//! value as written, for the Python reader (`bytepair.formats.hf_pipeline`)
//! to check component by component. Also: the keys of a JSON object file,
//! found without building its values (format detection).
//!
//! The reading is strict where Python's `json` with a duplicate-key check is:
//! the file is UTF-8, one JSON value, and no object lists a key twice (a
//! vocabulary listing a token twice would otherwise keep one id silently).
//! A part of the model that is not of the expected type (`vocab` not an
//! object, `merges` not a list) stays in the JSON text, so that the Python
//! reader names the problem as it does for every other component.

use std::cell::RefCell;
use std::fmt;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{Error, Result};
use crate::Rank;

/// The largest id a vocabulary entry may have: ids index tables, and
/// `tokenizers` itself keeps them in 32 bits.
pub const MAX_ID: u64 = (1 << 31) - 1;

/// One merge: the merged token's string and where its two parts meet.
#[derive(Debug, Clone)]
pub struct Merge {
    joined: Box<str>,
    split: usize,
}

impl Merge {
    fn new(left: &str, right: &str) -> Self {
        let mut joined = String::with_capacity(left.len() + right.len());
        joined.push_str(left);
        joined.push_str(right);
        Merge {
            joined: joined.into_boxed_str(),
            split: left.len(),
        }
    }

    /// The left part.
    pub fn left(&self) -> &str {
        &self.joined[..self.split]
    }

    /// The right part.
    pub fn right(&self) -> &str {
        &self.joined[self.split..]
    }

    /// The token the merge makes (left + right).
    pub fn joined(&self) -> &str {
        &self.joined
    }
}

/// The model's vocabulary (string -> id) and merge list, in file order.
#[derive(Debug, Clone, Default)]
pub struct ModelFile {
    pub vocab: FxHashMap<Box<str>, Rank>,
    pub merges: Vec<Merge>,
}

/// A read `tokenizer.json`: the file without `model.vocab` and
/// `model.merges` as JSON text, and those two when both had their type.
#[derive(Debug)]
pub struct FileParts {
    pub rest: String,
    pub model: Option<ModelFile>,
}

fn invalid(location: impl Into<String>, reason: impl Into<String>) -> Error {
    Error::InvalidFile {
        location: location.into(),
        reason: reason.into(),
    }
}

/// A string as Python's `repr` writes it, for messages that name a token.
pub fn py_repr(s: &str) -> String {
    if s.contains('\'') || s.chars().any(|c| c.is_control() || c == '\\') {
        format!("{s:?}")
    } else {
        format!("'{s}'")
    }
}

/// The file as text: UTF-8, starting (after blanks) with `{`.
fn object_text(data: &[u8]) -> Result<Option<&str>> {
    let text = std::str::from_utf8(data).map_err(|e| {
        invalid(
            "",
            format!(
                "not UTF-8 (byte {}); a JSON tokenizer file is UTF-8 text",
                e.valid_up_to()
            ),
        )
    })?;
    Ok(text.trim_start().starts_with('{').then_some(text))
}

/// A JSON syntax error as words: what, then where.
fn syntax(e: &serde_json::Error) -> Error {
    let full = e.to_string();
    let at = format!(" at line {} column {}", e.line(), e.column());
    let what = full.strip_suffix(&at).unwrap_or(&full);
    invalid(
        "",
        format!(
            "not valid JSON: {what} at line {}, column {}; the file may be truncated",
            e.line(),
            e.column()
        ),
    )
}

/// Runs `f` on a deserializer of `text` (the whole text must be one value);
/// an error the visitors left in `found` wins over serde's own.
fn parse<'t, T>(
    text: &'t str,
    found: &RefCell<Option<Error>>,
    f: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'t>>) -> serde_json::Result<T>,
) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let out = f(&mut de).and_then(|v| de.end().map(|()| v));
    match (out, found.take()) {
        (_, Some(e)) => Err(e),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(syntax(&e)),
    }
}

/// Records `e` for [`parse`] and stops serde.
fn stop<E: de::Error>(found: &RefCell<Option<Error>>, e: Error) -> E {
    *found.borrow_mut() = Some(e);
    E::custom("stopped")
}

fn duplicate(key: &str, location: &str) -> Error {
    invalid(
        location,
        format!(
            "the key {} appears twice in one JSON object (a token listed twice?)",
            py_repr(key)
        ),
    )
}

/// Visits a JSON object, handing each key and raw value to `each` in file
/// order; an error `each` returns stops the parse (see [`parse`]).
struct ObjectVisitor<'a, F> {
    expecting: &'static str,
    found: &'a RefCell<Option<Error>>,
    each: F,
}

impl<'de, F: FnMut(String, &'de RawValue) -> Result<()>> Visitor<'de> for ObjectVisitor<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            let v: &'de RawValue = map.next_value()?;
            (self.each)(k, v).map_err(|e| stop(self.found, e))?;
        }
        Ok(())
    }
}

/// Calls `each(key, raw value)` for every entry of the JSON object `text`,
/// in file order (`expecting`: what a value of another type is called).
fn for_each_entry<'t>(
    text: &'t str,
    expecting: &'static str,
    each: impl FnMut(String, &'t RawValue) -> Result<()>,
) -> Result<()> {
    let found = RefCell::new(None);
    parse(text, &found, |de| {
        de.deserialize_map(ObjectVisitor {
            expecting,
            found: &found,
            each,
        })
    })
}

/// The keys of a JSON object file in order, or `None` when the file is UTF-8
/// JSON of another kind (a list, a string, ...) or not JSON at all.
pub fn object_keys(data: &[u8]) -> Result<Option<Vec<String>>> {
    let Some(text) = object_text(data)? else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for_each_entry(text, "a JSON object", |k, _| {
        keys.push(k);
        Ok(())
    })?;
    Ok(Some(keys))
}

/// Object entries as they are written: raw value and key; a key listed twice
/// is an error at `location`.
fn entries<'t>(text: &'t str, location: &str) -> Result<Vec<(&'t str, String)>> {
    let mut seen = FxHashSet::default();
    let mut out = Vec::new();
    for_each_entry(text, "a JSON object", |k, v| {
        if !seen.insert(k.clone()) {
            return Err(duplicate(&k, location));
        }
        out.push((v.get(), k));
        Ok(())
    })?;
    Ok(out)
}

/// Appends `"key": value` to an object being written.
fn push_entry(out: &mut String, key: &str, value: &str) {
    if !out.ends_with('{') {
        out.push(',');
    }
    // a key is a plain string: it always serializes
    out.push_str(&serde_json::to_string(key).unwrap_or_default());
    out.push(':');
    out.push_str(value);
}

/// Reads a `tokenizer.json` (see the module doc). A file whose top level is
/// not a JSON object is an error.
pub fn read(data: &[u8]) -> Result<FileParts> {
    let Some(text) = object_text(data)? else {
        return Err(invalid("$", "a tokenizer.json file is a JSON object"));
    };
    let mut rest = String::from("{");
    let mut model = None;
    for (value, key) in entries(text, "$")? {
        if key == "model" && value.starts_with('{') {
            let (model_rest, typed) = read_model(value)?;
            push_entry(&mut rest, &key, &model_rest);
            model = typed;
        } else {
            push_entry(&mut rest, &key, value);
        }
    }
    rest.push('}');
    Ok(FileParts { rest, model })
}

fn read_model(text: &str) -> Result<(String, Option<ModelFile>)> {
    let mut rest = String::from("{");
    let (mut vocab, mut merges) = (None, None);
    for (value, key) in entries(text, "$.model")? {
        match key.as_str() {
            "vocab" if value.starts_with('{') => vocab = Some(value),
            "merges" if value.starts_with('[') => merges = Some(value),
            _ => push_entry(&mut rest, &key, value),
        }
    }
    let typed = match (vocab, merges) {
        (Some(v), Some(m)) => Some(ModelFile {
            vocab: read_vocab(v)?,
            merges: read_merges(m)?,
        }),
        (v, m) => {
            // both stay in the text: the Python reader says what is missing
            for (key, value) in [("vocab", v), ("merges", m)] {
                if let Some(value) = value {
                    push_entry(&mut rest, key, value);
                }
            }
            None
        }
    };
    rest.push('}');
    Ok((rest, typed))
}

/// A JSON value shown in a message: a string as Python's repr, else as written.
fn shown(raw: &str) -> String {
    match serde_json::from_str::<String>(raw) {
        Ok(s) => py_repr(&s),
        Err(_) => raw.to_owned(),
    }
}

fn read_vocab(text: &str) -> Result<FxHashMap<Box<str>, Rank>> {
    let mut out = FxHashMap::default();
    // serde_json does not tell an object's length ahead
    out.reserve(1 << 16);
    for_each_entry(text, "an object of token -> id", |k, v| {
        let id = match v.get().parse::<u64>() {
            Ok(i) if i <= MAX_ID => i as Rank,
            _ => {
                let why = format!(
                    "token {} has id {}; ids are whole numbers 0..{MAX_ID}",
                    py_repr(&k),
                    shown(v.get())
                );
                return Err(invalid("$.model.vocab", why));
            }
        };
        let k = k.into_boxed_str();
        if out.contains_key(&k) {
            return Err(duplicate(&k, "$.model.vocab"));
        }
        out.insert(k, id);
        Ok(())
    })?;
    Ok(out)
}

/// An item of a merge pair: a string (borrowed from the file when it has no
/// escapes), or `None` for any other value.
struct Part<'de>(Option<std::borrow::Cow<'de, str>>);

impl<'de> de::Deserialize<'de> for Part<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Part<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(Part(Some(s.into())))
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(Part(Some(s.to_owned().into())))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Part(None))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Part(None))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
                Ok(Part(None))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Self::Value, E> {
                Ok(Part(None))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Self::Value, E> {
                Ok(Part(None))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Self::Value, E> {
                Ok(Part(None))
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(Part(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// One merge as written: `"left right"` or `["left", "right"]`; anything
/// else is `Err` with a description of what was found.
struct MergeItem(std::result::Result<Merge, String>);

impl<'de> de::Deserialize<'de> for MergeItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MergeItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a merge")
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(match s.split_once(' ') {
                    Some((a, b)) if !b.contains(' ') => Ok(Merge::new(a, b)),
                    _ => Err(py_repr(s)),
                }))
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let a: Option<Part<'de>> = seq.next_element()?;
                let b: Option<Part<'de>> = match a {
                    Some(_) => seq.next_element()?,
                    None => None,
                };
                let mut more = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    more += 1;
                }
                Ok(MergeItem(match (a, b, more) {
                    (Some(Part(Some(a))), Some(Part(Some(b))), 0) => Ok(Merge::new(&a, &b)),
                    (Some(_), Some(_), 0) => Err("a pair that is not two strings".into()),
                    (a, b, more) => Err(format!(
                        "a list of {} items",
                        usize::from(a.is_some()) + usize::from(b.is_some()) + more
                    )),
                }))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MergeItem(Err("an object".into())))
            }
            fn visit_bool<E>(self, b: bool) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(Err(b.to_string())))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(Err(v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(Err(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(Err(v.to_string())))
            }
            fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
                Ok(MergeItem(Err("null".into())))
            }
        }
        d.deserialize_any(V)
    }
}

struct MergesVisitor<'a> {
    found: &'a RefCell<Option<Error>>,
}

impl<'de> Visitor<'de> for MergesVisitor<'_> {
    type Value = Vec<Merge>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of merges")
    }
    fn visit_seq<A: SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1 << 16));
        while let Some(MergeItem(item)) = seq.next_element()? {
            match item {
                Ok(m) => out.push(m),
                Err(got) => {
                    let why =
                        format!("a merge is \"left right\" or [\"left\", \"right\"], got {got}");
                    let at = format!("$.model.merges[{}]", out.len());
                    return Err(stop(self.found, invalid(at, why)));
                }
            }
        }
        Ok(out)
    }
}

fn read_merges(text: &str) -> Result<Vec<Merge>> {
    let found = RefCell::new(None);
    parse(text, &found, |de| {
        de.deserialize_seq(MergesVisitor { found: &found })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_is_typed_and_the_rest_kept_as_written() {
        let f = br#"{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
            "merges": ["a b", ["a", "b"]], "dropout": null}, "added_tokens": [{"id": 3}]}"#;
        let p = read(f).unwrap();
        let m = p.model.unwrap();
        assert_eq!(m.vocab.len(), 3);
        assert_eq!(m.vocab.get("ab"), Some(&2));
        assert_eq!(m.merges.len(), 2);
        assert_eq!((m.merges[1].left(), m.merges[1].right()), ("a", "b"));
        assert_eq!(m.merges[0].joined(), "ab");
        let rest: serde_json::Value = serde_json::from_str(&p.rest).unwrap();
        assert_eq!(rest["model"]["type"], "BPE");
        assert!(rest["model"].get("vocab").is_none());
        assert_eq!(rest["added_tokens"][0]["id"], 3);
    }

    #[test]
    fn wrong_types_stay_in_the_text() {
        let p = read(br#"{"model": {"vocab": [], "merges": []}}"#).unwrap();
        assert!(p.model.is_none());
        assert!(p.rest.contains("\"vocab\":[]"));
    }

    fn err(f: &[u8]) -> (String, String) {
        match read(f) {
            Err(Error::InvalidFile { location, reason }) => (location, reason),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_name_the_place() {
        let (at, why) = err(br#"{"model": {"vocab": {"a": 0, "a": 1}, "merges": []}}"#);
        assert_eq!(at, "$.model.vocab");
        assert!(why.contains("'a' appears twice"), "{why}");
        let (at, why) = err(br#"{"model": {"vocab": {"a": "x"}, "merges": []}}"#);
        assert!(at == "$.model.vocab" && why.contains("has id 'x'"), "{why}");
        let (_, why) = err(br#"{"model": {"vocab": {"a": 2147483648}, "merges": []}}"#);
        assert!(why.contains("has id 2147483648"), "{why}");
        let (at, why) = err(br#"{"model": {"vocab": {}, "merges": ["a b", "a"]}}"#);
        assert!(
            at == "$.model.merges[1]" && why.contains("left right"),
            "{why}"
        );
        let (at, _) = err(br#"{"model": {}, "model": {}}"#);
        assert_eq!(at, "$");
        let (_, why) = err(br#"{"model": {"vocab": {"a": 0"#);
        assert!(
            why.contains("not valid JSON") && why.contains("line 1, column"),
            "{why}"
        );
        let (_, why) = err(b"{\"a\": \"\xff\"}");
        assert!(why.contains("not UTF-8 (byte 7)"), "{why}");
        let (at, _) = err(b"[1]");
        assert_eq!(at, "$");
    }

    #[test]
    fn object_keys_in_order() {
        let keys = object_keys(br#" {"b": [1, {"x": 2}], "a": null}"#).unwrap();
        assert_eq!(keys, Some(vec!["b".to_string(), "a".to_string()]));
        assert_eq!(object_keys(b"[1]").unwrap(), None);
    }
}
