//! The lifecycle rules, as pure functions over statuses.
//!
//! | operation | allowed for a frame that is | and then |
//! |---|---|---|
//! | push | (new) under an `in_progress` or `planned` parent | `in_progress`; planned ancestors start; focus moves to it |
//! | plan | (new) under a `planned`, `in_progress` or `blocked` parent | `planned` |
//! | edit, move, delete | `planned` | move: under a `planned`, `in_progress` or `blocked` frame outside its own subtree; delete: only with no messages in its planned subtree |
//! | start | `planned`, with every ancestor `planned` or `in_progress` | `in_progress`, and so are its planned ancestors |
//! | pop | `in_progress`, with no `in_progress` child | `completed` (needs results), `failed` or `blocked` (need a reason); planned children become `invalidated`; focus returns to the parent |
//! | resume | `blocked`, under an `in_progress` parent (or the root) | `in_progress` |
//! | retry | `failed`, under an `in_progress` parent | a new `in_progress` sibling with the same identity and `retry_of` |
//! | invalidate | `planned`, `in_progress`, `blocked` or `failed` | `invalidated`, and so is every `planned`, `in_progress` or `blocked` descendant |
//! | add a message | `in_progress` or `planned` | |
//!
//! `completed` and `invalidated` are terminal. Together these keep one invariant that the
//! rest of Flame relies on: every `in_progress` frame's parent is `in_progress` too.
//!
//! The functions here decide by a frame's status alone; those that also read its parent, its
//! children or its planned ancestors (pop, start, push, resume, retry, and [`allowed_actions`],
//! which answers them all for a front end) are in [`neighbours`], re-exported here.

mod neighbours;

pub use neighbours::{
    FrameActions, OpenAncestors, allowed_actions, check_pop, check_push, check_resume, check_retry,
    check_start, start_order, start_target,
};

use crate::{FrameError, FrameId, Status};

/// An operation on an existing frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Edit,
    Move,
    Delete,
    Start,
    Pop,
    Resume,
    Retry,
    Invalidate,
    AddMessage,
}

impl Operation {
    pub fn verb(self) -> &'static str {
        match self {
            Operation::Edit => "edit",
            Operation::Move => "move",
            Operation::Delete => "delete",
            Operation::Start => "start",
            Operation::Pop => "pop",
            Operation::Resume => "resume",
            Operation::Retry => "retry",
            Operation::Invalidate => "invalidate",
            Operation::AddMessage => "add a message to",
        }
    }

    /// The statuses this operation accepts.
    pub fn allowed_from(self) -> &'static [Status] {
        match self {
            Operation::Edit | Operation::Move | Operation::Delete | Operation::Start => {
                &[Status::Planned]
            }
            Operation::Pop => &[Status::InProgress],
            Operation::Resume => &[Status::Blocked],
            Operation::Retry => &[Status::Failed],
            Operation::Invalidate => {
                &[Status::Planned, Status::InProgress, Status::Blocked, Status::Failed]
            }
            Operation::AddMessage => &[Status::InProgress, Status::Planned],
        }
    }

    /// What the person might do instead, for a frame in `status`.
    fn hint(self, status: Status) -> &'static str {
        match (self, status) {
            (_, Status::Completed | Status::Invalidated) => " (it is finished for good)",
            (Operation::Edit | Operation::Move | Operation::Delete, _) => {
                " (a started frame's identity and place are fixed)"
            }
            (Operation::Pop | Operation::AddMessage, Status::Planned) => " (start it first)",
            (Operation::Pop | Operation::AddMessage, Status::Blocked) => " (resume it first)",
            (Operation::Pop | Operation::AddMessage, Status::Failed) => " (retry it instead)",
            _ => "",
        }
    }
}

fn list(statuses: &[Status]) -> String {
    let names: Vec<_> = statuses.iter().map(|s| s.as_str()).collect();
    match names.as_slice() {
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
        [] => "no".to_owned(),
    }
}

/// Checks that `op` may be applied to frame `id` (titled `title`) in `status`.
pub fn check(op: Operation, id: &FrameId, title: &str, status: Status) -> Result<(), FrameError> {
    if op.allowed_from().contains(&status) {
        return Ok(());
    }
    Err(FrameError::Refused {
        op: op.verb(),
        frame: id.clone(),
        title: title.to_owned(),
        status,
        allowed: format!(
            "{} is allowed only for {} frames{}",
            op.verb(),
            list(op.allowed_from()),
            op.hint(status)
        ),
    })
}

