//! The outcome of opening Flame when the app starts, shared by every command.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use flame_agent::Agent;
use flame_api::{ApiError, DataDir, Flame};
use flame_models::{CancellationToken, RetryPolicy};
use flame_settings::Settings;
use flame_workspace::{Environment, Sandbox};

/// Either an open [`Flame`] or the reason it could not be opened, with where the model settings
/// live and the chat that is answering now (so it can be cancelled).
#[derive(Debug)]
pub struct Startup {
    flame: Result<Arc<Flame>, ApiError>,
    settings_path: Option<PathBuf>,
    /// The process's environment, keys included: where keys and base URLs are read.
    environment: Arc<Environment>,
    answering: Mutex<Option<(u64, CancellationToken)>>,
    answers: AtomicU64,
    /// The agent built from the settings file as it was when it was read ([`Startup::agent`]).
    kept_agent: Mutex<Option<(SettingsStamp, Arc<Agent>)>>,
}

/// What tells one version of the settings file from another: its length and the time it was
/// last written (to the nanosecond here), or `None` while there is no file. Every save, by this
/// process or another, replaces the file whole, so a save changes it; keys saved to the keyring
/// are saved with the file.
type SettingsStamp = Option<(u64, SystemTime)>;

fn settings_stamp(path: Option<&Path>) -> SettingsStamp {
    let metadata = std::fs::metadata(path?).ok()?;
    Some((metadata.len(), metadata.modified().ok()?))
}

/// The answer running now; dropping it (when the command returns) forgets it.
#[derive(Debug)]
pub struct Answering<'a> {
    startup: &'a Startup,
    id: u64,
    pub cancel: CancellationToken,
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let mut answering = self.startup.answering.lock().unwrap_or_else(|p| p.into_inner());
        if answering.as_ref().is_some_and(|(id, _)| *id == self.id) {
            *answering = None;
        }
    }
}

impl Startup {
    /// Opens Flame on `data_dir`, keeping any failure (of resolving or of opening) for the UI;
    /// the model settings are the platform's (`~/.config/flame/settings.json` on Linux).
    pub fn open(data_dir: Result<DataDir, ApiError>) -> Startup {
        Startup::with_settings(data_dir, Settings::default_path())
    }

    /// [`Startup::open`] with the model settings at `settings_path`.
    pub fn with_settings(
        data_dir: Result<DataDir, ApiError>,
        settings_path: Option<PathBuf>,
    ) -> Startup {
        // The person's settings, read without the keys, so costs and contexts are right from the
        // first outline.
        let config = Settings::at_or_default(settings_path.as_deref())
            .facade_config(settings_path.as_deref());
        // The database's quick check runs beside the window's first reads (on a 100k-frame
        // store it took longer than the rest of the opening); every write waits for it.
        let flame = data_dir
            .and_then(|data_dir| Flame::open_checking_aside(data_dir, config))
            .map(Arc::new);
        let environment = Environment::inherited();
        if let Ok(flame) = &flame {
            // The settings' folder may hold keys and the approval policy: never a workspace.
            flame.add_own_folders(
                settings_path.as_deref().and_then(Path::parent).map(Path::to_path_buf),
            );
            flame.use_sandbox(Sandbox::from_environment(&environment));
        }
        Startup {
            flame,
            settings_path,
            environment: Arc::new(environment),
            answering: Mutex::default(),
            answers: AtomicU64::new(0),
            kept_agent: Mutex::default(),
        }
    }

    /// Reads keys and base URLs from `environment` (the app's, taken out of the process at
    /// start) rather than from the process's environment as it is now.
    pub fn with_environment(self, environment: Environment) -> Startup {
        // Commands start from this environment, so their sandbox is made from it too.
        if let Ok(flame) = &self.flame {
            flame.use_sandbox(Sandbox::from_environment(&environment));
        }
        Startup { environment: Arc::new(environment), kept_agent: Mutex::default(), ..self }
    }

    /// The agent of the settings as they are now. It is built once and kept while the settings
    /// file is unchanged: building one reads the file, asks the keyring for every provider's key
    /// and makes the HTTP client, which a chat should not pay at every message.
    pub fn agent(&self) -> Result<Arc<Agent>, ApiError> {
        let stamp = settings_stamp(self.settings_path.as_deref());
        let mut kept = self.kept_agent.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((built_from, agent)) = kept.as_ref()
            && *built_from == stamp
        {
            return Ok(Arc::clone(agent));
        }
        let flame = self.flame()?;
        let agent = Arc::new(Agent::from_settings_file(
            Arc::clone(flame),
            self.settings_path(),
            Environment::clone(&self.environment),
            RetryPolicy::default(),
        )?);
        // The file may have been saved by another process since Flame was opened: the facade
        // follows the settings the agent now works with.
        flame.reconfigure(agent.settings().facade_config(self.settings_path.as_deref()));
        *kept = Some((stamp, Arc::clone(&agent)));
        Ok(agent)
    }

