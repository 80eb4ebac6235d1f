//! Flame's SQLite store.
//!
//! This is the only crate that writes SQL. It owns the database file, its pragmas and the
//! versioned migrations; the crates above it see typed operations, never connections. It also
//! reads other tools' databases read-only (`foreign`), so that no other crate needs SQLite.
//!
//! Opening sets WAL, foreign keys and a busy timeout, then applies the migrations
//! (`migrations.rs`). Opening failures are a typed `OpenError` (`NotADatabase`, `CannotOpen`,
//! `TooNew`, `Damaged`, `Sqlite`) because the callers tell the person something different for each.
//! `Store::open` runs SQLite's quick check first, naming at most `MAX_DAMAGE_LISTED` problems
//! (about 2.4 s on a 1 GB database once cached), so a damaged or newer file is refused before
//! anything writes to it and left exactly as it was. `Store::open_checking_aside` reads at once
//! and leaves the check to run beside the first reads (`damage_check.rs`): every commit waits
//! for it, and none is made on a damaged file. `Store::open_another` opens a second connection
//! held to the same check (the search catch-up's).
//!
//! Reads go through a 64 MiB page cache and are not memory-mapped (`mmap_size = 0`): mapped pages a
//! read had touched stayed resident as long as the app ran (256 MiB after opening a 100k-frame
//! tree). A connection keeps `PREPARED_STATEMENTS_KEPT` (128) prepared statements, since rusqlite's
//! default of 16 was fewer than a chat's round runs between two context assemblies, and plans each
//! statement for any value bound to it (SQLite's QPSG), since otherwise SQLite plans with a bound
//! range or `LIMIT` and prepares the statement again at every new value. What opening a tree reads
//! is served by the indexes of migration 12: `frames_outline` covers the outline's columns and the
//! usage aggregate's frame ids, and the partial `messages_open` finds the open replies without
//! scanning every message.
//!
//! The tables: `trees` (the focused frame, the running token total of its messages, its absolute
//! workspace folder or none), `frames`, `messages` (token count stored at insert),
//! `tree_allowed_kinds` (the kinds of workspace call the person allowed for the rest of a tree,
//! cleared when its workspace changes), `tree_network_allowed` (the trees whose sandboxed commands
//! may use the network, cleared likewise), `frame_files` (the file trail, a path changed listed only
//! as changed), `events` (every operation with its kind, frame, actor, time and an `EventDetail` as
//! JSON; `seq` orders them across processes, which is how other processes' changes are followed)
//! and `log_pending` (frames whose log file is behind). `StoreError` is `Frame` (refused or
//! invalid, nothing changed), `IdTaken` (retry with a new id) or `Sqlite` (rolled back).
//!
//! Usage (`Store::usage_by_frame_and_model`, migrations 9 and 13) is one aggregate per tree of
//! every reply's recorded usage by frame and model, from which costs are computed; `usage_by_model`
//! is one frame's. A message's usage is stored as four integer columns, each capped at 2^32 so no
//! sum overflows (`rows::UsageColumns`), and its `usage` JSON is left NULL unless a count is over
//! the cap, so a message reads back exactly what was written. Migration 13 filled the columns of
//! older rows from their JSON and kept that JSON. The partial index `messages_usage` holds the
//! frame, the model and the four columns of assistant messages, so the usage queries read it alone
//! and never parse JSON (an `EXPLAIN QUERY PLAN` test checks it).

mod damage_check;
pub mod foreign;
mod frames;
mod import;
mod migrations;
mod rows;
mod search;
#[cfg(feature = "synthetic")]
pub mod synthetic;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode as SqliteCode, OpenFlags};

pub use damage_check::DamageCheck;
pub use frames::{
    BudgetedSpend, Change, CheckpointRow, DeletedTree, FollowCursor, FollowFrameChange,
    FollowMessage, FollowNewFrame, FollowStored, FollowUpdate, FollowedFrame, FollowedSession,
    GATEWAY_SOURCE, GatewayCall, LaterChange, MAX_CHECKPOINT_PATHS, MAX_MESSAGE_BYTES,
    MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS, NewCheckpoint, OpenReply, PlanItem, Pop, ReplyOwner,
    Rewrite, RollbackRecord, SavedContext, StoredToolResult, SubtreeUsage, TreeSummary,
    VersionedContext, fit_reply, truncation_note,
};
pub use import::{ImportCounts, ImportedMessage};
pub use migrations::LATEST_SCHEMA_VERSION;
pub use search::{
    DEFAULT_SEARCH_HITS, HitPlace, MAX_SEARCH_HITS, MAX_SEARCH_QUERY_CHARS, MAX_SEARCH_WORDS,
    MIN_PREFIX_CHARS, SNIPPET_WORDS, SearchError, SearchHit, SnippetPart,
};

use flame_model::FrameError;

