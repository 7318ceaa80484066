# Static, non-root image of the warden binary.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/warden ./cmd/warden

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/warden /usr/local/bin/warden
# The scan history lives in /home/nonroot/.local/state/warden: mount a volume there to keep it.
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/warden"]
CMD ["--help"]
