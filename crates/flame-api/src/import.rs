//! Import of other tools' sessions and of Flame's own export, export of a subtree, and the
//! replay that compares what an agent sent with what Flame would send.

use std::fmt::Write as _;
use std::path::Path;

use flame_import::flame_json::{self, Export, ExportFrame, ExportMessage, ExportTree};
use flame_import::replay::Replay;
use flame_import::{Draft, Format, ImportError, ImportOptions, opencode};
use flame_model::{Actor, Frame, FrameError, FrameId, FrameTree, Tree, TreeId};
use flame_store::ImportedMessage;
use serde::{Deserialize, Serialize};

use crate::frames::{resolve_tree, with_fresh_ids};
use crate::{ApiError, ErrorCode, Flame, frame_log};

/// A source format, as the front ends name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    ClaudeCode,
    #[serde(rename = "opencode")]
    OpenCode,
    Flame,
}

impl From<ImportFormat> for Format {
    fn from(f: ImportFormat) -> Format {
        match f {
            ImportFormat::ClaudeCode => Format::ClaudeCode,
            ImportFormat::OpenCode => Format::OpenCode,
            ImportFormat::Flame => Format::Flame,
        }
    }
}

/// How far an import has read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ImportProgress {
    pub file: String,
    pub bytes_read: u64,
    pub total_bytes: u64,
}

/// Records of one kind that carried no message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SkippedRecords {
    pub kind: String,
    pub count: u64,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ImportSummary {
    pub tree: Tree,
    pub frames: u64,
    pub messages: u64,
    /// Records read over every file.
    pub records: u64,
    /// Assistant records merged into the response they continue.
    pub merged_records: u64,
    pub skipped: Vec<SkippedRecords>,
    /// What could not be read, by file and line; everything else was imported.
    pub problems: Vec<String>,
}

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Markdown,
}

fn import_error(err: ImportError) -> ApiError {
    let code = match err {
        ImportError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ErrorCode::NotFound
        }
        ImportError::Io { .. } => ErrorCode::Internal,
        ImportError::UnknownFormat { .. }
        | ImportError::Empty { .. }
        | ImportError::BadExport { .. }
        | ImportError::BadOpenCode { .. } => ErrorCode::Invalid,
        ImportError::NeedsDatabaseReader { .. } => ErrorCode::Internal,
    };
    ApiError::new(code, err.to_string())
}

/// Reads a source into a draft. OpenCode databases are read through `flame-store`, the one
/// crate that opens SQLite, and their rows handed to the importer.
fn read_draft(
    path: &Path,
    format: Option<ImportFormat>,
    options: &ImportOptions,
    progress: &mut dyn FnMut(flame_import::Progress),
) -> Result<Draft, ApiError> {
    match flame_import::import(path, format.map(Into::into), options, progress) {
        Err(ImportError::NeedsDatabaseReader { path: db }) => {
            let rows = flame_store::foreign::read_opencode_db(&db)
                .map_err(|e| ApiError::new(ErrorCode::Invalid, e.to_string()))?;
            opencode::from_rows(opencode_rows(rows), options.session.as_deref(), options)
                .map_err(|why| import_error(ImportError::BadOpenCode { path: db.clone(), why }))
        }
        other => other.map_err(import_error),
    }
}

/// The store's plain rows as the importer's, with each `data` column parsed; a row whose
/// data is not a JSON object is reported and left out.
fn opencode_rows(rows: flame_store::foreign::OpenCodeRows) -> opencode::Rows {
    let mut problems = Vec::new();
    let mut parse = |table: &str, id: &str, data: &str| match serde_json::from_str(data) {
        Ok(v @ serde_json::Value::Object(_)) => Some(v),
        _ => {
            problems
                .push(format!("opencode.db {table} {id}: its data is not a JSON object; skipped"));
            None
        }
    };
    let messages: Vec<_> = rows
        .messages
        .into_iter()
        .filter_map(|m| {
            let data = parse("message", &m.id, &m.data)?;
            Some(opencode::MessageRow {
                id: m.id,
                session_id: m.owner,
                time_created: m.time_created,
                data,
            })
        })
        .collect();
    let parts: Vec<_> = rows
        .parts
        .into_iter()
        .filter_map(|p| {
            let data = parse("part", &p.id, &p.data)?;
            Some(opencode::PartRow {
                id: p.id,
                message_id: p.owner,
                time_created: p.time_created,
                data,
            })
        })
        .collect();
    let sessions = rows
        .sessions
        .into_iter()
        .map(|s| opencode::SessionRow {
            id: s.id,
            parent_id: s.parent_id,
            title: s.title,
            directory: s.directory,
            time_created: s.time_created,
        })
        .collect();
    opencode::Rows { sessions, messages, parts, problems }
}

/// Compares, call by call, the context the agent of a recorded session sent with the one Flame
/// would have sent (see `flame_import::replay`). Reads the file only; nothing is stored.
pub fn replay_file(
    path: &Path,
    format: Option<ImportFormat>,
    session: Option<&str>,
) -> Result<Replay, ApiError> {
    let options = ImportOptions { segment: true, session: session.map(str::to_owned) };
    let draft = read_draft(path, format, &options, &mut |_| {})?;
    flame_import::replay::replay(&draft).map_err(|e| ApiError::internal("replay the session", e))
}

impl Flame {
    /// Imports a session or an export as a new tree, which becomes current. The whole tree is
    /// written in one transaction; lines that cannot be read are listed in the summary and the
    /// rest is imported.
    pub fn import_file(
        &self,
        actor: Actor,
        path: &Path,
        format: Option<ImportFormat>,
        segment: bool,
        session: Option<&str>,
        progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ImportSummary, ApiError> {
        let options = ImportOptions { segment, session: session.map(str::to_owned) };
        let draft = read_draft(path, format, &options, &mut |p| {
            progress(ImportProgress {
                file: p.file,
                bytes_read: p.bytes_read,
                total_bytes: p.total_bytes,
            })
        })?;
        let tree = self.store_draft(actor, &draft)?;
        let report = draft.report;
        Ok(ImportSummary {
            tree,
            frames: draft.frames.len() as u64,
            messages: draft.messages.len() as u64,
            records: report.records,
            merged_records: report.merged_records,
            skipped: report
                .skipped
                .into_iter()
                .map(|(kind, count)| SkippedRecords { kind, count })
                .collect(),
            problems: report.problems,
        })
    }

    /// Stores a draft as a new tree, which becomes current, in one transaction.
    pub(crate) fn store_draft(&self, actor: Actor, draft: &Draft) -> Result<Tree, ApiError> {
        self.write(actor, |store, change, env| {
            with_fresh_ids(|| {
                let tree = draft.materialise(&mut env.ids).map_err(|e| {
                    FrameError::Invalid(format!("the imported tree is not valid: {e}"))
                })?;
                let messages: Vec<ImportedMessage> = tree
                    .messages
                    .iter()
                    .map(|m| ImportedMessage {
                        frame: m.frame,
                        message: m.message.clone(),
                        tokens: m.tokens,
                        at: m.at,
                    })
                    .collect();
                store.import_tree(change, &tree.tree, &tree.frames, &messages)?;
                Ok(tree.tree)
            })
        })
    }

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
