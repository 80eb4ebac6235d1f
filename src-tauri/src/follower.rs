//! Follows other agents' sessions while the window is open: `Flame::run_follower` on a thread
//! of its own, which waits on file-system notifications and reads a followed session when its
//! files change. After each read it tells the window (`FollowRead`), and when the read stored
//! something, at once rather than at the next poll (`TreeChanged`), so a line the agent writes
//! reaches the flame graph and the chat without waiting.

use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

use flame_api::{AgentHomes, FollowerNews, WatchSignal};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event;

use crate::{Startup, TreeChanged};

/// A followed session was read: the Sessions view reads the list again.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct FollowRead {
    /// The session (`<agent>:<id>`).
    pub id: String,
    /// Whether the read stored anything.
    pub stored: bool,
    /// What it could not do.
    pub problem: Option<String>,
    /// A spent budget of the followed tree, which only warns (Flame does not drive the agent).
    pub budget_notice: Option<String>,
}

/// The running follower, for commands to tell it the followed sessions changed.
#[derive(Debug)]
pub struct Follower {
    pub homes: AgentHomes,
    sender: Mutex<Option<Sender<WatchSignal>>>,
}

impl Follower {
    /// Has the follower read the followed sessions from the store again.
    pub fn refresh(&self) {
        if let Some(sender) = self.sender.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            // A follower that ended has nothing to refresh.
            let _ = sender.send(WatchSignal::Refresh);
        }
    }
}

/// Starts the follower's thread (when Flame opened) and returns its handle.
pub fn spawn<R: Runtime>(app: AppHandle<R>, homes: AgentHomes) -> Follower {
    let (sender, signals) = channel();
    let follower = Follower { homes: homes.clone(), sender: Mutex::new(Some(sender.clone())) };
    let Ok(flame) = app.state::<Startup>().inner().flame().map(std::sync::Arc::clone) else {
        return follower;
    };
    crate::in_background("flame-follower", move || {
        let mut on_news = |news: FollowerNews<'_>| {
            // The Sessions view lists the agents followed whole; an agent's folder awaited
            // needs no word of its own there.
            let FollowerNews::Read(outcome) = news else { return };
            if outcome.stored() {
                match flame.latest_seq() {
                    Ok(seq) => {
                        if let Err(err) = (TreeChanged { seq }).emit(&app) {
                            tracing::warn!("could not tell the window about a change: {err}");
                        }
                    }
                    Err(err) => tracing::warn!("could not read the newest event: {}", err.message),
                }
            }
            let read = FollowRead {
                id: outcome.id.clone(),
                stored: outcome.stored(),
                problem: outcome.problem.clone(),
                budget_notice: outcome.budget_notice.clone(),
            };
            if let Err(err) = read.emit(&app) {
                tracing::debug!("could not tell the window about a read: {err}");
            }
        };
        if let Err(err) =
            flame.run_follower(flame_model::Actor::Person, &homes, sender, &signals, &mut on_news)
        {
            tracing::error!("following other agents' sessions stopped: {}", err.message);
        }
    });
    follower
}
