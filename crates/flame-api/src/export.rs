//! Export: a frame's subtree, or a whole tree, in Flame's JSON schema or as Markdown.

use std::fmt::Write as _;

use flame_import::flame_json::{self, Export, ExportFrame, ExportMessage, ExportTree};
use flame_model::{Frame, FrameId, FrameTree, TreeId};

use crate::frames::resolve_tree;
use crate::{ApiError, Flame, frame_log};

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Markdown,
}

impl Flame {
    /// A frame's subtree — or, given a tree id, the whole tree — in Flame's export schema.
    pub fn export(&self, id: &str) -> Result<Export, ApiError> {
        let store = self.store();
        let (tree, root) = match TreeId::parse(id) {
            Ok(tree) => {
                let tree = store.tree(&resolve_tree(&store, Some(&tree))?)?;
                let root = tree.root.clone();
                (tree, root)
            }
            Err(_) => {
                let frame = store.frame(&FrameId::parse(id)?)?;
                (store.tree(&frame.tree)?, frame.id)
            }
        };
        let whole = FrameTree::new(tree.clone(), store.frames_of_tree(&tree.id)?);
        // Depth first, each parent before its children, siblings in position order.
        let mut order: Vec<&Frame> = Vec::new();
        let mut stack: Vec<&Frame> = whole.get(&root).into_iter().collect();
        while let Some(frame) = stack.pop() {
            order.push(frame);
            let children: Vec<&Frame> = whole.children(&frame.id).collect();
            stack.extend(children.into_iter().rev());
        }
        let mut frames = Vec::with_capacity(order.len());
        for f in order {
            let messages = store
                .messages(&f.id)?
                .into_iter()
                .map(|m| ExportMessage {
                    role: m.role,
                    content: m.content,
                    tool_calls: m.tool_calls,
                    tool_result: m.tool_result,
                    model: m.model,
                    usage: m.usage,
                    tokens: m.tokens,
                    created_at: m.created_at,
                    interrupted: m.interrupted,
                })
                .collect();
            frames.push(ExportFrame {
                id: f.id.to_string(),
                parent: if f.id == root { None } else { f.parent.as_ref().map(|p| p.to_string()) },
                position: if f.id == root { 0 } else { f.position },
                title: f.title.clone(),
                success_criteria: f.success_criteria.clone(),
                success_criteria_compacted: f.success_criteria_compacted.clone(),
                status: f.status,
                status_reason: f.status_reason.clone(),
                results: f.results.clone(),
                results_compacted: f.results_compacted.clone(),
                artifacts: f.artifacts.clone(),
                decisions: f.decisions.clone(),
                // A retry of a frame outside the export cannot name it; the subtree stands alone.
                retry_of: if f.id == root {
                    None
                } else {
                    f.retry_of.as_ref().map(|r| r.to_string())
                },
                created_at: f.created_at,
                started_at: f.started_at,
                ended_at: f.ended_at,
                messages,
            });
        }
        let focus =
            frames.iter().any(|f| f.id == tree.focus.as_str()).then(|| tree.focus.to_string());
        Ok(Export {
            format: flame_json::FORMAT.to_owned(),
            version: flame_json::VERSION,
            tree: ExportTree { title: tree.title.clone(), created_at: tree.created_at, focus },
            frames,
        })
    }

    /// The export as text: the JSON schema, or Markdown with one nested section per frame.
    pub fn export_text(&self, id: &str, format: ExportFormat) -> Result<String, ApiError> {
        let export = self.export(id)?;
        match format {
            ExportFormat::Json => serde_json::to_string_pretty(&export)
                .map_err(|e| ApiError::internal("write the export", e)),
            ExportFormat::Markdown => Ok(markdown(&export)),
        }
    }
}

/// One section per frame, nested by heading level (deeper than six levels stays at six), with
/// the frame's identity, hand-off and messages.
fn markdown(export: &Export) -> String {
    let mut depth: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", export.tree.title);
    for f in &export.frames {
        let d = f.parent.as_deref().and_then(|p| depth.get(p)).map_or(0, |d| d + 1);
        depth.insert(&f.id, d);
        let hashes = "#".repeat((d + 2).min(6));
        let _ = writeln!(out, "{hashes} {} ({})\n", f.title, f.status);
        let _ = writeln!(out, "- id: `{}`", f.id);
        let _ = writeln!(out, "- success criteria: {}", one_line(&f.success_criteria));
        if let Some(reason) = &f.status_reason {
            let _ = writeln!(out, "- reason: {}", one_line(reason));
        }
        for a in &f.artifacts {
            let _ = writeln!(out, "- artifact: {a}");
        }
        for d in &f.decisions {
            let _ = writeln!(out, "- decision: {d}");
        }
        if let Some(results) = &f.results {
            let _ = writeln!(out, "\n**Results**\n\n{}", results.trim());
        }
        for m in &f.messages {
            let _ = writeln!(
                out,
                "\n**{}** · {}\n",
                m.role.as_str(),
                frame_log::format_time(m.created_at)
            );
            if !m.content.trim().is_empty() {
                let _ = writeln!(out, "{}", fence(&m.content));
            }
            if let Some(calls) = &m.tool_calls {
                let _ = writeln!(out, "\ntool calls: `{calls}`");
            }
        }
        out.push('\n');
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text quoted so that nothing in it is read as Markdown structure: a fence longer than any
/// run of backticks inside.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    format!("{ticks}text\n{}\n{ticks}", text.trim_end())
}
