//! Search over every message and every frame's title and results, through the FTS5 indexes of
//! migration 8 (`migrations/0008_search.sql`). Triggers keep the indexes current inside the
//! statement that writes a row, except for the frames and messages a bulk import leaves to be
//! indexed afterwards (migrations 11 and 14), which this module indexes before a search reads
//! the index ([`Store::catch_up_search`]); it turns a person's words into an FTS5 query that
//! cannot be a syntax error, and the index's answers into typed hits.
//!
//! There are two external-content FTS5 indexes: `message_search` over a closed message's text and
//! its tool calls' names and arguments (read through the view `message_search_text`; a reply is
//! indexed once finished, not while it streams) and `frame_search` over frames' titles and results
//! (keyed by `frame_search_rows`, whose integer ids VACUUM keeps), each with the tree's id as a
//! word of a `tree` column. The triggers on `messages` leave alone any message in a pending range
//! (deleted, finished or given a reused id); an import whose ids could reach into a pending range
//! indexes it first, so ranges never overlap. `Store::catch_up_search` gives the pending frames of
//! a named tree their rows and indexes them, then the ranges' messages as they then are, in one
//! transaction; `search` and `check_search_index` call it first. The invariants: `message_search`
//! holds exactly the closed messages in no pending range, and `frame_search` exactly the frames
//! with a search row. `check_search_index` runs FTS5's integrity check against the rows.
//!
//! `Store::search` quotes every word as an FTS5 phrase (a `"` doubled), the last also as a prefix
//! from 3 letters (which have their own index), so no query is FTS5 syntax. It refuses a query past
//! `MAX_SEARCH_QUERY_CHARS` characters or `MAX_SEARCH_WORDS` words (`SearchError`) and returns at
//! most `MAX_SEARCH_HITS` hits, frames first, then messages, each newest first, with `snippet()`'s
//! words around the match split into plain and matched parts. It does not rank by BM25: its weights
//! need each word's whole list of rows, tens of milliseconds for a common word on a million
//! messages, where newest first stops at the limit.

use flame_model::{FrameId, MessageId, Role, TreeId};
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

/// The longest search Flame runs, in characters. A search is a few words typed in a box; a
/// longer one is refused with [`SearchError::TooLong`] rather than cut, so that what is searched
/// is always what was typed.
pub const MAX_SEARCH_QUERY_CHARS: usize = 500;

/// The most words a search may have. Each word is one more list of rows for SQLite to intersect.
pub const MAX_SEARCH_WORDS: usize = 32;

/// How many hits a search returns when the caller does not say.
pub const DEFAULT_SEARCH_HITS: u32 = 50;

/// The most hits a search returns; a larger limit returns this many.
pub const MAX_SEARCH_HITS: u32 = 200;

/// The shortest last word matched as a prefix ("conte" finds "context"). A prefix of one or two
/// characters matches a large part of the vocabulary, which costs more than it finds, so a
/// shorter last word matches only whole words.
pub const MIN_PREFIX_CHARS: usize = 3;

/// The most words a snippet shows around the match (FTS5 allows at most 64).
pub const SNIPPET_WORDS: i32 = 24;

/// The markers `snippet()` puts around matched words. They are characters of Unicode's private
/// use area, which text from people and models does not contain in practice; a message that does
/// contain them is shown with a wrong highlight, nothing worse.
const MATCH_START: char = '\u{E000}';
const MATCH_END: char = '\u{E001}';

/// Why a search was not run. Callers show the message; the words and the limit are stated.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(
        "the search is {chars} characters long; Flame searches for at most {max} characters, so search for a few words of it"
    )]
    TooLong { chars: usize, max: usize },
    #[error("the search has {words} words; Flame searches for at most {max} words at once")]
    TooManyWords { words: usize, max: usize },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Where in a frame a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitPlace {
    /// One of the frame's messages.
    Message { id: MessageId, role: Role },
    /// The frame's title or results.
    Results,
}

/// A piece of a snippet: text as stored, and whether it is one of the words searched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetPart {
    pub text: String,
    pub matched: bool,
}

/// One place a search found its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub tree: TreeId,
    pub frame: FrameId,
    pub place: HitPlace,
    /// Up to [`SNIPPET_WORDS`] words around the best match, with "…" where text was left out.
    pub snippet: Vec<SnippetPart>,
}

