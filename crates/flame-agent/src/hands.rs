//! The workspace tools as the agent offers and runs them: their specs for the model, and the
//! runner the facade's `Flame::run_workspace_call` runs commands through. The runner holds what
//! the facade does not know: the environment a command starts from, the handle Stop kills its
//! process group with, and the clock that times it. Where a command runs (in the sandbox or not)
//! is the facade's decision, passed in.

use std::io::Write;
use std::time::{Duration, Instant};

use flame_api::CommandRunner;
use flame_model::ToolSpec;
use flame_workspace::{
    CancelHandle, CommandOutcome, CommandRequest, Confinement, Environment, Workspace,
    WorkspaceError,
};

/// The workspace tools as offered to a model.
pub(crate) fn specs() -> Vec<ToolSpec> {
    flame_workspace::tool_specs()
        .into_iter()
        .map(|spec| ToolSpec {
            name: spec.name.to_owned(),
            description: spec.description.to_owned(),
            schema: spec.schema,
        })
        .collect()
}

/// Runs the agent's commands from its environment, stopped by its handle.
pub(crate) struct Hands {
    pub environment: Environment,
    pub stop: CancelHandle,
}

impl CommandRunner for Hands {
    fn run(
        &self,
        workspace: &Workspace,
        request: &CommandRequest,
        confinement: Confinement<'_>,
        log: &mut dyn Write,
    ) -> (Result<CommandOutcome, WorkspaceError>, Duration) {
        let started = Instant::now();
        let outcome =
            workspace.run_command(request, confinement, &self.environment, &self.stop, log);
        (outcome, started.elapsed())
    }
}
