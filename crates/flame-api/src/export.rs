//! Export: a frame, its subtree or its whole tree in Flame's JSON schema or as Markdown, and a
//! frame's assembled context as Markdown — as text, or written to a file.
//!
//! A file is written beside its target under a temporary name and renamed over it only once it
//! is complete and on disk, so a failed export leaves no half-written file and never replaces an
//! existing file with a partial one.
//!
//! An export reads the frames an `ExportScope` names into the schema of `flame_import::flame_json`,
//! taking the store frame by frame so that a large export does not hold up other commands, and
//! reports progress about once a percent. A file export checks the path first
//! (`resolve_export_path` expands `~` from a home folder the caller passes). The assembled
//! context's Markdown is described in `docs/export-format.md`. Each exported frame carries its cost
//! (JSON schema version 2: `cost`, written and never read back; a frame exported alone has itself
//! as its subtree), and the Markdown a `- cost:` line.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

use flame_context::{Budget, ContextDoc, SectionState};
use flame_import::flame_json::{self, Export, ExportFrame, ExportMessage, ExportTree};
use flame_model::cost::FrameCost;
use flame_model::{Frame, FrameId, FrameTree, TreeId};
use serde::{Deserialize, Serialize};

use crate::frames::resolve_tree;
use crate::{ApiError, ErrorCode, Flame, frame_log};

/// How much of a tree an export holds, counted from the frame asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportScope {
    /// The frame alone, as a root without its children.
    Frame,
    /// The frame and every frame under it.
    Subtree,
    /// The whole tree the frame belongs to.
    Tree,
}

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Flame's versioned schema (`docs/export-format.md`), which Flame imports back.
    Json,
    /// One nested section per frame, for reading.
    Markdown,
}

/// How far an export has read: frames whose messages are read, of all the frames it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
pub struct ExportProgress {
    pub frames_done: u64,
    pub frames_total: u64,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ExportSummary {
    /// The file written, absolute.
    pub path: String,
    /// The frames the file describes.
    pub frames: u64,
    /// The messages the file holds.
    pub messages: u64,
    /// The file's size.
    pub bytes: u64,
}

/// `text` as a path, `~` and `~/…` taken from `home`; `None` when it starts at a home folder
/// there is not.
pub fn expand_home(text: &str, home: Option<&Path>) -> Option<PathBuf> {
    match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            Some(home?.join(rest.trim_start_matches('/')))
        }
        _ => Some(PathBuf::from(text)),
    }
}

/// The file a person named for an export: `~` and `~/…` are taken from `home`, anything else
/// must be absolute, since a relative path would depend on where the process happened to start.
pub fn resolve_export_path(text: &str, home: Option<&Path>) -> Result<PathBuf, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid_path("name a file to export to"));
    }
    let path = expand_home(text, home).ok_or_else(|| {
        invalid_path(format!("cannot expand ~ in {text}: there is no home folder"))
    })?;
    if !path.is_absolute() {
        return Err(invalid_path(format!(
            "give the export's full path (starting with / or ~/), not {text}"
        )));
    }
    Ok(path)
}