/// Where a search looks for hits: an FTS5 index (read as `s`), the columns a hit is made from,
/// the tables joined to `s` for them, and the index's two text columns (number and name), which
/// the words are looked for in and the hit's two snippets are cut from, in the order read.
struct HitSource {
    index: &'static str,
    columns: &'static str,
    joins: &'static str,
    texts: [(u8, &'static str); 2],
}

/// Frames by their results and titles: the results' snippet first, as the hit's path already
/// shows the title.
const FRAME_HITS: HitSource = HitSource {
    index: "frame_search",
    columns: "r.frame_id, f.tree_id",
    joins: "JOIN frame_search_rows AS r ON r.id = s.rowid JOIN frames AS f ON f.id = r.frame_id",
    texts: [(1, "results"), (0, "title")],
};

/// Messages by their text and their tool calls.
const MESSAGE_HITS: HitSource = HitSource {
    index: "message_search",
    columns: "s.rowid, m.frame_id, f.tree_id, m.role",
    joins: "JOIN messages AS m ON m.id = s.rowid JOIN frames AS f ON f.id = m.frame_id",
    texts: [(0, "content"), (1, "calls")],
};

impl Store {
    /// The frames (titles and results) and messages whose text has every word of `text`, the
    /// last word also as a prefix; in one tree when `tree` is given. Frames come first, then
    /// messages, each newest first, at most `limit` hits in all ([`MAX_SEARCH_HITS`] at most).
    /// Words are matched whole, ignoring case and accents; punctuation separates words, and
    /// FTS5's operators (`AND`, `NEAR(`, `"`, `*`) are searched for as text, never obeyed. A
    /// search with no word in it finds nothing.
    ///
    /// Newest first, not FTS5's BM25 rank: BM25 weighs each word by how many rows hold it, which
    /// FTS5 counts by reading the word's whole list of rows, so a common word costs a search
    /// tens of milliseconds on a million messages (`benches/fts.rs`). In rowid order FTS5 hands
    /// out matches as it finds them and stops at the limit, so a search costs about the same
    /// whatever the store's size, and snippets are made only for the hits returned.
    pub fn search(
        &self,
        text: &str,
        tree: Option<&TreeId>,
        limit: u32,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let Some(words) = match_expression(text)? else {
            return Ok(Vec::new());
        };
        // Whatever an import left to index is indexed first, so every frame and message is found.
        self.catch_up(None)?;
        let limit = limit.min(MAX_SEARCH_HITS);
        // The tree's id is one word of the `tree` column; quoted, so it cannot be syntax.
        let within = tree.map_or(String::new(), |tree| {
            format!(" AND tree : \"{}\"", tree.as_str().replace('"', "\"\""))
        });
        let matching = format!("({words}){within}");
        let mut hits = Vec::new();
        self.push_hits(&mut hits, &FRAME_HITS, &matching, limit, |r| {
            Ok(SearchHit {
                tree: TreeId::from_trusted(r.get(1)?),
                frame: FrameId::from_trusted(r.get(0)?),
                place: HitPlace::Results,
                snippet: best_snippet(&[r.get(2)?, r.get(3)?]),
            })
        })?;
        let left = limit.saturating_sub(hits.len() as u32);
        self.push_hits(&mut hits, &MESSAGE_HITS, &matching, left, |r| {
            let role: String = r.get(3)?;
            Ok(SearchHit {
                tree: TreeId::from_trusted(r.get(2)?),
                frame: FrameId::from_trusted(r.get(1)?),
                place: HitPlace::Message {
                    id: MessageId(r.get(0)?),
                    role: Role::parse(&role).unwrap_or(Role::Note),
                },
                snippet: best_snippet(&[r.get(4)?, r.get(5)?]),
            })
        })?;
        Ok(hits)
    }

    /// Adds to `hits` the newest `limit` rows of `source` (none when `limit` is 0) whose two text
    /// columns match `matching`, each made a hit by `hit` from the source's columns and then its
    /// two snippets. In rowid order, not by rank: see [`Store::search`].
    fn push_hits(
        &self,
        hits: &mut Vec<SearchHit>,
        source: &HitSource,
        matching: &str,
        limit: u32,
        hit: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<SearchHit>,
    ) -> Result<(), SearchError> {
        if limit == 0 {
            return Ok(());
        }
        let HitSource { index, columns, joins, texts: [(first, a), (second, b)] } = source;
        let snippet = |column| format!("snippet({index}, {column}, ?3, ?4, '…', ?5)");
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {columns}, {}, {} FROM {index} AS s {joins}
             WHERE {index} MATCH ?1 ORDER BY s.rowid DESC LIMIT ?2",
            snippet(first),
            snippet(second),
        ))?;
        let query = format!("{{{a} {b}}} : {matching}");
        let (start, end) = (MATCH_START.to_string(), MATCH_END.to_string());
        for found in stmt.query_map(params![query, limit, start, end, SNIPPET_WORDS], hit)? {
            hits.push(found?);
        }
        Ok(())
    }

