//! `write_file` and `edit_file`. A change is prepared first — checked, with its diff for the
//! approval prompt — and applied after, only if the file is still as it was when prepared.
//! Applying writes a temporary file in the same folder, syncs it and renames it over the target,
//! so a crash at any point leaves the old file or the new one, whole, never a mix.

use std::fs::File;
use std::hash::Hasher;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use similar::TextDiff;

use crate::read::binary_reason;
use crate::{ResolvedPath, Touched, Workspace, WorkspaceError};

/// The largest file `edit_file` works on (it holds the file, and its new text, in memory).
pub const MAX_EDIT_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// `write_file` shows a line diff against the old content when the old and the new text each
/// fit in this; past it, the diff is a one-line summary (a line diff of two large unrelated
/// texts is slow).
pub const MAX_DIFF_INPUT_BYTES: usize = 512 * 1024;

/// The most of a diff that is kept for the approval prompt and the tool card.
pub const MAX_DIFF_BYTES: usize = 64 * 1024;

/// Lines of unchanged context around each change in a diff.
const DIFF_CONTEXT_LINES: usize = 3;

/// A change to one file, checked and ready to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedChange {
    /// Workspace-relative path.
    pub path: String,
    /// A unified diff of the change (from `/dev/null` for a new file), at most
    /// [`MAX_DIFF_BYTES`].
    pub diff: String,
    /// Whether the file does not exist yet.
    pub creates: bool,
    /// How many occurrences an edit replaces; `None` for a write.
    pub replacements: Option<usize>,
    real: PathBuf,
    content: String,
    expected: Fingerprint,
}

impl PreparedChange {
    /// What the file was when this change was prepared, as text: `absent`, or its length and a
    /// hash of its content. Two preparations of one change give the same `base` exactly when
    /// they found the same file, so a change shown to the person is applied only while the file
    /// is still as it was shown ([`Workspace::apply_shown`]).
    pub fn base(&self) -> String {
        match self.expected {
            Fingerprint::Absent => "absent".to_owned(),
            Fingerprint::Present { len, hash } => format!("{len}:{hash:016x}"),
        }
    }
}

/// A change that was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedChange {
    pub path: String,
    pub diff: String,
    pub created: bool,
    pub replacements: Option<usize>,
    pub bytes_written: u64,
}

impl AppliedChange {
    /// The text sent to the model.
    pub fn render(&self) -> String {
        let what = match (self.created, self.replacements) {
            (true, _) => format!("Created {} ({} bytes).", self.path, self.bytes_written),
            (false, Some(count)) => {
                format!("Edited {}: {count} replacement(s).", self.path)
            }
            (false, None) => format!("Wrote {} ({} bytes).", self.path, self.bytes_written),
        };
        format!("{what}\n{}", self.diff)
    }

    /// The file this change wrote, for the file trail.
    pub fn touched(&self) -> Touched {
        Touched::files(Vec::new(), vec![self.path.clone()])
    }
}

/// What a file was when a change was prepared, to refuse applying it over a file that changed
/// since. A hash over the content, compared within one process only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fingerprint {
    Absent,
    Present { len: u64, hash: u64 },
}

impl Workspace {
    /// Prepares replacing (or creating) `path` with `content`.
    pub fn prepare_write(
        &self,
        path: &str,
        content: String,
    ) -> Result<PreparedChange, WorkspaceError> {
        let resolved = self.resolve(path)?;
        let expected = self.fingerprint_of(&resolved)?;
        let name = resolved.relative.as_str();
        let diff = match expected {
            Fingerprint::Absent => unified_diff(name, None, &content),
            Fingerprint::Present { len, .. } => {
                let old = if len as usize <= MAX_DIFF_INPUT_BYTES
                    && content.len() <= MAX_DIFF_INPUT_BYTES
                {
                    self.read_text(&resolved)?.1
                } else {
                    None
                };
                match old {
                    Some(old) => unified_diff(name, Some(&old), &content),
                    None => format!(
                        "(replaces {name}: {len} bytes before, {} after; too large or not text to compare line by line)\n",
                        content.len()
                    ),
                }
            }
        };
        Ok(PreparedChange {
            path: resolved.relative.clone(),
            diff,
            creates: expected == Fingerprint::Absent,
            replacements: None,
            real: resolved.real,
            content,
            expected,
        })
    }