/// The statuses a frame may have to take a new planned child (by plan or move).
pub const PLAN_PARENT: &[Status] = &[Status::Planned, Status::InProgress, Status::Blocked];
/// The statuses a frame may have to take a new in-progress child (by push).
pub const PUSH_PARENT: &[Status] = &[Status::InProgress, Status::Planned];

/// Checks that a frame in `status` may become the parent of a new child by `op_verb`.
pub fn check_parent(
    op_verb: &'static str,
    allowed: &[Status],
    parent: &FrameId,
    title: &str,
    status: Status,
) -> Result<(), FrameError> {
    if allowed.contains(&status) {
        return Ok(());
    }
    Err(FrameError::Refused {
        op: op_verb,
        frame: parent.clone(),
        title: title.to_owned(),
        status,
        allowed: format!("only {} frames can take new children that way", list(allowed)),
    })
}

/// The status a pop asks for, with what each needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PopStatus {
    Completed,
    Failed,
    Blocked,
}

impl PopStatus {
    pub fn parse(text: &str) -> Result<PopStatus, FrameError> {
        match text {
            "completed" => Ok(PopStatus::Completed),
            "failed" => Ok(PopStatus::Failed),
            "blocked" => Ok(PopStatus::Blocked),
            other => Err(FrameError::Invalid(format!(
                "a frame is popped as completed, failed or blocked, not {other:?}"
            ))),
        }
    }

    pub fn status(self) -> Status {
        match self {
            PopStatus::Completed => Status::Completed,
            PopStatus::Failed => Status::Failed,
            PopStatus::Blocked => Status::Blocked,
        }
    }
}

/// Checks what a pop must carry: results for `completed`, a reason for the others.
pub fn check_pop_input(
    id: &FrameId,
    status: PopStatus,
    results: Option<&str>,
    reason: Option<&str>,
) -> Result<(), FrameError> {
    let blank = |text: Option<&str>| text.is_none_or(|t| t.trim().is_empty());
    match status {
        PopStatus::Completed if blank(results) => Err(FrameError::Invalid(format!(
            "popping {id} as completed needs its results (--results TEXT)"
        ))),
        PopStatus::Failed | PopStatus::Blocked if blank(reason) => Err(FrameError::Invalid(
            format!("popping {id} as {} needs a reason (--reason TEXT)", status.status()),
        )),
        _ => Ok(()),
    }
}

/// Checks a title and success criteria given at creation or in an edit.
pub fn check_identity(title: &str, criteria: &str) -> Result<(), FrameError> {
    if title.trim().is_empty() {
        return Err(FrameError::Invalid("a frame needs a title (2-5 words)".to_owned()));
    }
    if title.chars().count() > crate::MAX_TITLE_CHARS {
        return Err(FrameError::Invalid(format!(
            "a frame title has at most {} characters; put the detail in the success criteria",
            crate::MAX_TITLE_CHARS
        )));
    }
    if title.contains(['\n', '\r']) {
        return Err(FrameError::Invalid("a frame title is one line".to_owned()));
    }
    if criteria.trim().is_empty() {
        return Err(FrameError::Invalid(
            "a frame needs success criteria: what, concretely, defines done".to_owned(),
        ));
    }
    Ok(())
}

