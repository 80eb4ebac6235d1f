//! Every frame's full history as a human-readable Markdown file, `logs/<tree>/<frame>.md` in the
//! data directory.
//!
//! The database is the source of truth; a log is a rendering of the frame's events, appended
//! after each commit. Every section ends with a marker line `<!-- flame:seq=N -->` naming the
//! last event it holds, so bringing a log up to date is idempotent: under an exclusive file lock,
//! drop whatever follows the last marker (a write cut short by a crash), then append the events
//! after it. The store's `log_pending` table says which frames are behind; the same sync runs
//! after every operation and, for anything a crash left behind, when Flame opens.
//!
//! An import's logs are not written with it: a 100k-frame import would otherwise write
//! hundreds of megabytes in 100k files before it returns. Its frames' pending rows are dropped
//! (`Store::defer_imported_logs`) and each log is written whole, from the store, the first time it is
//! read ([`ensure`], from every read that hands out one frame's log) or its frame next changes.
//! A log written late is the same text as one written at once: a log holds the frame's events
//! rendered from the stored rows, which an import never changes, and its header names the
//! title the frame was created with.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use flame_model::{Event, EventDetail, EventKind, FrameId, Message, MessageId, Timestamp, TreeId};
use flame_store::Store;

const MARKER_PREFIX: &str = "<!-- flame:seq=";
const MARKER_SUFFIX: &str = " -->";
/// How much of a log's end is read to find its last marker; a section is rarely longer, and a
/// longer one only costs a second read.
const TAIL_BYTES: u64 = 64 * 1024;

/// The absolute path of a frame's log.
pub fn log_path(data_dir: &Path, tree: &TreeId, frame: &FrameId) -> PathBuf {
    data_dir.join(flame_model::log_relative_path(tree, frame))
}

/// The folder holding every log of `tree`.
pub fn tree_log_folder(data_dir: &Path, tree: &TreeId) -> PathBuf {
    data_dir.join(flame_model::log_relative_folder(tree))
}

/// Brings `frame`'s log up to date with the store and returns the last event seq it now holds.
pub fn sync(store: &Store, data_dir: &Path, tree: &TreeId, frame: &FrameId) -> anyhow::Result<i64> {
    let path = log_path(data_dir, tree, frame);
    let folder = path.parent().expect("a log path has a folder");
    fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // Another process may be appending to the same log; the lock is released when `file` drops.
    file.lock().with_context(|| format!("cannot lock {}", path.display()))?;

    let (last_seq, end) =
        last_marker(&mut file).with_context(|| format!("cannot read {}", path.display()))?;
    let events = store.frame_events(frame, last_seq)?;
    let Some(newest) = events.last().map(|e| e.seq) else {
        return Ok(last_seq);
    };
    let message_ids: Vec<MessageId> = events
        .iter()
        .filter_map(|e| match e.detail {
            EventDetail::MessageAdded { message } => Some(message),
            _ => None,
        })
        .collect();
    let mut messages = store.messages_by_id(&message_ids)?;
    for event in &events {
        if let EventDetail::Imported {
            first_message: Some(first), last_message: Some(last), ..
        } = event.detail
        {
            messages.extend(store.messages_between(frame, first, last)?);
        }
    }

    let mut text = String::new();
    if end == 0 {
        render_header(&mut text, store, tree, frame, &events);
    }
    for event in &events {
        render_event(&mut text, event, &messages);
    }
    // Only a torn write is cut off. Truncating a file that is already that long (a new, empty
    // log) is not free: ext4 then flushes the file's data when it is closed.
    if file.metadata()?.len() != end {
        file.set_len(end)?;
    }
    file.seek(SeekFrom::Start(end))?;
    // No fsync: like the database (WAL, synchronous=NORMAL), a log survives the process being
    // killed; after a power loss both may miss their last moments.
    file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(newest)
}

/// Writes `frame`'s log if it has no file yet (an imported frame's, see the module's comment),
/// so a path handed out names a file that holds the frame's history. A log already written is
/// left to [`sync_pending`], which keeps it up to date.
pub fn ensure(
    store: &Store,
    data_dir: &Path,
    tree: &TreeId,
    frame: &FrameId,
) -> anyhow::Result<()> {
    if !log_path(data_dir, tree, frame).exists() {
        sync(store, data_dir, tree, frame)?;
    }
    Ok(())
}