/// How long a writer waits for another process's lock before giving up. The app, the command
/// line and MCP servers share one database, so short waits are normal and must not fail.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the store could not be opened. Callers branch on this: an unreadable file is shown to the
/// person differently from a location that cannot be written at all.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The file exists but is not an SQLite database (or is damaged beyond SQLite's recognition).
    #[error("{} is not a Flame database (the file is damaged or is some other kind of file)", path.display())]
    NotADatabase { path: PathBuf },
    /// The file or its folder cannot be opened or written.
    #[error("cannot open the database at {}: {source}", path.display())]
    CannotOpen { path: PathBuf, source: rusqlite::Error },
    /// The database was written by a newer Flame; opening it would risk data written by that
    /// version, so it is refused rather than migrated downwards.
    #[error(
        "the database at {} has schema version {found}, newer than this Flame understands ({supported}); update Flame",
        path.display()
    )]
    TooNew { path: PathBuf, found: u32, supported: u32 },
    /// SQLite's quick check found the file damaged (a page overwritten or lost, say): it is
    /// refused before anything is written to it, with the first things the check found.
    #[error(
        "the database at {} is damaged; SQLite found: {}",
        path.display(),
        found.join("; ")
    )]
    Damaged { path: PathBuf, found: Vec<String> },
    /// Any other SQLite failure while opening or migrating.
    #[error("cannot prepare the database at {}: {source}", path.display())]
    Sqlite { path: PathBuf, source: rusqlite::Error },
}

/// Why a store operation failed. Callers branch on it: a refused frame operation goes back to
/// the person or model as it is; a taken id is retried with another; the rest is a fault.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The lifecycle rules or the input refused the operation; nothing was changed.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A new tree or frame id is already in use; nothing was changed.
    #[error("the id {0} is already taken")]
    IdTaken(String),
    /// SQLite failed; the transaction was rolled back.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The file's quick check found it unusable, so nothing is written to it
    /// ([`Store::open_checking_aside`]).
    #[error("{0}")]
    Unusable(Arc<OpenError>),
}

impl StoreError {
    /// A primary-key clash on insert means the id is taken; anything else stays a fault.
    fn taken_or(err: rusqlite::Error, id: &str) -> StoreError {
        match err.sqlite_error_code() {
            Some(SqliteCode::ConstraintViolation) if err.to_string().contains(".id") => {
                StoreError::IdTaken(id.to_owned())
            }
            _ => StoreError::Sqlite(err),
        }
    }
}

/// An open Flame database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The file's quick check, which every commit on `conn` waits for.
    check: DamageCheck,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, refuses it if SQLite's quick check
    /// finds it damaged ([`OpenError::Damaged`], the file left as it was), switches it to WAL,
    /// and applies any pending migrations. The folder must already exist. The check reads every
    /// page: about 2.4 s for a 1 GB database (100k frames, 1M messages) once cached.
    pub fn open(path: &Path) -> Result<Store, OpenError> {
        Store::open_with(path, Checking::Now)
    }

    /// Opens the database at `path` as [`Store::open`] does, but leaves its quick check to run
    /// beside the first reads: its [`DamageCheck`] ([`Store::damage_check`]) is the caller's to
    /// run (`DamageCheck::run`, on a thread of its own), and every commit waits for it; none is
    /// made if it finds the file damaged. A file that a migration must change first, or that is
    /// new, is checked before it opens, as by [`Store::open`].
    pub fn open_checking_aside(path: &Path) -> Result<Store, OpenError> {
        Store::open_with(path, Checking::Aside)
    }

    /// Another connection to a database this process has opened, held to the same quick check
    /// `check` (its commits wait for it): opened the same way but without checking every page
    /// again.
    pub fn open_another(path: &Path, check: &DamageCheck) -> Result<Store, OpenError> {
        Store::open_with(path, Checking::With(check.clone()))
    }

    fn open_with(path: &Path, checking: Checking) -> Result<Store, OpenError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let sqlite = |source| classify(path, source);
        let mut conn = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        let checking = match checking {
            // Only a file at this version may be read before it is checked: any other is
            // migrated (written) or refused as it opens.
            Checking::Aside
                if migrations::current_version(&conn).map_err(sqlite)? == LATEST_SCHEMA_VERSION =>
            {
                Checking::With(DamageCheck::pending(path))
            }
            Checking::Aside => Checking::Now,
            other => other,
        };
        let check = match checking {
            Checking::With(check) => {
                check.guard(&mut conn).map_err(sqlite)?;
                check
            }
            _ => {
                quick_check(&conn, path)?;
                DamageCheck::passed(path)
            }
        };
        configure(&conn).map_err(sqlite)?;
        migrations::apply(&mut conn, path)?;
        tracing::debug!(path = %path.display(), "store opened");
        Ok(Store { conn, path: path.to_path_buf(), check })
    }

    /// The file's quick check, which every commit on this connection waits for.
    pub fn damage_check(&self) -> &DamageCheck {
        &self.check
    }

    /// The database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the database is at; after `open` this is [`LATEST_SCHEMA_VERSION`].
    pub fn schema_version(&self) -> rusqlite::Result<u32> {
        migrations::current_version(&self.conn)
    }

    /// The journal mode SQLite reports, lower-case (`"wal"` once opened).
    pub fn journal_mode(&self) -> rusqlite::Result<String> {
        self.conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))
    }
}

