//! Comparing snapshots: which files changed, their diff, and single entries.

use std::collections::BTreeMap;

use crate::git::Git;
use crate::{
    ChangeKind, CheckpointError, CommitId, Diff, Entry, FileChange, FileDiffStat, MAX_DIFF_BYTES,
    Skipped, message,
};

/// The most paths given to one git run as a pathspec, so that the command line stays far below
/// the system's limit; longer lists are diffed a chunk at a time.
const PATHS_PER_RUN: usize = 1_000;

/// Above this many paths, [`entries`] lists the whole tree and picks from it rather than passing
/// the paths on the command line.
const ENTRIES_BY_PATHSPEC: usize = 256;

/// One record of `git diff-tree --raw -z`.
struct RawChange {
    old_mode: u32,
    new_mode: u32,
    old_oid: String,
    new_oid: String,
    status: u8,
    path: String,
    old_path: Option<String>,
}

pub(crate) fn changed(
    git: &Git,
    from: &CommitId,
    to: &CommitId,
) -> Result<Vec<FileChange>, CheckpointError> {
    git.require_commits(&[from, to])?;
    let output = git.run(
        &["diff-tree", "-r", "-z", "--no-renames", "--raw", from.as_str(), to.as_str()],
        None,
    )?;
    let mut tokens = output.split(|byte| *byte == 0).peekable();
    let raw = read_raw(&mut tokens)?;
    let skipped_from = skipped(git, from)?;
    let skipped = skipped(git, to)?;
    let mut changes: Vec<FileChange> = raw
        .iter()
        .map(|change| FileChange { path: change.path.clone(), kind: kind_of(change, &skipped) })
        .collect();
    for change in skipped_changes(git, (from, &skipped_from), (to, &skipped))? {
        if !changes.iter().any(|known| known.path == change.path) {
            changes.push(change);
        }
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(changes)
}

/// What changed among the files a snapshot left out, which git's trees cannot show: a path
/// skipped in both whose signature differs (or is known in one only), a path skipped in `to`
/// that `from` did not hold at all (`NotSnapshotted`), and a path skipped in `from` that `to`
/// neither holds nor skips (`Deleted`). A path skipped in one and held in the other is in git's
/// own comparison already.
fn skipped_changes(
    git: &Git,
    (from, skipped_from): (&CommitId, &[Skipped]),
    (to, skipped_to): (&CommitId, &[Skipped]),
) -> Result<Vec<FileChange>, CheckpointError> {
    let before: BTreeMap<&str, &Skipped> =
        skipped_from.iter().map(|one| (one.path.as_str(), one)).collect();
    let after: BTreeMap<&str, &Skipped> =
        skipped_to.iter().map(|one| (one.path.as_str(), one)).collect();
    let only_after: Vec<String> =
        after.keys().filter(|path| !before.contains_key(*path)).map(|p| (*p).to_owned()).collect();
    let only_before: Vec<String> =
        before.keys().filter(|path| !after.contains_key(*path)).map(|p| (*p).to_owned()).collect();
    let held_before = entries(git, from, &only_after)?;
    let held_after = entries(git, to, &only_before)?;
    let mut changes = Vec::new();
    for (path, now) in &after {
        let changed = match before.get(path) {
            Some(then) => match (&then.signature, &now.signature) {
                (Some(then), Some(now)) => then != now,
                (None, None) => false,
                _ => true,
            },
            None => held_before.get(*path).is_some_and(Option::is_none),
        };
        if changed {
            changes.push(FileChange { path: (*path).to_owned(), kind: ChangeKind::NotSnapshotted });
        }
    }
    for path in &only_before {
        let gone = held_after.get(path).is_some_and(Option::is_none)
            && message::is_skipped(skipped_to, path).is_none();
        if gone {
            changes.push(FileChange { path: path.clone(), kind: ChangeKind::Deleted });
        }
    }
    Ok(changes)
}

pub(crate) fn diff(
    git: &Git,
    from: &CommitId,
    to: &CommitId,
    paths: Option<&[String]>,
) -> Result<Diff, CheckpointError> {
    git.require_commits(&[from, to])?;
    let skipped_from = skipped(git, from)?;
    let skipped = skipped(git, to)?;
    // Files left out of a snapshot that changed are named, with no lines, as git cannot diff
    // them.
    let unseen: Vec<FileDiffStat> = skipped_changes(git, (from, &skipped_from), (to, &skipped))?
        .into_iter()
        .filter(|change| paths.is_none_or(|paths| paths.contains(&change.path)))
        .map(|change| FileDiffStat {
            path: change.path,
            old_path: None,
            kind: change.kind,
            added_lines: 0,
            removed_lines: 0,
            binary: false,
        })
        .collect();
    let chunks: Vec<Vec<String>> = match paths {
        None => vec![Vec::new()],
        Some(paths) => {
            let mut paths = paths.to_vec();
            paths.sort();
            paths.dedup();
            if paths.is_empty() {
                return Ok(Diff { files: unseen, patch: String::new(), truncated: false });
            }
            paths.chunks(PATHS_PER_RUN).map(<[String]>::to_vec).collect()
        }
    };
    let mut result = Diff { files: Vec::new(), patch: String::new(), truncated: false };
    for chunk in chunks {
        let mut args = vec![
            "diff-tree",
            "-r",
            "-z",
            "-M",
            "--raw",
            "--numstat",
            from.as_str(),
            to.as_str(),
            "--",
        ];
        args.extend(chunk.iter().map(String::as_str));
        let output = git.run(&args, None)?;
        let mut tokens = output.split(|byte| *byte == 0).peekable();
        let raw = read_raw(&mut tokens)?;
        for change in raw {
            let (added_lines, removed_lines, binary) = read_numstat(&mut tokens)?;
            result.files.push(FileDiffStat {
                kind: kind_of(&change, &skipped),
                path: change.path,
                old_path: change.old_path,
                added_lines,
                removed_lines,
                binary,
            });
        }
        if result.truncated {
            continue;
        }
        let room = MAX_DIFF_BYTES - result.patch.len();
        let mut args = vec![
            "diff-tree",
            "-r",
            "-M",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            from.as_str(),
            to.as_str(),
            "--",
        ];
        args.extend(chunk.iter().map(String::as_str));
        let (mut patch, truncated) = git.run_capped(&args, room)?;
        if truncated {
            // Cut at the last whole line, so no line is shown half.
            let end = patch.iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
            patch.truncate(end);
            result.truncated = true;
        }
        result.patch.push_str(&String::from_utf8_lossy(&patch));
        // A lossy conversion can make the text longer than the bytes it came from.
        if result.patch.len() > MAX_DIFF_BYTES {
            let mut end = MAX_DIFF_BYTES;
            while !result.patch.is_char_boundary(end) {
                end -= 1;
            }
            result.patch.truncate(end);
            result.truncated = true;
        }
    }
    for file in unseen {
        if !result.files.iter().any(|known| known.path == file.path) {
            result.files.push(file);
        }
    }
    result.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(result)
}

pub(crate) fn entries(
    git: &Git,
    commit: &CommitId,
    paths: &[String],
) -> Result<BTreeMap<String, Option<Entry>>, CheckpointError> {
    git.require_commits(&[commit])?;
    let mut found: BTreeMap<String, Option<Entry>> =
        paths.iter().map(|path| (path.clone(), None)).collect();
    if paths.is_empty() {
        return Ok(found);
    }
    let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit.as_str()];
    if paths.len() <= ENTRIES_BY_PATHSPEC {
        args.push("--");
        args.extend(paths.iter().map(String::as_str));
    }
    let output = git.run(&args, None)?;
    for record in output.split(|byte| *byte == 0).filter(|record| !record.is_empty()) {
        let (path, entry) = read_tree_entry(record)?;
        if let Some(slot) = found.get_mut(&path) {
            *slot = Some(entry);
        }
    }
    Ok(found)
}

