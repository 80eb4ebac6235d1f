//! `read_file`: a text file's lines, numbered like `cat -n`, a bounded piece at a time. The file
//! is streamed: only the lines returned are held, so reading the start of a 50 MB file costs the
//! 256 KB returned, not the file.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use crate::{Workspace, WorkspaceError};

/// The most text one `read_file` call returns, line numbers included; the reply says where to
/// read on.
pub const MAX_READ_BYTES: usize = 256 * 1024;

/// The most of one line that is returned; a longer line (minified code, a data dump) is cut and
/// the reply says how many bytes were left out.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// How much of the start of a file is checked for NUL bytes and broken UTF-8 before reading it
/// as text.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// How far past the returned lines the rest of the file is scanned to count its lines. Past
/// this, only the bytes left are given, so a huge file is not read whole to count it.
pub const MAX_LINE_COUNT_SCAN_BYTES: u64 = 64 * 1024 * 1024;

/// Which lines to read: 1-based, `end` inclusive; `None` reads on as far as the cap allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    pub start: u64,
    pub end: Option<u64>,
}

/// What was read, and how much of the file is left after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// The workspace-relative path.
    pub path: String,
    /// The lines, each as `{number:>6}\t{line}\n`.
    pub text: String,
    /// The first and last line returned; `None` for an empty file.
    pub lines: Option<(u64, u64)>,
    /// Lines longer than [`MAX_LINE_BYTES`] that were cut.
    pub cut_lines: u64,
    /// What is left after the last line returned; `None` when the file ends there.
    pub remaining: Option<Remaining>,
}

/// The rest of a file after what one call returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remaining {
    pub bytes: u64,
    /// Lines left, or `None` when counting them would read more than
    /// [`MAX_LINE_COUNT_SCAN_BYTES`].
    pub lines: Option<u64>,
    /// The `start_line` that reads on.
    pub next_start: u64,
}

impl FileRead {
    /// The text sent to the model: the numbered lines, then a line saying what is left.
    pub fn render(&self) -> String {
        let mut out = self.text.clone();
        let Some((first, last)) = self.lines else {
            return format!("({} is empty)", self.path);
        };
        if self.cut_lines > 0 {
            out.push_str(&format!(
                "[{} line(s) longer than {MAX_LINE_BYTES} bytes were cut]\n",
                self.cut_lines
            ));
        }
        if let Some(rest) = self.remaining {
            let lines = match rest.lines {
                Some(lines) => format!("{lines} more line(s), "),
                None => String::new(),
            };
            out.push_str(&format!(
                "[lines {first}-{last} shown; {lines}{} more byte(s) after line {last}; read on with start_line {}]\n",
                rest.bytes, rest.next_start
            ));
        }
        out
    }

    /// The file this call read, for the file trail.
    pub fn touched(&self) -> crate::Touched {
        crate::Touched::files(vec![self.path.clone()], Vec::new())
    }
}

impl Workspace {
    /// Reads `path` as numbered text lines, from `range.start` (default 1) to `range.end` or
    /// until [`MAX_READ_BYTES`] of text.
    pub fn read_file(
        &self,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<FileRead, WorkspaceError> {
        let resolved = self.resolve(path)?;
        let range = range.unwrap_or(LineRange { start: 1, end: None });
        let start = range.start.max(1);
        if let Some(end) = range.end
            && end < start
        {
            return Err(WorkspaceError::EmptyRange { start, end });
        }
        let (mut file, size) = self.open_regular(&resolved.relative)?;
        let name = resolved.relative.as_str();
        check_text_start(&mut file, name)?;
        let mut reader = BufReader::with_capacity(64 * 1024, file);

        let skipped = skip_lines(&mut reader, start - 1).map_err(|e| read_error(name, e))?;
        if skipped.lines < start - 1 || (skipped.at_eof && start > 1) {
            return Err(WorkspaceError::StartPastEnd {
                path: name.to_owned(),
                start,
                lines: skipped.lines,
            });
        }
        let mut offset = skipped.bytes;

        let mut text = String::new();
        let mut line = Vec::new();
        let mut number = start;
        let mut cut_lines = 0;
        let mut last = None;
        loop {
            if range.end.is_some_and(|end| number > end) {
                break;
            }
            let Some(read) =
                read_line_bounded(&mut reader, &mut line).map_err(|e| read_error(name, e))?
            else {
                break;
            };
            let shown = text_of_line(&line, read.cut, name, number)?;
            let entry = if read.cut {
                format!(
                    "{number:>6}\t{shown} [… {} more bytes]\n",
                    read.length - shown.len() as u64
                )
            } else {
                format!("{number:>6}\t{shown}\n")
            };
            if !text.is_empty() && text.len() + entry.len() > MAX_READ_BYTES {
                // This line is not returned: put it back by reading on from its start.
                reader.seek(SeekFrom::Start(offset)).map_err(|e| read_error(name, e))?;
                break;
            }
            text.push_str(&entry);
            cut_lines += u64::from(read.cut);
            offset += read.length + u64::from(read.newline);
            last = Some(number);
            number += 1;
        }

        let lines = last.map(|last| (start, last));
        let remaining = match last {
            Some(last) if offset < size => {
                let lines =
                    count_rest(&mut reader, size - offset).map_err(|e| read_error(name, e))?;
                Some(Remaining { bytes: size - offset, lines, next_start: last + 1 })
            }
            _ => None,
        };
        Ok(FileRead { path: resolved.relative, text, lines, cut_lines, remaining })
    }
}

/// Refuses a file whose first [`BINARY_SNIFF_BYTES`] hold a NUL byte or broken UTF-8, then
/// rewinds it.
fn check_text_start(file: &mut File, name: &str) -> Result<(), WorkspaceError> {
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut *file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| read_error(name, e))?;
    if let Some(reason) = binary_reason(&head) {
        return Err(WorkspaceError::Binary { path: name.to_owned(), reason });
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| read_error(name, e))?;
    Ok(())
}

