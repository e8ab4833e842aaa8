//! A failed AWS call, for people and exit codes: what kind of failure it
//! was (not found, a conflict, refused, or unavailable: no answer, a
//! throttle, a 5xx) and what the service said, in a line (never the raw
//! response). The one reading the CLI and `connect` share.

use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use restock_app::admin::ErrorKind;

/// What kind of failure `e` is, by what the service answered (or did not).
pub fn kind<E, R>(e: &SdkError<E, R>) -> ErrorKind
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    match e {
        SdkError::ServiceError(failure) => {
            let err = failure.err();
            let code = err.code().unwrap_or_default();
            let said = err.message().unwrap_or_default();
            if code.contains("NotFound") || said.contains("does not exist") {
                ErrorKind::NotFound
            } else if code.contains("Throttl")
                || code.contains("Unavailable")
                || code.contains("InternalService")
            {
                ErrorKind::Unavailable
            } else if code.contains("Conflict") || code.contains("ConditionalCheck") {
                ErrorKind::Conflict
            } else {
                ErrorKind::Refused
            }
        }
        _ => ErrorKind::Unavailable,
    }
}

/// What `e` said, in one line: the service's error code and message, or
/// why no answer came.
pub fn said<E, R>(e: &SdkError<E, R>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    if let SdkError::ServiceError(failure) = e {
        let err = failure.err();
        match (err.code(), err.message()) {
            (Some(code), Some(said)) => return format!("{code}: {said}"),
            (Some(code), None) => return code.to_owned(),
            _ => {}
        }
    }
    aws_smithy_types::error::display::DisplayErrorContext(e).to_string()
}
