//! Shard readers: one shard's documents, in file order, cut into chunks of
//! whole documents.
//!
//! They accept exactly what the Python readers (`bytepair.distributed.readers`)
//! accept *or fail*: a JSONL line is split at `\n`, must be UTF-8, may start
//! with a byte-order mark on line 1, is skipped when it is only JSON
//! whitespace, and must be one JSON object whose `column` key (the last one if
//! repeated, as Python's `json` keeps) is a string. Anything else (a `NaN`, a
//! lone surrogate escape, a line of other Unicode whitespace, nesting deeper
//! than serde_json's limit) is a failure here even where Python's `json`
//! accepts it, so a caller that falls back to the Python reader on failure
//! gets Python's result in every case.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

#[cfg(feature = "parquet")]
use super::parquet::read_parquet;

/// A build without the `parquet` feature: every Parquet shard goes to the
/// caller's column loader.
#[cfg(not(feature = "parquet"))]
fn read_parquet(
    _path: &Path,
    _column: &str,
    _chunk_bytes: usize,
    _emit: &mut dyn FnMut(Docs) -> bool,
) -> Result<(), Refusal> {
    Err(Refusal::Unsupported(
        "this build has no Rust Parquet reader".into(),
    ))
}

use super::{emit_if_full, Column, ColumnLoader, Docs, Input, Refusal, ValidColumn};

/// Reads `input` and hands its documents to `emit` in chunks of at least
/// `chunk_bytes` bytes of text (the last one may be smaller; a shard with no
/// document emits nothing). `emit` returns false to stop reading.
pub(crate) fn read_shard(
    input: &Input,
    column: &str,
    loader: Option<&dyn ColumnLoader>,
    chunk_bytes: usize,
    emit: &mut dyn FnMut(Docs) -> bool,
) -> Result<(), String> {
    match input {
        Input::Text { path, gzip } => {
            let mut raw = Vec::new();
            open(path, *gzip)?
                .read_to_end(&mut raw)
                .map_err(|e| read_failed(*gzip, None, &e))?;
            let text = String::from_utf8(raw)
                .map_err(|e| format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()))?;
            let ends = vec![text.len()];
            emit(Docs::Owned { text, ends });
            Ok(())
        }
        Input::Jsonl { path, gzip } => {
            let r = BufReader::with_capacity(1 << 20, open(path, *gzip)?);
            read_jsonl(r, *gzip, column, chunk_bytes, emit)
        }
        Input::Columns { path } => {
            // the Rust reader first; what it does not take goes to the loader
            let why = match read_parquet(path, column, chunk_bytes, emit) {
                Ok(()) => return Ok(()),
                Err(Refusal::Failed(why)) => return Err(why),
                Err(Refusal::Unsupported(why)) => why,
            };
            let loader = loader
                .ok_or_else(|| format!("{why}; reading it needs pyarrow (pip install pyarrow)"))?;
            loader.load(path, &mut |col| {
                let col = Arc::new(validate(col)?);
                let n = col.offsets.len().saturating_sub(1);
                let mut first = 0;
                while first < n {
                    let mut last = first + 1;
                    let start = col.offsets[first];
                    while last < n && col.offsets[last] - start < chunk_bytes {
                        last += 1;
                    }
                    let docs = Docs::Column {
                        col: col.clone(),
                        first,
                        last,
                    };
                    if !emit(docs) {
                        return Ok(false);
                    }
                    first = last;
                }
                Ok(true)
            })
        }
    }
}

/// Why reading stopped, in words: a damaged or non-gzip `.gz` file is named
/// as such (with the line reached, when it is not the first).
fn read_failed(gzip: bool, lineno: Option<u64>, e: &std::io::Error) -> String {
    let at = match lineno {
        Some(n) if n > 0 => format!(" after line {n}"),
        _ => String::new(),
    };
    let invalid = matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
    );
    if gzip && invalid && at.is_empty() {
        format!(
            "not a gzip file, or a damaged one ({e}); a name ending in .gz means gzip-compressed"
        )
    } else if gzip && invalid {
        format!("damaged gzip data{at} ({e})")
    } else {
        format!("read failed{at}: {e}")
    }
}

