//! Parquet shards read in Rust: the string column `column` of a file, row
//! group by row group, with the low-level column reader of the `parquet`
//! crate (no Arrow), cut into chunks of whole documents as the JSONL reader
//! cuts its lines.
//!
//! The reader takes only what it can read exactly as pyarrow does (the Python
//! loader, `bytepair.distributed.native.parquet_columns`): a top-level,
//! non-repeated `BYTE_ARRAY` column annotated as a UTF-8 string, compressed
//! with snappy, gzip or nothing, whose Arrow schema (the `ARROW:schema` key
//! pyarrow stores) says `string` or `large_string`, dictionary-encoded or not,
//! with no extension type. Anything else (other codecs, a binary or nested
//! column, a missing column, an unreadable footer, an Arrow schema it cannot
//! parse) is [`Refusal::Unsupported`], found from the footer before any
//! document is handed on: the caller then gives the shard to the Python
//! loader, which reads it or reports why not. A failure found while reading
//! (a string that is not UTF-8, damaged pages) is
//! [`Refusal::Failed`], a shard failure like a broken JSONL line. Panics of
//! the crate on damaged input are caught and are failures too.
//!
//! A null row is no document and is skipped, as every reader skips it.
//!
//! Memory: one page of the column (as the crate reads it) and its row
//! group's dictionary page, if any, plus one batch of [`BATCH_ROWS`] values
//! and the chunk being filled.

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use base64::Engine;
use parquet::basic::{Compression, ConvertedType, LogicalType, Type as PhysicalType};
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::{emit_if_full, Docs, Refusal};

/// Values read from the column reader at a time.
pub(crate) const BATCH_ROWS: usize = 8192;

/// Reads `column` of the Parquet file at `path`, handing its documents to
/// `emit` in chunks of at least `chunk_bytes` bytes of text (the last one may
/// be smaller); `emit` returns false to stop reading.
pub(crate) fn read_parquet(
    path: &Path,
    column: &str,
    chunk_bytes: usize,
    emit: &mut dyn FnMut(Docs) -> bool,
) -> Result<(), Refusal> {
    let file = File::open(path).map_err(|e| Refusal::Unsupported(format!("cannot open: {e}")))?;
    // the crate may panic on damaged input: that is this shard's failure
    let mut emitted = false;
    let run = catch_unwind(AssertUnwindSafe(|| {
        read_file(file, column, chunk_bytes, &mut |docs| {
            emitted = true;
            emit(docs)
        })
    }));
    match run {
        Ok(r) => r,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let why = format!("the Parquet reader panicked ({what})");
            Err(if emitted {
                Refusal::Failed(why)
            } else {
                Refusal::Unsupported(why)
            })
        }
    }
}

