use std::io::Write;

use flame_workspace::{
    LineRange, MAX_LINE_BYTES, MAX_LINE_COUNT_SCAN_BYTES, MAX_READ_BYTES, Touched, WorkspaceError,
};

use crate::Fixture;

#[test]
fn a_small_file_is_numbered_like_cat_n() {
    let f = Fixture::new();
    f.put("a.txt", "first\nsecond\r\nthird");
    let read = f.workspace.read_file("a.txt", None).expect("read");
    assert_eq!(read.text, "     1\tfirst\n     2\tsecond\n     3\tthird\n");
    assert_eq!(read.lines, Some((1, 3)));
    assert_eq!(read.remaining, None);
    assert_eq!(read.render(), read.text);
    assert_eq!(read.touched(), Touched::files(vec!["a.txt".into()], vec![]));
}

#[test]
fn a_range_returns_its_lines_and_says_what_is_left() {
    let f = Fixture::new();
    f.put("a.txt", "1\n2\n3\n4\n5\n");
    let read =
        f.workspace.read_file("a.txt", Some(LineRange { start: 2, end: Some(3) })).expect("read");
    assert_eq!(read.text, "     2\t2\n     3\t3\n");
    let rest = read.remaining.expect("lines 4 and 5 are left");
    assert_eq!((rest.bytes, rest.lines, rest.next_start), (4, Some(2), 4));
    assert!(read.render().contains("read on with start_line 4"), "{}", read.render());
    let tail =
        f.workspace.read_file("a.txt", Some(LineRange { start: 5, end: None })).expect("read");
    assert_eq!(tail.text, "     5\t5\n");
    assert_eq!(tail.remaining, None);
}

#[test]
fn a_start_past_the_end_or_an_empty_range_is_refused() {
    let f = Fixture::new();
    f.put("a.txt", "1\n2\n");
    f.put("no-newline.txt", "1\n2");
    for path in ["a.txt", "no-newline.txt"] {
        let error = f
            .workspace
            .read_file(path, Some(LineRange { start: 3, end: None }))
            .expect_err("past the end");
        assert!(matches!(error, WorkspaceError::StartPastEnd { lines: 2, .. }), "{error:?}");
        assert!(error.to_string().contains("has 2 lines"), "{error}");
    }
    let error = f
        .workspace
        .read_file("a.txt", Some(LineRange { start: 2, end: Some(1) }))
        .expect_err("empty range");
    assert!(matches!(error, WorkspaceError::EmptyRange { .. }), "{error:?}");
}

#[test]
fn an_empty_file_says_so() {
    let f = Fixture::new();
    f.put("empty.txt", "");
    let read = f.workspace.read_file("empty.txt", None).expect("read");
    assert_eq!(read.lines, None);
    assert_eq!(read.render(), "(empty.txt is empty)");
}

#[test]
fn binary_files_are_refused() {
    let f = Fixture::new();
    f.put("nul.bin", b"text\0more");
    f.put("latin1.txt", b"caf\xe9 au lait\n");
    let mut late = "ok\n".repeat(5_000).into_bytes();
    late.extend_from_slice(b"\xff\xfe broken\n");
    f.put("late.txt", late);
    for (path, reason) in [
        ("nul.bin", "NUL byte"),
        ("latin1.txt", "not valid UTF-8"),
        ("late.txt", "line 5001 is not valid UTF-8"),
    ] {
        let error = f.workspace.read_file(path, None).expect_err(path);
        assert!(matches!(error, WorkspaceError::Binary { .. }), "{path}: {error:?}");
        let message = error.to_string();
        assert!(message.contains(reason) && message.contains("binary"), "{message}");
    }
}

