use std::io::Write;
use std::path::Path;

use super::read::parse_line;
use super::write::npy_header;
use super::*;
use crate::core_bpe::CoreBpe;

fn core() -> CoreBpe {
    let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    v.push(b"ab".to_vec());
    v.push(b" c".to_vec());
    CoreBpe::new(v, vec![("<|endoftext|>".into(), 258)], None).unwrap()
}

fn tmpdir(name: &str) -> crate::TestDir {
    crate::TestDir::new(&format!("dataset-{name}"))
}

fn parse(line: &str) -> Result<String, String> {
    let mut s = String::from("x");
    parse_line(line, "text", &mut s).map(|_| s[1..].to_string())
}

#[test]
fn jsonl_line_takes_the_text_key_and_fails_on_the_rest() {
    assert_eq!(parse(r#"{"id": 1, "text": "a\nb"}"#).unwrap(), "a\nb");
    assert_eq!(
        parse(r#"{"text": "\ud83d\ude00 \u00e9", "m": {"text": 1, "l": [1, {"a": null}]}}"#)
            .unwrap(),
        "\u{1f600} \u{e9}"
    );
    // a repeated key: the last one counts, as in Python's json
    assert_eq!(parse(r#"{"text": "one", "text": "two"}"#).unwrap(), "two");
    assert!(parse(r#"{"text": "one", "text": 2}"#).is_err());
    assert!(parse(r#"{"body": "x"}"#)
        .unwrap_err()
        .contains("no \"text\" key"));
    assert!(parse(r#"{"text": 5}"#).is_err());
    assert!(parse(r#"["text"]"#).is_err());
    assert!(parse(r#"{"text": "a"} {}"#).is_err());
    assert!(parse(r#"{"text": "a", "x": NaN}"#).is_err()); // Python accepts: the caller falls back
    assert!(parse(r#"{"text": "\ud800"}"#).is_err()); // a lone surrogate: same
    assert_eq!(parse("  {\"text\": \"\"}\r\n").unwrap(), "");
}

#[test]
fn npy_header_is_numpys() {
    let h = npy_header(Width::U32, 5);
    assert_eq!(h.len(), 128);
    assert_eq!(&h[..10], b"\x93NUMPY\x01\x00v\x00");
    let dict = std::str::from_utf8(&h[10..]).unwrap();
    assert!(dict.starts_with("{'descr': '<u4', 'fortran_order': False, 'shape': (5,), }"));
    assert!(dict.ends_with(" \n"));
    assert!(std::str::from_utf8(&npy_header(Width::U16, u64::MAX)[10..])
        .unwrap()
        .contains("'<u2'"));
}

fn write(path: &Path, data: &[u8]) {
    std::fs::File::create(path)
        .unwrap()
        .write_all(data)
        .unwrap();
}

fn run(
    shards: &[Shard],
    chunk: usize,
    threads: usize,
) -> (Vec<std::result::Result<Done, String>>, Collected) {
    let c = core();
    let pol = c.policy(&[] as &[&str], &[]);
    let mut opts = Options::new("text", Some(threads));
    opts.chunk_bytes = chunk;
    opts.max_inflight_bytes = 3 * chunk;
    opts.eot = Some(258);
    opts.width = Width::U16;
    let mut out: Vec<Option<std::result::Result<Done, String>>> =
        (0..shards.len()).map(|_| None).collect();
    let col = encode_shards(
        &c,
        &pol,
        shards,
        None,
        &opts,
        &mut |i, r| {
            out[i] = Some(r);
            true
        },
        &mut || true,
    )
    .unwrap();
    (out.into_iter().map(Option::unwrap).collect(), col)
}

#[test]
fn pipeline_writes_in_order_and_reports_each_shard() {
    let d = tmpdir("order");
    let mut lines = String::new();
    let mut want: Vec<u16> = Vec::new();
    let c = core();
    for i in 0..300 {
        let t = format!("ab c {i} {}", "x".repeat(i % 17));
        lines.push_str(&format!("{{\"text\": \"{t}\"}}\n"));
        if i % 50 == 0 {
            lines.push('\n'); // blank lines are skipped
        }
        want.extend(c.encode_ordinary(&t).unwrap().iter().map(|&r| r as u16));
        want.push(258);
    }
    write(&d.join("a.jsonl"), lines.as_bytes());
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(lines.as_bytes()).unwrap();
    write(&d.join("b.jsonl.gz"), &gz.finish().unwrap());
    write(
        &d.join("bad.jsonl"),
        b"{\"text\": \"ok\"}\n{\"text\": oops}\n",
    );
    write(&d.join("t.txt"), "ab c\u{e9}".as_bytes());
    let shards = vec![
        Shard {
            input: Input::Jsonl {
                path: d.join("a.jsonl"),
                gzip: false,
            },
            output: Output::Bin(d.join("a.bin")),
        },
        Shard {
            input: Input::Jsonl {
                path: d.join("bad.jsonl"),
                gzip: false,
            },
            output: Output::Bin(d.join("bad.bin")),
        },
        Shard {
            input: Input::Jsonl {
                path: d.join("b.jsonl.gz"),
                gzip: true,
            },
            output: Output::Npy(d.join("b.npy")),
        },
        Shard {
            input: Input::Text {
                path: d.join("t.txt"),
                gzip: false,
            },
            output: Output::Collect,
        },
        Shard {
            input: Input::Text {
                path: d.join("missing.txt"),
                gzip: false,
            },
            output: Output::Bin(d.join("m.bin")),
        },
    ];
    for (chunk, threads) in [(64, 3), (1 << 20, 1)] {
        let (res, col) = run(&shards, chunk, threads);
        let a = res[0].as_ref().unwrap();
        assert_eq!((a.documents, a.tokens), (300, want.len() as u64));
        let bytes = std::fs::read(d.join("a.bin")).unwrap();
        let got: Vec<u16> = bytes
            .chunks(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        assert_eq!(got, want);
        assert!(res[1].as_ref().unwrap_err().contains("line 2"));
        assert!(!d.join("bad.bin").exists());
        let npy = std::fs::read(d.join("b.npy")).unwrap();
        assert_eq!(&npy[..128], &npy_header(Width::U16, want.len() as u64)[..]);
        assert_eq!(&npy[128..], &bytes[..]);
        let t = c.encode_ordinary("ab c\u{e9}").unwrap();
        assert_eq!(col.ids, [t.clone(), vec![258]].concat());
        assert_eq!(col.offsets, vec![0, t.len() as i64 + 1]);
        assert!(res[4].is_err());
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty());
    }
}

#[test]
fn stopping_early_leaves_no_temporary_file() {
    let d = tmpdir("stop");
    let doc = "{\"text\": \"ab ab ab c\"}\n".repeat(2000);
    let mut shards = Vec::new();
    for i in 0..6 {
        write(&d.join(format!("{i}.jsonl")), doc.as_bytes());
        shards.push(Shard {
            input: Input::Jsonl {
                path: d.join(format!("{i}.jsonl")),
                gzip: false,
            },
            output: Output::Bin(d.join(format!("{i}.bin"))),
        });
    }
    let c = core();
    let pol = c.policy(&[] as &[&str], &[]);
    let mut opts = Options::new("text", Some(2));
    opts.chunk_bytes = 1000;
    opts.max_inflight_bytes = 4000;
    let mut seen = 0;
    encode_shards(
        &c,
        &pol,
        &shards,
        None,
        &opts,
        &mut |_, r| {
            assert!(r.is_ok());
            seen += 1;
            seen < 2
        },
        &mut || true,
    )
    .unwrap();
    assert_eq!(seen, 2);
    let names: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".jsonl"))
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, vec!["0.bin", "1.bin"]);
}

#[cfg(feature = "parquet")]
mod parquet_files {
    use std::sync::Arc;

    use ::parquet::basic::{Compression, GzipLevel};
    use ::parquet::column::writer::ColumnWriter;
    use ::parquet::data_type::ByteArray;
    use ::parquet::file::metadata::KeyValue;
    use ::parquet::file::properties::{WriterProperties, WriterVersion};
    use ::parquet::file::writer::SerializedFileWriter;
    use ::parquet::schema::parser::parse_message_type;

    use base64::Engine;

    use super::super::parquet::{arrow_field_kind, read_parquet, ArrowKind};
    use super::super::Refusal;
    use super::*;

    /// pyarrow 26's `ARROW:schema` of `{"text": string}`.
    const ARROW_STRING: &str = "/////3AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAUAAAAEAAUAAgABgAHAAwAAAAQABAAAAAAAAEFEAAAABwAAAAEAAAAAAAAAAQAAAB0ZXh0AAAAAAQABAAEAAAA";

    /// Writes `groups` row groups of (`text`, `id`) rows; `None` is a null text.
    fn write_file(
        path: &Path,
        schema: &str,
        groups: &[Vec<Option<&[u8]>>],
        codec: Compression,
        v2: bool,
        arrow: Option<&str>,
    ) {
        let schema = Arc::new(parse_message_type(schema).unwrap());
        let kv = arrow.map(|a| vec![KeyValue::new("ARROW:schema".into(), a.to_string())]);
        let props = WriterProperties::builder()
            .set_compression(codec)
            .set_data_page_size_limit(64)
            .set_dictionary_enabled(!v2)
            .set_writer_version(if v2 {
                WriterVersion::PARQUET_2_0
            } else {
                WriterVersion::PARQUET_1_0
            })
            .set_key_value_metadata(kv)
            .build();
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, Arc::new(props)).unwrap();
        for rows in groups {
            let mut g = w.next_row_group().unwrap();
            while let Some(mut col) = g.next_column().unwrap() {
                match col.untyped() {
                    ColumnWriter::ByteArrayColumnWriter(w) => {
                        let optional = w.get_descriptor().max_def_level() > 0;
                        let values: Vec<ByteArray> = rows
                            .iter()
                            .flatten()
                            .map(|v| ByteArray::from(v.to_vec()))
                            .collect();
                        let defs: Vec<i16> = rows.iter().map(|r| r.is_some() as i16).collect();
                        w.write_batch(&values, optional.then_some(&defs[..]), None)
                            .unwrap();
                    }
                    ColumnWriter::Int64ColumnWriter(w) => {
                        let ids: Vec<i64> = (0..rows.len() as i64).collect();
                        w.write_batch(&ids, None, None).unwrap();
                    }
                    _ => unreachable!(),
                }
                col.close().unwrap();
            }
            g.close().unwrap();
        }
        w.close().unwrap();
    }

    const SCHEMA: &str = "message m { REQUIRED INT64 id; OPTIONAL BYTE_ARRAY text (UTF8); }";

    fn read(path: &Path, column: &str, chunk: usize) -> Result<Vec<Vec<String>>, Refusal> {
        let mut chunks = Vec::new();
        read_parquet(path, column, chunk, &mut |docs| {
            chunks.push((0..docs.len()).map(|i| docs.get(i).to_string()).collect());
            true
        })?;
        Ok(chunks)
    }

    #[test]
    fn every_row_of_every_group_in_order_in_jsonl_sized_chunks() {
        let d = tmpdir("pq-read");
        let docs: Vec<String> = (0..300)
            .map(|i| match i % 7 {
                0 => String::new(),
                1 => "caf\u{e9} \u{1f600}".repeat(i % 5),
                _ => format!("document {i} ").repeat(i % 11),
            })
            .collect();
        let groups: Vec<Vec<Option<&[u8]>>> = docs
            .chunks(70)
            .map(|g| g.iter().map(|s| Some(s.as_bytes())).collect())
            .collect();
        let codecs = [
            (Compression::SNAPPY, false),
            (Compression::GZIP(GzipLevel::default()), true),
            (Compression::UNCOMPRESSED, true),
            (Compression::UNCOMPRESSED, false),
        ];
        for (k, (codec, v2)) in codecs.into_iter().enumerate() {
            let p = d.join(format!("f{k}.parquet"));
            write_file(&p, SCHEMA, &groups, codec, v2, None);
            let required = d.join(format!("r{k}.parquet"));
            let schema = "message m { REQUIRED BYTE_ARRAY text (STRING); }";
            let arrow = Some(ARROW_STRING).filter(|_| k != 1);
            write_file(&required, schema, &groups, codec, v2, arrow);
            for path in [&p, &required] {
                // one chunk of everything, and chunks of >= 500 bytes
                assert_eq!(read(path, "text", usize::MAX).unwrap(), vec![docs.clone()]);
                let chunks = read(path, "text", 500).unwrap();
                assert!(chunks.len() > 5);
                for c in &chunks[..chunks.len() - 1] {
                    assert!(c.iter().map(|s| s.len()).sum::<usize>() >= 500);
                }
                assert_eq!(chunks.concat(), docs);
            }
        }
        // stopping: no more chunks asked for
        let mut n = 0;
        read_parquet(&d.join("f0.parquet"), "text", 1, &mut |_| {
            n += 1;
            false
        })
        .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn refusals_before_reading_and_failures_while_reading() {
        let d = tmpdir("pq-bad");
        let ok: Vec<Option<&[u8]>> = vec![Some(b"a"), Some(b"b")];
        let one = std::slice::from_ref(&ok);
        let p = d.join("ok.parquet");
        write_file(&p, SCHEMA, one, Compression::SNAPPY, false, None);
        let unsupported = |r: Result<Vec<Vec<String>>, Refusal>| match r {
            Err(Refusal::Unsupported(why)) => why,
            other => panic!("not refused: {other:?}"),
        };
        let failed = |r: Result<Vec<Vec<String>>, Refusal>| match r {
            Err(Refusal::Failed(why)) => why,
            other => panic!("not failed: {other:?}"),
        };
        assert!(unsupported(read(&p, "body", 1)).contains("no column \"body\""));
        assert!(unsupported(read(&p, "id", 1)).contains("not a UTF-8 BYTE_ARRAY"));
        assert!(unsupported(read(&d.join("missing.parquet"), "text", 1)).contains("cannot open"));
        let raw = std::fs::read(&p).unwrap();
        for (name, bytes) in [
            ("half", &raw[..raw.len() / 2]),
            ("garbage", &b"PAR1 nothing here PAR1"[..]),
            ("empty", &b""[..]),
        ] {
            let q = d.join(name);
            std::fs::write(&q, bytes).unwrap();
            unsupported(read(&q, "text", 1));
        }
        let bin = d.join("bin.parquet");
        let schema = "message m { OPTIONAL BYTE_ARRAY text; }";
        write_file(&bin, schema, one, Compression::SNAPPY, false, None);
        unsupported(read(&bin, "text", 1));
        let nested = d.join("nested.parquet");
        let schema = "message m { OPTIONAL group text { OPTIONAL BYTE_ARRAY text (UTF8); } }";
        write_file(&nested, schema, one, Compression::SNAPPY, false, None);
        assert!(unsupported(read(&nested, "text", 1)).contains("nested"));
        // an Arrow schema that is not string, or not parseable
        let view = ARROW_STRING.replace("AAEFEAAAAB", "AAEYEAAAAB");
        for arrow in [&view[..], "bm90IGFuIGFycm93IHNjaGVtYQ==", "%%%"] {
            let q = d.join("arrow.parquet");
            let schema = "message m { OPTIONAL BYTE_ARRAY text (UTF8); }";
            write_file(&q, schema, one, Compression::SNAPPY, false, Some(arrow));
            unsupported(read(&q, "text", 1));
        }
        // a null in the second row group, after a chunk went out: skipped
        let null = d.join("null.parquet");
        let second: Vec<Option<&[u8]>> = vec![Some(b"c"), None, Some(b"d")];
        write_file(
            &null,
            SCHEMA,
            &[ok.clone(), second],
            Compression::SNAPPY,
            false,
            None,
        );
        let flat: Vec<String> = read(&null, "text", 1).unwrap().concat();
        let want: Vec<String> = ok
            .iter()
            .chain([Some(&b"c"[..]), Some(&b"d"[..])].iter())
            .map(|v| String::from_utf8(v.unwrap().to_vec()).unwrap())
            .collect();
        assert_eq!(flat, want);
        let bad = d.join("utf8.parquet");
        let rows: Vec<Option<&[u8]>> = vec![Some(b"ok"), None, Some(b"\xff\xfe")];
        write_file(
            &bad,
            SCHEMA,
            &[rows],
            Compression::UNCOMPRESSED,
            false,
            None,
        );
        assert!(failed(read(&bad, "text", 1)).contains("row 2: not UTF-8"));
        // damaged page data, footer intact: a failure or different bytes, never a panic
        let mut raw = std::fs::read(&bad).unwrap();
        for b in &mut raw[4..40] {
            *b = 0xff;
        }
        let q = d.join("damaged.parquet");
        std::fs::write(&q, &raw).unwrap();
        assert!(read(&q, "text", 1).is_err());
    }

    #[test]
    fn arrow_schema_of_pyarrow_is_read() {
        // pyarrow 26: {"meta": struct, "id": int64, "text": string}
        let mixed = "/////wgBAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAMAAABgAAAAMAAAAAQAAAB8////AAABBRAAAAAYAAAABAAAAAAAAAAEAAAAdGV4dAAAAACo////pP///wAAAQIQAAAAFAAAAAQAAAAAAAAAAgAAAGlkAACU////AAAAAUAAAADQ////AAABDRQAAAAgAAAABAAAAAEAAAAoAAAABAAAAG1ldGEAAAAABAAEAAQAAAAQABQACAAGAAcADAAAABAAEAAAAAAAAQIQAAAAHAAAAAQAAAAAAAAAAQAAAGEAAAAIAAwACAAHAAgAAAAAAAABQAAAAAAAAAA=";
        assert_eq!(arrow_field_kind(mixed, 2, 3, "text"), Some(ArrowKind::Utf8));
        assert_eq!(arrow_field_kind(mixed, 1, 3, "id"), Some(ArrowKind::Other));
        assert_eq!(
            arrow_field_kind(mixed, 0, 3, "meta"),
            Some(ArrowKind::Other)
        );
        assert_eq!(arrow_field_kind(mixed, 2, 2, "text"), None); // field count differs
        assert_eq!(arrow_field_kind(mixed, 1, 3, "text"), None); // name differs
        assert_eq!(
            arrow_field_kind(ARROW_STRING, 0, 1, "text"),
            Some(ArrowKind::Utf8)
        );
        let large = "/////3AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAUAAAAEAAUAAgABgAHAAwAAAAQABAAAAAAAAEUEAAAABwAAAAEAAAAAAAAAAQAAAB0ZXh0AAAAAAQABAAEAAAA";
        assert_eq!(arrow_field_kind(large, 0, 1, "text"), Some(ArrowKind::Utf8));
        let dict = "/////5AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAEAAAAuP///wQAAAABAAAAFAAAABAAGAAIAAYABwAMABAAFAAQAAAAAAABBRQAAABEAAAAIAAAAAQAAAAAAAAABAAAAHRleHQAAAAACAAIAAAABAAIAAAADAAAAAgADAAIAAcACAAAAAAAAAEgAAAABAAEAAQAAAA=";
        assert_eq!(arrow_field_kind(dict, 0, 1, "text"), Some(ArrowKind::Utf8));
        let binary = "/////3AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAUAAAAEAAUAAgABgAHAAwAAAAQABAAAAAAAAEEEAAAABwAAAAEAAAAAAAAAAQAAAB0ZXh0AAAAAAQABAAEAAAA";
        assert_eq!(
            arrow_field_kind(binary, 0, 1, "text"),
            Some(ArrowKind::Other)
        );
        let view = "/////3AAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAUAAAAEAAUAAgABgAHAAwAAAAQABAAAAAAAAEYEAAAABwAAAAEAAAAAAAAAAQAAAB0ZXh0AAAAAAQABAAEAAAA";
        assert_eq!(arrow_field_kind(view, 0, 1, "text"), Some(ArrowKind::Other));
        // pa.json_(pa.string()): an extension type stored as a string
        let json = "//////gAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAEAAAAYAAAAAAASABgACAAGAAcADAAAABAAFAASAAAAAAABBRQAAACgAAAACAAAABQAAAAAAAAABAAAAHRleHQAAAAAAgAAAEgAAAAEAAAAyP///xgAAAAEAAAACgAAAGFycm93Lmpzb24AABQAAABBUlJPVzpleHRlbnNpb246bmFtZQAAAAAIAAwABAAIAAgAAAAQAAAABAAAAAAAAAAAAAAAGAAAAEFSUk9XOmV4dGVuc2lvbjptZXRhZGF0YQAAAAAEAAQABAAAAA==";
        assert_eq!(arrow_field_kind(json, 0, 1, "text"), Some(ArrowKind::Other));
        // cut short anywhere: never a panic
        let raw = base64::engine::general_purpose::STANDARD
            .decode(mixed)
            .unwrap();
        for n in 0..raw.len() {
            let cut = base64::engine::general_purpose::STANDARD.encode(&raw[..n]);
            let _ = arrow_field_kind(&cut, 2, 3, "text");
        }
    }
}