    /// Indexes for search the frames and messages that bulk imports left to be indexed (the trees
    /// in `frame_search_pending`, migration 14, and the message id ranges in `search_pending`,
    /// migration 11), in one transaction, and returns how many frames and messages were
    /// indexed. [`Store::search`] calls this first, so a search always sees every frame and
    /// message; a caller may call it sooner, after an import, so that the first search does not
    /// wait for it. Cheap when nothing is pending: one read of two empty tables.
    pub fn catch_up_search(&self) -> Result<u64, StoreError> {
        Ok(self.catch_up(None)?)
    }

    /// Like [`Store::catch_up_search`], but covers at most `rows` frames and message ids in this
    /// transaction (the frames first, then the lowest message ids), so another process or thread
    /// waits for the write lock a short while each time rather than for the whole catch-up.
    /// Returns how many it covered: 0 when nothing is left.
    pub fn catch_up_search_step(&self, rows: u64) -> Result<u64, StoreError> {
        Ok(self.catch_up(Some(rows.max(1)))?)
    }

    fn catch_up(&self, rows: Option<u64>) -> rusqlite::Result<u64> {
        let pending: bool = self
            .conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM frame_search_pending)
                        OR EXISTS (SELECT 1 FROM search_pending)",
            )?
            .query_row([], |r| r.get(0))?;
        if !pending {
            return Ok(0);
        }
        // Indexing writes: it waits for the file's quick check here rather than in its commit,
        // under the write lock (`damage_check.rs`), and leaves a damaged file unindexed.
        if self.check.wait().is_err() {
            return Ok(0);
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )?;
        // Read again under the write lock: another connection may have caught up meanwhile.
        let covered = match rows {
            None => index_pending(&tx)?,
            Some(rows) => index_pending_part(&tx, rows)?,
        };
        tx.commit()?;
        Ok(covered)
    }

    /// Checks both search indexes against the rows they index (FTS5's `integrity-check`, with
    /// the indexed text compared to what the rows hold now); an index that has drifted from its
    /// rows is an SQLite error (`SQLITE_CORRUPT_VTAB`). For tests and diagnostics: it reads every indexed row.
    pub fn check_search_index(&self) -> Result<(), StoreError> {
        // An index still waiting for imported messages is behind its rows by design.
        self.catch_up_search()?;
        for table in ["message_search", "frame_search"] {
            let check =
                format!("INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)");
            self.conn.execute(&check, [])?;
        }
        Ok(())
    }

    /// The titles from the tree's root down to `frame`, root first: where a hit is.
    pub fn title_path(&self, frame: &FrameId) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "WITH RECURSIVE up (parent_id, title, depth) AS (
                 SELECT parent_id, title, 0 FROM frames WHERE id = ?1
                 UNION ALL
                 SELECT f.parent_id, f.title, up.depth + 1 FROM frames AS f JOIN up ON f.id = up.parent_id
             )
             SELECT title FROM up ORDER BY depth DESC",
        )?;
        let titles = stmt.query_map([frame.as_str()], |r| r.get(0))?;
        let titles: Vec<String> = titles.collect::<Result<_, _>>()?;
        if titles.is_empty() {
            return Err(flame_model::FrameError::NoSuchFrame(frame.clone()).into());
        }
        Ok(titles)
    }
}

/// Indexes the frames of every tree in `frame_search_pending` that have no search row yet and
/// every message range in `search_pending` (`index_pending_messages`), and empties both, in the
/// caller's transaction, which holds the write lock; returns how many frames and messages were
/// indexed.
pub(crate) fn index_pending(conn: &rusqlite::Connection) -> rusqlite::Result<u64> {
    Ok(index_pending_frames(conn, None)? + index_pending_messages(conn)?)
}

