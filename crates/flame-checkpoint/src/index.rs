//! Reading the shadow's index, so that a snapshot hands git only the paths that may have changed.
//!
//! `git update-index` lstat()s every path it is given and skips those whose stat still matches
//! their index entry. Given every path of a 50,000-file workspace that is about half of an
//! incremental snapshot, although the walk has just read the same stats. The index keeps each
//! entry's stat as git last saw it (<https://git-scm.com/docs/index-format>), so the snapshot
//! compares the walk's stats with it and hands git only the paths git would not skip.
//!
//! The comparison is never looser than git's own: every stat field git records must match, and
//! an entry git could call *racily clean* (changed in the same second as the index was written)
//! is handed to git, which then compares its content. An index this reader does not know (a
//! format version, a split or sparse index, anything malformed or over [`MAX_INDEX_BYTES`]) gives
//! `None`, and the snapshot hands git every path as before.

use std::collections::HashMap;
use std::path::Path;

/// The largest index read: 500,000 files ([`crate::MAX_SNAPSHOT_FILES`]) with paths of about 100
/// bytes make about 80 MB.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// A regular file's stat as git's index records it: times in seconds and nanoseconds, and the
/// other fields cut to their low 32 bits, as git writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    ctime: (u32, u32),
    mtime: (u32, u32),
    dev: u32,
    ino: u32,
    executable: bool,
    uid: u32,
    gid: u32,
    size: u32,
}

impl FileStat {
    /// The stat of a regular file, from its (not followed) metadata.
    #[cfg(unix)]
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Option<FileStat> {
        use std::os::unix::fs::MetadataExt;
        // git keeps the low 32 bits of each field; the cuts below are the same.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let stat = FileStat {
            ctime: (metadata.ctime() as u32, metadata.ctime_nsec() as u32),
            mtime: (metadata.mtime() as u32, metadata.mtime_nsec() as u32),
            dev: metadata.dev() as u32,
            ino: metadata.ino() as u32,
            executable: metadata.mode() & 0o111 != 0,
            uid: metadata.uid(),
            gid: metadata.gid(),
            size: metadata.size() as u32,
        };
        metadata.file_type().is_file().then_some(stat)
    }

    /// Off Unix the walk records no stats, and every path is handed to git.
    #[cfg(not(unix))]
    pub(crate) fn of(_metadata: &std::fs::Metadata) -> Option<FileStat> {
        None
    }
}

/// The index's entries: each path with its recorded stat (`None` for what is not a regular file),
/// and when the index was written.
#[derive(Debug)]
pub(crate) struct Index {
    pub(crate) entries: Vec<(Vec<u8>, Option<FileStat>)>,
    /// The index file's modification time, in seconds.
    written_second: u32,
}

impl Index {
    /// Whether git would skip a file whose stat the walk found to be `found`, given its entry's
    /// `recorded` stat: every field matches, the entry is not racily clean (last changed in or
    /// after the second the index was written), and it is not empty (git marks a racily clean
    /// entry by recording its size as 0, and then reads the file).
    pub(crate) fn unchanged(&self, recorded: Option<FileStat>, found: Option<FileStat>) -> bool {
        match (recorded, found) {
            (Some(recorded), Some(found)) => {
                recorded == found && recorded.size != 0 && recorded.mtime.0 < self.written_second
            }
            _ => false,
        }
    }

    /// A map from each indexed path to its recorded stat.
    pub(crate) fn by_path(&self) -> HashMap<&[u8], Option<FileStat>> {
        self.entries.iter().map(|(path, stat)| (path.as_slice(), *stat)).collect()
    }
}

/// Reads the index file at `path`: an empty index when there is none yet, `None` when it cannot
/// be read or is not one this reader knows.
pub(crate) fn read(path: &Path) -> Option<Index> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Some(Index { entries: Vec::new(), written_second: 0 });
        }
        Err(_) => return None,
    };
    if metadata.len() > MAX_INDEX_BYTES {
        return None;
    }
    let written_second = written_second(&metadata)?;
    // The snapshot holds the shadow's lock, so git is not writing the index meanwhile; and git
    // replaces an index by renaming a whole new one over it.
    parse(&std::fs::read(path).ok()?, written_second)
}

