//! Bulk import of a whole tree in one transaction, for transcripts from other tools.
//!
//! `import_tree` refuses a tree whose messages state more than `MAX_IMPORTED_TREE_TOKENS` (2^48)
//! tokens in all, so live sums never overflow SQLite's integers; `import_tree_with_trails` writes
//! the frames' trails in the same transaction, within the trail's limits (paths past them are
//! counted in `ImportCounts`).
//!
//! An import is fast because it does not index as it goes: it leaves its frames and messages to be
//! indexed for search afterwards (migrations 11 and 14; indexing a million messages was over half
//! of the import's time), recording their id range and tree in `search_pending`, naming its tree in
//! `frame_search_pending` and giving its frames no `frame_search_rows` row (see `search.rs`).
//! Inside its transaction it drops the two insert triggers (a trigger makes SQLite keep a statement
//! journal per insert) and, when it writes at least as many rows as a table holds, the secondary
//! indexes of `frames`, `messages` and `events` (rows written one by one land at random places in
//! them), and creates them again from their own text in `sqlite_schema` before committing, so no
//! other connection sees the schema without them; `messages_open` stays, since an import writes no
//! open reply. The indexes are made again with SQLite's sorter on helper threads (`PRAGMA threads`,
//! one fewer than the processors) and a 16 MiB page cache, since the sorter hands a helper a chunk
//! only once it is as large as the cache. Foreign keys and CHECK constraints are off on its
//! connection meanwhile (every row it writes names the tree or a frame it holds, and every checked
//! column comes from a typed value) and back on once its transaction ends. Messages are written 50
//! to a statement (each row bound by `rows::MessageRow`, as a live message's is), `imported` events
//! 100 to a statement, and their `log_pending` rows in one statement.

use flame_model::{
    EventDetail, EventKind, FileTrail, Frame, FrameError, FrameTree, MessageId, NewMessage,
    Timestamp, Tree,
};
use rusqlite::{TransactionBehavior, params};

use crate::frames::{Change, MAX_MESSAGE_BYTES, MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS};
use crate::{Store, StoreError, rows};

/// The most message tokens an imported tree may hold in all. Far above any real tree (a million
/// messages of a full context window each), and far below `i64::MAX`, so the sums the store
/// keeps in SQLite's 64-bit integers can grow by live messages afterwards without overflowing.
pub const MAX_IMPORTED_TREE_TOKENS: u64 = 1 << 48;

/// A message to import, with its frame, its time and its counted tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedMessage {
    /// Index into the imported frames.
    pub frame: usize,
    pub message: NewMessage,
    pub tokens: u64,
    pub at: Timestamp,
}

/// How many rows an import wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportCounts {
    pub frames: u64,
    pub messages: u64,
    /// Paths of the frames' trails recorded, and left out for [`MAX_TRAIL_PATHS`] or
    /// [`MAX_TRAIL_PATH_BYTES`].
    pub trail_paths: u64,
    pub trail_paths_left_out: u64,
}

impl Store {
    /// Imports a whole tree: its frames (which must form a valid tree, checked first) and their
    /// messages, with one `imported` event per frame. All of it or none of it is written. A
    /// message over [`MAX_MESSAGE_BYTES`] or a tree over [`MAX_IMPORTED_TREE_TOKENS`] is refused
    /// (the facade cuts long messages to fit before it gets here).
    pub fn import_tree(
        &mut self,
        change: Change,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
    ) -> Result<ImportCounts, StoreError> {
        self.import_tree_with_trails(change, tree, frames, messages, &[])
    }

    /// [`Store::import_tree`], with the file trails of the frames: `(frame index, trail)`, each
    /// written to `frame_files` in the same transaction. As with live tool results, a path over
    /// [`MAX_TRAIL_PATH_BYTES`] and the paths of a frame past [`MAX_TRAIL_PATHS`] (changed ones
    /// first) are left out and counted; a trail naming a frame that is not imported refuses the
    /// import.
    pub fn import_tree_with_trails(
        &mut self,
        change: Change,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
        trails: &[(usize, FileTrail)],
    ) -> Result<ImportCounts, StoreError> {
        self.import_tree_then(change, tree, frames, messages, trails, |_| Ok(()))
    }