    /// Prepares replacing `old` with `new` in `path`: `old` must occur exactly once, or at least
    /// once with `replace_all`.
    pub fn prepare_edit(
        &self,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<PreparedChange, WorkspaceError> {
        if old.is_empty() {
            return Err(WorkspaceError::EmptyOldString);
        }
        if old == new {
            return Err(WorkspaceError::NoChange);
        }
        let resolved = self.resolve(path)?;
        let name = resolved.relative.clone();
        let (size, text) = self.read_text(&resolved)?;
        let Some(text) = text else {
            return Err(WorkspaceError::Binary {
                path: name,
                reason: "not valid UTF-8 or holds NUL bytes".to_owned(),
            });
        };
        let count = text.matches(old).count();
        match count {
            0 => return Err(WorkspaceError::NoMatch { path: name }),
            1 => {}
            _ if replace_all => {}
            _ => return Err(WorkspaceError::ManyMatches { path: name, count }),
        }
        let content = if replace_all { text.replace(old, new) } else { text.replacen(old, new, 1) };
        let mut hasher = std::hash::DefaultHasher::new();
        hasher.write(text.as_bytes());
        let expected = Fingerprint::Present { len: size, hash: hasher.finish() };
        Ok(PreparedChange {
            diff: unified_diff(&name, Some(&text), &content),
            path: name,
            creates: false,
            replacements: Some(count),
            real: resolved.real,
            content,
            expected,
        })
    }

    /// Applies a prepared change, unless the file changed since it was prepared.
    pub fn apply(&self, change: PreparedChange) -> Result<AppliedChange, WorkspaceError> {
        // The path is resolved again: a folder on it may have been swapped for a link since.
        let resolved = self.resolve(&change.path)?;
        if resolved.real != change.real || self.fingerprint_of(&resolved)? != change.expected {
            return Err(WorkspaceError::ChangedSincePrepared { path: change.path });
        }
        self.write_atomically(&resolved, change.content.as_bytes())?;
        Ok(AppliedChange {
            path: change.path,
            diff: change.diff,
            created: change.creates,
            replacements: change.replacements,
            bytes_written: change.content.len() as u64,
        })
    }

    /// Applies `change` only if it was prepared on the file the person was shown (`shown`, the
    /// [`PreparedChange::base`] of the change they saw; `None` when no one was asked): a file
    /// changed since it was shown is refused, never overwritten with a change no one saw.
    pub fn apply_shown(
        &self,
        change: PreparedChange,
        shown: Option<&str>,
    ) -> Result<AppliedChange, WorkspaceError> {
        if shown.is_some_and(|base| base != change.base()) {
            return Err(WorkspaceError::ChangedSinceShown { path: change.path });
        }
        self.apply(change)
    }

    /// Prepares and applies a write at once, for callers that need no approval in between.
    pub fn write_file(&self, path: &str, content: String) -> Result<AppliedChange, WorkspaceError> {
        self.apply(self.prepare_write(path, content)?)
    }

    /// Prepares and applies an edit at once.
    pub fn edit_file(
        &self,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<AppliedChange, WorkspaceError> {
        self.apply(self.prepare_edit(path, old, new, replace_all)?)
    }
}

impl Workspace {
    /// What the file `resolved` is now: absent, or its length and a hash of its content.
    fn fingerprint_of(&self, resolved: &ResolvedPath) -> Result<Fingerprint, WorkspaceError> {
        let mut file = match self.open_regular(&resolved.relative) {
            Err(WorkspaceError::NotFound { .. }) => return Ok(Fingerprint::Absent),
            opened => opened?.0,
        };
        let mut hasher = std::hash::DefaultHasher::new();
        let mut buffer = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        loop {
            let read = file
                .read(&mut buffer)
                .map_err(|e| WorkspaceError::io("read", &resolved.relative, e))?;
            if read == 0 {
                break;
            }
            hasher.write(&buffer[..read]);
            len += read as u64;
        }
        Ok(Fingerprint::Present { len, hash: hasher.finish() })
    }

    /// A file's size and its text, `None` when it is not text. Refuses files over
    /// [`MAX_EDIT_FILE_BYTES`].
    fn read_text(&self, resolved: &ResolvedPath) -> Result<(u64, Option<String>), WorkspaceError> {
        let (file, size) = self.open_regular(&resolved.relative)?;
        if size > MAX_EDIT_FILE_BYTES {
            return Err(WorkspaceError::TooLargeToEdit {
                path: resolved.relative.clone(),
                size,
                limit: MAX_EDIT_FILE_BYTES,
            });
        }
        let mut bytes = Vec::new();
        // One byte past the limit tells a file that grew since its size was read.
        file.take(MAX_EDIT_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| WorkspaceError::io("read", &resolved.relative, e))?;
        if bytes.len() as u64 > MAX_EDIT_FILE_BYTES {
            return Err(WorkspaceError::TooLargeToEdit {
                path: resolved.relative.clone(),
                size: bytes.len() as u64,
                limit: MAX_EDIT_FILE_BYTES,
            });
        }
        if binary_reason(&bytes).is_some() {
            return Ok((bytes.len() as u64, None));
        }
        Ok((bytes.len() as u64, String::from_utf8(bytes).ok()))
    }
}

/// A unified diff from `old` (`None`: the file is new) to `new`, cut at [`MAX_DIFF_BYTES`].
pub(crate) fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let from = if old.is_some() { format!("a/{path}") } else { "/dev/null".to_owned() };
    let to = format!("b/{path}");
    let mut diff = TextDiff::from_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(DIFF_CONTEXT_LINES)
        .header(&from, &to)
        .to_string();
    if diff.len() > MAX_DIFF_BYTES {
        let mut end = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(end) {
            end -= 1;
        }
        let cut = diff.len() - end;
        diff.truncate(end);
        diff.push_str(&format!("\n[diff cut: {cut} more bytes]\n"));
    }
    diff
}

/// Removes the temporary files that writes of `file_name` by processes no longer running left
/// in `folder` (a write killed before its rename), so they do not pile up in the person's
/// folder or show in `git status`. A temporary file of a running process is left alone.
fn remove_stale_temporaries(folder: &OwnedFd, file_name: &str) {
    let prefix = format!(".{file_name}.flame-");
    let Ok(entries) = rustix::fs::Dir::read_from(folder) else { return };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().ok().map(str::to_owned) else { continue };
        let Some(rest) = name.strip_prefix(&prefix) else { continue };
        let Some(pid) = rest
            .strip_suffix(".tmp")
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let running = pid as u32 == std::process::id()
            || nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                != Err(nix::errno::Errno::ESRCH);
        if !running {
            let _ = rustix::fs::unlinkat(folder, name.as_str(), AtFlags::empty());
        }
    }
}

