//! The wiring of `git treebox mcp`: rmcp's server on the protocol's own streams, on a
//! current-thread tokio runtime made here and nowhere else.
//!
//! The transport reads and writes the copies of fd 0 and fd 1 that
//! [`crate::stdio::take`] kept (rmcp's own `stdio()` would write to fd 1, which by
//! then is stderr). Each tool call runs on tokio's blocking pool
//! ([`tokio::task::spawn_blocking`]): the engine is blocking code (libgit2, files,
//! subprocesses with deadlines), and the runtime's one thread stays free to read the
//! next request. A call that panics is a failed tool result, never a dead server.
//!
//! The server ends when the client closes its stdin: exit 0.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::super::error::{self, CliError, ErrorKind};

/// The handler: it holds only which repositories it serves; each call reads them
/// afresh.
struct Treebox {
    scope: super::scope::Scope,
}

impl ServerHandler for Treebox {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("treebox", env!("CARGO_PKG_VERSION")).with_title("treebox"),
            )
            .with_instructions(
                "The boxes of one repository: each a git worktree or clone (optionally in a \
                 container) where a coding agent (Claude Code or Codex) works in a session \
                 of its own. Start boxes with a first prompt (box_create), type further \
                 prompts (box_send), block until agents finish their turn, ask something \
                 or exit (box_wait, with the token box_send answered), read what a box \
                 changed (box_diff) and its agent's screen (box_screen), stop an agent \
                 (box_stop), remove a box (never forced), and land one where the user's \
                 config allows it. Refusals are results with isError and the CLI's error \
                 document (code = its exit code, kind, message, hint).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(super::tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let asked = name.clone();
        // A call the client cancels (`notifications/cancelled`) stops waiting.
        let ct = context.ct.clone();
        let scope = self.scope.clone();
        let done = tokio::task::spawn_blocking(move || {
            super::tools::call(&asked, args, &scope, &|| ct.is_cancelled())
        })
        .await;
        let outcome = match done {
            Ok(Some(outcome)) => outcome,
            Ok(None) => {
                return Err(ErrorData::invalid_params(
                    format!("no tool `{}`", crate::sanitize::line(&name)),
                    None,
                ))
            }
            Err(e) => Err(CliError::new(
                ErrorKind::Runtime,
                format!(
                    "`{}` failed inside treebox (a bug: please report it)",
                    crate::sanitize::line(&name)
                ),
            )
            .caused_by(std::io::Error::other(e.to_string()))),
        };
        Ok(match outcome {
            Ok(doc) => super::result::answer(doc),
            Err(e) => super::result::refusal(&e),
        }
        .into())
    }
}

/// Serve until the client closes the connection.
pub(super) fn serve(
    protocol: crate::stdio::Protocol,
    scope: super::scope::Scope,
) -> Result<i32, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| {
            CliError::new(ErrorKind::Runtime, "could not start the runtime").caused_by(e)
        })?;
    let served = runtime.block_on(async move {
        match (Treebox { scope }).serve(protocol.into_async()).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            // A client that left before the handshake ended: nothing failed here.
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    });
    // A tool call still reading a box when the client left is not waited for.
    runtime.shutdown_background();
    served.map(|()| error::OK).map_err(|e| {
        CliError::new(ErrorKind::Runtime, "the MCP connection failed")
            .caused_by(std::io::Error::other(e))
    })
}