    /// [`Store::import_tree_with_trails`], with `then` writing more in the import's transaction
    /// before it commits (a followed session's rows, `follow.rs`).
    pub(crate) fn import_tree_then(
        &mut self,
        change: Change,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
        trails: &[(usize, FileTrail)],
        then: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), StoreError>,
    ) -> Result<ImportCounts, StoreError> {
        if let Some((frame, _)) = trails.iter().find(|(frame, _)| *frame >= frames.len()) {
            return Err(FrameError::Invalid(format!(
                "an imported file trail names frame {frame} of {}",
                frames.len()
            ))
            .into());
        }
        let whole = FrameTree::new(tree.clone(), frames.to_vec());
        whole.check_invariants().map_err(|broken| {
            FrameError::Invalid(format!("the imported tree is not valid: {broken}"))
        })?;
        let mut counts = vec![(0u64, 0u64); frames.len()];
        for m in messages {
            let slot = counts.get_mut(m.frame).ok_or_else(|| {
                FrameError::Invalid(format!(
                    "an imported message names frame {} of {}",
                    m.frame,
                    frames.len()
                ))
            })?;
            if m.message.content.len() > MAX_MESSAGE_BYTES {
                return Err(FrameError::Invalid(format!(
                    "an imported message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit",
                    m.message.content.len()
                ))
                .into());
            }
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(m.tokens);
        }
        // Every frame's total is at most the tree's, so bounding the tree bounds them all.
        let message_tokens = counts.iter().map(|c| c.1).fold(0, u64::saturating_add);
        if message_tokens > MAX_IMPORTED_TREE_TOKENS {
            return Err(FrameError::Invalid(format!(
                "the imported messages state {message_tokens} tokens in all, over the limit of {MAX_IMPORTED_TREE_TOKENS}"
            ))
            .into());
        }

        // Changed for this connection while the import writes; restored once its transaction
        // ends, whether it commits or not (see `BulkSettings`).
        let settings = BulkSettings::apply(&self.conn)?;
        let written = write_import(
            &self.conn,
            change,
            tree,
            frames,
            messages,
            trails,
            &counts,
            message_tokens,
            then,
        );
        let restored = settings.restore();
        let counts = written?;
        restored?;
        Ok(counts)
    }
}

/// Writes a checked import in one transaction, with the search indexes' insert triggers and,
/// when the import is the larger part of a table, the table's secondary indexes taken away
/// meanwhile (`Suspended`) and put back before it commits, and its frames and messages recorded
/// as left to index for search (`leave_to_index`); `then` writes last, before the commit.
#[allow(clippy::too_many_arguments)]
fn write_import(
    conn: &rusqlite::Connection,
    change: Change,
    tree: &Tree,
    frames: &[Frame],
    messages: &[ImportedMessage],
    trails: &[(usize, FileTrail)],
    counts: &[(u64, u64)],
    message_tokens: u64,
    then: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<(), StoreError>,
) -> Result<ImportCounts, StoreError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    tx.execute(
        "INSERT INTO trees (id, title, root_id, focus_id, created_at, message_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![tree.id.as_str(), tree.title, tree.root.as_str(), tree.focus.as_str(), tree.created_at, message_tokens as i64],
    )
    .map_err(|e| StoreError::taken_or(e, tree.id.as_str()))?;
    // A range left to index that reaches past the largest message id (its last messages were
    // deleted) overlaps the ids this import gets, which SQLite gives again, and the catch-up
    // would then index those messages twice; such ranges are indexed now, before any is written.
    let overlapping: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM search_pending
                        WHERE last > (SELECT coalesce(max(id), 0) FROM messages))",
        [],
        |r| r.get(0),
    )?;
    if overlapping {
        crate::search::index_pending(&tx)?;
    }
    let suspended = Suspended::take_away(&tx, frames.len(), messages.len())?;
    {
        let mut insert_frame = tx.prepare(
            "INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria,
                 success_criteria_compacted, status, status_reason, results, results_compacted,
                 artifacts, decisions, retry_of, created_at, started_at, ended_at, message_count, tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
        )?;
        // Parents before children, so every parent row exists when its child is written.
        let mut order: Vec<usize> = Vec::with_capacity(frames.len());
        let index: std::collections::HashMap<_, _> =
            frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
        let mut stack = vec![index[&tree.root]];
        let children = children_by_parent(frames, &index);
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(children[i].iter().copied());
        }
        for &i in &order {
            let f = &frames[i];
            let (message_count, tokens) = counts[i];
            insert_frame
                .execute(params![
                    f.id.as_str(),
                    tree.id.as_str(),
                    f.parent.as_ref().map(|p| p.as_str()),
                    f.position,
                    f.title,
                    f.success_criteria,
                    f.success_criteria_compacted,
                    f.status.as_str(),
                    f.status_reason,
                    f.results,
                    f.results_compacted,
                    rows::json_list(&f.artifacts),
                    rows::json_list(&f.decisions),
                    // Set below, once every frame exists: a retry may come before the
                    // attempt it retries in this order.
                    None::<&str>,
                    f.created_at,
                    f.started_at,
                    f.ended_at,
                    message_count as i64,
                    tokens as i64,
                ])
                .map_err(|e| StoreError::taken_or(e, f.id.as_str()))?;
        }
        let mut set_retry = tx.prepare("UPDATE frames SET retry_of = ?1 WHERE id = ?2")?;
        for f in frames {
            if let Some(original) = &f.retry_of {
                set_retry.execute(params![original.as_str(), f.id.as_str()])?;
            }
        }
    }
    let ranges = insert_messages(&tx, frames, messages)?;
    {
        // The import holds the write lock, so the events past the largest seq before it are its
        // own, one a frame.
        let before: i64 =
            tx.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
        let mut full = tx.prepare(&insert_events_sql(EVENTS_PER_STATEMENT))?;
        for (chunk, ranges) in
            frames.chunks(EVENTS_PER_STATEMENT).zip(ranges.chunks(EVENTS_PER_STATEMENT))
        {
            let details: Vec<String> = chunk
                .iter()
                .zip(ranges)
                .map(|(f, range)| {
                    EventDetail::Imported {
                        title: f.title.clone(),
                        success_criteria: f.success_criteria.clone(),
                        first_message: range.map(|r| MessageId(r.0)),
                        last_message: range.map(|r| MessageId(r.1)),
                    }
                    .to_json()
                })
                .collect();
            let shared: [&dyn rusqlite::ToSql; 4] = [
                &tree.id.as_str(),
                &EventKind::Imported.as_str(),
                &change.actor.as_str(),
                &change.at,
            ];
            let ids: Vec<&str> = chunk.iter().map(|f| f.id.as_str()).collect();
            let values =
                shared.into_iter().chain(ids.iter().zip(&details).flat_map(|(id, detail)| {
                    [id as &dyn rusqlite::ToSql, detail as &dyn rusqlite::ToSql]
                }));
            if chunk.len() == EVENTS_PER_STATEMENT {
                full.execute(rusqlite::params_from_iter(values))?;
            } else {
                tx.prepare(&insert_events_sql(chunk.len()))?
                    .execute(rusqlite::params_from_iter(values))?;
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO log_pending (frame_id, through_seq)
             SELECT frame_id, seq FROM events WHERE seq > ?1",
            [before],
        )?;
    }
    let (mut trail_paths, mut trail_paths_left_out) = (0u64, 0u64);
    {
        // `OR IGNORE`: a path listed twice, or a frame listed twice, keeps one row.
        let mut insert_path = tx.prepare(
            "INSERT OR IGNORE INTO frame_files (frame_id, changed, path) VALUES (?1, ?2, ?3)",
        )?;
        let mut recorded = vec![0usize; frames.len()];
        for (frame, trail) in trails {
            // A path both read and changed is recorded as changed only, as live results do.
            let changed: std::collections::HashSet<&String> = trail.changed.iter().collect();
            let paths = trail
                .changed
                .iter()
                .map(|p| (p, true))
                .chain(trail.read.iter().filter(|p| !changed.contains(p)).map(|p| (p, false)));
            for (path, changed) in paths {
                if path.len() > MAX_TRAIL_PATH_BYTES || recorded[*frame] >= MAX_TRAIL_PATHS {
                    trail_paths_left_out += 1;
                    continue;
                }
                if insert_path.execute(params![frames[*frame].id.as_str(), changed, path])? > 0 {
                    recorded[*frame] += 1;
                    trail_paths += 1;
                }
            }
        }
    }
    suspended.put_back(&tx)?;
    leave_to_index(&tx, &tree.id, &ranges)?;
    tx.execute(
        "INSERT INTO store_meta (key, value) VALUES ('current_tree', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [tree.id.as_str()],
    )?;
    then(&tx)?;
    tx.commit()?;
    Ok(ImportCounts {
        frames: frames.len() as u64,
        messages: messages.len() as u64,
        trail_paths,
        trail_paths_left_out,
    })
}

