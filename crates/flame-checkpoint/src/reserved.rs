//! The names that are never the person's files to snapshot or restore: `.git`, at any depth, and
//! the temporary files a restore writes before it renames them into place. The walk leaves both
//! out, and restore writes and finds its temporaries by the same mark.

use std::ffi::OsStr;

/// Part of every temporary file's name (`.<name>.flame-restore-<pid>-<n>.tmp`), by which stale
/// ones are found and removed, and the walk leaves them out.
pub(crate) const TEMPORARY_MARK: &str = ".flame-restore-";

/// Whether a name is `.git` (in any case, for case-insensitive file systems).
pub(crate) fn is_git_name(name: &OsStr) -> bool {
    name.to_str().is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

/// Whether a name is one of restore's temporary files (`.<name>.flame-restore-<pid>-<n>.tmp`): a
/// restore killed before its rename leaves one behind, and it is not the person's file.
pub(crate) fn is_restore_temporary(name: &OsStr) -> bool {
    name.to_str().is_some_and(|name| {
        name.starts_with('.') && name.ends_with(".tmp") && name.contains(TEMPORARY_MARK)
    })
}
