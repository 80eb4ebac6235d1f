//! Flame's own export format (documented in `docs/export-format.md`), read back as a draft.

use std::path::Path;

use flame_model::cost::FrameCost;
use flame_model::{
    MAX_DEPTH, NewMessage, Role, Status, Timestamp, ToolCall, ToolResult, Usage, stored,
};
use flame_tokens::count_message;
use serde::{Deserialize, Serialize};

use crate::draft::{
    Draft, DraftFrame, DraftMessage, FrameKind, LIVE_ENCODING, fit_title, too_deep,
};
use crate::{ImportError, Progress};

/// The value of `format` in every export.
pub const FORMAT: &str = "flame-export";
/// The schema version this Flame writes: 2 added each frame's `cost`.
pub const VERSION: u32 = 2;
/// The oldest schema version this Flame reads (version 1 is version 2 without costs).
pub const OLDEST_VERSION: u32 = 1;

/// A frame's subtree as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Export {
    pub format: String,
    pub version: u32,
    pub tree: ExportTree,
    /// Parents before children; the first frame is the exported root.
    pub frames: Vec<ExportFrame>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportTree {
    pub title: String,
    pub created_at: Timestamp,
    /// The focused frame, when it is in the export.
    pub focus: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportFrame {
    pub id: String,
    pub parent: Option<String>,
    pub position: u32,
    pub title: String,
    pub success_criteria: String,
    pub success_criteria_compacted: Option<String>,
    pub status: Status,
    pub status_reason: Option<String>,
    pub results: Option<String>,
    pub results_compacted: Option<String>,
    pub artifacts: Vec<String>,
    pub decisions: Vec<String>,
    pub retry_of: Option<String>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    pub messages: Vec<ExportMessage>,
    /// What the frame and its subtree cost at the exporting Flame's prices (version 2): written
    /// for the people and scripts reading the file, never read back — an imported tree's costs
    /// come from its messages' usage at the importing Flame's prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<FrameCost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportMessage {
    pub role: Role,
    pub content: String,
    #[serde(default, deserialize_with = "stored::deserialize_tool_calls")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, deserialize_with = "stored::deserialize_tool_result")]
    pub tool_result: Option<ToolResult>,
    pub model: Option<String>,
    #[serde(default, deserialize_with = "stored::deserialize_usage")]
    pub usage: Option<Usage>,
    pub tokens: u64,
    pub created_at: Timestamp,
    pub interrupted: bool,
}

/// Reads an export file into a draft that recreates it: same frames, order, statuses, results
/// and messages with their stored token counts; only the ids are new. What live operations
/// would not accept is made to fit and reported (see [`to_draft`]).
pub fn read(path: &Path, progress: &mut dyn FnMut(Progress)) -> Result<Draft, ImportError> {
    let io = |source| ImportError::Io { path: path.to_owned(), source };
    let bytes = std::fs::read(path).map_err(io)?;
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    progress(Progress {
        file: name,
        bytes_read: bytes.len() as u64,
        total_bytes: bytes.len() as u64,
    });
    let bad = |why: String| ImportError::BadExport { path: path.to_owned(), why };
    let export: Export = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    // The file's bytes are not needed once parsed; a large export holds hundreds of megabytes.
    drop(bytes);
    into_draft(export).map_err(bad)
}

/// The draft an export describes. An export is outside input like any other file, so it meets
/// the live operations' rules: a title they would refuse is made to fit ([`fit_title`]) and a
/// blank criteria replaced, a token count no message could have is recounted, each reported;
/// a tree deeper than [`MAX_DEPTH`] or whose parents form a loop is refused.
pub fn to_draft(export: &Export) -> Result<Draft, String> {
    into_draft(export.clone())
}

/// [`to_draft`], taking the export's messages rather than copying them.
pub fn into_draft(mut export: Export) -> Result<Draft, String> {
    if export.format != FORMAT {
        return Err(format!("\"format\" is {:?}, expected {FORMAT:?}", export.format));
    }
    if !(OLDEST_VERSION..=VERSION).contains(&export.version) {
        return Err(format!(
            "version {} is not one this Flame reads ({OLDEST_VERSION} to {VERSION})",
            export.version
        ));
    }
    let index: std::collections::HashMap<&str, usize> =
        export.frames.iter().enumerate().map(|(i, f)| (f.id.as_str(), i)).collect();
    if index.len() != export.frames.len() {
        return Err("two frames share an id".to_owned());
    }
    let lookup = |id: &str, what: &str, before: usize| -> Result<usize, String> {
        match index.get(id) {
            Some(&i) if i < before || what == "retry_of" => Ok(i),
            Some(_) => Err(format!("{what} {id} comes after the frame that names it")),
            None => Err(format!("{what} {id} is not a frame of the export")),
        }
    };
    // Frames are laid out by position among siblings at materialisation, so they are added in
    // position order per parent.
    let depths = depths(&export, &index)?;
    let mut order: Vec<usize> = (0..export.frames.len()).collect();
    order.sort_by_key(|&i| (depths[i], export.frames[i].position));
    let mut new_index = vec![0usize; export.frames.len()];
    let mut draft = Draft::default();
    let (title, changed) = fit_title(&export.tree.title);
    draft.title = title;
    if let Some(why) = changed {
        draft.report.problem(format!("the tree: {why}"));
    }
    for (n, &i) in order.iter().enumerate() {
        new_index[i] = n;
    }
    for (n, &i) in order.iter().enumerate() {
        let f = &export.frames[i];
        let parent = match &f.parent {
            Some(p) => Some(new_index[lookup(p, "parent", export.frames.len())?]),
            None if n == 0 => None,
            None => return Err(format!("frame {} has no parent but is not the first", f.id)),
        };
        let retry_of = match &f.retry_of {
            Some(r) => Some(new_index[lookup(r, "retry_of", 0)?]),
            None => None,
        };
        let (title, changed) = fit_title(&f.title);
        if let Some(why) = changed {
            draft.report.problem(format!("frame {}: {why}", f.id));
        }
        let criteria = if f.success_criteria.trim().is_empty() {
            draft.report.problem(format!("frame {}: empty success criteria replaced", f.id));
            NO_CRITERIA.to_owned()
        } else {
            f.success_criteria.clone()
        };
        draft.frames.push(DraftFrame {
            parent,
            kind: FrameKind::Exported,
            key: String::new(),
            title,
            criteria,
            status: f.status,
            status_reason: f.status_reason.clone(),
            results: f.results.clone(),
            results_compacted: f.results_compacted.clone(),
            success_criteria_compacted: f.success_criteria_compacted.clone(),
            artifacts: f.artifacts.clone(),
            decisions: f.decisions.clone(),
            retry_of,
            created_at: f.created_at,
            started_at: f.started_at,
            ended_at: f.ended_at,
        });
    }
    draft.focus = match &export.tree.focus {
        Some(f) => Some(new_index[lookup(f, "focus", export.frames.len())?]),
        None => None,
    };
    for &i in &order {
        let frame = &mut export.frames[i];
        for (n, m) in std::mem::take(&mut frame.messages).into_iter().enumerate() {
            let message = NewMessage {
                role: m.role,
                content: m.content,
                tool_calls: m.tool_calls,
                tool_result: m.tool_result,
                model: m.model,
                usage: m.usage,
                interrupted: m.interrupted,
            };
            let tokens = if m.tokens <= most_tokens(&message) {
                m.tokens
            } else {
                let counted = count_message(LIVE_ENCODING, &message);
                draft.report.problem(format!(
                    "frame {} message {}: {} tokens is more than its text could hold; recounted as {counted}",
                    frame.id,
                    n + 1,
                    m.tokens
                ));
                counted
            };
            draft.messages.push(DraftMessage {
                frame: new_index[i],
                message: message.into(),
                tokens,
                at: m.created_at,
            });
        }
    }
    Ok(draft)
}

/// The criteria of a frame whose export left them blank, which live operations refuse.
const NO_CRITERIA: &str = "(the export states no criteria)";

/// The most tokens a message can hold: no tokenizer makes more tokens than the text has bytes
/// (an estimate counts fewer), plus a few for the message's framing. A stated count above it
/// is not a count, and is recounted.
fn most_tokens(message: &NewMessage) -> u64 {
    let bytes =
        message.content.len() + json_len(&message.tool_calls) + json_len(&message.tool_result);
    bytes as u64 + 16
}

fn json_len<T: Serialize>(payload: &Option<T>) -> usize {
    // Plain data with string keys always serializes.
    payload.as_ref().map_or(0, |p| serde_json::to_string(p).map_or(0, |text| text.len()))
}

/// Each frame's depth below the root, computed once per frame. A chain deeper than
/// [`MAX_DEPTH`] is refused as soon as it is seen, and parents that form a loop are refused
/// rather than followed forever.
fn depths(
    export: &Export,
    index: &std::collections::HashMap<&str, usize>,
) -> Result<Vec<usize>, String> {
    const UNKNOWN: usize = usize::MAX;
    let mut depths = vec![UNKNOWN; export.frames.len()];
    let mut path = Vec::new();
    for start in 0..export.frames.len() {
        let mut i = start;
        // Walk up to a frame whose depth is known or to a root, then assign depths on the way
        // back down.
        let base = loop {
            if depths[i] != UNKNOWN {
                break depths[i];
            }
            path.push(i);
            if path.len() > MAX_DEPTH + 1 {
                return Err(too_deep());
            }
            match export.frames[i].parent.as_deref().and_then(|p| index.get(p)) {
                Some(&p) if path.contains(&p) => {
                    return Err(format!(
                        "the parents of frame {} form a loop",
                        export.frames[p].id
                    ));
                }
                Some(&p) => i = p,
                None => {
                    let root = path.pop().expect("the path holds the frame just pushed");
                    depths[root] = 0;
                    break 0;
                }
            }
        };
        for (up, &i) in path.iter().rev().enumerate() {
            let depth = base + up + 1;
            if depth > MAX_DEPTH {
                return Err(too_deep());
            }
            depths[i] = depth;
        }
        path.clear();
    }
    Ok(depths)
}