/// The connection settings an import changes while it writes, restored once its transaction
/// ends, whether it commits or not.
///
/// Foreign keys and CHECK constraints are off. Each costs every imported row a lookup or a small
/// temporary table (`role IN (...)` is one), which together were a fifth of a large import's
/// time, and neither can fail for a checked import: every frame, message, event and trail row
/// names the tree or a frame written in the same transaction (the import refuses a message or
/// trail naming a frame it does not hold, and `FrameTree::check_invariants` a parent or retried
/// attempt it does not hold), and every checked column is written from a typed value (`Role`,
/// `Status`, `Actor`, a `u32` position, a `bool`). The unique keys stay, so a frame id that is
/// taken still refuses the import. SQLite ignores `PRAGMA foreign_keys` inside a transaction, so
/// this is set before the import's transaction begins and restored after it ends; both pragmas
/// expire the connection's prepared statements, which SQLite prepares again, with the checks,
/// when they are next used.
///
/// SQLite may sort with helper threads (`PRAGMA threads`, none by default), one fewer than the
/// processors, so that the indexes an import makes again are sorted on all of them (see
/// `Suspended::put_back`).
struct BulkSettings<'c> {
    conn: &'c rusqlite::Connection,
    restored: bool,
}

impl<'c> BulkSettings<'c> {
    fn apply(conn: &'c rusqlite::Connection) -> Result<BulkSettings<'c>, StoreError> {
        // Made first, so that a failure halfway restores what was changed.
        let settings = BulkSettings { conn, restored: false };
        let helpers = std::thread::available_parallelism().map_or(0, |n| n.get() - 1).min(4);
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON;
             PRAGMA threads = {helpers};"
        ))?;
        Ok(settings)
    }

    fn restore(mut self) -> Result<(), StoreError> {
        self.restored = true;
        self.conn.execute_batch(&BulkSettings::restoring()).map_err(|e| {
            tracing::error!(error = %e, "could not restore the store's settings after an import");
            e.into()
        })
    }

    /// The settings every connection has (`crate::configure`), the page cache included, which
    /// `Suspended::put_back` changes.
    fn restoring() -> String {
        format!(
            "PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF; PRAGMA threads = 0;
             PRAGMA cache_size = -{};",
            crate::PAGE_CACHE_KIB
        )
    }
}

