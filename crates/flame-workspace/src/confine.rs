//! Confinement: every path the model gives is resolved to a real path inside the workspace, or
//! refused. The check is on the real path of the longest existing prefix (so a symbolic link
//! inside the workspace that points outside is caught whatever its spelling), and the part that
//! does not exist yet is plain names, so creating it cannot leave the workspace either.
//!
//! `.git` is refused for reading as well as writing: the tools have no business in the
//! repository's own files, its `config` can hold credentials in remote URLs, and the model can
//! still inspect the repository with `git` through `run_command`.
//!
//! Resolving names the path; it does not open it. Every read and write then goes through a handle
//! on the workspace folder, opened once by [`Workspace::open`], one name at a time and never
//! following a link ([`Workspace::open_folder`], [`Workspace::open_regular`]): a folder swapped for
//! a link between the check and the use (to somewhere outside, or to Flame's own data) is refused
//! rather than followed, and a workspace folder replaced by a link after it was chosen is seen for
//! what it is by whoever opens it ([`Workspace::root`] is where the handle leads).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use nix::errno::Errno;
use rustix::fs::{Mode, OFlags};

use crate::WorkspaceError;

/// A path the model gave, resolved inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The absolute real path (symbolic links resolved for the part that exists).
    pub real: PathBuf,
    /// The same path relative to the workspace root, with `/` separators: the name the model,
    /// the tool cards and the file trail use.
    pub relative: String,
}

