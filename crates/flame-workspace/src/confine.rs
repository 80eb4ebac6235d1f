//! Confinement: every path the model gives is resolved to a real path inside the workspace, or
//! refused. The check is on the real path of the longest existing prefix (so a symbolic link
//! inside the workspace that points outside is caught whatever its spelling), and the part that
//! does not exist yet is plain names, so creating it cannot leave the workspace either.
//!
//! `.git` is refused for reading as well as writing: the tools have no business in the
//! repository's own files, its `config` can hold credentials in remote URLs, and the model can
//! still inspect the repository with `git` through `run_command`.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;

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
    /// The canonical root: absolute, symbolic links resolved.
    root: PathBuf,
    /// The root as it was given, so an absolute path spelt through it (say `/tmp/x` when `/tmp`
    /// is a link) is still recognised as inside.
    given_root: PathBuf,
}

impl Workspace {
    /// Opens the workspace at `root`, which must be an existing directory.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace, WorkspaceError> {
        let given_root = root.as_ref().to_path_buf();
        let canonical = std::fs::canonicalize(&given_root)
            .map_err(|source| WorkspaceError::Root { root: given_root.clone(), source })?;
        if !canonical.is_dir() {
            return Err(WorkspaceError::RootNotDirectory { root: given_root });
        }
        Ok(Workspace { root: canonical, given_root })
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
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
pub(crate) fn is_git_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

fn refuse_git<'a>(
    path: &str,
    mut parts: impl Iterator<Item = &'a std::ffi::OsStr>,
) -> Result<(), WorkspaceError> {
    if parts.any(is_git_name) {
        return Err(WorkspaceError::GitDirectory { path: path.to_owned() });
    }
    Ok(())
}
