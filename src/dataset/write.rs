//! Output files: ids written little-endian from the flat buffers into a
//! temporary file in the destination folder, which is fsynced and renamed onto
//! the final name only when the shard is complete. On any failure, and when a
//! writer is dropped unfinished, the temporary file is removed: a full disk
//! leaves no partial output.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Width;
use crate::Rank;

/// Bytes of the `.npy` header for a one-dimensional array: numpy pads the
/// header so that the data starts at a multiple of 64 and the shape can grow
/// to 21 digits, which for `{'descr': '<u4', 'fortran_order': False, 'shape':
/// (N,), }` is always 128.
const NPY_HEADER: usize = 128;

/// The `.npy` (format 1.0) header `numpy.save` writes for `n` values.
pub(crate) fn npy_header(width: Width, n: u64) -> [u8; NPY_HEADER] {
    let descr = match width {
        Width::U16 => "<u2",
        Width::U32 => "<u4",
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({n},), }}");
    let mut out = [b' '; NPY_HEADER];
    out[..6].copy_from_slice(b"\x93NUMPY");
    out[6] = 1;
    out[7] = 0;
    let len = (NPY_HEADER - 10) as u16;
    out[8..10].copy_from_slice(&len.to_le_bytes());
    out[10..10 + dict.len()].copy_from_slice(dict.as_bytes());
    out[NPY_HEADER - 1] = b'\n';
    out
}

/// One output file being written.
pub(crate) struct OutFile {
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<File>,
    npy: bool,
    width: Width,
    values: u64,
    buf: Vec<u8>,
}

fn temp_name(dest: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = dest.parent().unwrap_or(Path::new("."));
    dir.join(format!(".bytepair-{}-{n}.tmp", std::process::id()))
}

impl OutFile {
    /// Creates the temporary file next to `dest`.
    pub(crate) fn create(dest: &Path, npy: bool, width: Width) -> std::io::Result<Self> {
        loop {
            let tmp = temp_name(dest);
            let mut opts = OpenOptions::new();
            opts.write(true).create_new(true);
            // owner-only, like the Python writer's tempfile.mkstemp
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
            match opts.open(&tmp) {
                Ok(file) => {
                    let mut out = OutFile {
                        tmp,
                        dest: dest.to_path_buf(),
                        file: Some(file),
                        npy,
                        width,
                        values: 0,
                        buf: Vec::new(),
                    };
                    if npy {
                        // room for the header, written when the length is known
                        out.write_raw(&[0u8; NPY_HEADER])?;
                    }
                    return Ok(out);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn write_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.write_all(bytes),
            None => Err(std::io::Error::other("output file already closed")),
        }
    }

    /// Appends ids (each fits the width: the caller picks the width from the
    /// vocabulary size).
    pub(crate) fn write_ids(&mut self, ids: &[Rank]) -> std::io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        match self.width {
            Width::U16 => {
                buf.reserve(ids.len() * 2);
                for &id in ids {
                    buf.extend_from_slice(&(id as u16).to_le_bytes());
                }
            }
            Width::U32 => {
                buf.reserve(ids.len() * 4);
                for &id in ids {
                    buf.extend_from_slice(&id.to_le_bytes());
                }
            }
        }
        let r = self.write_raw(&buf);
        self.buf = buf;
        self.values += ids.len() as u64;
        r
    }

    /// Completes the file (header, fsync) and renames it onto its name.
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        let header = self.npy.then(|| npy_header(self.width, self.values));
        let Some(mut file) = self.file.take() else {
            return Err(std::io::Error::other("output file already closed"));
        };
        let done = (|| {
            if let Some(h) = header {
                file.seek(SeekFrom::Start(0))?;
                file.write_all(&h)?;
            }
            file.sync_all()?;
            drop(file);
            std::fs::rename(&self.tmp, &self.dest)
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        done
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        // still open: not finished (failed or abandoned)
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
