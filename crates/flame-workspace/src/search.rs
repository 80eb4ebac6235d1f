//! `search`: a regular expression over the workspace's files with ripgrep's crates — the walk of
//! `list_files` (run on every core), `grep-regex` for the pattern and `grep-searcher` for the
//! lines and their context. Binary files are skipped. The hits kept are always the first ones in
//! path order, however the threads interleave, so a search gives the same answer every time.

use std::collections::BTreeMap;
use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;

use crate::list::PathGlob;
use crate::{Touched, Workspace, WorkspaceError};

/// The most matching lines one search returns; the reply counts the rest.
pub const MAX_SEARCH_HITS: usize = 200;

/// The most context lines asked for on each side of a match.
pub const MAX_CONTEXT_LINES: usize = 10;

/// The most of one matching or context line that is returned (minified files have lines of
/// megabytes).
pub const MAX_HIT_LINE_BYTES: usize = 500;

/// The most text a search's reply holds; the hits past it are counted, not shown.
pub const MAX_SEARCH_OUTPUT_BYTES: usize = 32 * 1024;

/// The most memory the searcher may take for one line; a file with a longer line is skipped
/// and counted as unreadable.
pub const MAX_SEARCH_LINE_BUFFER_BYTES: usize = 16 * 1024 * 1024;

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// A regular expression (Rust `regex` syntax, as ripgrep's).
    pub pattern: String,
    /// Which files, as in `list_files`; `None` searches every file.
    pub glob: Option<String>,
    /// Lines of context before and after each match, at most [`MAX_CONTEXT_LINES`].
    pub context_lines: usize,
    pub case_insensitive: bool,
}

/// One line around a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLine {
    pub line_number: u64,
    pub line: String,
}

/// One matching line, with its context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// Workspace-relative path.
    pub path: String,
    pub line_number: u64,
    /// The line without its newline, cut at [`MAX_HIT_LINE_BYTES`].
    pub line: String,
    /// Context before the match that no earlier hit already shows.
    pub before: Vec<ContextLine>,
    /// Context after the match up to the next match.
    pub after: Vec<ContextLine>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    pub query: SearchQuery,
    /// The first [`MAX_SEARCH_HITS`] matching lines, in path and line order.
    pub hits: Vec<SearchHit>,
    /// Matching lines in all.
    pub total_matches: u64,
    /// Files with at least one matching line.
    pub files_with_matches: u64,
    /// Files skipped because they hold binary data.
    pub binary_files_skipped: u64,
    /// Files that could not be read (permissions, a line past
    /// [`MAX_SEARCH_LINE_BUFFER_BYTES`]).
    pub unreadable_files: u64,
    /// Files skipped because they have more than one hard link: another name, perhaps outside
    /// the workspace, shares their content (see [`crate::WorkspaceError::HardLinked`]).
    pub linked_files_skipped: u64,
}

impl SearchResult {
    /// The text sent to the model, ripgrep's heading style: a file's path, then `12:` for a
    /// matching line and `11-` for context, `--` between separate groups; at most
    /// [`MAX_SEARCH_OUTPUT_BYTES`], then a line counting what was left out.
    pub fn render(&self) -> String {
        if self.hits.is_empty() {
            let mut out = format!("No matches for {:?}.", self.query.pattern);
            out.push_str(&self.skipped_note());
            return out;
        }
        let mut out = String::new();
        let mut shown = 0usize;
        let mut previous: Option<(&str, u64)> = None;
        for hit in &self.hits {
            let mut block = String::new();
            match previous {
                Some((path, _)) if path != hit.path => block.push_str(&format!("\n{}\n", hit.path)),
                None => block.push_str(&format!("{}\n", hit.path)),
                Some((_, last)) => {
                    let first = hit.before.first().map_or(hit.line_number, |c| c.line_number);
                    if first > last + 1 {
                        block.push_str("--\n");
                    }
                }
            }
            for context in &hit.before {
                block.push_str(&format!("{}-{}\n", context.line_number, context.line));
            }
            block.push_str(&format!("{}:{}\n", hit.line_number, hit.line));
            for context in &hit.after {
                block.push_str(&format!("{}-{}\n", context.line_number, context.line));
            }
            if out.len() + block.len() > MAX_SEARCH_OUTPUT_BYTES {
                break;
            }
            out.push_str(&block);
            shown += 1;
            let last = hit.after.last().map_or(hit.line_number, |c| c.line_number);
            previous = Some((&hit.path, last));
        }
        let total = self.total_matches;
        if (shown as u64) < total {
            out.push_str(&format!(
                "[{shown} of {total} matching lines in {} file(s) shown; narrow the pattern or the glob to see the rest]\n",
                self.files_with_matches
            ));
        }
        out.push_str(&self.skipped_note());
        out
    }

    fn skipped_note(&self) -> String {
        let mut note = String::new();
        if self.binary_files_skipped > 0 {
            note.push_str(&format!("[{} binary file(s) skipped]\n", self.binary_files_skipped));
        }
        if self.unreadable_files > 0 {
            note.push_str(&format!("[{} file(s) could not be read]\n", self.unreadable_files));
        }
        if self.linked_files_skipped > 0 {
            note.push_str(&format!(
                "[{} file(s) with more than one hard link skipped: another name, perhaps outside the workspace, shares their content]\n",
                self.linked_files_skipped
            ));
        }
        if !note.is_empty() && !note.starts_with('\n') {
            note.insert(0, '\n');
        }
        note
    }

    /// The files whose lines reached the model, for the file trail.
    pub fn touched(&self) -> Touched {
        let mut read: Vec<String> = self.hits.iter().map(|hit| hit.path.clone()).collect();
        read.dedup();
        Touched::files(read, Vec::new())
    }
}

