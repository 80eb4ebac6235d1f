//! `flame sessions`, `flame follow` and `flame unfollow`: other agents' sessions, listed and
//! followed through the facade (`flame_api`'s `follow.rs`).

use std::sync::mpsc;

use flame_api::{AbsentFolder, Agent, ApiError, Flame, FollowOutcome, FollowerNews, SessionList};
use serde_json::json;

use crate::args::AgentArg;
use std::fmt::Write as _;

use crate::{ACTOR, Output};

/// The agents `--agent` names, or every agent.
pub fn agents(args: &[AgentArg]) -> Vec<Agent> {
    if args.is_empty() { Agent::ALL.to_vec() } else { args.iter().map(|a| a.agent()).collect() }
}

pub fn sessions(flame: &Flame, agents: &[Agent], json: bool) -> Result<(), ApiError> {
    let list: SessionList = flame.sessions(&flame_api::agent_homes_from_env(), agents)?;
    Output { json }.print(&list, || render_sessions(&list))
}

pub fn follow(
    flame: &Flame,
    specs: &[String],
    agents: &[Agent],
    agents_named: bool,
    once: bool,
    json: bool,
) -> Result<(), ApiError> {
    let homes = flame_api::agent_homes_from_env();
    let out = Output { json };
    for spec in specs {
        print_outcome(&out, &flame.follow_named(ACTOR, &homes, agents, spec)?)?;
    }
    if specs.is_empty() && agents_named {
        for agent in agents {
            flame.follow_agent(*agent, true)?;
            out.print(&json!({ "following_new_sessions_of": agent }), || {
                format!("following every new {} session", agent.label())
            })?;
        }
    }
    if once {
        if specs.is_empty() {
            for session in flame.followed_sessions()? {
                print_outcome(&out, &flame.sync_followed(ACTOR, &session.id)?)?;
            }
        }
        return Ok(());
    }
    let (sender, signals) = mpsc::channel();
    // What was said last of the agents' folders that do not exist yet, so it is said once.
    let mut awaited: Vec<AbsentFolder> = Vec::new();
    flame.run_follower(ACTOR, &homes, sender, &signals, &mut |news| match news {
        FollowerNews::Read(outcome) => {
            if outcome.stored() || outcome.problem.is_some() {
                // A closed output ends the command quietly, as for every other command.
                let _ = print_outcome(&out, outcome);
            }
        }
        FollowerNews::Waiting { absent } => {
            for folder in absent.iter().filter(|a| !awaited.contains(a)) {
                let _ =
                    out.print(&json!({ "waiting_for_folder": folder }), || render_absent(folder));
            }
            awaited = absent.to_vec();
        }
    })
}

/// An agent's folder that does not exist yet, and where Flame watches for it.
fn render_absent(folder: &AbsentFolder) -> String {
    let watched = folder.watched.as_ref().map_or_else(
        || "no folder above it exists to watch".to_owned(),
        |w| format!("watching {} for it", w.display()),
    );
    format!(
        "{}'s folder {} does not exist yet ({watched}); its sessions are followed once it does",
        folder.agent.label(),
        folder.folder.display()
    )
}

pub fn unfollow(
    flame: &Flame,
    specs: &[String],
    agents: &[Agent],
    agents_named: bool,
    json: bool,
) -> Result<(), ApiError> {
    let out = Output { json };
    let followed = flame.followed_sessions()?;
    for spec in specs {
        let id = followed
            .iter()
            .find(|s| s.id == *spec || s.session == *spec || s.source == *spec)
            .map(|s| s.id.clone())
            .ok_or_else(|| {
                ApiError::new(
                    flame_api::ErrorCode::NotFound,
                    format!("Flame does not follow {spec}: flame sessions marks the followed ones with *"),
                )
            })?;
        flame.unfollow(&id)?;
        out.print(&json!({ "unfollowed": id }), || {
            format!("no longer following {id}; its tree is kept")
        })?;
    }
    if specs.is_empty() && agents_named {
        for agent in agents {
            flame.follow_agent(*agent, false)?;
            out.print(&json!({ "not_following_new_sessions_of": agent }), || {
                format!("no longer following new {} sessions", agent.label())
            })?;
        }
    }
    Ok(())
}

