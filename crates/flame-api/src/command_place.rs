//! Where a workspace command runs, and whether it asks the person first: the sandbox's part of
//! the approval decision (`Flame::run_workspace_call` makes it, nowhere else).
//!
//! A command runs in the sandbox (`flame_workspace::Sandbox`: the workspace writable but its
//! `.git`, the rest read-only, Flame's own folders and the keyring hidden) unless it asks to leave
//! it (`run_command`'s `leave_sandbox`: the network, or all of it) or the sandbox cannot start on
//! this computer. Inside, it has the network only when the person allowed it for the tree
//! (`Flame::allow_network`, stored like the kinds allowed for a tree) or the command asked for it
//! and was let. Whether it asks first is the settings' [`RunApproval`]: `auto` never asks, `ask`
//! always does, and `auto_in_sandbox` asks only for a command that would run outside the sandbox
//! or reach a network the tree does not allow — which, where the sandbox cannot start, is every
//! command. A tree whose commands the person allowed ("allow all commands in this tree") asks for
//! none. The sandbox is the front end's, made from its environment (`Flame::use_sandbox`); whether
//! it starts is found out once, and the first command that runs without it because it cannot says
//! so once (`Flame::sandbox_notice_once`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use flame_model::{Actor, CommandPlace, LeaveSandbox, TreeId};
use flame_workspace::{Sandbox, SandboxRules, SandboxUnavailable};
use serde::{Deserialize, Serialize};

use crate::{ApiError, Flame};

/// Whether commands run at once or wait for the person, by where they would run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RunApproval {
    /// Every command runs at once: in the sandbox, or outside it when it asks to leave.
    Auto,
    /// Commands run at once in the sandbox; one that asks to leave it (or, where the sandbox
    /// cannot start, every one) waits for the person.
    AutoInSandbox,
    /// Every command waits for the person.
    Ask,
}

/// What a command's place and question are decided from: the sandbox (or why there is none) and
/// whether the tree allows the network.
#[derive(Debug, Clone)]
pub(crate) struct CommandFacts {
    pub sandbox: Result<Arc<Sandbox>, SandboxUnavailable>,
    pub network_allowed: bool,
}

impl CommandFacts {
    /// Where a command that asks to leave `leave` of the sandbox runs once it is let.
    pub fn place(&self, leave: Option<LeaveSandbox>) -> CommandPlace {
        match (&self.sandbox, leave) {
            (Err(_), _) | (Ok(_), Some(LeaveSandbox::All)) => CommandPlace::Outside,
            (Ok(_), Some(LeaveSandbox::Network)) => CommandPlace::Sandbox { network: true },
            (Ok(_), None) => CommandPlace::Sandbox { network: self.network_allowed },
        }
    }

    /// Whether such a command waits for the person under `run`, before what the person allowed
    /// for the tree.
    pub fn asks(&self, run: RunApproval, leave: Option<LeaveSandbox>) -> bool {
        match run {
            RunApproval::Auto => false,
            RunApproval::Ask => true,
            RunApproval::AutoInSandbox => match self.place(leave) {
                CommandPlace::Outside => true,
                CommandPlace::Sandbox { network } => network && !self.network_allowed,
            },
        }
    }

    /// Why there is no sandbox, if there is none.
    pub fn unavailable(&self) -> Option<&SandboxUnavailable> {
        self.sandbox.as_ref().err()
    }
}

/// The sandbox a front end gave, and whether its absence was said.
#[derive(Debug, Default)]
pub(crate) struct SandboxSlot {
    sandbox: Mutex<Option<Arc<Sandbox>>>,
    said: AtomicBool,
}