impl Drop for BulkSettings<'_> {
    /// The settings come back even when the import panics, so the connection is never left
    /// without its checks.
    fn drop(&mut self) {
        if !self.restored
            && let Err(e) = self.conn.execute_batch(&BulkSettings::restoring())
        {
            tracing::error!(error = %e, "could not restore the store's settings after an import");
        }
    }
}

/// What a bulk import takes away from the schema while it writes, inside its transaction, and
/// puts back from their own SQL text (read from `sqlite_schema`, so each has one definition)
/// before it commits; no other connection ever sees the schema without them.
///
/// - The search indexes' insert triggers (`message_search_insert`, `frame_search_insert`): a
///   trigger on a table makes SQLite keep a statement journal for each insert, and FTS5 writes
///   what it holds to disk at the start of each statement that changes it, so indexing row by
///   row left a sliver of index per row to merge later. The import leaves its frames and
///   messages to the catch-up instead (`leave_to_index`), which indexes them in bulk.
/// - The secondary indexes of `frames`, `messages` and `events` (but the partial ones that hold
///   none of its rows, `KEPT_INDEXES`), when the import writes at least as many rows as the
///   table held: an index written row by row is written in the rows' order,
///   which is random in the index's (a message's frame), a page read and changed per row, while
///   `CREATE INDEX` sorts its entries and writes each page once. Building an index over every
///   row of a table took about half as long as adding the same number of rows one by one (a
///   million messages: 2.5 s against 5.4 s for `messages`' two), so it pays when the import is at
///   least as large as what the table holds; a small import into a large store adds its entries
///   one by one.
struct Suspended {
    /// The `CREATE` statements to run again, indexes first.
    sql: Vec<String>,
    /// Whether any index was taken away, to be made again.
    indexes: bool,
}

/// The page cache, in KiB, while an import makes indexes again (`Suspended::put_back`).
const SORT_CHUNK_KIB: u32 = 16 * 1024;

/// The search indexes' insert triggers (migration 10).
const INSERT_TRIGGERS: [&str; 2] = ["message_search_insert", "frame_search_insert"];

/// The tables whose secondary indexes a large import rebuilds.
const REBUILT_TABLES: [&str; 3] = ["frames", "messages", "events"];

/// Partial indexes that hold none of an import's rows, kept in place while it writes: SQLite
/// only tests each row against the index's `WHERE`, where making the index again would read
/// every row of its table (a million messages: about 0.1 s). `messages_open` holds the replies
/// still open (migration 12), and an import writes closed messages only.
const KEPT_INDEXES: [&str; 1] = ["messages_open"];

impl Suspended {
    fn take_away(
        tx: &rusqlite::Transaction<'_>,
        frames: usize,
        messages: usize,
    ) -> Result<Suspended, StoreError> {
        let mut taken: Vec<(&str, String, String)> = Vec::new();
        for (table, written) in REBUILT_TABLES.into_iter().zip([frames, messages, frames]) {
            // The largest rowid bounds the rows a table holds (deleted trees leave gaps), and
            // SQLite reads it from the end of the table without counting.
            let held: i64 =
                tx.query_row(&format!("SELECT coalesce(max(rowid), 0) FROM {table}"), [], |r| {
                    r.get(0)
                })?;
            if (written as i64) < held {
                continue;
            }
            // Indexes SQLite made for a UNIQUE or PRIMARY KEY constraint have no SQL text, and
            // stay.
            let mut stmt = tx.prepare(
                "SELECT name, sql FROM sqlite_schema
                 WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL ORDER BY name",
            )?;
            let rows = stmt.query_map([table], |r| Ok(("INDEX", r.get(0)?, r.get(1)?)))?;
            for row in rows {
                let row: (&str, String, String) = row?;
                if !KEPT_INDEXES.contains(&row.1.as_str()) {
                    taken.push(row);
                }
            }
        }
        for name in INSERT_TRIGGERS {
            let sql: String = tx.query_row(
                "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = ?1",
                [name],
                |r| r.get(0),
            )?;
            taken.push(("TRIGGER", name.to_owned(), sql));
        }
        for (kind, name, _) in &taken {
            tx.execute_batch(&format!("DROP {kind} \"{name}\""))?;
        }
        let indexes = taken.iter().any(|(kind, _, _)| *kind == "INDEX");
        Ok(Suspended { sql: taken.into_iter().map(|(_, _, sql)| sql).collect(), indexes })
    }