impl Flame {
    /// The frames `scope` names from `id` (a frame id, or a tree id for its root) in Flame's
    /// export schema. `progress` hears as the frames' messages are read, about a hundred times
    /// over a large export.
    pub fn export(
        &self,
        id: &str,
        scope: ExportScope,
        progress: &mut dyn FnMut(ExportProgress),
    ) -> Result<Export, ApiError> {
        let (tree, whole, root, costs) = {
            let store = self.store();
            let (tree, frame) = match TreeId::parse(id) {
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
            let root = if scope == ExportScope::Tree { tree.root.clone() } else { frame };
            let whole = FrameTree::new(tree.clone(), store.frames_of_tree(&tree.id)?);
            let costs = self.costs_of_tree(&store, &tree.id)?;
            (tree, whole, root, costs)
        };
        // Depth first, each parent before its children, siblings in position order.
        let mut order: Vec<&Frame> = Vec::new();
        let mut stack: Vec<&Frame> = whole.get(&root).into_iter().collect();
        while let Some(frame) = stack.pop() {
            order.push(frame);
            if scope != ExportScope::Frame {
                let children: Vec<&Frame> = whole.children(&frame.id).collect();
                stack.extend(children.into_iter().rev());
            }
        }
        let total = order.len() as u64;
        let mut reported = None;
        let mut frames = Vec::with_capacity(order.len());
        for (done, f) in order.into_iter().enumerate() {
            // The store is taken frame by frame, so the app's other commands (an agent saving
            // its reply, the graph reloading) are not held up for the length of a large export.
            let messages = self.store().messages(&f.id)?;
            let mut cost = costs.get(&f.id).cloned();
            // A frame exported alone stands alone: its subtree in the file is itself.
            if scope == ExportScope::Frame {
                cost = cost
                    .filter(|c| !c.models.is_empty())
                    .map(|c| FrameCost { subtree: c.own.clone(), ..c });
            }
            frames.push(export_frame(f, &root, messages, cost));
            report(done as u64 + 1, total, &mut reported, progress);
        }
        let focus =
            frames.iter().any(|f| f.id == tree.focus.as_str()).then(|| tree.focus.to_string());
        // A subtree stands alone: its tree begins with its root, as the tree it imports into will.
        let created_at = match frames.first() {
            Some(first) if root != tree.root => first.created_at,
            _ => tree.created_at,
        };
        Ok(Export {
            format: flame_json::FORMAT.to_owned(),
            version: flame_json::VERSION,
            tree: ExportTree { title: tree.title.clone(), created_at, focus },
            frames,
        })
    }

    /// The export as text: the JSON schema, or Markdown with one nested section per frame.
    pub fn export_text(
        &self,
        id: &str,
        scope: ExportScope,
        format: ExportFormat,
    ) -> Result<String, ApiError> {
        let export = self.export(id, scope, &mut |_| {})?;
        match format {
            ExportFormat::Json => serde_json::to_string_pretty(&export)
                .map_err(|e| ApiError::internal("write the export", e)),
            ExportFormat::Markdown => Ok(markdown(&export)),
        }
    }

    /// Writes the export to `path` (absolute; see [`resolve_export_path`]), replacing a file
    /// already there only once the new one is complete. The path is checked before anything is
    /// read, so a bad one fails at once.
    pub fn export_to_file(
        &self,
        id: &str,
        scope: ExportScope,
        format: ExportFormat,
        path: &Path,
        progress: &mut dyn FnMut(ExportProgress),
    ) -> Result<ExportSummary, ApiError> {
        check_target(path)?;
        let export = self.export(id, scope, progress)?;
        let bytes = write_atomically(path, |out| match format {
            ExportFormat::Json => Ok(serde_json::to_writer_pretty(out, &export)?),
            ExportFormat::Markdown => out.write_all(markdown(&export).as_bytes()),
        })?;
        Ok(ExportSummary {
            path: path.display().to_string(),
            frames: export.frames.len() as u64,
            messages: export.frames.iter().map(|f| f.messages.len() as u64).sum(),
            bytes,
        })
    }

    /// Writes what the model receives in `frame` under `budget` (null: the default) to `path`
    /// as Markdown: the account of every section, the system prompt with its `<stack-context>`
    /// document, and the messages, each verbatim.
    pub fn export_context_to_file(
        &self,
        frame: &FrameId,
        budget: Option<Budget>,
        path: &Path,
    ) -> Result<ExportSummary, ApiError> {
        check_target(path)?;
        let title = self.frame(frame)?.frame.title;
        let doc = self.context(Some(frame), budget)?;
        let bytes =
            write_atomically(path, |out| out.write_all(context_markdown(&title, &doc).as_bytes()))?;
        let described: HashSet<&FrameId> =
            doc.report.sections.iter().filter_map(|s| s.frame.as_ref()).collect();
        Ok(ExportSummary {
            path: path.display().to_string(),
            frames: described.len() as u64,
            messages: doc.messages.len() as u64,
            bytes,
        })
    }
}

/// A stored frame in the export schema; `root` is the export's root, which stands alone.
fn export_frame(
    f: &Frame,
    root: &FrameId,
    messages: Vec<flame_model::Message>,
    cost: Option<FrameCost>,
) -> ExportFrame {
    let is_root = &f.id == root;
    ExportFrame {
        id: f.id.to_string(),
        parent: if is_root { None } else { f.parent.as_ref().map(|p| p.to_string()) },
        position: if is_root { 0 } else { f.position },
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
        retry_of: if is_root { None } else { f.retry_of.as_ref().map(|r| r.to_string()) },
        created_at: f.created_at,
        started_at: f.started_at,
        ended_at: f.ended_at,
        messages: messages
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
            .collect(),
        cost,
    }
}

/// Reports `done` of `total` when the whole percentage changes (and at the end), so a window
/// following a 100k-frame export gets about a hundred reports rather than one per frame.
fn report(
    done: u64,
    total: u64,
    reported: &mut Option<u64>,
    progress: &mut dyn FnMut(ExportProgress),
) {
    let percent = done * 100 / total.max(1);
    if *reported != Some(percent) || done == total {
        *reported = Some(percent);
        progress(ExportProgress { frames_done: done, frames_total: total });
    }
}

fn invalid_path(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::Invalid, message)
}

