//! Walking a data folder: every regular file under it, in the order
//! Python's `sorted()` of the full paths gives (the order
//! `bytepair.shards.paths` documents), one folder's listing held at a time.
//!
//! One folder's entries are sorted by name, a folder's name followed by `/`
//! (its files' paths continue it), and each folder is listed where it sorts,
//! when it is reached. Names starting with `.` are skipped; so are pipes,
//! sockets and devices (a reader could wait on them forever). A link is
//! followed to a file; a folder reached through a link is not entered, as
//! `os.walk` does not. A folder that cannot be listed is skipped, as
//! `os.walk` skips it. The type comes from the listing: no file is looked up
//! one by one, except a link.
//!
//! Each folder is held open while its files are walked, so a file is opened
//! relative to it (`openat`: one name looked up, not the whole path).

use std::cmp::Ordering;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A folder being walked: its path and, when it could be opened, a handle
/// that its files are opened relative to.
#[derive(Debug)]
pub struct Folder {
    path: PathBuf,
    handle: Option<File>,
    /// The device its handle is on.
    device: Option<u64>,
}

/// One file found by a [`Walk`].
#[derive(Debug)]
pub struct Found {
    folder: Arc<Folder>,
    name: OsString,
    /// The inode the listing gave (that of the file a link names, for a link).
    pub inode: u64,
    /// The device of the file a link names (`None`: its folder's).
    device: Option<u64>,
}

impl Found {
    /// The file's path: its folder's path joined with its name.
    pub fn path(&self) -> PathBuf {
        self.folder.path.join(&self.name)
    }

    /// `(device, inode)` from the listing (a link's from the file it
    /// names), when its folder's device is known.
    pub fn key(&self) -> Option<(u64, u64)> {
        Some((self.device.or(self.folder.device)?, self.inode))
    }

    /// Its name inside its folder.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// Opens the file for reading, relative to its folder, without blocking
    /// on a pipe (the caller checks the type before reading).
    pub fn open(&self) -> std::io::Result<File> {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.folder.handle {
            return open_at(dir, &self.name);
        }
        open(&self.path())
    }
}

/// Opens a file for reading without blocking on a pipe (Linux); the caller
/// checks the type before reading.
pub(crate) fn open(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    opts.open(path)
}

/// `openat(dir, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // two libc calls, see the SAFETY comments
fn open_at(dir: &File, name: &OsStr) -> std::io::Result<File> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open descriptor for the whole call and `name` a
    // NUL-terminated string that outlives it.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by `openat`, is open and owned by
    // nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// One entry of a folder's listing.
struct Entry {
    name: OsString,
    /// `None` for a folder, the inode for a file.
    inode: Option<u64>,
    /// A link's: the device of the file it names.
    device: Option<u64>,
}

/// A folder's sorted entries and how many were walked.
struct Listing {
    folder: Arc<Folder>,
    entries: Vec<Entry>,
    next: usize,
}

/// The regular files under a folder, in order (see the module docs).
pub struct Walk {
    stack: Vec<Listing>,
    found: u64,
}

impl Walk {
    /// Starts walking the folder `top` (a folder that cannot be listed has
    /// no files).
    pub fn new(top: &Path) -> Walk {
        Walk {
            stack: list(top).into_iter().collect(),
            found: 0,
        }
    }

    /// The files found so far.
    pub fn found(&self) -> u64 {
        self.found
    }

    /// The next file, or `None` past the last.
    pub fn next_file(&mut self) -> Option<Found> {
        loop {
            let top = self.stack.last_mut()?;
            let Some(entry) = top.entries.get_mut(top.next) else {
                self.stack.pop();
                continue;
            };
            top.next += 1;
            let name = std::mem::take(&mut entry.name);
            match entry.inode {
                Some(inode) => {
                    self.found += 1;
                    let folder = Arc::clone(&top.folder);
                    return Some(Found {
                        folder,
                        name,
                        inode,
                        device: entry.device,
                    });
                }
                None => {
                    let path = top.folder.path.join(name);
                    self.stack.extend(list(&path));
                }
            }
        }
    }
}

impl Iterator for Walk {
    type Item = Found;

    fn next(&mut self) -> Option<Found> {
        self.next_file()
    }
}