    /// Makes the indexes again with a smaller page cache, of `SORT_CHUNK_KIB`: SQLite sorts an
    /// index's entries in chunks as large as the page cache, and hands a chunk to a helper
    /// thread (`BulkSettings`) only once it is full, so with the store's 64 MiB cache a million
    /// messages' entries were one chunk sorted on one thread. With 16 MiB chunks making the
    /// messages' two indexes took 1.0 s rather than 1.4 on two processors. The cache comes back
    /// after, and with `BulkSettings` if this fails.
    fn put_back(self, tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
        // A small import into a large store makes no index again, and keeps the cache it warmed.
        if self.indexes {
            tx.execute_batch(&format!("PRAGMA cache_size = -{SORT_CHUNK_KIB}"))?;
        }
        for sql in &self.sql {
            tx.execute_batch(sql)?;
        }
        if self.indexes {
            tx.execute_batch(&format!("PRAGMA cache_size = -{}", crate::PAGE_CACHE_KIB))?;
        }
        Ok(())
    }
}

/// How many `imported` events one statement writes. An insert into `events`, whose seq is
/// `AUTOINCREMENT`, reads and writes the table's row of `sqlite_sequence` once a statement, and
/// each statement is stepped and reset; one row a statement cost a 100k-frame import about a
/// tenth of a second more. 100 rows bind 204 values, far below SQLite's limit of 32,766.
const EVENTS_PER_STATEMENT: usize = 100;

/// An insert of `rows` `imported` events, in the order given (so their seqs follow the frames'
/// order): ?1 the tree, ?2 the kind, ?3 the actor and ?4 the time, shared, then each event's
/// frame and detail.
fn insert_events_sql(rows: usize) -> String {
    let values: Vec<String> =
        (0..rows).map(|i| format!("(?1, ?{}, ?2, ?3, ?4, ?{})", 5 + 2 * i, 6 + 2 * i)).collect();
    format!(
        "INSERT INTO events (tree_id, frame_id, kind, actor, at, detail) VALUES {}",
        values.join(", ")
    )
}

/// Leaves an imported tree's frames and messages to be indexed for search by
/// [`Store::catch_up_search`]: the tree goes into `frame_search_pending` (migration 14) and its
/// messages' range of ids into `search_pending` (migration 11), and every search indexes what
/// these name before it reads the index. Indexing a million messages was over half of such an
/// import's time, and 100k frames' titles and results a fifteenth. `messages` are the ranges of
/// message ids written.
///
/// FTS5's own settings are kept: its segments of 1 MiB merged four at a time. Larger segments,
/// or merging more of them at once, made indexing up to a third faster but left large segments
/// where live writes' segments are merged, and a later message's commit then merged them, once
/// for most of a second.
fn leave_to_index(
    tx: &rusqlite::Transaction<'_>,
    tree: &flame_model::TreeId,
    messages: &[Option<(i64, i64)>],
) -> Result<(), StoreError> {
    // A tree of the same id imported before and deleted may still be named.
    tx.execute("INSERT OR IGNORE INTO frame_search_pending (tree) VALUES (?1)", [tree.as_str()])?;
    // The import holds the write lock, so its messages' ids run without a gap, and no message
    // outside the import has an id in the range.
    let written = messages.iter().flatten();
    if let (Some(first), Some(last)) =
        (written.clone().map(|r| r.0).min(), written.map(|r| r.1).max())
    {
        tx.execute(
            "INSERT INTO search_pending (first, last, tree) VALUES (?1, ?2, ?3)",
            params![first, last, tree.as_str()],
        )?;
    }
    Ok(())
}

/// How many messages one statement writes. Each statement is stepped and reset once, so writing
/// rows 50 to a statement rather than one took a million messages about 1.15 s rather than 1.35.
/// 50 rows bind 700 values, far below SQLite's limit of 32,766.
const MESSAGES_PER_STATEMENT: usize = 50;

/// Writes an import's messages, in order, and returns each frame's range of their ids. SQLite
/// gives a row without an id one more than the largest id its table holds (until that is the
/// largest possible, when it picks one at random), and the import holds the write lock, so the
/// messages get the ids after the largest held, one by one.
fn insert_messages(
    tx: &rusqlite::Transaction<'_>,
    frames: &[Frame],
    messages: &[ImportedMessage],
) -> Result<Vec<Option<(i64, i64)>>, StoreError> {
    let largest: i64 =
        tx.query_row("SELECT coalesce(max(id), 0) FROM messages", [], |r| r.get(0))?;
    if largest.checked_add(messages.len() as i64).is_none() {
        return Err(FrameError::Invalid(format!(
            "the store has no message ids left for {} more messages",
            messages.len()
        ))
        .into());
    }
    // Each message's frame id, looked up in a pass of its own (see `PackedIds`).
    let packed = PackedIds::of(frames);
    let frame_ids: Vec<&str> = messages.iter().map(|m| packed.get(m.frame)).collect();
    let mut full = tx.prepare(&rows::insert_messages_sql(MESSAGES_PER_STATEMENT))?;
    for (chunk, frame_ids) in
        messages.chunks(MESSAGES_PER_STATEMENT).zip(frame_ids.chunks(MESSAGES_PER_STATEMENT))
    {
        let written: Vec<rows::MessageRow<'_>> = chunk
            .iter()
            .zip(frame_ids)
            .map(|(m, frame_id)| rows::MessageRow::of(frame_id, &m.message, m.tokens, m.at))
            .collect();
        let values = rusqlite::params_from_iter(written.iter().flat_map(rows::MessageRow::values));
        if chunk.len() == MESSAGES_PER_STATEMENT {
            full.execute(values)?;
        } else {
            tx.prepare(&rows::insert_messages_sql(chunk.len()))?.execute(values)?;
        }
    }
    let mut ranges: Vec<Option<(i64, i64)>> = vec![None; frames.len()];
    for (m, id) in messages.iter().zip(largest + 1..) {
        let range = ranges[m.frame].get_or_insert((id, id));
        range.1 = id;
    }
    Ok(ranges)
}