/// Refuses a target that cannot become a file: a folder, or a path whose folder is missing.
fn check_target(path: &Path) -> Result<(), ApiError> {
    if !path.is_absolute() {
        return Err(invalid_path(format!("give the export's full path, not {}", path.display())));
    }
    if path.is_dir() {
        return Err(invalid_path(format!(
            "{} is a folder: add the name of the file to export to",
            path.display()
        )));
    }
    let Some(folder) = path.parent().filter(|_| path.file_name().is_some()) else {
        return Err(invalid_path(format!("{} names no file to export to", path.display())));
    };
    if !folder.is_dir() {
        let why = if folder.exists() { "is not a folder" } else { "does not exist" };
        return Err(invalid_path(format!(
            "cannot export to {}: {} {why}",
            path.display(),
            folder.display()
        )));
    }
    Ok(())
}

/// Writes `path` through a temporary file beside it, renamed over `path` once complete and
/// synced; on any failure the temporary file is removed and `path` is as it was. Returns the
/// bytes written.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<u64, ApiError> {
    let (temp, file) = create_beside(path).map_err(|e| cannot_write(path, &e))?;
    let written = (|| {
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        // On disk before the rename, so a crash never leaves the target name on an empty file.
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        fs::rename(&temp, path)?;
        Ok(bytes)
    })();
    written.map_err(|e| {
        if let Err(left) = fs::remove_file(&temp) {
            tracing::warn!("could not remove {}: {left}", temp.display());
        }
        cannot_write(path, &e)
    })
}