/// Gives at most `limit` frames (all when `None`) of the trees in `frame_search_pending` that
/// have no search row one, the first tree's first, and indexes them with what they hold now;
/// a tree is taken out once none of its frames is left. Returns how many frames were indexed.
/// The rows past the largest search row before each tree's are that tree's: the caller holds
/// the write lock.
fn index_pending_frames(conn: &rusqlite::Connection, limit: Option<u64>) -> rusqlite::Result<u64> {
    let trees: Vec<String> = conn
        .prepare_cached("SELECT tree FROM frame_search_pending ORDER BY tree")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut indexed = 0;
    for tree in trees {
        let left = limit.map(|limit| limit - indexed);
        if left == Some(0) {
            break;
        }
        let before: i64 =
            conn.query_row("SELECT coalesce(max(id), 0) FROM frame_search_rows", [], |r| r.get(0))?;
        // SQLite reads a negative LIMIT as none.
        let rows = left.map_or(-1, |left| i64::try_from(left).unwrap_or(i64::MAX));
        let added = conn.prepare_cached(CATCH_UP_FRAME_ROWS)?.execute(params![tree, rows])? as u64;
        conn.prepare_cached(CATCH_UP_FRAMES)?.execute([before])?;
        indexed += added;
        if left.is_none_or(|left| added < left) {
            conn.execute("DELETE FROM frame_search_pending WHERE tree = ?1", [&tree])?;
        }
    }
    Ok(indexed)
}

/// Gives at most `?2` frames of tree `?1` without a search row one (no limit when negative), in
/// the order the frames were written, through `frames_by_tree` without a sort.
const CATCH_UP_FRAME_ROWS: &str = "INSERT INTO frame_search_rows (frame_id)
     SELECT id FROM frames AS f
     WHERE tree_id = ?1 AND NOT EXISTS (SELECT 1 FROM frame_search_rows AS r WHERE r.frame_id = f.id)
     ORDER BY rowid LIMIT ?2";

/// Indexes the frames whose search rows are past id `?1`, in the order of those ids, read by
/// range without a sort: FTS5 writes out the terms it holds whenever a row id comes below the
/// last one, which in another order would be once per row.
const CATCH_UP_FRAMES: &str = "INSERT INTO frame_search (rowid, title, results, tree)
     SELECT id, title, results, tree FROM frame_search_text WHERE id > ?1";

/// Indexes every range in `search_pending` and empties it; returns how many messages were
/// indexed. The messages' current text and tree, as the triggers read them
/// (`message_search_text`): the triggers left every message in these ranges alone, so none is
/// in the index yet, and no two ranges overlap (an import whose ids could reach into a range
/// indexes it first, `import.rs`). The imported tree's messages first, in id order, their tree
/// named rather than looked up per message (the tree's frames are read once into a set); then
/// any other message in the range, which only an id SQLite gave again after the tree's messages
/// were deleted can be, with its frame looked up.
fn index_pending_messages(conn: &rusqlite::Connection) -> rusqlite::Result<u64> {
    let ranges: Vec<(i64, i64, String)> = conn
        .prepare("SELECT first, last, tree FROM search_pending ORDER BY first")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    conn.execute("DELETE FROM search_pending", [])?;
    let mut indexed = 0;
    let mut own = conn.prepare(CATCH_UP_OWN)?;
    let mut others = conn.prepare(CATCH_UP_OTHERS)?;
    for (first, last, tree) in ranges {
        indexed += own.execute(params![first, last, tree])? as u64;
        indexed += others.execute(params![first, last, tree])? as u64;
    }
    Ok(indexed)
}