/// Tells temporary files of one process apart without randomness.
static TEMPORARY_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Workspace {
    /// Writes `content` to `resolved` through a temporary file in the same folder (so the
    /// rename cannot cross file systems), synced before the rename; the folder is synced after
    /// it. A replaced file's permissions are kept. Missing parent folders are made. The folder is
    /// reached from the workspace's handle without following links, and the temporary file is
    /// made, renamed and removed relative to it, so a folder swapped for a link meanwhile is
    /// refused, never written through.
    pub(crate) fn write_atomically(
        &self,
        resolved: &ResolvedPath,
        content: &[u8],
    ) -> Result<(), WorkspaceError> {
        let name = resolved.relative.as_str();
        let relative = Path::new(name);
        let io = |action: &'static str| {
            move |e: rustix::io::Errno| WorkspaceError::io(action, name, e.into())
        };
        let folder = self.open_folder(relative.parent().unwrap_or(Path::new("")), true)?;
        let file_name = relative.file_name().unwrap_or_default();
        let permissions = match rustix::fs::statat(&folder, file_name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    return Err(WorkspaceError::IsDirectory { path: name.to_owned() });
                }
                FileType::Symlink => {
                    return Err(WorkspaceError::Replaced {
                        path: name.to_owned(),
                        name: file_name.to_string_lossy().into_owned(),
                    });
                }
                FileType::RegularFile => Some(Mode::from_raw_mode(stat.st_mode & 0o7777)),
                _ => return Err(WorkspaceError::NotRegularFile { path: name.to_owned() }),
            },
            Err(rustix::io::Errno::NOENT) => None,
            Err(errno) => return Err(io("inspect")(errno)),
        };

        let file_name = file_name.to_string_lossy().into_owned();
        remove_stale_temporaries(&folder, &file_name);
        let (temporary, mut file) = loop {
            let number = TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed);
            let candidate = format!(".{file_name}.flame-{}-{number}.tmp", std::process::id());
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(&folder, candidate.as_str(), flags, Mode::from_raw_mode(0o666))
            {
                Ok(fd) => break (candidate, File::from(fd)),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(errno) => return Err(io("create a temporary file for")(errno)),
            }
        };
        let written = (|| -> std::io::Result<()> {
            file.write_all(content)?;
            if let Some(mode) = permissions {
                rustix::fs::fchmod(&file, mode)?;
            }
            file.sync_all()?;
            drop(file);
            rustix::fs::renameat(&folder, temporary.as_str(), &folder, file_name.as_str())?;
            Ok(())
        })();
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&folder, temporary.as_str(), AtFlags::empty());
            return Err(WorkspaceError::io("write", name, e));
        }
        rustix::fs::fsync(&folder).map_err(io("sync the folder of"))?;
        Ok(())
    }
}