/// Why the start of a file is not text, if it is not. A UTF-8 sequence cut by the end of the
/// sample is not counted as broken.
pub(crate) fn binary_reason(head: &[u8]) -> Option<String> {
    if let Some(at) = memchr::memchr(0, head) {
        return Some(format!("a NUL byte at offset {at}"));
    }
    match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_some() => {
            Some(format!("not valid UTF-8 at byte {}", e.valid_up_to()))
        }
        _ => None,
    }
}

fn read_error(name: &str, e: std::io::Error) -> WorkspaceError {
    WorkspaceError::io("read", name, e)
}

/// One line as text, refused as binary when it is not UTF-8. A cut line may end inside a
/// character; that character is dropped.
fn text_of_line<'a>(
    line: &'a [u8],
    cut: bool,
    name: &str,
    number: u64,
) -> Result<&'a str, WorkspaceError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(text) => Ok(text),
        Err(e) if cut && e.error_len().is_none() => {
            Ok(std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default())
        }
        Err(_) => Err(WorkspaceError::Binary {
            path: name.to_owned(),
            reason: format!("line {number} is not valid UTF-8"),
        }),
    }
}

struct LineRead {
    /// The line's whole length without its newline.
    length: u64,
    newline: bool,
    /// Whether only the first [`MAX_LINE_BYTES`] were kept.
    cut: bool,
}

/// Reads one line into `line` (cleared first), keeping at most [`MAX_LINE_BYTES`] of it and
/// consuming the rest. `None` at the end of the file.
fn read_line_bounded(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<LineRead>> {
    line.clear();
    let mut length = 0u64;
    let mut started = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(started.then_some(LineRead {
                length,
                newline: false,
                cut: length > line.len() as u64,
            }));
        }
        started = true;
        let (piece, newline) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (&buffer[..at], true),
            None => (buffer, false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&piece[..piece.len().min(room)]);
        length += piece.len() as u64;
        let used = piece.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            return Ok(Some(LineRead { length, newline: true, cut: length > line.len() as u64 }));
        }
    }
}

struct Skipped {
    lines: u64,
    bytes: u64,
    at_eof: bool,
}

/// Skips `count` lines without holding them.
fn skip_lines(reader: &mut impl BufRead, count: u64) -> std::io::Result<Skipped> {
    let mut skipped = Skipped { lines: 0, bytes: 0, at_eof: false };
    let mut partial = false;
    while skipped.lines < count {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            // A last line without a newline still counts as a line.
            skipped.lines += u64::from(partial);
            skipped.at_eof = true;
            return Ok(skipped);
        }
        let used = match memchr::memchr(b'\n', buffer) {
            Some(at) => {
                skipped.lines += 1;
                partial = false;
                at + 1
            }
            None => {
                partial = true;
                buffer.len()
            }
        };
        skipped.bytes += used as u64;
        reader.consume(used);
    }
    skipped.at_eof = reader.fill_buf()?.is_empty();
    Ok(skipped)
}

/// Counts the lines in the `rest` bytes left, if that is no more than
/// [`MAX_LINE_COUNT_SCAN_BYTES`].
fn count_rest(reader: &mut impl BufRead, rest: u64) -> std::io::Result<Option<u64>> {
    if rest > MAX_LINE_COUNT_SCAN_BYTES {
        return Ok(None);
    }
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        lines += memchr::memchr_iter(b'\n', buffer).count() as u64;
        last = buffer[buffer.len() - 1];
        let used = buffer.len();
        reader.consume(used);
    }
    Ok(Some(lines + u64::from(last != b'\n')))
}