/// Indexes at most `rows` pending frames (`index_pending_frames`) or, when no frame is left, the
/// first `rows` message ids of the lowest pending range, in the caller's transaction, and takes
/// them out of the range (the whole range when it is no longer); returns how many frames or ids
/// that covered. The invariants hold after it as before: what was taken out is indexed, the rest
/// is still pending.
fn index_pending_part(conn: &rusqlite::Connection, rows: u64) -> rusqlite::Result<u64> {
    let frames = index_pending_frames(conn, Some(rows))?;
    if frames > 0 {
        return Ok(frames);
    }
    let ids = rows;
    let lowest: Option<(i64, i64, i64, String)> = conn
        .query_row(
            "SELECT rowid, first, last, tree FROM search_pending ORDER BY first LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((row, first, last, tree)) = lowest else { return Ok(0) };
    let end = last.min(first.saturating_add(i64::try_from(ids).unwrap_or(i64::MAX) - 1));
    if end == last {
        conn.execute("DELETE FROM search_pending WHERE rowid = ?1", [row])?;
    } else {
        conn.execute("UPDATE search_pending SET first = ?2 WHERE rowid = ?1", [row, end + 1])?;
    }
    conn.prepare_cached(CATCH_UP_OWN)?.execute(params![first, end, tree])?;
    conn.prepare_cached(CATCH_UP_OTHERS)?.execute(params![first, end, tree])?;
    Ok((end - first + 1) as u64)
}

/// What [`Store::catch_up_search`] indexes of a pending range `?1..=?2` of tree `?3`: the tree's
/// own messages, their tree named. `+frame_id` keeps SQLite from reading the messages frame by
/// frame through `messages_by_frame`: FTS5 writes out the terms it holds whenever a row id comes
/// below the last one, so the rows must come in id order.
const CATCH_UP_OWN: &str = "INSERT INTO message_search (rowid, content, calls, tree)
     SELECT id, content, calls, ?3 FROM message_search_columns
     WHERE id BETWEEN ?1 AND ?2 AND open = 0
           AND +frame_id IN (SELECT id FROM frames WHERE tree_id = ?3)";

/// The other messages of the range, with their frames looked up.
const CATCH_UP_OTHERS: &str = "INSERT INTO message_search (rowid, content, calls, tree)
     SELECT c.id, c.content, c.calls, f.tree_id
     FROM message_search_columns AS c JOIN frames AS f ON f.id = c.frame_id
     WHERE c.id BETWEEN ?1 AND ?2 AND c.open = 0
           AND +c.frame_id NOT IN (SELECT id FROM frames WHERE tree_id = ?3)";

/// The FTS5 query for a person's words: each word a quoted phrase (a `"` inside doubled, control
/// characters left out), so no
/// operator or syntax of FTS5's is ever obeyed, all of them required, and the last one also a
/// prefix when it ends in [`MIN_PREFIX_CHARS`] or more letters or digits. `None` when there is no
/// word to search for: only punctuation or white space, which the index does not hold.
pub(crate) fn match_expression(text: &str) -> Result<Option<String>, SearchError> {
    let chars = text.chars().count();
    if chars > MAX_SEARCH_QUERY_CHARS {
        return Err(SearchError::TooLong { chars, max: MAX_SEARCH_QUERY_CHARS });
    }
    let words: Vec<&str> =
        text.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).collect();
    if words.len() > MAX_SEARCH_WORDS {
        return Err(SearchError::TooManyWords { words: words.len(), max: MAX_SEARCH_WORDS });
    }
    let Some(last) = words.last() else {
        return Ok(None);
    };
    let mut query = String::with_capacity(text.len() + 4 * words.len());
    for word in &words {
        if !query.is_empty() {
            query.push(' ');
        }
        query.push('"');
        // FTS5's parser ends a string at NUL; control characters are never part of a word.
        for c in word.chars().filter(|c| !c.is_control()) {
            if c == '"' {
                query.push('"');
            }
            query.push(c);
        }
        query.push('"');
    }
    // The prefix applies to the phrase's last token, the last run of letters and digits.
    let last_token = last.split(|c: char| !c.is_alphanumeric()).rfind(|run| !run.is_empty());
    if last_token.is_some_and(|run| run.chars().count() >= MIN_PREFIX_CHARS) {
        query.push('*');
    }
    Ok(Some(query))
}

/// The first of `columns`' snippets that shows a match (never the `tree` column's, which a
/// search within a tree also matches), split into parts; FTS5 gives a column
/// without a match as its beginning, unmarked, and that is what shows when none has one.
fn best_snippet(columns: &[Option<String>]) -> Vec<SnippetPart> {
    let chosen = columns
        .iter()
        .flatten()
        .find(|text| text.contains(MATCH_START))
        .or_else(|| columns.iter().flatten().next());
    snippet_parts(chosen.map_or("", String::as_str))
}