fn read_file(
    file: File,
    column: &str,
    chunk_bytes: usize,
    emit: &mut dyn FnMut(Docs) -> bool,
) -> Result<(), Refusal> {
    let unsupported = |e: String| Refusal::Unsupported(e);
    let reader = SerializedFileReader::new(file)
        .map_err(|e| unsupported(format!("not a Parquet file the Rust reader takes ({e})")))?;
    let leaf = text_leaf(reader.metadata(), column).map_err(unsupported)?;
    let meta = reader.metadata();
    let mut text = String::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut values: Vec<ByteArray> = Vec::with_capacity(BATCH_ROWS);
    let mut defs: Vec<i16> = Vec::with_capacity(BATCH_ROWS);
    let mut row: u64 = 0;
    for g in 0..meta.num_row_groups() {
        let failed = |e: String| Refusal::Failed(format!("row group {g}: {e}"));
        let group = reader.get_row_group(g).map_err(|e| failed(e.to_string()))?;
        let expected = u64::try_from(meta.row_group(g).num_rows())
            .map_err(|_| failed("negative row count".into()))?;
        let mut col = match group.get_column_reader(leaf) {
            Ok(ColumnReader::ByteArrayColumnReader(r)) => r,
            Ok(_) => return Err(failed("not a BYTE_ARRAY column".into())),
            Err(e) => return Err(failed(e.to_string())),
        };
        let optional = meta
            .file_metadata()
            .schema_descr()
            .column(leaf)
            .max_def_level()
            > 0;
        let mut in_group: u64 = 0;
        loop {
            values.clear();
            defs.clear();
            let (rows, n_values, _) = col
                .read_records(
                    BATCH_ROWS,
                    if optional { Some(&mut defs) } else { None },
                    None,
                    &mut values,
                )
                .map_err(|e| failed(format!("near row {row}: {e}")))?;
            if rows == 0 {
                break;
            }
            // a null row is no document: skipped (its definition level is 0)
            let mut values = values.iter();
            for k in 0..rows {
                if n_values != rows && defs.get(k) == Some(&0) {
                    row += 1;
                    continue;
                }
                let Some(v) = values.next() else {
                    return Err(failed(format!("row {row}: fewer values than rows")));
                };
                let s = std::str::from_utf8(v.data())
                    .map_err(|_| failed(format!("row {row}: not UTF-8")))?;
                text.push_str(s);
                ends.push(text.len());
                row += 1;
                if !emit_if_full(&mut text, &mut ends, chunk_bytes, emit) {
                    return Ok(());
                }
            }
            in_group += rows as u64;
        }
        if in_group != expected {
            return Err(failed(format!(
                "{in_group} rows read of the {expected} the footer states"
            )));
        }
    }
    if !ends.is_empty() {
        emit(Docs::Owned { text, ends });
    }
    Ok(())
}

/// The leaf index of the text column, if the file is one this reader takes
/// (see the module doc); otherwise why not.
fn text_leaf(meta: &ParquetMetaData, column: &str) -> Result<usize, String> {
    let schema = meta.file_metadata().schema_descr();
    let roots = schema.root_schema().get_fields();
    let mut at = roots.iter().enumerate().filter(|(_, f)| f.name() == column);
    let root = match (at.next(), at.next()) {
        (Some((i, _)), None) => i,
        (None, _) => return Err(format!("no column {column:?}")),
        _ => return Err(format!("more than one column {column:?}")),
    };
    let leaves: Vec<usize> = (0..schema.num_columns())
        .filter(|&l| schema.get_column_root_idx(l) == root)
        .collect();
    let leaf = match leaves[..] {
        [l] if roots[root].is_primitive() => l,
        _ => return Err(format!("column {column:?} is nested")),
    };
    let desc = schema.column(leaf);
    let utf8 = match desc.logical_type_ref() {
        Some(t) => *t == LogicalType::String,
        None => desc.converted_type() == ConvertedType::UTF8,
    };
    if desc.physical_type() != PhysicalType::BYTE_ARRAY || !utf8 {
        return Err(format!(
            "column {column:?} is not a UTF-8 BYTE_ARRAY column"
        ));
    }
    if desc.max_rep_level() != 0 || desc.max_def_level() > 1 {
        return Err(format!("column {column:?} is repeated"));
    }
    for g in meta.row_groups() {
        let codec = g.column(leaf).compression();
        if !matches!(
            codec,
            Compression::UNCOMPRESSED | Compression::SNAPPY | Compression::GZIP(_)
        ) {
            return Err(format!("codec {codec} not built in"));
        }
    }
    let arrow = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|kv| kv.key == "ARROW:schema"));
    if let Some(kv) = arrow {
        let encoded = kv.value.as_deref().unwrap_or("");
        match arrow_field_kind(encoded, root, roots.len(), column) {
            Some(ArrowKind::Utf8) => {}
            Some(ArrowKind::Other) => {
                return Err(format!("the Arrow type of {column:?} is not string"))
            }
            None => return Err("an Arrow schema this reader cannot check".into()),
        }
    }
    Ok(leaf)
}

/// What the stored Arrow schema says of a field.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ArrowKind {
    /// `string` or `large_string` (perhaps dictionary-encoded), no extension.
    Utf8,
    Other,
}

/// Union tags of the Arrow `Type` and `MessageHeader` (format/Schema.fbs,
/// format/Message.fbs).
const TYPE_UTF8: u8 = 5;
const TYPE_LARGE_UTF8: u8 = 20;
const HEADER_SCHEMA: u8 = 1;