/// [`ensure`] for a read that must not fail because a log cannot be written: the failure is
/// reported, and the log is written on the next read or change.
pub(crate) fn ensure_or_warn(store: &Store, data_dir: &Path, tree: &TreeId, frame: &FrameId) {
    if let Err(err) = ensure(store, data_dir, tree, frame) {
        tracing::warn!(%frame, "the frame's log could not be written: {err:#}");
    }
}

/// Writes every log the store says is behind. Returns how many were brought up to date; a log
/// that cannot be written is reported and stays pending for the next try.
pub fn sync_pending(store: &mut Store, data_dir: &Path) -> anyhow::Result<usize> {
    let mut written = 0;
    for (tree, frame, _) in store.pending_logs()? {
        match sync(store, data_dir, &tree, &frame) {
            Ok(through) => {
                store.log_written(&frame, through)?;
                written += 1;
            }
            Err(err) => tracing::warn!(%frame, "the frame's log is behind the database: {err:#}"),
        }
    }
    Ok(written)
}

/// Finds the last complete section: the seq its marker names, and the byte just after it.
fn last_marker(file: &mut File) -> std::io::Result<(i64, u64)> {
    let len = file.metadata()?.len();
    let mut window = TAIL_BYTES.min(len);
    loop {
        file.seek(SeekFrom::Start(len - window))?;
        let mut tail = Vec::with_capacity(window as usize);
        file.take(window).read_to_end(&mut tail)?;
        if let Some((seq, end_in_tail)) = find_last_marker(&tail, window == len) {
            return Ok((seq, len - window + end_in_tail as u64));
        }
        if window == len {
            return Ok((0, 0));
        }
        window = (window * 4).min(len);
    }
}

/// The last whole marker line in `tail`: its seq and the offset just past its newline. Works on
/// bytes, since the tail may start in the middle of a multi-byte character. Unless `tail` starts
/// the file, its first line may be a fragment and is not considered.
fn find_last_marker(tail: &[u8], starts_file: bool) -> Option<(i64, usize)> {
    let prefix = MARKER_PREFIX.as_bytes();
    let suffix = format!("{MARKER_SUFFIX}\n");
    let mut line_end = tail.len();
    // Walk the lines backwards; a marker is a whole line of its own.
    while line_end > 0 {
        let line_start =
            tail[..line_end - 1].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if line_start == 0 && !starts_file {
            return None;
        }
        let line = &tail[line_start..line_end];
        if tail.get(line_end - 1) == Some(&b'\n')
            && line.starts_with(prefix)
            && line.ends_with(suffix.as_bytes())
        {
            let digits = &line[prefix.len()..line.len() - suffix.len()];
            if let Some(seq) = std::str::from_utf8(digits).ok().and_then(|d| d.parse().ok()) {
                return Some((seq, line_end));
            }
        }
        line_end = line_start;
    }
    None
}

fn render_header(
    out: &mut String,
    store: &Store,
    tree: &TreeId,
    frame: &FrameId,
    events: &[Event],
) {
    // The title the frame was created with, which its first event (creation, import or
    // retry) names: a header written when the frame was created names it too, so a log written
    // later (an imported frame's, or one written again after its file was lost) reads the same.
    let created_as = events.first().and_then(|e| e.detail.created_title()).map(str::to_owned);
    let title = match created_as {
        Some(title) => title,
        None => store.frame(frame).map_or_else(|_| "(deleted frame)".to_owned(), |f| f.title),
    };
    let _ = write!(
        out,
        "# {}\n\nFrame `{frame}` in tree `{tree}`. This file is Flame's full log of the frame, \
         written as it happens; the database is the source of truth.\n",
        one_line(&title)
    );
}

