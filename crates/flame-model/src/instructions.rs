//! Project instructions: the `AGENTS.md` files (or `CLAUDE.md` where a folder has no
//! `AGENTS.md`) of the workspace's root and of the folders above the files a frame works in, and
//! the person's own `AGENTS.md` in Flame's configuration folder. `flame-workspace` reads the
//! workspace's, the facade the person's, and `flame-context` puts them at the start of a frame's
//! opening, so they are read when an opening is made and repeated byte for byte until the next.

use serde::{Deserialize, Serialize};

/// The most of the instruction files' text one opening sends, in bytes, every file together:
/// Codex's limit (32 KiB, its `project_doc_max_bytes`), some 8,000 tokens. No file is read
/// further than this; what is left out is said where the text is cut.
pub const MAX_INSTRUCTIONS_BYTES: usize = 32 * 1024;

/// Whose a file of instructions is, and so where it applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum InstructionScope {
    /// The person's own, for every workspace.
    Personal,
    /// The workspace's: for the files in the file's folder and below it.
    Workspace,
}

/// A file of instructions as read for an opening, in the order the opening sends them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// A workspace's file relative to the workspace root (`AGENTS.md`, `src/AGENTS.md`); the
    /// person's absolute.
    pub path: String,
    pub scope: InstructionScope,
    /// The start of the file, at most [`MAX_INSTRUCTIONS_BYTES`], cut at a character.
    pub text: String,
    /// The file's size in bytes.
    pub size: u64,
    /// Why the file was found but could not be read, in words; its text is then empty.
    pub problem: Option<String>,
}

impl InstructionFile {
    /// The folder a workspace's file applies to, relative to the root with a trailing `/`
    /// (empty for the root); `None` for the person's file.
    pub fn folder(&self) -> Option<&str> {
        match self.scope {
            InstructionScope::Personal => None,
            InstructionScope::Workspace => {
                Some(self.path.rfind('/').map_or("", |slash| &self.path[..=slash]))
            }
        }
    }
}

/// What an opening sent of one file of instructions: the context inspector's account of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct InstructionFileReport {
    pub path: String,
    pub scope: InstructionScope,
    /// The file's size in bytes.
    pub size: u64,
    /// How many of its bytes were sent: `size` when it was sent whole.
    pub sent: u64,
    /// Why it could not be read, when it could not.
    pub problem: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_file_applies_to_its_folder_and_the_persons_to_none() {
        let file = |path: &str, scope| InstructionFile {
            path: path.to_owned(),
            scope,
            text: String::new(),
            size: 0,
            problem: None,
        };
        assert_eq!(file("AGENTS.md", InstructionScope::Workspace).folder(), Some(""));
        assert_eq!(file("src/ui/CLAUDE.md", InstructionScope::Workspace).folder(), Some("src/ui/"));
        assert_eq!(
            file("/home/a/.config/flame/AGENTS.md", InstructionScope::Personal).folder(),
            None
        );
    }
}
