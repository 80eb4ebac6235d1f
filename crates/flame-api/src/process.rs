//! Which process writes a reply, and whether that process still runs.
//!
//! Several processes share one data directory (the window, `flame` commands, MCP servers), and
//! each opening of the store finishes the replies a stopped process left open. A reply is left
//! alone while its writer runs: on Linux that is asked of `/proc/<pid>/stat`, whose start time
//! tells the writer apart from a later process given the same id. Where the system cannot be
//! asked, a reply counts as abandoned once its writer has not saved it for
//! [`SILENT_WRITER_LIMIT_MS`].

use std::path::Path;

use flame_model::Timestamp;
use flame_store::{OpenReply, ReplyOwner};

/// How long an open reply whose writer cannot be checked (no `/proc`) may go without a save
/// before another process finishes it as interrupted. A writer saves every quarter second while
/// text arrives, but a model may think, or stream a long tool call, for a minute without text;
/// erring long only delays the closing of a crashed writer's reply to a later start.
pub const SILENT_WRITER_LIMIT_MS: Timestamp = 2 * 60 * 1000;

/// What the system says about a process id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// No such process runs (or it has exited and only awaits its parent).
    Gone,
    /// A process with this id runs; it started at `started` (clock ticks since boot).
    Running { started: u64 },
    /// The system cannot be asked here.
    Unknown,
}

/// This process, as the owner of the replies it streams.
pub(crate) fn current() -> ReplyOwner {
    let pid = std::process::id();
    let started = match read_stat(Path::new("/proc/self/stat")) {
        Probe::Running { started } => Some(started),
        Probe::Gone | Probe::Unknown => None,
    };
    ReplyOwner { pid, started }
}

/// Asks the system about process `pid`.
pub(crate) fn probe(pid: u32) -> Probe {
    // Without a readable /proc every process would look gone; that is "cannot tell" instead.
    if !Path::new("/proc/self/stat").exists() {
        return Probe::Unknown;
    }
    read_stat(&Path::new("/proc").join(pid.to_string()).join("stat"))
}

fn read_stat(path: &Path) -> Probe {
    match std::fs::read_to_string(path) {
        Ok(stat) => parse_stat(&stat).unwrap_or(Probe::Unknown),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Probe::Gone,
        Err(_) => Probe::Unknown,
    }
}

/// Reads the state (field 3) and start time (field 22) of a `/proc/<pid>/stat` line. The
/// command name (field 2) is in parentheses and may hold spaces and parentheses itself, so the
/// fields are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<Probe> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_ascii_whitespace();
    let state = fields.next()?;
    let started = fields.nth(18)?.parse().ok()?;
    // A zombie has exited and will write nothing more.
    Some(if matches!(state, "Z" | "X" | "x") { Probe::Gone } else { Probe::Running { started } })
}

/// Whether the writer of `reply` is gone, given what the system says of its process (`probe`)
/// and the time `now`: then the reply is finished as interrupted, keeping what arrived.
pub(crate) fn writer_is_gone(reply: &OpenReply, probe: Probe, now: Timestamp) -> bool {
    let Some(owner) = reply.owner else {
        // Opened before owners were recorded, so by a Flame that has since been updated.
        return true;
    };
    match probe {
        Probe::Gone => true,
        Probe::Running { started } => owner.started.is_some_and(|s| s != started),
        Probe::Unknown => {
            reply.heartbeat_at.is_none_or(|at| now.saturating_sub(at) > SILENT_WRITER_LIMIT_MS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flame_model::{FrameId, MessageId};

    fn reply(owner: Option<ReplyOwner>, heartbeat_at: Option<Timestamp>) -> OpenReply {
        OpenReply {
            id: MessageId(1),
            frame: FrameId::from_trusted("f0000000000".to_owned()),
            content: String::new(),
            owner,
            heartbeat_at,
        }
    }

    const OWNER: ReplyOwner = ReplyOwner { pid: 7, started: Some(500) };

    #[test]
    fn a_running_writer_keeps_its_reply_and_a_gone_or_replaced_one_does_not() {
        let r = reply(Some(OWNER), Some(1_000));
        assert!(!writer_is_gone(&r, Probe::Running { started: 500 }, 1_000_000));
        assert!(writer_is_gone(&r, Probe::Gone, 1_001));
        // The id now belongs to a process that started later.
        assert!(writer_is_gone(&r, Probe::Running { started: 501 }, 1_001));
        let unknown_start = reply(Some(ReplyOwner { pid: 7, started: None }), Some(1_000));
        assert!(!writer_is_gone(&unknown_start, Probe::Running { started: 501 }, 1_001));
    }

    #[test]
    fn where_the_system_cannot_be_asked_a_silent_writer_is_gone_after_the_limit() {
        let r = reply(Some(OWNER), Some(1_000));
        assert!(!writer_is_gone(&r, Probe::Unknown, 1_000 + SILENT_WRITER_LIMIT_MS));
        assert!(writer_is_gone(&r, Probe::Unknown, 1_001 + SILENT_WRITER_LIMIT_MS));
        assert!(writer_is_gone(&reply(Some(OWNER), None), Probe::Unknown, 0));
    }

    #[test]
    fn a_reply_without_an_owner_was_left_by_an_older_flame() {
        assert!(writer_is_gone(&reply(None, Some(1_000)), Probe::Running { started: 1 }, 1_001));
    }

    #[test]
    fn stat_lines_are_read_past_a_name_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 300 0 0 0 2 1 0 0 20 0 1 0 987654 1000 100";
        assert_eq!(parse_stat(line), Some(Probe::Running { started: 987_654 }));
        let zombie = "4242 (w) Z 1 4242 4242 0 -1 4194560 300 0 0 0 2 1 0 0 20 0 1 0 987654 0 0";
        assert_eq!(parse_stat(zombie), Some(Probe::Gone));
        assert_eq!(parse_stat("4242 (w) S 1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_found_running_with_its_own_start_time() {
        let me = current();
        let started = me.started.expect("/proc/self/stat gives a start time");
        assert_eq!(probe(me.pid), Probe::Running { started });
        // No process ever gets an id this large (Linux caps them at 2^22).
        assert_eq!(probe(u32::MAX), Probe::Gone);
    }
}
