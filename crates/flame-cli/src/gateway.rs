//! `flame gateway`: the gateway (`flame-gateway`) on 127.0.0.1 over this data directory, until
//! stopped, printing the lines that point each agent at it and then a line per call.

use std::sync::Arc;

use flame_api::{ApiError, ErrorCode, Flame};
use flame_gateway::{CallNotice, Gateway, GatewayConfig, Mode, Upstreams, client_settings};
use flame_model::cost::group_thousands;
use flame_settings::{GatewayMode, Settings};
use serde_json::json;

use crate::Output;
use crate::args::GatewayModeArg;

pub fn run(
    flame: &Arc<Flame>,
    port: Option<u16>,
    mode: Option<GatewayModeArg>,
    overrides: &[String],
    json: bool,
) -> Result<(), ApiError> {
    let settings = Settings::without_keys(Settings::default_path().as_deref())?;
    let mode = match mode {
        Some(GatewayModeArg::Observe) => Mode::Observe,
        Some(GatewayModeArg::Context) => Mode::Context,
        None => match settings.gateway.mode {
            GatewayMode::Observe => Mode::Observe,
            GatewayMode::Context => Mode::Context,
        },
    };
    let port = port.unwrap_or(settings.gateway.port);
    let (anthropic, openai) = settings.gateway_upstreams();
    let mut upstreams = Upstreams { anthropic, openai };
    for given in overrides {
        let invalid =
            |why: &str| ApiError::new(ErrorCode::Invalid, format!("--upstream {given}: {why}"));
        let (provider, url) =
            given.split_once('=').ok_or_else(|| invalid("write it PROVIDER=URL"))?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(invalid("the URL must start with http:// or https://"));
        }
        let url = url.trim_end_matches('/').to_owned();
        match provider {
            "anthropic" => upstreams.anthropic = url,
            "openai" => upstreams.openai = url,
            _ => return Err(invalid("the provider is anthropic or openai")),
        }
    }
    for url in [&upstreams.anthropic, &upstreams.openai] {
        let own = [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")];
        if port != 0 && own.iter().any(|o| url == o || url.starts_with(&format!("{o}/"))) {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!(
                    "the upstream {url} is the gateway itself; set the provider's base URL in Flame's settings or --upstream"
                ),
            ));
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ApiError::internal("start the gateway's runtime", e))?;
    let out = Output { json };
    runtime.block_on(async {
        let config = GatewayConfig { port, mode, upstreams: upstreams.clone() };
        let gateway = Gateway::bind(config, flame.clone())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Invalid, e.to_string()))?;
        let address = gateway.address();
        let lines = client_settings(address);
        out.print(
            &json!({"listening": address.to_string(), "mode": mode.as_str(),
                    "upstreams": {"anthropic": upstreams.anthropic, "openai": upstreams.openai},
                    "clients": lines}),
            || {
                let mut text = format!(
                    "Flame's gateway listens on http://{address} ({} mode), forwarding to {} and {}.\nPoint an agent at it:",
                    mode.as_str(),
                    upstreams.anthropic,
                    upstreams.openai
                );
                for line in &lines {
                    text.push_str(&format!("\n  {}: {}", line.agent, line.line));
                }
                text
            },
        )?;
        let mut notices = gateway.notices();
        let serving = tokio::spawn(gateway.serve(async {
            let _ = tokio::signal::ctrl_c().await;
        }));
        loop {
            tokio::select! {
                notice = notices.recv() => match notice {
                    Ok(notice) => { let _ = out.print(&notice_json(&notice), || notice_line(&notice)); }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
                () = async { let _ = tokio::signal::ctrl_c().await; } => break,
            }
        }
        serving.abort();
        Ok(())
    })
}

fn notice_json(notice: &CallNotice) -> serde_json::Value {
    json!({
        "session": notice.session,
        "wire": notice.wire.as_str(),
        "status": notice.status,
        "refused": notice.refused,
        "context": notice.context,
        "billed": notice.billed,
        "client": notice.client,
    })
}

/// One call in a line: the session, what happened, and the input it billed.
fn notice_line(notice: &CallNotice) -> String {
    if let Some(why) = &notice.refused {
        return format!("{}  refused: {why}", notice.session);
    }
    let billed = &notice.billed;
    let mut line = format!(
        "{}  {}  input {} (cache read {}, written {}), output {}",
        notice.session,
        notice.status,
        group_thousands(billed.prompt_tokens()),
        group_thousands(billed.cache_read_tokens),
        group_thousands(billed.cache_write_tokens + billed.cache_write_long_tokens),
        group_thousands(billed.output_tokens),
    );
    if notice.context {
        line.push_str(&format!(
            "; the client's own request: input {}",
            group_thousands(notice.client.prompt_tokens())
        ));
    }
    line
}