fn print_outcome(out: &Output, outcome: &FollowOutcome) -> Result<(), ApiError> {
    out.print(outcome, || render_outcome(outcome))
}

/// `flame sessions`: one line a session — `*` when followed, agent, last activity, size,
/// recorded cost, what Flame's context would have cost, its id — and under it the project
/// folder and first request, and a followed session's last problem.
fn render_sessions(list: &SessionList) -> String {
    let mut out = String::new();
    if list.sessions.is_empty() {
        out.push_str("no sessions found of Claude Code, Codex or OpenCode\n");
    }
    for s in &list.sessions {
        let when = s.last_activity.map_or_else(
            || "-".to_owned(),
            |at| flame_api::frame_log::format_time(at).chars().take(16).collect(),
        );
        let cost = s.recorded_cost.as_ref().map_or_else(|| "not read".to_owned(), |c| c.describe());
        let flame = match &s.flame_cost {
            flame_api::FlameContextCost::Priced { session, .. } => session.describe(),
            flame_api::FlameContextCost::NotAvailable { .. } => "n/a".to_owned(),
        };
        let _ = writeln!(
            out,
            "{} {:<11} {when:<16} {:>9}  recorded {cost}  with Flame {flame}  {}",
            if s.followed { "*" } else { " " },
            s.agent.as_str(),
            format!("{} KB", s.size.div_ceil(1024)),
            s.id
        );
        let request: String = s
            .first_request
            .as_deref()
            .unwrap_or("(no request yet)")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let request: String = if request.chars().count() > 80 {
            format!("{}…", request.chars().take(79).collect::<String>())
        } else {
            request
        };
        let _ = writeln!(out, "    {}  {request}", s.project.as_deref().unwrap_or("-"));
        if let Some(problem) = &s.problem {
            let _ = writeln!(out, "    problem: {problem}");
        }
    }
    if !list.gateway.is_empty() {
        out.push_str(
            "through the gateway (billed beside what the agent's own requests would have cost):\n",
        );
    }
    for g in &list.gateway {
        let Some(savings) = &g.savings else { continue };
        let mut rewrites: Vec<String> =
            savings.rewrites.iter().map(|(why, n)| format!("{why} {n}")).collect();
        if rewrites.is_empty() {
            rewrites.push("none".to_owned());
        }
        let _ = writeln!(
            out,
            "  {}  {} calls ({} in context mode, {} refused)  billed {}  the agent's own {}  cache written again: {}",
            g.id,
            savings.calls,
            savings.context_calls,
            savings.refused,
            savings.billed.describe(),
            savings.client.describe(),
            rewrites.join(", ")
        );
        let _ = writeln!(out, "    {}", g.title.as_deref().unwrap_or("(no request yet)"));
    }
    for agent in &list.followed_agents {
        let _ = writeln!(out, "following every new {} session", agent.label());
    }
    for problem in &list.problems {
        let _ = writeln!(out, "could not read: {problem}");
    }
    if list.unlisted > 0 {
        let _ = writeln!(out, "and {} older sessions not listed", list.unlisted);
    }
    out.trim_end().to_owned()
}

/// What one read of a followed session did.
fn render_outcome(o: &FollowOutcome) -> String {
    let mut line = o.id.clone();
    if let Some(tree) = &o.tree {
        let _ = write!(line, " (tree {tree})");
    }
    if let Some(why) = &o.restarted {
        let _ = write!(line, ": read again from the start ({why})");
    }
    match &o.problem {
        Some(problem) => {
            let _ = write!(line, ": {problem}");
        }
        None if o.stored() => {
            let _ = write!(
                line,
                ": {} frames and {} messages added, {} frames changed",
                o.frames, o.messages, o.changed
            );
        }
        None if o.tree.is_none() => line.push_str(": no message yet"),
        None => line.push_str(": nothing new"),
    }
    if let Some(notice) = &o.budget_notice {
        let _ = write!(line, "\n  warning: {notice}");
    }
    line
}
