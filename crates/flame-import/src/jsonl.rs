//! Reading JSON Lines files one line at a time, so a large transcript is never held as text,
//! and reading past what cannot be read: every bad line becomes a problem naming its file and
//! line, and the lines after it are still read.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use crate::{ImportError, ImportReport, Progress};

/// How often progress is reported, in bytes read.
const PROGRESS_EVERY: u64 = 256 * 1024;

/// The longest line (one record) read: a longer one is skipped, not held past this, and
/// reported. A Claude Code record is one message (the largest in the shared sessions is 73 KB; a
/// pasted image is a few megabytes of base64), a message is stored cut at 4 MiB anyway, and a line
/// costs several times its size while it is parsed and read into a message: a 200 MB line took
/// 2.5 GB before lines were bounded.
pub const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

/// Calls `each(line_number, record)` for every line of `path` that is a JSON object, in order.
/// Blank lines are ignored; lines that are not UTF-8, not JSON or not an object are reported in
/// `report` and skipped. An empty file is reported too. Only a file that cannot be opened or
/// read at all is an error.
pub fn for_each_record(
    path: &Path,
    report: &mut ImportReport,
    progress: &mut dyn FnMut(Progress),
    mut each: impl FnMut(usize, Value),
) -> Result<(), ImportError> {
    let io = |source| ImportError::Io { path: path.to_owned(), source };
    let file = File::open(path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len();
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::with_capacity(64 * 1024);
    let (mut number, mut read, mut reported) = (0usize, 0u64, 0u64);
    progress(Progress { file: name.clone(), bytes_read: 0, total_bytes: total });
    while let Some(n) = read_line_bounded(&mut reader, &mut line).map_err(io)? {
        number += 1;
        read += n;
        if read - reported >= PROGRESS_EVERY {
            reported = read;
            progress(Progress { file: name.clone(), bytes_read: read, total_bytes: total });
        }
        if line.len() > MAX_RECORD_BYTES {
            report.problem(format!(
                "{name} line {number}: {n} bytes, more than the {MAX_RECORD_BYTES} a record may be; line skipped"
            ));
            continue;
        }
        if let Some(value) = record_of(&name, number, &line, report) {
            each(number, value);
        }
    }
    if total == 0 {
        report.problem(format!("{name}: the file is empty"));
    }
    progress(Progress { file: name, bytes_read: read, total_bytes: total });
    Ok(())
}

/// Line `number` of file `name` as a JSON object, or `None` when it is blank or cannot be read,
/// which is then reported in `report`. A line without its newline that breaks off inside a
/// record is reported as truncated.
pub(crate) fn record_of(
    name: &str,
    number: usize,
    line: &[u8],
    report: &mut ImportReport,
) -> Option<Value> {
    let ended = line.ends_with(b"\n");
    let text = match std::str::from_utf8(line) {
        Ok(text) => text.trim(),
        Err(err) => {
            report.problem(format!(
                "{name} line {number}: not UTF-8 (bad byte at column {}); line skipped",
                err.valid_up_to() + 1
            ));
            return None;
        }
    };
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Some(value),
        Ok(_) => {
            report.problem(format!("{name} line {number}: not a JSON object; line skipped"));
            None
        }
        Err(err) if !ended && err.is_eof() => {
            report.problem(format!(
                "{name} line {number}: truncated (the file ends inside a record); line skipped"
            ));
            None
        }
        Err(err) => {
            report.problem(format!("{name} line {number}: not JSON ({err}); line skipped"));
            None
        }
    }
}

/// Reads one line into `line` (cleared first), its newline included, keeping no more than
/// [`MAX_RECORD_BYTES`] and one byte of it (so a longer line is told by its length) and consuming
/// the rest unread: the bytes the line took in the file, or `None` at the end of the file.
fn read_line_bounded(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<u64>> {
    line.clear();
    let mut taken = 0u64;
    loop {
        let buffer = match reader.fill_buf() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            result => result?,
        };
        if buffer.is_empty() {
            return Ok((taken > 0).then_some(taken));
        }
        let (piece, ended) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (&buffer[..=at], true),
            None => (buffer, false),
        };
        let room = (MAX_RECORD_BYTES + 1).saturating_sub(line.len());
        line.extend_from_slice(&piece[..piece.len().min(room)]);
        let used = piece.len();
        taken += used as u64;
        reader.consume(used);
        if ended {
            return Ok(Some(taken));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> (Vec<usize>, ImportReport) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let mut report = ImportReport::default();
        let mut lines = Vec::new();
        for_each_record(&path, &mut report, &mut |_| {}, |n, _| lines.push(n)).unwrap();
        (lines, report)
    }

    #[test]
    fn bad_lines_are_reported_by_number_and_the_rest_is_read() {
        let (lines, report) = read(b"{\"a\":1}\n\xff\xfe{}\n[1]\n\n{\"b\":2}\n{\"c\":");
        assert_eq!(lines, [1, 5]);
        assert_eq!(report.problems.len(), 3, "{:?}", report.problems);
        assert!(report.problems[0].contains("line 2: not UTF-8"));
        assert!(report.problems[1].contains("line 3: not a JSON object"));
        assert!(report.problems[2].contains("line 6: truncated"));
    }

    #[test]
    fn a_line_past_the_record_limit_is_skipped_unheld_and_the_next_read() {
        let within = format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_RECORD_BYTES - 9));
        assert_eq!(within.len() + 1, MAX_RECORD_BYTES);
        let past = format!("{{\"b\":\"{}\"}}", "y".repeat(MAX_RECORD_BYTES - 8));
        let text = format!("{within}\n{past}\n{{\"c\":3}}\n");
        let (lines, report) = read(text.as_bytes());
        assert_eq!(lines, [1, 3]);
        assert_eq!(
            report.problems,
            [format!(
                "t.jsonl line 2: {} bytes, more than the {MAX_RECORD_BYTES} a record may be; line skipped",
                MAX_RECORD_BYTES + 1
            )]
        );
    }

    #[test]
    fn an_empty_file_is_reported() {
        let (lines, report) = read(b"");
        assert!(lines.is_empty());
        assert_eq!(report.problems, ["t.jsonl: the file is empty"]);
    }
}
