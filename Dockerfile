# llmrelay's container image: one static binary (CGO_ENABLED=0) on an empty
# base (scratch), with the CA bundle for TLS to the providers, running as an
# unprivileged user (65532), its health checked over the gRPC health service
# by the binary itself (`llmrelay health`).
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t llmrelay:dev .
#   make image                                # the same image, for builders that cannot pull golang (see docs/deployment.md)
#
# BINARY_FROM picks where the binary and the CA bundle come from:
#   build     (default) compiled here, in the golang image;
#   prebuilt  copied from bin/image/, where scripts/image.sh puts a binary built
#             on the host with the same command, for builders that cannot pull
#             the golang image. The stage that is not picked is not built.
ARG GO_VERSION=1.26.8
ARG BINARY_FROM=build

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
# The Go client is a module of its own that go.mod replaces with ./client.
COPY client/go.mod client/go.sum client/
RUN go mod download
COPY . .
# The version `llmrelay version` prints (the build context has no .git).
ARG VERSION=
# The same command as scripts/image.sh's host build.
RUN CGO_ENABLED=0 go build -trimpath \
		-ldflags="-s -w ${VERSION:+-X github.com/llmrelay/llmrelay/internal/cli.version=$VERSION}" \
		-o /out/llmrelay ./cmd/llmrelay \
	&& cp /etc/ssl/certs/ca-certificates.crt /out/ca-certificates.crt

FROM scratch AS prebuilt
COPY bin/image/llmrelay bin/image/ca-certificates.crt /out/

FROM ${BINARY_FROM} AS binary

FROM scratch
LABEL org.opencontainers.image.title="llmrelay" \
	org.opencontainers.image.description="gRPC gateway in front of LLM providers"
COPY --from=binary /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=binary /out/llmrelay /llmrelay
# The image's own config: listen on every interface, metrics too, JSON logs.
# Without API keys it refuses to start (llmrelay's secure default): mount a
# config over /etc/llmrelay/llmrelay.yaml, or point LLMRELAY_CONFIG elsewhere.
COPY deploy/image/llmrelay.yaml /etc/llmrelay/llmrelay.yaml
ENV LLMRELAY_CONFIG=/etc/llmrelay/llmrelay.yaml
USER 65532:65532
EXPOSE 50051 8080 9464
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 CMD ["/llmrelay", "health"]
ENTRYPOINT ["/llmrelay"]