/// What the walk's threads gather: the hits of the first files in path order, and counts over
/// every file.
#[derive(Debug, Default)]
struct Gathered {
    files: BTreeMap<String, Vec<SearchHit>>,
    kept: usize,
    total_matches: u64,
    files_with_matches: u64,
    binary_files_skipped: u64,
    unreadable_files: u64,
    linked_files_skipped: u64,
}

impl Gathered {
    fn add(&mut self, path: String, found: FileHits) {
        if found.binary {
            self.binary_files_skipped += 1;
            return;
        }
        if found.matches == 0 {
            return;
        }
        self.total_matches += found.matches;
        self.files_with_matches += 1;
        if self.kept >= MAX_SEARCH_HITS
            && self.files.last_key_value().is_some_and(|(last, _)| path > *last)
        {
            return;
        }
        self.kept += found.hits.len();
        self.files.insert(path, found.hits);
        // Files at the end of the order are dropped while the rest still fill the cap.
        while let Some((_, hits)) = self.files.last_key_value() {
            if self.kept - hits.len() >= MAX_SEARCH_HITS {
                self.kept -= hits.len();
                self.files.pop_last();
            } else {
                break;
            }
        }
    }
}

impl Workspace {
    /// Searches the workspace's files for `query.pattern`.
    pub fn search(&self, query: &SearchQuery) -> Result<SearchResult, WorkspaceError> {
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(query.case_insensitive)
            .build(&query.pattern)
            .map_err(|e| WorkspaceError::InvalidRegex {
                pattern: query.pattern.clone(),
                message: e.to_string(),
            })?;
        let filter = query.glob.as_deref().map(PathGlob::new).transpose()?;
        let context = query.context_lines.min(MAX_CONTEXT_LINES);
        let gathered = Mutex::new(Gathered::default());

        self.walker().build_parallel().run(|| {
            let matcher = matcher.clone();
            let filter = filter.clone();
            let gathered = &gathered;
            let mut searcher = SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(BinaryDetection::quit(0))
                .heap_limit(Some(MAX_SEARCH_LINE_BUFFER_BYTES))
                .build();
            Box::new(move |entry| {
                let Ok(entry) = entry else { return WalkState::Continue };
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return WalkState::Continue;
                }
                let Some(relative) = self.walked_relative(entry.path()) else {
                    return WalkState::Continue;
                };
                if filter.as_ref().is_some_and(|filter| !filter.matches(&relative)) {
                    return WalkState::Continue;
                }
                let mut sink = FileHits::new(relative.clone());
                // Opened from the workspace's handle, not by the walked path, so a folder swapped
                // for a link during the walk is refused rather than searched.
                let searched = self
                    .open_regular(&relative)
                    .map(|(file, _)| searcher.search_file(&matcher, &file, &mut sink));
                let mut gathered = gathered.lock().unwrap_or_else(|e| e.into_inner());
                match searched {
                    Ok(Ok(())) => gathered.add(relative, sink),
                    Err(WorkspaceError::HardLinked { .. }) => gathered.linked_files_skipped += 1,
                    Ok(Err(_)) | Err(_) => gathered.unreadable_files += 1,
                }
                WalkState::Continue
            })
        });

        let gathered = gathered.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut hits: Vec<SearchHit> = gathered.files.into_values().flatten().collect();
        hits.truncate(MAX_SEARCH_HITS);
        Ok(SearchResult {
            query: SearchQuery { context_lines: context, ..query.clone() },
            hits,
            total_matches: gathered.total_matches,
            files_with_matches: gathered.files_with_matches,
            binary_files_skipped: gathered.binary_files_skipped,
            unreadable_files: gathered.unreadable_files,
            linked_files_skipped: gathered.linked_files_skipped,
        })
    }
}

/// The sink for one file: its first [`MAX_SEARCH_HITS`] matching lines with context, and a
/// count of all of them.
#[derive(Debug)]
struct FileHits {
    path: String,
    hits: Vec<SearchHit>,
    pending_before: Vec<ContextLine>,
    /// Whether the latest match was kept, so its after-context is too.
    last_kept: bool,
    matches: u64,
    binary: bool,
}

impl FileHits {
    fn new(path: String) -> FileHits {
        FileHits {
            path,
            hits: Vec::new(),
            pending_before: Vec::new(),
            last_kept: false,
            matches: 0,
            binary: false,
        }
    }
}

impl Sink for FileHits {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.matches += 1;
        let before = std::mem::take(&mut self.pending_before);
        self.last_kept = self.hits.len() < MAX_SEARCH_HITS;
        if self.last_kept {
            self.hits.push(SearchHit {
                path: self.path.clone(),
                line_number: found.line_number().unwrap_or(0),
                line: clip_line(found.bytes()),
                before,
                after: Vec::new(),
            });
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        let line = ContextLine {
            line_number: context.line_number().unwrap_or(0),
            line: clip_line(context.bytes()),
        };
        match context.kind() {
            SinkContextKind::Before => self.pending_before.push(line),
            SinkContextKind::After if self.last_kept => {
                if let Some(hit) = self.hits.last_mut() {
                    hit.after.push(line);
                }
            }
            _ => {}
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        self.hits.clear();
        Ok(false)
    }
}

/// A line as text without its line ending, cut at [`MAX_HIT_LINE_BYTES`] on a character
/// boundary.
fn clip_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.len() <= MAX_HIT_LINE_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let head = String::from_utf8_lossy(&bytes[..MAX_HIT_LINE_BYTES]);
    // A character cut in two at the end shows as a replacement character; it is dropped.
    let head = head.trim_end_matches('\u{FFFD}');
    format!("{head} [… {} more bytes]", bytes.len().saturating_sub(head.len()))
}