/// The most problems SQLite's quick check lists when a database is damaged; the first few say
/// what happened, and a badly damaged file would list thousands.
pub const MAX_DAMAGE_LISTED: usize = 5;

/// Runs SQLite's quick check (every page's structure and the records' format, without checking
/// the indexes against their tables, which would read every row again) before anything writes to
/// the file: a damaged database is refused with what the check found, and left as it was.
pub(crate) fn quick_check(conn: &Connection, path: &Path) -> Result<(), OpenError> {
    let rows: Vec<String> = conn
        .prepare(&format!("PRAGMA quick_check({MAX_DAMAGE_LISTED})"))
        .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect())
        .map_err(|source| classify(path, source))?;
    if rows.len() == 1 && rows[0] == "ok" {
        return Ok(());
    }
    // A row may hold several problems, one a line, after the name of the database they are in.
    let found = rows
        .iter()
        .flat_map(|row| row.lines())
        .filter(|line| !line.starts_with("***") && !line.trim().is_empty())
        .take(MAX_DAMAGE_LISTED)
        .map(str::to_owned)
        .collect();
    Err(OpenError::Damaged { path: path.to_path_buf(), found })
}

/// How many prepared statements a connection keeps for `prepare_cached`, least recently used
/// dropped first. The store prepares about 65 statements this way; rusqlite's default of 16 is
/// fewer than a chat's round runs between two context assemblies (the reply and the tool result
/// written, the path and the messages read), so each assembly prepared its statements again
/// (`events_since` was 13% of an assembly). Each costs a few KiB, only once it has been used.
const PREPARED_STATEMENTS_KEPT: usize = 128;

/// Applies the connection settings every Flame connection needs. Reading `journal_mode` is also
/// the first real read of the file, which is where SQLite notices a file that is not a database.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS_KEPT);
    // SQLite may plan a statement with the values bound to it (a range's bound, a `LIMIT`), and
    // then prepares it again whenever other values are bound: `events_since` and
    // `messages_after`, which every context assembly runs with new values, were prepared again at
    // every run (14% of an assembly between them). The store's statements are planned for any
    // value, as they are written.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(%mode, "SQLite refused WAL; concurrent readers will wait for writers");
    }
    // A 64 MiB page cache keeps large trees (100k frames, 1M messages) fast to load; it is an
    // upper bound, not an allocation. Reads are not memory-mapped: every mapped page a read
    // touches stays in the process's resident memory for as long as the connection is open (the
    // app held 256 MiB of its 500 MB database mapped after opening a 100k-frame tree), where
    // the page cache holds at most its bound, and the reads that open a tree are served by
    // indexes small enough (migration 12) that mapping gained nothing measurable.
    conn.execute_batch(&format!(
        "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;
         PRAGMA cache_size = -{PAGE_CACHE_KIB}; PRAGMA mmap_size = 0;"
    ))?;
    Ok(())
}

/// The bound of each connection's page cache, in KiB (`configure`).
pub(crate) const PAGE_CACHE_KIB: u32 = 64 * 1024;

/// When a connection's file is checked.
enum Checking {
    /// Before the connection is handed out.
    Now,
    /// Beside its first reads, unless the file must be migrated first.
    Aside,
    /// By this check, shared with the connections opened before it.
    With(DamageCheck),
}

/// Sorts an SQLite error met while opening into the cases a person can act on differently.
pub(crate) fn classify(path: &Path, source: rusqlite::Error) -> OpenError {
    let path = path.to_path_buf();
    match source.sqlite_error_code() {
        Some(SqliteCode::NotADatabase) => OpenError::NotADatabase { path },
        // What SQLite met while reading (the quick check's own read, the schema) was damaged.
        Some(SqliteCode::DatabaseCorrupt) => {
            OpenError::Damaged { path, found: vec![source.to_string()] }
        }
        Some(
            SqliteCode::CannotOpen
            | SqliteCode::ReadOnly
            | SqliteCode::PermissionDenied
            | SqliteCode::DiskFull
            | SqliteCode::SystemIoFailure,
        ) => OpenError::CannotOpen { path, source },
        _ => OpenError::Sqlite { path, source },
    }
}

/// A fresh store in a temporary folder and SQLite's plan for `sql` with `params` in it, one line
/// a step: what the tests of the queries' plans read.
#[cfg(test)]
pub(crate) fn query_plan(sql: &str, params: impl rusqlite::Params) -> String {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("flame.db")).unwrap();
    let mut stmt = store.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let plan: Vec<String> =
        stmt.query_map(params, |row| row.get(3)).unwrap().collect::<Result<_, _>>().unwrap();
    plan.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_sorts_not_a_database_apart() {
        let err = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
            None,
        );
        assert!(matches!(classify(Path::new("x.db"), err), OpenError::NotADatabase { .. }));
    }

    #[test]
    fn classify_sorts_cannot_open_apart() {
        let err = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            None,
        );
        assert!(matches!(classify(Path::new("x.db"), err), OpenError::CannotOpen { .. }));
    }
}
