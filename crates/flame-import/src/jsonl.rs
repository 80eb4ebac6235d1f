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
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 {
            break;
        }
        number += 1;
        read += n as u64;
        if read - reported >= PROGRESS_EVERY {
            reported = read;
            progress(Progress { file: name.clone(), bytes_read: read, total_bytes: total });
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
    fn an_empty_file_is_reported() {
        let (lines, report) = read(b"");
        assert!(lines.is_empty());
        assert_eq!(report.problems, ["t.jsonl: the file is empty"]);
    }
}
