//! A file only its owner may read, replaced whole. The settings file may hold API keys, so it is
//! never readable by others, not even for the moment between creating and restricting it, and a
//! crash or a full disk while it is written never leaves it half written (which would lose every
//! key in it).

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells apart the temporary files of two writes at once in one process.
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// Replaces the file at `path` with `contents`: see [`replace_with`].
pub(crate) fn replace(path: &Path, contents: &[u8]) -> io::Result<()> {
    replace_with(path, |file| file.write_all(contents))
}

/// Replaces the file at `path` with what `write` writes. The new file is created beside it with
/// mode 0600 (on Unix), written, flushed to disk and renamed over `path`, and the folder is
/// flushed so the rename itself survives a crash; `path` holds the old contents or the new ones,
/// never a mix. On failure the temporary file is removed and `path` is as it was. A missing
/// folder is created readable only by its owner.
pub(crate) fn replace_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    create_private_folder(folder)?;
    let temporary = temporary_path(folder, path);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    let written = write(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(err) = written {
        drop(file);
        // The write failed already; a temporary file that cannot be removed either is only
        // litter, and the first error is the one worth reporting.
        let _ = std::fs::remove_file(&temporary);
        return Err(err);
    }
    #[cfg(unix)]
    File::open(folder)?.sync_all()?;
    Ok(())
}

fn create_private_folder(folder: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(folder)
}

/// A hidden name beside `path`, unique to this process and write.
fn temporary_path(folder: &Path, path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed);
    folder.join(format!(".{name}.{}.{n}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_private_from_its_first_byte_and_replaces_a_readable_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        replace_with(&path, |file| {
            // While it is written, the new file is already the owner's alone.
            assert_eq!(file.metadata()?.permissions().mode() & 0o777, 0o600);
            file.write_all(b"new")
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(names_in(dir.path()), ["settings.json"], "no temporary file is left");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        replace(&path, b"{\"the\": \"old settings\"}").unwrap();
        let err = replace_with(&path, |file| {
            file.write_all(b"{\"half")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "the disk is full"))
        })
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"the\": \"old settings\"}");
        assert_eq!(names_in(dir.path()), ["settings.json"], "the temporary file is removed");
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_folder_is_created_for_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config").join("flame").join("settings.json");
        replace(&path, b"{}").unwrap();
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&path), 0o600);
    }
}