/// A workspace folder: the only place the tools read, write and run in.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The canonical root: absolute, symbolic links resolved; where the handle led when opened.
    root: PathBuf,
    /// The root as it was given, so an absolute path spelt through it (say `/tmp/x` when `/tmp`
    /// is a link) is still recognised as inside.
    given_root: PathBuf,
    /// The folder itself, held open: every file is reached from it.
    handle: Arc<OwnedFd>,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory. The folder is held
    /// open, and [`Workspace::root`] is the real path of what was opened.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, WorkspaceError> {
        let given_root = root.as_ref().to_path_buf();
        let handle = rustix::fs::open(
            &given_root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| match errno {
            rustix::io::Errno::NOTDIR => {
                WorkspaceError::RootNotDirectory { root: given_root.clone() }
            }
            errno => WorkspaceError::Root { root: given_root.clone(), source: errno.into() },
        })?;
        // Where the handle leads now, from the kernel; the path given may have been a link.
        let root = std::fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd()))
            .or_else(|_| std::fs::canonicalize(&given_root))
            .map_err(|source| WorkspaceError::Root { root: given_root.clone(), source })?;
        Ok(Workspace { root, given_root, handle: Arc::new(handle) })
    }

    /// The canonical root folder: where the folder held open was when it was opened.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder `relative` (a resolved path: plain names, no links), opened for reading its
    /// entries one name at a time from the workspace's handle, never through a link; with
    /// `create`, missing folders are made on the way. A name that is now a link is refused
    /// ([`WorkspaceError::Replaced`]): it was not one when the path was resolved.
    pub(crate) fn open_folder(
        &self,
        relative: &Path,
        create: bool,
    ) -> Result<OwnedFd, WorkspaceError> {
        let shown = relative_string(relative);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut folder = rustix::fs::openat(&*self.handle, ".", flags, Mode::empty())
            .map_err(|errno| WorkspaceError::io("open", &shown, errno.into()))?;
        for name in relative.iter() {
            let opened = match rustix::fs::openat(&folder, name, flags, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&folder, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(errno) => {
                            return Err(WorkspaceError::io(
                                "make the folders of",
                                &shown,
                                errno.into(),
                            ));
                        }
                    }
                    rustix::fs::openat(&folder, name, flags, Mode::empty())
                }
                opened => opened,
            };
            folder = opened.map_err(|errno| self.open_error(&folder, &shown, name, errno))?;
        }
        Ok(folder)
    }

    /// The file `name` (the relative path of a resolved path), opened for reading from the
    /// workspace's handle without following a link, and checked to be a regular file that is not
    /// also reachable by another name ([`WorkspaceError::HardLinked`]): with its size.
    pub(crate) fn open_regular(&self, name: &str) -> Result<(File, u64), WorkspaceError> {
        let relative = Path::new(name);
        let folder =
            self.open_folder(relative.parent().unwrap_or(Path::new("")), false).map_err(|err| {
                match err {
                    WorkspaceError::Io { source, .. }
                        if source.kind() == io::ErrorKind::NotFound =>
                    {
                        WorkspaceError::NotFound { path: name.to_owned() }
                    }
                    other => other,
                }
            })?;
        let file_name = relative.file_name().unwrap_or(OsStr::new(""));
        // Non-blocking, so that a FIFO put in a file's place does not hold the tool; it makes no
        // difference to a regular file.
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let file = rustix::fs::openat(&folder, file_name, flags, Mode::empty())
            .map(File::from)
            .map_err(|errno| match errno {
                rustix::io::Errno::NOENT => WorkspaceError::NotFound { path: name.to_owned() },
                errno => self.open_error(&folder, name, file_name, errno),
            })?;
        let meta = file.metadata().map_err(|e| WorkspaceError::io("read", name, e))?;
        if meta.is_dir() {
            return Err(WorkspaceError::IsDirectory { path: name.to_owned() });
        }
        if !meta.is_file() {
            return Err(WorkspaceError::NotRegularFile { path: name.to_owned() });
        }
        let links = std::os::unix::fs::MetadataExt::nlink(&meta);
        if links > 1 {
            return Err(WorkspaceError::HardLinked { path: name.to_owned(), links });
        }
        Ok((file, meta.len()))
    }

    /// The error for opening `name` in `folder` on the way to `path`: a link there (which
    /// no-follow refuses with `ELOOP`, or `ENOTDIR` where a folder was asked for) means the path
    /// changed since it was resolved.
    fn open_error(
        &self,
        folder: &OwnedFd,
        path: &str,
        name: &OsStr,
        errno: rustix::io::Errno,
    ) -> WorkspaceError {
        let is_link = || {
            rustix::fs::statat(folder, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(
                |stat| {
                    rustix::fs::FileType::from_raw_mode(stat.st_mode)
                        == rustix::fs::FileType::Symlink
                },
            )
        };
        match errno {
            rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR if is_link() => {
                WorkspaceError::Replaced {
                    path: path.to_owned(),
                    name: name.to_string_lossy().into_owned(),
                }
            }
            errno => WorkspaceError::io("open", path, errno.into()),
        }
    }

    /// Resolves a path the model gave (relative to the root, or absolute inside it) to a real
    /// path inside the workspace. Refuses `..` leading out, absolute paths elsewhere, symbolic
    /// links leading out or looping or dangling, anything inside `.git`, and the root itself.
    pub fn resolve(&self, path: &str) -> Result<ResolvedPath, WorkspaceError> {
        let parts = self.lexical_parts(path)?;
        if parts.is_empty() {
            return Err(WorkspaceError::NotAFilePath { path: path.to_owned() });
        }
        refuse_git(path, parts.iter().map(|p| p.as_os_str()))?;

        let mut real = self.root.clone();
        let mut index = 0;
        while index < parts.len() {
            let next = real.join(&parts[index]);
            match std::fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    real = self.follow_link(path, &next)?;
                }
                Ok(_) => real = next,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // Nothing exists from here on: the rest are plain names under a real
                    // directory inside the workspace.
                    real = parts[index..].iter().fold(real, |acc, part| acc.join(part));
                    break;
                }
                Err(e) if e.raw_os_error() == Some(Errno::ENOTDIR as i32) => {
                    return Err(WorkspaceError::io("use", path, e));
                }
                Err(e) => return Err(WorkspaceError::io("inspect", path, e)),
            }
            index += 1;
        }

        let relative = self.relative_of(path, &real)?;
        if relative.is_empty() {
            return Err(WorkspaceError::NotAFilePath { path: path.to_owned() });
        }
        refuse_git(path, Path::new(&relative).iter())?;
        Ok(ResolvedPath { real, relative })
    }

    /// The path's components after removing `.` and applying `..` by name, relative to the root.
    fn lexical_parts(&self, path: &str) -> Result<Vec<OsString>, WorkspaceError> {
        let given = Path::new(path);
        let relative = if given.is_absolute() {
            given
                .strip_prefix(&self.root)
                .or_else(|_| given.strip_prefix(&self.given_root))
                .map_err(|_| WorkspaceError::Outside { path: path.to_owned() })?
        } else {
            given
        };
        let mut parts: Vec<OsString> = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => parts.push(name.to_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(WorkspaceError::Outside { path: path.to_owned() });
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(WorkspaceError::Outside { path: path.to_owned() });
                }
            }
        }
        Ok(parts)
    }

    /// The real path behind the symbolic link `link`, which must stay inside the workspace.
    fn follow_link(&self, path: &str, link: &Path) -> Result<PathBuf, WorkspaceError> {
        match std::fs::canonicalize(link) {
            Ok(target) if target.starts_with(&self.root) => Ok(target),
            Ok(target) => Err(WorkspaceError::SymlinkOutside { path: path.to_owned(), target }),
            Err(e) if e.raw_os_error() == Some(Errno::ELOOP as i32) => {
                Err(WorkspaceError::SymlinkLoop { path: path.to_owned() })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let target = std::fs::read_link(link).unwrap_or_else(|_| link.to_path_buf());
                Err(WorkspaceError::DanglingSymlink { path: path.to_owned(), link: target })
            }
            Err(e) => Err(WorkspaceError::io("follow the link in", path, e)),
        }
    }

    fn relative_of(&self, path: &str, real: &Path) -> Result<String, WorkspaceError> {
        let rest = real
            .strip_prefix(&self.root)
            .map_err(|_| WorkspaceError::Outside { path: path.to_owned() })?;
        Ok(relative_string(rest))
    }
}

