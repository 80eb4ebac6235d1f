//! The human forms of the command line's output.

use std::collections::HashMap;
use std::fmt::Write as _;

use flame_api::{BudgetView, FrameEntry, TreeListEntry, TreeStatus};
use flame_model::cost::FrameCost;
use flame_model::{Frame, FrameId, Status, Tree};
use serde::Serialize;

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
pub fn workspace_line(tree: &Tree) -> String {
    match &tree.workspace {
        Some(folder) => format!("workspace {folder}"),
        None => "no workspace: the agent has no tools to read files or run commands".to_owned(),
    }
}

/// `flame --json status`: the tree, its focus, and every frame (depth first) with its cost —
/// its own and its subtree's, at the settings' prices; a frame whose subtree recorded no usage
/// has a cost of nothing (`completeness` `none`). The fields are [`TreeStatus`]'s.
#[derive(Debug, Serialize)]
pub struct StatusJson<'a> {
    tree: &'a Tree,
    focus: &'a FrameId,
    frames: Vec<CostedFrame<'a>>,
}

#[derive(Debug, Serialize)]
struct CostedFrame<'a> {
    #[serde(flatten)]
    entry: &'a FrameEntry,
    cost: FrameCost,
    /// The frame's budget, its subtree's spend and what it has left; only on frames with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<&'a BudgetView>,
}

impl<'a> StatusJson<'a> {
    pub fn new(
        status: &'a TreeStatus,
        costs: &HashMap<FrameId, FrameCost>,
        budgets: &'a [BudgetView],
    ) -> StatusJson<'a> {
        let frames = status
            .frames
            .iter()
            .map(|entry| CostedFrame {
                entry,
                cost: costs.get(&entry.frame.id).cloned().unwrap_or_default(),
                budget: budgets.iter().find(|b| b.frame == entry.frame.id),
            })
            .collect();
        StatusJson { tree: &status.tree, focus: &status.focus, frames }
    }
}

/// A frame's cost at the end of its line: its own, and its subtree's when that is more; nothing
/// when its subtree recorded no usage.
fn cost_note(cost: Option<&FrameCost>) -> String {
    let Some(cost) = cost else { return String::new() };
    let own = cost.own.describe();
    let subtree = cost.subtree.describe();
    if cost.own.completeness == flame_model::cost::Completeness::None {
        format!("  (subtree {subtree})")
    } else if cost.own.usage == cost.subtree.usage {
        format!("  {own}")
    } else {
        format!("  {own} (subtree {subtree})")
    }
}

/// A budgeted frame's budget and what its subtree spent of it, after its cost:
/// `  [budget: $0.42 of $2.00, 5 of 50 tool calls]`, `[budget spent: …]` once a unit is spent.
fn budget_note(view: Option<&BudgetView>) -> String {
    let Some(view) = view else { return String::new() };
    let (Some(budget), Some(spent)) = (&view.budget, &view.spent) else { return String::new() };
    let state = if view.exceeded() { "budget spent" } else { "budget" };
    format!("  [{state}: {}]", budget.describe_use(spent))
}

/// `flame budget`: the frame's budget and spend, and what it has left by every budget on its
/// path; `name` names a frame.
pub fn budget(view: &BudgetView, name: impl Fn(&FrameId) -> String) -> String {
    let mut out = match (&view.budget, &view.spent) {
        (Some(budget), Some(spent)) => {
            let state = if view.exceeded() { "spent" } else { "used" };
            format!(
                "{}: budget {} ({state}: {})",
                name(&view.frame),
                budget.describe(),
                budget.describe_use(spent)
            )
        }
        _ => format!("{}: no budget of its own", name(&view.frame)),
    };
    if view.allowance.is_unbounded() {
        out.push_str("\nno budget bounds it");
    } else {
        let _ = write!(out, "\nleft: {}", view.allowance.describe(&name));
    }
    out
}

