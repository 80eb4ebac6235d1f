//! Reading other tools' SQLite databases, read-only, as plain rows: OpenCode's `opencode.db`
//! (from OpenCode 1.2). This crate is the only one that talks to SQLite, so the importers get
//! rows from here and never a connection. Nothing here writes.
//!
//! Another tool's database is outside input like any file: a hostile one of a few kilobytes can
//! name a view that makes rows of gigabytes, or recurses for ever. So only real tables are read
//! (no view, no virtual table), with SQLite's own limit on the size of any value it makes, a cap
//! on the rows and on the bytes read in all, and a deadline checked while SQLite works
//! ([`ForeignLimits`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::limits::Limit;
use rusqlite::{Connection, OpenFlags};

/// The most rows read from one table of another tool's database; past it the read is refused.
pub const MAX_FOREIGN_ROWS: usize = 2_000_000;

/// The largest value (text or blob) read from another tool's database: SQLite refuses to make a
/// larger one (`SQLITE_LIMIT_LENGTH`), stored or computed, so it is never held.
pub const MAX_FOREIGN_VALUE_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes of text read from another tool's database in all (every session, message and
/// part, since the session to import is chosen from them); past it the read is refused.
pub const MAX_FOREIGN_BYTES: usize = 512 * 1024 * 1024;

/// The longest a read of another tool's database may take; SQLite is interrupted past it.
pub const FOREIGN_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// What one read of another tool's database may take; [`ForeignLimits::default`] is the stated
/// limits above, and tests and the fuzz target use smaller ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignLimits {
    pub rows: usize,
    pub value_bytes: usize,
    pub bytes: usize,
    pub time: Duration,
}

impl Default for ForeignLimits {
    fn default() -> ForeignLimits {
        ForeignLimits {
            rows: MAX_FOREIGN_ROWS,
            value_bytes: MAX_FOREIGN_VALUE_BYTES,
            bytes: MAX_FOREIGN_BYTES,
            time: FOREIGN_READ_TIMEOUT,
        }
    }
}

/// Why a foreign database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ForeignError {
    #[error("cannot open {} read-only: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("{} is not an OpenCode database: {source}", path.display())]
    NotOpenCode { path: PathBuf, source: rusqlite::Error },
    #[error(
        "{} is not an OpenCode database: its {table} is a {kind}, not a table, and Flame reads only tables from another tool's database",
        path.display()
    )]
    NotATable { path: PathBuf, table: String, kind: String },
    #[error("{} holds more than Flame reads from another tool's database: {what}", path.display())]
    TooLarge { path: PathBuf, what: String },
    #[error(
        "reading {} took longer than the {} s Flame gives another tool's database; nothing was imported",
        path.display(),
        limit.as_secs()
    )]
    TooSlow { path: PathBuf, limit: Duration },
}

/// A `session` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCodeSession {
    pub id: String,
    pub parent_id: Option<String>,
    pub title: String,
    pub directory: Option<String>,
    pub time_created: i64,
}

/// A `message` or `part` row: its id, its owner (session for a message, message for a part),
/// its creation time and its `data` JSON, unparsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCodeRow {
    pub id: String,
    pub owner: String,
    pub time_created: i64,
    pub data: String,
}

/// Everything an import needs from `opencode.db`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenCodeRows {
    pub sessions: Vec<OpenCodeSession>,
    pub messages: Vec<OpenCodeRow>,
    pub parts: Vec<OpenCodeRow>,
}

/// Reads the sessions, messages and parts of an OpenCode database without changing it (the
/// connection is read-only, so OpenCode may keep running), within [`ForeignLimits::default`].
pub fn read_opencode_db(path: &Path) -> Result<OpenCodeRows, ForeignError> {
    read_opencode_db_within(path, ForeignLimits::default())
}

/// [`read_opencode_db`] within `limits`. Rows come in each table's own order and are sorted
/// here, so SQLite never holds rows to sort them.
pub fn read_opencode_db_within(
    path: &Path,
    limits: ForeignLimits,
) -> Result<OpenCodeRows, ForeignError> {
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| ForeignError::Open { path: path.to_owned(), source })?;
    let value_limit = i32::try_from(limits.value_bytes).unwrap_or(i32::MAX);
    conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, value_limit)
        .map_err(|source| ForeignError::Open { path: path.to_owned(), source })?;
    // Functions a schema names (in a generated column, say) run as if they were untrusted.
    conn.execute_batch("PRAGMA trusted_schema = OFF; PRAGMA query_only = ON;")
        .map_err(|source| ForeignError::Open { path: path.to_owned(), source })?;
    let deadline = Instant::now() + limits.time;
    conn.progress_handler(1_000, Some(move || Instant::now() >= deadline))
        .map_err(|source| ForeignError::Open { path: path.to_owned(), source })?;

    let mut reader = Reader { limits, bytes: 0 };
    let failed = |err| reader_error(path, limits, err);
    for table in ["session", "message", "part"] {
        check_table(&conn, table).map_err(failed)?;
    }
    reader.weigh_data(&conn).map_err(failed)?;
    let mut sessions = reader
        .rows(
            &conn,
            "session",
            "SELECT id, parent_id, title, directory, time_created FROM session",
            |r| {
                Ok(OpenCodeSession {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    title: r.get(2)?,
                    directory: r.get(3)?,
                    time_created: r.get(4)?,
                })
            },
            |s| s.id.len() + s.title.len() + s.parent_id.as_ref().map_or(0, String::len),
        )
        .map_err(failed)?;
    sessions.sort_by(|a, b| (a.time_created, &a.id).cmp(&(b.time_created, &b.id)));
    let row = |r: &rusqlite::Row<'_>| {
        Ok(OpenCodeRow {
            id: r.get(0)?,
            owner: r.get(1)?,
            time_created: r.get(2)?,
            data: r.get(3)?,
        })
    };
    let size = |r: &OpenCodeRow| r.id.len() + r.owner.len() + r.data.len();
    let mut messages = reader
        .rows(&conn, "message", "SELECT id, session_id, time_created, data FROM message", row, size)
        .map_err(failed)?;
    messages.sort_by(|a, b| (a.time_created, &a.id).cmp(&(b.time_created, &b.id)));
    let mut parts = reader
        .rows(&conn, "part", "SELECT id, message_id, time_created, data FROM part", row, size)
        .map_err(failed)?;
    parts.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(OpenCodeRows { sessions, messages, parts })
}