fn render_event(out: &mut String, event: &Event, messages: &[Message]) {
    let when = format_time(event.at);
    let by = event.actor.as_str();
    let kind = event.kind;
    match &event.detail {
        // Focus changes are recorded for live updates, not as part of a frame's history; a
        // deleted tree has no frames left to keep a log for.
        EventDetail::Focused { .. } | EventDetail::TreeDeleted { .. } => return,
        EventDetail::MessageAdded { message: id } => match messages.iter().find(|m| m.id == *id) {
            Some(m) => render_message(out, &when, m),
            None => {
                let _ = write!(out, "\n## {when} · message {} (not found)\n\n", id.0);
            }
        },
        EventDetail::TreeCreated { title, success_criteria, workspace } => {
            let _ = write!(out, "\n## {when} · created as the root by {by}\n\n");
            field(out, "Title", title);
            field(out, "Success criteria", success_criteria);
            field(out, "Workspace", workspace.as_deref().unwrap_or(""));
        }
        EventDetail::Placed { parent, position, title, success_criteria } => {
            let verb = if kind == EventKind::Pushed { "pushed" } else { "planned" };
            let _ = write!(out, "\n## {when} · {verb} by {by}\n\n");
            field(out, "Title", title);
            field(out, "Success criteria", success_criteria);
            let _ = write!(out, "**Parent:** `{parent}`, position {position}\n\n");
        }
        EventDetail::Edited { title, success_criteria } => {
            let _ = write!(out, "\n## {when} · edited by {by}\n\n");
            field(out, "Title", title);
            field(out, "Success criteria", success_criteria);
        }
        EventDetail::Moved { from_parent, from_position, to_parent, to_position } => {
            let _ = write!(
                out,
                "\n## {when} · moved by {by}\n\nFrom `{from_parent}` position {from_position} \
                 to `{to_parent}` position {to_position}.\n\n",
            );
        }
        EventDetail::Deleted { .. } => {
            let _ =
                write!(out, "\n## {when} · deleted by {by}\n\nThe planned frame was deleted.\n\n");
        }
        EventDetail::RetriedAs { retried_as } => {
            let _ = write!(out, "\n## {when} · retry by {by}\n\nRetried as `{retried_as}`.\n\n");
        }
        EventDetail::RetryOf { retry_of, title, success_criteria } => {
            let _ = write!(out, "\n## {when} · retry by {by}\n\n");
            let _ = write!(out, "This frame retries the failed `{retry_of}`.\n\n");
            field(out, "Title", title);
            field(out, "Success criteria", success_criteria);
        }
        EventDetail::Invalidated { reason } => {
            let _ = write!(out, "\n## {when} · invalidated by {by}\n\n");
            field(out, "Reason", reason);
        }
        EventDetail::ResultsUpdated { section: name, text } => {
            let _ = write!(out, "\n## {when} · results updated by {by}\n\n");
            section(out, name, text);
        }
        EventDetail::Imported { title, success_criteria, first_message, last_message } => {
            let _ = write!(out, "\n## {when} · imported by {by}\n\n");
            field(out, "Title", title);
            field(out, "Success criteria", success_criteria);
            if let (Some(first), Some(last)) = (first_message, last_message) {
                for m in messages.iter().filter(|m| (first.0..=last.0).contains(&m.id.0)) {
                    render_message(out, &format_time(m.created_at), m);
                }
            }
        }
        EventDetail::WorkspaceSet { workspace, .. } => {
            let _ = write!(out, "\n## {when} · workspace changed by {by}\n\n");
            match workspace {
                Some(folder) => {
                    out.push_str("Workspace set to ");
                    push_content(out, folder);
                }
                None => out.push_str("The workspace folder was cleared: the tree has none.\n\n"),
            }
        }
        EventDetail::RolledBack(record) => {
            let _ = write!(out, "\n## {when} · rolled back by {by}\n\n");
            out.push_str(
                "The files the frame changed were put back as they were when it started.\n\n",
            );
            list(out, "Restored", &record.restored);
            list(out, "Deleted (the frame had created them)", &record.deleted);
            list(out, "Not restored (not snapshotted when it started)", &record.not_restored);
        }
        EventDetail::BudgetSet { budget, .. } => {
            let _ = write!(out, "\n## {when} · budget set by {by}\n\n");
            match budget {
                Some(budget) => {
                    let _ = write!(out, "The frame's subtree may spend {}.\n\n", budget.describe());
                }
                None => out.push_str("The frame's budget was cleared.\n\n"),
            }
        }
        EventDetail::CriteriaCompacted { success_criteria_compacted } => {
            let _ = write!(out, "\n## {when} · criteria compacted by {by}\n\n");
            field(out, "Compacted success criteria", success_criteria_compacted);
        }
        EventDetail::Popped {
            status,
            results,
            results_compacted,
            artifacts,
            decisions,
            reason,
        } => {
            let _ = write!(out, "\n## {when} · popped as {} by {by}\n\n", status.as_str());
            field(out, "Reason", reason.as_deref().unwrap_or(""));
            section(out, "Results", results.as_deref().unwrap_or(""));
            section(out, "Results (compacted)", results_compacted.as_deref().unwrap_or(""));
            list(out, "Artifacts", artifacts);
            list(out, "Decisions", decisions);
        }
        EventDetail::Nothing {} => {
            // `started` and `resumed`: the kind says it all.
            let _ = write!(out, "\n## {when} · {} by {by}\n\n", kind.as_str());
        }
        EventDetail::Unreadable { text } => {
            let _ = write!(out, "\n## {when} · {} by {by}\n\n", kind.as_str());
            let _ = write!(out, "The event's detail could not be read; it is kept as stored:\n\n");
            push_content(out, text);
        }
    }
    let _ = writeln!(out, "{MARKER_PREFIX}{}{MARKER_SUFFIX}", event.seq);
}

