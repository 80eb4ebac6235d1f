//! One model call through the gateway: read the request, place it in its session, check its
//! budgets, send it upstream (as it came, or as Flame's context), stream the reply back while
//! reading it, then read the reply into the thread and store the session and the call.
//!
//! The client's stream ends only once the call is stored: every byte of the reply reaches the
//! client as it arrives, and the connection's end tells the client (and a test) that the
//! session's tree holds the call.

use std::sync::Arc;

use bytes::Bytes;
use flame_api::{GatewayCall, Rewrite};
use flame_import::wire::WireFormat;
use flame_model::{FrameId, Usage};
use futures_util::StreamExt;
use http::{HeaderMap, Method};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use tokio::sync::mpsc;

use crate::errors::{ClientError, stream_error};
use crate::reply::{Reply, ReplyTap};
use crate::request::{Caller, Request};
use crate::sessions::Placed;
use crate::{Body, Mode, State, error_response, full};

/// How many chunks of a reply may wait for a slow client before the gateway stops reading the
/// upstream: the reply is passed on as it comes, never gathered.
const CHUNKS_IN_FLIGHT: usize = 64;

/// Runs `f` on the blocking pool: the facade is synchronous and writes SQLite.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

/// What a call sent, beside the placing.
#[derive(Debug, Clone)]
struct Sent {
    context: bool,
    model: Option<String>,
    client: Usage,
    rewrite: Option<Rewrite>,
}

/// Counts tokens: passed on as it came, and not recorded (it is not billed).
pub(crate) async fn count_tokens(
    state: &State,
    wire: WireFormat,
    method: Method,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> hyper::Response<Body> {
    match state.forwarder.send(wire, method, path_and_query, headers, body).await {
        Ok(response) => {
            let (status, head) = (response.status(), response.headers().clone());
            match response.bytes().await {
                Ok(bytes) => respond(status, &head, full(bytes)),
                Err(err) => error_response(
                    Some(wire),
                    &ClientError::upstream(format!("the upstream's answer broke off: {err}")),
                ),
            }
        }
        Err(message) => error_response(Some(wire), &ClientError::upstream(message)),
    }
}

fn respond(status: http::StatusCode, head: &HeaderMap, body: Body) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(body);
    *response.status_mut() = status;
    for (name, value) in head {
        if crate::forward::passed_on(name) {
            response.headers_mut().append(name.clone(), value.clone());
        }
    }
    response
}