/// The frames' ids side by side in one string, read by frame index: each imported message
/// names its frame's id, and the messages name frames in no order, so reading each id from its
/// `Frame` (a few hundred bytes apart, the id's text elsewhere again) between two inserts missed
/// the processor's caches twice a message, a twentieth of a large import's time. The import
/// reads every message's id from here in one pass before the inserts, and updates the frames'
/// ranges of message ids in one pass after them, where the processor overlaps the misses.
struct PackedIds {
    text: String,
    /// Where each id ends in `text`; it starts where the one before ends.
    ends: Vec<usize>,
}

impl PackedIds {
    fn of(frames: &[Frame]) -> PackedIds {
        let mut text = String::with_capacity(frames.iter().map(|f| f.id.as_str().len()).sum());
        let ends = frames
            .iter()
            .map(|f| {
                text.push_str(f.id.as_str());
                text.len()
            })
            .collect();
        PackedIds { text, ends }
    }

    fn get(&self, frame: usize) -> &str {
        let start = if frame == 0 { 0 } else { self.ends[frame - 1] };
        &self.text[start..self.ends[frame]]
    }
}

fn children_by_parent(
    frames: &[Frame],
    index: &std::collections::HashMap<&flame_model::FrameId, usize>,
) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); frames.len()];
    for (i, f) in frames.iter().enumerate() {
        if let Some(parent) = &f.parent {
            children[index[parent]].push(i);
        }
    }
    children
}

#[cfg(test)]
mod tests {
    use flame_model::{Actor, IdSource, Role, Status};
    use rusqlite::Transaction;

    use super::*;

    /// A root with one in-progress child, and a message of `tokens` tokens in the child per
    /// count.
    fn tree_stating(seed: u64, counts: &[u64]) -> (Tree, Vec<Frame>, Vec<ImportedMessage>) {
        let mut ids = IdSource::seeded(seed);
        let (id, root, child) = (ids.tree_id(), ids.frame_id(), ids.frame_id());
        let tree = Tree {
            id: id.clone(),
            title: "t".into(),
            root: root.clone(),
            focus: child.clone(),
            created_at: 1,
            workspace: None,
        };
        let frames = vec![
            Frame::new(root.clone(), id.clone(), None, 0, "t", "c", Status::InProgress, 1),
            Frame::new(child, id, Some(root), 0, "u", "c", Status::InProgress, 1),
        ];
        let messages = counts
            .iter()
            .map(|&tokens| ImportedMessage {
                frame: 1,
                message: NewMessage::text(Role::User, "x"),
                tokens,
                at: 2,
            })
            .collect();
        (tree, frames, messages)
    }