/// A new file beside `target`, hidden and named after it, that no other writer has.
fn create_beside(target: &Path) -> io::Result<(PathBuf, File)> {
    let folder = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let mut attempt = 0u32;
    loop {
        let temp = folder.join(format!(".{name}.{}-{attempt}.part", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

fn cannot_write(path: &Path, err: &io::Error) -> ApiError {
    let folder = path.parent().unwrap_or(path).display();
    match err.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => invalid_path(format!(
            "cannot export to {}: {folder} cannot be written ({err}); choose another folder",
            path.display()
        )),
        _ => ApiError::internal(&format!("write {}", path.display()), err),
    }
}

/// One section per frame, nested by heading level (deeper than six levels stays at six), with
/// the frame's identity, hand-off and messages.
fn markdown(export: &Export) -> String {
    let mut depth: HashMap<&str, usize> = HashMap::new();
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
        if let Some(cost) = &f.cost {
            let _ = writeln!(
                out,
                "- cost: {}; with its subtree {}",
                cost.own.describe(),
                cost.subtree.describe()
            );
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
                let _ = writeln!(out, "\ntool calls: `{}`", calls_json(calls));
            }
        }
        out.push('\n');
    }
    out
}

/// The assembled context of the frame titled `title` as Markdown: its totals, its opening and
/// what the call does to the cached prefix, a table of the sections with what became of each
/// under the budget, then the system prompt, the opening and the messages (context notes among
/// them) verbatim, each in a fence so nothing in them is read as Markdown.
fn context_markdown(title: &str, doc: &ContextDoc) -> String {
    let report = &doc.report;
    let mut out = String::new();
    let _ = writeln!(out, "# Context of {title}\n");
    let _ = writeln!(out, "- frame: `{}`", report.focus);
    let _ = writeln!(
        out,
        "- {} of {} tokens{}; a linear chat of the same tree would send {}",
        report.total_tokens,
        report.budget,
        if report.fits { "" } else { " (over the budget even with everything droppable dropped)" },
        report.linear_tokens
    );
    if report.omitted_messages > 0 {
        let _ = writeln!(out, "- {} older messages left out", report.omitted_messages);
    }
    let opening = &report.opening;
    let _ = writeln!(
        out,
        "- opening {} ({} tokens), {}{}",
        opening.generation,
        opening.tokens,
        if opening.made_now { "made at this call: " } else { "" },
        opening.reason_text
    );
    let _ = writeln!(
        out,
        "- the call reads about {} tokens from the provider's cache and writes {}",
        opening.cache_read_tokens, opening.cache_written_tokens
    );
    let _ = writeln!(out, "\n## Sections\n\n| section | tokens | state |\n|---|---:|---|");
    for s in &report.sections {
        let state = match s.state {
            SectionState::Full => "full",
            SectionState::Compacted => "compacted results",
            SectionState::TitleOnly => "title only",
            SectionState::Bare => "id and status only",
            SectionState::Dropped => "left out",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {state} |",
            one_line(&s.label).replace('|', "\\|"),
            s.tokens
        );
    }
    let _ = writeln!(out, "\n## System prompt\n\n{}", fence(&doc.system));
    let _ = writeln!(out, "\n## Opening\n\n{}", fence(&doc.xml));
    let _ = writeln!(out, "\n## Messages");
    if let Some(omission) = &doc.omission {
        let _ = writeln!(out, "\n{}", fence(omission));
    }
    for (i, m) in doc.messages.iter().enumerate() {
        let _ = writeln!(
            out,
            "\n### {}. {} · {} · {} tokens\n",
            i + 1,
            m.role.as_str(),
            frame_log::format_time(m.created_at),
            m.tokens
        );
        if !m.content.trim().is_empty() {
            let _ = writeln!(out, "{}", fence(&m.content));
        }
        if let Some(calls) = &m.tool_calls {
            let _ = writeln!(out, "\ntool calls: `{}`", calls_json(calls));
        }
    }
    out
}

/// Tool calls as one line of JSON.
fn calls_json(calls: &[flame_model::ToolCall]) -> String {
    // Plain data with string keys always serializes.
    serde_json::to_string(calls).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_expanded_from_home_and_must_be_absolute() {
        let home = Path::new("/home/ada");
        assert_eq!(
            resolve_export_path(" ~/notes/tree.md ", Some(home)).unwrap(),
            Path::new("/home/ada/notes/tree.md")
        );
        assert_eq!(resolve_export_path("~", Some(home)).unwrap(), home);
        assert_eq!(resolve_export_path("/tmp/a.json", None).unwrap(), Path::new("/tmp/a.json"));
        for (text, home, says) in [
            ("", Some(home), "name a file"),
            ("   ", Some(home), "name a file"),
            ("~/a.md", None, "no home folder"),
            ("notes/a.md", Some(home), "full path"),
            ("~ada/a.md", Some(home), "full path"),
        ] {
            let err = resolve_export_path(text, home).unwrap_err();
            assert_eq!(err.code, ErrorCode::Invalid, "{text:?}");
            assert!(err.message.contains(says), "{text:?}: {}", err.message);
        }
    }

    #[test]
    fn progress_is_reported_once_a_percent_and_at_the_end() {
        let mut seen = Vec::new();
        let mut reported = None;
        for done in 1..=1000 {
            report(done, 1000, &mut reported, &mut |p| seen.push(p.frames_done));
        }
        // 0 % to 100 %, each once.
        assert_eq!(seen.len(), 101);
        assert_eq!(seen.first(), Some(&1));
        assert_eq!(seen.last(), Some(&1000));
        let mut seen = Vec::new();
        let mut reported = None;
        for done in 1..=3 {
            report(done, 3, &mut reported, &mut |p| seen.push(p.frames_done));
        }
        assert_eq!(seen, [1, 2, 3]);
    }

    #[test]
    fn a_write_that_fails_midway_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tree.md");
        fs::write(&target, "the old export").unwrap();
        let err = write_atomically(&target, |out| {
            out.write_all(b"half of the new")?;
            Err(io::Error::other("the disk filled up"))
        })
        .unwrap_err();
        assert!(err.message.contains("the disk filled up"), "{}", err.message);
        assert_eq!(fs::read_to_string(&target).unwrap(), "the old export");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");

        let bytes = write_atomically(&target, |out| out.write_all(b"the new export")).unwrap();
        assert_eq!(bytes, 14);
        assert_eq!(fs::read_to_string(&target).unwrap(), "the new export");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_fence_is_longer_than_any_backticks_inside() {
        assert_eq!(fence("a"), "```text\na\n```");
        assert_eq!(fence("x ````` y\n"), "``````text\nx ````` y\n``````");
    }
}