/// A relative path with `/` separators.
pub(crate) fn relative_string(path: &Path) -> String {
    let parts: Vec<String> = path.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    parts.join("/")
}

/// Whether a name is `.git`. Compared without case, since macOS and Windows file systems are
/// case-insensitive by default and `.GIT` is the same folder there.
pub(crate) fn is_git_name(name: &OsStr) -> bool {
    name.to_str().is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

fn refuse_git<'a>(
    path: &str,
    mut parts: impl Iterator<Item = &'a OsStr>,
) -> Result<(), WorkspaceError> {
    if parts.any(is_git_name) {
        return Err(WorkspaceError::GitDirectory { path: path.to_owned() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_replaced_by_a_link_after_resolving_is_neither_read_nor_written_through() {
        let outer = tempfile::tempdir().expect("a temporary folder");
        let (root, outside) = (outer.path().join("ws"), outer.path().join("outside"));
        std::fs::create_dir_all(root.join("sub")).expect("the workspace");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(root.join("sub/notes.txt"), "inside").expect("a file inside");
        std::fs::write(outside.join("notes.txt"), "SECRET").expect("a file outside");
        let workspace = Workspace::open(&root).expect("open");
        let read = workspace.resolve("sub/notes.txt").expect("resolves inside");
        let written = workspace.resolve("sub/new.txt").expect("resolves inside");
        // Between the check and the use, the folder becomes a link to the outside.
        std::fs::rename(root.join("sub"), root.join("sub.old")).expect("move the folder away");
        std::os::unix::fs::symlink(&outside, root.join("sub")).expect("the link");

        let error = workspace.open_regular(&read.relative).expect_err("read through the link");
        assert!(
            matches!(error, WorkspaceError::Replaced { ref name, .. } if name == "sub"),
            "{error:?}"
        );
        let error = workspace.write_atomically(&written, b"x").expect_err("write through it");
        assert!(matches!(error, WorkspaceError::Replaced { .. }), "{error:?}");
        let names: Vec<_> = std::fs::read_dir(&outside)
            .expect("outside")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["notes.txt"], "nothing, not even a temporary file, landed outside");
    }

    #[test]
    fn the_root_is_where_the_opened_folder_is() {
        let outer = tempfile::tempdir().expect("a temporary folder");
        let real = outer.path().join("real");
        std::fs::create_dir(&real).expect("a folder");
        std::os::unix::fs::symlink(&real, outer.path().join("link")).expect("a link to it");
        let workspace = Workspace::open(outer.path().join("link")).expect("open through the link");
        assert_eq!(workspace.root(), real.canonicalize().expect("canonical"));
    }
}
