//! Reading a file that grows at its end: each read starts where the last one stopped and hands
//! over the complete lines written since. A last line without its newline is still being
//! written: it is left in the file for the next read. A file that is shorter than what was
//! read, or is another file under the same name, was truncated or replaced; the caller reads it
//! again from its start.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The longest line read, in bytes; a longer one is skipped (and reported) without ever being
/// held whole, so a line that never ends costs no more memory than this. Far above any record
/// the agents write (a tool's output is capped by them; a message Flame stores is at most
/// 4 MiB, `flame_store::MAX_MESSAGE_BYTES`).
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// How much of a file one read takes from the disk at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// Which file a path named when it was read: its device and inode, so that a file replaced
/// under the same name (written anew and renamed over it) is told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    pub device: u64,
    pub inode: u64,
}

impl FileIdentity {
    fn of(metadata: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        FileIdentity { device: metadata.dev(), inode: metadata.ino() }
    }
}

/// What a read hands over, in the file's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailLine<'a> {
    /// A complete line, its newline included.
    Complete(&'a [u8]),
    /// A line longer than [`MAX_LINE_BYTES`], skipped: its length.
    TooLong(u64),
}

/// What a read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailRead {
    /// This many complete lines were handed over (none when nothing new was written).
    Lines(usize),
    /// The file is not the one read before: replaced, or cut shorter than what was read. Nothing
    /// was handed over; read it again from the start.
    Replaced(String),
}

/// A file read up to `offset`: every byte before it was a complete line handed over (or part of
/// a line too long to read, skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    pub path: PathBuf,
    /// The file read, once a read found it.
    pub identity: Option<FileIdentity>,
    pub offset: u64,
    /// Bytes of a too-long line skipped so far, while its end has not been read.
    skipping: Option<u64>,
}

impl Tail {
    /// A file to read from its start.
    pub fn new(path: &Path) -> Tail {
        Tail { path: path.to_owned(), identity: None, offset: 0, skipping: None }
    }

    /// Hands each line written since the last read to `each`, in order: a complete one, or the
    /// length of one over [`MAX_LINE_BYTES`]. A path that is no longer a file is an error; so is
    /// one that cannot be read.
    pub fn read(&mut self, each: &mut dyn FnMut(TailLine<'_>)) -> std::io::Result<TailRead> {
        let metadata = std::fs::metadata(&self.path)?;
        if metadata.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                format!("{} is a folder now, not a session file", self.path.display()),
            ));
        }
        let identity = FileIdentity::of(&metadata);
        if let Some(known) = self.identity
            && known != identity
        {
            return Ok(TailRead::Replaced(format!(
                "{} was replaced by another file",
                self.path.display()
            )));
        }
        if metadata.len() < self.offset {
            return Ok(TailRead::Replaced(format!(
                "{} was cut to {} bytes, shorter than the {} already read",
                self.path.display(),
                metadata.len(),
                self.offset
            )));
        }
        self.identity = Some(identity);
        if metadata.len() == self.offset {
            return Ok(TailRead::Lines(0));
        }
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(self.offset))?;
        let mut pending: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; CHUNK_BYTES];
        let mut lines = 0;
        loop {
            let n = file.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            let mut rest = &chunk[..n];
            while !rest.is_empty() {
                let newline = rest.iter().position(|&b| b == b'\n');
                let end = newline.map_or(rest.len(), |at| at + 1);
                let (piece, after) = rest.split_at(end);
                rest = after;
                if let Some(skipped) = &mut self.skipping {
                    *skipped += piece.len() as u64;
                    self.offset += piece.len() as u64;
                    if newline.is_some() {
                        each(TailLine::TooLong(*skipped));
                        self.skipping = None;
                    }
                    continue;
                }
                if pending.len() + piece.len() > MAX_LINE_BYTES {
                    let skipped = (pending.len() + piece.len()) as u64;
                    self.offset += skipped;
                    pending.clear();
                    if newline.is_some() {
                        each(TailLine::TooLong(skipped));
                    } else {
                        self.skipping = Some(skipped);
                    }
                    continue;
                }
                pending.extend_from_slice(piece);
                if newline.is_some() {
                    each(TailLine::Complete(&pending));
                    lines += 1;
                    self.offset += pending.len() as u64;
                    pending.clear();
                }
            }
        }
        Ok(TailRead::Lines(lines))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn read(tail: &mut Tail) -> (TailRead, Vec<String>, Vec<u64>) {
        let (mut lines, mut long) = (Vec::new(), Vec::new());
        let got = tail
            .read(&mut |line| match line {
                TailLine::Complete(l) => lines.push(String::from_utf8_lossy(l).into_owned()),
                TailLine::TooLong(n) => long.push(n),
            })
            .unwrap();
        (got, lines, long)
    }

    #[test]
    fn only_new_complete_lines_are_handed_over_and_a_partial_one_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one\ntwo\nthr").unwrap();
        let mut tail = Tail::new(&path);
        assert_eq!(
            read(&mut tail),
            (TailRead::Lines(2), vec!["one\n".into(), "two\n".into()], vec![])
        );
        assert_eq!(tail.offset, 8);
        assert_eq!(read(&mut tail).0, TailRead::Lines(0));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"ee\nfour\n").unwrap();
        assert_eq!(read(&mut tail).1, ["three\n", "four\n"]);
    }

    #[test]
    fn a_truncated_or_replaced_file_is_said_to_be_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let mut tail = Tail::new(&path);
        read(&mut tail);
        std::fs::write(&path, "x\n").unwrap();
        assert!(
            matches!(read(&mut tail).0, TailRead::Replaced(why) if why.contains("cut to 2 bytes"))
        );
        let mut tail = Tail::new(&path);
        read(&mut tail);
        let other = dir.path().join("new");
        std::fs::write(&other, "x\ny\nz\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(matches!(read(&mut tail).0, TailRead::Replaced(why) if why.contains("replaced")));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let err = Tail::new(&path).read(&mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("is a folder now"), "{err}");
    }

    #[test]
    fn a_line_past_the_limit_is_skipped_without_being_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut file = File::create(&path).unwrap();
        file.write_all(b"before\n").unwrap();
        // Written in two parts: the read between them must not hold the first part.
        file.write_all(&vec![b'x'; MAX_LINE_BYTES + 10]).unwrap();
        let mut tail = Tail::new(&path);
        let (got, lines, long) = read(&mut tail);
        assert_eq!((got, lines, long), (TailRead::Lines(1), vec!["before\n".to_owned()], vec![]));
        file.write_all(b"yy\nafter\n").unwrap();
        let (_, lines, long) = read(&mut tail);
        assert_eq!(lines, ["after\n"]);
        assert_eq!(long, [MAX_LINE_BYTES as u64 + 13]);
    }
}