/// Why one step of a read stopped.
enum ReadError {
    Sqlite(rusqlite::Error),
    NotATable { table: String, kind: String },
    TooLarge(String),
}

impl From<rusqlite::Error> for ReadError {
    fn from(err: rusqlite::Error) -> ReadError {
        ReadError::Sqlite(err)
    }
}

fn reader_error(path: &Path, limits: ForeignLimits, err: ReadError) -> ForeignError {
    let path = path.to_owned();
    match err {
        ReadError::NotATable { table, kind } => ForeignError::NotATable { path, table, kind },
        ReadError::TooLarge(what) => ForeignError::TooLarge { path, what },
        ReadError::Sqlite(source) => match source.sqlite_error_code() {
            Some(rusqlite::ErrorCode::OperationInterrupted) => {
                ForeignError::TooSlow { path, limit: limits.time }
            }
            Some(rusqlite::ErrorCode::TooBig) => ForeignError::TooLarge {
                path,
                what: format!("a value larger than {} bytes", limits.value_bytes),
            },
            _ => ForeignError::NotOpenCode { path, source },
        },
    }
}

/// Refuses `table` unless it is a table of the database's own: a view computes its rows (a
/// recursive one never ends), and a virtual table runs a module's code.
fn check_table(conn: &Connection, table: &str) -> Result<(), ReadError> {
    let found: Option<(String, String)> = conn
        .query_row(
            "SELECT type, coalesce(sql, '') FROM main.sqlite_schema WHERE name = ?1 COLLATE NOCASE",
            [table],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map(Some)
        .or_else(|err| match err {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            err => Err(err),
        })?;
    let kind = match found {
        // A missing table is refused by the read itself, with SQLite's words.
        None => return Ok(()),
        Some((kind, _)) if kind != "table" => kind,
        Some((_, sql)) if sql.trim_start().to_ascii_uppercase().starts_with("CREATE VIRTUAL") => {
            "virtual table".to_owned()
        }
        Some(_) => return Ok(()),
    };
    Err(ReadError::NotATable { table: table.to_owned(), kind })
}

/// Counts what a read has taken against its limits.
struct Reader {
    limits: ForeignLimits,
    bytes: usize,
}

impl Reader {
    /// Refuses a database whose messages' and parts' data come to more than `limits.bytes`,
    /// before any is read: `octet_length` takes a stored text's size from its header.
    fn weigh_data(&self, conn: &Connection) -> Result<(), ReadError> {
        let total: i64 = conn.query_row(
            "SELECT (SELECT coalesce(sum(octet_length(data)), 0) FROM message)
                  + (SELECT coalesce(sum(octet_length(data)), 0) FROM part)",
            [],
            |r| r.get(0),
        )?;
        if usize::try_from(total).map_or(true, |total| total > self.limits.bytes) {
            return Err(self.too_many_bytes());
        }
        Ok(())
    }

    fn too_many_bytes(&self) -> ReadError {
        ReadError::TooLarge(format!(
            "more than {} bytes of sessions, messages and parts",
            self.limits.bytes
        ))
    }

    /// The rows of `sql` over `table`, at most `limits.rows` of them and `limits.bytes` in all
    /// (with what was read before), each weighed by `weigh`.
    fn rows<T>(
        &mut self,
        conn: &Connection,
        table: &str,
        sql: &str,
        row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
        weigh: impl Fn(&T) -> usize,
    ) -> Result<Vec<T>, ReadError> {
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut read = Vec::new();
        while let Some(next) = rows.next()? {
            if read.len() == self.limits.rows {
                return Err(ReadError::TooLarge(format!(
                    "more than {} rows in its {table} table",
                    self.limits.rows
                )));
            }
            let value = row(next)?;
            self.bytes += weigh(&value);
            if self.bytes > self.limits.bytes {
                return Err(self.too_many_bytes());
            }
            read.push(value);
        }
        Ok(read)
    }
}
