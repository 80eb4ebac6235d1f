//! Search across every frame: the store's hits (`flame_store::Store::search`, over the FTS5
//! indexes its triggers keep current) with where each one is — its tree's title and the titles
//! from the root down to its frame — for the window's search and `flame search`.

use std::collections::HashMap;

use flame_model::{FrameError, FrameId, MessageId, Role, TreeId};
use flame_store::{SearchError, Store, StoreError};
use serde::Serialize;

use crate::{ApiError, ErrorCode, Flame};

pub use flame_store::{
    DEFAULT_SEARCH_HITS, MAX_SEARCH_HITS, MAX_SEARCH_QUERY_CHARS, MAX_SEARCH_WORDS,
};

/// Where in its frame a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SearchPlace {
    /// One of the frame's messages: the window scrolls to it.
    Message { id: MessageId, role: Role },
    /// The frame's title or results.
    Results,
}

/// A piece of a hit's snippet: text as stored (never markup), and whether it is one of the
/// words searched for, which front ends highlight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SnippetPart {
    pub text: String,
    pub matched: bool,
}

/// One place a search found its words, and where that is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SearchHit {
    pub tree: TreeId,
    pub tree_title: String,
    pub frame: FrameId,
    /// The titles from the tree's root down to the frame, root first.
    pub path: Vec<String>,
    pub place: SearchPlace,
    /// A few words around the match, with "…" where text was left out.
    pub snippet: Vec<SnippetPart>,
}

/// How many frames or message ids one step of [`Flame::catch_up_search`] indexes: about a tenth
/// of a second of work, so a write of the window or of another process waits at most that long.
const CATCH_UP_STEP_ROWS: u64 = 20_000;

impl Flame {
    /// Indexes for search the frames and messages imports left to index
    /// (`Store::catch_up_search`), on a connection of its own and in steps of
    /// [`CATCH_UP_STEP_ROWS`], held to the database's quick check like every connection of the
    /// process (`flame_store::DamageCheck`), so it holds neither the facade's store nor SQLite's
    /// write lock for long; returns how many frames and message ids it covered. For a thread of
    /// its own after an import and at start, so that the first search does not wait for a large
    /// import; a search that comes first indexes them itself.
    pub fn catch_up_search(&self) -> Result<u64, ApiError> {
        // The facade's store holds the database's one check, run or to run: a second check of
        // every page would only delay.
        let check = self.store().damage_check().clone();
        let store = Store::open_another(&self.data_dir.database_path(), &check)
            .map_err(ApiError::from_open)?;
        let mut covered = 0;
        loop {
            match store.catch_up_search_step(CATCH_UP_STEP_ROWS)? {
                0 => return Ok(covered),
                step => covered += step,
            }
        }
    }

    /// The frames (titles and results) and messages holding every word of `query`, the last
    /// word also as a prefix, in tree `tree` or in every tree: frames first, then messages,
    /// each newest first; `limit` hits at most (50 when not given, never more than
    /// [`MAX_SEARCH_HITS`]). A query's words are only ever words: no character of it is search
    /// syntax. A query longer than [`MAX_SEARCH_QUERY_CHARS`] characters or
    /// [`MAX_SEARCH_WORDS`] words is refused (`Invalid`); one with no letter or digit finds
    /// nothing; an unknown tree is `NotFound`.
    pub fn search(
        &self,
        query: &str,
        tree: Option<&TreeId>,
        limit: Option<u32>,
    ) -> Result<Vec<SearchHit>, ApiError> {
        let store = self.store();
        if let Some(tree) = tree {
            store.tree(tree)?;
        }
        let hits = store.search(query, tree, limit.unwrap_or(DEFAULT_SEARCH_HITS)).map_err(
            |err| match err {
                SearchError::Sqlite(err) => ApiError::internal("search", err),
                refused => ApiError::new(ErrorCode::Invalid, refused.to_string()),
            },
        )?;
        // Hits cluster in a few frames and trees; each path and title is read once.
        let mut paths: HashMap<FrameId, Vec<String>> = HashMap::new();
        let mut titles: HashMap<TreeId, String> = HashMap::new();
        let mut found = Vec::with_capacity(hits.len());
        for hit in hits {
            let path = match paths.get(&hit.frame) {
                Some(path) => path.clone(),
                None => match store.title_path(&hit.frame) {
                    Ok(path) => {
                        paths.insert(hit.frame.clone(), path.clone());
                        path
                    }
                    // Another process deleted the tree since the search read it.
                    Err(StoreError::Frame(FrameError::NoSuchFrame(_))) => continue,
                    Err(err) => return Err(err.into()),
                },
            };
            let tree_title = match titles.get(&hit.tree) {
                Some(title) => title.clone(),
                None => {
                    let title = store.tree(&hit.tree)?.title;
                    titles.insert(hit.tree.clone(), title.clone());
                    title
                }
            };
            found.push(SearchHit {
                tree: hit.tree,
                tree_title,
                frame: hit.frame,
                path,
                place: match hit.place {
                    flame_store::HitPlace::Message { id, role } => {
                        SearchPlace::Message { id, role }
                    }
                    flame_store::HitPlace::Results => SearchPlace::Results,
                },
                snippet: hit
                    .snippet
                    .into_iter()
                    .map(|part| SnippetPart { text: part.text, matched: part.matched })
                    .collect(),
            });
        }
        Ok(found)
    }
}
