//! What a lead session is given at its start and never changes: the home it works in, its
//! team, its working directory, and the executor its teammates run on (with its kind). A part
//! of the controller with read-only access, so no file can change them under the others.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::backend::executor::TeammateExecutor;
use crate::protocol::BackendKind;
use crate::store::Home;

/// The session's givens.
pub(crate) struct Givens {
    home: Home,
    team: String,
    cwd: PathBuf,
    /// Where teammates run: the one executor of the session.
    executor: Arc<dyn TeammateExecutor>,
    /// Its kind (what `backendType` new teammates get).
    kind: BackendKind,
}

impl Givens {
    pub(crate) fn new(
        home: Home,
        team: String,
        cwd: PathBuf,
        executor: Arc<dyn TeammateExecutor>,
    ) -> Self {
        let kind = executor.kind();
        Self {
            home,
            team,
            cwd,
            executor,
            kind,
        }
    }

    /// The home the team lives in.
    pub(crate) fn home(&self) -> &Home {
        &self.home
    }

    /// The team's name.
    pub(crate) fn team(&self) -> &str {
        &self.team
    }

    /// The lead's working directory.
    pub(crate) fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Where teammates run.
    pub(crate) fn executor(&self) -> &Arc<dyn TeammateExecutor> {
        &self.executor
    }

    /// The executor's kind.
    pub(crate) fn kind(&self) -> BackendKind {
        self.kind
    }
}