/// Reads field `index` of the IPC-serialised Arrow schema `encoded` (base64,
/// as pyarrow stores it), which must have `n_fields` top-level fields and
/// name the field `name`, as pyarrow matches them. None: not parseable.
pub(super) fn arrow_field_kind(
    encoded: &str,
    index: usize,
    n_fields: usize,
    name: &str,
) -> Option<ArrowKind> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let buf = if bytes.len() > 8 && bytes[..4] == [0xff; 4] {
        &bytes[8..]
    } else {
        &bytes[..]
    };
    let fb = Flat(buf);
    let message = fb.root()?;
    if fb.u8_field(message, 1)? != HEADER_SCHEMA {
        return None;
    }
    let schema = fb.table_field(message, 2)?;
    let fields = fb.vector_field(schema, 1)?;
    if fields.1 != n_fields {
        return None;
    }
    let field = fb.table_at(fields.0.checked_add(index.checked_mul(4)?)?)?;
    if fb.string_field(field, 0)? != name.as_bytes() {
        return None;
    }
    let kind = fb.u8_field(field, 2)?;
    // custom metadata: an extension type is named there
    if let Some((start, n)) = fb.vector_field(field, 6) {
        for k in 0..n {
            let kv = fb.table_at(start.checked_add(k.checked_mul(4)?)?)?;
            if fb.string_field(kv, 0)? == b"ARROW:extension:name" {
                return Some(ArrowKind::Other);
            }
        }
    }
    Some(if kind == TYPE_UTF8 || kind == TYPE_LARGE_UTF8 {
        ArrowKind::Utf8
    } else {
        ArrowKind::Other
    })
}

/// A bounds-checked reader of the few flatbuffer constructs the Arrow schema
/// uses: tables, strings, vectors of tables, scalar fields.
struct Flat<'a>(&'a [u8]);

impl Flat<'_> {
    fn u32_at(&self, at: usize) -> Option<u32> {
        let b = self.0.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16_at(&self, at: usize) -> Option<u16> {
        let b = self.0.get(at..at.checked_add(2)?)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    /// The position an offset stored at `at` points to.
    fn follow(&self, at: usize) -> Option<usize> {
        at.checked_add(self.u32_at(at)? as usize)
    }

    fn root(&self) -> Option<usize> {
        self.follow(0)
    }

    /// The table whose offset is stored at `at` (a vector element).
    fn table_at(&self, at: usize) -> Option<usize> {
        self.follow(at)
    }

    /// Where field `i` of the table at `t` is stored; None when absent.
    fn field(&self, t: usize, i: usize) -> Option<usize> {
        let soffset = self.u32_at(t)? as i32 as i64;
        let vtable = usize::try_from(t as i64 - soffset).ok()?;
        let len = self.u16_at(vtable)? as usize;
        let slot = 4 + 2 * i;
        if slot + 2 > len {
            return None;
        }
        match self.u16_at(vtable.checked_add(slot)?)? {
            0 => None,
            off => t.checked_add(off as usize),
        }
    }

    fn u8_field(&self, t: usize, i: usize) -> Option<u8> {
        // an absent scalar has its default, 0 (NONE) for union tags
        match self.field(t, i) {
            Some(at) => self.0.get(at).copied(),
            None => Some(0),
        }
    }

    fn table_field(&self, t: usize, i: usize) -> Option<usize> {
        self.follow(self.field(t, i)?)
    }

    /// (first element position, length) of a vector of 4-byte elements.
    fn vector_field(&self, t: usize, i: usize) -> Option<(usize, usize)> {
        let v = self.follow(self.field(t, i)?)?;
        let n = self.u32_at(v)? as usize;
        let start = v.checked_add(4)?;
        self.0.get(start..start.checked_add(n.checked_mul(4)?)?)?;
        Some((start, n))
    }

    fn string_field(&self, t: usize, i: usize) -> Option<&[u8]> {
        let s = self.follow(self.field(t, i)?)?;
        let n = self.u32_at(s)? as usize;
        let start = s.checked_add(4)?;
        self.0.get(start..start.checked_add(n)?)
    }
}