impl Flame {
    /// Runs the workspace commands in `sandbox` from now on: the front end's, made from the
    /// environment its commands start from (`Sandbox::from_environment`). Nothing starts until a
    /// command needs it. Without one, commands run as where the sandbox cannot start.
    pub fn use_sandbox(&self, sandbox: Sandbox) {
        *self.sandbox_slot.sandbox.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Arc::new(sandbox));
    }

    /// The sandbox commands run in, or why there is none here; the first call starts an empty
    /// one to find out (see `Sandbox::check`).
    pub fn sandbox(&self) -> Result<Arc<Sandbox>, SandboxUnavailable> {
        let sandbox = self.sandbox_slot.sandbox.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let sandbox = sandbox.ok_or_else(|| SandboxUnavailable {
            reason: "this Flame was opened without a sandbox for commands".to_owned(),
        })?;
        sandbox.check().map_err(Clone::clone)?;
        Ok(sandbox)
    }

    /// Whether the person allowed tree `tree`'s sandboxed commands the network.
    pub fn network_allowed(&self, tree: &TreeId) -> Result<bool, ApiError> {
        Ok(self.store().network_allowed(tree)?)
    }

    /// Lets tree `tree`'s sandboxed commands use the network from now on, until its workspace
    /// changes.
    pub fn allow_network(&self, actor: Actor, tree: &TreeId) -> Result<(), ApiError> {
        self.write(actor, |store, change, _| store.allow_network(change, tree))
    }

    /// What a command in `tree` is decided from.
    pub(crate) fn command_facts(&self, tree: &TreeId) -> Result<CommandFacts, ApiError> {
        Ok(CommandFacts { sandbox: self.sandbox(), network_allowed: self.network_allowed(tree)? })
    }

    /// The rules of a sandboxed command here: Flame's own folders hidden, the network or not.
    pub(crate) fn sandbox_rules(&self, network: bool) -> SandboxRules {
        let hidden: Vec<PathBuf> = self.own_folders();
        SandboxRules { hidden, network }
    }

    /// The notice that commands run without the sandbox because it cannot start: once per
    /// Flame, with what that means under `run`.
    pub(crate) fn sandbox_notice_once(
        &self,
        unavailable: &SandboxUnavailable,
        run: RunApproval,
    ) -> Option<String> {
        if self.sandbox_slot.said.swap(true, Ordering::SeqCst) {
            return None;
        }
        let then = match run {
            RunApproval::Auto => "commands run with your full rights",
            RunApproval::AutoInSandbox | RunApproval::Ask => {
                "every command asks before it runs with your full rights"
            }
        };
        Some(format!("Commands cannot run in a sandbox here ({unavailable}), so {then}."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(sandbox: bool, network_allowed: bool) -> CommandFacts {
        let environment = flame_workspace::Environment::from_variables([]);
        CommandFacts {
            sandbox: if sandbox {
                Ok(Arc::new(Sandbox::from_environment(&environment)))
            } else {
                Err(SandboxUnavailable { reason: "no bwrap".into() })
            },
            network_allowed,
        }
    }

    #[test]
    fn a_command_runs_in_the_sandbox_unless_it_asks_to_leave_or_there_is_none() {
        use CommandPlace::{Outside, Sandbox as In};
        use LeaveSandbox::{All, Network};
        let cases = [
            // (sandbox, network allowed, leave) → place
            ((true, false, None), In { network: false }),
            ((true, true, None), In { network: true }),
            ((true, false, Some(Network)), In { network: true }),
            ((true, true, Some(All)), Outside),
            ((false, true, None), Outside),
            ((false, false, Some(Network)), Outside),
        ];
        for ((sandbox, network, leave), place) in cases {
            assert_eq!(
                facts(sandbox, network).place(leave),
                place,
                "{sandbox} {network} {leave:?}"
            );
        }
    }

    #[test]
    fn auto_in_the_sandbox_asks_only_to_leave_it_and_everything_where_there_is_none() {
        use LeaveSandbox::{All, Network};
        use RunApproval::{Ask, Auto, AutoInSandbox};
        let cases = [
            // (level, sandbox, network allowed, leave) → asks
            ((AutoInSandbox, true, false, None), false),
            ((AutoInSandbox, true, false, Some(Network)), true),
            ((AutoInSandbox, true, true, Some(Network)), false),
            ((AutoInSandbox, true, true, Some(All)), true),
            ((AutoInSandbox, false, false, None), true),
            ((Auto, true, false, Some(All)), false),
            ((Auto, false, false, None), false),
            ((Ask, true, true, None), true),
        ];
        for ((run, sandbox, network, leave), asks) in cases {
            let decided = facts(sandbox, network).asks(run, leave);
            assert_eq!(decided, asks, "{run:?} {sandbox} {network} {leave:?}");
        }
    }
}