/// Merges `text` into the section `section` of a frame's partial results, which are Markdown
/// with `## Section` headings: the section's body is replaced if it exists (names compared
/// without case or surrounding space), else the section is added at the end. Everything else is
/// kept as it was, so an update never regenerates what other sections say.
pub fn merge_section(
    results: Option<&str>,
    section: &str,
    text: &str,
) -> Result<String, FrameError> {
    let name = section.trim();
    if name.is_empty() || name.contains('\n') {
        return Err(FrameError::Invalid("a results section needs a one-line name".to_owned()));
    }
    let body = text.trim();
    let existing = results.unwrap_or_default();
    let heading = |line: &str| line.strip_prefix("## ").map(|h| h.trim().to_lowercase());
    let mut out: Vec<String> = Vec::new();
    let mut replaced = false;
    let mut skipping = false;
    for line in existing.lines() {
        if let Some(h) = heading(line) {
            skipping = false;
            if h == name.to_lowercase() && !replaced {
                out.push(format!("## {name}"));
                out.push(String::new());
                out.push(body.to_owned());
                out.push(String::new());
                replaced = true;
                skipping = true;
                continue;
            }
        }
        if !skipping {
            out.push(line.to_owned());
        }
    }
    let mut merged = out.join("\n").trim_end().to_owned();
    if !replaced {
        if !merged.is_empty() {
            merged.push_str("\n\n");
        }
        merged.push_str(&format!("## {name}\n\n{body}"));
    }
    Ok(merged)
}

/// Which descendants an invalidation reaches: those still open.
pub fn invalidation_reaches(status: Status) -> bool {
    matches!(status, Status::Planned | Status::InProgress | Status::Blocked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> FrameId {
        FrameId::parse("f0000000000").unwrap()
    }

    #[test]
    fn every_operation_refuses_every_status_it_does_not_list() {
        let ops = [
            Operation::Edit,
            Operation::Move,
            Operation::Delete,
            Operation::Start,
            Operation::Pop,
            Operation::Resume,
            Operation::Retry,
            Operation::Invalidate,
            Operation::AddMessage,
        ];
        for op in ops {
            for status in Status::ALL {
                let result = check(op, &id(), "Auth", status);
                assert_eq!(result.is_ok(), op.allowed_from().contains(&status), "{op:?} {status}");
                if let Err(err) = result {
                    let text = err.to_string();
                    assert!(
                        text.contains("f0000000000") && text.contains(status.as_str()),
                        "{text}"
                    );
                    assert!(text.contains("allowed only for"), "{text}");
                }
            }
        }
    }

    #[test]
    fn terminal_statuses_allow_nothing() {
        for op in [Operation::Pop, Operation::Invalidate, Operation::Start, Operation::AddMessage] {
            assert!(check(op, &id(), "t", Status::Completed).is_err());
            assert!(check(op, &id(), "t", Status::Invalidated).is_err());
        }
    }

    #[test]
    fn refusals_read_well() {
        let err = check(Operation::Pop, &id(), "Auth", Status::Planned).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot pop f0000000000 \"Auth\": it is planned; pop is allowed only for in_progress frames (start it first)"
        );
    }

    #[test]
    fn sections_are_merged_never_regenerated() {
        let first = merge_section(None, "Done", "login").unwrap();
        assert_eq!(first, "## Done\n\nlogin");
        let second = merge_section(Some(&first), "Open questions", "refresh tokens?").unwrap();
        assert_eq!(second, "## Done\n\nlogin\n\n## Open questions\n\nrefresh tokens?");
        let third = merge_section(Some(&second), " done ", "login, logout").unwrap();
        assert_eq!(third, "## done\n\nlogin, logout\n\n## Open questions\n\nrefresh tokens?");
        let with_preface =
            merge_section(Some("Notes first.\n\n## Done\n\nx"), "Done", "y").unwrap();
        assert_eq!(with_preface, "Notes first.\n\n## Done\n\ny");
        assert!(merge_section(None, " ", "x").is_err());
    }

    #[test]
    fn pop_needs_results_or_a_reason() {
        assert!(check_pop_input(&id(), PopStatus::Completed, None, None).is_err());
        assert!(check_pop_input(&id(), PopStatus::Completed, Some("  "), None).is_err());
        assert!(check_pop_input(&id(), PopStatus::Completed, Some("done"), None).is_ok());
        assert!(check_pop_input(&id(), PopStatus::Failed, Some("r"), None).is_err());
        assert!(check_pop_input(&id(), PopStatus::Blocked, None, Some("waiting")).is_ok());
    }

    #[test]
    fn identity_needs_a_one_line_title_and_criteria() {
        assert!(check_identity("Auth", "JWT works").is_ok());
        assert!(check_identity(" ", "x").is_err());
        assert!(check_identity("a\nb", "x").is_err());
        assert!(check_identity("Auth", "").is_err());
        assert!(check_identity(&"x".repeat(201), "x").is_err());
    }
}
