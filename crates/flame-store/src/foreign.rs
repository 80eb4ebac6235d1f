//! Reading other tools' SQLite databases, read-only, as plain rows: OpenCode's `opencode.db`
//! (from OpenCode 1.2). This crate is the only one that talks to SQLite, so the importers get
//! rows from here and never a connection. Nothing here writes.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

/// Why a foreign database could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ForeignError {
    #[error("cannot open {} read-only: {source}", path.display())]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("{} is not an OpenCode database: {source}", path.display())]
    NotOpenCode { path: PathBuf, source: rusqlite::Error },
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
/// connection is read-only, so OpenCode may keep running).
pub fn read_opencode_db(path: &Path) -> Result<OpenCodeRows, ForeignError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| ForeignError::Open { path: path.to_owned(), source })?;
    let not = |source| ForeignError::NotOpenCode { path: path.to_owned(), source };
    let sessions = conn
        .prepare("SELECT id, parent_id, title, directory, time_created FROM session ORDER BY time_created, id")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| {
                Ok(OpenCodeSession {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    title: r.get(2)?,
                    directory: r.get(3)?,
                    time_created: r.get(4)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()
        })
        .map_err(not)?;
    let rows = |sql: &str| -> Result<Vec<OpenCodeRow>, ForeignError> {
        conn.prepare(sql)
            .and_then(|mut stmt| {
                stmt.query_map([], |r| {
                    Ok(OpenCodeRow {
                        id: r.get(0)?,
                        owner: r.get(1)?,
                        time_created: r.get(2)?,
                        data: r.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(not)
    };
    Ok(OpenCodeRows {
        sessions,
        messages: rows(
            "SELECT id, session_id, time_created, data FROM message ORDER BY time_created, id",
        )?,
        parts: rows("SELECT id, message_id, time_created, data FROM part ORDER BY id")?,
    })
}
