//! Putting files back as a snapshot had them.
//!
//! Contents come from `git cat-file --batch` one blob at a time and are written by this crate,
//! not by `git checkout`: each file is written to a temporary file in its own folder, synced and
//! renamed over the target, so a kill leaves every file either as it was or restored, never torn;
//! a second run finds the restored files unchanged and finishes the rest. Deletions come first
//! (deepest first), so a folder can give way to a file and a file to a folder in one restore.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, ChildStdout, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::git::Git;
use crate::reserved::{TEMPORARY_MARK, is_git_name, is_restore_temporary};
use crate::{CheckpointError, CommitId, Entry, Restored, Skipped, compare, io_error, message};

/// How much of a file's name its temporary file repeats, so the temporary name stays within the
/// file system's 255 bytes.
const NAME_IN_TEMPORARY: usize = 100;

/// Numbers the temporary files this process makes, so two never share a name.
static TEMPORARIES: AtomicUsize = AtomicUsize::new(0);

/// Git's mode of a symlink.
const MODE_SYMLINK: u32 = 0o120_000;
/// Git's mode of an executable file.
const MODE_EXECUTABLE: u32 = 0o100_755;

pub(crate) fn restore(
    git: &Git,
    commit: &CommitId,
    paths: &[String],
) -> Result<Restored, CheckpointError> {
    for path in paths {
        check_relative(path)?;
    }
    let _lock = git.lock()?;
    let entries = compare::entries(git, commit, paths)?;
    let skipped = compare::skipped(git, commit)?;
    let root = git.work_tree();
    let mut restored = Restored::default();
    let mut folders = BTreeSet::new();
    // A killed restore may have left a temporary file beside any of these paths, also beside one
    // that is now found unchanged.
    let parents: BTreeSet<PathBuf> =
        paths.iter().filter_map(|path| root.join(path).parent().map(Path::to_path_buf)).collect();
    for parent in &parents {
        remove_stale_temporaries(parent);
    }

    // Deepest first, so a folder's files go before the folder.
    for (path, _) in entries.iter().rev().filter(|(_, entry)| entry.is_none()) {
        if let Some(skip) = message::is_skipped(&skipped, path) {
            restored.not_restored.push(Skipped { path: path.clone(), ..skip.clone() });
        } else if delete(root, path, &mut folders)? {
            restored.deleted.push(path.clone());
        } else {
            restored.unchanged.push(path.clone());
        }
    }

    let writes: Vec<(&String, &Entry)> = entries
        .iter()
        .filter_map(|(path, entry)| entry.as_ref().map(|entry| (path, entry)))
        .collect();
    if !writes.is_empty() {
        let mut blobs = Blobs::start(git, writes.iter().map(|(_, entry)| entry.oid.as_str()))?;
        for (path, entry) in &writes {
            let content = blobs.next(&entry.oid)?;
            if write(root, path, entry, &content)? {
                restored.written.push((*path).clone());
                if let Some(parent) = root.join(path).parent() {
                    folders.insert(parent.to_path_buf());
                }
            } else {
                restored.unchanged.push((*path).clone());
            }
        }
        blobs.finish()?;
    }
    // The renames are made durable once per folder rather than once per file.
    for folder in folders {
        if let Ok(handle) = std::fs::File::open(&folder) {
            handle.sync_all().map_err(io_error(format!("sync the folder {}", folder.display())))?;
        }
    }
    restored.deleted.sort();
    restored.unchanged.sort();
    restored.not_restored.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(restored)
}

/// Refuses a path that is empty, absolute, has `.`, `..` or a `.git` component, or a NUL.
pub(crate) fn check_relative(path: &str) -> Result<(), CheckpointError> {
    let refuse = || CheckpointError::OutsideWorkspace(path.to_owned());
    if path.is_empty() || path.contains('\0') || path.ends_with('/') {
        return Err(refuse());
    }
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) if !is_git_name(name) => {}
            _ => return Err(refuse()),
        }
    }
    // `components` folds `a//b` and `./a`; a path must be written in its one plain form.
    if path.split('/').any(|part| part.is_empty() || part == ".") {
        return Err(refuse());
    }
    Ok(())
}

