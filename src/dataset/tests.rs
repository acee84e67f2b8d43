use std::io::Write;
use std::path::{Path, PathBuf};

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

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bytepair-dataset-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    let _ = std::fs::remove_dir_all(&d);
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
    let _ = std::fs::remove_dir_all(&d);
}
