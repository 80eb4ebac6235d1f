//! Cutting a session's main thread into sibling frames where the work changes.
//!
//! A new segment begins at:
//! - a person's new request (a user message that the tool did not inject);
//! - a compaction boundary (the note and the summary after it open the new segment, titled
//!   after the work it continues);
//! - a work item the agent starts on its task list: a `TodoWrite` call that puts a different
//!   item `in_progress`, or `bd update ITEM --status in_progress` (the tracker the shared
//!   sessions use). The segment begins after that call's result, so the bookkeeping of choosing
//!   the item stays with the work before it;
//! - a successful `git commit`: a `Bash` call whose command runs `git commit` and whose result
//!   is not an error. A commit is the agent saying a unit of work is done, so the segment ends
//!   with the commit's result; the next one carries on the same request (its criteria) and is
//!   titled after it, "(after commit)".
//!
//! A request or item that arrives before the current segment has any assistant message does not
//! cut (the segment would be empty of work); it renames the segment instead when it is an item.
//! Every segment but the last is `completed`; its results are the reason the agent gave when it
//! closed its item (`bd close --reason`), or else the agent's last text in the segment.
//!
//! [`place`] puts a thread into the draft this way for every importer: a segment frame per
//! segment, each holding its messages and the model calls recorded in it.

use flame_model::{Role, Status, Timestamp};

use crate::draft::{Draft, DraftFile, DraftFrame, DraftMessage, FrameKind, ModelCall, title_from};
use crate::thread::{RecordedCall, SegmentStart, ThreadMessage};

/// A stretch of the main thread: messages `start..end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub title: String,
    pub criteria: String,
    pub results: String,
}

impl Segment {
    /// The whole thread as one segment, for imports that do not segment.
    fn whole(messages: &[ThreadMessage]) -> Segment {
        let mut s = Segment {
            start: 0,
            end: messages.len(),
            title: String::new(),
            criteria: String::new(),
            results: String::new(),
        };
        s.results = results_of(messages);
        s
    }
}

/// Cuts `messages` (non-empty) into segments that cover it in order.
pub fn split(messages: &[ThreadMessage]) -> Vec<Segment> {
    let mut segments: Vec<Segment> = Vec::new();
    let opening = |m: &ThreadMessage, previous: Option<&Segment>| -> (String, String) {
        match &m.starts {
            Some(SegmentStart::Item { title, criteria }) => (title_from(title), criteria.clone()),
            Some(start @ (SegmentStart::Compaction | SegmentStart::Commit)) => {
                let after = match start {
                    SegmentStart::Commit => "commit",
                    _ => "compaction",
                };
                match previous {
                    Some(p) => (
                        title_from(&format!("{} (after {after})", base_title(&p.title))),
                        p.criteria.clone(),
                    ),
                    None => (format!("Continued after {after}"), m.message.content.clone()),
                }
            }
            _ => (title_from(&m.message.content), m.message.content.clone()),
        }
    };
    // Text the agent put before the person's first request (Codex's environment context) does
    // not name the work: the first segment is named by that request.
    let named_by = messages
        .iter()
        .take_while(|m| m.message.role != Role::Assistant)
        .find(|m| m.starts.is_some())
        .unwrap_or(&messages[0]);
    let (title, criteria) = opening(named_by, None);
    segments.push(Segment { start: 0, end: 0, title, criteria, results: String::new() });
    let mut has_work = false;
    for (i, m) in messages.iter().enumerate() {
        if let Some(start) = &m.starts
            && i > 0
        {
            if has_work || matches!(start, SegmentStart::Compaction) {
                let last = segments.last_mut().expect("one segment at least");
                last.end = i;
                let (title, criteria) = opening(m, segments.last());
                segments.push(Segment {
                    start: i,
                    end: i,
                    title,
                    criteria,
                    results: String::new(),
                });
                has_work = false;
            } else if let SegmentStart::Item { title, criteria } = start {
                let last = segments.last_mut().expect("one segment at least");
                last.title = title_from(title);
                last.criteria = criteria.clone();
            }
        }
        if m.message.role == Role::Assistant {
            has_work = true;
        }
    }
    segments.last_mut().expect("one segment at least").end = messages.len();
    for s in &mut segments {
        s.results = results_of(&messages[s.start..s.end]);
    }
    segments
}

