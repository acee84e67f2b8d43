//! Counting dataset shards ([`ChunkCounter::feed_shard`]): plain text files
//! in parallel ranges ([`super::ranges`]); JSONL (one document per line, the
//! string under a key), gzip-compressed text and Parquet string columns
//! through the dataset readers of [`crate::dataset`], which hand over whole
//! documents in chunks of [`SHARD_CHUNK`] bytes, each counted in parallel.

use super::{ChunkCounter, Control};
use crate::dataset::{read_shard, ColumnLoader, Input};
use crate::error::{Error, Result};

/// Bytes of documents the shard readers gather before they are counted.
pub const SHARD_CHUNK: usize = 8 << 20;

impl ChunkCounter {
    /// Counts the documents of one shard, in file order (a plain text file is
    /// one document). `column`: the JSONL key or Parquet column with the text.
    /// A shard that cannot be read (not UTF-8, a bad JSON line, a missing
    /// column, a Parquet file neither the Rust reader nor `loader` reads) is an
    /// error naming the shard and why. `loader` reads the Parquet files the
    /// Rust reader refuses before reading any of them (another codec).
    ///
    /// Complexity: linear in the shard; memory about [`SHARD_CHUNK`] of text
    /// plus the reader's buffers.
    pub fn feed_shard(
        &mut self,
        input: &Input,
        column: &str,
        loader: Option<&dyn ColumnLoader>,
        ctl: &Control,
    ) -> Result<()> {
        if let Input::Text { path, gzip: false } = input {
            return self.feed_file(path, ctl);
        }
        let mut failure: Option<Error> = None;
        let read = read_shard(input, column, loader, SHARD_CHUNK, &mut |docs| {
            let v: Vec<&str> = (0..docs.len()).map(|i| docs.get(i)).collect();
            match self.feed_documents(&v, ctl) {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        read.map_err(|why| Error::Io {
            path: input.path().display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::Pretokenizer;
    use crate::train::count_documents;

    #[test]
    fn jsonl_shard_counts_its_documents_and_names_a_bad_one() {
        let dir = crate::TestDir::new("shards");
        let good = dir.join("a.jsonl");
        std::fs::write(
            &good,
            "{\"text\": \"one two\"}\n\n{\"text\": \"two three\", \"x\": 1}\n",
        )
        .unwrap();
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        let want =
            count_documents(p.clone(), &[], None, &["one two", "two three"], Some(1), 64).unwrap();
        let mut c = ChunkCounter::new(p.clone(), &[], None, 64).unwrap();
        let input = Input::Jsonl {
            path: good,
            gzip: false,
        };
        c.feed_shard(&input, "text", None, &Control::default())
            .unwrap();
        assert_eq!(c.finish().unwrap(), want);
        let bad = dir.join("b.jsonl");
        std::fs::write(&bad, "{\"text\": \"ok\"}\n{\"body\": \"no text key\"}\n").unwrap();
        let mut c = ChunkCounter::new(p, &[], None, 64).unwrap();
        let input = Input::Jsonl {
            path: bad,
            gzip: false,
        };
        let err = c
            .feed_shard(&input, "text", None, &Control::default())
            .unwrap_err();
        assert!(err.to_string().contains("b.jsonl"), "{err}");
    }
}
