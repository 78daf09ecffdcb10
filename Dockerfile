# The image the manifests deploy (ghcr.io/forcegate/forcegate): the static
# binary and the shipped policies at /etc/forcegate/policies, non-root.
# Build: docker build -t ghcr.io/forcegate/forcegate:0.1.0 .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY bench bench
COPY examples examples
COPY tests tests
RUN cargo build --release --locked --bin forcegate

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/forcegate /usr/local/bin/forcegate
COPY policies /etc/forcegate/policies
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/forcegate"]
CMD ["serve", "--cluster=kube", "--policies=/etc/forcegate/policies"]
