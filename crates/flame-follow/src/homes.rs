//! Where each agent keeps its sessions: the rules the agents themselves follow, applied to the
//! environment the caller passes (nothing here reads the process's environment).

use std::path::{Path, PathBuf};

use crate::Agent;

/// The folders each agent keeps its sessions in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentHomes {
    /// Claude Code's `projects/` folder: `<project>/<session>.jsonl`, and the session's
    /// `<session>/subagents/agent-*.jsonl`. Under `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub claude_code: PathBuf,
    /// Codex's `sessions/` folder: `YYYY/MM/DD/rollout-<time>-<thread>.jsonl`. Under
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex: PathBuf,
    /// OpenCode's data folder: `opencode.db` (1.2 and later) and the older `storage/`. Under
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    pub opencode: PathBuf,
}

impl AgentHomes {
    /// The folders for a person whose home folder is `home`, with `var` looking up an
    /// environment variable (an empty value counts as unset, as the agents take it).
    pub fn resolve(home: &Path, var: impl Fn(&str) -> Option<String>) -> AgentHomes {
        let dir = |name: &str, default: PathBuf| {
            var(name).filter(|v| !v.trim().is_empty()).map_or(default, PathBuf::from)
        };
        AgentHomes {
            claude_code: dir("CLAUDE_CONFIG_DIR", home.join(".claude")).join("projects"),
            codex: dir("CODEX_HOME", home.join(".codex")).join("sessions"),
            opencode: dir("XDG_DATA_HOME", home.join(".local/share")).join("opencode"),
        }
    }

    /// The folder `agent` keeps its sessions in.
    pub fn of(&self, agent: Agent) -> &Path {
        match agent {
            Agent::ClaudeCode => &self.claude_code,
            Agent::Codex => &self.codex,
            Agent::OpenCode => &self.opencode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_s_own_variable_moves_its_folder() {
        let home = Path::new("/home/ada");
        let none = AgentHomes::resolve(home, |_| None);
        assert_eq!(none.claude_code, Path::new("/home/ada/.claude/projects"));
        assert_eq!(none.codex, Path::new("/home/ada/.codex/sessions"));
        assert_eq!(none.opencode, Path::new("/home/ada/.local/share/opencode"));
        let set = AgentHomes::resolve(home, |name| match name {
            "CLAUDE_CONFIG_DIR" => Some("/cfg/claude".into()),
            "CODEX_HOME" => Some("/cfg/codex".into()),
            "XDG_DATA_HOME" => Some(" ".into()),
            _ => None,
        });
        assert_eq!(set.claude_code, Path::new("/cfg/claude/projects"));
        assert_eq!(set.codex, Path::new("/cfg/codex/sessions"));
        assert_eq!(set.opencode, Path::new("/home/ada/.local/share/opencode"));
    }
}
