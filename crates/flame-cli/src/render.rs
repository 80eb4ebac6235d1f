//! The human forms of the command line's output.

use std::collections::HashMap;
use std::fmt::Write as _;

use flame_api::{TreeListEntry, TreeStatus};
use flame_model::{Frame, FrameId, Status};

fn glyph(status: Status) -> &'static str {
    match status {
        Status::Planned => "○",
        Status::InProgress => "●",
        Status::Completed => "✓",
        Status::Failed => "✗",
        Status::Blocked => "‖",
        Status::Invalidated => "⊘",
    }
}

/// `f7k2m9q4x1z ● in_progress "Auth"`.
pub fn frame_line(frame: &Frame) -> String {
    format!("{} {} {} {:?}", frame.id, glyph(frame.status), frame.status, frame.title)
}

pub fn id_list(verb: &str, ids: &[FrameId]) -> String {
    let ids: Vec<&str> = ids.iter().map(FrameId::as_str).collect();
    format!("{verb}: {}", ids.join(" "))
}

pub fn tree_list(trees: &[TreeListEntry]) -> String {
    if trees.is_empty() {
        return "no trees yet: flame tree new \"TITLE\" --criteria \"TEXT\"".to_owned();
    }
    let mut out = String::new();
    for entry in trees {
        let _ = writeln!(
            out,
            "{} {} {:<11} {:>6} frames  {}",
            if entry.current { "*" } else { " " },
            entry.tree.id,
            entry.root_status.as_str(),
            entry.frame_count,
            entry.tree.title
        );
    }
    out.trim_end().to_owned()
}

/// Where a tree's workspace tools work.
pub fn workspace_line(tree: &flame_model::Tree) -> String {
    match &tree.workspace {
        Some(folder) => format!("workspace {folder}"),
        None => "no workspace: the agent has no tools to read files or run commands".to_owned(),
    }
}

/// The tree drawn with box characters, root on top, the focus marked.
pub fn status(status: &TreeStatus) -> String {
    let mut out = format!("{} (tree {})\n", status.tree.title, status.tree.id);
    if status.tree.workspace.is_some() {
        out.push_str(&workspace_line(&status.tree));
        out.push('\n');
    }
    // Frames come depth first, so each frame's depth and whether it is its parent's last child
    // are enough to draw the guides.
    let mut last_child_at_depth: Vec<bool> = Vec::new();
    let frames: Vec<&Frame> = status.frames.iter().map(|e| &e.frame).collect();
    let mut depth_of = HashMap::new();
    // In depth-first order a parent's last child is the last frame naming it.
    let last_child: HashMap<Option<&FrameId>, &FrameId> =
        frames.iter().map(|f| (f.parent.as_ref(), &f.id)).collect();
    for frame in &frames {
        let depth = frame.parent.as_ref().and_then(|p| depth_of.get(p)).map_or(0, |d| d + 1);
        depth_of.insert(frame.id.clone(), depth);
        let is_last = last_child.get(&frame.parent.as_ref()) == Some(&&frame.id);
        last_child_at_depth.truncate(depth);
        let mut prefix = String::new();
        for &done in last_child_at_depth.iter().skip(1) {
            prefix.push_str(if done { "   " } else { "│  " });
        }
        if depth > 0 {
            prefix.push_str(if is_last { "└─ " } else { "├─ " });
        }
        last_child_at_depth.push(is_last);
        let focus = if frame.id == status.focus { "  ← focus" } else { "" };
        let _ = writeln!(out, "{prefix}{}{focus}", frame_line(frame));
    }
    out.trim_end().to_owned()
}

/// A context as the model receives it: the system prompt, then the messages, with a closing
/// line of totals.
pub fn context(doc: &flame_api::ContextDoc) -> String {
    let mut out = format!("{}\n", doc.system.trim_end());
    if let Some(omission) = &doc.omission {
        let _ = write!(out, "\n--- note ---\n{omission}\n");
    }
    for message in &doc.messages {
        let _ = write!(
            out,
            "\n--- {} · {} tokens ---\n{}\n",
            message.role.as_str(),
            message.tokens,
            message.content.trim_end()
        );
    }
    let report = &doc.report;
    let _ = write!(
        out,
        "\n# {} of {} tokens{}; a linear chat would send {}",
        report.total_tokens,
        report.budget,
        if report.fits {
            ""
        } else {
            " (does not fit: even what is never dropped is over the budget)"
        },
        report.linear_tokens
    );
    out
}

