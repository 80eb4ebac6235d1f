//! The sessions each agent keeps, with what a person tells them apart by: the project folder,
//! the first request, the last activity and the size. Files are read only as far as their
//! first request ([`MAX_HEAD_BYTES`]); a folder or file that cannot be read is a problem of the
//! listing, and the rest is listed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use flame_import::live::{self, LiveFormat};
use flame_import::opencode;
use flame_model::Timestamp;

use crate::{Agent, AgentHomes, ReadRows};

/// How many sessions of one agent are listed: the most recently active. A person who has used
/// an agent for years has thousands; the others are counted.
pub const MAX_LISTED_SESSIONS: usize = 2_000;

/// How much of a session file is read to find its first request.
pub const MAX_HEAD_BYTES: u64 = 256 * 1024;

/// How many folders are walked under Codex's sessions folder (one per day it was used, and the
/// months and years above them).
const MAX_FOLDERS_WALKED: usize = 20_000;

/// A session an agent keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSession {
    pub agent: Agent,
    /// The agent's id of the session.
    pub id: String,
    /// Its main file, or the OpenCode database or `storage/` folder that holds it.
    pub source: PathBuf,
    /// The folder the agent worked in.
    pub project: Option<String>,
    pub first_request: Option<String>,
    /// When it last changed, in milliseconds since the epoch.
    pub last_activity: Option<Timestamp>,
    /// Its files' bytes (the main file and the subagents' files found beside it), or its rows'.
    pub size: u64,
}

/// What a listing found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Most recently active first.
    pub sessions: Vec<FoundSession>,
    /// What could not be read, each naming its file or folder.
    pub problems: Vec<String>,
    /// Sessions past [`MAX_LISTED_SESSIONS`] of an agent, not listed.
    pub unlisted: u64,
}

/// The sessions of `agents` in `homes`; OpenCode's database is read with `read_rows`.
pub fn list_sessions(homes: &AgentHomes, agents: &[Agent], read_rows: ReadRows<'_>) -> Listing {
    let mut listing = Listing::default();
    for &agent in agents {
        let mut found = match agent {
            Agent::ClaudeCode => claude_code(&homes.claude_code, &mut listing.problems),
            Agent::Codex => codex(&homes.codex, &mut listing.problems),
            Agent::OpenCode => opencode_sessions(&homes.opencode, read_rows, &mut listing.problems),
        };
        found.sort_by(|a, b| b.last_activity.cmp(&a.last_activity).then(a.id.cmp(&b.id)));
        if found.len() > MAX_LISTED_SESSIONS {
            listing.unlisted += (found.len() - MAX_LISTED_SESSIONS) as u64;
            found.truncate(MAX_LISTED_SESSIONS);
        }
        listing.sessions.extend(found);
    }
    listing.sessions.sort_by_key(|s| std::cmp::Reverse(s.last_activity));
    listing
}

/// A file's size and when it was last changed, in milliseconds.
fn stat(path: &Path) -> Option<(u64, Option<Timestamp>)> {
    let metadata = std::fs::metadata(path).ok()?;
    let changed = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as Timestamp);
    Some((metadata.len(), changed))
}

fn entries(folder: &Path, problems: &mut Vec<String>) -> Vec<PathBuf> {
    match std::fs::read_dir(folder) {
        Ok(entries) => {
            let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            paths.sort();
            paths
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            problems.push(format!("cannot list {}: {err}", folder.display()));
            Vec::new()
        }
    }
}

fn claude_code(projects: &Path, problems: &mut Vec<String>) -> Vec<FoundSession> {
    let mut found = Vec::new();
    for project in entries(projects, problems).into_iter().filter(|p| p.is_dir()) {
        for file in entries(&project, problems) {
            if file.extension().is_none_or(|e| e != "jsonl") || !file.is_file() {
                continue;
            }
            let head = match live::head(LiveFormat::ClaudeCode, &file, MAX_HEAD_BYTES) {
                Ok(head) => head,
                Err(err) => {
                    problems.push(format!("cannot read {}: {err}", file.display()));
                    continue;
                }
            };
            let Some((mut size, mut changed)) = stat(&file) else { continue };
            for (_, agent) in live::claude_code_agent_files(&file) {
                if let Some((bytes, at)) = stat(&agent) {
                    size += bytes;
                    changed = changed.max(at);
                }
            }
            let id =
                file.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            found.push(FoundSession {
                agent: Agent::ClaudeCode,
                id: head.id.unwrap_or(id),
                source: file,
                project: head.folder,
                first_request: head.first_request,
                last_activity: changed,
                size,
            });
        }
    }
    found
}