/// Fails when a folder on the way to `path` is a symlink; answers whether the way is clear
/// (`false` when a file stands where a folder should be, so `path` cannot exist).
fn check_ancestors(root: &Path, path: &str) -> Result<bool, CheckpointError> {
    let mut current = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for (depth, part) in parts[..parts.len() - 1].iter().enumerate() {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(CheckpointError::ThroughSymlink {
                    path: path.to_owned(),
                    link: parts[..=depth].join("/"),
                });
            }
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => return Ok(false),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(true),
            Err(error) => return Err(io_error(format!("look at {}", current.display()))(error)),
        }
    }
    Ok(true)
}

/// Deletes `path` (a file, a symlink or an empty folder) and the folders that leaves empty;
/// answers whether there was anything to delete.
fn delete(
    root: &Path,
    path: &str,
    folders: &mut BTreeSet<PathBuf>,
) -> Result<bool, CheckpointError> {
    if !check_ancestors(root, path)? {
        return Ok(false);
    }
    let target = root.join(path);
    let metadata = match std::fs::symlink_metadata(&target) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(io_error(format!("look at {}", target.display()))(error)),
    };
    if metadata.is_dir() {
        std::fs::remove_dir(&target)
            .map_err(|_| CheckpointError::FolderInTheWay(path.to_owned()))?;
    } else {
        std::fs::remove_file(&target).map_err(io_error(format!("delete {}", target.display())))?;
    }
    // Folders the deletion emptied go too, up to (not including) the workspace.
    let mut folder = target.parent();
    while let Some(current) = folder.filter(|current| *current != root && current.starts_with(root))
    {
        if std::fs::remove_dir(current).is_err() {
            folders.insert(current.to_path_buf());
            break;
        }
        folder = current.parent();
    }
    if folder.is_some_and(|current| current == root) {
        folders.insert(root.to_path_buf());
    }
    Ok(true)
}

/// Writes `content` at `path` as `entry` says (a file, executable or not, or a symlink) unless it
/// is already so; answers whether it wrote.
fn write(root: &Path, path: &str, entry: &Entry, content: &[u8]) -> Result<bool, CheckpointError> {
    // When a file stands where the snapshot has a folder, creating the folder below fails and
    // says so.
    check_ancestors(root, path)?;
    let target = root.join(path);
    let symlink = entry.mode == MODE_SYMLINK;
    let executable = entry.mode == MODE_EXECUTABLE;
    let mut keep_permissions = None;
    match std::fs::symlink_metadata(&target) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            if symlink
                && std::fs::read_link(&target)
                    .is_ok_and(|link| link.as_os_str().as_bytes() == content)
            {
                return Ok(false);
            }
        }
        Ok(metadata) if metadata.is_file() => {
            let mode = metadata.permissions().mode();
            if !symlink
                && (mode & 0o100 != 0) == executable
                && metadata.len() == content.len() as u64
                && std::fs::read(&target).is_ok_and(|now| now == content)
            {
                return Ok(false);
            }
            keep_permissions = Some(mode & 0o7777);
        }
        Ok(metadata) if metadata.is_dir() => {
            std::fs::remove_dir(&target)
                .map_err(|_| CheckpointError::FolderInTheWay(path.to_owned()))?;
        }
        Ok(_) => {
            std::fs::remove_file(&target)
                .map_err(io_error(format!("delete {}", target.display())))?;
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(io_error(format!("look at {}", target.display()))(error)),
    }
    let parent =
        target.parent().ok_or_else(|| CheckpointError::OutsideWorkspace(path.to_owned()))?;
    std::fs::create_dir_all(parent)
        .map_err(io_error(format!("create the folder {}", parent.display())))?;
    let temporary = parent.join(temporary_name(
        target.file_name().unwrap_or_default(),
        TEMPORARIES.fetch_add(1, Ordering::Relaxed),
    ));
    let written = if symlink {
        std::os::unix::fs::symlink(OsStr::from_bytes(content), &temporary)
    } else {
        write_file(&temporary, content, executable, keep_permissions)
    };
    written
        .and_then(|()| std::fs::rename(&temporary, &target))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
        .map_err(io_error(format!("write {}", target.display())))?;
    Ok(true)
}