/// A folder's entries to walk, sorted; `None` when it cannot be listed.
fn list(path: &Path) -> Option<Listing> {
    let listing = std::fs::read_dir(path).ok()?;
    let mut entries = Vec::new();
    for e in listing.flatten() {
        let name = e.file_name();
        if name.as_encoded_bytes().first() == Some(&b'.') {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        let (inode, device) = if kind.is_symlink() {
            match std::fs::metadata(e.path()) {
                Ok(m) if m.is_file() => (Some(inode_of(&m)), device_of(&m)),
                _ => continue, // a folder through a link, a link to nothing, a pipe
            }
        } else if kind.is_dir() {
            (None, None)
        } else if kind.is_file() {
            (Some(entry_inode(&e)), None)
        } else {
            continue;
        };
        entries.push(Entry {
            name,
            inode,
            device,
        });
    }
    if entries.iter().all(|e| e.name.to_str().is_some()) {
        // UTF-8 keeps the order of code points
        entries.sort_unstable_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    } else {
        entries.sort_unstable_by(|a, b| python_order(&sort_key(a), &sort_key(b)));
    }
    let handle = open_folder(path);
    let device = handle
        .as_ref()
        .and_then(|h| h.metadata().ok())
        .and_then(|m| device_of(&m));
    Some(Listing {
        folder: Arc::new(Folder {
            path: path.to_path_buf(),
            handle,
            device,
        }),
        entries,
        next: 0,
    })
}

fn open_folder(path: &Path) -> Option<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_DIRECTORY);
    }
    opts.open(path).ok()
}

#[cfg(unix)]
fn inode_of(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn inode_of(_meta: &std::fs::Metadata) -> u64 {
    0
}

#[cfg(unix)]
fn device_of(meta: &std::fs::Metadata) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    Some(meta.dev())
}

#[cfg(not(unix))]
fn device_of(_meta: &std::fs::Metadata) -> Option<u64> {
    None
}

#[cfg(unix)]
fn entry_inode(e: &std::fs::DirEntry) -> u64 {
    use std::os::unix::fs::DirEntryExt;
    e.ino()
}

#[cfg(not(unix))]
fn entry_inode(e: &std::fs::DirEntry) -> u64 {
    e.metadata().map(|m| inode_of(&m)).unwrap_or(0)
}

/// What an entry sorts by: its name, a folder's followed by `/`.
fn sort_key(e: &Entry) -> std::borrow::Cow<'_, [u8]> {
    let name = e.name.as_encoded_bytes();
    match e.inode {
        Some(_) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned([name, b"/"].concat()),
    }
}

/// The order of two names as Python compares them once decoded (UTF-8,
/// a byte that is not UTF-8 as the lone surrogate U+DC80 + byte): the byte
/// order when both are UTF-8 (UTF-8 keeps the order of code points).
pub fn python_order(a: &[u8], b: &[u8]) -> Ordering {
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(_), Ok(_)) => a.cmp(b),
        _ => code_points(a).cmp(code_points(b)),
    }
}

/// The code points Python decodes a name into (`surrogateescape`).
fn code_points(mut bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.extend(s.chars().map(u32::from));
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                let bad = e.error_len().unwrap_or(bytes.len() - good);
                let (head, rest) = bytes.split_at(good);
                out.extend(String::from_utf8_lossy(head).chars().map(u32::from));
                out.extend(rest[..bad].iter().map(|&b| 0xDC00 + u32::from(b)));
                bytes = &rest[bad..];
            }
        }
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_files_in_sorted_path_order() {
        let dir = crate::TestDir::new("walk");
        for p in ["b/x.txt", "a/y.txt", "a-z.txt", "a/.hidden/z.txt", "c.txt"] {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        std::fs::write(dir.join(".skip"), "x").unwrap();
        let got: Vec<PathBuf> = Walk::new(&dir.join("")).map(|f| f.path()).collect();
        let mut want: Vec<PathBuf> = ["a-z.txt", "a/y.txt", "b/x.txt", "c.txt"]
            .iter()
            .map(|p| dir.join(p))
            .collect();
        // the order of the path strings: "a-z.txt" < "a/y.txt" ('-' < '/')
        want.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        assert_eq!(got, want);
        assert!(got[0].ends_with("a-z.txt"));
        let first = Walk::new(&dir.join("")).next().unwrap();
        assert_eq!(std::fs::read(first.path()).unwrap(), b"x");
        let mut s = String::new();
        std::io::Read::read_to_string(&mut first.open().unwrap(), &mut s).unwrap();
        assert_eq!(s, "x");
    }

    #[test]
    fn names_not_utf8_sort_as_python_decodes_them() {
        // U+DCFF (a byte 0xFF) sorts after U+D7FF and before U+E000
        assert_eq!(
            python_order(b"\xff", "\u{d7ff}".as_bytes()),
            Ordering::Greater
        );
        assert_eq!(python_order(b"\xff", "\u{e000}".as_bytes()), Ordering::Less);
        assert_eq!(python_order(b"a\xff", b"a\xfe"), Ordering::Greater);
        assert_eq!(python_order(b"ab", b"a"), Ordering::Greater);
    }
}
