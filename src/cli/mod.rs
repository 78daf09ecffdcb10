//! Command line: `serve`, `review`, `test`, `lint`, `explain`, `certs`.
