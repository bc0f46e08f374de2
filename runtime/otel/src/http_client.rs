//! The OTLP exporters' HTTP client: reqwest's blocking client, made on first use on the
//! exporter's own thread (the SDK's batch span processor and periodic metric reader
//! export from threads of their own, which no async runtime drives).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// A blocking reqwest client, built on first use.
#[derive(Debug, Default)]
pub(crate) struct BlockingClient {
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
}

impl BlockingClient {
    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self
            .client
            .get_or_init(|| {
                reqwest::blocking::Client::builder()
                    .timeout(EXPORT_TIMEOUT)
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| HttpError::from(e.clone()))?;
        let (parts, body) = request.into_parts();
        let response = client
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()?;
        let mut answer = Response::builder().status(response.status());
        if let Some(headers) = answer.headers_mut() {
            *headers = response.headers().clone();
        }
        let body = response.bytes()?;
        Ok(answer.body(body)?)
    }
}

impl HttpClient for BlockingClient {
    // `HttpClient` is an `async_trait`: this is its signature written out, so that this
    // crate needs no proc macro. The work is done here, on the exporter's thread.
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        let result = self.send(request);
        Box::pin(std::future::ready(result))
    }
}