fn open(path: &Path, gzip: bool) -> Result<Box<dyn Read + Send>, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    Ok(if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 20,
            f,
        )))
    } else {
        Box::new(f)
    })
}

/// Checks that every document of `col` is UTF-8 and its offsets are sane;
/// drops the bytes outside the documents.
fn validate(col: Column) -> Result<ValidColumn, String> {
    let Column { offsets, mut data } = col;
    if offsets.is_empty() {
        return Ok(ValidColumn {
            offsets: vec![0],
            text: String::new(),
        });
    }
    let (lo, hi) = (offsets[0], offsets[offsets.len() - 1]);
    if offsets.windows(2).any(|w| w[0] > w[1]) || hi > data.len() {
        return Err("damaged string column (offsets)".into());
    }
    data.truncate(hi);
    data.drain(..lo);
    let text = String::from_utf8(data).map_err(|e| {
        format!(
            "not UTF-8 (byte {} of the column)",
            e.utf8_error().valid_up_to()
        )
    })?;
    let offsets: Vec<usize> = offsets.iter().map(|o| o - lo).collect();
    if offsets.iter().any(|&o| !text.is_char_boundary(o)) {
        return Err("a string of the column is not UTF-8".into());
    }
    Ok(ValidColumn { offsets, text })
}

/// JSON's own whitespace: a line of only these is skipped (as Python's
/// `line.strip()` does; other Unicode whitespace fails here, see the module).
fn is_blank(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

fn read_jsonl(
    mut r: impl BufRead,
    gzip: bool,
    column: &str,
    chunk_bytes: usize,
    emit: &mut dyn FnMut(Docs) -> bool,
) -> Result<(), String> {
    let mut line = Vec::new();
    let mut lineno = 0u64;
    let mut text = String::new();
    let mut ends = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| read_failed(gzip, Some(lineno), &e))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        let mut raw = &line[..];
        if lineno == 1 && raw.starts_with("\u{feff}".as_bytes()) {
            raw = &raw[3..];
        }
        let s = std::str::from_utf8(raw).map_err(|_| format!("line {lineno}: not UTF-8"))?;
        if is_blank(s) {
            continue;
        }
        let at = text.len();
        if let Err(e) = parse_line(s, column, &mut text) {
            text.truncate(at);
            return Err(format!("line {lineno}: {e}"));
        }
        ends.push(text.len());
        if !emit_if_full(&mut text, &mut ends, chunk_bytes, emit) {
            return Ok(());
        }
    }
    if !ends.is_empty() {
        emit(Docs::Owned { text, ends });
    }
    Ok(())
}

/// Appends the `column` string of one JSON object line to `text`.
pub(crate) fn parse_line(line: &str, column: &str, text: &mut String) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(line);
    de::Deserializer::deserialize_map(&mut de, ObjectVisitor { column, text })
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())
}

struct ObjectVisitor<'a> {
    column: &'a str,
    text: &'a mut String,
}

impl<'de> Visitor<'de> for ObjectVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let start = self.text.len();
        // where the (last) value of the column landed; Err: it is not a string
        let mut found: Option<Result<(usize, usize), ()>> = None;
        while let Some(is_column) = map.next_key_seed(KeyIs(self.column))? {
            if is_column {
                let at = self.text.len();
                let is_str = map.next_value_seed(AppendStr(&mut *self.text))?;
                found = Some(if is_str {
                    Ok((at, self.text.len()))
                } else {
                    Err(())
                });
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        match found {
            Some(Ok((a, b))) => {
                if a != start {
                    // a repeated key: the last value counts
                    let last = self.text[a..b].to_owned();
                    self.text.truncate(start);
                    self.text.push_str(&last);
                }
                Ok(())
            }
            Some(Err(())) => Err(de::Error::custom(format!(
                "{:?} is not a string",
                self.column
            ))),
            None => Err(de::Error::custom(format!("no {:?} key", self.column))),
        }
    }
}

/// A map key, compared with the column name without allocating.
struct KeyIs<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == self.0)
    }
}

/// A value: a string is appended to the text (true); anything else is
/// skipped (false).
struct AppendStr<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for AppendStr<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AppendStr<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        self.0.push_str(v);
        Ok(true)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}