fn render_message(out: &mut String, when: &str, m: &Message) {
    let _ = write!(out, "\n## {when} · {}", m.role.as_str());
    if let Some(model) = &m.model {
        let _ = write!(out, " · {model}");
    }
    let _ = write!(out, " · {} tokens", m.tokens);
    if m.interrupted {
        out.push_str(" · interrupted");
    }
    out.push_str("\n\n");
    push_content(out, &m.content);
    let payloads = [
        ("Tool calls", m.tool_calls.as_ref().map(pretty_json)),
        ("Tool result", m.tool_result.as_ref().map(pretty_json)),
        ("Usage", m.usage.as_ref().map(pretty_json)),
    ];
    for (label, pretty) in payloads {
        if let Some(pretty) = pretty {
            let _ = write!(out, "{label}:\n\n```json\n{pretty}\n```\n\n");
        }
    }
}

fn pretty_json<T: serde::Serialize>(payload: &T) -> String {
    // Plain data with string keys always serializes.
    serde_json::to_string_pretty(payload).unwrap_or_default()
}

/// Appends text in full, ending in a blank line. A line that looks exactly like a marker gets a
/// leading backslash, so content can never pass for the end of a section.
fn push_content(out: &mut String, text: &str) {
    for line in text.lines() {
        if line.starts_with(MARKER_PREFIX) && line.ends_with(MARKER_SUFFIX) {
            out.push('\\');
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn field(out: &mut String, label: &str, text: &str) {
    if !text.is_empty() {
        let _ = write!(out, "**{label}:** ");
        push_content(out, text);
    }
}

fn section(out: &mut String, label: &str, text: &str) {
    if !text.is_empty() {
        let _ = write!(out, "### {label}\n\n");
        push_content(out, text);
    }
}

fn list(out: &mut String, label: &str, items: &[String]) {
    if !items.is_empty() {
        let _ = write!(out, "### {label}\n\n");
        for item in items {
            let _ = writeln!(out, "- {}", one_line(item));
        }
        out.push('\n');
    }
}

/// `2026-11-22 00:50:01Z` from milliseconds since the epoch, in UTC.
pub fn format_time(at: Timestamp) -> String {
    let secs = at.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Howard Hinnant's days-to-civil algorithm: the proleptic Gregorian date of a day number.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00Z");
        assert_eq!(format_time(1_795_307_601_000), "2026-11-22 00:33:21Z");
        assert_eq!(format_time(951_782_400_000), "2000-02-29 00:00:00Z");
    }

    #[test]
    fn markers_are_found_by_bytes_even_after_a_split_character() {
        let mut tail = vec![0xA9, 0xC3]; // the end of one "é" and the start of another
        tail.extend_from_slice("\u{e9}\n<!-- flame:seq=12 -->\ntorn".as_bytes());
        let (seq, end) = find_last_marker(&tail, false).unwrap();
        assert_eq!((seq, &tail[end..]), (12, &b"torn"[..]));
        assert_eq!(find_last_marker(b"<!-- flame:seq=3 -->\n", false), None, "maybe a fragment");
        assert_eq!(find_last_marker(b"<!-- flame:seq=3 -->\n", true), Some((3, 21)));
    }

    #[test]
    fn the_last_whole_marker_line_wins() {
        let text = b"# t\n\n<!-- flame:seq=3 -->\n\nbody\n<!-- flame:seq=7 -->\n\npartial <!-- flame:seq=9 -->";
        let (seq, end) = find_last_marker(text, true).unwrap();
        assert_eq!(seq, 7);
        assert_eq!(&text[end..], b"\npartial <!-- flame:seq=9 -->");
        assert_eq!(find_last_marker(b"no markers", true), None);
    }

    #[test]
    fn content_cannot_forge_a_marker() {
        let mut out = String::new();
        push_content(&mut out, "ok\n<!-- flame:seq=99 -->\nend");
        assert_eq!(out, "ok\n\\<!-- flame:seq=99 -->\nend\n\n");
        assert_eq!(find_last_marker(out.as_bytes(), true), None);
    }
}