/// Writes and syncs a new file. A file that existed keeps its permissions, with the executable
/// bits set or cleared as the snapshot says; a new one gets the usual permissions (the umask
/// applies).
fn write_file(
    temporary: &Path,
    content: &[u8],
    executable: bool,
    keep: Option<u32>,
) -> std::io::Result<()> {
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o777 } else { 0o666 })
        .open(temporary)?;
    file.write_all(content)?;
    if let Some(mode) = keep {
        let mode = if executable {
            if mode & 0o111 == 0 { mode | ((mode & 0o444) >> 2) } else { mode }
        } else {
            mode & !0o111
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.sync_all()
}

fn temporary_name(name: &OsStr, number: usize) -> std::ffi::OsString {
    let name = name.as_bytes();
    let mut shown = &name[..name.len().min(NAME_IN_TEMPORARY)];
    // Cut on a character boundary when the name is UTF-8, so the temporary name is too.
    while std::str::from_utf8(shown).is_err() && !shown.is_empty() {
        shown = &shown[..shown.len() - 1];
    }
    let mut temporary = b".".to_vec();
    temporary.extend_from_slice(shown);
    temporary.extend_from_slice(
        format!("{TEMPORARY_MARK}{}-{number}.tmp", std::process::id()).as_bytes(),
    );
    OsStr::from_bytes(&temporary).to_owned()
}

/// Removes restore's temporary files left in `folder` by a restore that was killed.
fn remove_stale_temporaries(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        if is_restore_temporary(&entry.file_name()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Blobs read one at a time from one `git cat-file --batch`, in the order they were asked for.
struct Blobs {
    child: Child,
    output: BufReader<ChildStdout>,
    feeder: Option<std::thread::JoinHandle<()>>,
}

impl Blobs {
    fn start<'a>(git: &Git, oids: impl Iterator<Item = &'a str>) -> Result<Blobs, CheckpointError> {
        let args = ["cat-file", "--batch"];
        let mut command = git.command(&args);
        command.stdin(Stdio::piped()).stderr(Stdio::null());
        let mut child = command.spawn().map_err(|error| {
            if error.kind() == std::io::ErrorKind::NotFound {
                CheckpointError::GitMissing
            } else {
                io_error("start git cat-file")(error)
            }
        })?;
        let mut input = String::new();
        for oid in oids {
            input.push_str(oid);
            input.push('\n');
        }
        let mut stdin =
            child.stdin.take().ok_or_else(|| CheckpointError::Unexpected("no stdin".into()))?;
        // Fed from another thread: cat-file writes blobs while it reads the list.
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let output = BufReader::new(
            child.stdout.take().ok_or_else(|| CheckpointError::Unexpected("no stdout".into()))?,
        );
        Ok(Blobs { child, output, feeder: Some(feeder) })
    }

    /// The next blob, which must be `oid`.
    fn next(&mut self, oid: &str) -> Result<Vec<u8>, CheckpointError> {
        let mut header = String::new();
        self.output.read_line(&mut header).map_err(io_error("read git cat-file"))?;
        let fields: Vec<&str> = header.trim_end().split(' ').collect();
        let [found, "blob", size] = fields[..] else {
            return Err(CheckpointError::Unexpected(format!(
                "cat-file: {:?} for {oid}",
                header.trim_end()
            )));
        };
        if found != oid {
            return Err(CheckpointError::Unexpected(format!("cat-file gave {found} for {oid}")));
        }
        let size: usize = size
            .parse()
            .map_err(|_| CheckpointError::Unexpected(format!("cat-file size {size:?}")))?;
        let mut content = vec![0; size + 1];
        self.output.read_exact(&mut content).map_err(io_error("read git cat-file"))?;
        content.pop();
        Ok(content)
    }

    fn finish(mut self) -> Result<(), CheckpointError> {
        if let Some(feeder) = self.feeder.take() {
            let _ = feeder.join();
        }
        let mut rest = Vec::new();
        let _ = self.output.read_to_end(&mut rest);
        self.child.wait().map_err(io_error("wait for git cat-file"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_accepted() {
        for good in ["a", "a/b.txt", "dir/.hidden", "a b/c\nd", "x/.gitignore", "..."] {
            assert!(check_relative(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/./b",
            "./a",
            "a//b",
            "a/",
            ".git/config",
            "sub/.GIT/HEAD",
            "sub/.git",
            "nul\0",
        ] {
            assert!(
                matches!(check_relative(bad), Err(CheckpointError::OutsideWorkspace(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_temporary_name_is_hidden_bounded_and_recognised() {
        let long = "é".repeat(200);
        let name = temporary_name(OsStr::new(&long), 7);
        assert!(name.len() < 255);
        assert!(name.to_str().is_some());
        assert!(is_restore_temporary(&name));
        assert!(!is_restore_temporary(OsStr::new("notes.tmp")));
    }
}
