//! `flame sessions`, `flame follow` and `flame unfollow`: other agents' sessions, listed and
//! followed through the facade (`flame_api`'s `follow.rs`).

use std::sync::mpsc;

use flame_api::{Agent, ApiError, Flame, FollowOutcome, SessionList};
use serde_json::json;

use crate::args::AgentArg;
use crate::{ACTOR, Output, render};

/// The agents `--agent` names, or every agent.
pub fn agents(args: &[AgentArg]) -> Vec<Agent> {
    if args.is_empty() { Agent::ALL.to_vec() } else { args.iter().map(|a| a.agent()).collect() }
}

pub fn sessions(flame: &Flame, agents: &[Agent], json: bool) -> Result<(), ApiError> {
    let list: SessionList = flame.sessions(&flame_api::agent_homes_from_env(), agents)?;
    Output { json }.print(&list, || render::sessions(&list))
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
    flame.run_follower(ACTOR, &homes, sender, &signals, &mut |outcome| {
        if outcome.stored() || outcome.problem.is_some() {
            // A closed output ends the command quietly, as for every other command.
            let _ = print_outcome(&out, outcome);
        }
    })
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
    out.print(outcome, || render::follow_outcome(outcome))
}