/// The tree drawn with box characters, root on top, the focus marked, each frame with its cost
/// (see [`cost_note`]) and its budget ([`budget_note`]).
pub fn status(
    status: &TreeStatus,
    costs: &HashMap<FrameId, FrameCost>,
    budgets: &[BudgetView],
) -> String {
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
        let cost = cost_note(costs.get(&frame.id));
        let budget = budget_note(budgets.iter().find(|b| b.frame == frame.id));
        let _ = writeln!(out, "{prefix}{}{cost}{budget}{focus}", frame_line(frame));
    }
    out.trim_end().to_owned()
}

/// A context as the model receives it: the system prompt, the frame's opening, then the
/// messages, with closing lines on the opening and the cache and of totals.
pub fn context(doc: &flame_api::ContextDoc) -> String {
    let mut out = format!("{}\n", doc.system.trim_end());
    let _ = write!(
        out,
        "\n--- opening · {} tokens ---\n{}\n",
        doc.report.opening.tokens,
        doc.xml.trim()
    );
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
    let opening = &report.opening;
    let _ = write!(
        out,
        "\n# opening {}, {}{}",
        opening.generation,
        if opening.made_now { "made at the next call: " } else { "" },
        opening.reason_text
    );
    let _ = write!(out, "\n# {}", instructions_line(opening));
    if opening.noted_frames > 0 {
        let _ = write!(
            out,
            "\n# the next call appends a note on {} frame{} that changed",
            opening.noted_frames,
            if opening.noted_frames == 1 { "" } else { "s" }
        );
    }
    if opening.newly_masked > 0 {
        let _ = write!(out, "\n# the next call masks {} older tool results", opening.newly_masked);
    }
    let _ = write!(
        out,
        "\n# the next call reads about {} tokens from the provider's cache and writes {}",
        opening.cache_read_tokens, opening.cache_written_tokens
    );
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

/// Which project instructions the opening starts with, how much of each, and when they were read.
fn instructions_line(opening: &flame_api::OpeningReport) -> String {
    let Some(files) = &opening.instructions else {
        return "no project instructions: they are turned off in the settings (or the opening is older than them)".to_owned();
    };
    let when = if opening.made_now { "read now" } else { "read when the opening was made" };
    if files.is_empty() {
        return format!("no project instructions found ({when})");
    }
    let named: Vec<String> = files
        .iter()
        .map(|f| match &f.problem {
            Some(problem) => format!("{} (not read: {problem})", f.path),
            None if f.sent < f.size => {
                format!("{} (cut: {} of {} bytes sent)", f.path, f.sent, f.size)
            }
            None => f.path.clone(),
        })
        .collect();
    format!("project instructions ({when}): {}", named.join(", "))
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

/// `flame models`: one line a model (the name to pick it by, its context window, where it came
/// from), then how each provider's list and each local address went.
pub fn model_list(list: &flame_settings::model_list::ModelList, now_ms: i64) -> String {
    use flame_settings::model_list::ModelSource;
    let width = list.models.iter().map(|m| m.id.chars().count()).max().unwrap_or(0).max(5);
    let mut out = String::new();
    if list.models.is_empty() {
        out.push_str("no models: name one in the settings, set a provider's key, or start a local model server\n");
    } else {
        let _ = writeln!(out, "{:<width$}  {:>9}  FROM", "MODEL", "WINDOW");
    }
    for model in &list.models {
        let window = model.context_window.map_or_else(|| "?".to_owned(), thousands);
        let from = match &model.source {
            ModelSource::Configured { provider } => {
                let default = list.default_model.as_deref() == Some(model.id.as_str());
                format!("settings{}, {}", if default { " (default)" } else { "" }, provider.name())
            }
            ModelSource::Provider { provider } => format!("{}'s list", provider.name()),
            ModelSource::Local { address, server } => format!("{} at {address}", server.name()),
        };
        let _ = writeln!(out, "{:<width$}  {window:>9}  {from}", model.id);
    }
    out.push('\n');
    for provider in &list.providers {
        let name = provider.provider.name();
        let when = provider.fetched_at_ms.map(|at| {
            let cached = if provider.from_cache { ", cached" } else { "" };
            format!("fetched {}{cached}", age(now_ms.saturating_sub(at)))
        });
        let line = match (when, &provider.problem) {
            (Some(when), Some(problem)) => format!("{name}: {when}; {problem}"),
            (Some(when), None) => format!("{name}: {} ({when})", provider.base_url),
            (None, Some(problem)) => format!("{name}: {problem}"),
            (None, None) => format!("{name}: nothing listed"),
        };
        let _ = writeln!(out, "{line}");
        if provider.models_left_out > 0 {
            let _ = writeln!(out, "  and {} more models left out", provider.models_left_out);
        }
    }
    let mut silent = Vec::new();
    for server in &list.local_servers {
        match (server.kind, &server.problem) {
            (Some(kind), _) => {
                let more = match server.models_left_out {
                    0 => String::new(),
                    n => format!(", {n} more left out"),
                };
                let models = if server.models == 1 { "model" } else { "models" };
                let _ = writeln!(
                    out,
                    "{} at {}: {} {models}{more}",
                    kind.name(),
                    server.address,
                    server.models
                );
            }
            (None, Some(problem)) if problem.starts_with("nothing answers") => {
                silent.push(server.address.as_str());
            }
            (None, problem) => {
                let _ = writeln!(out, "{}: {}", server.address, problem.as_deref().unwrap_or("?"));
            }
        }
    }
    if !silent.is_empty() {
        let _ = writeln!(out, "no model server answers at {}", silent.join(", "));
    }
    if list.local_servers.is_empty() {
        let _ = writeln!(
            out,
            "no addresses to look for local model servers at (settings: local_servers)"
        );
    }
    out.trim_end().to_owned()
}

/// `flame search`: each hit as the frame's id and its path from the root, then where in the
/// frame the words are and the snippet on one line, matched words in brackets.
pub fn search_hits(query: &str, hits: &[flame_api::SearchHit], limit: u32) -> String {
    if hits.is_empty() {
        return format!("nothing found for {query:?}");
    }
    let mut out = String::new();
    for hit in hits {
        let place = match hit.place {
            flame_api::SearchPlace::Message { id, role } => {
                format!("message {id} ({})", role.as_str())
            }
            flame_api::SearchPlace::Results => "title or results".to_owned(),
        };
        let snippet: String = hit
            .snippet
            .iter()
            .map(|part| {
                let text = part.text.replace(['\n', '\r', '\t'], " ");
                if part.matched { format!("[{text}]") } else { text }
            })
            .collect();
        out.push_str(&format!(
            "{}  {}\n  {place}: {}\n",
            hit.frame,
            hit.path.join(" › "),
            snippet.trim()
        ));
    }
    if hits.len() as u32 >= limit {
        out.push_str(&format!(
            "(the first {limit}; --limit shows up to {})",
            flame_api::MAX_SEARCH_HITS
        ));
    }
    out.trim_end().to_owned()
}

/// `n` with thousands separated by commas: `200,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// How long ago, in words: `just now`, `5 min ago`, `3 h ago`, `2 days ago`.
fn age(ms: i64) -> String {
    let minutes = ms / 60_000;
    match minutes {
        ..1 => "just now".to_owned(),
        1..60 => format!("{minutes} min ago"),
        60..2880 => format!("{} h ago", minutes / 60),
        _ => format!("{} days ago", minutes / 1440),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_summary_lists_the_named_problems_without_miscounting_them() {
        let mut ids = flame_model::IdSource::seeded(1);
        let root = ids.frame_id();
        let summary = flame_api::ImportSummary {
            tree: Tree {
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
