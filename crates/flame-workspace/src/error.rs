//! The one error type of the workspace tools. Every message is written for the model: it names
//! the path or argument at fault and says what to do instead, because it is sent back as a tool
//! error the model reads and acts on.

use std::path::PathBuf;

/// Why a workspace tool refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the workspace folder {root} cannot be opened: {source}")]
    Root { root: PathBuf, source: std::io::Error },

    #[error("the workspace folder {root} is not a directory")]
    RootNotDirectory { root: PathBuf },

    #[error(
        "the path {path:?} is outside the workspace; give a path relative to the workspace root that stays inside it"
    )]
    Outside { path: String },

    #[error(
        "the path {path:?} goes through a symbolic link that leads outside the workspace (to {target}); only files inside the workspace can be used"
    )]
    SymlinkOutside { path: String, target: PathBuf },

    #[error("the path {path:?} goes through a symbolic link loop")]
    SymlinkLoop { path: String },

    #[error("the path {path:?} goes through a symbolic link whose target does not exist ({link})")]
    DanglingSymlink { path: String, link: PathBuf },

    #[error(
        "the path {path:?} is inside .git; the workspace tools neither read nor change the repository's own files (run git through run_command to inspect the repository)"
    )]
    GitDirectory { path: String },

    #[error("the path {path:?} is empty or names the workspace root itself; give a file path")]
    NotAFilePath { path: String },

    #[error("{path} does not exist")]
    NotFound { path: String },

    #[error("{path} is a directory; use list_files to see the files in it")]
    IsDirectory { path: String },

    #[error("{path} is not a regular file")]
    NotRegularFile { path: String },

    #[error(
        "{path} has {links} hard links: the same file has another name, which may be outside the workspace, so the workspace tools neither read nor change it (a command can, with the person's approval)"
    )]
    HardLinked { path: String, links: u64 },

    #[error(
        "{path} changed while it was being used: {name} on its path is now a symbolic link, which is not followed; nothing was read or written there, try again"
    )]
    Replaced { path: String, name: String },

    #[error("{path} looks like a binary file ({reason}); only text files can be read or edited")]
    Binary { path: String, reason: String },

    #[error("{path} has {lines} lines; start_line {start} is past its end")]
    StartPastEnd { path: String, start: u64, lines: u64 },

    #[error("the line range {start}-{end} is empty; end_line must not be less than start_line")]
    EmptyRange { start: u64, end: u64 },

    #[error(
        "{path} is {size} bytes, more than the {limit} bytes edit_file works on; use write_file to replace it whole"
    )]
    TooLargeToEdit { path: String, size: u64, limit: u64 },

    #[error("old_string must not be empty; to create or replace a whole file use write_file")]
    EmptyOldString,

    #[error("old_string and new_string are the same; nothing would change")]
    NoChange,

    #[error(
        "old_string was not found in {path}; read the file again and copy the exact text, whitespace and indentation included"
    )]
    NoMatch { path: String },

    #[error(
        "old_string occurs {count} times in {path}; add surrounding lines so it occurs once, or set replace_all to change every occurrence"
    )]
    ManyMatches { path: String, count: usize },

    #[error(
        "{path} changed on disk since this change was prepared; read it again and redo the change"
    )]
    ChangedSincePrepared { path: String },

    #[error(
        "{path} changed on disk after the person was shown this change, so it was not applied; read it again and redo the change"
    )]
    ChangedSinceShown { path: String },

    #[error("the glob {glob:?} is not valid: {message}")]
    InvalidGlob { glob: String, message: String },

    #[error("the regular expression {pattern:?} is not valid: {message}")]
    InvalidRegex { pattern: String, message: String },

    #[error("the command is empty")]
    EmptyCommand,

    #[error(
        "a timeout of {asked_secs} s is past the most allowed, {limit_secs} s; ask for {limit_secs} or less"
    )]
    TimeoutTooLong { asked_secs: u64, limit_secs: u64 },

    #[error("the timeout must be at least one second")]
    TimeoutZero,

    #[error("the command did not run: {reason}")]
    SandboxUnavailable { reason: String },

    #[error("cannot {action} {path}: {source}")]
    Io { action: &'static str, path: String, source: std::io::Error },
}

impl WorkspaceError {
    pub(crate) fn io(action: &'static str, path: &str, source: std::io::Error) -> WorkspaceError {
        WorkspaceError::Io { action, path: path.to_owned(), source }
    }
}