#[test]
fn missing_files_folders_and_fifos_are_refused_clearly() {
    let f = Fixture::new();
    f.put("dir/a.txt", "x");
    let error = f.workspace.read_file("missing.txt", None).expect_err("missing");
    assert!(matches!(error, WorkspaceError::NotFound { .. }), "{error:?}");
    let error = f.workspace.read_file("dir", None).expect_err("folder");
    assert!(error.to_string().contains("use list_files"), "{error}");
    let status = std::process::Command::new("mkfifo")
        .arg(f.root().join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    // Reading a FIFO would block for ever; it is refused before it is opened.
    let error = f.workspace.read_file("pipe", None).expect_err("fifo");
    assert!(matches!(error, WorkspaceError::NotRegularFile { .. }), "{error:?}");
}

/// Writes `bytes` of numbered 100-byte lines.
fn write_big(f: &Fixture, name: &str, bytes: u64) -> u64 {
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(f.root().join(name)).expect("create"));
    let lines = bytes / 100;
    for number in 1..=lines {
        writeln!(file, "{number:>10} {}", "x".repeat(88)).expect("write");
    }
    file.flush().expect("flush");
    lines
}

#[test]
fn a_50_mb_file_is_read_a_capped_piece_at_a_time() {
    let f = Fixture::new();
    let lines = write_big(&f, "big.txt", 50_000_000);
    let first = f.workspace.read_file("big.txt", None).expect("read");
    // Only the capped piece is returned (and held).
    assert!(first.text.len() <= MAX_READ_BYTES, "{} bytes returned", first.text.len());
    let (start, last) = first.lines.expect("lines");
    assert_eq!(start, 1);
    // Each numbered line is 7 + 100 bytes: as many as fit.
    assert_eq!(last, (MAX_READ_BYTES / 107) as u64);
    let rest = first.remaining.expect("most of the file is left");
    assert_eq!(rest.bytes, 50_000_000 - last * 100);
    assert_eq!(rest.lines, Some(lines - last));
    assert_eq!(rest.next_start, last + 1);
    assert!(first.render().contains(&format!("read on with start_line {}", last + 1)));

    let next = f
        .workspace
        .read_file(
            "big.txt",
            Some(LineRange { start: rest.next_start, end: Some(rest.next_start) }),
        )
        .expect("read on");
    assert_eq!(next.text, format!("{:>6}\t{:>10} {}\n", last + 1, last + 1, "x".repeat(88)));

    let end = f
        .workspace
        .read_file("big.txt", Some(LineRange { start: lines, end: None }))
        .expect("the last line");
    assert_eq!(end.lines, Some((lines, lines)));
    assert_eq!(end.remaining, None);
}

#[test]
fn past_the_count_scan_limit_only_the_bytes_left_are_given() {
    let f = Fixture::new();
    let size = write_big(&f, "huge.txt", MAX_LINE_COUNT_SCAN_BYTES + 5_000_000) * 100;
    let read = f
        .workspace
        .read_file("huge.txt", Some(LineRange { start: 1, end: Some(1) }))
        .expect("read");
    let rest = read.remaining.expect("left");
    assert_eq!(rest.lines, None);
    assert_eq!(rest.bytes, size - 100);
    assert!(!read.render().contains("more line(s)"), "{}", read.render());
}

#[test]
fn a_line_longer_than_the_line_cap_is_cut_and_says_so() {
    let f = Fixture::new();
    let long = "é".repeat(MAX_LINE_BYTES); // two bytes each: twice the cap
    f.put("min.js", format!("{long}\nshort\n"));
    let read = f.workspace.read_file("min.js", None).expect("read");
    let first = read.text.lines().next().expect("a line");
    assert!(first.len() <= MAX_LINE_BYTES + 40, "{} bytes", first.len());
    assert!(
        first.ends_with(&format!("[… {} more bytes]", MAX_LINE_BYTES)),
        "{}",
        &first[first.len() - 40..]
    );
    assert!(read.text.ends_with("     2\tshort\n"));
    assert_eq!(read.cut_lines, 1);
    assert!(read.render().contains("1 line(s) longer than"));
}
