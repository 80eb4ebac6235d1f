//! Where each agent keeps its sessions: the rules the agents themselves follow, applied to the
//! environment the caller passes (nothing here reads the process's environment), and the folders
//! to watch to hear of an agent's new sessions — from the nearest folder that exists while the
//! agent's own folder does not yet (a new machine, a new `CLAUDE_CONFIG_DIR`): the agent makes it
//! when it writes its first session.

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

    /// The folders to watch, not recursively, to hear of `agent`'s new sessions: Claude Code's
    /// projects folder and each project's folder, Codex's sessions folder with its years, months
    /// and days, OpenCode's data folder. While the agent's folder does not exist, the nearest
    /// folder above it that does: a change there may be the agent's folder, or one on the way
    /// to it, being made, and the caller then asks again (see [`AgentHomes::on_the_way`]).
    pub fn folders_to_watch(&self, agent: Agent) -> Vec<PathBuf> {
        let home = self.of(agent).to_owned();
        if !home.is_dir() {
            return nearest_folder(&home).into_iter().collect();
        }
        let subfolders = |p: &Path| -> Vec<PathBuf> {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map(|e| e.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
                .unwrap_or_default();
            found.sort();
            found
        };
        match agent {
            Agent::ClaudeCode => std::iter::once(home.clone()).chain(subfolders(&home)).collect(),
            Agent::Codex => {
                let mut all = vec![home];
                let mut next = 0;
                // Years, months, days: three levels below.
                for _ in 0..3 {
                    let level: Vec<PathBuf> =
                        all[next..].iter().flat_map(|p| subfolders(p)).collect();
                    next = all.len();
                    all.extend(level);
                }
                all
            }
            Agent::OpenCode => vec![home],
        }
    }

    /// Whether a change of `path` may be a new session of `agent`: a path in its folder, or the
    /// folder itself or one above it (being made, or made again). Other changes beside a folder
    /// watched while the agent's folder is missing (a home folder's own files, say) are not.
    pub fn on_the_way(&self, agent: Agent, path: &Path) -> bool {
        let home = self.of(agent);
        path.starts_with(home) || home.starts_with(path)
    }
}

/// The nearest of `path` and the folders above it that exists as a folder; `None` when none
/// does (a relative path whose every folder is missing).
pub fn nearest_folder(path: &Path) -> Option<PathBuf> {
    path.ancestors().find(|p| !p.as_os_str().is_empty() && p.is_dir()).map(Path::to_owned)
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

    fn homes_under(dir: &Path) -> AgentHomes {
        AgentHomes {
            claude_code: dir.join("claude/projects"),
            codex: dir.join("codex/sessions"),
            opencode: dir.join("xdg/opencode"),
        }
    }

    #[test]
    fn a_missing_agent_folder_is_watched_for_from_the_nearest_folder_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let homes = homes_under(dir.path());
        for agent in Agent::ALL {
            assert_eq!(homes.folders_to_watch(agent), [dir.path()], "{agent:?}");
        }
        std::fs::create_dir_all(dir.path().join("claude")).unwrap();
        assert_eq!(homes.folders_to_watch(Agent::ClaudeCode), [dir.path().join("claude")]);
        // A file where a folder should be is no folder to watch.
        std::fs::write(dir.path().join("xdg"), "").unwrap();
        assert_eq!(homes.folders_to_watch(Agent::OpenCode), [dir.path()]);
        assert_eq!(nearest_folder(Path::new("no/such/relative/folder")), None);
    }

    #[test]
    fn an_agent_folder_that_exists_is_watched_with_the_folders_sessions_appear_in() {
        let dir = tempfile::tempdir().unwrap();
        let homes = homes_under(dir.path());
        let project = homes.claude_code.join("-work-p");
        let day = homes.codex.join("2026/11/26");
        for folder in [&project, &day, &homes.opencode] {
            std::fs::create_dir_all(folder).unwrap();
        }
        assert_eq!(homes.folders_to_watch(Agent::ClaudeCode), [homes.claude_code.clone(), project]);
        let codex = &homes.codex;
        assert_eq!(
            homes.folders_to_watch(Agent::Codex),
            [codex.clone(), codex.join("2026"), codex.join("2026/11"), day]
        );
        assert_eq!(homes.folders_to_watch(Agent::OpenCode), std::slice::from_ref(&homes.opencode));
    }

    #[test]
    fn a_change_on_the_way_to_an_agent_folder_or_in_it_may_be_a_new_session() {
        let homes = homes_under(Path::new("/h"));
        let on = |path: &str| homes.on_the_way(Agent::ClaudeCode, Path::new(path));
        assert!(on("/h/claude"));
        assert!(on("/h/claude/projects"));
        assert!(on("/h/claude/projects/-work-p/s.jsonl"));
        assert!(!on("/h/.bash_history"));
        assert!(!on("/h/claude/settings.json"));
        assert!(!on("/h/claude/projects-old"));
    }
}
