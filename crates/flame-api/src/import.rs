//! Import of other tools' sessions and of Flame's own export, and the replay that compares what
//! an agent sent with what Flame would send.

use std::path::Path;

use flame_import::replay::{Replay, ReplayOptions};
use flame_import::{Draft, Format, ImportError, ImportOptions, opencode};
use flame_model::{Actor, FrameError, Tree};
use flame_store::ImportedMessage;
use serde::{Deserialize, Serialize};

use crate::frames::with_fresh_ids;
use crate::{ApiError, ErrorCode, Flame};

/// A source format, as the front ends name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    ClaudeCode,
    Codex,
    #[serde(rename = "opencode")]
    OpenCode,
    Flame,
}

impl From<ImportFormat> for Format {
    fn from(f: ImportFormat) -> Format {
        match f {
            ImportFormat::ClaudeCode => Format::ClaudeCode,
            ImportFormat::Codex => Format::Codex,
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
    /// What could not be read, by file and line, and what was changed to fit Flame's limits;
    /// everything else was imported. The first few are listed, then a last line "and N more".
    pub problems: Vec<String>,
    /// How many problems there were in all, listed or only counted.
    pub problem_count: u64,
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
pub(crate) fn read_draft(
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
pub(crate) fn opencode_rows(rows: flame_store::foreign::OpenCodeRows) -> opencode::Rows {
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
    replay: &ReplayOptions,
) -> Result<Replay, ApiError> {
    let options = ImportOptions { segment: true, session: session.map(str::to_owned) };
    let draft = read_draft(path, format, &options, &mut |_| {})?;
    flame_import::replay::replay(&draft, replay)
        .map_err(|e| ApiError::internal("replay the session", e))
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
        let mut draft = read_draft(path, format, &options, &mut |p| {
            progress(ImportProgress {
                file: p.file,
                bytes_read: p.bytes_read,
                total_bytes: p.total_bytes,
            })
        })?;
        draft.cut_long_messages(flame_store::MAX_MESSAGE_BYTES);
        let tree = self.store_draft(actor, &draft)?;
        let report = draft.report;
        let problems = report.problem_lines();
        let problem_count = report.problem_count();
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
            problems,
            problem_count,
        })
    }

    /// Stores a draft as a new tree, which becomes current, in one transaction. Its frames' logs
    /// are left to be written when first read (`frame_log::ensure`) or changed.
    pub(crate) fn store_draft(&self, actor: Actor, draft: &Draft) -> Result<Tree, ApiError> {
        self.write(actor, |store, change, env| {
            with_fresh_ids(|| {
                let tree = draft.materialise(&mut env.ids).map_err(|e| {
                    FrameError::Invalid(format!("the imported tree is not valid: {e}"))
                })?;
                let messages = imported_messages(draft);
                store.import_tree_with_trails(
                    change,
                    &tree.tree,
                    &tree.frames,
                    &messages,
                    &tree.trails,
                )?;
                // The frames' logs are written when first read or changed (`frame_log`), not
                // all now: a large import would spend most of its time writing them.
                store.defer_imported_logs(&tree.tree.id)?;
                Ok(tree.tree)
            })
        })
    }
}

/// A draft's messages as the store imports them.
pub(crate) fn imported_messages(draft: &Draft) -> Vec<ImportedMessage> {
    draft
        .messages
        .iter()
        .map(|m| ImportedMessage {
            frame: m.frame,
            message: (*m.message).clone(),
            tokens: m.tokens,
            at: m.at,
        })
        .collect()
}