pub(crate) async fn run(
    state: Arc<State>,
    wire: WireFormat,
    method: Method,
    path_and_query: String,
    headers: HeaderMap,
    body: Bytes,
) -> hyper::Response<Body> {
    let at = state.flame.now();
    let request = match Request::parse(wire, &body) {
        Ok(request) => request,
        Err(err) => {
            let error =
                ClientError::refused(format!("Flame's gateway could not read the request: {err}"));
            return error_response(Some(wire), &error);
        }
    };
    let caller = Caller::identify(&headers, &request);
    let placed = {
        let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.place(&request, &caller, at)
    };
    let placed = match placed {
        Ok(placed) => placed,
        Err(err) => {
            let error = ClientError::refused(format!(
                "Flame's gateway will not follow this conversation: {err}"
            ));
            return error_response(Some(wire), &error);
        }
    };
    open_session(&state, &placed).await;
    // The budgets are read beside the building of what is sent: neither waits for the other.
    let refusal = refusal(&state, &placed);
    if state.mode == Mode::Context {
        // The context names frames by their ids: every frame is stored before it is sent.
        store_new_frames(&state, &placed).await;
    }
    let (outgoing, context, rewrite) = match state.mode {
        Mode::Observe => (body.clone(), false, placed.growth.restarted.then_some(Rewrite::Client)),
        Mode::Context => {
            let root = state.flame.data_dir().path().display().to_string();
            let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
            match crate::context::request(&mut sessions, &placed, &request, at, &root) {
                Some(built) => (built.body, true, built.rewrite),
                None => (body.clone(), false, None),
            }
        }
    };
    let (model, streamed) = (request.model(), request.streamed());
    let client_cost = || {
        let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.client_cost(&placed, &request, at)
    };
    if let Some(refusal) = refusal.await.ok().flatten() {
        let sent = Sent { context, model, client: client_cost(), rewrite };
        drop(request);
        let status = http::StatusCode::BAD_REQUEST.as_u16();
        record(&state, &placed, &sent, status, Reply::default(), Some(refusal.clone())).await;
        return error_response(Some(wire), &ClientError::refused(refusal));
    }
    // The request goes upstream at once, and what the client's own request would have cost is
    // reckoned while it travels. A set of one task, so that the request is dropped with the call
    // (a client that hangs up) as it was before it had a task of its own.
    let mut sending = tokio::task::JoinSet::new();
    let forwarding = state.clone();
    sending.spawn(async move {
        forwarding.forwarder.send(wire, method, &path_and_query, &headers, outgoing).await
    });
    let sent = Sent { context, model, client: client_cost(), rewrite };
    drop(request);
    let sent_upstream = match sending.join_next().await {
        Some(Ok(sent)) => sent,
        _ => Err("Flame's gateway lost the request it was sending upstream".to_owned()),
    };
    let response = match sent_upstream {
        Ok(response) => response,
        Err(message) => {
            record(&state, &placed, &sent, 0, Reply::default(), None).await;
            return error_response(Some(wire), &ClientError::upstream(message));
        }
    };
    let status = response.status();
    let head = response.headers().clone();
    let (sender, receiver) = mpsc::channel::<Bytes>(CHUNKS_IN_FLIGHT);
    let event_stream = head
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut tap = ReplyTap::new(wire, streamed && event_stream);
    let relay_state = state.clone();
    tokio::spawn(async move {
        let mut chunks = response.bytes_stream();
        let mut ended = true;
        while let Some(chunk) = chunks.next().await {
            match chunk {
                Ok(chunk) => {
                    // The chunk goes to the client first; the tap reads it after.
                    if sender.send(chunk.clone()).await.is_err() {
                        // The client hung up: stop reading the upstream.
                        ended = false;
                        break;
                    }
                    tap.push(&chunk);
                }
                Err(err) => {
                    ended = false;
                    let why = format!("the upstream's reply broke off: {err}");
                    if streamed {
                        let _ = sender.send(stream_error(wire, &why)).await;
                    }
                    break;
                }
            }
        }
        let reply = tap.finish(ended);
        record(&relay_state, &placed, &sent, status.as_u16(), reply, None).await;
        drop(sender);
    });
    let body = StreamBody::new(futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (Ok(Frame::data(chunk)), receiver))
    }));
    respond(status, &head, BodyExt::boxed(body))
}

/// Stores the session's draft when it holds frames the store does not have yet, so that every
/// frame the call's context names has its id.
async fn store_new_frames(state: &Arc<State>, placed: &Placed) {
    let draft = &placed.draft.draft;
    let stored = {
        let sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let session = sessions.get(placed.session);
        let new = draft.frames.iter().any(|f| !session.frames.contains_key(&f.key));
        session.stored.clone().filter(|s| s.writes_tree && new)
    };
    if stored.is_none() || draft.messages.is_empty() {
        return;
    }
    let draft = draft.clone();
    let flame = state.flame.clone();
    let id = placed.id.clone();
    let keys: Vec<String> = draft.frames.iter().map(|f| f.key.clone()).collect();
    match blocking(move || flame.store_gateway_draft(&id, &draft)).await {
        Some(Ok(stored)) => {
            let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let session = sessions.get_mut(placed.session);
            session.frames.extend(keys.into_iter().zip(stored.frames));
            if let Some(known) = &mut session.stored {
                known.tree = Some(stored.tree);
            }
        }
        Some(Err(err)) => {
            tracing::warn!("the gateway could not store {}: {}", placed.id, err.message)
        }
        None => {}
    }
}

/// Makes sure the store knows the session (its row), once per session.
async fn open_session(state: &Arc<State>, placed: &Placed) {
    let known = {
        let sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.get(placed.session).stored.is_some()
    };
    if known {
        return;
    }
    let (flame, agent, id) = {
        let sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let session = sessions.get(placed.session);
        let key = session.id.split_once(':').map_or(session.id.as_str(), |(_, k)| k).to_owned();
        (state.flame.clone(), session.agent, key)
    };
    let opened = blocking(move || flame.open_gateway_session(agent, &id)).await;
    match opened {
        Some(Ok(stored)) => {
            let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
            sessions.get_mut(placed.session).stored = Some(stored);
        }
        Some(Err(err)) => tracing::warn!("the gateway could not record a session: {}", err.message),
        None => {}
    }
}