pub(crate) fn skipped(git: &Git, commit: &CommitId) -> Result<Vec<Skipped>, CheckpointError> {
    git.require_commits(&[commit])?;
    let object = git.run(&["cat-file", "commit", commit.as_str()], None)?;
    let object = String::from_utf8_lossy(&object);
    let text = object.split_once("\n\n").map_or("", |(_, message)| message);
    Ok(message::parse(text).0)
}

/// One `ls-tree` record, `<mode> <type> <oid>\t<path>`.
pub(crate) fn read_tree_entry(record: &[u8]) -> Result<(String, Entry), CheckpointError> {
    let text = std::str::from_utf8(record).map_err(|_| unexpected("ls-tree", record))?;
    let (head, path) = text.split_once('\t').ok_or_else(|| unexpected("ls-tree", record))?;
    let mut fields = head.split(' ');
    let (Some(mode), Some(_), Some(oid)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(unexpected("ls-tree", record));
    };
    let mode = u32::from_str_radix(mode, 8).map_err(|_| unexpected("ls-tree", record))?;
    Ok((path.to_owned(), Entry { oid: oid.to_owned(), mode }))
}

fn read_raw<'a>(
    tokens: &mut std::iter::Peekable<impl Iterator<Item = &'a [u8]>>,
) -> Result<Vec<RawChange>, CheckpointError> {
    let mut changes = Vec::new();
    while let Some(header) = tokens.next_if(|token| token.first() == Some(&b':')) {
        let text =
            std::str::from_utf8(&header[1..]).map_err(|_| unexpected("diff-tree", header))?;
        let fields: Vec<&str> = text.split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = fields[..] else {
            return Err(unexpected("diff-tree", header));
        };
        let status = status.bytes().next().ok_or_else(|| unexpected("diff-tree", header))?;
        let mut path = || {
            tokens
                .next()
                .and_then(|path| std::str::from_utf8(path).ok())
                .map(str::to_owned)
                .ok_or_else(|| unexpected("diff-tree", header))
        };
        let (old_path, path) = if matches!(status, b'R' | b'C') {
            let old = path()?;
            (Some(old), path()?)
        } else {
            (None, path()?)
        };
        let mode =
            |text: &str| u32::from_str_radix(text, 8).map_err(|_| unexpected("diff-tree", header));
        changes.push(RawChange {
            old_mode: mode(old_mode)?,
            new_mode: mode(new_mode)?,
            old_oid: old_oid.to_owned(),
            new_oid: new_oid.to_owned(),
            status,
            path,
            old_path,
        });
    }
    Ok(changes)
}

