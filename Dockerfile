# syntax=docker/dockerfile:1
#
# mini-agent as a container image, for GitLab CI and other container use. (On
# GitHub Actions use the composite action instead: it runs next to the
# toolchains that earlier steps such as actions/setup-go installed.)
#
# Two final targets:
#   minimal   (default) the static binary on distroless/static, non-root. Enough
#             for `mini-agent publish BUNDLE` (GitHub API only) and as a source to
#             copy the binary from: COPY --from=<this image> /usr/local/bin/mini-agent ...
#   toolchain the binary and git on top of YOUR test toolchain image, non-root:
#             docker build --target toolchain --build-arg TOOLCHAIN_IMAGE=node:22 .
#             `fix` and `explain` need git and the project's test command at run time.
ARG GO_VERSION=1.26
ARG TOOLCHAIN_IMAGE=golang:1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
# The same build as .github/workflows/release.yml (checked by internal/actiontest).
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mini-agent ./cmd/mini-agent

FROM ${TOOLCHAIN_IMAGE} AS toolchain
ARG TOOLCHAIN_IMAGE
USER root
# git is needed at run time (the workspace diff); install it only when the
# toolchain image lacks it, with whichever package manager the image has.
RUN set -eu; \
    if ! command -v git >/dev/null 2>&1; then \
      if command -v apt-get >/dev/null 2>&1; then \
        apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*; \
      elif command -v apk >/dev/null 2>&1; then apk add --no-cache git ca-certificates; \
      elif command -v dnf >/dev/null 2>&1; then dnf install -y git ca-certificates && dnf clean all; \
      else echo "no apt-get, apk or dnf to install git in ${TOOLCHAIN_IMAGE}" >&2; exit 1; fi; \
    fi; \
    if command -v useradd >/dev/null 2>&1; then useradd --create-home --uid 10001 --user-group mini-agent; \
    else adduser -D -u 10001 mini-agent; fi
COPY --from=build /out/mini-agent /usr/local/bin/mini-agent
USER 10001:10001
# No ENTRYPOINT: CI systems (GitLab) run their job script with the image's shell.

FROM gcr.io/distroless/static-debian12:nonroot AS minimal
COPY --from=build /out/mini-agent /usr/local/bin/mini-agent
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/mini-agent"]