/// The frame whose budgets bound the call, as the store knows it.
fn budget_frame(state: &State, placed: &Placed) -> Option<FrameId> {
    let sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
    let stored = sessions.get(placed.session).stored.as_ref()?;
    if stored.writes_tree {
        placed.budget_frame.clone()
    } else {
        // Followed from its files: the follower's focus is where the work is.
        let tree = stored.tree.clone()?;
        drop(sessions);
        state.flame.gateway_followed_frame(&tree).ok()
    }
}

/// Why the call must not be sent, when a budget on its frame's path is spent: read on the
/// blocking pool, begun at once.
fn refusal(state: &Arc<State>, placed: &Placed) -> tokio::task::JoinHandle<Option<String>> {
    let frame = budget_frame(state, placed);
    let flame = state.flame.clone();
    tokio::task::spawn_blocking(move || match flame.gateway_refusal(&frame?) {
        Ok(refusal) => refusal,
        Err(err) => {
            tracing::warn!("the gateway could not check a budget: {}", err.message);
            None
        }
    })
}

/// Reads the reply into its thread and stores the session and the call.
async fn record(
    state: &Arc<State>,
    placed: &Placed,
    sent: &Sent,
    status: u16,
    reply: Reply,
    refused: Option<String>,
) {
    let at = state.flame.now();
    let ok = (200..300).contains(&status);
    let (draft, frame, stored) = {
        let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        if ok
            && reply.complete
            && let Some(usage) = reply.usage
        {
            let model = reply.model.as_deref().or(sent.model.as_deref());
            sessions.reply(placed, &reply.items, model, usage, at);
        }
        let (draft, frame) = sessions.draft(placed);
        (draft, frame, sessions.get(placed.session).stored.clone())
    };
    let draft_keys: Vec<String> = draft.draft.frames.iter().map(|f| f.key.clone()).collect();
    let billed = reply.usage.unwrap_or_default();
    // What was sent in observe mode is the client's request: the upstream's report is what the
    // client's own request cost.
    let client = match (sent.context, reply.usage) {
        (false, Some(usage)) => Usage { output_tokens: 0, ..usage },
        _ => sent.client,
    };
    let notice = crate::CallNotice {
        session: placed.id.clone(),
        wire: placed.wire,
        status,
        refused: refused.clone(),
        context: sent.context,
        billed,
        client,
    };
    if let Some(stored) = stored {
        let flame = state.flame.clone();
        let id = placed.id.clone();
        let model = reply.model.clone().or_else(|| sent.model.clone());
        let (wire, context, rewrite) = (placed.wire, sent.context, sent.rewrite);
        let stored_frames = blocking(move || {
            let (tree, frames) = if stored.writes_tree {
                if draft.draft.messages.is_empty() {
                    return Ok(None);
                }
                let stored = flame.store_gateway_draft(&id, &draft.draft)?;
                (stored.tree, Some(stored.frames))
            } else {
                match stored.tree.clone() {
                    Some(tree) => (tree, None),
                    None => return Ok(None),
                }
            };
            let in_draft =
                frames.as_ref().zip(frame).and_then(|(frames, f)| frames.get(f).cloned());
            let frame = match in_draft {
                Some(frame) => frame,
                None => flame.gateway_followed_frame(&tree)?,
            };
            flame.record_gateway_call(&GatewayCall {
                session: id,
                tree: tree.clone(),
                frame,
                at,
                wire: wire.as_str().to_owned(),
                context,
                model,
                status,
                refused,
                sent: billed,
                client,
                rewrite,
            })?;
            Ok::<_, flame_api::ApiError>(frames.map(|frames| (tree, frames)))
        })
        .await;
        match stored_frames {
            Some(Ok(Some((tree, frames)))) => {
                let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
                let session = sessions.get_mut(placed.session);
                for (draft_frame, id) in draft_keys.into_iter().zip(frames) {
                    session.frames.insert(draft_frame, id);
                }
                if let Some(stored) = &mut session.stored {
                    stored.tree = Some(tree);
                }
            }
            Some(Ok(None)) | None => {}
            Some(Err(err)) => {
                tracing::warn!(
                    "the gateway could not store a call of {}: {}",
                    placed.id,
                    err.message
                )
            }
        }
    }
    // Heard once the call is stored, so that what a front end reads then holds it.
    let _ = state.notices.send(notice);
}