/// Places a thread's messages and recorded calls under `frame` and returns the frames that hold
/// them, each with the time of its first message (just `frame` and its creation time when the
/// thread is empty).
///
/// With `segmented`, each segment of [`split`] becomes a child of `frame` — every one but the
/// last `completed` with its results; otherwise `frame` holds the whole thread. After a
/// segment's messages are in the draft, `after_segment(draft, holder, segment, is_last)` runs,
/// so that what the segment started (subagents, child sessions) is added beneath it in
/// transcript order.
pub fn place_with<E>(
    draft: &mut Draft,
    frame: usize,
    messages: &[ThreadMessage],
    calls: &[RecordedCall],
    segmented: bool,
    mut after_segment: impl FnMut(&mut Draft, usize, &Segment, bool) -> Result<(), E>,
) -> Result<Vec<(usize, Timestamp)>, E> {
    if messages.is_empty() {
        return Ok(vec![(frame, draft.frames[frame].created_at)]);
    }
    let segments = if segmented { split(messages) } else { vec![Segment::whole(messages)] };
    let last = segments.len() - 1;
    let mut placed = Vec::with_capacity(segments.len());
    // The calls in message order, taken a segment at a time as the segments go by, so placing is
    // linear: scanning every call for each segment made a 1M-line transcript take hours.
    let mut by_message: Vec<&RecordedCall> = calls.iter().collect();
    by_message.sort_by_key(|(index, _, _)| *index);
    let mut next_call = 0;
    for (s, seg) in segments.iter().enumerate() {
        let holder = if segmented {
            let mut f = DraftFrame::new(
                Some(frame),
                FrameKind::Segment,
                &seg.title,
                &seg.criteria,
                messages[seg.start].at,
            );
            // A segment begins at the same message however much of the thread follows it.
            f.key = format!("{}/{}", draft.frames[frame].key, seg.start);
            if s < last {
                f.status = Status::Completed;
                f.results = Some(seg.results.clone());
                f.ended_at = Some(messages[seg.end - 1].at);
            }
            draft.push_frame(f)
        } else {
            frame
        };
        placed.push((holder, messages[seg.start].at));
        let first = draft.messages.len();
        for m in &messages[seg.start..seg.end] {
            let message = draft.messages.len();
            draft.files.extend(m.files.iter().map(|f| DraftFile {
                frame: holder,
                message,
                at: m.at,
                path: f.path.clone(),
                changed: f.changed,
            }));
            draft.messages.push(DraftMessage {
                frame: holder,
                message: m.message.clone(),
                tokens: m.tokens,
                at: m.at,
            });
        }
        while let Some(&&(index, at, input)) = by_message.get(next_call)
            && index < seg.end
        {
            draft.calls.push(ModelCall {
                frame: holder,
                message: first + index - seg.start,
                at,
                input_tokens: input,
            });
            next_call += 1;
        }
        after_segment(draft, holder, seg, s == last)?;
    }
    Ok(placed)
}

/// [`place_with`] for a thread that starts nothing beneath its segments.
pub fn place(
    draft: &mut Draft,
    frame: usize,
    messages: &[ThreadMessage],
    calls: &[RecordedCall],
    segmented: bool,
) -> Vec<(usize, Timestamp)> {
    let Ok(placed) = place_with(draft, frame, messages, calls, segmented, |_, _, _, _| {
        Ok::<(), std::convert::Infallible>(())
    });
    placed
}

/// A title without the "(after …)" its segment inherited, so that a chain of compactions and
/// commits does not pile them up.
fn base_title(title: &str) -> &str {
    let mut title = title;
    while let Some(rest) =
        title.strip_suffix(" (after compaction)").or_else(|| title.strip_suffix(" (after commit)"))
    {
        title = rest;
    }
    title
}

fn results_of(messages: &[ThreadMessage]) -> String {
    if let Some(reason) =
        messages.iter().rev().find_map(|m| m.closes.clone()).filter(|r| !r.trim().is_empty())
    {
        return reason;
    }
    messages
        .iter()
        .rev()
        .filter(|m| m.message.role == Role::Assistant)
        .map(|m| strip_thinking(&m.message.content))
        .find(|t| !t.trim().is_empty())
        .unwrap_or_else(|| "(the transcript records no answer in this part)".to_owned())
}

fn strip_thinking(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("<thinking>") {
        out.push_str(&rest[..open]);
        match rest[open..].find("</thinking>") {
            Some(close) => rest = &rest[open + close + "</thinking>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use flame_model::NewMessage;

    use super::*;

    fn m(role: Role, text: &str, starts: Option<SegmentStart>) -> ThreadMessage {
        ThreadMessage {
            message: NewMessage::text(role, text).into(),
            at: 0,
            tokens: 1,
            starts,
            closes: None,
            files: Vec::new(),
        }
    }

    fn item(title: &str) -> Option<SegmentStart> {
        Some(SegmentStart::Item { title: title.into(), criteria: format!("do {title}") })
    }

    #[test]
    fn cuts_at_requests_items_and_compactions() {
        let messages = vec![
            m(Role::User, "Build the thing", Some(SegmentStart::Request)),
            m(Role::Assistant, "<thinking>hm</thinking>Picking the first item", None),
            m(Role::Tool, "ok", None),
            m(Role::Assistant, "working on A", None),
            m(Role::Tool, "A done", item("B")),
            m(Role::Assistant, "B finished", None),
            m(Role::Note, "Conversation compacted", Some(SegmentStart::Compaction)),
            m(Role::User, "summary", None),
            m(Role::Assistant, "still B", None),
            m(Role::User, "now C", Some(SegmentStart::Request)),
            m(Role::Assistant, "C", None),
        ];
        let segments = split(&messages);
        let spans: Vec<_> = segments.iter().map(|s| (s.start, s.end, s.title.as_str())).collect();
        assert_eq!(
            spans,
            [
                (0, 4, "Build the thing"),
                (4, 6, "B"),
                (6, 9, "B (after compaction)"),
                (9, 11, "now C")
            ]
        );
        assert_eq!(segments[0].results, "working on A");
        assert_eq!(segments[2].criteria, "do B");
    }

    #[test]
    fn an_item_chosen_before_any_work_renames_the_segment() {
        let messages = vec![
            m(Role::User, "Go", Some(SegmentStart::Request)),
            m(Role::User, "and hurry", Some(SegmentStart::Request)),
            m(Role::Tool, "chosen", item("A")),
            m(Role::Assistant, "doing A", None),
        ];
        let segments = split(&messages);
        assert_eq!(segments.len(), 1);
        assert_eq!(segments[0].title, "A");
    }

    #[test]
    fn a_close_reason_is_the_results() {
        let mut close = m(Role::Tool, "closed", None);
        close.closes = Some("A works".into());
        let messages = vec![
            m(Role::User, "Go", Some(SegmentStart::Request)),
            m(Role::Assistant, "doing A", None),
            close,
            m(Role::Assistant, "committing", None),
            m(Role::User, "next", Some(SegmentStart::Request)),
        ];
        assert_eq!(split(&messages)[0].results, "A works");
    }
}
