//! Why a connect or sync stopped, and what kind of failure it was: the
//! platform or AWS unavailable (try again), a refusal, or something not
//! there; one constructor per kind of step.

use restock_app::admin::ErrorKind;
use restock_app::ports::PlatformError;

/// Why connecting stopped. Steps before it are done (each is safe to run
/// again).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    pub(super) message: String,
    pub(super) kind: ErrorKind,
}

impl ConnectError {
    /// What the failure amounts to: the platform or AWS could not be
    /// reached or could not serve now (`Unavailable`: try again), or
    /// refused what was asked (`Refused`), or something was not there.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub(super) fn refused(message: String) -> Self {
        Self {
            message,
            kind: ErrorKind::Refused,
        }
    }
}

/// A step's refusal, in words.
pub(super) fn said(step: &str) -> impl Fn(String) -> ConnectError + '_ {
    move |e| ConnectError::refused(format!("{step}: {e}"))
}

/// A step's failure on a platform's API, unavailable or refused as the
/// platform answered.
pub(super) fn on_platform(step: &str) -> impl Fn(PlatformError) -> ConnectError + '_ {
    move |e| ConnectError {
        kind: match e {
            PlatformError::Unavailable { .. } => ErrorKind::Unavailable,
            PlatformError::NotFound { .. } => ErrorKind::NotFound,
            PlatformError::Failed { .. } | PlatformError::NotConfigured(_) => ErrorKind::Refused,
        },
        message: format!("{step}: {e}"),
    }
}

/// A step's failure on the stack's table.
pub(super) fn on_store(step: &str) -> impl Fn(restock_store::StoreError) -> ConnectError + '_ {
    move |e| ConnectError {
        message: format!("{step}: {e}"),
        kind: restock_app::admin::AdminError::Store(e).kind(),
    }
}

/// A step's failure on an AWS call: its kind and what the service said
/// ([`crate::sdk_error`]).
pub(super) fn on_aws<E, R>(
    step: &str,
    e: &aws_smithy_runtime_api::client::result::SdkError<E, R>,
) -> ConnectError
where
    E: aws_smithy_types::error::metadata::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    ConnectError {
        message: format!("{step}: {}", crate::sdk_error::said(e)),
        kind: crate::sdk_error::kind(e),
    }
}