    #[test]
    fn a_tree_over_the_token_limit_is_refused_and_one_at_it_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flame.db");
        let mut store = Store::open(&path).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        // Two counts whose sum overflows u64, and a sum just past the limit.
        for counts in [[u64::MAX, u64::MAX], [MAX_IMPORTED_TREE_TOKENS, 1]] {
            let (tree, frames, messages) = tree_stating(6, &counts);
            let err = store.import_tree(change, &tree, &frames, &messages).unwrap_err();
            assert!(err.to_string().contains("over the limit"), "{err}");
            assert!(store.trees().unwrap().is_empty());
        }
        let (tree, frames, messages) = tree_stating(7, &[MAX_IMPORTED_TREE_TOKENS]);
        store.import_tree(change, &tree, &frames, &messages).unwrap();
        let reopened = Store::open(&path).unwrap();
        assert_eq!(reopened.frame(&frames[1].id).unwrap().tokens, MAX_IMPORTED_TREE_TOKENS);
        assert_eq!(reopened.tree_message_tokens(&tree.id).unwrap(), MAX_IMPORTED_TREE_TOKENS);
    }

    #[test]
    fn trails_are_written_with_the_tree_within_the_store_caps() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        let (tree, frames, messages) = tree_stating(8, &[1]);
        // A frame index past the frames refuses the whole import.
        let stray = [(2, FileTrail::new(["a".to_owned()], []))];
        let err =
            store.import_tree_with_trails(change, &tree, &frames, &messages, &stray).unwrap_err();
        assert!(err.to_string().contains("names frame 2 of 2"), "{err}");
        assert!(store.trees().unwrap().is_empty());

        // One path too long, and one more path than a frame may hold, read ones last.
        let long = "x".repeat(MAX_TRAIL_PATH_BYTES + 1);
        let read: Vec<String> = (0..MAX_TRAIL_PATHS).map(|i| format!("r/{i:05}")).collect();
        let trails = [
            (0, FileTrail::new(["README.md".to_owned()], [])),
            (1, FileTrail::new(read.iter().cloned().chain([long]), ["src/a.rs".to_owned()])),
        ];
        let counts =
            store.import_tree_with_trails(change, &tree, &frames, &messages, &trails).unwrap();
        assert_eq!(counts.trail_paths, 1 + MAX_TRAIL_PATHS as u64);
        assert_eq!(counts.trail_paths_left_out, 2);
        assert_eq!(store.file_trail(&frames[0].id).unwrap().read, ["README.md"]);
        let child = store.file_trail(&frames[1].id).unwrap();
        assert_eq!(child.changed, ["src/a.rs"]);
        assert_eq!(child.read.len(), MAX_TRAIL_PATHS - 1);
        assert!(child.read.iter().all(|p| p.len() <= MAX_TRAIL_PATH_BYTES));
    }

    /// Every table, index, view and trigger of the store, with its SQL text.
    fn schema(store: &Store) -> Vec<(String, String, Option<String>)> {
        let mut stmt = store
            .conn
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The names of the secondary indexes and the triggers a bulk import may take away.
    fn takeable(store: &Store) -> Vec<String> {
        let mut stmt = store
            .conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE sql IS NOT NULL
                     AND (name IN ('message_search_insert', 'frame_search_insert')
                          OR (type = 'index' AND tbl_name IN ('frames', 'messages', 'events')
                              AND name <> 'messages_open'))
                 ORDER BY name",
            )
            .unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    fn pragma(store: &Store, name: &str) -> i64 {
        store.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0)).unwrap()
    }

    /// The settings the import changes are back after it: the foreign keys and CHECK constraints
    /// are enforced again, and every row it wrote satisfies them.
    fn assert_settings_are_restored(store: &Store) {
        assert_eq!(pragma(store, "foreign_keys"), 1);
        assert_eq!(pragma(store, "ignore_check_constraints"), 0);
        assert_eq!(pragma(store, "threads"), 0);
        assert_eq!(pragma(store, "cache_size"), -i64::from(crate::PAGE_CACHE_KIB));
        let dangling = store.conn.execute(
            "INSERT INTO messages (frame_id, role, content, tokens, created_at)
             VALUES ('f0000000000', 'user', 'x', 1, 1)",
            [],
        );
        assert!(dangling.unwrap_err().to_string().contains("FOREIGN KEY"));
        let frame: String =
            store.conn.query_row("SELECT id FROM frames LIMIT 1", [], |r| r.get(0)).unwrap();
        let unchecked = store.conn.execute(
            "INSERT INTO messages (frame_id, role, content, tokens, created_at)
             VALUES (?1, 'nobody', 'x', 1, 1)",
            [&frame],
        );
        assert!(unchecked.unwrap_err().to_string().contains("CHECK"));
        let broken: Vec<String> = store
            .conn
            .prepare("PRAGMA foreign_key_check")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(broken.is_empty(), "rows naming nothing: {broken:?}");
    }

    /// A tree of `frames` frames (the first the root, the others its completed children) with
    /// `messages` messages spread over them.
    fn wide_tree(
        seed: u64,
        frames: usize,
        messages: usize,
    ) -> (Tree, Vec<Frame>, Vec<ImportedMessage>) {
        let mut ids = IdSource::seeded(seed);
        let (id, root) = (ids.tree_id(), ids.frame_id());
        let tree = Tree {
            id: id.clone(),
            title: "wide".into(),
            root: root.clone(),
            focus: root.clone(),
            created_at: 1,
            workspace: None,
        };
        let mut all =
            vec![Frame::new(root.clone(), id.clone(), None, 0, "wide", "c", Status::InProgress, 1)];
        for i in 1..frames {
            let mut frame = Frame::new(
                ids.frame_id(),
                id.clone(),
                Some(root.clone()),
                i as u32 - 1,
                format!("part{seed}x{i}"),
                "c",
                Status::Completed,
                1,
            );
            frame.results = Some(format!("outcome{seed}x{i}"));
            all.push(frame);
        }
        let messages = (0..messages)
            .map(|i| ImportedMessage {
                frame: i % frames,
                message: NewMessage::text(Role::User, format!("said{seed}x{i} here")),
                tokens: 2,
                at: 2,
            })
            .collect();
        (tree, all, messages)
    }

    #[test]
    fn an_import_as_large_as_the_store_rebuilds_its_indexes_and_a_smaller_one_adds_to_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let before = schema(&store);
        let all = takeable(&store);
        assert!(all.len() >= 7, "{all:?}");

        // Into an empty store: every secondary index and the triggers are taken away.
        let (tree, frames, messages) = wide_tree(1, 20, 200);
        {
            let tx =
                Transaction::new_unchecked(&store.conn, TransactionBehavior::Immediate).unwrap();
            let suspended = Suspended::take_away(&tx, frames.len(), messages.len()).unwrap();
            assert_eq!(suspended.sql.len(), all.len());
            assert!(suspended.indexes);
            let left: i64 = tx
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE sql IS NOT NULL
                     AND (name IN ('message_search_insert', 'frame_search_insert')
                          OR (type = 'index' AND tbl_name IN ('frames', 'messages', 'events')
                              AND name <> 'messages_open'))",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(left, 0);
            suspended.put_back(&tx).unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(schema(&store), before);
        let change = Change { actor: Actor::Cli, at: 9 };
        store.import_tree(change, &tree, &frames, &messages).unwrap();
        assert_eq!(schema(&store), before);

        // Into a store ten times its size: only the triggers are taken away.
        let (small, small_frames, small_messages) = wide_tree(2, 2, 20);
        {
            let tx =
                Transaction::new_unchecked(&store.conn, TransactionBehavior::Immediate).unwrap();
            let suspended =
                Suspended::take_away(&tx, small_frames.len(), small_messages.len()).unwrap();
            assert_eq!(suspended.sql.len(), INSERT_TRIGGERS.len());
            assert!(!suspended.indexes, "nothing to sort: the cache is left as it is");
        }
        store.import_tree(change, &small, &small_frames, &small_messages).unwrap();
        assert_eq!(schema(&store), before);
        assert_settings_are_restored(&store);
        store.check_search_index().unwrap();

        // Both trees are found, their messages and their frames' titles and results.
        for word in ["said1x199", "part1x19", "outcome1x7", "said2x19", "part2x1", "outcome2x1"] {
            assert_eq!(store.search(word, None, 10).unwrap().len(), 1, "{word}");
        }
        // The indexes a query needs are back: a frame's messages are read in order.
        let read = store.messages(&frames[3].id).unwrap();
        assert_eq!(read.len(), 10);
        assert_eq!(read[0].content, "said1x3 here");
        // So are the triggers: a live message is found.
        store
            .add_message(change, &small.root, &NewMessage::text(Role::User, "liveword"), 1)
            .unwrap();
        assert_eq!(store.search("liveword", None, 10).unwrap().len(), 1);
        store.check_search_index().unwrap();
    }

    /// Messages are written many to a statement; each frame's `imported` event still names the
    /// first and the last of its own, across the statements' bounds and in a store that held
    /// messages already.
    #[test]
    fn each_imported_frame_names_its_first_and_last_message() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        let mut seen = 0;
        for (seed, messages) in [(4, 3 * MESSAGES_PER_STATEMENT + 7), (5, 31)] {
            let (tree, frames, messages) = wide_tree(seed, 7, messages);
            store.import_tree(change, &tree, &frames, &messages).unwrap();
            let events = store.events_since(seen, 1000).unwrap();
            seen = events.last().unwrap().seq;
            assert_eq!(events.len(), frames.len());
            for event in events {
                let ids: Vec<MessageId> =
                    store.messages(&event.frame).unwrap().iter().map(|m| m.id).collect();
                let EventDetail::Imported { first_message, last_message, .. } = event.detail else {
                    panic!("{:?}", event.detail)
                };
                assert_eq!(
                    (first_message, last_message),
                    (ids.first().copied(), ids.last().copied())
                );
            }
        }
    }

    /// An import that fails after taking the triggers and indexes away (a frame id another tree
    /// holds, met while its frames are written) changes nothing: its transaction takes the
    /// schema back with the rows, the checks are on again, and live writes are still indexed.
    #[test]
    fn an_import_that_fails_halfway_leaves_the_store_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        let mut ids = IdSource::seeded(77);
        let (live, live_root) = (ids.tree_id(), ids.frame_id());
        store.create_tree(change, &live, &live_root, "Live work", "c", None).unwrap();
        let before = schema(&store);

        let (tree, mut frames, messages) = wide_tree(3, 10, 50);
        frames[5].id = live_root.clone();
        let err = store.import_tree(change, &tree, &frames, &messages).unwrap_err();
        assert!(matches!(err, StoreError::IdTaken(ref id) if id == live_root.as_str()), "{err}");

        assert_eq!(schema(&store), before);
        assert_settings_are_restored(&store);
        assert_eq!(store.trees().unwrap().len(), 1);
        assert!(store.search("said3x1", None, 10).unwrap().is_empty());
        store
            .add_message(change, &live_root, &NewMessage::text(Role::User, "stillfound"), 1)
            .unwrap();
        assert_eq!(store.search("stillfound", None, 10).unwrap().len(), 1);
        store.check_search_index().unwrap();
    }
}
