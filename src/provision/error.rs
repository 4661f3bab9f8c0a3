//! [`ProvisionError`]: why provisioning (create, enter, folder boxes) stopped.
//!
//! Each variant carries the path, ref or name its message needs; the CLI maps the
//! variants to exit codes (`cli/error.rs`). Wraps the stages' own errors with `#[from]`.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::git::repo::RepoError;
use crate::names::NameError;
use crate::state::record::RecordError;
use crate::state::LockError;

use super::{clone, fetch, guard};

/// Why provisioning stopped. Each variant carries what the message needs; the CLI
/// maps them to exit codes.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error(transparent)]
    Name(#[from] NameError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error("{what} is not available yet in this version of treebox")]
    Unsupported { what: String },
    #[error("`{name}` is not an environment variable name (letters, digits and '_', not starting with a digit)")]
    TokenName { name: String },
    #[error("--allow-forge opens the firewall to the forge, and this box has no firewall")]
    ForgeNeedsFirewall,
    #[error("origin ({url}) names no forge host to allow")]
    NoForge { url: String },
    #[error(transparent)]
    Resolve(#[from] crate::boxes::ResolveError),
    #[error("{message}")]
    MalformedRecord { message: String },
    #[error("{} is not a treebox box (it has no record)", .path.display())]
    NoRecord { leaf: String, path: PathBuf },
    #[error("the directory of box `{leaf}` is gone ({})", .path.display())]
    BoxMissing { leaf: String, path: PathBuf },
    /// A box's git files hold a FIFO, a device, a link or junk. `own`: the box's own
    /// git data (a clone's `.git`, a sandboxed worktree's bare clone), else its
    /// registration in the user's repository.
    #[error("{} holds a FIFO, a device, a link, junk or a file past its size cap where git keeps a file: git would hang on it, misread it or spend minutes and gigabytes reading it", .admin.display())]
    BlockingRegistration {
        leaf: String,
        admin: PathBuf,
        own: bool,
    },
    #[error("box `{leaf}` has lost its `.git` ({}): git there would find the repository around it", .path.display())]
    CheckoutBroken {
        leaf: String,
        path: PathBuf,
        repo: PathBuf,
        clone: bool,
    },
    #[error("box `{leaf}` runs on {recorded}, not {requested}")]
    IsolationMismatch {
        leaf: String,
        recorded: String,
        requested: String,
        /// `--isolation` named the other runner (else the config or `auto` chose it).
        flagged: bool,
    },
    #[error("box `{leaf}` was built in {built} git mode, not {requested}")]
    ModeMismatch {
        leaf: String,
        built: String,
        requested: String,
    },
    #[error("{}", if *.empty {
        format!("the repository has no commits yet: there is no base branch `{base}` to start from")
    } else {
        format!("base branch `{base}` not found (neither origin/{base} nor a local {base})")
    })]
    BaseNotFound {
        base: String,
        empty: bool,
        /// The branch checked out in the main checkout, when it is another one: the
        /// base the hint suggests.
        checked_out: Option<String>,
    },
    /// The base's tree has the boxes' directory at its top (SPEC §8.11): a box cut
    /// from it would carry files into the boxes' directory of every checkout.
    #[error("the base `{base}` tracks `{entry}/`, the boxes' own directory: a box cut from it would spread those files among the boxes")]
    BaseTracksBoxes { base: String, entry: String },
    #[error("branch `{branch}` not found (neither a local branch nor origin/{branch})")]
    BranchNotFound { branch: String },
    #[error("branch `{branch}` already exists")]
    BranchExists { branch: String },
    #[error("branch `{branch}` is already checked out in another worktree")]
    BranchCheckedOut { branch: String },
    #[error("box `{leaf}` already exists at {}", .path.display())]
    BoxExists { leaf: String, path: PathBuf },
    #[error("{} exists but is not a treebox box", .path.display())]
    PathTaken { leaf: String, path: PathBuf },
    #[error("box `{other}` exists, and `{leaf}` differs from it only by case")]
    CaseConflict { leaf: String, other: String },
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
    #[error("git worktree add failed")]
    Checkout(#[source] crate::cmd::CmdError),
    #[error("no space left on the disk holding {}", .path.display())]
    DiskFull { path: PathBuf },
    #[error(transparent)]
    Guard(#[from] guard::GuardInstallError),
    #[error(transparent)]
    Clone(#[from] clone::CloneError),
    #[error(transparent)]
    Container(#[from] crate::runner::oci::ContainerError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Ports(#[from] crate::ports::PortsError),
    #[error(transparent)]
    State(#[from] crate::state::layout::NoStateDir),
    #[error("{what} {}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `create NAME` when NAME is a branch only origin has: a new local NAME would
    /// shadow it (the way to take it is `--checkout NAME`).
    #[error("branch `{branch}` already exists on origin (origin/{branch})")]
    BranchOnOrigin { branch: String },
    /// No base was named and the default one is missing. `origin_head`: the default came
    /// from `origin/HEAD` (which names a branch that is gone), else it is `main`.
    #[error("{}", if *.origin_head {
        format!("origin's default branch `{base}` (as origin/HEAD names it) not found: neither origin/{base} nor a local {base}")
    } else {
        format!("no base branch: origin/HEAD is not set, and there is neither origin/{base} nor a local {base}")
    })]
    DefaultBaseNotFound {
        base: String,
        origin_head: bool,
        /// As in [`ProvisionError::BaseNotFound`].
        checked_out: Option<String>,
    },
}

pub(super) fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ProvisionError + 'a {
    move |source| ProvisionError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}