/// One `--numstat -z` record: `added\tremoved\tpath` or, for a rename, `added\tremoved\t` then the
/// two paths as tokens of their own. Binary files count `-`.
fn read_numstat<'a>(
    tokens: &mut impl Iterator<Item = &'a [u8]>,
) -> Result<(u64, u64, bool), CheckpointError> {
    let record = tokens.next().ok_or_else(|| {
        CheckpointError::Unexpected("diff-tree: a missing --numstat record".into())
    })?;
    let mut fields = record.splitn(3, |byte| *byte == b'\t');
    let (Some(added), Some(removed), Some(path)) = (fields.next(), fields.next(), fields.next())
    else {
        return Err(unexpected("diff-tree --numstat", record));
    };
    if path.is_empty() {
        // A rename: its two paths follow.
        tokens.next();
        tokens.next();
    }
    if added == b"-" && removed == b"-" {
        return Ok((0, 0, true));
    }
    let number = |field: &[u8]| {
        std::str::from_utf8(field)
            .ok()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| unexpected("diff-tree --numstat", record))
    };
    Ok((number(added)?, number(removed)?, false))
}

fn kind_of(change: &RawChange, skipped_in_to: &[Skipped]) -> ChangeKind {
    match change.status {
        b'A' => ChangeKind::Added,
        b'D' if message::is_skipped(skipped_in_to, &change.path).is_some() => {
            ChangeKind::NotSnapshotted
        }
        b'D' => ChangeKind::Deleted,
        b'T' => ChangeKind::TypeChanged,
        b'M' if change.old_oid == change.new_oid && change.old_mode != change.new_mode => {
            ChangeKind::ModeChanged
        }
        _ => ChangeKind::Modified,
    }
}

fn unexpected(what: &str, record: &[u8]) -> CheckpointError {
    let shown: String = String::from_utf8_lossy(record).chars().take(200).collect();
    CheckpointError::Unexpected(format!("{what}: {shown:?}"))
}
