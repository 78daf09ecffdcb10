//! HTTPS admission server: axum over rustls (ring), health, readiness, metrics.