/// What an import did: the tree, the counts, what was skipped and what could not be read.
pub fn import_summary(s: &flame_api::ImportSummary) -> String {
    let mut out = format!(
        "imported tree {} \"{}\": {} frames, {} messages from {} records ({} assistant records merged into the response they continue)\nfocus: {}",
        s.tree.id, s.tree.title, s.frames, s.messages, s.records, s.merged_records, s.tree.focus
    );
    if !s.skipped.is_empty() {
        let list: Vec<String> =
            s.skipped.iter().map(|k| format!("{} {}", k.count, k.kind)).collect();
        out.push_str(&format!("\nskipped (no message): {}", list.join(", ")));
    }
    if !s.problems.is_empty() {
        // The list names the first few problems and may end "and N more", so it is not a count.
        out.push_str("\nwhat could not be read or was changed to fit, the rest imported:");
        for p in &s.problems {
            out.push_str(&format!("\n  {p}"));
        }
    }
    out
}

/// A frame's changes: when they span, a line per file, then the unified diff.
pub fn changes(changes: &flame_api::FrameChanges) -> String {
    if let Some(reason) = &changes.unavailable {
        return format!("no changes to show for {}: {reason}", changes.frame);
    }
    let scope = if changes.subtree { "and its descendants " } else { "" };
    let until = if changes.until.is_some() { "when it ended" } else { "now" };
    let mut out =
        format!("files frame {} {scope}changed, from when it started to {until}:\n", changes.frame);
    if changes.files.is_empty() {
        out.push_str("  (none)\n");
    }
    for file in &changes.files {
        let kind = match file.change {
            flame_api::FileChangeKind::Added => "added",
            flame_api::FileChangeKind::Modified => "modified",
            flame_api::FileChangeKind::Deleted => "deleted",
            flame_api::FileChangeKind::ModeChanged => "mode changed",
            flame_api::FileChangeKind::TypeChanged => "type changed",
            flame_api::FileChangeKind::NotSnapshotted => "not snapshotted",
        };
        let renamed =
            file.old_path.as_deref().map(|old| format!(" (from {old})")).unwrap_or_default();
        let lines = if file.binary {
            "binary".to_owned()
        } else {
            format!("+{} -{}", file.added_lines, file.removed_lines)
        };
        let _ = writeln!(out, "  {kind:<15} {}{renamed}  {lines}", file.path);
    }
    if changes.rolled_back_at.is_some() {
        out.push_str("(rolled back)\n");
    }
    if !changes.patch.is_empty() {
        out.push('\n');
        out.push_str(&changes.patch);
    }
    if changes.truncated {
        out.push_str("\n[the diff is cut here: it is longer than Flame shows]\n");
    }
    out.trim_end().to_owned()
}

/// What a rollback put back.
pub fn rollback(outcome: &flame_api::RollbackOutcome) -> String {
    let mut out = format!("rolled back {}", frame_line(&outcome.frame));
    for (label, paths) in [
        ("restored", &outcome.restored),
        ("deleted", &outcome.deleted),
        ("already as it was", &outcome.unchanged),
        ("not restored (not snapshotted when it started)", &outcome.not_restored),
    ] {
        for path in paths {
            let _ = write!(out, "\n  {label}: {path}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_summary_lists_the_named_problems_without_miscounting_them() {
        let mut ids = flame_model::IdSource::seeded(1);
        let root = ids.frame_id();
        let summary = flame_api::ImportSummary {
            tree: flame_model::Tree {
                id: ids.tree_id(),
                title: "t".into(),
                root: root.clone(),
                focus: root,
                created_at: 1,
                workspace: None,
            },
            frames: 1,
            messages: 1,
            records: 1_001,
            merged_records: 0,
            skipped: vec![],
            problems: vec!["s.jsonl line 2: not JSON; line skipped".into(), "and 999 more".into()],
            problem_count: 1_000,
        };
        let text = import_summary(&summary);
        assert!(text.ends_with(
            "what could not be read or was changed to fit, the rest imported:\n  s.jsonl line 2: not JSON; line skipped\n  and 999 more"
        ), "{text}");
        assert!(!text.contains("2 problem"), "{text}");
    }
}
