//! Other tools' databases read within their limits: only tables, no value past
//! `MAX_FOREIGN_VALUE_BYTES`, no more than `MAX_FOREIGN_ROWS` rows or `MAX_FOREIGN_BYTES` in all,
//! and no longer than the deadline; hostile schemas that once took gigabytes or never ended.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flame_store::foreign::{
    FOREIGN_READ_TIMEOUT, ForeignError, ForeignLimits, MAX_FOREIGN_BYTES, MAX_FOREIGN_ROWS,
    MAX_FOREIGN_VALUE_BYTES, read_opencode_db, read_opencode_db_within,
};

/// An `opencode.db` in a temporary folder made by `schema` (SQL), with `session` and `message`
/// tables unless `schema` makes its own.
fn database(dir: &Path, schema: &str) -> PathBuf {
    let path = dir.join("opencode.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(schema).unwrap();
    for (table, sql) in [
        (
            "session",
            "CREATE TABLE session (id TEXT, parent_id TEXT, title TEXT, directory TEXT, time_created INTEGER)",
        ),
        (
            "message",
            "CREATE TABLE message (id TEXT, session_id TEXT, time_created INTEGER, data TEXT)",
        ),
        ("part", "CREATE TABLE part (id TEXT, message_id TEXT, time_created INTEGER, data TEXT)"),
    ] {
        let exists: bool = conn
            .query_row("SELECT count(*) FROM sqlite_schema WHERE name = ?1", [table], |r| r.get(0))
            .unwrap();
        if !exists {
            conn.execute_batch(sql).unwrap();
        }
    }
    path
}

/// An `opencode.db` whose `part` table has `rows` rows, each one's `data` the value of the SQL
/// expression `data`: stored, or with `computed` made again on every read (SQLite would make a
/// value of any size it says, from a file of a few kilobytes).
fn parts(dir: &Path, rows: usize, data: &str, computed: bool) -> PathBuf {
    let (column, value) = if computed {
        (format!("data TEXT GENERATED ALWAYS AS ({data}) VIRTUAL"), String::new())
    } else {
        ("data TEXT".to_owned(), format!(", {data}"))
    };
    let names = if computed {
        "id, message_id, time_created"
    } else {
        "id, message_id, time_created, data"
    };
    database(
        dir,
        &format!(
            "CREATE TABLE part (id TEXT, message_id TEXT, time_created INTEGER, {column});
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT {rows})
             INSERT INTO part ({names}) SELECT i, 'm', 0{value} FROM n;"
        ),
    )
}

#[test]
fn past_max_foreign_rows_the_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = parts(dir.path(), MAX_FOREIGN_ROWS + 1, "'{}'", false);
    let err = read_opencode_db(&path).unwrap_err();
    assert!(matches!(err, ForeignError::TooLarge { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&format!("more than {MAX_FOREIGN_ROWS} rows in its part table")),
        "{err}"
    );
}

#[test]
fn a_view_is_refused_however_small_its_file() {
    let dir = tempfile::tempdir().unwrap();
    // 100 MB of data from a file of a few kilobytes.
    let path = database(
        dir.path(),
        "CREATE VIEW part AS SELECT 'p' AS id, 'm' AS message_id, 0 AS time_created,
             printf('%.*c', 100000000, 'x') AS data;",
    );
    assert!(std::fs::metadata(&path).unwrap().len() < 64 * 1024);
    let err = read_opencode_db(&path).unwrap_err();
    assert!(matches!(err, ForeignError::NotATable { ref kind, .. } if kind == "view"), "{err:?}");
    assert!(err.to_string().contains("its part is a view, not a table"), "{err}");
}

#[test]
fn a_recursive_view_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(
        dir.path(),
        "CREATE VIEW message AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
             SELECT n AS id, 's' AS session_id, n AS time_created, '{}' AS data FROM r;",
    );
    let started = Instant::now();
    let err = read_opencode_db(&path).unwrap_err();
    assert!(matches!(err, ForeignError::NotATable { .. }), "{err:?}");
    // Refused before anything runs; a read of the view would never end.
    assert!(started.elapsed() < FOREIGN_READ_TIMEOUT);
}

#[test]
fn a_virtual_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = database(
        dir.path(),
        "CREATE VIRTUAL TABLE part USING fts5(id, message_id, time_created, data);",
    );
    let err = read_opencode_db(&path).unwrap_err();
    assert!(
        matches!(err, ForeignError::NotATable { ref kind, .. } if kind == "virtual table"),
        "{err:?}"
    );
}

#[test]
fn past_max_foreign_value_bytes_no_value_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = parts(
        dir.path(),
        1,
        &format!("printf('%.*c', {}, 'x')", MAX_FOREIGN_VALUE_BYTES + 1),
        true,
    );
    let err = read_opencode_db(&path).unwrap_err();
    assert!(matches!(err, ForeignError::TooLarge { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&format!("larger than {MAX_FOREIGN_VALUE_BYTES} bytes")),
        "{err}"
    );
}

#[test]
fn past_max_foreign_bytes_the_read_is_refused_before_any_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let value = MAX_FOREIGN_VALUE_BYTES / 2;
    let rows = MAX_FOREIGN_BYTES / value + 1;
    let path = parts(dir.path(), rows, &format!("printf('%.*c', {value}, 'x')"), true);
    let err = read_opencode_db(&path).unwrap_err();
    assert!(matches!(err, ForeignError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("more than {MAX_FOREIGN_BYTES} bytes")), "{err}");
    // Counted as rows are read too, ids and titles included.
    let limits = ForeignLimits { bytes: 40, ..ForeignLimits::default() };
    let small = database(
        &tempfile::tempdir_in(dir.path()).unwrap().keep(),
        "CREATE TABLE session (id TEXT, parent_id TEXT, title TEXT, directory TEXT, time_created INTEGER);
         INSERT INTO session VALUES ('s1', NULL, 'a title of more than forty bytes, all told', NULL, 0);",
    );
    let err = read_opencode_db_within(&small, limits).unwrap_err();
    assert!(err.to_string().contains("more than 40 bytes"), "{err}");
}

#[test]
fn past_its_deadline_a_read_is_interrupted() {
    assert_eq!(ForeignLimits::default().time, FOREIGN_READ_TIMEOUT);
    let dir = tempfile::tempdir().unwrap();
    // A million rows within every other limit take about a second to read here; the deadline
    // is a tenth of that.
    let path = parts(dir.path(), 1_000_000, "'{}'", false);
    let limits = ForeignLimits { time: Duration::from_millis(100), ..ForeignLimits::default() };
    let read = read_opencode_db_within(&path, limits).map(|rows| rows.parts.len());
    assert!(matches!(read, Err(ForeignError::TooSlow { .. })), "{read:?}");
    assert!(read.unwrap_err().to_string().contains("took longer than"));
}