fn codex(sessions: &Path, problems: &mut Vec<String>) -> Vec<FoundSession> {
    let mut found = Vec::new();
    let mut folders = vec![sessions.to_owned()];
    let mut walked = 0;
    while let Some(folder) = folders.pop() {
        walked += 1;
        if walked > MAX_FOLDERS_WALKED {
            problems.push(format!(
                "{}: more than {MAX_FOLDERS_WALKED} folders; the rest were not looked at",
                sessions.display()
            ));
            break;
        }
        for path in entries(&folder, problems) {
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name =
                path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if !name.starts_with("rollout-") || !name.ends_with(".jsonl") {
                continue;
            }
            let head = match live::head(LiveFormat::Codex, &path, MAX_HEAD_BYTES) {
                Ok(head) => head,
                Err(err) => {
                    problems.push(format!("cannot read {}: {err}", path.display()));
                    continue;
                }
            };
            // A subagent's thread is shown in its parent's tree, not as a session.
            if head.parent.is_some() {
                continue;
            }
            let Some((size, changed)) = stat(&path) else { continue };
            let id = name.trim_end_matches(".jsonl").to_owned();
            found.push(FoundSession {
                agent: Agent::Codex,
                id: head.id.unwrap_or(id),
                source: path,
                project: head.folder,
                first_request: head.first_request,
                last_activity: changed,
                size,
            });
        }
    }
    found
}

fn opencode_sessions(
    data: &Path,
    read_rows: ReadRows<'_>,
    problems: &mut Vec<String>,
) -> Vec<FoundSession> {
    let db = data.join("opencode.db");
    let (source, rows) = if db.is_file() {
        match read_rows(&db) {
            Ok(rows) => (db, rows),
            Err(why) => {
                problems.push(why);
                return Vec::new();
            }
        }
    } else if data.join("storage").is_dir() {
        let storage = data.join("storage");
        match opencode::read_storage(&storage, &mut |_| {}) {
            Ok(rows) => (storage, rows),
            Err(err) => {
                problems.push(err.to_string());
                return Vec::new();
            }
        }
    } else {
        return Vec::new();
    };
    problems.extend(rows.problems.iter().cloned());
    let mut parts_of: HashMap<&str, Vec<&opencode::PartRow>> = HashMap::new();
    for p in &rows.parts {
        parts_of.entry(p.message_id.as_str()).or_default().push(p);
    }
    let mut messages_of: HashMap<&str, Vec<&opencode::MessageRow>> = HashMap::new();
    for m in &rows.messages {
        messages_of.entry(m.session_id.as_str()).or_default().push(m);
    }
    let parts = |m: &opencode::MessageRow| parts_of.get(m.id.as_str()).into_iter().flatten();
    rows.sessions
        .iter()
        .filter(|s| s.parent_id.is_none())
        .map(|s| {
            let messages: Vec<&opencode::MessageRow> = session_tree(&rows, &s.id)
                .into_iter()
                .flat_map(|id| messages_of.get(id).into_iter().flatten().copied())
                .collect();
            let first_request = messages
                .iter()
                .filter(|m| m.session_id == s.id && m.data["role"] == "user")
                .min_by_key(|m| (m.time_created, m.id.clone()))
                .and_then(|m| {
                    parts(m)
                        .find(|p| p.data["type"] == "text")
                        .and_then(|p| p.data["text"].as_str())
                })
                .map(str::to_owned);
            let size = messages
                .iter()
                .map(|m| {
                    m.data.to_string().len() as u64
                        + parts(m).map(|p| p.data.to_string().len() as u64).sum::<u64>()
                })
                .sum();
            FoundSession {
                agent: Agent::OpenCode,
                id: s.id.clone(),
                source: source.clone(),
                project: s.directory.clone(),
                first_request,
                last_activity: messages
                    .iter()
                    .map(|m| m.time_created)
                    .max()
                    .or(Some(s.time_created)),
                size,
            }
        })
        .collect()
}

/// The ids of session `id` and its descendants.
fn session_tree<'r>(rows: &'r opencode::Rows, id: &'r str) -> Vec<&'r str> {
    let mut tree = vec![id];
    let mut next = 0;
    while next < tree.len() {
        let parent = tree[next];
        for s in &rows.sessions {
            if s.parent_id.as_deref() == Some(parent) && !tree.contains(&s.id.as_str()) {
                tree.push(&s.id);
            }
        }
        next += 1;
    }
    tree
}
