# Static, non-root image of the warden binary, with the built-in Rego policy pack for
# `opa test` users (/usr/share/warden/policies).
#
# Reproducible: the same source and build arguments give the same binary, byte for byte
# (cmd/warden's TestBuild_reproducible builds it twice, from two paths, and compares).
# -trimpath keeps the build machine's paths out; -buildvcs=false because .dockerignore
# leaves .git out of the context, so the version and the revision come in as build
# arguments instead; nothing reads the clock. For the image's own timestamps, build
# with BuildKit's SOURCE_DATE_EPOCH, e.g.
#   docker buildx build --build-arg VERSION=v1.2.3 --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) --output type=image,rewrite-timestamp=true .
# and pin the base images by digest (FROM …@sha256:…) where the same image must come out.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.buildVersion=${VERSION} -X main.buildRevision=${REVISION}" \
      -o /out/warden ./cmd/warden
# The pack as `opa test` reads it: the .rego files (policies and their tests) in their
# folders, without the Go files that embed them.
RUN mkdir -p /out/policies && cd policies && find . -name '*.rego' -exec cp --parents {} /out/policies/ \;

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/warden /usr/local/bin/warden
COPY --from=build /out/policies /usr/share/warden/policies
# On PostgreSQL (deploy/kubernetes) warden writes nothing to disk. With SQLite, the
# history lives in /home/nonroot/.local/state/warden: mount a volume there to keep it.
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/warden"]
CMD ["--help"]
