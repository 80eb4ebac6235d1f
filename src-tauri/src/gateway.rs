//! The gateway (`flame-gateway`) while the window is open, on Tauri's async runtime.
//!
//! It starts with the window when the settings say `gateway.on`, on their port and mode,
//! forwarding to the settings' upstreams (`Settings::gateway_upstreams`), and starts again to
//! match whenever the settings are saved with another port, mode or upstream (`set_gateway`,
//! `save_settings`); it stops when they say off and when the app exits. A gateway that cannot
//! listen (the port is taken) is no failure of the window: the status says why in the gateway's
//! own words (`GatewayError::Listen`), and the next save or start tries again. Each call the
//! gateway ends is told to the window ([`GatewayCalled`]), so the Sessions view reads its list
//! again.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use flame_api::{ApiError, Flame};
use flame_gateway::{
    ClientSetting, Gateway, GatewayConfig, Mode, Upstreams, client_settings, upstream_to_itself,
};
use flame_settings::{GatewayMode, GatewaySettings, Settings};
use serde::{Deserialize, Serialize};
use tauri::async_runtime::JoinHandle;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Mutex, oneshot};

/// What the window shows of the gateway.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct GatewayStatus {
    /// What the settings say: whether it runs, on which port, in which mode.
    pub settings: GatewaySettings,
    /// Where it listens (`127.0.0.1:8788`); `None` while it does not.
    pub listening: Option<String>,
    /// Where it forwards Anthropic's Messages API.
    pub anthropic_upstream: String,
    /// Where it forwards OpenAI's APIs.
    pub openai_upstream: String,
    /// The line to paste for each agent, while it listens.
    pub clients: Vec<ClientSetting>,
    /// Why it does not listen though the settings say it should.
    pub problem: Option<String>,
}

/// The gateway ended a call (answered, refused or failed): the Sessions view reads its list of
/// the gateway's sessions again.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct GatewayCalled {
    /// The session (`<agent>:<id>`).
    pub session: String,
    /// The status the client received; 0 when the upstream could not be reached.
    pub status: u16,
    /// Why the gateway refused the call, when it did.
    pub refused: Option<String>,
}

/// Tells the window of a call, once the window can be told (`GatewayRunner::start`).
type Announce = Arc<OnceLock<Box<dyn Fn(GatewayCalled) + Send + Sync>>>;

/// The window's gateway: what was last applied and the gateway serving now, if any.
#[derive(Default)]
pub struct GatewayRunner {
    state: Arc<Mutex<Applied>>,
    announce: Announce,
}

impl std::fmt::Debug for GatewayRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayRunner").finish_non_exhaustive()
    }
}

/// The settings last applied and what came of them.
#[derive(Debug, Default)]
struct Applied {
    settings: GatewaySettings,
    config: Option<GatewayConfig>,
    serving: Option<Serving>,
    problem: Option<String>,
}

/// A gateway serving: dropping it (or [`Serving::stop`]) stops it.
#[derive(Debug)]
struct Serving {
    address: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Serving {
    /// Stops taking connections and waits until the port is free again.
    async fn stop(self) {
        let _ = self.stop.send(());
        if let Err(err) = self.task.await {
            tracing::warn!("the gateway's task ended badly: {err}");
        }
    }
}

/// What the gateway is configured with for `settings`.
fn config_of(settings: &Settings) -> GatewayConfig {
    let (anthropic, openai) = settings.gateway_upstreams();
    GatewayConfig {
        port: settings.gateway.port,
        mode: match settings.gateway.mode {
            GatewayMode::Observe => Mode::Observe,
            GatewayMode::Context => Mode::Context,
        },
        upstreams: Upstreams { anthropic, openai },
    }
}

impl GatewayRunner {
    /// Tells the window of each call with `announce` from now on, and applies the settings the
    /// window opens with on the async runtime (a status asked for meanwhile waits for them).
    /// `settings` is the file's reading, or why it could not be read.
    pub fn start(
        &self,
        announce: impl Fn(GatewayCalled) + Send + Sync + 'static,
        flame: Result<Arc<Flame>, ApiError>,
        settings: Result<Settings, ApiError>,
    ) {
        let _ = self.announce.set(Box::new(announce));
        // Taken here, before the window can ask, so that the first status is the applied one.
        let Ok(mut applied) = Arc::clone(&self.state).try_lock_owned() else { return };
        let announce = Arc::clone(&self.announce);
        tauri::async_runtime::spawn(async move {
            match settings {
                Ok(settings) => {
                    apply(&mut applied, announce, flame, &settings).await;
                }
                Err(err) => {
                    applied.problem =
                        Some(format!("the settings could not be read: {}", err.message));
                }
            }
        });
    }

