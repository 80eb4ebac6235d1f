//! The rules over a frame and its neighbours: what its parent, its children and its planned
//! ancestors allow. The single-frame rules of the parent module decide by status alone; these
//! also read the frames around it, which the caller passes in (the store reads them inside the
//! operation's transaction). [`allowed_actions`] answers all of them at once for a front end, by
//! the same functions the operations are checked with.

use serde::Serialize;

use super::{Operation, PLAN_PARENT, PUSH_PARENT, check, check_parent};
use crate::{Frame, FrameError, FrameId, Status};

/// A frame's ancestors as the rules over neighbours need them: nearest first, from its parent
/// up to and including the first ancestor that is not `planned` (or up to the root). Empty for
/// a root frame.
pub type OpenAncestors<'a> = &'a [Frame];

/// Checks that `frame` may be popped: it is `in_progress` and none of its `children` (all of
/// them, in any order) is still `in_progress`.
pub fn check_pop(frame: &Frame, children: &[Frame]) -> Result<(), FrameError> {
    check(Operation::Pop, &frame.id, &frame.title, frame.status)?;
    if let Some(child) = children.iter().find(|c| c.status == Status::InProgress) {
        return Err(FrameError::Refused {
            op: "pop",
            frame: frame.id.clone(),
            title: frame.title.clone(),
            status: frame.status,
            allowed: format!(
                "its child {} \"{}\" is still in_progress; pop that first",
                child.id, child.title
            ),
        });
    }
    Ok(())
}

/// The frames that starting `frame` starts, top down (`frame` last): it and its planned
/// ancestors. Refused when an ancestor below the first `in_progress` one is neither planned nor
/// in progress, so that no in-progress frame ends up under a frame that is not. `frame`'s own
/// status is not checked here: [`check_start`] does that for a start, and a push under a
/// planned parent starts that parent this way.
pub fn start_order<'a>(
    frame: &'a Frame,
    ancestors: OpenAncestors<'a>,
) -> Result<Vec<&'a Frame>, FrameError> {
    let mut to_start = vec![frame];
    for ancestor in ancestors {
        match ancestor.status {
            Status::InProgress => break,
            Status::Planned => to_start.push(ancestor),
            other => {
                return Err(FrameError::Refused {
                    op: "start",
                    frame: frame.id.clone(),
                    title: frame.title.clone(),
                    status: frame.status,
                    allowed: format!(
                        "its ancestor {} \"{}\" is {other}, and a frame starts only under planned or in_progress ancestors{}",
                        ancestor.id,
                        ancestor.title,
                        if other == Status::Blocked { " (resume that ancestor first)" } else { "" }
                    ),
                });
            }
        }
    }
    to_start.reverse();
    Ok(to_start)
}

/// Checks a start of `frame` (it must be planned) and returns what it starts (see
/// [`start_order`]).
pub fn check_start<'a>(
    frame: &'a Frame,
    ancestors: OpenAncestors<'a>,
) -> Result<Vec<&'a Frame>, FrameError> {
    check(Operation::Start, &frame.id, &frame.title, frame.status)?;
    start_order(frame, ancestors)
}

/// Checks a push under `parent` and returns the frames it starts first: none under an
/// `in_progress` parent, a `planned` parent and its planned ancestors otherwise.
pub fn check_push<'a>(
    parent: &'a Frame,
    ancestors: OpenAncestors<'a>,
) -> Result<Vec<&'a Frame>, FrameError> {
    check_parent("push under", PUSH_PARENT, &parent.id, &parent.title, parent.status)?;
    if parent.status == Status::Planned { start_order(parent, ancestors) } else { Ok(Vec::new()) }
}

/// For resume and retry: a frame takes up work again only under an `in_progress` parent (a root
/// frame has none and passes).
fn check_in_progress_parent(
    frame: &Frame,
    parent: Option<&Frame>,
    op: &'static str,
) -> Result<(), FrameError> {
    match parent {
        Some(parent) if parent.status != Status::InProgress => Err(FrameError::Refused {
            op,
            frame: frame.id.clone(),
            title: frame.title.clone(),
            status: frame.status,
            allowed: format!(
                "its parent {} \"{}\" is {}, and only an in_progress parent can take up work again",
                parent.id, parent.title, parent.status
            ),
        }),
        _ => Ok(()),
    }
}

/// Checks that `frame` may be resumed: it is `blocked`, and its `parent` (`None` for a root)
/// is `in_progress`.
pub fn check_resume(frame: &Frame, parent: Option<&Frame>) -> Result<(), FrameError> {
    check(Operation::Resume, &frame.id, &frame.title, frame.status)?;
    check_in_progress_parent(frame, parent, "resume")
}

/// Checks that `frame` may be retried and returns the parent its new attempt goes under: it is
/// `failed`, its `parent` is `in_progress`, and it is not a root (a whole piece of work is
/// tried again as a new tree).
pub fn check_retry<'a>(frame: &Frame, parent: Option<&'a Frame>) -> Result<&'a Frame, FrameError> {
    check(Operation::Retry, &frame.id, &frame.title, frame.status)?;
    check_in_progress_parent(frame, parent, "retry")?;
    parent.ok_or_else(|| {
        FrameError::Invalid(format!(
            "{} is the root frame; start a new tree to try the whole piece of work again",
            frame.id
        ))
    })
}

