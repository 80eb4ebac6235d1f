//! `list_files`: the workspace's files matching a glob, walked with ripgrep's `ignore` crate so
//! `.gitignore`, `.ignore` and hidden files are honoured as ripgrep honours them.

use std::collections::BinaryHeap;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;

use crate::confine::{is_git_name, relative_string};
use crate::{Touched, Workspace, WorkspaceError};

/// The most paths one `list_files` call returns; the reply says how many more matched.
pub const MAX_LISTED_FILES: usize = 1_000;

/// The files that matched, the first [`MAX_LISTED_FILES`] in path order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileList {
    pub glob: String,
    /// Workspace-relative paths, sorted.
    pub files: Vec<String>,
    /// How many files matched in all.
    pub total: u64,
}

impl FileList {
    /// The text sent to the model: a path a line, then what was left out.
    pub fn render(&self) -> String {
        if self.files.is_empty() {
            return format!("No files match {:?}.", self.glob);
        }
        let mut out = self.files.join("\n");
        out.push('\n');
        let more = self.total - self.files.len() as u64;
        if more > 0 {
            out.push_str(&format!(
                "[{more} more file(s) match; narrow the glob, such as src/**/*.rs]\n"
            ));
        }
        out
    }

    /// Listing reads no file's content, so it adds nothing to the file trail.
    pub fn touched(&self) -> Touched {
        Touched::files(Vec::new(), Vec::new())
    }
}

/// A glob over workspace-relative paths. A glob without `/` matches a file's name anywhere
/// (`*.rs`, as in `.gitignore`); a glob with `/` matches the whole relative path, with `*`
/// staying within one folder and `**` crossing folders (`src/**/*.rs`).
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    by_name: bool,
}

impl PathGlob {
    pub(crate) fn new(glob: &str) -> Result<PathGlob, WorkspaceError> {
        let trimmed = glob.trim().trim_start_matches("./");
        let trimmed = if trimmed.is_empty() { "*" } else { trimmed };
        let by_name = !trimmed.contains('/');
        let matcher = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|e| WorkspaceError::InvalidGlob {
                glob: glob.to_owned(),
                message: e.kind().to_string(),
            })?
            .compile_matcher();
        Ok(PathGlob { matcher, by_name })
    }

    pub(crate) fn matches(&self, relative: &str) -> bool {
        if self.by_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

impl Workspace {
    /// The walk every listing and search uses: `.gitignore` (inside a git repository or not),
    /// `.ignore` and `.git/info/exclude` honoured, hidden files and `.git` skipped, symbolic
    /// links not followed. The person's global git excludes are not read, so what the tools see
    /// depends on the workspace alone.
    pub(crate) fn walker(&self) -> WalkBuilder {
        let mut builder = WalkBuilder::new(self.root());
        builder
            .hidden(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|entry| !is_git_name(entry.file_name()));
        builder
    }

    /// The workspace-relative path of a walked entry.
    pub(crate) fn walked_relative(&self, path: &std::path::Path) -> Option<String> {
        path.strip_prefix(self.root()).ok().map(relative_string)
    }

    /// Lists the files matching `glob` (default: every file), sorted, at most
    /// [`MAX_LISTED_FILES`].
    pub fn list_files(&self, glob: Option<&str>) -> Result<FileList, WorkspaceError> {
        let glob_text = glob.unwrap_or("*").to_owned();
        let filter = PathGlob::new(&glob_text)?;
        // The smallest paths are kept in a bounded heap, so a huge tree costs MAX_LISTED_FILES
        // paths of memory, not one per file.
        let mut kept: BinaryHeap<String> = BinaryHeap::new();
        let mut total = 0u64;
        for entry in self.walker().build() {
            let Ok(entry) = entry else { continue };
            let is_file = match entry.file_type() {
                Some(kind) if kind.is_file() => true,
                Some(kind) if kind.is_symlink() => entry.path().is_file(),
                _ => false,
            };
            if !is_file {
                continue;
            }
            let Some(relative) = self.walked_relative(entry.path()) else { continue };
            if !filter.matches(&relative) {
                continue;
            }
            total += 1;
            kept.push(relative);
            if kept.len() > MAX_LISTED_FILES {
                kept.pop();
            }
        }
        let files = kept.into_sorted_vec();
        Ok(FileList { glob: glob_text, files, total })
    }
}