/// Splits a snippet marked with [`MATCH_START`] and [`MATCH_END`] into plain and matched parts,
/// dropping the markers and empty parts.
fn snippet_parts(marked: &str) -> Vec<SnippetPart> {
    let mut parts: Vec<SnippetPart> = Vec::new();
    let mut text = String::new();
    let mut matched = false;
    for c in marked.chars() {
        let toggles = (c == MATCH_START && !matched) || (c == MATCH_END && matched);
        if toggles {
            if !text.is_empty() {
                parts.push(SnippetPart { text: std::mem::take(&mut text), matched });
            }
            matched = !matched;
        } else if c != MATCH_START && c != MATCH_END {
            text.push(c);
        }
    }
    if !text.is_empty() {
        parts.push(SnippetPart { text, matched });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Option<String> {
        match_expression(text).unwrap()
    }

    #[test]
    fn words_become_quoted_phrases_and_the_last_a_prefix() {
        assert_eq!(expr("cache layer").as_deref(), Some(r#""cache" "layer"*"#));
        assert_eq!(expr("  one  ").as_deref(), Some(r#""one"*"#));
    }

    #[test]
    fn a_short_last_word_is_matched_whole() {
        assert_eq!(expr("cache to").as_deref(), Some(r#""cache" "to""#));
        assert_eq!(expr("read_fi").as_deref(), Some(r#""read_fi""#));
        assert_eq!(expr("read_fil").as_deref(), Some(r#""read_fil"*"#));
    }

    #[test]
    fn syntax_is_quoted_never_obeyed() {
        assert_eq!(expr(r#"say "hi"#).as_deref(), Some(r#""say" """hi""#));
        assert_eq!(expr("a AND NEAR(b").as_deref(), Some(r#""a" "AND" "NEAR(b""#));
        assert_eq!(expr("x\0y\u{1b}[31m").as_deref(), Some(r#""xy[31m"*"#));
    }

    #[test]
    fn punctuation_alone_is_nothing_to_search_for() {
        assert_eq!(expr(r#"" * ( ) -- :"#), None);
        assert_eq!(expr(""), None);
        assert_eq!(expr(" \t\n"), None);
    }

    #[test]
    fn a_search_past_the_limits_is_refused_with_them() {
        let long = "a".repeat(MAX_SEARCH_QUERY_CHARS + 1);
        let err = match_expression(&long).unwrap_err();
        assert!(matches!(err, SearchError::TooLong { chars: 501, max: 500 }), "{err}");
        assert!(err.to_string().contains("at most 500 characters"), "{err}");
        assert!(match_expression(&"a".repeat(MAX_SEARCH_QUERY_CHARS)).is_ok());
        let many = vec!["w"; MAX_SEARCH_WORDS + 1].join(" ");
        assert!(matches!(match_expression(&many), Err(SearchError::TooManyWords { .. })));
    }

    /// The catch-up reads a range's messages by id, in id order, never frame by frame.
    #[test]
    fn the_catch_up_reads_messages_in_id_order() {
        for sql in [CATCH_UP_OWN, CATCH_UP_OTHERS] {
            let plan = crate::query_plan(sql, params![1, 2, "t0000000000"]);
            assert!(plan.contains("SEARCH m USING INTEGER PRIMARY KEY"), "{plan}");
            assert!(!plan.contains("messages_by_frame"), "{plan}");
        }
    }

    /// The catch-up reads a named tree's frames in the order they were written without a sort,
    /// and indexes them by range of their search rows, in id order.
    #[test]
    fn the_catch_up_reads_frames_in_order_without_a_sort() {
        let plan = crate::query_plan(CATCH_UP_FRAME_ROWS, params!["t0000000000", 10]);
        assert!(plan.contains("SEARCH f USING INDEX frames_by_tree (tree_id=?)"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        let plan = crate::query_plan(CATCH_UP_FRAMES, [0]);
        assert!(plan.contains("SEARCH r USING INTEGER PRIMARY KEY (rowid>?)"), "{plan}");
        assert!(!plan.contains("TEMP B-TREE"), "{plan}");
    }

    #[test]
    fn snippets_split_at_the_markers() {
        let marked =
            format!("say {MATCH_START}hello{MATCH_END} to the {MATCH_START}world{MATCH_END}");
        let parts = snippet_parts(&marked);
        let shown: Vec<(&str, bool)> = parts.iter().map(|p| (p.text.as_str(), p.matched)).collect();
        assert_eq!(shown, [("say ", false), ("hello", true), (" to the ", false), ("world", true)]);
        // A stray marker from the text itself is dropped, not obeyed twice.
        let stray = format!("{MATCH_END}a{MATCH_START}b{MATCH_START}c{MATCH_END}");
        let shown: Vec<(String, bool)> =
            snippet_parts(&stray).into_iter().map(|p| (p.text, p.matched)).collect();
        assert_eq!(shown, [("a".to_owned(), false), ("bc".to_owned(), true)]);
    }
}