#[cfg(unix)]
fn written_second(metadata: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    u32::try_from(metadata.mtime()).ok()
}

/// Off Unix nothing is known of the index, and every path is handed to git.
#[cfg(not(unix))]
fn written_second(_metadata: &std::fs::Metadata) -> Option<u32> {
    None
}

/// The fixed part of an entry before its path: ten 32-bit stat fields, a SHA-1 and the flags.
const ENTRY_HEAD: usize = 62;
/// An entry's mode for a regular file; its low bits hold the executable bits.
const REGULAR_FILE: u32 = 0o100000;
const TYPE_MASK: u32 = 0o170000;
/// The flag bits that hold the path's length; `NAME_MASK` itself means "as long or longer".
const NAME_MASK: u16 = 0x0fff;
const EXTENDED_FLAG: u16 = 0x4000;

fn parse(bytes: &[u8], written_second: u32) -> Option<Index> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" || !matches!(word(4)?, 2 | 3) {
        return None;
    }
    let count = usize::try_from(word(8)?).ok()?;
    let mut entries = Vec::with_capacity(count.min(bytes.len() / ENTRY_HEAD));
    let mut at = 12;
    for _ in 0..count {
        let fields: Vec<u32> = (0..10).map(|i| word(at + 4 * i)).collect::<Option<_>>()?;
        let flags = u16::from_be_bytes(bytes.get(at + 60..at + 62)?.try_into().ok()?);
        // Extended flags (intent-to-add, skip-worktree) are never set in a shadow.
        if flags & EXTENDED_FLAG != 0 {
            return None;
        }
        let start = at + ENTRY_HEAD;
        let length = match flags & NAME_MASK {
            NAME_MASK => bytes.get(start..)?.iter().position(|b| *b == 0)?,
            length => usize::from(length),
        };
        let path = bytes.get(start..start + length)?.to_vec();
        // The path is followed by one to eight NULs, to a multiple of eight bytes.
        at += (ENTRY_HEAD + length + 8) / 8 * 8;
        let mode = fields[6];
        let stat = (mode & TYPE_MASK == REGULAR_FILE).then_some(FileStat {
            ctime: (fields[0], fields[1]),
            mtime: (fields[2], fields[3]),
            dev: fields[4],
            ino: fields[5],
            executable: mode & 0o111 != 0,
            uid: fields[7],
            gid: fields[8],
            size: fields[9],
        });
        entries.push((path, stat));
    }
    // Extensions follow, each a signature and a length, then the 20-byte checksum. A split index
    // (`link`) holds only some entries here, and a sparse one (`sdir`) folders for files.
    let checksum = bytes.len().checked_sub(20)?;
    while at < checksum {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" || signature == b"sdir" {
            return None;
        }
        at = at.checked_add(8)?.checked_add(usize::try_from(word(at + 4)?).ok()?)?;
    }
    (at == checksum).then_some(Index { entries, written_second })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads an index git wrote, with a link and an executable, and finds each file's recorded
    /// stat equal to its stat now.
    #[test]
    fn reads_the_stats_git_recorded() {
        use std::os::unix::fs::PermissionsExt;
        let folder = tempfile::tempdir().unwrap();
        let work = folder.path().join("work");
        std::fs::create_dir_all(work.join("deep")).unwrap();
        let long = format!("deep/{}.txt", "n".repeat(200));
        let names = ["a.txt", "run.sh", long.as_str()];
        for name in names {
            std::fs::write(work.join(name), name.as_bytes()).unwrap();
        }
        std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::os::unix::fs::symlink("a.txt", work.join("link")).unwrap();
        let index = folder.path().join("flame-index");
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .args(args)
                .current_dir(&work)
                .env("GIT_DIR", folder.path().join("git"))
                .env("GIT_WORK_TREE", &work)
                .env("GIT_INDEX_FILE", &index)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", folder.path())
                .status()
                .unwrap();
            assert!(status.success());
        };
        git(&["init", "-q"]);
        git(&["update-index", "--add", "a.txt", "run.sh", "link", long.as_str()]);
        git(&["write-tree"]);

        let read = read(&index).expect("an index git wrote");
        let recorded = read.by_path();
        assert_eq!(recorded.len(), 4);
        for name in names {
            let now = FileStat::of(&std::fs::symlink_metadata(work.join(name)).unwrap());
            assert!(now.is_some());
            assert_eq!(recorded[name.as_bytes()], now, "{name}");
        }
        assert!(recorded[b"run.sh".as_slice()].is_some_and(|stat| stat.executable));
        assert_eq!(recorded[b"link".as_slice()], None);
    }

    #[test]
    fn a_missing_index_is_empty_and_a_foreign_one_unknown() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("index");
        assert!(read(&path).unwrap().entries.is_empty());
        std::fs::write(&path, b"not an index at all, just text").unwrap();
        assert!(read(&path).is_none());
    }

    /// A path of 4,095 bytes or more does not fit the flags' 12 bits and ends at its NUL.
    #[test]
    fn reads_a_path_longer_than_the_flags_hold() {
        let path = vec![b'p'; 5_000];
        let mut bytes = b"DIRC".to_vec();
        bytes.extend_from_slice(&2u32.to_be_bytes());
        bytes.extend_from_slice(&1u32.to_be_bytes());
        for field in [1, 2, 3, 4, 5, 6, REGULAR_FILE | 0o644, 7, 8, 9] {
            bytes.extend_from_slice(&u32::to_be_bytes(field));
        }
        bytes.extend_from_slice(&[0; 20]);
        bytes.extend_from_slice(&NAME_MASK.to_be_bytes());
        bytes.extend_from_slice(&path);
        let padding = 8 - (ENTRY_HEAD + path.len()) % 8;
        bytes.extend(std::iter::repeat_n(0, padding));
        bytes.extend_from_slice(&[0; 20]);
        let index = parse(&bytes, 10).expect("read");
        assert_eq!(index.entries.len(), 1);
        assert_eq!(index.entries[0].0, path);
        assert_eq!(index.entries[0].1.map(|stat| (stat.mtime, stat.size)), Some(((3, 4), 9)));
    }

    #[test]
    fn cut_or_unknown_indexes_are_not_read() {
        let mut header = b"DIRC".to_vec();
        header.extend_from_slice(&2u32.to_be_bytes());
        header.extend_from_slice(&1u32.to_be_bytes());
        // One entry announced, none there.
        assert!(parse(&header, 0).is_none());
        let mut version_four = header.clone();
        version_four[4..8].copy_from_slice(&4u32.to_be_bytes());
        assert!(parse(&version_four, 0).is_none());
    }

    #[test]
    fn only_a_matching_settled_stat_is_unchanged() {
        let index = Index { entries: Vec::new(), written_second: 100 };
        let stat = FileStat {
            ctime: (50, 1),
            mtime: (50, 2),
            dev: 3,
            ino: 4,
            executable: false,
            uid: 5,
            gid: 6,
            size: 7,
        };
        assert!(index.unchanged(Some(stat), Some(stat)));
        assert!(!index.unchanged(Some(stat), None));
        assert!(!index.unchanged(None, Some(stat)));
        assert!(!index.unchanged(Some(stat), Some(FileStat { mtime: (50, 3), ..stat })));
        assert!(!index.unchanged(Some(stat), Some(FileStat { ctime: (51, 1), ..stat })));
        assert!(!index.unchanged(Some(stat), Some(FileStat { executable: true, ..stat })));
        assert!(!index.unchanged(Some(stat), Some(FileStat { ino: 9, ..stat })));
        // Changed in the second the index was written: racily clean, so git must look.
        let racy = FileStat { mtime: (100, 0), ..stat };
        assert!(!index.unchanged(Some(racy), Some(racy)));
        // Marked racily clean by git.
        let smudged = FileStat { size: 0, ..stat };
        assert!(!index.unchanged(Some(smudged), Some(smudged)));
    }
}