    /// Forgets the kept agent, so the next is built from the settings as saved now (a save
    /// within the file's clock tick would not change its stamp). The MCP servers it started stop
    /// when the last answer still using it ends.
    pub fn forget_agent(&self) {
        *self.kept_agent.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Stops the MCP servers the kept agent started, each given a moment to exit and then
    /// killed with everything it started: when the app exits.
    pub fn stop_mcp_servers(&self) {
        let kept = self.kept_agent.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((_, agent)) = kept {
            tauri::async_runtime::block_on(agent.stop_mcp_servers());
            agent.kill_mcp_servers();
        }
    }

    /// The MCP servers of the settings as saved now (read without the keys), so a question the
    /// agent waits on is told apart from another tool's call.
    pub fn mcp_server_settings(&self) -> Vec<flame_settings::McpServerSettings> {
        Settings::at_or_default(self.settings_path.as_deref()).mcp_servers
    }

    /// Where other agents keep their MCP servers: the home and configuration folders of the
    /// environment the app started with, and `workspace`.
    pub fn mcp_places(&self, workspace: Option<PathBuf>) -> flame_mcp_client::found::Places {
        let home = self.environment.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let config = self
            .environment
            .get("XDG_CONFIG_HOME")
            .filter(|c| !c.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        flame_mcp_client::found::Places { home, config, workspace }
    }

    /// Reads one variable of the environment keys and base URLs come from.
    pub fn env_reader(&self) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
        let environment = Arc::clone(&self.environment);
        move |name| environment.get(name)
    }

    /// The open Flame, or the startup error for a command to return.
    pub fn flame(&self) -> Result<&Arc<Flame>, ApiError> {
        self.flame.as_ref().map_err(Clone::clone)
    }

    /// Where the model settings are; `None` on a system without a configuration folder.
    pub fn settings_path(&self) -> Option<PathBuf> {
        self.settings_path.clone()
    }

    /// Flame's own folders, which paths from the window may not export into or import from and
    /// no workspace may lie in or hold: the data directory, the folder of the settings (where
    /// keys may be kept) and the window's own (`Flame::own_folders`).
    pub fn own_folders(&self) -> Vec<PathBuf> {
        match &self.flame {
            Ok(flame) => flame.own_folders(),
            Err(_) => self
                .settings_path
                .as_deref()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .into_iter()
                .collect(),
        }
    }

    /// Starts a new answer; it cancels any answer still running.
    pub fn begin_answer(&self) -> Answering<'_> {
        let id = self.answers.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        let mut answering = self.answering.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, previous)) = answering.replace((id, cancel.clone())) {
            previous.cancel();
        }
        Answering { startup: self, id, cancel }
    }

    /// Cancels the answer running now, if any; says whether there was one.
    pub fn cancel_answer(&self) -> bool {
        let running = self.answering.lock().unwrap_or_else(|p| p.into_inner()).take();
        running.map(|(_, token)| token.cancel()).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_kept_until_the_settings_file_changes_or_is_saved() {
        let tmp = tempfile::tempdir().unwrap();
        let settings = tmp.path().join("settings.json");
        std::fs::write(&settings, r#"{"default_model": "gpt-4o"}"#).unwrap();
        let home = tmp.path().join("home");
        let startup = Startup::with_settings(
            DataDir::resolve(Some(home.as_os_str()), None, None),
            Some(settings.clone()),
        );
        let first = startup.agent().unwrap();
        assert!(Arc::ptr_eq(&first, &startup.agent().unwrap()), "built once");
        assert_eq!(first.settings().default_model.as_deref(), Some("gpt-4o"));

        // Another process writes the settings: the next agent reads them, and the facade
        // prices with them.
        let flame = Arc::clone(startup.flame().unwrap());
        assert!(flame.prices().get("llama3.1:8b").is_none());
        std::fs::write(
            &settings,
            r#"{"default_model": "claude-sonnet-4-5", "prices": [{"model": "llama3.1:8b",
                "input": 1000000, "output": 0, "cache_read": 0, "cache_write": 0,
                "as_of": "2026-11"}]}"#,
        )
        .unwrap();
        let changed = startup.agent().unwrap();
        assert_eq!(changed.settings().default_model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(flame.prices().get("llama3.1:8b").map(|p| p.input), Some(1_000_000));

        // The window saved them: the agent is built again even within the file's clock tick.
        startup.forget_agent();
        assert!(!Arc::ptr_eq(&changed, &startup.agent().unwrap()));
    }
}
