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

/// A step's failure on an AWS call: not found, refused, or (no answer, a
/// throttle, a 5xx) unavailable.
pub(super) fn on_aws<E, R>(
    step: &str,
    e: &aws_sdk_secretsmanager::error::SdkError<E, R>,
) -> ConnectError
where
    E: aws_sdk_secretsmanager::error::ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    use aws_sdk_secretsmanager::error::SdkError;
    let kind = match e {
        SdkError::ServiceError(failure) => {
            let code = failure.err().code().unwrap_or_default();
            if code.contains("NotFound") {
                ErrorKind::NotFound
            } else if code.contains("Throttl") || code.contains("InternalService") {
                ErrorKind::Unavailable
            } else {
                ErrorKind::Refused
            }
        }
        _ => ErrorKind::Unavailable,
    };
    ConnectError {
        message: format!(
            "{step}: {}",
            aws_sdk_secretsmanager::error::DisplayErrorContext(e)
        ),
        kind,
    }
}