/// What `/start` with no frame named starts in `frame`: its first planned child, if any.
/// `children` are in position order.
pub fn start_target(children: &[Frame]) -> Option<&FrameId> {
    children.iter().find(|c| c.status == Status::Planned).map(|c| &c.id)
}

/// What may be done with a frame now, as the lifecycle rules decide (those over its status and
/// those over its neighbours), so that a front end shows only what the backend would accept. An
/// operation may still be refused for what this does not see: a delete whose planned subtree
/// holds messages, a move to a particular place, or a change another process made in between.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, specta::Type)]
pub struct FrameActions {
    /// Push a new in-progress child under it.
    pub push: bool,
    /// Plan new children under it.
    pub plan: bool,
    pub pop: bool,
    pub start: bool,
    pub resume: bool,
    pub retry: bool,
    pub invalidate: bool,
    pub edit: bool,
    #[serde(rename = "move")]
    pub move_frame: bool,
    pub delete: bool,
    /// Chat in it: the person writes and a model answers. Only in an `in_progress` frame (a
    /// planned one is started first), though the store also adds messages to planned frames.
    pub chat: bool,
    /// What `/start` with no frame named would start here (see [`start_target`]).
    pub start_target: Option<FrameId>,
}

/// Everything [`FrameActions`] says about `frame`, from its open `ancestors` (see
/// [`OpenAncestors`]) and its `children` in position order.
pub fn allowed_actions(
    frame: &Frame,
    ancestors: OpenAncestors<'_>,
    children: &[Frame],
) -> FrameActions {
    let allows = |op: Operation| check(op, &frame.id, &frame.title, frame.status).is_ok();
    let placed = frame.parent.is_some();
    FrameActions {
        push: check_push(frame, ancestors).is_ok(),
        plan: check_parent("plan under", PLAN_PARENT, &frame.id, &frame.title, frame.status)
            .is_ok(),
        pop: check_pop(frame, children).is_ok(),
        start: check_start(frame, ancestors).is_ok(),
        resume: check_resume(frame, ancestors.first()).is_ok(),
        retry: check_retry(frame, ancestors.first()).is_ok(),
        invalidate: allows(Operation::Invalidate),
        edit: allows(Operation::Edit),
        move_frame: placed && allows(Operation::Move),
        delete: placed && allows(Operation::Delete),
        chat: frame.status == Status::InProgress,
        start_target: start_target(children).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TreeId;

    fn frame(id: &str, parent: Option<&str>, status: Status) -> Frame {
        Frame::new(
            FrameId::from_trusted(id.to_owned()),
            TreeId::from_trusted("t0000000000".to_owned()),
            parent.map(|p| FrameId::from_trusted(p.to_owned())),
            0,
            id.to_uppercase(),
            "done when done",
            status,
            0,
        )
    }

    #[test]
    fn a_pop_waits_for_every_child_in_progress() {
        let parent = frame("fa", None, Status::InProgress);
        let children = [
            frame("fb", Some("fa"), Status::Completed),
            frame("fc", Some("fa"), Status::InProgress),
        ];
        assert_eq!(
            check_pop(&parent, &children).unwrap_err().to_string(),
            "cannot pop fa \"FA\": it is in_progress; its child fc \"FC\" is still in_progress; pop that first"
        );
        assert!(check_pop(&parent, &children[..1]).is_ok());
        let planned = frame("fa", None, Status::Planned);
        assert!(check_pop(&planned, &[]).unwrap_err().to_string().contains("(start it first)"));
    }

    #[test]
    fn a_start_starts_planned_ancestors_top_down() {
        let leaf = frame("fc", Some("fb"), Status::Planned);
        let ancestors =
            [frame("fb", Some("fa"), Status::Planned), frame("fa", None, Status::InProgress)];
        let order: Vec<_> =
            check_start(&leaf, &ancestors).unwrap().iter().map(|f| f.id.as_str()).collect();
        assert_eq!(order, ["fb", "fc"]);
        // An in-progress ancestor ends the walk: what lies above it is not looked at.
        let above =
            [frame("fb", Some("fa"), Status::InProgress), frame("fa", None, Status::Blocked)];
        assert_eq!(check_start(&leaf, &above).unwrap().len(), 1);
    }

    #[test]
    fn a_start_under_a_blocked_or_finished_ancestor_is_refused() {
        let leaf = frame("fc", Some("fb"), Status::Planned);
        let blocked =
            [frame("fb", Some("fa"), Status::Planned), frame("fa", None, Status::Blocked)];
        assert_eq!(
            check_start(&leaf, &blocked).unwrap_err().to_string(),
            "cannot start fc \"FC\": it is planned; its ancestor fa \"FA\" is blocked, and a frame starts only under planned or in_progress ancestors (resume that ancestor first)"
        );
        let completed = [frame("fb", None, Status::Completed)];
        let text = check_start(&leaf, &completed).unwrap_err().to_string();
        assert!(text.ends_with("planned or in_progress ancestors"), "{text}");
        let started = frame("fc", Some("fb"), Status::InProgress);
        assert!(check_start(&started, &[]).is_err());
    }

    #[test]
    fn a_push_under_a_planned_parent_starts_it_first() {
        let parent = frame("fb", Some("fa"), Status::Planned);
        let ancestors = [frame("fa", None, Status::InProgress)];
        assert_eq!(check_push(&parent, &ancestors).unwrap().len(), 1);
        let working = frame("fa", None, Status::InProgress);
        assert!(check_push(&working, &[]).unwrap().is_empty());
        let done = frame("fa", None, Status::Completed);
        assert_eq!(
            check_push(&done, &[]).unwrap_err().to_string(),
            "cannot push under fa \"FA\": it is completed; only in_progress or planned frames can take new children that way"
        );
    }

    #[test]
    fn resume_and_retry_need_an_in_progress_parent() {
        let blocked = frame("fb", Some("fa"), Status::Blocked);
        let failed = frame("fb", Some("fa"), Status::Failed);
        let parent = frame("fa", None, Status::Blocked);
        assert_eq!(
            check_resume(&blocked, Some(&parent)).unwrap_err().to_string(),
            "cannot resume fb \"FB\": it is blocked; its parent fa \"FA\" is blocked, and only an in_progress parent can take up work again"
        );
        assert!(
            check_retry(&failed, Some(&parent))
                .unwrap_err()
                .to_string()
                .starts_with("cannot retry fb")
        );
        let working = frame("fa", None, Status::InProgress);
        assert!(check_resume(&blocked, Some(&working)).is_ok());
        assert_eq!(check_retry(&failed, Some(&working)).unwrap().id.as_str(), "fa");
        // A root resumes, but is never retried: its work is tried again as a new tree.
        assert!(check_resume(&frame("fa", None, Status::Blocked), None).is_ok());
        assert_eq!(
            check_retry(&frame("fa", None, Status::Failed), None).unwrap_err().to_string(),
            "fa is the root frame; start a new tree to try the whole piece of work again"
        );
    }

    #[test]
    fn start_targets_the_first_planned_child() {
        let children = [
            frame("fb", Some("fa"), Status::Completed),
            frame("fc", Some("fa"), Status::Planned),
            frame("fd", Some("fa"), Status::Planned),
        ];
        assert_eq!(start_target(&children).map(FrameId::as_str), Some("fc"));
        assert_eq!(start_target(&children[..1]), None);
    }

    /// Every combination of a frame's, its parent's and a child's status: the allowed actions
    /// say yes exactly when the operation's own check passes, and an allowed start or push never
    /// leaves an in-progress frame under one that is not (the tree invariant the lifecycle keeps,
    /// which `FrameTree::check_invariants` checks).
    #[test]
    fn allowed_actions_agree_with_the_checks_for_every_status() {
        for own in Status::ALL {
            for above in Status::ALL {
                for below in Status::ALL {
                    let me = frame("fb", Some("fa"), own);
                    let ancestors = [frame("fa", None, above)];
                    let children = [frame("fc", Some("fb"), below)];
                    let actions = allowed_actions(&me, &ancestors, &children);
                    let case = format!("{own} under {above} over {below}");
                    assert_eq!(actions.pop, check_pop(&me, &children).is_ok(), "{case}");
                    assert_eq!(actions.start, check_start(&me, &ancestors).is_ok(), "{case}");
                    assert_eq!(actions.push, check_push(&me, &ancestors).is_ok(), "{case}");
                    assert_eq!(
                        actions.resume,
                        check_resume(&me, ancestors.first()).is_ok(),
                        "{case}"
                    );
                    assert_eq!(
                        actions.retry,
                        check_retry(&me, ancestors.first()).is_ok(),
                        "{case}"
                    );
                    assert_eq!(actions.chat, own == Status::InProgress, "{case}");
                    assert_eq!(actions.edit, own == Status::Planned, "{case}");
                    assert_eq!(actions.move_frame, own == Status::Planned, "{case}");
                    assert_eq!(actions.delete, own == Status::Planned, "{case}");
                    assert_eq!(actions.start_target.is_some(), below == Status::Planned, "{case}");
                    // A push under an in-progress frame starts nothing; the new child's parent is
                    // in progress already.
                    if actions.start || (actions.push && own == Status::Planned) {
                        let top = start_order(&me, &ancestors).unwrap()[0];
                        let over_top =
                            ancestors.iter().find(|a| Some(&a.id) == top.parent.as_ref());
                        assert!(
                            over_top.is_none_or(|a| a.status == Status::InProgress),
                            "{case}: a start would put {} under a frame that is not in_progress",
                            top.id
                        );
                    }
                }
            }
        }
        // A root has nowhere to move to and is not deleted as a frame.
        let root = allowed_actions(&frame("fa", None, Status::Planned), &[], &[]);
        assert!(!root.move_frame && !root.delete && root.edit);
    }
}