    /// Starts, restarts or stops the gateway to match `settings`; a gateway already serving as
    /// they say goes on undisturbed.
    pub async fn apply(
        &self,
        flame: Result<Arc<Flame>, ApiError>,
        settings: &Settings,
    ) -> GatewayStatus {
        let mut applied = Arc::clone(&self.state).lock_owned().await;
        apply(&mut applied, Arc::clone(&self.announce), flame, settings).await;
        status(&applied)
    }

    /// The gateway as it is now.
    pub async fn status(&self) -> GatewayStatus {
        status(&*self.state.lock().await)
    }

    /// Stops the gateway, if it serves, as the app exits.
    pub async fn stop(&self) {
        let serving = self.state.lock().await.serving.take();
        if let Some(serving) = serving {
            serving.stop().await;
        }
    }
}

async fn apply(
    applied: &mut Applied,
    announce: Announce,
    flame: Result<Arc<Flame>, ApiError>,
    settings: &Settings,
) {
    let config = config_of(settings);
    let on = settings.gateway.on;
    let unchanged =
        applied.settings == settings.gateway && applied.config.as_ref() == Some(&config);
    if unchanged && (applied.serving.is_some() || !on) {
        return;
    }
    if let Some(serving) = applied.serving.take() {
        serving.stop().await;
    }
    applied.settings = settings.gateway.clone();
    applied.config = Some(config.clone());
    applied.problem = None;
    if !on {
        return;
    }
    let started = match flame {
        Ok(flame) => serve(config, flame, announce).await,
        Err(err) => Err(err.message),
    };
    match started {
        Ok(serving) => {
            tracing::info!(address = %serving.address, "the gateway listens");
            applied.serving = Some(serving);
        }
        Err(problem) => {
            tracing::warn!("the gateway does not run: {problem}");
            applied.problem = Some(problem);
        }
    }
}

/// Binds the gateway and serves it on the async runtime, telling the window of each call.
async fn serve(
    config: GatewayConfig,
    flame: Arc<Flame>,
    announce: Announce,
) -> Result<Serving, String> {
    let upstreams = config.upstreams.clone();
    let gateway = Gateway::bind(config, flame).await.map_err(|err| err.to_string())?;
    let address = gateway.address();
    if let Some(url) = upstream_to_itself(&upstreams, address.port()) {
        return Err(format!(
            "the upstream {url} is the gateway itself: set the provider's own base URL in Settings"
        ));
    }
    let mut notices = gateway.notices();
    // The notices end when the gateway and its last connection have.
    tauri::async_runtime::spawn(async move {
        loop {
            match notices.recv().await {
                Ok(notice) => {
                    if let Some(announce) = announce.get() {
                        announce(GatewayCalled {
                            session: notice.session,
                            status: notice.status,
                            refused: notice.refused,
                        });
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tauri::async_runtime::spawn(async move {
        // A dropped sender stops the gateway as a sent stop does.
        let shutdown = async {
            let _ = stopped.await;
        };
        if let Err(err) = gateway.serve(shutdown).await {
            tracing::error!("the gateway stopped: {err}");
        }
    });
    Ok(Serving { address, stop, task })
}

fn status(applied: &Applied) -> GatewayStatus {
    let upstreams = applied.config.as_ref().map(|c| c.upstreams.clone()).unwrap_or_default();
    let address = applied.serving.as_ref().map(|s| s.address);
    GatewayStatus {
        settings: applied.settings.clone(),
        listening: address.map(|a| a.to_string()),
        anthropic_upstream: upstreams.anthropic,
        openai_upstream: upstreams.openai,
        clients: address.map(client_settings).unwrap_or_default(),
        problem: applied.problem.clone(),
    }
}
